use std::fmt::Write as _;
use std::net::IpAddr;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, SystemTime};

use hybla::SavedPath;
use proptest::prelude::*;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber, span};

use super::*;

// ---- helpers ------------------------------------------------------------------------------

/// A fixed wall-clock instant (2026-01-01T00:00:00Z) plus `secs`.
fn at(secs: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600 + secs)
}

fn ip(text: &str) -> IpAddr {
    text.parse().expect("a test address")
}

fn saved(cwnd: u64, rtt_ms: u64) -> SavedPath {
    SavedPath {
        saved_cwnd_bytes: cwnd,
        saved_rtt: Duration::from_millis(rtt_ms),
    }
}

fn store(config: ResumeStoreConfig) -> ResumeStore {
    ResumeStore::new(config).expect("a valid configuration")
}

const SERVER: &str = "192.0.2.1";
const PEER: &str = "198.51.100.7";

/// Every event logged while `run` ran on this thread, as (level, fields).
fn logged<T>(run: impl FnOnce() -> T) -> (T, Vec<(Level, String)>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let subscriber = Capture(events.clone());
    let value = tracing::subscriber::with_default(subscriber, run);
    let events = events.lock().expect("no poisoning").clone();
    (value, events)
}

fn warnings(events: &[(Level, String)]) -> Vec<&str> {
    events
        .iter()
        .filter(|(level, _)| *level == Level::WARN)
        .map(|(_, text)| text.as_str())
        .collect()
}

/// A tracing subscriber that keeps every event's level and fields.
struct Capture(Arc<Mutex<Vec<(Level, String)>>>);

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, "{}={:?} ", field.name(), value);
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }
    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.0
            .lock()
            .expect("no poisoning")
            .push((*event.metadata().level(), fields.0));
    }
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

/// The store's two indexes agree: every entry once in each.
fn assert_consistent(store: &ResumeStore) {
    let entries = lock(&store.entries);
    assert_eq!(entries.by_key.len(), entries.by_age.len());
    for ((observed_at, seq), key) in &entries.by_age {
        let slot = entries.by_key.get(key).expect("indexed entry exists");
        assert_eq!((slot.observed_at, slot.seq), (*observed_at, *seq));
    }
}

// ---- configuration ------------------------------------------------------------------------

#[test]
fn a_bad_setting_is_refused_naming_the_field() {
    let cases = [
        (ResumeStoreConfig::default().with_capacity(0), "capacity: "),
        (
            ResumeStoreConfig::default().with_lifetime(Duration::ZERO),
            "lifetime: ",
        ),
        (
            ResumeStoreConfig::default().with_remote_prefix(PrefixLengths::new(33, 64)),
            "remote_prefix: IPv4 prefix /33",
        ),
        (
            ResumeStoreConfig::default().with_local_prefix(PrefixLengths::new(24, 129)),
            "local_prefix: IPv6 prefix /129",
        ),
    ];
    for (config, expected) in cases {
        let error = ResumeStore::new(config).unwrap_err().to_string();
        assert!(error.starts_with(expected), "{error:?} vs {expected:?}");
    }
}

// ---- take, insert, capacity, lifetime -----------------------------------------------------

#[test]
fn take_removes_the_entry_so_a_second_take_gets_none() {
    let store = store(ResumeStoreConfig::default());
    store.insert(ip(SERVER), ip(PEER), saved(5_000_000, 600), at(0));
    let first = store.take(ip(SERVER), ip(PEER), at(1)).expect("saved");
    assert_eq!(first.saved(), saved(5_000_000, 600));
    assert_eq!(first.observed_at(), at(0));
    assert_eq!(first.params().saved, saved(5_000_000, 600));
    assert_eq!(store.take(ip(SERVER), ip(PEER), at(1)), None);
    assert!(store.is_empty());
}

#[test]
fn a_path_holds_one_entry_the_latest() {
    let store = store(ResumeStoreConfig::default());
    store.insert(ip(SERVER), ip(PEER), saved(1_000_000, 600), at(0));
    store.insert(ip(SERVER), ip(PEER), saved(2_000_000, 610), at(5));
    assert_eq!(store.len(), 1);
    assert_consistent(&store);
    let taken = store.take(ip(SERVER), ip(PEER), at(6)).expect("saved");
    assert_eq!(taken.saved(), saved(2_000_000, 610));
}

#[test]
fn capacity_is_a_bound_and_the_oldest_observation_makes_room() {
    let store = store(ResumeStoreConfig::default().with_capacity(3));
    // Inserted out of observation order: the one observed earliest (b) goes first.
    store.insert(ip(SERVER), ip("10.0.0.1"), saved(100_000, 50), at(10));
    store.insert(ip(SERVER), ip("10.0.0.2"), saved(100_000, 50), at(5));
    store.insert(ip(SERVER), ip("10.0.0.3"), saved(100_000, 50), at(20));
    assert_eq!(store.len(), 3);
    store.insert(ip(SERVER), ip("10.0.0.4"), saved(100_000, 50), at(30));
    assert_eq!(store.len(), 3);
    assert_consistent(&store);
    assert_eq!(store.take(ip(SERVER), ip("10.0.0.2"), at(31)), None);
    for peer in ["10.0.0.1", "10.0.0.3", "10.0.0.4"] {
        assert!(store.take(ip(SERVER), ip(peer), at(31)).is_some(), "{peer}");
    }
}

#[test]
fn an_expired_entry_is_never_returned_and_is_dropped() {
    let lifetime = Duration::from_secs(60);
    let store = store(ResumeStoreConfig::default().with_lifetime(lifetime));
    store.insert(ip(SERVER), ip(PEER), saved(5_000_000, 600), at(0));
    // Within the Lifetime: handed out (and given back unused).
    let taken = store.take(ip(SERVER), ip(PEER), at(59)).expect("fresh");
    assert!(store.put_back(taken, at(59)));
    // At the Lifetime: not returned, dropped, with a warning.
    let (taken, events) = logged(|| store.take(ip(SERVER), ip(PEER), at(60)));
    assert_eq!(taken, None);
    assert!(store.is_empty());
    let warned = warnings(&events);
    assert_eq!(warned.len(), 1, "{events:?}");
    assert!(warned[0].contains("Lifetime"), "{warned:?}");
    // An unused entry past its Lifetime does not go back either.
    store.insert(ip(SERVER), ip(PEER), saved(5_000_000, 600), at(100));
    let taken = store.take(ip(SERVER), ip(PEER), at(101)).expect("fresh");
    assert!(!store.put_back(taken, at(161)));
    assert!(store.is_empty());
}

#[test]
fn drop_expired_and_flush_empty_the_store() {
    let store = store(ResumeStoreConfig::default().with_lifetime(Duration::from_secs(60)));
    store.insert(ip(SERVER), ip("10.0.0.1"), saved(100_000, 50), at(0));
    store.insert(ip(SERVER), ip("10.0.0.2"), saved(100_000, 50), at(30));
    assert_eq!(store.drop_expired(at(70)), 1);
    assert_eq!(store.len(), 1);
    assert_consistent(&store);
    assert_eq!(store.flush(), 1);
    assert!(store.is_empty());
    assert_eq!(store.take(ip(SERVER), ip("10.0.0.2"), at(71)), None);
}

#[test]
fn an_entry_dated_beyond_the_clock_skew_tolerance_is_not_used() {
    let store = store(ResumeStoreConfig::default());
    store.insert(ip(SERVER), ip("10.0.0.1"), saved(100_000, 50), at(30));
    store.insert(ip(SERVER), ip("10.0.0.2"), saved(100_000, 50), at(1000));
    // 30 s ahead of now: the clock stepped back a little; counts as observed now.
    assert!(store.take(ip(SERVER), ip("10.0.0.1"), at(0)).is_some());
    assert_eq!(store.take(ip(SERVER), ip("10.0.0.2"), at(0)), None);
}

// ---- keys ---------------------------------------------------------------------------------

#[test]
fn prefixes_make_one_endpoint_of_a_subnet() {
    let store = store(
        ResumeStoreConfig::default()
            .with_remote_prefix(PrefixLengths::new(24, 64))
            .with_local_prefix(PrefixLengths::new(16, 48)),
    );
    let key = store.key(ip("192.0.2.77"), ip("198.51.100.7"));
    assert_eq!(key.to_string(), "192.0.0.0/16 → 198.51.100.0/24");
    // Another host of the /24, and the IPv4-mapped form of one (a dual-stack socket's view).
    for peer in ["198.51.100.200", "::ffff:198.51.100.9"] {
        assert_eq!(store.key(ip("192.0.9.1"), ip(peer)), key, "{peer}");
    }
    assert_ne!(store.key(ip("192.0.2.77"), ip("198.51.101.7")), key);
    assert_ne!(store.key(ip("192.1.2.77"), ip("198.51.100.7")), key);
    let v6 = store.key(ip("2001:db8:aaaa::1"), ip("2001:db8:1:2::5"));
    assert_eq!(v6.to_string(), "2001:db8:aaaa::/48 → 2001:db8:1:2::/64");
    assert_eq!(
        store.key(ip("2001:db8:aaaa:ffff::9"), ip("2001:db8:1:2:ffff::1")),
        v6
    );
    assert_ne!(store.key(ip("2001:db8:aaaa::1"), ip("2001:db8:1:3::5")), v6);

    store.insert(
        ip("192.0.2.77"),
        ip("198.51.100.7"),
        saved(100_000, 50),
        at(0),
    );
    let taken = store
        .take(ip("192.0.200.1"), ip("198.51.100.250"), at(1))
        .expect("same prefixes");
    assert_eq!(taken.key(), key);
}

#[test]
fn full_addresses_by_default_and_zero_length_prefixes_merge_everything() {
    let exact = store(ResumeStoreConfig::default());
    assert_ne!(
        exact.key(ip(SERVER), ip("10.0.0.1")),
        exact.key(ip(SERVER), ip("10.0.0.2"))
    );
    let one = store(ResumeStoreConfig::default().with_remote_prefix(PrefixLengths::new(0, 0)));
    assert_eq!(
        one.key(ip(SERVER), ip("10.0.0.1")),
        one.key(ip(SERVER), ip("203.0.113.9"))
    );
    assert_eq!(
        one.key(ip(SERVER), ip("10.0.0.1")).remote.to_string(),
        "0.0.0.0/0"
    );
}

// ---- record -------------------------------------------------------------------------------

#[test]
fn record_saves_the_observation_replacing_what_was_there() {
    let store = store(ResumeStoreConfig::default());
    store.insert(ip(SERVER), ip(PEER), saved(1_000_000, 600), at(0));
    let taken = store.take(ip(SERVER), ip(PEER), at(1));
    let recorded = store.record_observation(
        ip(SERVER),
        ip(PEER),
        taken,
        Some(saved(7_000_000, 620)),
        ResumeOutcome::Used,
        at(20),
    );
    assert_eq!(recorded, Recorded::Observed(saved(7_000_000, 620)));
    let again = store.take(ip(SERVER), ip(PEER), at(21)).expect("recorded");
    assert_eq!(
        (again.saved(), again.observed_at()),
        (saved(7_000_000, 620), at(20))
    );
}

#[test]
fn after_a_safe_retreat_only_the_new_observation_is_kept() {
    let store = store(ResumeStoreConfig::default());
    store.insert(ip(SERVER), ip(PEER), saved(8_000_000, 600), at(0));
    // Retreated and measured nothing worth saving: the old parameters stay deleted.
    let taken = store.take(ip(SERVER), ip(PEER), at(1));
    let recorded = store.record_observation(
        ip(SERVER),
        ip(PEER),
        taken,
        None,
        ResumeOutcome::Retreated,
        at(10),
    );
    assert_eq!(recorded, Recorded::Nothing);
    assert!(store.is_empty());
    // Retreated, then measured the path as it is now: that is what the next connection gets.
    store.insert(ip(SERVER), ip(PEER), saved(8_000_000, 600), at(20));
    let taken = store.take(ip(SERVER), ip(PEER), at(21));
    let recorded = store.record_observation(
        ip(SERVER),
        ip(PEER),
        taken,
        Some(saved(2_000_000, 1200)),
        ResumeOutcome::Retreated,
        at(30),
    );
    assert_eq!(recorded, Recorded::Observed(saved(2_000_000, 1200)));
    let next = store.take(ip(SERVER), ip(PEER), at(31)).expect("recorded");
    assert_eq!(next.saved(), saved(2_000_000, 1200));
}

#[test]
fn unused_parameters_go_back_and_used_ones_do_not() {
    let store = store(ResumeStoreConfig::default());
    for (outcome, expected_back) in [
        (ResumeOutcome::Unused, true),
        (ResumeOutcome::NotResumed, true),
        (ResumeOutcome::Used, false),
        (ResumeOutcome::Retreated, false),
    ] {
        store.flush();
        store.insert(ip(SERVER), ip(PEER), saved(3_000_000, 600), at(0));
        let taken = store.take(ip(SERVER), ip(PEER), at(1));
        let recorded = store.record_observation(ip(SERVER), ip(PEER), taken, None, outcome, at(9));
        if expected_back {
            assert_eq!(
                recorded,
                Recorded::PutBack(saved(3_000_000, 600)),
                "{outcome:?}"
            );
            let back = store.take(ip(SERVER), ip(PEER), at(10)).expect("put back");
            // Its own observation time: going back does not extend its Lifetime.
            assert_eq!(back.observed_at(), at(0), "{outcome:?}");
        } else {
            assert_eq!(recorded, Recorded::Nothing, "{outcome:?}");
            assert!(store.is_empty(), "{outcome:?}");
        }
    }
    // Nothing taken, nothing observed: nothing saved.
    let recorded = store.record_observation(
        ip(SERVER),
        ip(PEER),
        None,
        None,
        ResumeOutcome::Used,
        at(20),
    );
    assert_eq!(recorded, Recorded::Nothing);
    assert!(store.is_empty());
}

#[test]
fn put_back_yields_to_a_newer_observation() {
    let store = store(ResumeStoreConfig::default());
    store.insert(ip(SERVER), ip(PEER), saved(3_000_000, 600), at(0));
    let taken = store.take(ip(SERVER), ip(PEER), at(1)).expect("saved");
    // A concurrent connection to the same endpoint closed meanwhile and recorded its view.
    store.insert(ip(SERVER), ip(PEER), saved(4_000_000, 600), at(5));
    assert!(!store.put_back(taken, at(6)));
    let kept = store.take(ip(SERVER), ip(PEER), at(7)).expect("the newer");
    assert_eq!(kept.saved(), saved(4_000_000, 600));
}

// ---- threads ------------------------------------------------------------------------------

#[test]
fn concurrent_connections_never_share_one_entry() {
    let store = Arc::new(store(ResumeStoreConfig::default()));
    const THREADS: usize = 8;
    for round in 0..50u64 {
        store.insert(
            ip(SERVER),
            ip(PEER),
            saved(1_000_000 + round, 600),
            at(round),
        );
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (store, barrier) = (store.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    store.take(ip(SERVER), ip(PEER), at(round + 1))
                })
            })
            .collect();
        let taken: Vec<Resumption> = handles
            .into_iter()
            .filter_map(|h| h.join().expect("no panic"))
            .collect();
        assert_eq!(taken.len(), 1, "round {round}");
        assert_eq!(taken[0].saved(), saved(1_000_000 + round, 600));
    }
}

#[test]
fn threads_inserting_and_taking_keep_the_bound_and_the_indexes() {
    let capacity = 64;
    let store = Arc::new(store(ResumeStoreConfig::default().with_capacity(capacity)));
    let handles: Vec<_> = (0..4u8)
        .map(|thread| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..500u16 {
                    let peer = IpAddr::from([10, thread, (i >> 8) as u8, i as u8]);
                    store.insert(ip(SERVER), peer, saved(100_000, 50), at(u64::from(i)));
                    if i % 3 == 0 {
                        let _ = store.take(ip(SERVER), peer, at(u64::from(i)));
                    }
                    assert!(store.len() <= capacity);
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().expect("no panic");
    }
    assert!(store.len() <= capacity);
    assert_consistent(&store);
}

#[test]
fn the_store_is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<ResumeStore>();
    shared::<Resumption>();
}

// ---- the file -----------------------------------------------------------------------------

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "quinn-satellite-resume-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn the_file_round_trips() {
    let config = ResumeStoreConfig::default().with_remote_prefix(PrefixLengths::new(24, 64));
    let store = store(config.clone());
    store.insert(
        ip(SERVER),
        ip("198.51.100.7"),
        saved(30_000_000, 650),
        at(0),
    );
    store.insert(
        ip("2001:db8::1"),
        ip("2001:db8:1:2::5"),
        saved(123_456, 41),
        at(3) + Duration::from_millis(250),
    );
    store.insert(ip(SERVER), ip("203.0.113.9"), saved(999, 1), at(1));
    let dir = temp_dir("round-trip");
    let path = dir.join("store.txt");
    assert_eq!(store.save(&path, at(10)).expect("saved"), 3);
    // Saved again over the existing file: replaced whole, and no temporary file left behind.
    store.insert(ip(SERVER), ip("203.0.114.10"), saved(5_000, 20), at(2));
    assert_eq!(store.save(&path, at(10)).expect("saved"), 4);
    let names: Vec<_> = std::fs::read_dir(&dir)
        .expect("listed")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("store.txt")]);
    let text = std::fs::read_to_string(&path).expect("written");
    assert_eq!(
        text,
        "satquic-resume-store 1\n\
         # local remote observed_unix_ms saved_cwnd_bytes saved_rtt_us\n\
         192.0.2.1/32 198.51.100.0/24 1767225600000 30000000 650000\n\
         192.0.2.1/32 203.0.113.0/24 1767225601000 999 1000\n\
         192.0.2.1/32 203.0.114.0/24 1767225602000 5000 20000\n\
         2001:db8::1/128 2001:db8:1:2::/64 1767225603250 123456 41000\n"
    );

    let loaded = self::store(config);
    let report = loaded.load(&path, at(11)).expect("read");
    assert_eq!(
        report,
        LoadReport {
            loaded: 4,
            ignored: vec![]
        }
    );
    assert_eq!(loaded.to_text(at(11)), store.to_text(at(11)));
    let v6 = loaded
        .take(ip("2001:db8::1"), ip("2001:db8:1:2::77"), at(12))
        .expect("loaded");
    assert_eq!(v6.saved(), saved(123_456, 41));
    assert_eq!(v6.observed_at(), at(3) + Duration::from_millis(250));
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

#[test]
fn a_missing_file_is_an_empty_store_and_an_unreadable_one_an_error() {
    let dir = temp_dir("missing");
    let store = store(ResumeStoreConfig::default());
    let report = store
        .load(&dir.join("none.txt"), at(0))
        .expect("no file: empty");
    assert_eq!(report, LoadReport::default());
    // A directory cannot be read as a file.
    let error = store.load(&dir, at(0)).unwrap_err().to_string();
    assert!(error.starts_with(&dir.display().to_string()), "{error}");
    // Nor written to a directory that does not exist.
    assert!(store.save(&dir.join("no/such/dir"), at(0)).is_err());
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

/// A file with these entry lines after the header.
fn file_with(lines: &[&str]) -> String {
    let mut text = format!("{}\n", file::HEADER);
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text
}

#[test]
fn a_corrupt_file_is_ignored_with_a_warning() {
    let store = store(ResumeStoreConfig::default());
    for (bytes, expected) in [
        (&b"\xff\xfe\x00garbage"[..], "not UTF-8"),
        (&b""[..], "empty file"),
        (
            &b"satquic-resume-store 2\n192.0.2.1/32 198.51.100.7/32 1767225600000 5000 1000\n"[..],
            "is not \"satquic-resume-store 1\"",
        ),
        (&b"{\"entries\": []}"[..], "first line"),
    ] {
        let (report, events) = logged(|| store.load_bytes(bytes, "test.txt", at(0)));
        assert_eq!(report.loaded, 0);
        assert_eq!(report.ignored.len(), 1);
        assert_eq!(report.ignored[0].line, 0);
        let warned = warnings(&events);
        assert_eq!(warned.len(), 1, "{events:?}");
        assert!(
            warned[0].contains("test.txt") && warned[0].contains("whole file is ignored"),
            "{warned:?}"
        );
        assert!(
            warned[0].contains(expected),
            "{warned:?} lacks {expected:?}"
        );
    }
    assert!(store.is_empty());
}

#[test]
fn a_corrupt_line_is_ignored_and_the_rest_of_the_file_is_read() {
    let store = store(ResumeStoreConfig::default());
    let good = "192.0.2.1/32 198.51.100.7/32 1767225600000 5000000 650000";
    let bad = [
        (
            "192.0.2.1/32 198.51.100.8/32 1767225600000 5000000",
            "4 fields",
        ),
        (
            "192.0.2.1/32  198.51.100.8/32 1767225600000 5000000 650000",
            "6 fields",
        ),
        (
            "192.0.2.1 198.51.100.8/32 1767225600000 5000000 650000",
            "local:",
        ),
        (
            "192.0.2.1/32 198.51.100.8/33 1767225600000 5000000 650000",
            "remote:",
        ),
        (
            "192.0.2.1/32 198.51.100.8/32 +1767225600000 5000000 650000",
            "observed_unix_ms",
        ),
        (
            "192.0.2.1/32 198.51.100.8/32 1767225600000 0 650000",
            "saved_cwnd_bytes",
        ),
        (
            "192.0.2.1/32 198.51.100.8/32 1767225600000 -5 650000",
            "saved_cwnd_bytes",
        ),
        (
            "192.0.2.1/32 198.51.100.8/32 1767225600000 5000000 0",
            "saved_rtt_us",
        ),
        (
            "192.0.2.1/32 198.51.100.8/32 1767225600000 5000000 99999999999",
            "saved_rtt_us",
        ),
        (
            "::ffff:192.0.2.1/128 198.51.100.8/32 1767225600000 5000000 650000",
            "local:",
        ),
        (
            "192.0.2.1/32 198.51.100.8/32 99999999999999999999 5000000 650000",
            "observed_unix_ms",
        ),
    ];
    for (line, field) in bad {
        let text = file_with(&[line, good]);
        let (report, events) = logged(|| store.load_bytes(text.as_bytes(), "s.txt", at(10)));
        assert_eq!(report.loaded, 1, "{line}");
        assert_eq!(report.ignored.len(), 1, "{line}");
        assert_eq!(report.ignored[0].line, 2, "{line}");
        assert!(
            matches!(&report.ignored[0].reason, IgnoredReason::Corrupt(what) if what.contains(field)),
            "{line}: {:?}",
            report.ignored[0]
        );
        let warned = warnings(&events);
        assert_eq!(warned.len(), 1, "{events:?}");
        assert!(warned[0].contains("s.txt line 2: corrupt"), "{warned:?}");
        assert!(store.take(ip(SERVER), ip(PEER), at(11)).is_some(), "{line}");
        assert!(store.is_empty(), "{line}: the bad line added nothing");
    }
}

#[test]
fn an_expired_entry_in_the_file_is_ignored_with_a_warning() {
    let store = store(ResumeStoreConfig::default().with_lifetime(Duration::from_secs(600)));
    let text = file_with(&[
        // Observed at at(0): 700 s before the load.
        "192.0.2.1/32 198.51.100.7/32 1767225600000 5000000 650000",
        // 200 s before: fresh.
        "192.0.2.1/32 198.51.100.8/32 1767225800000 5000000 650000",
        // An hour after the load: cannot be dated.
        "192.0.2.1/32 198.51.100.9/32 1767233500000 5000000 650000",
    ]);
    let (report, events) = logged(|| store.load_bytes(text.as_bytes(), "s.txt", at(700)));
    assert_eq!(report.loaded, 1);
    assert_eq!(
        report.ignored,
        vec![
            Ignored {
                line: 2,
                reason: IgnoredReason::Expired {
                    age: Duration::from_secs(700)
                }
            },
            Ignored {
                line: 4,
                reason: IgnoredReason::Future
            },
        ]
    );
    let warned = warnings(&events);
    assert_eq!(warned.len(), 2, "{events:?}");
    assert!(warned[0].contains("line 2: expired"), "{warned:?}");
    assert!(
        warned[1].contains("line 4: observed in the future"),
        "{warned:?}"
    );
    assert_eq!(store.take(ip(SERVER), ip(PEER), at(701)), None);
    assert!(
        store
            .take(ip(SERVER), ip("198.51.100.8"), at(701))
            .is_some()
    );
}

#[test]
fn another_paths_entry_is_never_handed_out() {
    // The file holds path B only; the connection is on path A.
    let store = store(ResumeStoreConfig::default());
    let text = file_with(&["192.0.2.1/32 198.51.100.7/32 1767225600000 5000000 650000"]);
    let report = store.load_bytes(text.as_bytes(), "s.txt", at(1));
    assert_eq!(report.loaded, 1);
    let (taken, events) = logged(|| store.take(ip(SERVER), ip("203.0.113.5"), at(2)));
    assert_eq!(taken, None);
    assert!(
        events
            .iter()
            .any(|(level, text)| *level == Level::DEBUG && text.contains("203.0.113.5/32")),
        "{events:?}"
    );
    // Nor from another local address (the sending interface is part of the endpoint).
    assert_eq!(store.take(ip("192.0.2.2"), ip(PEER), at(2)), None);
    // B's entry is untouched.
    assert!(store.take(ip(SERVER), ip(PEER), at(2)).is_some());
}

#[test]
fn entries_keyed_by_another_prefix_are_ignored_with_a_warning() {
    // Written by a store keying peers by /32; read by one keying them by /24: each entry
    // names one host, not the /24 this store would hand it to.
    let store = store(ResumeStoreConfig::default().with_remote_prefix(PrefixLengths::new(24, 64)));
    let text = file_with(&[
        "192.0.2.1/32 198.51.100.7/32 1767225600000 5000000 650000",
        "192.0.2.1/32 198.51.100.0/24 1767225600000 6000000 650000",
    ]);
    let (report, events) = logged(|| store.load_bytes(text.as_bytes(), "s.txt", at(1)));
    assert_eq!(report.loaded, 1);
    assert_eq!(report.ignored.len(), 1);
    assert!(
        matches!(&report.ignored[0].reason, IgnoredReason::OtherKeying(what) if what.contains("/32, this store by /24")),
        "{:?}",
        report.ignored
    );
    let warned = warnings(&events);
    assert_eq!(warned.len(), 1, "{events:?}");
    assert!(
        warned[0].contains("line 2: another path's entry"),
        "{warned:?}"
    );
    let taken = store
        .take(ip(SERVER), ip("198.51.100.99"), at(2))
        .expect("the /24 one");
    assert_eq!(taken.saved().saved_cwnd_bytes, 6_000_000);
}

#[test]
fn a_path_twice_in_the_file_keeps_the_newest() {
    let store = store(ResumeStoreConfig::default());
    let text = file_with(&[
        "192.0.2.1/32 198.51.100.7/32 1767225605000 2000000 650000",
        "192.0.2.1/32 198.51.100.7/32 1767225600000 1000000 650000",
        "192.0.2.1/32 198.51.100.7/32 1767225610000 3000000 650000",
    ]);
    let report = store.load_bytes(text.as_bytes(), "s.txt", at(20));
    assert_eq!(report.loaded, 1);
    let lines: Vec<usize> = report.ignored.iter().map(|i| i.line).collect();
    assert_eq!(lines, vec![3, 2]);
    assert!(
        report
            .ignored
            .iter()
            .all(|i| i.reason == IgnoredReason::Superseded)
    );
    let taken = store.take(ip(SERVER), ip(PEER), at(21)).expect("loaded");
    assert_eq!(taken.saved().saved_cwnd_bytes, 3_000_000);
}

#[test]
fn a_file_larger_than_the_store_can_hold_is_refused_unread() {
    let dir = temp_dir("large");
    let path = dir.join("big.txt");
    let store = store(ResumeStoreConfig::default().with_capacity(2));
    let mut text = file_with(&[]);
    text.push_str(&"#".repeat(10_000));
    std::fs::write(&path, text).expect("written");
    let report = store.load(&path, at(0)).expect("read");
    assert_eq!(report.loaded, 0);
    assert_eq!(report.ignored[0].line, 0);
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

// ---- properties ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever the bytes, loading neither panics nor breaks the store's bounds.
    #[test]
    fn loading_any_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let store = store(ResumeStoreConfig::default().with_capacity(4));
        let report = store.load_bytes(&bytes, "random", at(0));
        prop_assert!(report.loaded <= 4);
        prop_assert!(store.len() <= 4);
        assert_consistent(&store);
    }

    /// Arbitrary text after a valid header (which reaches the line parser) neither panics
    /// nor loads anything the file did not say.
    #[test]
    fn loading_any_lines_never_panics(body in "[0-9a-f:./ #+\\-\n]{0,300}") {
        let store = store(ResumeStoreConfig::default().with_capacity(4));
        let text = format!("{}\n{body}", file::HEADER);
        let report = store.load_bytes(text.as_bytes(), "random", at(0));
        prop_assert!(store.len() <= 4);
        prop_assert!(report.loaded <= body.lines().count());
    }

    /// What a store writes, a store with the same settings reads back unchanged.
    #[test]
    fn saved_entries_read_back(
        entries in proptest::collection::vec(
            (any::<[u8; 4]>(), 1..=hybla::MAX_WINDOW_BYTES, 1u64..60_000_000, 0u64..600_000),
            0..20,
        ),
    ) {
        let config = ResumeStoreConfig::default().with_remote_prefix(PrefixLengths::new(20, 64));
        let written = store(config.clone());
        for (peer, cwnd, rtt_us, observed_ms) in entries {
            written.insert(
                ip(SERVER),
                IpAddr::from(peer),
                SavedPath { saved_cwnd_bytes: cwnd, saved_rtt: Duration::from_micros(rtt_us) },
                at(0) + Duration::from_millis(observed_ms),
            );
        }
        let text = written.to_text(at(600));
        let read = store(config);
        let report = read.load_bytes(text.as_bytes(), "written", at(600));
        prop_assert!(report.ignored.is_empty(), "{:?}", report.ignored);
        prop_assert_eq!(read.to_text(at(600)), text);
    }
}
