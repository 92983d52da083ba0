//! Merging shards: checks that they are the N slices of one finished sweep, each exactly
//! once with exactly its runs, and writes the same canonical sweep.csv as an unsharded run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::error::{SweepError, results_error};
use super::grid::Axis;
use super::results::{RunKey, existing_rows, header, write_canonical};
use super::run::write_sweep_record;
use super::shard::{Shard, ShardManifest, read_manifest};

/// What [`merge`] did.
#[derive(Debug)]
pub struct MergeOutcome {
    /// The merged sweep.csv.
    pub csv: PathBuf,
    /// The sweep's axes (for [`plot`](fn@super::plot)).
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
    // As an unsharded run of the same sweep leaves it: that run resumes this file.
    write_sweep_record(
        out,
        &first.manifest.sweep_id,
        &first.manifest.satquic_version,
    )?;
    Ok(MergeOutcome {
        csv: csv_path,
        axes,
        shards: count,
        runs: order.len(),
        rows,
    })
}
