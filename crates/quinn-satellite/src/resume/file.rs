//! The store's file: a line-based text format, written and read by hand so that persistence
//! needs no serde (the crate's default build has none).
//!
//! ```text
//! satquic-resume-store 1
//! # local remote observed_unix_ms saved_cwnd_bytes saved_rtt_us
//! 10.0.0.0/24 192.0.2.7/32 1767225600000 15000000 650000
//! ```
//!
//! The first line names the format and its version; then one entry per line, five fields
//! separated by single spaces; `#` lines are comments. Nothing in the file is trusted: every
//! field is parsed strictly, and a line that fails is ignored (the rest of the file is still
//! read), as is an entry keyed by other prefix lengths than the store's, an expired entry and
//! an entry observed in the future.

use std::net::IpAddr;
use std::time::{Duration, SystemTime};

use hybla::SavedPath;

use super::key::{PathKey, Prefix, PrefixLengths};

/// The first line of a store file: the format's name and version.
pub(crate) const HEADER: &str = "satquic-resume-store 1";

/// The comment naming the fields, written after the header.
const FIELDS: &str = "# local remote observed_unix_ms saved_cwnd_bytes saved_rtt_us";

/// The largest saved RTT a file may hold: no path has a longer round trip (a GEO hop with
/// queues is ~1 s); a larger value is damage, not a measurement.
const MAX_SAVED_RTT: Duration = Duration::from_secs(60);

/// One entry of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileEntry {
    pub key: PathKey,
    pub saved: SavedPath,
    pub observed_at: SystemTime,
}

/// Why a line (or the whole file) was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IgnoredReason {
    /// Not in the format: the field at fault and what is wrong with it.
    Corrupt(String),
    /// Keyed by another prefix length than this store's (written under another
    /// configuration): it names another set of paths.
    OtherKeying(String),
    /// Older than the store's Lifetime.
    Expired {
        /// Its age when read.
        age: Duration,
    },
    /// Observed later than now (beyond the clock-skew tolerance): not a measurement this
    /// store can date.
    Future,
    /// An older observation of a path the file (or the store) holds a newer one for: RFC
    /// 9959 §3.1 keeps one set of parameters per Remote Endpoint.
    Superseded,
}

impl std::fmt::Display for IgnoredReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IgnoredReason::Corrupt(what) => write!(f, "corrupt: {what}"),
            IgnoredReason::OtherKeying(what) => write!(f, "another path's entry: {what}"),
            IgnoredReason::Expired { age } => {
                write!(f, "expired: observed {} s ago", age.as_secs())
            }
            IgnoredReason::Future => write!(f, "observed in the future"),
            IgnoredReason::Superseded => write!(f, "a newer observation of the path is kept"),
        }
    }
}

/// A line that was not taken (line 0: the whole file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// 1-based line number; 0 when the whole file was refused.
    pub line: usize,
    /// Why.
    pub reason: IgnoredReason,
}

/// Why a written prefix was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PrefixError {
    /// Not `address/length`, a length beyond the family's, a non-canonical address or bits
    /// set beyond the prefix.
    Malformed,
    /// A well-formed prefix of another length than this store keys the family by.
    OtherKeying {
        /// The length written.
        length: u8,
        /// The store's length for the family.
        expected: u8,
    },
}

/// Parses `a.b.c.d/len` or `x:y::z/len` as [`Prefix`]'s `Display` writes it, strictly: the
/// length must be the one `lengths` gives the family (else the entry was keyed by another
/// setting and names another set of paths), and the address must be written canonically
/// with no bits set beyond the prefix.
fn parse_prefix(text: &str, lengths: PrefixLengths) -> Result<Prefix, PrefixError> {
    let (address, length) = text.split_once('/').ok_or(PrefixError::Malformed)?;
    let address: IpAddr = address.parse().map_err(|_| PrefixError::Malformed)?;
    let length = parse_digits(length)
        .and_then(|l| u8::try_from(l).ok())
        .ok_or(PrefixError::Malformed)?;
    let prefix = Prefix::exact(address, length).ok_or(PrefixError::Malformed)?;
    let expected = lengths.for_address(address);
    if length != expected {
        return Err(PrefixError::OtherKeying { length, expected });
    }
    Ok(prefix)
}

/// `text` as digits only (no sign, no spaces, at most 20 of them), as a number.
/// `str::parse` would accept a leading `+`; a file written by this module never has one.
fn parse_digits(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() > 20 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Milliseconds since the Unix epoch, or `None` before it.
fn unix_ms(time: SystemTime) -> Option<u64> {
    let since = time.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_millis()).ok()
}

/// The file's text for `entries` (in the order given).
pub(crate) fn format<'a>(entries: impl Iterator<Item = &'a FileEntry>) -> String {
    let mut text = format!("{HEADER}\n{FIELDS}\n");
    for entry in entries {
        let Some(observed_ms) = unix_ms(entry.observed_at) else {
            continue;
        };
        text.push_str(&format!(
            "{} {} {} {} {}\n",
            entry.key.local,
            entry.key.remote,
            observed_ms,
            entry.saved.saved_cwnd_bytes,
            entry.saved.saved_rtt.as_micros(),
        ));
    }
    text
}

/// One entry line, checked field by field.
pub(crate) fn parse_line(line: &str, lengths: Keying) -> Result<FileEntry, IgnoredReason> {
    let fields: Vec<&str> = line.split(' ').collect();
    let [local, remote, observed, cwnd, rtt] = fields.as_slice() else {
        return Err(IgnoredReason::Corrupt(format!(
            "{} fields, expected 5 separated by single spaces",
            fields.len()
        )));
    };
    let prefix = |field: &str, text: &str, lengths: PrefixLengths| {
        parse_prefix(text, lengths).map_err(|e| match e {
            PrefixError::Malformed => IgnoredReason::Corrupt(format!(
                "{field}: {text:?} is not an address/prefix with no bits beyond the prefix"
            )),
            PrefixError::OtherKeying { length, expected } => IgnoredReason::OtherKeying(format!(
                "{field} {text} is keyed by /{length}, this store by /{expected}"
            )),
        })
    };
    let local = prefix("local", local, lengths.local)?;
    let remote = prefix("remote", remote, lengths.remote)?;
    let observed_ms = parse_digits(observed).ok_or_else(|| {
        IgnoredReason::Corrupt(format!("observed_unix_ms: {observed:?} is not a number"))
    })?;
    let observed_at = SystemTime::UNIX_EPOCH
        .checked_add(Duration::from_millis(observed_ms))
        .ok_or_else(|| {
            IgnoredReason::Corrupt(format!("observed_unix_ms: {observed_ms} is out of range"))
        })?;
    let saved_cwnd_bytes = parse_digits(cwnd)
        .filter(|b| (1..=hybla::MAX_WINDOW_BYTES).contains(b))
        .ok_or_else(|| {
            IgnoredReason::Corrupt(format!(
                "saved_cwnd_bytes: {cwnd:?} is not a window of 1..={} bytes",
                hybla::MAX_WINDOW_BYTES
            ))
        })?;
    let saved_rtt = parse_digits(rtt)
        .map(Duration::from_micros)
        .filter(|d| !d.is_zero() && *d <= MAX_SAVED_RTT)
        .ok_or_else(|| {
            IgnoredReason::Corrupt(format!(
                "saved_rtt_us: {rtt:?} is not an RTT of 1 µs..={} s",
                MAX_SAVED_RTT.as_secs()
            ))
        })?;
    Ok(FileEntry {
        key: PathKey { local, remote },
        saved: SavedPath {
            saved_cwnd_bytes,
            saved_rtt,
        },
        observed_at,
    })
}

/// The prefix lengths of both ends, as the store keys them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keying {
    pub local: PrefixLengths,
    pub remote: PrefixLengths,
}

/// Splits `bytes` into the header check and the entry lines: `Err` when the whole file is
/// refused (not UTF-8, no header, another version), else the numbered lines after the
/// header that are neither blank nor comments.
pub(crate) fn lines(bytes: &[u8]) -> Result<Vec<(usize, &str)>, IgnoredReason> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| IgnoredReason::Corrupt(format!("not UTF-8 text ({e})")))?;
    let mut numbered = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    match numbered.next() {
        Some((_, HEADER)) => {}
        Some((_, first)) => {
            let shown: String = first.chars().take(40).collect();
            return Err(IgnoredReason::Corrupt(format!(
                "first line {shown:?} is not {HEADER:?}"
            )));
        }
        None => return Err(IgnoredReason::Corrupt("empty file".into())),
    }
    Ok(numbered
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .collect())
}
