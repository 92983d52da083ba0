//! Running a sweep or one shard of it: the runs not yet in the results file, on all
//! threads, each appended as it finishes; the file rewritten in canonical order when all are.

use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use lab::runner::{self, Job, Progress, RunError};

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
