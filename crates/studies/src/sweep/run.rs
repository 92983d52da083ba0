//! Running a sweep or one shard of it: the runs not yet in the results file, on all
//! threads, each appended as it finishes; the file rewritten in canonical order when all are.

use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use lab::runner::{self, Job, Progress, RunError};
use serde::{Deserialize, Serialize};

use super::error::{SweepError, results_error};
use super::grid::{Entry, SweepPlan, entries};
use super::results::{RunKey, existing_rows, header, rows, write_canonical, write_row};
use super::shard::{AxisRecord, Shard, ShardManifest, read_manifest, sweep_id, write_manifest};

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
/// (combine the shards with [`merge`](fn@super::merge)). Rerunning the same shard into the same directory
/// resumes it, like [`run`](fn@run).
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

/// The file next to an unsharded sweep's sweep.csv that says which sweep wrote it.
pub const SWEEP_ID_FILE: &str = "sweep.json";

/// Contents of [`SWEEP_ID_FILE`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct SweepRecord {
    /// Always [`SweepRecord::FORMAT`].
    format: String,
    /// Version of the satquic build that ran the sweep.
    satquic_version: String,
    /// The sweep's identity, as a shard manifest's (every run's resolved scenario,
    /// controller and seed, and the build's version).
    sweep_id: String,
}

impl SweepRecord {
    const FORMAT: &'static str = "satquic-sweep/1";
}

/// An unsharded sweep resumes only itself: a sweep.csv in `dir` must come with the record of
/// this very sweep (the same scenario, overrides, grid, controllers, seeds and build).
fn check_unsharded(id_path: &Path, csv_path: &Path, this_id: &str) -> Result<(), SweepError> {
    if !csv_path.exists() {
        return Ok(());
    }
    let start_over = format!(
        "to start over, remove {} and {} (or use another --out)",
        csv_path.display(),
        id_path.display()
    );
    if !id_path.exists() {
        return Err(results_error(
            csv_path,
            format!(
                "written by a sweep that left no {SWEEP_ID_FILE} (an older satquic, or a \
                 sweep.csv copied in), so it cannot be told to be this sweep's to resume; \
                 {start_over}"
            ),
        ));
    }
    let text = std::fs::read_to_string(id_path).map_err(|e| results_error(id_path, e))?;
    let found: SweepRecord = serde_json::from_str(&text)
        .map_err(|e| results_error(id_path, format!("not a sweep record: {e}; {start_over}")))?;
    if found.format != SweepRecord::FORMAT {
        return Err(results_error(
            id_path,
            format!(
                "format {:?}, this build reads {:?}; {start_over}",
                found.format,
                SweepRecord::FORMAT
            ),
        ));
    }
    if found.sweep_id != this_id {
        return Err(results_error(
            csv_path,
            format!(
                "holds another sweep (id {}, satquic {}; this one is {}): a different \
                 scenario, --set, --grid, --cc, --seed or --seeds, or another satquic \
                 version. Rerun that sweep's own command to resume it; {start_over}",
                found.sweep_id, found.satquic_version, this_id
            ),
        ));
    }
    Ok(())
}

/// Writes [`SWEEP_ID_FILE`] into `dir`: sweep.csv there is sweep `sweep_id`'s (run by
/// satquic `version`).
pub(crate) fn write_sweep_record(
    dir: &Path,
    sweep_id: &str,
    version: &str,
) -> Result<(), SweepError> {
    let path = dir.join(SWEEP_ID_FILE);
    let record = SweepRecord {
        format: SweepRecord::FORMAT.to_owned(),
        satquic_version: version.to_owned(),
        sweep_id: sweep_id.to_owned(),
    };
    let text = serde_json::to_string_pretty(&record).map_err(|e| results_error(&path, e))?;
    std::fs::write(&path, text + "\n").map_err(|e| results_error(&path, e))
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
    let this_id = sweep_id(&plan.axes, &all);

    let manifest = shard.map(|shard| ShardManifest {
        format: ShardManifest::FORMAT.to_owned(),
        satquic_version: env!("CARGO_PKG_VERSION").to_owned(),
        sweep_id: this_id.clone(),
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

    if shard.is_none() {
        check_unsharded(&dir.join(SWEEP_ID_FILE), &csv_path, &this_id)?;
        write_sweep_record(dir, &this_id, env!("CARGO_PKG_VERSION"))?;
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
