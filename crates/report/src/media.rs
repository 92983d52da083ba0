//! Outputs of runs whose connections carry media or bulk applications: `apps.csv` (each
//! application's throughput over time), `frames.csv` (every media frame captured, and its
//! delay if it arrived) and one figure per run in the style of \[Ruehl2024\]'s Fig. 6.x —
//! media and bulk throughput stacked under the link capacity, frame delays in a panel below.
//!
//! `timeseries.csv` stays one row per flow and sample; the per-application series live here in
//! the same long format, so a reader of either file needs no knowledge of the other.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use sim::apps::media::MediaReport;
use sim::{AppSample, RunOutcome};

use crate::periods::capacity_steps;
use crate::run::CompletedRun;
use chart::{PlotError, Series, StackedPanelChart};
use scenario::Scenario;
use scenario::apps::AppKind;

/// Window of the per-application throughput (RFC 8868 evaluates media at 200 ms).
pub const APP_THROUGHPUT_WINDOW: Duration = Duration::from_millis(200);

/// Window of the throughput the figure shows: 200 ms series of frame-by-frame delivery are
/// too spiky to read stacked (a frame completes at once), so the figure averages over 1 s.
pub const FIGURE_THROUGHPUT_WINDOW: Duration = Duration::from_secs(1);

/// Frame delays above this are drawn at the top edge of the delay panel, so one long stall
/// does not flatten every other frame.
pub const DELAY_PANEL_MAX_MS: f64 = 2000.0;

/// One row of `apps.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppRow {
    /// Run index in summary.json's `runs`.
    pub run: usize,
    /// Controller label of the run.
    pub cc: String,
    /// Seed.
    pub seed: u64,
    /// Flow name.
    pub flow: String,
    /// Application name.
    pub app: String,
    /// Application kind.
    pub kind: String,
    /// Sample time, seconds.
    pub t_s: f64,
    /// Bytes received in order so far.
    pub delivered_bytes: u64,
    /// Throughput over the last [`APP_THROUGHPUT_WINDOW`], bit/s.
    pub throughput_bps: f64,
}

/// One row of `frames.csv`: every frame the media captured, whether it arrived or not (refused
/// at the source, cancelled past its deadline, or still on its way when the run ended). A file
/// of arrivals alone reads far better than the run was: in overload the frames that never
/// arrive are most of the late ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameRow {
    /// Run index.
    pub run: usize,
    /// Controller label.
    pub cc: String,
    /// Seed.
    pub seed: u64,
    /// Flow name.
    pub flow: String,
    /// Application name.
    pub app: String,
    /// Frame sequence number.
    pub seq: u64,
    /// Capture time, seconds.
    pub captured_s: f64,
    /// Arrival of its last byte, seconds; empty if it never arrived.
    pub received_s: Option<f64>,
    /// One-way frame delay, ms; empty if it never arrived.
    pub delay_ms: Option<f64>,
    /// Whether it missed its deadline (a frame that never arrived did); empty for a frame
    /// that did not arrive and whose deadline fell after the end of the run.
    pub late: Option<bool>,
}

/// Whether a run has anything for these outputs.
pub fn has_media_or_bulk(outcome: &RunOutcome) -> bool {
    outcome
        .flows
        .iter()
        .flat_map(|f| &f.apps)
        .any(|a| a.kind == "media" || a.kind == "bulk")
}

/// Throughput of one application's samples (time order) over `window`, bit/s.
pub fn windowed_throughput_bps(samples: &[&AppSample], window: Duration) -> Vec<f64> {
    let points: Vec<(Duration, u64)> = samples.iter().map(|s| (s.t, s.delivered_bytes)).collect();
    crate::timeseries::sliding_rate_bps(&points, window)
}

fn app_series(outcome: &RunOutcome, flow: usize, app: usize) -> Vec<&AppSample> {
    outcome
        .app_samples
        .iter()
        .filter(|s| s.flow == flow && s.app == app)
        .collect()
}

/// `apps.csv` rows of one run.
pub fn app_rows(index: usize, label: &str, outcome: &RunOutcome) -> Vec<AppRow> {
    let mut rows = Vec::new();
    for (f, flow) in outcome.flows.iter().enumerate() {
        for (a, app) in flow.apps.iter().enumerate() {
            let samples = app_series(outcome, f, a);
            let rates = windowed_throughput_bps(&samples, APP_THROUGHPUT_WINDOW);
            for (s, bps) in samples.iter().zip(rates) {
                rows.push(AppRow {
                    run: index,
                    cc: label.to_owned(),
                    seed: outcome.seed,
                    flow: flow.name.clone(),
                    app: app.name.clone(),
                    kind: app.kind.clone(),
                    t_s: s.t.as_secs_f64(),
                    delivered_bytes: s.delivered_bytes,
                    throughput_bps: bps,
                });
            }
        }
    }
    rows
}

/// What became of one frame the media captured.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CapturedFrame {
    seq: u64,
    captured_at: Duration,
    /// Arrival of its last byte; `None` if it never arrived.
    received_at: Option<Duration>,
    /// Whether it missed its deadline; `None` for a frame that did not arrive and whose
    /// deadline fell after `end_time`.
    late: Option<bool>,
}

/// Every frame `media` captured, in capture order, for a run that ended at `end_time`.
/// Frames that never arrived are placed at their capture time ([`MediaReport::capture_time`]),
/// as the periods count them.
fn captured_frames(media: &MediaReport, end_time: Duration) -> Vec<CapturedFrame> {
    let deadline = media.deadline();
    let arrival = |frame: &sim::apps::media::FrameRecord| CapturedFrame {
        seq: frame.seq,
        captured_at: frame.captured_at,
        received_at: Some(frame.received_at),
        late: Some(frame.delay() > deadline),
    };
    let arrived: std::collections::BTreeMap<u64, &sim::apps::media::FrameRecord> =
        media.frames.iter().map(|f| (f.seq, f)).collect();
    // Where the sender's side was not recorded (no frames captured), or the receiver did not
    // record every arrival, only the recorded arrivals are known.
    if media.frames_sent == 0 || (media.frames.len() as u64) < media.frames_received {
        return arrived.values().map(|frame| arrival(frame)).collect();
    }
    let captured = arrived
        .keys()
        .next_back()
        .map_or(0, |&last| last + 1)
        .max(media.frames_sent);
    (0..captured)
        .map(|seq| match arrived.get(&seq) {
            Some(frame) => arrival(frame),
            None => {
                let captured_at = media.capture_time(seq);
                CapturedFrame {
                    seq,
                    captured_at,
                    received_at: None,
                    // As the periods count frames: one whose deadline is not before the end
                    // of the run could not have arrived.
                    late: (captured_at + deadline < end_time).then_some(true),
                }
            }
        })
        .collect()
}

/// `frames.csv` rows of one run: per application, every frame it captured, in capture order.
pub fn frame_rows(index: usize, label: &str, outcome: &RunOutcome) -> Vec<FrameRow> {
    let mut rows = Vec::new();
    for flow in &outcome.flows {
        for app in &flow.apps {
            let Some(media) = MediaReport::of(app) else {
                continue;
            };
            for frame in captured_frames(&media, outcome.end_time) {
                rows.push(FrameRow {
                    run: index,
                    cc: label.to_owned(),
                    seed: outcome.seed,
                    flow: flow.name.clone(),
                    app: app.name.clone(),
                    seq: frame.seq,
                    captured_s: frame.captured_at.as_secs_f64(),
                    received_s: frame.received_at.map(|t| t.as_secs_f64()),
                    delay_ms: frame
                        .received_at
                        .map(|t| t.saturating_sub(frame.captured_at).as_secs_f64() * 1e3),
                    late: frame.late,
                });
            }
        }
    }
    rows
}

fn write_rows<W: Write, T: Serialize>(writer: W, rows: &[T]) -> Result<(), csv::Error> {
    let mut out = csv::Writer::from_writer(writer);
    for row in rows {
        out.serialize(row)?;
    }
    out.flush()?;
    Ok(())
}

/// Writes `apps.csv` for the runs.
pub fn write_apps_csv<W: Write>(writer: W, runs: &[CompletedRun]) -> Result<(), csv::Error> {
    let rows: Vec<AppRow> = runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| app_rows(i, &r.label, &r.outcome))
        .collect();
    write_rows(writer, &rows)
}

/// Writes `frames.csv` for the runs.
pub fn write_frames_csv<W: Write>(writer: W, runs: &[CompletedRun]) -> Result<(), csv::Error> {
    let rows: Vec<FrameRow> = runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| frame_rows(i, &r.label, &r.outcome))
        .collect();
    write_rows(writer, &rows)
}

/// The schedulers of a scenario's flows that carry media or bulk, for titles: "balancer", or
/// "call-1: balancer, call-2: none" when they differ. A flow of perf alone has one stream at a
/// time and nothing to schedule: naming its scheduler ("competitor: none") read as if there
/// were no competitor.
fn scheduler_note(scenario: &Scenario) -> String {
    let scheduled: Vec<_> = scenario
        .flows
        .iter()
        .filter(|f| {
            f.apps
                .iter()
                .any(|a| matches!(a.kind, AppKind::Media(_) | AppKind::Bulk(_)))
        })
        .collect();
    let names: Vec<&str> = scheduled.iter().map(|f| f.scheduler.name()).collect();
    if names.windows(2).all(|w| w[0] == w[1]) {
        names.first().copied().unwrap_or("none").to_owned()
    } else {
        scheduled
            .iter()
            .map(|f| format!("{}: {}", f.name, f.scheduler.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One figure per run: `media.png|svg` for a single run, `media-<cc>-seed<N>.png|svg`
/// otherwise.
pub fn write_figures(
    dir: &Path,
    scenario: &Scenario,
    runs: &[CompletedRun],
) -> Result<Vec<PathBuf>, PlotError> {
    let mut written = Vec::new();
    for run in runs {
        let outcome = &run.outcome;
        if !has_media_or_bulk(outcome) {
            continue;
        }
        let stem = if runs.len() == 1 {
            dir.join("media")
        } else {
            dir.join(format!("media-{}-seed{}", run.label, run.spec.seed))
        };
        let mut layers = Vec::new();
        let mut delays_on_time = Vec::new();
        let mut delays_late = Vec::new();
        let mut deadline_ms: Option<f64> = None;
        let several_flows = outcome.flows.len() > 1;
        // Media layers first (at the bottom), then bulk, then anything else.
        let rank = |kind: &str| match kind {
            "media" => 0,
            "bulk" => 1,
            _ => 2,
        };
        let mut order: Vec<(usize, usize)> = outcome
            .flows
            .iter()
            .enumerate()
            .flat_map(|(f, flow)| (0..flow.apps.len()).map(move |a| (f, a)))
            .collect();
        order.sort_by_key(|&(f, a)| (rank(&outcome.flows[f].apps[a].kind), f, a));
        for (f, a) in order {
            let flow = &outcome.flows[f];
            let app = &flow.apps[a];
            let samples = app_series(outcome, f, a);
            let rates = windowed_throughput_bps(&samples, FIGURE_THROUGHPUT_WINDOW);
            // "media (media)" says nothing twice: the kind only when the name differs.
            let app_label = if app.name == app.kind {
                app.name.clone()
            } else {
                format!("{} ({})", app.name, app.kind)
            };
            let label = if several_flows {
                format!("{} / {app_label}", flow.name)
            } else {
                app_label
            };
            layers.push(Series {
                label,
                points: samples
                    .iter()
                    .zip(rates)
                    .map(|(s, bps)| (s.t.as_secs_f64(), bps / 1e6))
                    .collect(),
            });
            if let Some(media) = MediaReport::of(app) {
                deadline_ms =
                    Some(deadline_ms.map_or(media.deadline_ms, |d| d.min(media.deadline_ms)));
                for frame in &media.frames {
                    let delay = (frame.received_at - frame.captured_at).as_secs_f64() * 1e3;
                    let point = (frame.captured_at.as_secs_f64(), delay);
                    if delay > media.deadline_ms {
                        delays_late.push(point);
                    } else {
                        delays_on_time.push(point);
                    }
                }
            }
        }
        let end = outcome.end_time;
        let mut capacity = Vec::new();
        for (from, _, rate) in capacity_steps(&scenario.path_config().forward, end) {
            capacity.push((from.as_secs_f64(), rate as f64 / 1e6));
        }
        if let Some(&(_, last)) = capacity.last() {
            capacity.push((end.as_secs_f64(), last));
        }
        let title = format!(
            "{} — scheduler: {} ({}, seed {})",
            scenario.name,
            scheduler_note(scenario),
            run.label,
            run.spec.seed
        );
        let ceiling = Series {
            label: "link capacity".to_owned(),
            points: capacity,
        };
        let bottom = [
            Series {
                label: "frames on time".to_owned(),
                points: delays_on_time,
            },
            Series {
                label: "late frames".to_owned(),
                points: delays_late,
            },
        ];
        let threshold_label = deadline_ms.map(|d| format!("deadline ({d:.0} ms)"));
        let chart = StackedPanelChart {
            title: &title,
            x_label: "time (s)",
            top_y_label: "throughput, 1 s average (Mbit/s)",
            layers: &layers,
            ceiling: Some(&ceiling),
            bottom_y_label: "frame delay (ms)",
            bottom_series: &bottom,
            bottom_threshold: threshold_label.as_deref().zip(deadline_ms),
            bottom_y_max: Some(DELAY_PANEL_MAX_MS),
        };
        written.extend(chart::stacked_panel_chart(&stem, &chart)?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_is_over_the_window_once_it_is_full() {
        let samples: Vec<AppSample> = (1..=5)
            .map(|i| AppSample {
                t: Duration::from_millis(100 * i),
                flow: 0,
                app: 0,
                delivered_bytes: 2_500 * i,
            })
            .collect();
        let refs: Vec<&AppSample> = samples.iter().collect();
        // 2 500 B per 100 ms = 200 kbit/s, from the start and over full 200 ms windows.
        let rates = windowed_throughput_bps(&refs, APP_THROUGHPUT_WINDOW);
        assert_eq!(rates.len(), 5);
        for r in rates {
            assert!((r - 200_000.0).abs() < 1e-6, "{r}");
        }
    }

    #[test]
    fn the_title_names_the_schedulers_of_flows_with_media_or_bulk_only() {
        let builtin = |name: &str, overrides: &[&str]| {
            let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
            let text = scenario::builtin::get(name).unwrap();
            Scenario::from_toml_str(text, name, &overrides).unwrap()
        };
        // The Cubic download next to the call is perf alone: nothing to schedule.
        let competing = builtin("media-bulk-competing", &["flow.0.scheduler=balancer"]);
        assert_eq!(scheduler_note(&competing), "balancer");
        // Two calls (`count = 2`), one of them switched to quinn's round robin.
        let mut two_calls = builtin("media-bulk-rmcat-two-flows", &[]);
        assert_eq!(scheduler_note(&two_calls), "balancer");
        two_calls.flows[1].scheduler = "none".parse().unwrap();
        assert_eq!(scheduler_note(&two_calls), "call-1: balancer, call-2: none");
    }

    #[test]
    fn every_captured_frame_has_a_row_whether_it_arrived_or_not() {
        let ms = Duration::from_millis;
        // 10 fps from 50 ms, a 400 ms deadline; frames 0 and 2 arrived (2 late), 1 and 3
        // never did, and the run ended at 700 ms: frame 1 was due at 550 ms, within the run,
        // frame 3 only at 750 ms.
        let arrived = |seq: u64, delay_ms: u64| sim::apps::media::FrameRecord {
            seq,
            captured_at: ms(50 + 100 * seq),
            received_at: ms(50 + 100 * seq + delay_ms),
            bytes: 1_000,
        };
        let media = MediaReport {
            frames_sent: 4,
            frames_received: 2,
            deadline_ms: 400.0,
            frames: vec![arrived(2, 450), arrived(0, 300)],
            fps: 10,
            first_capture_s: 0.05,
            ..MediaReport::default()
        };
        let frames = captured_frames(&media, ms(700));
        let got: Vec<_> = frames
            .iter()
            .map(|f| (f.seq, f.captured_at, f.received_at, f.late))
            .collect();
        assert_eq!(
            got,
            [
                (0, ms(50), Some(ms(350)), Some(false)),
                (1, ms(150), None, Some(true)),
                (2, ms(250), Some(ms(700)), Some(true)),
                (3, ms(350), None, None),
            ]
        );
        // A report without the sender's side: the arrivals, in capture order.
        let receiver_only = MediaReport {
            frames_sent: 0,
            ..media
        };
        let seqs: Vec<u64> = captured_frames(&receiver_only, ms(700))
            .iter()
            .map(|f| f.seq)
            .collect();
        assert_eq!(seqs, [0, 2]);
    }
}
