//! Two results directories side by side (e.g. the same scenario on the simulator and on the
//! emulator): per (controller, flow) goodput and completion of the first run, and the goodput
//! curves of both, read back through the typed [`Summary`] and [`timeseries::Row`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chart::{Chart, PlotError, Series};

use crate::summary::Summary;
use crate::timeseries;

/// Why two results directories could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A file could not be read.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// summary.json is not a satquic summary.
    #[error("{path}: not a satquic summary.json")]
    Summary {
        /// The file.
        path: PathBuf,
        /// What did not parse, with its line and column.
        source: serde_json::Error,
    },
    /// timeseries.csv is not a satquic time series.
    #[error("{path}: not a satquic timeseries.csv")]
    Timeseries {
        /// The file.
        path: PathBuf,
        /// What did not parse.
        source: csv::Error,
    },
    /// The directories have no (controller, flow) in common.
    #[error("{a} and {b} share no (controller, flow) pair")]
    NothingInCommon {
        /// First directory.
        a: PathBuf,
        /// Second directory.
        b: PathBuf,
    },
    /// The plot could not be written.
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// Reads `dir/summary.json`.
pub fn read_summary(dir: &Path) -> Result<Summary, CompareError> {
    let path = dir.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|source| CompareError::Io {
        path: path.clone(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| CompareError::Summary { path, source })
}

/// Reads `dir/timeseries.csv`.
pub fn read_timeseries(dir: &Path) -> Result<Vec<timeseries::Row>, CompareError> {
    let path = dir.join("timeseries.csv");
    let file = std::fs::File::open(&path).map_err(|source| CompareError::Io {
        path: path.clone(),
        source,
    })?;
    timeseries::read_csv(file).map_err(|source| CompareError::Timeseries { path, source })
}

/// One (controller, flow) in both directories (first run of each).
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// Controller label.
    pub cc: String,
    /// Flow name.
    pub flow: String,
    /// Goodput, bit/s, in A and B.
    pub goodput_bps: [f64; 2],
    /// Completion time, seconds, in A and B (None: did not complete).
    pub completion_s: [Option<f64>; 2],
    /// Goodput over time (t s, Mbit/s, 1 s sliding average) in A and B.
    pub curves: [Vec<(f64, f64)>; 2],
}

type Key = (String, String);

fn first_runs(summary: &Summary) -> BTreeMap<Key, (f64, Option<f64>)> {
    let mut out = BTreeMap::new();
    for run in &summary.runs {
        for flow in &run.flows {
            out.entry((run.cc.clone(), flow.name.clone()))
                .or_insert((flow.goodput_bps, flow.completion_s));
        }
    }
    out
}

fn curves(rows: &[timeseries::Row]) -> BTreeMap<Key, Vec<(f64, f64)>> {
    let mut first_run_of: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out: BTreeMap<Key, Vec<(f64, f64)>> = BTreeMap::new();
    for row in rows {
        if *first_run_of.entry(&row.cc).or_insert(row.run) != row.run {
            continue;
        }
        out.entry((row.cc.clone(), row.flow.clone()))
            .or_default()
            .push((row.t_s, row.goodput_bps / 1e6));
    }
    out
}

/// The (controller, flow) pairs results directories `a` and `b` have in common.
pub fn compare(a: &Path, b: &Path) -> Result<Vec<Pair>, CompareError> {
    let (ra, rb) = (first_runs(&read_summary(a)?), first_runs(&read_summary(b)?));
    let (ca, cb) = (curves(&read_timeseries(a)?), curves(&read_timeseries(b)?));
    let pairs: Vec<Pair> = ra
        .iter()
        .filter_map(|(key, &(ga, da))| {
            let &(gb, db) = rb.get(key)?;
            Some(Pair {
                cc: key.0.clone(),
                flow: key.1.clone(),
                goodput_bps: [ga, gb],
                completion_s: [da, db],
                curves: [
                    ca.get(key).cloned().unwrap_or_default(),
                    cb.get(key).cloned().unwrap_or_default(),
                ],
            })
        })
        .collect();
    if pairs.is_empty() {
        return Err(CompareError::NothingInCommon {
            a: a.to_owned(),
            b: b.to_owned(),
        });
    }
    Ok(pairs)
}

/// Overlays the goodput curves of `pairs` in `stem`.png and .svg; `labels` name A and B.
pub fn plot(
    stem: &Path,
    pairs: &[Pair],
    labels: [&str; 2],
    title: &str,
) -> Result<[PathBuf; 2], CompareError> {
    let mut lines = Vec::new();
    for pair in pairs {
        for (label, points) in labels.iter().zip(&pair.curves) {
            lines.push(Series {
                label: format!("{label}: {} {}", pair.cc, pair.flow),
                points: points.clone(),
            });
        }
    }
    Ok(chart::line_chart(
        stem,
        &Chart {
            title,
            x_label: "time (s)",
            y_label: "in-order goodput (Mbit/s)",
            series: &lines,
        },
    )?)
}
