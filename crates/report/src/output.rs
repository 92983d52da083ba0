//! Writes a batch of runs to a results directory: summary.json (deterministic), timing.json
//! (wall-clock figures, kept apart so the summary stays byte-identical), timeseries.csv, and
//! the cwnd and goodput plots (PNG + SVG); for runs with media or bulk applications also
//! apps.csv, frames.csv and one media figure per run ([`crate::media`]).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::run::CompletedRun;
use crate::summary::{self, Summary};
use crate::timeseries::{self, GOODPUT_WINDOW};
use chart::{PlotError, Series};
use scenario::Scenario;

/// Why results could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// File system error.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// JSON serialization failed.
    #[error("{path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The error.
        source: serde_json::Error,
    },
    /// CSV serialization failed.
    #[error("{path}: {source}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// The error.
        source: csv::Error,
    },
    /// A plot failed.
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// Wall-clock figures of one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunTiming {
    /// Controller label.
    pub cc: String,
    /// Seed.
    pub seed: u64,
    /// Virtual seconds simulated.
    pub simulated_s: f64,
    /// Wall seconds taken.
    pub wall_s: f64,
    /// simulated_s / wall_s.
    pub speedup: f64,
    /// Datagrams moved per wall second.
    pub datagrams_per_s: f64,
}

/// Contents of timing.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timing {
    /// Per run, in summary order.
    pub runs: Vec<RunTiming>,
}

/// Wall-clock figures of the runs.
pub fn timing(runs: &[CompletedRun]) -> Timing {
    Timing {
        runs: runs
            .iter()
            .map(|r| {
                let simulated_s = r.outcome.end_time.as_secs_f64();
                let wall_s = r.wall.as_secs_f64().max(1e-9);
                RunTiming {
                    cc: r.label.clone(),
                    seed: r.spec.seed,
                    simulated_s,
                    wall_s,
                    speedup: simulated_s / wall_s,
                    datagrams_per_s: r.outcome.datagrams as f64 / wall_s,
                }
            })
            .collect(),
    }
}

/// The summary of finished runs.
pub fn summarize(
    scenario: &Scenario,
    first_seed: u64,
    seeds: u64,
    runs: &[CompletedRun],
) -> Summary {
    let run_summaries = runs
        .iter()
        .map(|r| summary::run_summary(scenario, &r.label, &r.outcome))
        .collect();
    summary::summary(scenario, first_seed, seeds, run_summaries)
}

fn create(path: &Path) -> Result<BufWriter<File>, OutputError> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|source| OutputError::Io {
            path: path.to_owned(),
            source,
        })
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), OutputError> {
    let mut text = serde_json::to_string_pretty(value).map_err(|source| OutputError::Json {
        path: path.to_owned(),
        source,
    })?;
    text.push('\n');
    std::fs::write(path, text).map_err(|source| OutputError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Line label of flow `flow` of a run: the controller when there is one flow per run, else
/// "flow (cc)" — or just the flow when every run uses the same controller.
fn series_label(runs: &[&CompletedRun], run: &CompletedRun, flow: usize) -> String {
    let name = &run.outcome.flows[flow].name;
    let cc = &run.outcome.flows[flow].cc;
    let one_flow = run.outcome.flows.len() == 1;
    let one_run = runs.len() == 1;
    match (one_flow, one_run) {
        (true, false) => cc.clone(),
        (true, true) => format!("{name} ({cc})"),
        (false, _) if runs.len() == 1 => format!("{name} ({cc})"),
        (false, _) => format!("{name} ({})", run.label),
    }
}

/// Whether `name`, a file directly in a results directory, is one [`write_all`] writes (for
/// some runs): summary.json, timing.json, timeseries.csv, apps.csv, frames.csv, and the
/// goodput, goodput-inorder, cwnd and media figures (`media.png`, or
/// `media-LABEL-seedN.png` for several runs) as PNG and SVG. Keep it in step with
/// [`write_all`]: `satquic run` removes the files it names that a run did not rewrite.
pub fn is_output_file(name: &str) -> bool {
    const FILES: [&str; 5] = [
        "summary.json",
        "timing.json",
        "timeseries.csv",
        "apps.csv",
        "frames.csv",
    ];
    const FIGURES: [&str; 4] = ["goodput", "goodput-inorder", "cwnd", "media"];
    if FILES.contains(&name) {
        return true;
    }
    let Some(stem) = name
        .strip_suffix(".png")
        .or_else(|| name.strip_suffix(".svg"))
    else {
        return false;
    };
    // media-LABEL-seedN: one media figure per run when there are several.
    let per_run = stem
        .strip_prefix("media-")
        .and_then(|rest| rest.rsplit_once("-seed"))
        .is_some_and(|(label, seed)| {
            !label.is_empty() && !seed.is_empty() && seed.bytes().all(|b| b.is_ascii_digit())
        });
    FIGURES.contains(&stem) || per_run
}

/// Writes everything into `dir` (created if missing); returns the files written.
pub fn write_all(
    dir: &Path,
    scenario: &Scenario,
    first_seed: u64,
    seeds: u64,
    runs: &[CompletedRun],
) -> Result<Vec<PathBuf>, OutputError> {
    std::fs::create_dir_all(dir).map_err(|source| OutputError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let mut written = Vec::new();

    let summary_path = dir.join("summary.json");
    write_json(&summary_path, &summarize(scenario, first_seed, seeds, runs))?;
    written.push(summary_path);

    let timing_path = dir.join("timing.json");
    write_json(&timing_path, &timing(runs))?;
    written.push(timing_path);

    let csv_path = dir.join("timeseries.csv");
    let pairs: Vec<(&str, &sim::RunOutcome)> = runs
        .iter()
        .map(|r| (r.label.as_str(), &r.outcome))
        .collect();
    timeseries::write_csv(create(&csv_path)?, &pairs).map_err(|source| OutputError::Csv {
        path: csv_path.clone(),
        source,
    })?;
    written.push(csv_path);

    if crate::loss_batches::has_loss_batches(&pairs) {
        let losses_path = dir.join("losses.csv");
        crate::loss_batches::write_csv(create(&losses_path)?, &pairs).map_err(|source| {
            OutputError::Csv {
                path: losses_path.clone(),
                source,
            }
        })?;
        written.push(losses_path);
    }

    if runs
        .iter()
        .any(|r| crate::media::has_media_or_bulk(&r.outcome))
    {
        let apps_path = dir.join("apps.csv");
        crate::media::write_apps_csv(create(&apps_path)?, runs).map_err(|source| {
            OutputError::Csv {
                path: apps_path.clone(),
                source,
            }
        })?;
        written.push(apps_path);
        let frames_path = dir.join("frames.csv");
        crate::media::write_frames_csv(create(&frames_path)?, runs).map_err(|source| {
            OutputError::Csv {
                path: frames_path.clone(),
                source,
            }
        })?;
        written.push(frames_path);
        written.extend(crate::media::write_figures(dir, scenario, runs)?);
    }

    written.extend(write_plots(dir, scenario, first_seed, runs)?);
    Ok(written)
}

/// Palette colour (see [`chart::Colour::Palette`]) of a congestion controller, so each
/// controller looks the same in every figure: hybla blue, newreno vermillion, cubic green, bbr
/// purple. `cc` is a run or flow label; parameters after the name (`hybla(rtt0=50ms)`) are
/// ignored. `None` for other labels.
pub fn controller_colour(cc: &str) -> Option<usize> {
    let name = cc
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    ["hybla", "newreno", "cubic", "bbr"]
        .iter()
        .position(|&known| known == name)
}

/// Every registered controller (`scenario::controllers::CONTROLLERS`) in the order of their
/// colours (hybla, newreno, cubic, bbr), for tables and figures that show them all.
pub fn controllers_in_figure_order() -> Vec<&'static str> {
    let mut names = scenario::controllers::CONTROLLERS.to_vec();
    names.sort_by_key(|name| controller_colour(name));
    names
}

/// Palette colours for lines labelled by `controllers`, one distinct colour per line: a line
/// named exactly after a controller gets its [`controller_colour`], then a variant
/// (`hybla-seed`, `hybla(rtt0=50ms)`) gets it if no other line has it yet, and the rest get
/// the next palette colours nobody uses, from colour 4 on (after the controllers' four).
pub fn line_colours<S: AsRef<str>>(controllers: &[S]) -> Vec<usize> {
    let mut colours: Vec<Option<usize>> = vec![None; controllers.len()];
    let mut used = std::collections::BTreeSet::new();
    for exact in [true, false] {
        for (i, cc) in controllers.iter().enumerate() {
            let cc = cc.as_ref();
            let known = controller_colour(cc)
                .filter(|_| !exact || cc.chars().all(|c| c.is_ascii_alphanumeric()));
            if let Some(c) = known
                && colours[i].is_none()
                && used.insert(c)
            {
                colours[i] = Some(c);
            }
        }
    }
    // Past the four controllers' colours first, so a variant does not look like bbr.
    let mut next = 4;
    colours
        .into_iter()
        .map(|c| {
            c.unwrap_or_else(|| {
                while used.contains(&(next % 10)) && used.len() < 10 {
                    next += 1;
                }
                used.insert(next % 10);
                next += 1;
                (next - 1) % 10
            })
        })
        .collect()
}

/// A number with at most three significant digits and no trailing zeros ("10", "2.5",
/// "0.01", "9.46").
fn short_number(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (2 - magnitude).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// A rate for people: "10 Mbit/s", "250 kbit/s", "1.5 Gbit/s".
pub fn rate_label(bps: f64) -> String {
    let (scale, unit) = if bps >= 1e9 {
        (1e9, "Gbit/s")
    } else if bps >= 1e6 {
        (1e6, "Mbit/s")
    } else if bps >= 1e3 {
        (1e3, "kbit/s")
    } else {
        (1.0, "bit/s")
    };
    format!("{} {unit}", short_number(bps / scale))
}

/// The path in one line, for figure titles: rates (one if both directions match; min–max
/// when scheduled), base RTT, random loss, e.g. "10 Mbit/s, RTT 500 ms, PER 0.01 %" or
/// "0.6–4 Mbit/s down, 10 Mbit/s up, RTT 50 ms, no random loss". Delays and losses are the
/// initial ones ("at start" when a schedule changes them).
pub fn path_note(scenario: &Scenario) -> String {
    let (forward, back) = (&scenario.forward, &scenario.return_link);
    let rates = |link: &netsim::LinkConfig| {
        let (lo, hi) = link
            .scheduled_rates_bps()
            .fold((u64::MAX, 0), |(lo, hi), r| (lo.min(r), hi.max(r)));
        if lo == hi {
            rate_label(hi as f64)
        } else {
            // "0.6–4 Mbit/s": the unit of the larger end.
            let high = rate_label(hi as f64);
            let (number, unit) = high.split_once(' ').unwrap_or((&high, ""));
            let scale = hi as f64 / number.parse::<f64>().unwrap_or(1.0);
            format!("{}–{number} {unit}", short_number(lo as f64 / scale))
        }
    };
    let (down, up) = (rates(forward), rates(back));
    let rates = if down == up {
        down
    } else {
        format!("{down} down, {up} up")
    };
    let changes =
        |f: fn(&netsim::ScheduleStep) -> bool| forward.schedule.iter().chain(&back.schedule).any(f);
    let at_start = |changed: bool| if changed { " at start" } else { "" };
    let rtt_ms = scenario.path_config().base_rtt().as_secs_f64() * 1e3;
    let rtt_note = at_start(changes(|s| s.delay.is_some()));
    let loss = forward.loss.stationary_loss_rate();
    let loss_note = at_start(changes(|s| s.loss.is_some()));
    let loss = match forward.loss {
        _ if loss == 0.0 => format!("no random loss{loss_note}"),
        netsim::LossModel::Bernoulli { .. } => {
            format!("PER {} %{loss_note}", short_number(loss * 100.0))
        }
        _ => format!("bursty loss {} %{loss_note}", short_number(loss * 100.0)),
    };
    format!("{rates}, RTT {} ms{rtt_note}, {loss}", short_number(rtt_ms))
}

/// A step line `(t, value)` over `0..end` from `(from, until, value)` steps.
fn step_points(steps: &[(Duration, Duration, f64)], end: Duration) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = Vec::new();
    for &(from, until, value) in steps {
        points.push((from.as_secs_f64(), value));
        points.push((until.min(end).as_secs_f64(), value));
    }
    points
}

/// The figures of a run directory: delivery rate (goodput.png), in-order goodput
/// (goodput-inorder.png) and congestion window (cwnd.png) over time for the runs of the first
/// seed, one line per flow, each controller in its own colour ([`controller_colour`]).
///
/// The delivery rate is the default goodput figure because it shows what the link carried:
/// in-order goodput stalls for a round trip after each loss (head-of-line blocking) and then
/// jumps above the link rate when the retransmission releases the held-back bytes, which
/// reads as a fault at a glance. Both goodput figures draw the link capacity and the goodput
/// ceiling as dashed references and give each flow's mean goodput and its share of the
/// ceiling in the legend; the cwnd figure draws the BDP and BDP + buffer.
pub fn write_plots(
    dir: &Path,
    scenario: &Scenario,
    first_seed: u64,
    runs: &[CompletedRun],
) -> Result<Vec<PathBuf>, OutputError> {
    let shown: Vec<&CompletedRun> = runs.iter().filter(|r| r.spec.seed == first_seed).collect();
    let path = summary::path_summary(scenario);
    // Goodput per unit of link rate when every packet is full: the ceiling's ratio.
    let payload_share = f64::from(path.payload_bytes_per_packet) / f64::from(path.mtu_bytes);
    let mut labels = Vec::new();
    let mut controllers = Vec::new();
    let mut goodput_labels = Vec::new();
    let mut cwnd = Vec::new();
    let mut delivery = Vec::new();
    let mut in_order = Vec::new();
    let mut end = Duration::ZERO;
    for run in &shown {
        let flows = summary::run_summary(scenario, &run.label, &run.outcome).flows;
        end = end.max(run.outcome.end_time);
        for flow in 0..run.outcome.flows.len() {
            let label = series_label(&shown, run, flow);
            let samples = timeseries::flow_samples(&run.outcome, flow);
            let t: Vec<f64> = samples.iter().map(|s| s.t.as_secs_f64()).collect();
            cwnd.push(
                t.iter()
                    .zip(&samples)
                    .map(|(&t, s)| (t, s.cwnd_bytes as f64 / 1e3))
                    .collect::<Vec<_>>(),
            );
            let mbps = |rates: Vec<f64>| -> Vec<(f64, f64)> {
                t.iter().zip(rates).map(|(&t, r)| (t, r / 1e6)).collect()
            };
            delivery.push(mbps(timeseries::sliding_delivery_rate_bps(
                &samples,
                GOODPUT_WINDOW,
            )));
            in_order.push(mbps(timeseries::sliding_goodput_bps(
                &samples,
                GOODPUT_WINDOW,
            )));
            goodput_labels.push(match flows.get(flow) {
                Some(f) => format!(
                    "{label} {} Mbit/s ({:.0} %)",
                    short_number(f.goodput_bps / 1e6),
                    100.0 * f.efficiency / payload_share
                ),
                None => label.clone(),
            });
            controllers.push(run.outcome.flows[flow].cc.clone());
            labels.push(label);
        }
    }
    let colours = line_colours(&controllers);
    let data = |labels: &[String], points: Vec<Vec<(f64, f64)>>| -> Vec<chart::StyledSeries> {
        labels
            .iter()
            .zip(points)
            .zip(&colours)
            .map(|((label, points), &colour)| chart::StyledSeries {
                series: Series {
                    label: label.clone(),
                    points,
                },
                style: chart::LineStyle::data(colour),
            })
            .collect()
    };
    let reference = |label: String, points: Vec<(f64, f64)>, colour| chart::StyledSeries {
        series: Series { label, points },
        style: chart::LineStyle::reference(colour),
    };

    let rate_steps: Vec<(Duration, Duration, f64)> =
        crate::periods::capacity_steps(&scenario.forward, end)
            .into_iter()
            .map(|(from, until, bps)| (from, until, bps as f64))
            .collect();
    let scaled = |factor: f64| -> Vec<(f64, f64)> {
        step_points(&rate_steps, end)
            .into_iter()
            .map(|(t, bps)| (t, bps * factor))
            .collect()
    };
    let one_rate = rate_steps.len() <= 1;
    let capacity_label = if one_rate {
        format!(
            "link capacity {}",
            rate_label(scenario.forward.rate_bps as f64)
        )
    } else {
        "link capacity".to_owned()
    };
    let ceiling_label = if one_rate {
        format!("max goodput {}", rate_label(path.goodput_ceiling_bps))
    } else {
        "max goodput".to_owned()
    };
    let capacity = reference(capacity_label, scaled(1e-6), chart::Colour::Black);
    let ceiling = reference(
        ceiling_label,
        scaled(payload_share * 1e-6),
        chart::Colour::Grey,
    );

    let seed_note = if runs.len() > shown.len() {
        format!(", seed {first_seed}")
    } else {
        String::new()
    };
    let note = path_note(scenario);
    let legend_title = "mean goodput (% of max)";
    let mut written = Vec::new();

    let mut lines = data(&goodput_labels, delivery);
    lines.extend([capacity, ceiling.clone()]);
    let title = format!("{} ({note}): delivery rate", scenario.name);
    let subtitle = format!(
        "bytes reaching the receiver per second, in any order (IP packets, 1 s average){seed_note}"
    );
    written.extend(chart::styled_line_chart(
        &dir.join("goodput"),
        &chart::StyledChart {
            title: &title,
            subtitle: &subtitle,
            x_label: "time (s)",
            y_label: "delivery rate (Mbit/s)",
            legend_title,
            lines: &lines,
        },
    )?);

    let mut lines = data(&goodput_labels, in_order);
    lines.push(ceiling);
    let title = format!("{} ({note}): in-order goodput", scenario.name);
    let subtitle = format!(
        "bytes the application read in order per second (1 s average): after a loss it \
         stalls for a round trip, then jumps{seed_note}"
    );
    written.extend(chart::styled_line_chart(
        &dir.join("goodput-inorder"),
        &chart::StyledChart {
            title: &title,
            subtitle: &subtitle,
            x_label: "time (s)",
            y_label: "in-order goodput (Mbit/s)",
            legend_title,
            lines: &lines,
        },
    )?);

    let mut lines = data(&labels, cwnd);
    // BDP = rate × base RTT; a window above BDP + buffer overflows the buffer.
    let base_rtt_s = path.base_rtt_ms / 1e3;
    let bdp_kb = scaled(base_rtt_s / 8.0 / 1e3);
    let buffer_kb = path.forward.queue_limit_bytes.map(|b| b as f64 / 1e3);
    let delay_changes = scenario
        .forward
        .schedule
        .iter()
        .chain(&scenario.return_link.schedule)
        .any(|step| step.delay.is_some());
    if !delay_changes {
        let bdp_label = match bdp_kb.first() {
            Some(&(_, kb)) if one_rate => format!("BDP {} kB", short_number(kb)),
            _ => "BDP".to_owned(),
        };
        let full = buffer_kb.map(|buffer| {
            let full: Vec<(f64, f64)> = bdp_kb.iter().map(|&(t, kb)| (t, kb + buffer)).collect();
            let full_label = match full.first() {
                Some(&(_, kb)) if one_rate => format!("BDP + buffer {} kB", short_number(kb)),
                _ => "BDP + buffer".to_owned(),
            };
            reference(full_label, full, chart::Colour::Grey)
        });
        lines.push(reference(bdp_label, bdp_kb, chart::Colour::Black));
        lines.extend(full);
    }
    let title = format!("{} ({note}): congestion window", scenario.name);
    // The BDP lines (and what the subtitle says of them) only where the delay holds: a path
    // whose delay steps has no one base RTT to draw them from.
    let bdp_note = if delay_changes {
        ""
    } else {
        "; BDP = link rate × base RTT"
    };
    let subtitle = format!("at the data sender, every 100 ms{bdp_note}{seed_note}");
    written.extend(chart::styled_line_chart(
        &dir.join("cwnd"),
        &chart::StyledChart {
            title: &title,
            subtitle: &subtitle,
            x_label: "time (s)",
            y_label: "congestion window (kB)",
            legend_title: "",
            lines: &lines,
        },
    )?);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A controller added to the registry must get its colour here too.
    #[test]
    fn every_registered_controller_has_its_own_colour() {
        let colours: Vec<Option<usize>> = scenario::controllers::CONTROLLERS
            .iter()
            .map(|name| controller_colour(name))
            .collect();
        assert!(colours.iter().all(Option::is_some), "{colours:?}");
        let distinct: std::collections::BTreeSet<_> = colours.iter().collect();
        assert_eq!(distinct.len(), colours.len());
        assert_eq!(
            controllers_in_figure_order(),
            ["hybla", "newreno", "cubic", "bbr"]
        );
    }

    #[test]
    fn controllers_keep_their_colour_in_any_order() {
        assert_eq!(line_colours(&["hybla", "newreno", "cubic"]), [0, 1, 2]);
        assert_eq!(line_colours(&["cubic", "hybla"]), [2, 0]);
        assert_eq!(
            line_colours(&["newreno", "cubic", "hybla-seed", "hybla"]),
            [1, 2, 4, 0]
        );
        assert_eq!(line_colours(&["hybla(rtt0=50ms)", "bbr"]), [0, 3]);
        // Two flows of one controller, or unknown labels: distinct colours, known ones kept.
        assert_eq!(line_colours(&["hybla", "hybla"]), [0, 4]);
        assert_eq!(line_colours(&["long", "short", "cubic"]), [4, 5, 2]);
        let many: Vec<String> = (0..12).map(|i| format!("flow {i}")).collect();
        assert_eq!(line_colours(&many)[..7], [4, 5, 6, 7, 8, 9, 0]);
    }

    #[test]
    fn the_output_files_are_known_by_name() {
        for name in [
            "summary.json",
            "timeseries.csv",
            "frames.csv",
            "goodput-inorder.svg",
            "media.png",
            "media-hybla(rtt0=50ms)-seed12.svg",
        ] {
            assert!(is_output_file(name), "{name}");
        }
        for name in [
            "notes.md",
            "summary.json.bak",
            "goodput.pdf",
            "media-extra.png",
            "media--seed1.png",
            "media-cubic-seed.png",
            "sweep.csv",
        ] {
            assert!(!is_output_file(name), "{name}");
        }
    }

    #[test]
    fn notes_read_like_the_scenario() {
        assert_eq!(rate_label(10e6), "10 Mbit/s");
        assert_eq!(rate_label(2.5e9), "2.5 Gbit/s");
        assert_eq!(rate_label(9_593_333.3), "9.59 Mbit/s");
        assert_eq!(rate_label(250e3), "250 kbit/s");
        let text = scenario::builtin::get("thesis-geo").unwrap();
        let geo = Scenario::from_toml_str(text, "thesis-geo", &[]).unwrap();
        assert_eq!(path_note(&geo), "10 Mbit/s, RTT 500 ms, PER 0.01 %");
        let text = scenario::builtin::get("media-bulk-thesis").unwrap();
        let steps = Scenario::from_toml_str(text, "media-bulk-thesis", &[]).unwrap();
        assert_eq!(
            path_note(&steps),
            "0.6–4 Mbit/s down, 10 Mbit/s up, RTT 50 ms, no random loss"
        );
    }
}
