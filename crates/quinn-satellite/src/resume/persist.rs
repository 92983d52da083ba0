//! The store to and from its file: written atomically, read strictly (a corrupt line or file
//! is ignored with a warning, never half taken), bounded before anything is read.

use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

use super::file::{self, FileEntry};
use super::{Ignored, IgnoredReason, PathKey, ResumeStore, ResumeStoreError, age, lock};

/// The largest store file read, per entry of capacity: a line is under 120 bytes; a file far
/// larger than the store can hold is refused unread rather than read into memory.
const MAX_FILE_BYTES_PER_ENTRY: u64 = 256;

/// What [`ResumeStore::load`] did with a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Entries taken into the store.
    pub loaded: usize,
    /// Lines (or the whole file, line 0) not taken, and why; each was also logged.
    pub ignored: Vec<Ignored>,
}

impl ResumeStore {
    /// The entries still within their Lifetime at `now`, oldest first.
    fn snapshot(&self, now: SystemTime) -> Vec<FileEntry> {
        let entries = lock(&self.entries);
        entries
            .by_age
            .values()
            .filter_map(|key| {
                let slot = entries.by_key.get(key)?;
                self.fresh(slot.observed_at, now).then_some(FileEntry {
                    key: *key,
                    saved: slot.saved,
                    observed_at: slot.observed_at,
                })
            })
            .collect()
    }

    /// The store as the text of its file (entries within their Lifetime at `now`, oldest
    /// first); [`ResumeStore::load_bytes`] reads it back.
    pub fn to_text(&self, now: SystemTime) -> String {
        file::format(self.snapshot(now).iter())
    }

    /// Writes the entries within their Lifetime at `now` to `path`, atomically: to a
    /// temporary file beside it, synced, then renamed over it, so a reader (or a crash) sees
    /// the old file or the new one, never half of one. How many entries were written.
    pub fn save(&self, path: &Path, now: SystemTime) -> Result<usize, ResumeStoreError> {
        use std::io::Write as _;
        let _saving = lock(&self.saving);
        let entries = self.snapshot(now);
        let text = file::format(entries.iter());
        let io = |source| ResumeStoreError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut temp_name = path.file_name().unwrap_or_default().to_os_string();
        temp_name.push(format!(".tmp-{}", std::process::id()));
        let temp = path.with_file_name(temp_name);
        let written = (|| {
            let mut file = std::fs::File::create(&temp)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&temp, path)
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(io(e));
        }
        Ok(entries.len())
    }

    /// Adds the entries of the store file at `path` (a missing file is an empty one). Nothing
    /// in it is trusted: a file that is not a store file, and each line that is corrupt,
    /// keyed by other prefix lengths, expired at `now`, observed in the future or superseded
    /// by a newer observation of its path is ignored, with a warning naming the file, the
    /// line and why. An error only when the file exists but cannot be read.
    pub fn load(&self, path: &Path, now: SystemTime) -> Result<LoadReport, ResumeStoreError> {
        use std::io::Read as _;
        let limit = (self.config.capacity as u64)
            .saturating_mul(MAX_FILE_BYTES_PER_ENTRY)
            .saturating_add(4096);
        let io = |source| ResumeStoreError::Io {
            path: path.display().to_string(),
            source,
        };
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(LoadReport::default());
            }
            Err(e) => return Err(io(e)),
        };
        let mut bytes = Vec::new();
        file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
        let source = path.display().to_string();
        if bytes.len() as u64 > limit {
            let mut report = LoadReport::default();
            report.ignore(
                &source,
                0,
                IgnoredReason::Corrupt(format!(
                    "larger than {limit} bytes, more than a store of {} entries writes",
                    self.config.capacity
                )),
            );
            return Ok(report);
        }
        Ok(self.load_bytes(&bytes, &source, now))
    }

    /// [`ResumeStore::load`] from the file's bytes; `source` names it in the warnings.
    /// Never panics, whatever the bytes.
    pub fn load_bytes(&self, bytes: &[u8], source: &str, now: SystemTime) -> LoadReport {
        let mut report = LoadReport::default();
        let lines = match file::lines(bytes) {
            Ok(lines) => lines,
            Err(reason) => {
                report.ignore(source, 0, reason);
                return report;
            }
        };
        // The file's newest observation of each path (§3.1: one set per Remote Endpoint).
        let mut newest: HashMap<PathKey, (usize, FileEntry)> = HashMap::new();
        for (number, line) in lines {
            let entry = match file::parse_line(line, self.config.keying()) {
                Ok(entry) => entry,
                Err(reason) => {
                    report.ignore(source, number, reason);
                    continue;
                }
            };
            match age(entry.observed_at, now) {
                None => {
                    report.ignore(source, number, IgnoredReason::Future);
                    continue;
                }
                Some(age) if age >= self.config.lifetime => {
                    report.ignore(source, number, IgnoredReason::Expired { age });
                    continue;
                }
                Some(_) => {}
            }
            let superseded = match newest.get(&entry.key) {
                Some((_, kept)) if kept.observed_at >= entry.observed_at => number,
                Some((earlier, _)) => *earlier,
                None => 0,
            };
            if superseded != number {
                newest.insert(entry.key, (number, entry));
            }
            if superseded != 0 {
                report.ignore(source, superseded, IgnoredReason::Superseded);
            }
        }
        // Oldest first, so that if the file holds more than the capacity, the newest stay.
        let mut taken: Vec<(usize, FileEntry)> = newest.into_values().collect();
        taken.sort_by_key(|(number, entry)| (entry.observed_at, *number));
        let mut entries = lock(&self.entries);
        for (number, entry) in taken {
            if entries
                .by_key
                .get(&entry.key)
                .is_some_and(|slot| slot.observed_at >= entry.observed_at)
            {
                report.ignore(source, number, IgnoredReason::Superseded);
                continue;
            }
            entries.insert(
                entry.key,
                entry.saved,
                entry.observed_at,
                self.config.capacity,
            );
            report.loaded += 1;
        }
        report
    }
}

impl LoadReport {
    /// Notes and logs that line `line` (0: the whole file) of `source` was not taken.
    fn ignore(&mut self, source: &str, line: usize, reason: IgnoredReason) {
        let ignored = Ignored { line, reason };
        warn_ignored(source, &ignored);
        self.ignored.push(ignored);
    }
}

fn warn_ignored(source: &str, ignored: &Ignored) {
    if ignored.line == 0 {
        tracing::warn!(
            "Careful Resume store {source}: {}; the whole file is ignored",
            ignored.reason
        );
    } else {
        tracing::warn!(
            "Careful Resume store {source} line {}: {}; the entry is ignored",
            ignored.line,
            ignored.reason
        );
    }
}
