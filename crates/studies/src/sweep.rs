//! Parameter sweeps: the cartesian product of scenario overrides × controllers × seeds, run in
//! parallel, written to `sweep.csv` (one row per run and flow, every swept parameter a column)
//! and plotted as a metric against the first swept parameter with error bars over seeds.
//!
//! Rows are appended as runs finish, so an interrupted sweep keeps what it finished; a rerun
//! into the same directory skips those runs. When the sweep completes the file is rewritten in
//! canonical order (point, controller, seed, flow), so its bytes do not depend on the number of
//! worker threads or on interruptions.
//!
//! A sweep too large for one machine runs as N shards ([`Shard`], `--shard K/N`, K from 1):
//! shard K takes the runs whose position in the canonical order is K − 1 modulo N (round
//! robin, so every shard gets a similar mix of cheap and expensive grid points) and writes
//! `shard-K-of-N.csv` next to a manifest `shard-K-of-N.json` naming the sweep (a digest of
//! every run's resolved scenario, controller and seed) and its full run list. [`merge`] checks
//! that the shards belong to one sweep, that each of 1..=N is there exactly once and finished,
//! and that every run is present, then writes the same canonical sweep.csv as an unsharded run.

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
    /// A `--shard K/N` argument is malformed.
    #[error("--shard {arg:?}: {problem}")]
    Shard {
        /// The argument.
        arg: String,
        /// What is wrong.
        problem: String,
    },
    /// Shards cannot be merged (missing, duplicated, unfinished, or of different sweeps).
    #[error("sweep merge: {0}")]
    Merge(String),
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
    /// Runs in the sweep (in this shard, for a shard).
    pub total_runs: usize,
    /// Runs skipped because the results file already had them.
    pub skipped_runs: usize,
    /// The results file: sweep.csv, or shard-K-of-N.csv for a shard.
    pub csv: PathBuf,
    /// Whether every run finished (false after an interruption).
    pub complete: bool,
}

/// One of `count` deterministic slices of a sweep: `--shard K/N`, K counted from 1 so that a
/// Slurm array `--array=1-N` passes `$SLURM_ARRAY_TASK_ID/N` unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// K: which slice, 1 ≤ K ≤ N.
    pub index: usize,
    /// N: how many slices.
    pub count: usize,
}

impl Shard {
    /// Whether the run at `position` in the canonical run order belongs to this shard (round
    /// robin: position mod N = K − 1).
    pub fn takes(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }

    /// File stem of this shard's outputs, `shard-K-of-N`.
    pub fn file_stem(&self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }

    /// The shard a file stem `shard-K-of-N` names, if it does.
    fn from_file_stem(stem: &str) -> Option<Shard> {
        let (k, n) = stem.strip_prefix("shard-")?.split_once("-of-")?;
        Some(Shard {
            index: k.parse().ok()?,
            count: n.parse().ok()?,
        })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = SweepError;

    /// Parses `K/N` (1 ≤ K ≤ N).
    fn from_str(arg: &str) -> Result<Shard, SweepError> {
        let problem = |p: String| SweepError::Shard {
            arg: arg.to_owned(),
            problem: p,
        };
        let (k, n) = arg
            .split_once('/')
            .ok_or_else(|| problem("expected K/N, e.g. 2/8 (K counts from 1)".into()))?;
        let number = |what: &str, text: &str| {
            text.trim().parse::<usize>().map_err(|_| {
                problem(format!(
                    "{what} {text:?} is not a whole number; expected K/N, e.g. 2/8"
                ))
            })
        };
        let (index, count) = (number("K", k)?, number("N", n)?);
        if count == 0 {
            return Err(problem("N must be at least 1".into()));
        }
        if index == 0 || index > count {
            return Err(problem(format!(
                "K must be between 1 and N = {count} (shards count from 1, as Slurm's --array=1-{count})"
            )));
        }
        Ok(Shard { index, count })
    }
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
    fn of_row(row: &SweepRow) -> RunKey {
        RunKey {
            values: row.values.clone(),
            cc: row.metrics.cc.clone(),
            seed: row.metrics.seed,
        }
    }

    fn of_entry(entry: &Entry) -> RunKey {
        RunKey {
            values: entry.point.iter().map(|(_, v)| v.clone()).collect(),
            cc: entry.job.label.clone(),
            seed: entry.job.spec.seed,
        }
    }
}

/// What `sweep merge` needs to know about a shard, written next to its csv as
/// `shard-K-of-N.json`: which sweep it belongs to, which slice it is, whether it finished,
/// and the sweep's axes and full run list (so the merge needs neither the scenario nor the
/// flags).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardManifest {
    /// Always [`ShardManifest::FORMAT`].
    pub format: String,
    /// Version of the satquic build that ran the shard.
    pub satquic_version: String,
    /// Digest of the whole sweep: every run's resolved scenario, controller and seed, and the
    /// build's version. Equal for every shard of one sweep, whatever K and N.
    pub sweep_id: String,
    /// K.
    pub shard: usize,
    /// N.
    pub shards: usize,
    /// Whether every run of the shard finished (false while running or after an interruption).
    pub complete: bool,
    /// Swept keys and values, in order.
    pub axes: Vec<AxisRecord>,
    /// Every run of the whole sweep in canonical order (not only this shard's).
    pub runs: Vec<RunKey>,
}

impl ShardManifest {
    /// Format tag of shard manifests; a different tag is not read.
    pub const FORMAT: &'static str = "satquic-sweep-shard/1";
}

/// An [`Axis`] as the manifest stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AxisRecord {
    /// Override key.
    pub key: String,
    /// Values, in order.
    pub values: Vec<String>,
}

/// FNV-1a, 64 bit: a digest that is the same on every machine and Rust version (unlike std's
/// `DefaultHasher`), enough to tell sweeps apart (not a defence against forgery).
struct Fnv64(u64);

impl Fnv64 {
    fn new() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator, so ("ab", "c") and ("a", "bc") differ.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// The sweep's identity: the build's version, the axes' keys, and for each run its resolved
/// scenario (which carries the scenario file and every override), controller label and seed.
fn sweep_id(axes: &[Axis], all: &[Entry]) -> String {
    let mut h = Fnv64::new();
    h.write(env!("CARGO_PKG_VERSION").as_bytes());
    for axis in axes {
        h.write(axis.key.as_bytes());
    }
    for entry in all {
        let key = RunKey::of_entry(entry);
        for v in &key.values {
            h.write(v.as_bytes());
        }
        h.write(key.cc.as_bytes());
        h.write(&key.seed.to_le_bytes());
        h.write(format!("{:?}", entry.scenario).as_bytes());
    }
    format!("{:016x}", h.0)
}

fn write_manifest(path: &Path, manifest: &ShardManifest) -> Result<(), SweepError> {
    // One line: the run list makes it long for a large sweep.
    let text = serde_json::to_string(manifest).map_err(|e| results_error(path, e))?;
    // Written whole then renamed, so a reader never sees half a manifest.
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text + "\n").map_err(|e| results_error(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| results_error(path, e))
}

fn read_manifest(path: &Path) -> Result<ShardManifest, SweepError> {
    let text = std::fs::read_to_string(path).map_err(|e| results_error(path, e))?;
    let manifest: ShardManifest = serde_json::from_str(&text)
        .map_err(|e| results_error(path, format!("not a shard manifest: {e}")))?;
    if manifest.format != ShardManifest::FORMAT {
        return Err(results_error(
            path,
            format!(
                "format {:?}, this build reads {:?}",
                manifest.format,
                ShardManifest::FORMAT
            ),
        ));
    }
    Ok(manifest)
}

/// Runs the sweep into `dir` (sweep.csv).
pub fn run(
    plan: &SweepPlan,
    dir: &Path,
    threads: usize,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<SweepOutcome, SweepError> {
    run_slice(plan, None, dir, threads, progress, cancel)
}

/// Runs one shard of the sweep into `dir`: `shard-K-of-N.csv` and `shard-K-of-N.json`
/// (combine the shards with [`merge`]). Rerunning the same shard into the same directory
/// resumes it, like [`run`].
pub fn run_shard(
    plan: &SweepPlan,
    shard: Shard,
    dir: &Path,
    threads: usize,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<SweepOutcome, SweepError> {
    run_slice(plan, Some(shard), dir, threads, progress, cancel)
}

fn run_slice(
    plan: &SweepPlan,
    shard: Option<Shard>,
    dir: &Path,
    threads: usize,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<SweepOutcome, SweepError> {
    std::fs::create_dir_all(dir).map_err(|e| results_error(dir, e))?;
    let csv_path = match shard {
        Some(shard) => dir.join(format!("{}.csv", shard.file_stem())),
        None => dir.join("sweep.csv"),
    };
    let header = header(&plan.axes);
    let all = entries(plan)?;
    let order: Vec<RunKey> = all.iter().map(RunKey::of_entry).collect();

    let manifest = shard.map(|shard| ShardManifest {
        format: ShardManifest::FORMAT.to_owned(),
        satquic_version: env!("CARGO_PKG_VERSION").to_owned(),
        sweep_id: sweep_id(&plan.axes, &all),
        shard: shard.index,
        shards: shard.count,
        complete: false,
        axes: plan
            .axes
            .iter()
            .map(|a| AxisRecord {
                key: a.key.clone(),
                values: a.values.clone(),
            })
            .collect(),
        runs: order.clone(),
    });
    if let (Some(shard), Some(manifest)) = (shard, &manifest) {
        let path = dir.join(format!("{}.json", shard.file_stem()));
        if path.exists() {
            let found = read_manifest(&path)?;
            if found.sweep_id != manifest.sweep_id {
                return Err(results_error(
                    &path,
                    format!(
                        "written by another sweep (id {}, this one is {}); use another --out or remove the shard's files",
                        found.sweep_id, manifest.sweep_id
                    ),
                ));
            }
        }
        write_manifest(&path, manifest)?;
    }

    let previous = existing_rows(&csv_path, &header)?;
    let done: BTreeSet<RunKey> = previous.iter().map(RunKey::of_row).collect();
    let mine: Vec<Entry> = all
        .into_iter()
        .enumerate()
        .filter(|(i, _)| shard.is_none_or(|s| s.takes(*i)))
        .map(|(_, e)| e)
        .collect();
    let total_runs = mine.len();
    let pending_entries: Vec<Entry> = mine
        .into_iter()
        .filter(|e| !done.contains(&RunKey::of_entry(e)))
        .collect();
    let skipped_runs = total_runs - pending_entries.len();

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
        let rows = existing_rows(&csv_path, &header)?;
        write_canonical(&csv_path, &header, rows, &order)?;
        if let (Some(shard), Some(mut manifest)) = (shard, manifest) {
            manifest.complete = true;
            write_manifest(&dir.join(format!("{}.json", shard.file_stem())), &manifest)?;
        }
    }
    Ok(SweepOutcome {
        total_runs,
        skipped_runs,
        csv: csv_path,
        complete,
    })
}

/// Writes `rows` to `path` sorted by run order (as the plan lists runs), then by their
/// position in `rows` (which keeps each run's flows in scenario order).
fn write_canonical(
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

/// What [`merge`] did.
#[derive(Debug)]
pub struct MergeOutcome {
    /// The merged sweep.csv.
    pub csv: PathBuf,
    /// The sweep's axes (for [`plot`]).
    pub axes: Vec<Axis>,
    /// N.
    pub shards: usize,
    /// Runs in the sweep.
    pub runs: usize,
    /// Rows written (runs × flows).
    pub rows: usize,
}

/// One shard found by [`merge`].
struct FoundShard {
    manifest: ShardManifest,
    json: PathBuf,
    csv: PathBuf,
}

fn merge_error(problem: impl Into<String>) -> SweepError {
    SweepError::Merge(problem.into())
}

/// Shard manifests and csv files in `dir`, by file name.
fn shards_in(dir: &Path) -> Result<Vec<FoundShard>, SweepError> {
    let listing = std::fs::read_dir(dir).map_err(|e| results_error(dir, e))?;
    let mut names: Vec<String> = Vec::new();
    for item in listing {
        let item = item.map_err(|e| results_error(dir, e))?;
        if let Some(name) = item.file_name().to_str() {
            names.push(name.to_owned());
        }
    }
    names.sort();
    let mut found = Vec::new();
    for name in &names {
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        let Some(shard) = Shard::from_file_stem(stem) else {
            continue;
        };
        let json = dir.join(name);
        let manifest = read_manifest(&json)?;
        if (manifest.shard, manifest.shards) != (shard.index, shard.count) {
            return Err(results_error(
                &json,
                format!(
                    "says shard {}/{} but is named {stem}.json",
                    manifest.shard, manifest.shards
                ),
            ));
        }
        found.push(FoundShard {
            manifest,
            json,
            csv: dir.join(format!("{stem}.csv")),
        });
    }
    if found.is_empty() {
        let csvs: Vec<&String> = names
            .iter()
            .filter(|n| {
                n.strip_suffix(".csv")
                    .and_then(Shard::from_file_stem)
                    .is_some()
            })
            .collect();
        return Err(results_error(
            dir,
            if csvs.is_empty() {
                "no shard-K-of-N.json here; pass the --out directories of `satquic sweep ... --shard K/N`".to_owned()
            } else {
                format!(
                    "{csvs:?} without their .json manifests; rerun those shards to complete them"
                )
            },
        ));
    }
    Ok(found)
}

/// Rebuilds the canonical sweep.csv in `out` from the shards found in `dirs` (each holding
/// one or more `shard-K-of-N.json` + `.csv`; one directory may hold all of them). Refuses
/// shards of different sweeps or different N, a shard present twice, missing or unfinished
/// shards, and shard files whose rows are not exactly their slice's runs.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<MergeOutcome, SweepError> {
    if dirs.is_empty() {
        return Err(merge_error("no shard directories given"));
    }
    let mut seen_dirs: BTreeSet<PathBuf> = BTreeSet::new();
    let mut found: Vec<FoundShard> = Vec::new();
    for dir in dirs {
        // The same directory named twice (e.g. `d` and `d/`) holds the same files: read once.
        let canonical = dir
            .canonicalize()
            .map_err(|e| results_error(dir, format!("cannot read this shard directory: {e}")))?;
        if seen_dirs.insert(canonical) {
            found.extend(shards_in(dir)?);
        }
    }
    let first = &found[0];
    for other in &found[1..] {
        if other.manifest.sweep_id != first.manifest.sweep_id {
            let what = if other.manifest.runs != first.manifest.runs
                || other.manifest.axes != first.manifest.axes
            {
                "a different grid, controllers or seeds"
            } else if other.manifest.satquic_version != first.manifest.satquic_version {
                "a different satquic version"
            } else {
                "the same runs of a different scenario or --set overrides"
            };
            return Err(merge_error(format!(
                "{} (sweep {}) and {} (sweep {}) belong to different sweeps: {what}",
                first.json.display(),
                first.manifest.sweep_id,
                other.json.display(),
                other.manifest.sweep_id
            )));
        }
        if other.manifest.shards != first.manifest.shards {
            return Err(merge_error(format!(
                "{} is one of {} shards but {} is one of {}; merge the shards of one --shard K/N split",
                first.json.display(),
                first.manifest.shards,
                other.json.display(),
                other.manifest.shards
            )));
        }
    }
    let count = first.manifest.shards;
    let mut by_index: BTreeMap<usize, &FoundShard> = BTreeMap::new();
    for shard in &found {
        if let Some(before) = by_index.insert(shard.manifest.shard, shard) {
            return Err(merge_error(format!(
                "shard {}/{count} is given twice: {} and {}",
                shard.manifest.shard,
                before.json.display(),
                shard.json.display()
            )));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|k| !by_index.contains_key(k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(merge_error(format!(
            "shard{} {} missing (found {} of {count})",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            by_index.len()
        )));
    }
    let unfinished: Vec<String> = by_index
        .values()
        .filter(|s| !s.manifest.complete)
        .map(|s| s.json.display().to_string())
        .collect();
    if !unfinished.is_empty() {
        return Err(merge_error(format!(
            "unfinished shard{}: {}; rerun the same `satquic sweep ... --shard K/N` to resume",
            if unfinished.len() == 1 { "" } else { "s" },
            unfinished.join(", ")
        )));
    }

    let axes: Vec<Axis> = first
        .manifest
        .axes
        .iter()
        .map(|a| Axis {
            key: a.key.clone(),
            values: a.values.clone(),
        })
        .collect();
    let header = header(&axes);
    let order = &first.manifest.runs;
    let mut all_rows = Vec::new();
    for (&index, shard) in &by_index {
        let slice = Shard { index, count };
        let expected: BTreeSet<&RunKey> = order
            .iter()
            .enumerate()
            .filter(|(i, _)| slice.takes(*i))
            .map(|(_, k)| k)
            .collect();
        if !shard.csv.exists() {
            return Err(results_error(
                &shard.csv,
                format!("missing (its manifest {} is there)", shard.json.display()),
            ));
        }
        let rows = existing_rows(&shard.csv, &header)?;
        let present: BTreeSet<RunKey> = rows.iter().map(RunKey::of_row).collect();
        if let Some(stray) = present.iter().find(|k| !expected.contains(k)) {
            return Err(results_error(
                &shard.csv,
                format!("has a run that is not shard {slice}'s: {stray:?}"),
            ));
        }
        if let Some(absent) = expected.iter().find(|k| !present.contains(*k)) {
            return Err(results_error(
                &shard.csv,
                format!("lacks shard {slice}'s run {absent:?}"),
            ));
        }
        all_rows.extend(rows);
    }
    std::fs::create_dir_all(out).map_err(|e| results_error(out, e))?;
    let csv_path = out.join("sweep.csv");
    let rows = all_rows.len();
    write_canonical(&csv_path, &header, all_rows, order)?;
    Ok(MergeOutcome {
        csv: csv_path,
        axes,
        shards: count,
        runs: order.len(),
        rows,
    })
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
    let (y_label, y_scale) = metric_axis(metric);
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
                            (*x, mean * y_scale, var.sqrt() * y_scale)
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
    let title = format!(
        "{} of flow {flow} vs {}",
        y_label.split(" (").next().unwrap_or(metric),
        axes[0].key
    );
    Ok(chart::error_bar_chart(
        stem, &title, &x_label, &y_label, &series,
    )?)
}

/// The y axis of a metric: rates in Mbit/s rather than bare bits per second ("8M" ticks read
/// as megabytes as easily as megabits), other metrics as they are in sweep.csv.
fn metric_axis(metric: &str) -> (String, f64) {
    match metric.strip_suffix("_bps") {
        Some(name) => (format!("{} (Mbit/s)", name.replace('_', " ")), 1e-6),
        None => (metric.to_owned(), 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_metrics_are_plotted_in_mbit_per_s() {
        assert_eq!(
            metric_axis("goodput_bps"),
            ("goodput (Mbit/s)".to_owned(), 1e-6)
        );
        assert_eq!(metric_axis("jain_index"), ("jain_index".to_owned(), 1.0));
    }

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
    fn shards_parse_one_based_and_partition_the_runs() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!((s.index, s.count), (2, 3));
        assert_eq!(s.to_string(), "2/3");
        assert_eq!(s.file_stem(), "shard-2-of-3");
        assert_eq!(Shard::from_file_stem("shard-2-of-3"), Some(s));
        assert_eq!(Shard::from_file_stem("sweep"), None);
        for (bad, needle) in [
            ("0/3", "between 1 and N = 3"),
            ("4/3", "between 1 and N = 3"),
            ("1/0", "at least 1"),
            ("3", "expected K/N"),
            ("a/3", "K \"a\""),
            ("1/-2", "N \"-2\""),
        ] {
            let err = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(
                err.starts_with("--shard") && err.contains(needle),
                "{bad}: {err}"
            );
        }
        // Every run in exactly one of N shards, for several N.
        for n in 1..=5 {
            for run in 0..23 {
                let owners = (1..=n)
                    .filter(|&k| Shard { index: k, count: n }.takes(run))
                    .count();
                assert_eq!(owners, 1, "run {run} of N = {n}");
            }
        }
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
