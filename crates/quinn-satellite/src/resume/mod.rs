//! Where Careful Resume's saved parameters live between connections (RFC 9959, "Careful
//! Resume: Convergence of Congestion Control from Retained State").
//!
//! The controller ([`hybla`]) does the RFC's phases; it needs, per connection, what a previous
//! connection on the same path measured. A [`ResumeStore`] keeps that: one [`SavedPath`] per
//! Remote Endpoint (§2.2, [`PathKey`]), for a Lifetime (§4.3.1), at most `capacity` of them.
//! A server asks it once per connection, before accepting (quinn's `Incoming::accept_with`
//! takes the connection's own transport), and tells it what the connection measured when it
//! closes:
//!
//! ```
//! use std::net::IpAddr;
//! use std::time::{Duration, SystemTime};
//! use quinn_satellite::{HyblaConfig, ResumeStore, ResumeStoreConfig};
//!
//! let store = ResumeStore::new(ResumeStoreConfig::default())?;
//! let (local, peer): (IpAddr, IpAddr) = ("192.0.2.1".parse()?, "198.51.100.7".parse()?);
//! // A connection from `peer` arrives (`incoming.local_ip()`, `incoming.remote_address()`):
//! let taken = store.take(local, peer, SystemTime::now());
//! let mut hybla = HyblaConfig::default();
//! if let Some(taken) = &taken {
//!     hybla.careful_resume(taken.params());
//! }
//! // … the connection runs with `hybla` as its controller; when it has closed,
//! // `hybla::resume_state_of(connection.congestion_state())` says what it measured:
//! // store.record(local, peer, taken, &state, SystemTime::now());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! What the store does for the RFC:
//!
//! - **one connection at a time** (§4.2, §3.2 "Using saved_cwnd"): [`ResumeStore::take`]
//!   removes the entry, so concurrent connections to one endpoint never jump from the same
//!   saved window; the one that took it leaves a fresh observation at close
//!   ([`ResumeStore::record`]), or, if it never used it, the entry goes back;
//! - **one set per Remote Endpoint, the latest** (§3.1): a new observation replaces the old;
//! - **Safe Retreat deletes** (§3.5): a connection that retreated leaves only what it measured
//!   afterwards, never the parameters it retreated from;
//! - **Lifetime** (§3.2, §4.3.1): an expired entry is never handed out and is dropped;
//! - **flush** (§4.3.1: after a configuration change): [`ResumeStore::flush`];
//! - **bad input is not trusted**: a store file is parsed strictly, and a corrupt line or
//!   file, an expired entry and another configuration's entry are ignored with a warning
//!   ([`ResumeStore::load`]).
//!
//! Times are passed in (`now: SystemTime`), so the store is deterministic under test and its
//! entries can be dated in a file that outlives the process. Warnings go through `tracing`
//! (target `quinn_satellite::resume`), as quinn's own do.

mod file;
mod key;

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use hybla::{ResumeParams, ResumePhase, ResumeState, SavedPath};

pub use file::{Ignored, IgnoredReason};
pub use key::{PathKey, Prefix, PrefixLengths};

use file::Keying;

/// The default Lifetime of saved parameters: 10 minutes.
///
/// RFC 9959 §4.3.1 leaves the value to the sender and gives the reasoning: RFC 7661 lets an
/// unvalidated window live at most 5 minutes (its non-validated period) under normal
/// congestion control; Careful Resume's own safeguards (a jump of half the saved window,
/// only after the initial window was acknowledged with a matching RTT, paced, and Safe
/// Retreat to half of what was validated) justify longer; a path that varies or a bottleneck
/// shared by many senders argues for minutes rather than hours. A satellite beam is such a
/// bottleneck — one forward link shared by every terminal under it, loaded differently
/// through the day — so the default is twice RFC 7661's period and stays in minutes. The
/// use it serves (draft-kuhn-quic-0rtt-bdp: a client fetching again seconds or minutes
/// later) fits well within it.
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(10 * 60);

/// The default number of paths kept: 4096. Entries are ~100 bytes, and a server sees a new
/// client every 150 ms on average before the oldest of them, in a Lifetime, is pushed out.
pub const DEFAULT_CAPACITY: usize = 4096;

/// How far in the future an entry's observation time may lie and still count as observed
/// now: the wall clock may step back a little (NTP) between recording and use. Beyond it the
/// entry cannot be dated and is not used.
pub const CLOCK_SKEW_TOLERANCE: Duration = Duration::from_secs(60);

/// A store that cannot be configured, or a file that cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeStoreError {
    /// A setting out of range: the field and the problem.
    #[error("{field}: {problem}")]
    Config {
        /// The setting at fault.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// Reading or writing the store file failed (a corrupt file is not an error: it is
    /// ignored with a warning, see [`ResumeStore::load`]).
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// How a [`ResumeStore`] keys, ages and bounds its entries. Start from
/// [`ResumeStoreConfig::default`] and change what differs with the `with_*` methods;
/// [`ResumeStore::new`] checks the values.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResumeStoreConfig {
    /// Most paths kept; the oldest observation is evicted to make room. At least 1.
    pub capacity: usize,
    /// How long an observation may be resumed from (RFC 9959 §4.3.1; [`DEFAULT_LIFETIME`]
    /// says why 10 minutes). Greater than zero.
    pub lifetime: Duration,
    /// How much of the local address identifies the sending interface (§2.2).
    pub local_prefix: PrefixLengths,
    /// How much of the peer's address identifies it (§2.2).
    pub remote_prefix: PrefixLengths,
}

impl Default for ResumeStoreConfig {
    fn default() -> Self {
        ResumeStoreConfig {
            capacity: DEFAULT_CAPACITY,
            lifetime: DEFAULT_LIFETIME,
            local_prefix: PrefixLengths::FULL,
            remote_prefix: PrefixLengths::FULL,
        }
    }
}

impl ResumeStoreConfig {
    /// The same with room for `capacity` paths.
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// The same with this Lifetime.
    pub fn with_lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetime = lifetime;
        self
    }

    /// The same with the local address reduced to these prefixes.
    pub fn with_local_prefix(mut self, lengths: PrefixLengths) -> Self {
        self.local_prefix = lengths;
        self
    }

    /// The same with the peer's address reduced to these prefixes (e.g.
    /// `PrefixLengths::new(24, 64)`: one IPv4 /24 or one IPv6 /64 is one endpoint).
    pub fn with_remote_prefix(mut self, lengths: PrefixLengths) -> Self {
        self.remote_prefix = lengths;
        self
    }

    /// Every setting usable, or the first that is not.
    pub fn check(&self) -> Result<(), ResumeStoreError> {
        if self.capacity == 0 {
            return Err(ResumeStoreError::Config {
                field: "capacity",
                problem: "must be at least 1".into(),
            });
        }
        if self.lifetime.is_zero() {
            return Err(ResumeStoreError::Config {
                field: "lifetime",
                problem: "must be greater than zero".into(),
            });
        }
        self.local_prefix.check("local_prefix")?;
        self.remote_prefix.check("remote_prefix")
    }

    fn keying(&self) -> Keying {
        Keying {
            local: self.local_prefix,
            remote: self.remote_prefix,
        }
    }
}

/// Saved parameters handed to one connection by [`ResumeStore::take`]: the store no longer
/// holds them. Give them back with the connection's end ([`ResumeStore::record`]) or, if the
/// connection never started, with [`ResumeStore::put_back`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resumption {
    key: PathKey,
    saved: SavedPath,
    observed_at: SystemTime,
}

impl Resumption {
    /// The path they were saved for.
    pub fn key(&self) -> PathKey {
        self.key
    }

    /// What the previous connection measured.
    pub fn saved(&self) -> SavedPath {
        self.saved
    }

    /// When it measured it.
    pub fn observed_at(&self) -> SystemTime {
        self.observed_at
    }

    /// The controller's settings to resume from them with the RFC's defaults
    /// (`HyblaConfig::careful_resume` takes them).
    pub fn params(&self) -> ResumeParams {
        ResumeParams::new(self.saved)
    }
}

/// How a closed connection used the parameters it took, as far as the store is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumeOutcome {
    /// Its controller did not resume (no parameters, or not a Careful Resume controller).
    NotResumed,
    /// It resumed but never left Reconnaissance: the saved parameters were neither used nor
    /// contradicted (e.g. the connection sent too little to fill its initial window).
    Unused,
    /// It jumped, or judged the parameters inapplicable (RTT check, path change, congestion
    /// in Reconnaissance), without a Safe Retreat.
    Used,
    /// It went through Safe Retreat: the parameters were wrong for the path (§3.5 deletes
    /// them).
    Retreated,
}

impl ResumeOutcome {
    /// The outcome `state` (from `hybla::resume_state_of`) reports.
    pub fn of(state: &ResumeState) -> ResumeOutcome {
        match &state.report {
            None => ResumeOutcome::NotResumed,
            Some(report) if report.retreated => ResumeOutcome::Retreated,
            Some(report) if report.phase == ResumePhase::Reconnaissance => ResumeOutcome::Unused,
            Some(_) => ResumeOutcome::Used,
        }
    }
}

/// What [`ResumeStore::record`] kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The connection's observation, for its path.
    Observed(SavedPath),
    /// Nothing new was observed and the parameters the connection took but did not use went
    /// back, with their original observation time.
    PutBack(SavedPath),
    /// Nothing: no observation, and no unused parameters to give back.
    Nothing,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    saved: SavedPath,
    observed_at: SystemTime,
    /// Insertion number: ties in `observed_at` are evicted in insertion order.
    seq: u64,
}

#[derive(Debug, Default)]
struct Entries {
    by_key: HashMap<PathKey, Slot>,
    /// Every entry by (observation time, insertion number): the front is the oldest, the
    /// first to expire and the first evicted.
    by_age: BTreeMap<(SystemTime, u64), PathKey>,
    next_seq: u64,
}

impl Entries {
    fn remove(&mut self, key: &PathKey) -> Option<Slot> {
        let slot = self.by_key.remove(key)?;
        self.by_age.remove(&(slot.observed_at, slot.seq));
        Some(slot)
    }

    fn insert(&mut self, key: PathKey, saved: SavedPath, observed_at: SystemTime, capacity: usize) {
        self.remove(&key);
        while self.by_key.len() >= capacity {
            let Some((_, oldest)) = self.by_age.pop_first() else {
                break;
            };
            self.by_key.remove(&oldest);
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.by_key.insert(
            key,
            Slot {
                saved,
                observed_at,
                seq,
            },
        );
        self.by_age.insert((observed_at, seq), key);
    }
}

/// Careful Resume's saved parameters per path: bounded, aged, thread-safe (`&self` methods
/// behind one mutex; share it in an `Arc`). See the [module docs](self) for how a server
/// and a client use it.
#[derive(Debug)]
pub struct ResumeStore {
    config: ResumeStoreConfig,
    entries: Mutex<Entries>,
    /// Held while a snapshot is taken and written, so that concurrent saves replace the file
    /// in the order of their snapshots.
    saving: Mutex<()>,
}

/// `mutex` locked; a panic elsewhere while it was held leaves entries that are each whole
/// (every update is a few map operations), so a poisoned lock is used as it is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The age of an observation at `now`; `None` if it lies in the future beyond the clock-skew
/// tolerance (within it, it counts as observed now).
fn age(observed_at: SystemTime, now: SystemTime) -> Option<Duration> {
    match now.duration_since(observed_at) {
        Ok(age) => Some(age),
        Err(ahead) if ahead.duration() <= CLOCK_SKEW_TOLERANCE => Some(Duration::ZERO),
        Err(_) => None,
    }
}

impl ResumeStore {
    /// An empty store with `config` (checked: a bad setting is refused, naming it).
    pub fn new(config: ResumeStoreConfig) -> Result<ResumeStore, ResumeStoreError> {
        config.check()?;
        Ok(ResumeStore {
            config,
            entries: Mutex::default(),
            saving: Mutex::default(),
        })
    }

    /// Its settings.
    pub fn config(&self) -> &ResumeStoreConfig {
        &self.config
    }

    /// The key of the path from `local` to `remote` under this store's prefixes.
    pub fn key(&self, local: IpAddr, remote: IpAddr) -> PathKey {
        PathKey {
            local: Prefix::new(local, self.config.local_prefix),
            remote: Prefix::new(remote, self.config.remote_prefix),
        }
    }

    /// Entries held (expired ones not yet dropped included).
    pub fn len(&self) -> usize {
        lock(&self.entries).by_key.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `observed_at` is still within the Lifetime at `now`.
    fn fresh(&self, observed_at: SystemTime, now: SystemTime) -> bool {
        age(observed_at, now).is_some_and(|age| age < self.config.lifetime)
    }

    /// The saved parameters for the path from `local` to `remote`, removed from the store
    /// (RFC 9959 §4.2: one connection at a time uses a set of parameters). `None` when there
    /// are none, or they expired (then they are dropped, with a warning).
    pub fn take(&self, local: IpAddr, remote: IpAddr, now: SystemTime) -> Option<Resumption> {
        let key = self.key(local, remote);
        let slot = lock(&self.entries).remove(&key);
        let Some(slot) = slot else {
            tracing::debug!(path = %key, "no saved Careful Resume parameters for this path");
            return None;
        };
        if !self.fresh(slot.observed_at, now) {
            tracing::warn!(
                path = %key,
                "saved Careful Resume parameters are past their Lifetime ({} s) or dated in the future: dropped, not used",
                self.config.lifetime.as_secs()
            );
            return None;
        }
        Some(Resumption {
            key,
            saved: slot.saved,
            observed_at: slot.observed_at,
        })
    }

    /// Saves `saved` for the path from `local` to `remote` as observed at `observed_at`,
    /// replacing what the store held for it (RFC 9959 §3.1: one set per Remote Endpoint, the
    /// latest). When full, the oldest observation makes room.
    pub fn insert(&self, local: IpAddr, remote: IpAddr, saved: SavedPath, observed_at: SystemTime) {
        let key = self.key(local, remote);
        self.insert_key(key, saved, observed_at);
    }

    fn insert_key(&self, key: PathKey, saved: SavedPath, observed_at: SystemTime) {
        lock(&self.entries).insert(key, saved, observed_at, self.config.capacity);
    }

    /// What a closed connection from `local` to `remote` leaves for the next one: its
    /// `state` (`hybla::resume_state_of` on its controller) and the parameters it `taken`
    /// from this store, if any. See [`ResumeStore::record_observation`].
    pub fn record(
        &self,
        local: IpAddr,
        remote: IpAddr,
        taken: Option<Resumption>,
        state: &ResumeState,
        now: SystemTime,
    ) -> Recorded {
        self.record_observation(
            local,
            remote,
            taken,
            state.observation,
            ResumeOutcome::of(state),
            now,
        )
    }

    /// [`ResumeStore::record`] from its parts: the connection's `observation` (RFC 9959 §3.1;
    /// `None` when it measured too little) and how it used what it took.
    ///
    /// - An observation is saved for the path at `now`, replacing any entry (§3.1). After a
    ///   Safe Retreat it is what the connection measured afterwards: the parameters it
    ///   retreated from were taken out when it started and are not put back (§3.5).
    /// - Without one, parameters the connection took and left unused (it never left
    ///   Reconnaissance, or did not resume at all) go back with their own observation time,
    ///   unless they expired or a newer entry arrived meanwhile. Used, judged inapplicable or
    ///   retreated-from parameters do not.
    /// - Otherwise nothing is saved.
    pub fn record_observation(
        &self,
        local: IpAddr,
        remote: IpAddr,
        taken: Option<Resumption>,
        observation: Option<SavedPath>,
        outcome: ResumeOutcome,
        now: SystemTime,
    ) -> Recorded {
        if let Some(observation) = observation {
            self.insert(local, remote, observation, now);
            return Recorded::Observed(observation);
        }
        match (taken, outcome) {
            (Some(taken), ResumeOutcome::Unused | ResumeOutcome::NotResumed) => {
                let saved = taken.saved;
                if self.put_back(taken, now) {
                    Recorded::PutBack(saved)
                } else {
                    Recorded::Nothing
                }
            }
            _ => Recorded::Nothing,
        }
    }

    /// Returns parameters a connection took but never used (e.g. its handshake failed) to the
    /// store, unless they expired or the path has a newer entry by now. Whether they went back.
    pub fn put_back(&self, taken: Resumption, now: SystemTime) -> bool {
        if !self.fresh(taken.observed_at, now) {
            return false;
        }
        let mut entries = lock(&self.entries);
        if entries
            .by_key
            .get(&taken.key)
            .is_some_and(|slot| slot.observed_at >= taken.observed_at)
        {
            return false;
        }
        entries.insert(
            taken.key,
            taken.saved,
            taken.observed_at,
            self.config.capacity,
        );
        true
    }

    /// Forgets every entry (RFC 9959 §4.3.1: after a configuration change); how many there
    /// were.
    pub fn flush(&self) -> usize {
        let mut entries = lock(&self.entries);
        let count = entries.by_key.len();
        *entries = Entries::default();
        count
    }

    /// Drops the entries past their Lifetime at `now`; how many.
    pub fn drop_expired(&self, now: SystemTime) -> usize {
        let mut entries = lock(&self.entries);
        let expired: Vec<PathKey> = entries
            .by_key
            .iter()
            .filter(|(_, slot)| !self.fresh(slot.observed_at, now))
            .map(|(key, _)| *key)
            .collect();
        for key in &expired {
            entries.remove(key);
        }
        expired.len()
    }
}

mod persist;
pub use persist::LoadReport;

#[cfg(test)]
mod tests;
