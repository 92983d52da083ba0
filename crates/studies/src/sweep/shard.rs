//! Shards: `--shard K/N` slices of the canonical run order (round robin), and the manifest
//! each shard writes next to its csv (the sweep's identity, axes and full run list) so that
//! `merge` needs neither the scenario nor the flags.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::{SweepError, results_error};
use super::grid::{Axis, Entry};
use super::results::RunKey;

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
    pub(crate) fn from_file_stem(stem: &str) -> Option<Shard> {
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
pub(crate) fn sweep_id(axes: &[Axis], all: &[Entry]) -> String {
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

pub(crate) fn write_manifest(path: &Path, manifest: &ShardManifest) -> Result<(), SweepError> {
    // One line: the run list makes it long for a large sweep.
    let text = serde_json::to_string(manifest).map_err(|e| results_error(path, e))?;
    // Written whole then renamed, so a reader never sees half a manifest.
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text + "\n").map_err(|e| results_error(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| results_error(path, e))
}

pub(crate) fn read_manifest(path: &Path) -> Result<ShardManifest, SweepError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
