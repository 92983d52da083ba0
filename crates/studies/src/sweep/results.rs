//! sweep.csv: its columns (the swept values, then [`SweepMetrics`]), the rows of a finished
//! run, the rows already written (for resuming), and the canonical order a complete file is
//! rewritten in. [`RunKey`] is how a row names its run.

use std::collections::BTreeMap;
use std::path::Path;

use report::summary;
use serde::{Deserialize, Serialize};

use super::error::{SweepError, results_error};
use super::grid::{Axis, Entry};

/// Metric columns of sweep.csv, after the parameter columns: the fields of [`SweepMetrics`]
/// in order (a test checks they agree).
pub const METRIC_COLUMNS: &[&str] = &[
    "cc",
    "seed",
    "flow",
    "state",
    "goodput_bps",
    "efficiency",
    "ceiling_fraction",
    "completion_s",
    "lost_packets",
    "jain_index",
    "link_utilization",
];

/// The metric part of one sweep.csv row: one flow of one run, taken from the run's
/// [`report::summary::RunSummary`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepMetrics {
    /// Controller label of the run.
    pub cc: String,
    /// Seed of the run.
    pub seed: u64,
    /// Flow name.
    pub flow: String,
    /// How the flow ended.
    pub state: String,
    /// Goodput, bit/s.
    pub goodput_bps: f64,
    /// Goodput / mean bottleneck rate.
    pub efficiency: f64,
    /// Goodput / goodput ceiling.
    pub ceiling_fraction: f64,
    /// First exchange's completion time, s (empty: did not complete).
    pub completion_s: Option<f64>,
    /// Packets the data sender declared lost.
    pub lost_packets: u64,
    /// Jain index of the run.
    pub jain_index: f64,
    /// Forward link utilization of the run.
    pub link_utilization: f64,
}

impl SweepMetrics {
    /// Metric `name` (a numeric column of [`METRIC_COLUMNS`]) as a number, if it has one.
    pub fn value(&self, name: &str) -> Option<f64> {
        match name {
            "goodput_bps" => Some(self.goodput_bps),
            "efficiency" => Some(self.efficiency),
            "ceiling_fraction" => Some(self.ceiling_fraction),
            "completion_s" => self.completion_s,
            "lost_packets" => Some(self.lost_packets as f64),
            "jain_index" => Some(self.jain_index),
            "link_utilization" => Some(self.link_utilization),
            _ => None,
        }
    }
}

/// The metrics [`SweepMetrics::value`] knows, for `--metric`: the columns after the run's
/// identity (cc, seed, flow, state).
pub const NUMERIC_METRICS: &[&str] = METRIC_COLUMNS.split_at(4).1;

/// One row of sweep.csv: the grid point's values (one per axis), then the metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    /// Value of each axis, as written on the command line.
    pub values: Vec<String>,
    /// The flow's results.
    pub metrics: SweepMetrics,
}

pub(crate) fn header(axes: &[Axis]) -> Vec<String> {
    axes.iter()
        .map(|a| a.key.clone())
        .chain(METRIC_COLUMNS.iter().map(|c| c.to_string()))
        .collect()
}

pub(crate) fn rows(entry: &Entry, run: &report::CompletedRun) -> Vec<SweepRow> {
    let summary = summary::run_summary(&entry.scenario, &run.label, &run.outcome);
    summary
        .flows
        .iter()
        .map(|f| SweepRow {
            values: entry.point.iter().map(|(_, v)| v.clone()).collect(),
            metrics: SweepMetrics {
                cc: run.label.clone(),
                seed: run.spec.seed,
                flow: f.name.clone(),
                state: f.state.clone(),
                goodput_bps: f.goodput_bps,
                efficiency: f.efficiency,
                ceiling_fraction: f.ceiling_fraction,
                completion_s: f.completion_s,
                lost_packets: f.lost_packets,
                jain_index: summary.jain_index,
                link_utilization: summary.link_utilization,
            },
        })
        .collect()
}

/// Writes one row: the axis values, then the metrics serialized by serde.
pub(crate) fn write_row<W: std::io::Write>(
    writer: &mut csv::Writer<W>,
    row: &SweepRow,
) -> csv::Result<()> {
    let mut metrics = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    metrics.serialize(&row.metrics)?;
    let metrics = metrics
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    let metrics = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(metrics.as_slice())
        .records()
        .next()
        .expect("one record was written")?;
    writer.write_record(row.values.iter().map(String::as_str).chain(metrics.iter()))
}

/// Rows already in `path` (header checked), or none if the file does not exist.
/// The rows of the sweep results file `path` (sweep.csv, or a merge of shards) whose flow never
/// connected: their metrics are zeros that measure nothing, and a plot or a mean over seeds
/// takes them for results.
pub fn not_connected_rows(path: &Path, axes: &[Axis]) -> Result<Vec<SweepRow>, SweepError> {
    Ok(existing_rows(path, &header(axes))?
        .into_iter()
        .filter(|row| row.metrics.state == report::summary::NOT_CONNECTED)
        .collect())
}

pub(crate) fn existing_rows(path: &Path, header: &[String]) -> Result<Vec<SweepRow>, SweepError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut reader = csv::Reader::from_path(path).map_err(|e| results_error(path, e))?;
    let found: Vec<String> = reader
        .headers()
        .map_err(|e| results_error(path, e))?
        .iter()
        .map(str::to_owned)
        .collect();
    if found != header {
        return Err(results_error(
            path,
            format!(
                "columns {found:?} do not match this sweep's {header:?}; use another --out or remove the file"
            ),
        ));
    }
    let axes = header.len() - METRIC_COLUMNS.len();
    let metric_header = csv::StringRecord::from(METRIC_COLUMNS.to_vec());
    reader
        .records()
        .enumerate()
        .map(|(n, record)| {
            let record = record.map_err(|e| results_error(path, e))?;
            let values: Vec<String> = record.iter().take(axes).map(str::to_owned).collect();
            let metrics = csv::StringRecord::from(record.iter().skip(axes).collect::<Vec<_>>())
                .deserialize(Some(&metric_header))
                .map_err(|e| results_error(path, format!("row {}: {e}", n + 2)))?;
            Ok(SweepRow { values, metrics })
        })
        .collect()
}

/// One run of a sweep as sweep.csv identifies it: grid values, controller label, seed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RunKey {
    /// Value of each axis.
    pub values: Vec<String>,
    /// Controller label.
    pub cc: String,
    /// Seed.
    pub seed: u64,
}

impl RunKey {
    pub(crate) fn of_row(row: &SweepRow) -> RunKey {
        RunKey {
            values: row.values.clone(),
            cc: row.metrics.cc.clone(),
            seed: row.metrics.seed,
        }
    }

    pub(crate) fn of_entry(entry: &Entry) -> RunKey {
        RunKey {
            values: entry.point.iter().map(|(_, v)| v.clone()).collect(),
            cc: entry.job.label.clone(),
            seed: entry.job.spec.seed,
        }
    }
}

/// Writes `rows` to `path` sorted by run order (as the plan lists runs), then by their
/// position in `rows` (which keeps each run's flows in scenario order).
pub(crate) fn write_canonical(
    path: &Path,
    header: &[String],
    rows: Vec<SweepRow>,
    order: &[RunKey],
) -> Result<(), SweepError> {
    let rank: BTreeMap<&RunKey, usize> = order.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let mut ranked: Vec<(usize, usize, SweepRow)> = rows
        .into_iter()
        .enumerate()
        .map(|(n, r)| {
            let rank = rank.get(&RunKey::of_row(&r)).copied().unwrap_or(usize::MAX);
            (rank, n, r)
        })
        .collect();
    ranked.sort_by_key(|(rank, n, _)| (*rank, *n));
    let mut writer = csv::Writer::from_path(path).map_err(|e| results_error(path, e))?;
    writer
        .write_record(header)
        .map_err(|e| results_error(path, e))?;
    for (_, _, row) in ranked {
        write_row(&mut writer, &row).map_err(|e| results_error(path, e))?;
    }
    writer.flush().map_err(|e| results_error(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_columns_are_the_fields_of_sweep_metrics_and_rows_round_trip() {
        let row = SweepRow {
            values: vec!["100ms".into(), "1%".into()],
            metrics: SweepMetrics {
                cc: "hybla".into(),
                seed: 3,
                flow: "bulk".into(),
                state: "running".into(),
                goodput_bps: 9_477_123.25,
                efficiency: 0.9477,
                ceiling_fraction: 0.98,
                completion_s: None,
                lost_packets: 339,
                jain_index: 1.0,
                link_utilization: 0.995,
            },
        };
        let mut with_header = csv::Writer::from_writer(Vec::new());
        with_header.serialize(&row.metrics).unwrap();
        let text = String::from_utf8(with_header.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next().unwrap(), METRIC_COLUMNS.join(","));
        for name in NUMERIC_METRICS {
            assert_eq!(
                row.metrics.value(name).is_some(),
                *name != "completion_s",
                "{name}"
            );
        }

        let dir = std::env::temp_dir().join(format!("satquic-sweep-row-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sweep.csv");
        let header: Vec<String> = ["path.forward.delay", "path.forward.loss"]
            .into_iter()
            .map(str::to_owned)
            .chain(METRIC_COLUMNS.iter().map(|c| c.to_string()))
            .collect();
        let mut writer = csv::Writer::from_path(&path).unwrap();
        writer.write_record(&header).unwrap();
        write_row(&mut writer, &row).unwrap();
        writer.flush().unwrap();
        drop(writer);
        assert_eq!(existing_rows(&path, &header).unwrap(), vec![row]);
        let _ = std::fs::remove_dir_all(dir);
    }
}
