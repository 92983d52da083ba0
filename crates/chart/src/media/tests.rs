use super::*;

/// A fresh directory under the system temp dir.
fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("satquic-plots-{}-media-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn svg_of(paths: &[PathBuf; 2]) -> String {
    let png = std::fs::read(&paths[0]).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let svg = std::fs::read_to_string(&paths[1]).unwrap();
    assert!(svg.starts_with("<svg"), "not an SVG");
    assert!(svg.contains(&format!("height=\"{STACKED_PANEL_HEIGHT}\"")));
    svg
}

/// A small deterministic generator in 0..1.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The thesis-style scenario: capacity 2/4/0.6/1/3/1 Mbit/s, 70 s each; media takes up
/// to 2 Mbit/s, bulk the rest; 30 fps frame delays with bursts after each drop.
/// The thesis-style figure of [`scenario`]'s data, as the media report draws it.
fn sample_chart<'a>(
    layers: &'a [Series],
    capacity: &'a Series,
    frames: &'a [Series],
) -> StackedPanelChart<'a> {
    StackedPanelChart {
        title: "media-bulk-thesis — scheduler: balancer (cubic, seed 1)",
        x_label: "time (s)",
        top_y_label: "throughput (Mbit/s)",
        layers,
        ceiling: Some(capacity),
        bottom_y_label: "frame delay (ms)",
        bottom_series: frames,
        bottom_threshold: Some(("deadline (175 ms)", 175.0)),
        bottom_y_max: Some(1000.0),
    }
}

fn scenario() -> (Vec<Series>, Series, Vec<Series>) {
    let caps = [2.0, 4.0, 0.6, 1.0, 3.0, 1.0];
    let cap_at = |t: f64| caps[((t / 70.0) as usize).min(caps.len() - 1)];
    let mut rng = Lcg(1);
    let (mut media, mut bulk) = (Vec::new(), Vec::new());
    for i in 0..=840 {
        let t = i as f64 * 0.5;
        let cap = cap_at(t);
        let m = (2.0f64.min(cap * 0.92) * (0.93 + 0.07 * rng.next())).max(0.0);
        let b = (cap * (0.9 + 0.08 * rng.next()) - m).max(0.0);
        media.push((t, m));
        bulk.push((t, b));
    }
    let capacity = Series {
        label: "link capacity".into(),
        points: (0..caps.len())
            .map(|k| (k as f64 * 70.0, caps[k]))
            .chain([(420.0, caps[caps.len() - 1])])
            .collect(),
    };
    let (mut ok, mut late) = (Vec::new(), Vec::new());
    for f in 0..420 * 30 {
        let t = f as f64 / 30.0;
        let mut d = 30.0 + 120.0 * rng.next().powi(2);
        // Bursts after the drops at 140 s (4 → 0.6) and 350 s (3 → 1).
        for drop in [140.0, 350.0] {
            let since = t - drop;
            if (0.0..6.0).contains(&since) {
                d += 5000.0 * (since / 2.0).min(1.0) * (1.0 - since / 6.0);
            }
        }
        if d > 175.0 { &mut late } else { &mut ok }.push((t, d));
    }
    (
        vec![
            Series {
                label: "media (video call)".into(),
                points: media,
            },
            Series {
                label: "bulk transfer".into(),
                points: bulk,
            },
        ],
        capacity,
        vec![
            Series {
                label: "frame on time".into(),
                points: ok,
            },
            Series {
                label: "frame late".into(),
                points: late,
            },
        ],
    )
}

#[test]
fn stacked_panel_chart_writes_png_and_svg() {
    let dir = temp_dir("stacked");
    let (layers, capacity, frames) = scenario();
    let chart = sample_chart(&layers, &capacity, &frames);
    let paths = stacked_panel_chart(&dir.join("run"), &chart).unwrap();
    assert_eq!(paths[0], dir.join("run.png"));
    assert_eq!(paths[1], dir.join("run.svg"));
    let svg = svg_of(&paths);
    for t in [
        "media-bulk-thesis — scheduler: balancer (cubic, seed 1)",
        "time (s)",
        "throughput (Mbit/s)",
        "frame delay (ms)",
        "media (video call)",
        "bulk transfer",
        "link capacity",
        "frame on time",
        "frame late",
        "deadline (175 ms)",
        "&gt; 1000 ms (271 clipped)",
    ] {
        assert!(svg.contains(t), "SVG lacks {t:?}");
    }
    // 12 600 frames, thinned to one dot per pixel.
    assert!(svg.len() < 1_500_000, "SVG is {} bytes", svg.len());

    // Without the bound nothing is clipped and the note disappears.
    let chart = StackedPanelChart {
        bottom_y_max: None,
        ..chart
    };
    let svg = svg_of(&stacked_panel_chart(&dir.join("unclipped"), &chart).unwrap());
    assert!(!svg.contains("clipped"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn degenerate_stacked_panel_charts_do_not_fail() {
    let dir = temp_dir("stacked-degenerate");
    let empty = StackedPanelChart {
        title: "empty",
        x_label: "time (s)",
        top_y_label: "throughput (Mbit/s)",
        layers: &[],
        ceiling: None,
        bottom_y_label: "frame delay (ms)",
        bottom_series: &[],
        bottom_threshold: None,
        bottom_y_max: None,
    };
    assert!(svg_of(&stacked_panel_chart(&dir.join("empty"), &empty).unwrap()).contains("no data"));
    let odd_layers = [
        Series {
            label: "nan".into(),
            points: vec![(f64::NAN, 1.0), (1.0, f64::INFINITY), (2.0, -3.0)],
        },
        Series {
            label: "single".into(),
            points: vec![(5.0, 3.0)],
        },
        Series {
            label: "empty".into(),
            points: vec![],
        },
    ];
    let ceiling = Series {
        label: "cap".into(),
        points: vec![(f64::NAN, 2.0), (3.0, 4.0)],
    };
    let dots = [Series {
        label: "d".into(),
        points: vec![(1.0, f64::NAN), (2.0, 50.0), (3.0, 1e9)],
    }];
    let odd = StackedPanelChart {
        title: "odd",
        layers: &odd_layers,
        ceiling: Some(&ceiling),
        bottom_series: &dots,
        bottom_threshold: Some(("deadline", f64::NAN)),
        bottom_y_max: Some(-5.0),
        ..empty
    };
    stacked_panel_chart(&dir.join("odd"), &odd).unwrap();
    let only_top = StackedPanelChart {
        bottom_series: &[],
        bottom_threshold: Some(("deadline (175 ms)", 175.0)),
        bottom_y_max: Some(100.0),
        ..odd
    };
    let svg = svg_of(&stacked_panel_chart(&dir.join("only-top"), &only_top).unwrap());
    assert!(svg.contains("no data") && svg.contains("deadline (175 ms)"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Renders the thesis-style sample to `<temp>/chart-sample.png` (and `.svg`) for a visual
/// check: `cargo test -p chart media::tests::demo -- --ignored`.
#[test]
#[ignore]
fn demo() {
    let (layers, capacity, frames) = scenario();
    let chart = sample_chart(&layers, &capacity, &frames);
    let start = std::time::Instant::now();
    let paths = stacked_panel_chart(&std::env::temp_dir().join("chart-sample"), &chart).unwrap();
    eprintln!("{paths:?} in {:?}", start.elapsed());
    let empty = StackedPanelChart {
        title: "bulk only, no frames",
        layers: &layers[1..],
        bottom_series: &[],
        ..chart
    };
    stacked_panel_chart(&std::env::temp_dir().join("chart-sample-sparse"), &empty).unwrap();
}
