//! Checks that several commands share, so that one flag means the same everywhere: the seed
//! count's bound, the seed range, the controller list, the results directory and sizes that
//! must hold a packet.

use std::path::Path;

use anyhow::{Context as _, bail};

/// Most seeds a command runs per case (`--seeds` of run, sweep, media-bulk, reproduce): each
/// seed is a run, and a count past this is a typo rather than a plan.
pub const MAX_SEEDS: u64 = 10_000;

/// `--seeds`' parser: 1..=[`MAX_SEEDS`] (clap names the flag in its error).
pub fn seeds() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=MAX_SEEDS)
}

/// The seeds `first`, `first + 1`, … of `count` runs; refused when the last would pass
/// `u64::MAX` (it would wrap to seed 0).
pub fn seed_range(first: u64, count: u64) -> anyhow::Result<std::ops::RangeInclusive<u64>> {
    match count
        .checked_sub(1)
        .and_then(|extra| first.checked_add(extra))
    {
        Some(last) => Ok(first..=last),
        None if count == 0 => bail!("--seeds: must be at least 1"),
        None => bail!(
            "--seed {first} with --seeds {count}: the last seed, seed + seeds - 1, would pass \
             the largest seed {}; choose a smaller --seed",
            u64::MAX
        ),
    }
}

/// `--cc a,b,…` as run overrides (`[None]`, the scenario's own, when empty), each trimmed; a
/// controller named twice is refused (its runs would share a label, a row key and a qlog
/// folder).
pub fn controllers(cc: &[String]) -> anyhow::Result<Vec<Option<String>>> {
    if cc.is_empty() {
        return Ok(vec![None]);
    }
    let mut names: Vec<String> = Vec::with_capacity(cc.len());
    for name in cc.iter().map(|c| c.trim()) {
        if names.iter().any(|n| n == name) {
            bail!("--cc: {name:?} is given twice; name each controller once");
        }
        names.push(name.to_owned());
    }
    Ok(names.into_iter().map(Some).collect())
}

/// Creates the results directory `dir` (given by `flag`, or its default) and checks that a
/// file can be written in it, so that a command fails before its runs, not after them.
pub fn results_dir(flag: &str, dir: &Path) -> anyhow::Result<()> {
    let shown = || format!("{flag} {}", dir.display());
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the results directory", shown()))?;
    let probe = dir.join(format!(".satquic-write-check-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&probe)
        .with_context(|| format!("{}: cannot write into the results directory", shown()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Bytes in one full-size packet (IP MTU): the least a flow-control window or a socket buffer
/// must hold for anything to move.
pub const PACKET_BYTES: u64 = netsim::DEFAULT_MTU_BYTES as u64;

/// A size flag (`--window 64MB`) that must hold at least `min` bytes (one full packet of
/// `min` bytes).
pub fn packet_size(flag: &str, value: &str, min: u64) -> anyhow::Result<u64> {
    let bytes = scenario::units::parse_size(value).with_context(|| format!("{flag} {value:?}"))?;
    if bytes < min {
        bail!("{flag} {value:?}: must be at least {min} B, to hold one full-size packet");
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_range_refuses_to_wrap() {
        assert_eq!(seed_range(1, 3).unwrap(), 1..=3);
        assert_eq!(seed_range(u64::MAX, 1).unwrap(), u64::MAX..=u64::MAX);
        let error = seed_range(u64::MAX, 2).unwrap_err().to_string();
        assert!(
            error.contains("--seed") && error.contains("--seeds 2"),
            "{error}"
        );
        assert!(seed_range(5, 0).is_err());
    }

    #[test]
    fn a_controller_named_twice_is_refused() {
        assert_eq!(controllers(&[]).unwrap(), vec![None]);
        assert_eq!(
            controllers(&["newreno".into(), " cubic".into()]).unwrap(),
            vec![Some("newreno".to_owned()), Some("cubic".to_owned())]
        );
        let error = controllers(&["newreno".into(), " newreno ".into()])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--cc") && error.contains("\"newreno\""),
            "{error}"
        );
    }
}
