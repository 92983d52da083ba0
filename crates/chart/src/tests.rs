//! Every chart function written to files: PNG and SVG, the texts in them, the degenerate
//! inputs that must not fail.

use super::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh directory under the system temp dir.
fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "satquic-plots-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn check_outputs(paths: &[PathBuf; 2], texts: &[&str]) {
    let png = std::fs::read(&paths[0]).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert_eq!(paths[0].extension().unwrap(), "png");
    assert_eq!(paths[1].extension().unwrap(), "svg");
    let svg = std::fs::read_to_string(&paths[1]).unwrap();
    assert!(svg.starts_with("<svg"), "not an SVG");
    for t in texts {
        assert!(svg.contains(t), "SVG lacks {t:?}");
    }
}

fn demo_series() -> Vec<Series> {
    let n = 3000;
    let t = |i: usize| i as f64 * 300.0 / (n - 1) as f64;
    vec![
        Series {
            label: "cwnd (Hybla)".into(),
            points: (0..n)
                .map(|i| (t(i), 40.0 + 60.0 * ((t(i) / 25.0).fract())))
                .collect(),
        },
        Series {
            label: "cwnd (CUBIC)".into(),
            points: (0..n)
                .map(|i| (t(i), 110.0 * (1.0 - (-t(i) / 60.0).exp())))
                .collect(),
        },
        Series {
            label: "BDP".into(),
            points: (0..n).map(|i| (t(i), 75.0)).collect(),
        },
    ]
}

#[test]
fn line_chart_writes_png_and_svg() {
    let dir = temp_dir("line");
    let series = demo_series();
    let chart = Chart {
        title: "Congestion window over a GEO path",
        x_label: "time (s)",
        y_label: "cwnd (kB)",
        series: &series,
    };
    let paths = line_chart(&dir.join("cwnd"), &chart).unwrap();
    check_outputs(
        &paths,
        &[
            "Congestion window over a GEO path",
            "time (s)",
            "cwnd (kB)",
            "cwnd (Hybla)",
            "cwnd (CUBIC)",
            "BDP",
        ],
    );
    assert_eq!(paths[0], dir.join("cwnd.png"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn styled_chart_writes_subtitle_legend_heading_and_references() {
    let dir = temp_dir("styled");
    let lines = [
        StyledSeries {
            series: Series {
                label: "hybla 9.45 Mbit/s (99 %)".into(),
                points: (0..=100).map(|i| (i as f64, 9.9)).collect(),
            },
            style: LineStyle::data(0),
        },
        StyledSeries {
            series: Series {
                label: "link capacity 10 Mbit/s".into(),
                points: vec![(0.0, 10.0), (100.0, 10.0)],
            },
            style: LineStyle::reference(Colour::Black),
        },
    ];
    let paths = styled_line_chart(
        &dir.join("goodput"),
        &StyledChart {
            title: "thesis-geo: delivery rate",
            subtitle: "bytes reaching the receiver per second",
            x_label: "time (s)",
            y_label: "delivery rate (Mbit/s)",
            legend_title: "mean goodput (% of max)",
            lines: &lines,
        },
    )
    .unwrap();
    check_outputs(
        &paths,
        &[
            "thesis-geo: delivery rate",
            "bytes reaching the receiver per second",
            "mean goodput (% of max)",
            "hybla 9.45 Mbit/s (99 %)",
            "link capacity 10 Mbit/s",
        ],
    );
    // The dashed black reference is drawn as one short segment per dash (10 px + 6 px gap
    // over a plot about 700 px wide: > 30), opaque and 2 px wide, unlike the translucent
    // 1 px axes and ticks.
    let svg = std::fs::read_to_string(&paths[1]).unwrap();
    let dashes = svg
        .lines()
        .flat_map(|l| l.split("<polyline").skip(1))
        .filter(|e| e.contains("opacity=\"1\" stroke=\"#000000\" stroke-width=\"2\""))
        .count();
    assert!(dashes > 30, "{dashes} black dashes in the SVG");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stem_with_dot_and_missing_dir() {
    let dir = temp_dir("stem");
    let stem = dir.join("sub/run.v2");
    let series = [Series {
        label: "a".into(),
        points: vec![(0.0, 1.0), (1.0, 2.0)],
    }];
    let chart = Chart {
        title: "t",
        x_label: "x",
        y_label: "y",
        series: &series,
    };
    let paths = line_chart(&stem, &chart).unwrap();
    assert_eq!(paths[0], dir.join("sub/run.v2.png"));
    assert_eq!(paths[1], dir.join("sub/run.v2.svg"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn degenerate_line_charts_do_not_fail() {
    let dir = temp_dir("degenerate");
    let cases: Vec<(&str, Vec<Series>)> = vec![
        ("none", vec![]),
        (
            "empty",
            vec![Series {
                label: "empty".into(),
                points: vec![],
            }],
        ),
        (
            "single",
            vec![Series {
                label: "single".into(),
                points: vec![(5.0, 3.0)],
            }],
        ),
        (
            "zeros",
            vec![Series {
                label: "zeros".into(),
                points: vec![(0.0, 0.0), (1.0, 0.0)],
            }],
        ),
        (
            "nonfinite",
            vec![Series {
                label: "nonfinite".into(),
                points: vec![
                    (f64::NAN, 1.0),
                    (1.0, f64::INFINITY),
                    (2.0, 2.0),
                    (3.0, f64::NAN),
                ],
            }],
        ),
        (
            "all-nan",
            vec![Series {
                label: "all-nan".into(),
                points: vec![(f64::NAN, f64::NAN)],
            }],
        ),
        (
            "negative",
            vec![Series {
                label: "negative".into(),
                points: vec![(0.0, -5.0), (1.0, 3.0)],
            }],
        ),
        (
            "all-negative",
            vec![Series {
                label: "all-negative".into(),
                points: vec![(0.0, -5.0), (1.0, -3.0)],
            }],
        ),
        (
            "tiny",
            vec![Series {
                label: "tiny".into(),
                points: vec![(0.0, 1e-7), (1.0, 3e-7)],
            }],
        ),
        (
            "huge",
            vec![Series {
                label: "huge".into(),
                points: vec![(0.0, 1e9), (1e7, 3e9)],
            }],
        ),
    ];
    for (name, series) in &cases {
        let chart = Chart {
            title: name,
            x_label: "x (s)",
            y_label: "y (kB)",
            series,
        };
        let paths = line_chart(&dir.join(name), &chart).unwrap_or_else(|e| panic!("{name}: {e}"));
        let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
        check_outputs(&paths, &labels);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_categorical_error_bar_chart_labels_each_value_by_name() {
    let dir = temp_dir("categories");
    let categories = vec!["droptail".to_owned(), "red".to_owned(), "codel".to_owned()];
    let series = vec![ErrorSeries {
        label: "hybla".into(),
        points: vec![(0.0, 9.0, 0.2), (1.0, 8.0, 0.3), (2.0, 7.5, 0.1)],
    }];
    let paths = error_bar_chart_categories(
        &dir.join("aqm"),
        "goodput vs aqm",
        "path.forward.aqm",
        "goodput (Mbit/s)",
        &categories,
        &series,
    )
    .unwrap();
    check_outputs(
        &paths,
        &[
            "goodput vs aqm",
            "path.forward.aqm",
            "droptail",
            "red",
            "codel",
            "hybla",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn category_ticks_are_named_only_at_whole_positions() {
    let categories = ["a".to_owned(), "b".to_owned()];
    assert_eq!(crate::xy::category_at(&categories, 1.0), "b");
    assert_eq!(crate::xy::category_at(&categories, 0.5), "");
    assert_eq!(crate::xy::category_at(&categories, -1.0), "");
    assert_eq!(crate::xy::category_at(&categories, 2.0), "");
}

#[test]
fn error_bar_chart_writes_files() {
    let dir = temp_dir("errorbars");
    let rtts = [25.0, 50.0, 100.0, 250.0, 500.0, 600.0];
    let series: Vec<ErrorSeries> = ["NewReno", "CUBIC", "Hybla"]
        .iter()
        .enumerate()
        .map(|(k, name)| ErrorSeries {
            label: name.to_string(),
            points: rtts
                .iter()
                .map(|&r| {
                    (
                        r,
                        9.5 - (k as f64 + 1.0) * r / 200.0 + k as f64,
                        0.3 + r / 400.0,
                    )
                })
                .collect(),
        })
        .collect();
    let paths = error_bar_chart(
        &dir.join("sweep"),
        "Goodput vs RTT",
        "RTT (ms)",
        "goodput (Mbit/s)",
        &series,
    )
    .unwrap();
    check_outputs(
        &paths,
        &[
            "Goodput vs RTT",
            "RTT (ms)",
            "goodput (Mbit/s)",
            "NewReno",
            "CUBIC",
            "Hybla",
        ],
    );
    for (name, s) in [
        ("none", vec![]),
        (
            "empty",
            vec![ErrorSeries {
                label: "e".into(),
                points: vec![],
            }],
        ),
        (
            "single",
            vec![ErrorSeries {
                label: "s".into(),
                points: vec![(100.0, 5.0, f64::NAN)],
            }],
        ),
        (
            "nan",
            vec![ErrorSeries {
                label: "n".into(),
                points: vec![(f64::NAN, 1.0, 1.0), (1.0, 0.0, 0.0)],
            }],
        ),
    ] {
        error_bar_chart(&dir.join(name), name, "x", "y", &s)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bar_chart_writes_files() {
    let dir = temp_dir("bars");
    let bars: Vec<(String, f64)> = (1..=4)
        .map(|i| (format!("flow {i}"), 0.1 * i as f64))
        .collect();
    let paths = bar_chart(
        &dir.join("shares"),
        "Bottleneck share per flow",
        "share of capacity",
        &bars,
    )
    .unwrap();
    check_outputs(
        &paths,
        &[
            "Bottleneck share per flow",
            "share of capacity",
            "flow 1",
            "flow 4",
            "0.4",
        ],
    );
    let many: Vec<(String, f64)> = (1..=12)
        .map(|i| (format!("flow {i} (Hybla, 600 ms)"), i as f64))
        .collect();
    let paths = bar_chart(&dir.join("many"), "Many", "goodput (Mbit/s)", &many).unwrap();
    check_outputs(
        &paths,
        &["flow 1 (Hybla, 600 ms)", "flow 12 (Hybla, 600 ms)"],
    );
    for (name, b) in [
        ("none", vec![]),
        ("single", vec![("only".to_string(), 1.0)]),
        (
            "zeros",
            vec![("a".to_string(), 0.0), ("b".to_string(), 0.0)],
        ),
        (
            "odd",
            vec![
                ("nan".to_string(), f64::NAN),
                ("neg".to_string(), -2.0),
                ("pos".to_string(), 3.0),
            ],
        ),
    ] {
        bar_chart(&dir.join(name), name, "v", &b).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn many_points_render() {
    let dir = temp_dir("many");
    let series: Vec<Series> = (0..6)
        .map(|k| Series {
            label: format!("flow {k}"),
            points: (0..3000)
                .map(|i| {
                    (
                        i as f64 * 0.1,
                        (i as f64 * 0.01 + k as f64).sin() * 10.0 + 20.0,
                    )
                })
                .collect(),
        })
        .collect();
    let chart = Chart {
        title: "many",
        x_label: "time (s)",
        y_label: "rate (Mbit/s)",
        series: &series,
    };
    line_chart(&dir.join("many"), &chart).unwrap();

    // Per-packet traces: thinned to a few points per pixel column, so still quick and the
    // SVG stays small.
    let long: Vec<Series> = (0..3)
        .map(|k| Series {
            label: format!("trace {k}"),
            points: (0..200_000)
                .map(|i| (i as f64 * 1e-3, ((i * (k + 7)) % 1013) as f64))
                .collect(),
        })
        .collect();
    let chart = Chart {
        series: &long,
        ..chart
    };
    let paths = line_chart(&dir.join("long"), &chart).unwrap();
    let svg_len = std::fs::metadata(&paths[1]).unwrap().len();
    assert!(svg_len < 1_000_000, "SVG is {svg_len} bytes");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Renders demo charts to `<temp>/plots-demo/` for a visual check:
/// `cargo test -p lab chart::tests::demo -- --ignored`.
#[test]
#[ignore]
fn demo() {
    let dir = std::env::temp_dir().join("plots-demo");
    let series = demo_series();
    let chart = Chart {
        title: "Congestion window over a GEO path (600 ms RTT)",
        x_label: "time (s)",
        y_label: "cwnd (kB)",
        series: &series,
    };
    let start = std::time::Instant::now();
    line_chart(&dir.join("cwnd"), &chart).unwrap();
    eprintln!("line chart: {:?}", start.elapsed());

    let rtts = [25.0, 50.0, 100.0, 250.0, 500.0, 600.0];
    let sweep: Vec<ErrorSeries> = ["NewReno", "CUBIC", "Hybla"]
        .iter()
        .enumerate()
        .map(|(k, name)| ErrorSeries {
            label: name.to_string(),
            points: rtts
                .iter()
                .map(|&r| (r, 9.5 - (3.0 - k as f64) * r / 250.0, 0.3 + r / 500.0))
                .collect(),
        })
        .collect();
    error_bar_chart(
        &dir.join("sweep"),
        "Goodput vs RTT (10 Mbit/s, 1% loss)",
        "RTT (ms)",
        "goodput (Mbit/s)",
        &sweep,
    )
    .unwrap();

    let shares: Vec<(String, f64)> = [
        ("flow 1 (Hybla)", 0.41),
        ("flow 2 (CUBIC)", 0.27),
        ("flow 3 (NewReno)", 0.2),
        ("flow 4 (BBR)", 0.12),
    ]
    .iter()
    .map(|(l, v)| (l.to_string(), *v))
    .collect();
    bar_chart(
        &dir.join("shares"),
        "Bottleneck share per flow",
        "share of capacity",
        &shares,
    )
    .unwrap();
    let many: Vec<(String, f64)> = (1..=12)
        .map(|i| (format!("flow {i} (Hybla, {} ms)", 50 * i), 1.5 * i as f64))
        .collect();
    bar_chart(
        &dir.join("shares-many"),
        "Goodput per flow",
        "goodput (Mbit/s)",
        &many,
    )
    .unwrap();

    let big: Vec<Series> = (0..6)
        .map(|k| Series {
            label: format!("flow {k}"),
            points: (0..3000)
                .map(|i| {
                    (
                        i as f64 * 0.1,
                        1e6 * ((i as f64 * 0.01 + k as f64).sin() * 0.5 + 1.5 + k as f64 * 0.3),
                    )
                })
                .collect(),
        })
        .collect();
    let start = std::time::Instant::now();
    line_chart(
        &dir.join("big"),
        &Chart {
            title: "6 × 3000 points",
            x_label: "time (s)",
            y_label: "bytes in flight (B)",
            series: &big,
        },
    )
    .unwrap();
    eprintln!("6x3000 chart: {:?}", start.elapsed());
    bar_chart(
        &dir.join("bars-single"),
        "One flow",
        "share",
        &[("only".into(), 1.0)],
    )
    .unwrap();
    bar_chart(&dir.join("bars-empty"), "No flows", "share", &[]).unwrap();
    bar_chart(
        &dir.join("bars-odd"),
        "NaN and negative",
        "change (%)",
        &[
            ("nan".into(), f64::NAN),
            ("neg".into(), -2.0),
            ("pos".into(), 3.0),
        ],
    )
    .unwrap();
    error_bar_chart(
        &dir.join("sweep-single"),
        "One point",
        "RTT (ms)",
        "goodput (Mbit/s)",
        &[ErrorSeries {
            label: "Hybla".into(),
            points: vec![(600.0, 7.0, 1.5)],
        }],
    )
    .unwrap();
    let flows: Vec<Series> = (0..24)
        .map(|k| Series {
            label: format!("flow {k} (Hybla)"),
            points: (0..100).map(|i| (i as f64, (i + k) as f64)).collect(),
        })
        .collect();
    line_chart(
            &dir.join("many-series"),
            &Chart {
                title: "geo-600ms-1pct-loss-24-flows-hybla-vs-cubic — goodput, 1 s sliding average, seed 1234567",
                x_label: "time (s)",
                y_label: "goodput (Mbit/s)",
                series: &flows,
            },
        )
        .unwrap();
    line_chart(
        &dir.join("empty"),
        &Chart {
            title: "Empty",
            x_label: "time (s)",
            y_label: "cwnd (kB)",
            series: &[],
        },
    )
    .unwrap();
    line_chart(
        &dir.join("single"),
        &Chart {
            title: "Single point",
            x_label: "time (s)",
            y_label: "cwnd (kB)",
            series: &[Series {
                label: "one".into(),
                points: vec![(5.0, 3.0)],
            }],
        },
    )
    .unwrap();
}
