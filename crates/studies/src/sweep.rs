//! Parameter sweeps: the cartesian product of scenario overrides × controllers × seeds, run in
//! parallel, written to `sweep.csv` (one row per run and flow, every swept parameter a column)
//! and plotted as a metric against the first swept parameter with error bars over seeds.
//!
//! Rows are appended as runs finish, so an interrupted sweep keeps what it finished; a rerun
//! into the same directory skips those runs. When the sweep completes the file is rewritten in
//! canonical order (point, controller, seed, flow), so its bytes do not depend on the number of
//! worker threads or on interruptions.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use chart::{ErrorSeries, PlotError};
use lab::runner::{self, Job, Progress, RunError};
use report::summary;
use scenario::RunSpec;
use scenario::units;
use scenario::{Scenario, ScenarioError};
use serde::{Deserialize, Serialize};

/// One swept parameter: a scenario key (as for `--set`) and its values, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    /// Override key, e.g. `flow.0.access_delay`.
    pub key: String,
    /// Values as written, e.g. `["0ms", "100ms"]`.
    pub values: Vec<String>,
}

/// Why a sweep could not run.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A `--grid` argument is malformed.
    #[error("--grid {arg:?}: {problem}")]
    Grid {
        /// The argument.
        arg: String,
        /// What is wrong.
        problem: String,
    },
    /// A grid point makes the scenario invalid.
    #[error("grid point {point}")]
    Scenario {
        /// The point, as key=value pairs.
        point: String,
        /// The scenario error.
        source: ScenarioError,
    },
    /// Running failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The results file.
    #[error("{path}: {problem}")]
    Results {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A plot failed.
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// Parses `KEY=V1,V2,...` arguments into axes.
pub fn parse_grid(args: &[String]) -> Result<Vec<Axis>, SweepError> {
    let mut axes: Vec<Axis> = Vec::new();
    for arg in args {
        let problem = |p: &str| SweepError::Grid {
            arg: arg.clone(),
            problem: p.to_owned(),
        };
        let (key, values) = arg.split_once('=').ok_or_else(|| {
            problem("expected KEY=V1,V2,..., e.g. path.forward.rate=5Mbit,10Mbit")
        })?;
        let key = key.trim();
        if key.is_empty() {
            return Err(problem("empty key"));
        }
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_owned()).collect();
        if values.iter().any(String::is_empty) {
            return Err(problem("empty value"));
        }
        let unique: BTreeSet<&String> = values.iter().collect();
        if unique.len() != values.len() {
            return Err(problem("a value is repeated"));
        }
        if axes.iter().any(|a| a.key == key) {
            return Err(problem("this key is already swept by another --grid"));
        }
        axes.push(Axis {
            key: key.to_owned(),
            values,
        });
    }
    if axes.is_empty() {
        return Err(SweepError::Grid {
            arg: String::new(),
            problem: "at least one --grid KEY=V1,V2 is needed".into(),
        });
    }
    Ok(axes)
}

/// Every combination of axis values, first axis varying slowest.
pub fn points(axes: &[Axis]) -> Vec<Vec<(String, String)>> {
    let mut points = vec![Vec::new()];
    for axis in axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                axis.values.iter().map(move |v| {
                    let mut p = p.clone();
                    p.push((axis.key.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    points
}

fn point_label(point: &[(String, String)]) -> String {
    point
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What to sweep.
pub struct SweepPlan<'a> {
    /// Loads the scenario with extra overrides (the point's), e.g. from a file or a built-in.
    pub load: &'a dyn Fn(&[String]) -> Result<Scenario, ScenarioError>,
    /// Swept parameters.
    pub axes: Vec<Axis>,
    /// Controller overrides (`None`: the scenario's own).
    pub controllers: Vec<Option<String>>,
    /// Seeds per point and controller.
    pub seeds: Vec<u64>,
}

/// A sweep run, ready to execute.
struct Entry {
    point: Vec<(String, String)>,
    scenario: Scenario,
    job: Job,
}

fn entries(plan: &SweepPlan) -> Result<Vec<Entry>, SweepError> {
    let mut entries = Vec::new();
    for point in points(&plan.axes) {
        let overrides: Vec<String> = point.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let scenario = (plan.load)(&overrides).map_err(|source| SweepError::Scenario {
            point: point_label(&point),
            source,
        })?;
        for cc in &plan.controllers {
            for &seed in &plan.seeds {
                let spec = RunSpec {
                    cc_override: cc.clone(),
                    seed,
                };
                let job = runner::jobs(&scenario, std::slice::from_ref(&spec), None)?
                    .pop()
                    .expect("one spec, one job");
                entries.push(Entry {
                    point: point.clone(),
                    scenario: scenario.clone(),
                    job,
                });
            }
        }
    }
    Ok(entries)
}

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

impl SweepRow {
    /// Identity of the run inside sweep.csv: parameter values, controller, seed.
    fn run_key(&self) -> (Vec<String>, String, String) {
        (
            self.values.clone(),
            self.metrics.cc.clone(),
            self.metrics.seed.to_string(),
        )
    }
}

fn header(axes: &[Axis]) -> Vec<String> {
    axes.iter()
        .map(|a| a.key.clone())
        .chain(METRIC_COLUMNS.iter().map(|c| c.to_string()))
        .collect()
}

fn rows(entry: &Entry, run: &report::CompletedRun) -> Vec<SweepRow> {
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
fn write_row<W: std::io::Write>(writer: &mut csv::Writer<W>, row: &SweepRow) -> csv::Result<()> {
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

fn results_error(path: &Path, problem: impl ToString) -> SweepError {
    SweepError::Results {
        path: path.to_owned(),
        problem: problem.to_string(),
    }
}

/// Rows already in `path` (header checked), or none if the file does not exist.
fn existing_rows(path: &Path, header: &[String]) -> Result<Vec<SweepRow>, SweepError> {
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

/// What a sweep did.
#[derive(Debug)]
pub struct SweepOutcome {
    /// Runs in the sweep.
    pub total_runs: usize,
    /// Runs skipped because sweep.csv already had them.
    pub skipped_runs: usize,
    /// The results file.
    pub csv: PathBuf,
    /// Whether every run finished (false after an interruption).
    pub complete: bool,
}

/// Runs the sweep into `dir`.
pub fn run(
    plan: &SweepPlan,
    dir: &Path,
    threads: usize,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<SweepOutcome, SweepError> {
    std::fs::create_dir_all(dir).map_err(|e| results_error(dir, e))?;
    let csv_path = dir.join("sweep.csv");
    let header = header(&plan.axes);
    let previous = existing_rows(&csv_path, &header)?;
    let done: BTreeSet<_> = previous.iter().map(SweepRow::run_key).collect();

    let all = entries(plan)?;
    let total_runs = all.len();
    let (order, todo): (Vec<_>, Vec<_>) = all
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let values: Vec<String> = e.point.iter().map(|(_, v)| v.clone()).collect();
            (
                (values, e.job.label.clone(), e.job.spec.seed.to_string(), i),
                e,
            )
        })
        .unzip();
    let pending: Vec<(usize, Entry)> = todo
        .into_iter()
        .enumerate()
        .filter(|(i, _)| {
            let (values, label, seed, _) = &order[*i];
            !done.contains(&(values.clone(), label.clone(), seed.clone()))
        })
        .collect();
    let skipped_runs = total_runs - pending.len();

    if !csv_path.exists() {
        let mut writer =
            csv::Writer::from_path(&csv_path).map_err(|e| results_error(&csv_path, e))?;
        writer
            .write_record(&header)
            .and_then(|_| writer.flush().map_err(csv::Error::from))
            .map_err(|e| results_error(&csv_path, e))?;
    }
    let appender = Mutex::new(
        OpenOptions::new()
            .append(true)
            .open(&csv_path)
            .map_err(|e| results_error(&csv_path, e))?,
    );
    let append_error: Mutex<Option<SweepError>> = Mutex::new(None);
    let pending_entries: Vec<Entry> = pending.into_iter().map(|(_, e)| e).collect();
    let jobs: Vec<Job> = pending_entries
        .iter()
        .map(|e| Job {
            label: e.job.label.clone(),
            spec: e.job.spec.clone(),
            config: e.job.config.clone(),
        })
        .collect();
    let on_done = |i: usize, run: &report::CompletedRun| {
        let mut file = appender.lock().expect("no poisoning");
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(&mut *file);
        let result = rows(&pending_entries[i], run)
            .iter()
            .try_for_each(|r| write_row(&mut writer, r))
            .and_then(|_| writer.flush().map_err(csv::Error::from));
        if let Err(e) = result {
            append_error
                .lock()
                .expect("no poisoning")
                .get_or_insert(results_error(&csv_path, e));
        }
    };
    let result = runner::run_jobs(&jobs, threads, progress, cancel, &on_done);
    if let Some(e) = append_error.into_inner().expect("no poisoning") {
        return Err(e);
    }
    let complete = match result {
        Ok(_) => true,
        Err(RunError::Interrupted { .. }) => false,
        Err(e) => return Err(e.into()),
    };
    if complete {
        canonicalize(&csv_path, &header, &order)?;
    }
    Ok(SweepOutcome {
        total_runs,
        skipped_runs,
        csv: csv_path,
        complete,
    })
}

/// Rewrites sweep.csv sorted by run order (as the plan lists runs), then flow order.
fn canonicalize(
    path: &Path,
    header: &[String],
    order: &[(Vec<String>, String, String, usize)],
) -> Result<(), SweepError> {
    let rows = existing_rows(path, header)?;
    let rank: BTreeMap<(Vec<String>, String, String), usize> = order
        .iter()
        .map(|(v, l, s, i)| ((v.clone(), l.clone(), s.clone()), *i))
        .collect();
    let mut ranked: Vec<(usize, usize, SweepRow)> = rows
        .into_iter()
        .enumerate()
        .map(|(n, r)| (rank.get(&r.run_key()).copied().unwrap_or(usize::MAX), n, r))
        .collect();
    // Stable by file position within a run keeps the flows in scenario order.
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

/// A swept value as a number for the x axis, with its unit: durations in ms, rates in Mbit/s,
/// sizes in bytes, probabilities in %, plain numbers as they are.
pub fn numeric(value: &str) -> Option<(f64, &'static str)> {
    if let Ok(d) = units::parse_duration(value) {
        return Some((d.as_secs_f64() * 1e3, "ms"));
    }
    if let Ok(r) = units::parse_rate(value) {
        return Some((r as f64 / 1e6, "Mbit/s"));
    }
    if let Ok(p) = units::parse_probability(value) {
        return Some((p * 100.0, "%"));
    }
    if let Ok(b) = units::parse_size(value) {
        return Some((b as f64, "B"));
    }
    value.parse::<f64>().ok().map(|v| (v, ""))
}

/// Plots `metric` of `flow` (first flow if None) against the first axis: one line per
/// controller (and per value of the other axes), mean ± stdev over seeds.
pub fn plot(
    csv_path: &Path,
    axes: &[Axis],
    metric: &str,
    flow: Option<&str>,
    stem: &Path,
) -> Result<[PathBuf; 2], SweepError> {
    let header = header(axes);
    let rows = existing_rows(csv_path, &header)?;
    if !NUMERIC_METRICS.contains(&metric) {
        return Err(results_error(
            csv_path,
            format!("--metric {metric:?}: not a metric column; choose one of {NUMERIC_METRICS:?}"),
        ));
    }
    let flow = flow.map_or_else(
        || {
            rows.first()
                .map(|r| r.metrics.flow.clone())
                .unwrap_or_default()
        },
        str::to_owned,
    );
    // (line label) → x → values over seeds
    let mut lines: BTreeMap<String, BTreeMap<u64, (f64, Vec<f64>)>> = BTreeMap::new();
    let mut line_order: Vec<String> = Vec::new();
    let mut unit = "";
    for (i, row) in rows.iter().filter(|r| r.metrics.flow == flow).enumerate() {
        let Some((x, u)) = numeric(&row.values[0]).or(Some((i as f64, ""))) else {
            continue;
        };
        unit = u;
        let others: Vec<String> = axes[1..]
            .iter()
            .zip(&row.values[1..])
            .map(|(a, v)| format!("{}={v}", a.key))
            .collect();
        let label = std::iter::once(row.metrics.cc.clone())
            .chain(others)
            .collect::<Vec<_>>()
            .join(" ");
        if !line_order.contains(&label) {
            line_order.push(label.clone());
        }
        let Some(value) = row.metrics.value(metric) else {
            continue;
        };
        lines
            .entry(label)
            .or_default()
            .entry(x.to_bits())
            .or_insert((x, Vec::new()))
            .1
            .push(value);
    }
    let series: Vec<ErrorSeries> = line_order
        .iter()
        .map(|label| ErrorSeries {
            label: label.clone(),
            points: lines
                .get(label)
                .map(|xs| {
                    xs.values()
                        .map(|(x, vs)| {
                            let mean = vs.iter().sum::<f64>() / vs.len() as f64;
                            let var = if vs.len() > 1 {
                                vs.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
                                    / (vs.len() - 1) as f64
                            } else {
                                0.0
                            };
                            (*x, mean, var.sqrt())
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    let x_label = if unit.is_empty() {
        axes[0].key.clone()
    } else {
        format!("{} ({unit})", axes[0].key)
    };
    let title = format!("{metric} of flow {flow:?} vs {}", axes[0].key);
    Ok(chart::error_bar_chart(
        stem, &title, &x_label, metric, &series,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_parsing_and_points() {
        let axes = parse_grid(&["a=1,2".into(), "b=x,y,z".into()]).unwrap();
        let p = points(&axes);
        assert_eq!(p.len(), 6);
        assert_eq!(
            p[0],
            vec![("a".into(), "1".into()), ("b".into(), "x".into())]
        );
        assert_eq!(
            p[5],
            vec![("a".into(), "2".into()), ("b".into(), "z".into())]
        );
        for (bad, needle) in [
            ("nokey", "expected KEY="),
            ("=1,2", "empty key"),
            ("a=1,,2", "empty value"),
            ("a=1,1", "repeated"),
        ] {
            let err = parse_grid(&[bad.into()]).unwrap_err().to_string();
            assert!(err.contains(needle), "{bad}: {err}");
        }
        let err = parse_grid(&["a=1".into(), "a=2".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("already swept"), "{err}");
        assert!(parse_grid(&[]).is_err());
    }

    #[test]
    fn numeric_values_carry_units() {
        assert_eq!(numeric("600ms"), Some((600.0, "ms")));
        assert_eq!(numeric("10Mbit"), Some((10.0, "Mbit/s")));
        assert_eq!(numeric("1%"), Some((1.0, "%")));
        assert_eq!(numeric("3"), Some((3.0, "")));
        assert_eq!(numeric("cubic"), None);
    }

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
