//! The files `satquic run` owns in its results directory, and the removal of those an earlier
//! run left there that this one did not rewrite — so that a folder never shows one run's
//! summary next to another's figures. Owned: the files `report::output::write_all` writes
//! ([`report::output::is_output_file`]) and the qlog files under `qlog/LABEL-seedN/`. Any
//! other file is never touched.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use scenario::Scenario;

/// The folder under the results directory that holds one qlog folder per run.
pub const QLOG_DIR: &str = "qlog";

/// The owned files a results directory held before this run.
pub struct Earlier {
    files: Vec<PathBuf>,
    qlogs: Vec<PathBuf>,
    qlog_root: PathBuf,
}

impl Earlier {
    /// Lists them (none if `dir` cannot be read).
    pub fn find(dir: &Path) -> Earlier {
        let files = regular_files(dir)
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(report::output::is_output_file)
            })
            .collect();
        let qlog_root = dir.join(QLOG_DIR);
        let qlogs = subdirectories(&qlog_root)
            .into_iter()
            .filter(|d| {
                d.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(is_run_folder)
            })
            .flat_map(|d| regular_files(&d))
            .filter(|p| p.extension().is_some_and(|e| e == "qlog" || e == "sqlog"))
            .collect();
        Earlier {
            files,
            qlogs,
            qlog_root,
        }
    }

    /// Removes the files found before that this run did not write (`written`: its result
    /// files; `rewritten_qlogs`: the qlog files it wrote over), and qlog folders left empty;
    /// returns what it removed.
    pub fn remove_stale(self, written: &[PathBuf], rewritten_qlogs: &[PathBuf]) -> Vec<PathBuf> {
        let written: BTreeSet<OsString> = written
            .iter()
            .filter_map(|p| p.file_name().map(OsString::from))
            .collect();
        let rewritten: BTreeSet<&PathBuf> = rewritten_qlogs.iter().collect();
        let stale_files = self
            .files
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|n| !written.contains(n)));
        let stale_qlogs: Vec<PathBuf> = self
            .qlogs
            .into_iter()
            .filter(|p| !rewritten.contains(p))
            .collect();
        let folders: BTreeSet<PathBuf> = stale_qlogs
            .iter()
            .filter_map(|p| p.parent().map(Path::to_path_buf))
            .collect();
        let mut removed = Vec::new();
        for path in stale_files.chain(stale_qlogs) {
            match std::fs::remove_file(&path) {
                Ok(()) => removed.push(path),
                Err(e) => errln!(
                    "warning: could not remove {}, an earlier run's output: {e}",
                    path.display()
                ),
            }
        }
        // Only folders that are empty now: remove_dir refuses the others.
        for folder in &folders {
            let _ = std::fs::remove_dir(folder);
        }
        if !folders.is_empty() {
            let _ = std::fs::remove_dir(&self.qlog_root);
        }
        removed
    }
}

/// The qlog files the simulator writes (over an earlier run's of the same names) for `runs`
/// (label, seed): `qlog/LABEL-seedN/FLOW-client.qlog` and `FLOW-server.qlog` of each flow
/// that logs (as `sim` names them).
pub fn simulator_qlogs(dir: &Path, scenario: &Scenario, runs: &[(String, u64)]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (label, seed) in runs {
        let folder = dir.join(QLOG_DIR).join(format!("{label}-seed{seed}"));
        for flow in scenario.flows.iter().filter(|f| f.qlog) {
            for role in ["client", "server"] {
                files.push(folder.join(format!("{}-{role}.qlog", flow.name)));
            }
        }
    }
    files
}

/// A run's qlog folder: `LABEL-seedN`.
fn is_run_folder(name: &str) -> bool {
    name.rsplit_once("-seed").is_some_and(|(label, seed)| {
        !label.is_empty() && !seed.is_empty() && seed.bytes().all(|b| b.is_ascii_digit())
    })
}

/// The regular files directly in `dir` (not symbolic links), none if it cannot be read.
fn regular_files(dir: &Path) -> Vec<PathBuf> {
    entries(dir, |t| t.is_file())
}

/// The folders directly in `dir` (not symbolic links), none if it cannot be read.
fn subdirectories(dir: &Path) -> Vec<PathBuf> {
    entries(dir, |t| t.is_dir())
}

fn entries(dir: &Path, keep: fn(&std::fs::FileType) -> bool) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| keep(&t)))
        .map(|e| e.path())
        .collect();
    paths.sort();
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_owned_files_not_rewritten_are_removed() {
        let dir = std::env::temp_dir().join(format!("satquic-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let old_run = dir.join(QLOG_DIR).join("cubic-seed1");
        let kept_run = dir.join(QLOG_DIR).join("newreno-seed1");
        std::fs::create_dir_all(&old_run).unwrap();
        std::fs::create_dir_all(&kept_run).unwrap();
        for file in [
            dir.join("summary.json"),
            dir.join("apps.csv"),
            dir.join("media.png"),
            dir.join("notes.md"),
            old_run.join("f-client.qlog"),
            old_run.join("notes.txt"),
            kept_run.join("f-client.qlog"),
        ] {
            std::fs::write(&file, "x").unwrap();
        }
        let earlier = Earlier::find(&dir);
        let removed = earlier.remove_stale(
            &[dir.join("summary.json")],
            &[kept_run.join("f-client.qlog")],
        );
        assert_eq!(
            removed,
            vec![
                dir.join("apps.csv"),
                dir.join("media.png"),
                old_run.join("f-client.qlog")
            ]
        );
        assert!(dir.join("summary.json").exists() && dir.join("notes.md").exists());
        // A folder still holding someone's file stays.
        assert!(old_run.join("notes.txt").exists());
        assert!(kept_run.join("f-client.qlog").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
