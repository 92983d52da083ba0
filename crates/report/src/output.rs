//! Writes a batch of runs to a results directory: summary.json (deterministic), timing.json
//! (wall-clock figures, kept apart so the summary stays byte-identical), timeseries.csv, and
//! the cwnd and goodput plots (PNG + SVG); for runs with media or bulk applications also
//! apps.csv, frames.csv and one media figure per run ([`crate::media`]).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sim::RunOutcome;

use serde::{Deserialize, Serialize};

use crate::summary::{self, Summary};
use crate::timeseries::{self, GOODPUT_WINDOW};
use chart::{Chart, PlotError, Series};
use scenario::Scenario;

/// A finished run.
#[derive(Debug)]
pub struct CompletedRun {
    /// What was run.
    pub spec: scenario::RunSpec,
    /// Controller label.
    pub label: String,
    /// What happened.
    pub outcome: RunOutcome,
    /// Wall-clock time the run took (for timing.json only).
    pub wall: Duration,
}

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

/// cwnd and goodput over time for the runs of the first seed, one line per flow and controller.
pub fn write_plots(
    dir: &Path,
    scenario: &Scenario,
    first_seed: u64,
    runs: &[CompletedRun],
) -> Result<Vec<PathBuf>, OutputError> {
    let shown: Vec<&CompletedRun> = runs.iter().filter(|r| r.spec.seed == first_seed).collect();
    let mut cwnd = Vec::new();
    let mut goodput = Vec::new();
    for run in &shown {
        for flow in 0..run.outcome.flows.len() {
            let label = series_label(&shown, run, flow);
            let samples = timeseries::flow_samples(&run.outcome, flow);
            cwnd.push(Series {
                label: label.clone(),
                points: samples
                    .iter()
                    .map(|s| (s.t.as_secs_f64(), s.cwnd_bytes as f64 / 1e3))
                    .collect(),
            });
            let rates = timeseries::sliding_goodput_bps(&samples, GOODPUT_WINDOW);
            goodput.push(Series {
                label,
                points: samples
                    .iter()
                    .zip(rates)
                    .map(|(s, r)| (s.t.as_secs_f64(), r / 1e6))
                    .collect(),
            });
        }
    }
    let seed_note = if runs.len() > shown.len() {
        format!(", seed {first_seed}")
    } else {
        String::new()
    };
    let mut written = Vec::new();
    let cwnd_title = format!("{} — congestion window{seed_note}", scenario.name);
    written.extend(chart::line_chart(
        &dir.join("cwnd"),
        &Chart {
            title: &cwnd_title,
            x_label: "time (s)",
            y_label: "cwnd (kB)",
            series: &cwnd,
        },
    )?);
    let goodput_title = format!(
        "{} — goodput (bytes in order), 1 s sliding average{seed_note}",
        scenario.name
    );
    written.extend(chart::line_chart(
        &dir.join("goodput"),
        &Chart {
            title: &goodput_title,
            x_label: "time (s)",
            y_label: "in-order goodput (Mbit/s)",
            series: &goodput,
        },
    )?);
    Ok(written)
}
