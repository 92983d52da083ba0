//! Bad scenario input, found systematically: proptest mutates the built-in scenarios
//! (`scenario::builtin::SCENARIOS`) and `--set` overrides, and checks that loading never panics,
//! that every error names what is wrong, and that nothing nonsensical is accepted silently.
//!
//! What "names the field" means, per kind of error:
//! - **syntax** (truncated or garbled text): the TOML parser's message with `line N, column M`,
//!   N within the text given;
//! - **override** that cannot be applied (`key=value` malformed, index out of range, a value
//!   where a table is needed): the message quotes the assignment, so the key is in it;
//! - **invalid field** after one mutation at key path K (value changed, type changed, key
//!   deleted, unknown key added, or an override of K): the error's field path is K or lies
//!   under K, or lies above K and the message names K's next key (`unknown field \`rat\``,
//!   `missing field \`rate\``), or — a check across fields, such as a sample interval longer
//!   than the run — the message names K's own key;
//! - **invalid field** after a truncation: the field path exists in the original file.
//!
//! A load that succeeds must give a sane scenario (`assert_sane`): finite probabilities in
//! range, positive rates and windows, starts before the end of the run, durations within
//! [`MAX_DURATION`], buffers within 1 GiB, at most 1000 flows, names that are one path
//! component, windows of two full-size packets, and so on.
//!
//! Case counts are per property (`CASES_*` below); the whole file runs in well under a minute in
//! a debug build. A panic inside a property is a failure (proptest catches it, shrinks the
//! input and reports it; `a_panic_is_a_failure` checks that), and failing inputs are kept in
//! `proptest-regressions/bad_input.txt` and replayed first.

use std::time::Duration;

use netsim::{Aqm, JitterDistribution, LinkConfig, LossModel, QueueLimit};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use scenario::apps::AppKind;
use scenario::builtin::SCENARIOS;
use scenario::controllers::{ControllerSpec, HyblaGrowth, HyblaSsthresh};
use scenario::{Scenario, ScenarioError};
use sched::SchedulerSpec;

const ORIGIN: &str = "mutated.toml";

const CASES_FILE: u32 = 1000;
const CASES_SET: u32 = 1000;
const CASES_TRUNCATE: u32 = 500;
const CASES_UNITS: u32 = 1000;

use scenario::units::MAX_DURATION;

fn config(cases: u32) -> Config {
    Config {
        // PROPTEST_CASES overrides the counts for a longer hunt.
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(cases),
        // Failing inputs go to proptest-regressions/bad_input.txt and are replayed first.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/bad_input.txt",
        ))),
        ..Config::default()
    }
}

// ---- key paths ---------------------------------------------------------------------------------

/// One step into a TOML tree.
#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Every path into `value` (not the root itself), depth first.
fn paths(value: &toml::Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match value {
        toml::Value::Table(table) => {
            for (k, v) in table {
                at.push(Seg::Key(k.clone()));
                out.push(at.clone());
                paths(v, at, out);
                at.pop();
            }
        }
        toml::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                at.push(Seg::Index(i));
                out.push(at.clone());
                paths(v, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn all_paths(table: &toml::Table) -> Vec<Vec<Seg>> {
    let mut out = Vec::new();
    paths(
        &toml::Value::Table(table.clone()),
        &mut Vec::new(),
        &mut out,
    );
    out
}

/// The keys of a path, indices left out: `flow[0].cc` and `flow.cc` both give `[flow, cc]`.
fn keys(path: &[Seg]) -> Vec<String> {
    path.iter()
        .filter_map(|s| match s {
            Seg::Key(k) => Some(k.clone()),
            Seg::Index(_) => None,
        })
        .collect()
}

/// An error's field path (`flow[0].app[1].rate`, `path.forward.schedule[0].at`) as keys.
fn field_keys(field: &str) -> Vec<String> {
    field
        .split('.')
        .filter(|s| !s.is_empty())
        .map(|s| s.split('[').next().unwrap_or(s).to_owned())
        .filter(|s| !s.is_empty() && s.parse::<usize>().is_err())
        .collect()
}

/// A path as an override key: `flow.0.cc`, or with `all_elements` `flow.cc`.
fn override_key(path: &[Seg], all_elements: bool) -> String {
    path.iter()
        .filter_map(|s| match s {
            Seg::Key(k) => Some(k.clone()),
            Seg::Index(i) if !all_elements => Some(i.to_string()),
            Seg::Index(_) => None,
        })
        .collect::<Vec<_>>()
        .join(".")
}

fn get_mut<'a>(root: &'a mut toml::Value, path: &[Seg]) -> Option<&'a mut toml::Value> {
    let mut node = root;
    for seg in path {
        node = match (seg, node) {
            (Seg::Key(k), toml::Value::Table(t)) => t.get_mut(k)?,
            (Seg::Index(i), toml::Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(node)
}

/// Whether `text` contains `word` with no identifier character on either side.
fn names(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

// ---- outcomes ----------------------------------------------------------------------------------

/// How the cases of one property ended, printed at its end (`--nocapture`) so a run shows that
/// the mutations reach every kind of error and some still load.
#[derive(Default)]
struct Tally(std::sync::Mutex<std::collections::BTreeMap<&'static str, usize>>);

impl Tally {
    fn count<T>(&self, result: &Result<T, ScenarioError>) {
        let kind = match result {
            Ok(_) => "loaded",
            Err(ScenarioError::Syntax { .. }) => "syntax error",
            Err(ScenarioError::Override { .. }) => "override error",
            Err(ScenarioError::Invalid { .. }) => "invalid field",
            Err(ScenarioError::NotUtf8 { .. }) => "not UTF-8",
            Err(ScenarioError::Read { .. }) => "read error",
        };
        *self.0.lock().unwrap().entry(kind).or_default() += 1;
    }

    fn print(&self, property: &str) {
        eprintln!("{property}: {:?}", self.0.lock().unwrap());
    }
}

// ---- the oracle --------------------------------------------------------------------------------

/// Checks an error against "names the field" for a mutation at `mutated` (key paths, indices
/// left out; several for several overrides). Returns a description of the failure.
fn check_names_mutated(err: &ScenarioError, mutated: &[Vec<String>]) -> Result<(), String> {
    let message = err.to_string();
    if !message.starts_with(ORIGIN) {
        return Err(format!("does not start with the file name: {message}"));
    }
    match err {
        ScenarioError::Syntax { .. } => Err(format!("syntax error from a valid tree: {message}")),
        ScenarioError::Read { .. } | ScenarioError::NotUtf8 { .. } => {
            Err(format!("read error: {message}"))
        }
        // Display quotes the assignment, so the key is in it; check that anyway.
        ScenarioError::Override { assignment, .. } => {
            let key = assignment.split('=').next().unwrap_or("").trim();
            if message.contains(key) {
                Ok(())
            } else {
                Err(format!("override error without its key {key:?}: {message}"))
            }
        }
        ScenarioError::Invalid { field, .. } => {
            let at = field_keys(field);
            let ok = mutated.iter().any(|k| {
                // At or under the mutated node.
                at.starts_with(k)
                    // Above it, naming the next key on the way down.
                    || (k.starts_with(&at) && names(&message, &k[at.len()]))
                    // Elsewhere (a check across fields), naming the mutated key.
                    || k.last().is_some_and(|leaf| names(&message, leaf))
            });
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "error does not name the mutated field {mutated:?}: {message}"
                ))
            }
        }
    }
}

/// A syntax error must give the line and column, within the text.
fn check_syntax_position(message: &str, text: &str) -> Result<(), String> {
    let Some(rest) = message.split("line ").nth(1) else {
        return Err(format!("syntax error without a line: {message}"));
    };
    let line: usize = rest
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("syntax error without a line number: {message}"))?;
    if !message.contains("column ") {
        return Err(format!("syntax error without a column: {message}"));
    }
    let lines = text.lines().count().max(1);
    if line == 0 || line > lines + 1 {
        return Err(format!(
            "line {line} outside the text's {lines} lines: {message}"
        ));
    }
    Ok(())
}

fn sane_probability(p: f64) -> bool {
    p.is_finite() && (0.0..=1.0).contains(&p)
}

fn sane_loss(loss: &LossModel) -> bool {
    match *loss {
        LossModel::None => true,
        LossModel::Bernoulli { probability } => sane_probability(probability),
        LossModel::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good,
            loss_in_bad,
        } => [p_good_to_bad, p_bad_to_good, loss_in_good, loss_in_bad]
            .into_iter()
            .all(sane_probability),
    }
}

fn check_link(s: &Scenario, link: &LinkConfig, at: &str) -> Result<(), String> {
    let run = s.duration;
    let fail = |what: &str| Err(format!("{at}: accepted {what}: {link:?}"));
    if link.rate_bps == 0 {
        return fail("a zero rate");
    }
    if link.delay > MAX_DURATION {
        return fail("a delay beyond MAX_DURATION");
    }
    if !sane_loss(&link.loss) {
        return fail("an impossible loss probability");
    }
    match link.queue {
        QueueLimit::BdpMultiple(m) if !(m.is_finite() && m > 0.0) => return fail("a BDP multiple"),
        QueueLimit::Bytes(0) | QueueLimit::Packets(0) | QueueLimit::Time(Duration::ZERO) => {
            return fail("an empty queue");
        }
        _ => {}
    }
    let base_rtt = s.forward.delay + s.return_link.delay;
    let mtu = u64::from(s.mtu_bytes);
    let capacity_bytes = match link.queue {
        QueueLimit::Packets(p) => p.saturating_mul(mtu),
        queue => queue
            .limit_bytes(link.rate_bps, base_rtt)
            .unwrap_or(u64::MAX),
    };
    if capacity_bytes > scenario::MAX_QUEUE_BYTES {
        return fail("a buffer larger than 1 GiB");
    }
    match link.jitter.distribution {
        JitterDistribution::Exponential { mean } if mean.is_zero() => {
            return fail("an exponential jitter of mean zero");
        }
        JitterDistribution::Uniform { min, max } if min >= max => {
            return fail("a uniform jitter without a range");
        }
        JitterDistribution::Normal { stddev, .. } if stddev.is_zero() => {
            return fail("a normal jitter without a deviation");
        }
        _ => {}
    }
    if let Aqm::Red(red) = link.aqm {
        let limit_packets = match link.queue {
            QueueLimit::Packets(p) => p,
            _ => capacity_bytes / mtu,
        };
        if red.min_threshold_packets >= limit_packets as f64 {
            return fail("a RED min threshold at or above the queue limit");
        }
        let thresholds = [red.min_threshold_packets, red.max_threshold_packets];
        if !(thresholds.iter().all(|t| t.is_finite())
            && red.min_threshold_packets >= 0.0
            && red.max_threshold_packets > red.min_threshold_packets
            && sane_probability(red.max_probability)
            && red.weight.is_finite()
            && red.weight > 0.0
            && red.weight <= 1.0)
        {
            return fail("RED parameters out of range");
        }
    }
    if link.schedule.windows(2).any(|w| w[1].at <= w[0].at) {
        return fail("schedule steps not in strictly increasing time order");
    }
    for step in &link.schedule {
        if step.at >= run
            || step.rate_bps == Some(0)
            || step.delay.is_some_and(|d| d > MAX_DURATION)
            || !step.loss.as_ref().is_none_or(sane_loss)
        {
            return fail("a schedule step");
        }
    }
    Ok(())
}

/// What a successfully loaded scenario must satisfy, whatever the input was.
fn assert_sane(s: &Scenario) -> Result<(), String> {
    let fail = |what: String| Err(format!("accepted {what}"));
    let run = s.duration;
    if run.is_zero() || run > MAX_DURATION {
        return fail(format!("duration {run:?}"));
    }
    if s.sample_interval < scenario::MIN_SAMPLE_INTERVAL || s.sample_interval > run {
        return fail(format!("sample_interval {:?}", s.sample_interval));
    }
    let rows = (run.as_nanos() / s.sample_interval.as_nanos()) as u64 * s.flows.len() as u64;
    if rows > scenario::MAX_TIME_SERIES_ROWS || s.flows.len() > scenario::MAX_FLOWS {
        return fail(format!("{} flows, {rows} time-series rows", s.flows.len()));
    }
    // Names become file and directory names.
    let path_component = |name: &str| {
        !(name.trim().is_empty()
            || name.starts_with('.')
            || name.contains(['/', '\\'])
            || name.chars().any(char::is_control))
    };
    if !path_component(&s.name) || s.name.len() > scenario::MAX_NAME_BYTES {
        return fail(format!("scenario name {:?}", s.name));
    }
    if !(scenario::MIN_MTU_BYTES..=scenario::MAX_MTU_BYTES).contains(&s.mtu_bytes) {
        return fail(format!("mtu {}", s.mtu_bytes));
    }
    if s.time_to_bytes.contains(&0) {
        return fail("a zero time_to_bytes".into());
    }
    check_link(s, &s.forward, "path.forward")?;
    check_link(s, &s.return_link, "path.return")?;
    if s.flows.is_empty() {
        return fail("no flows".into());
    }
    let mut names = std::collections::BTreeSet::new();
    for f in &s.flows {
        let at = &f.name;
        if !path_component(&f.name) || !names.insert(f.name.clone()) {
            return fail(format!("flow name {at:?}"));
        }
        if f.start >= run || f.access_delay > MAX_DURATION {
            return fail(format!("flow {at}: start {:?}", f.start));
        }
        if f.stop.is_some_and(|stop| stop <= f.start) {
            return fail(format!("flow {at}: stop {:?}", f.stop));
        }
        if f.apps.is_empty() {
            return fail(format!("flow {at} without applications"));
        }
        let t = &f.transport;
        if [
            t.stream_receive_window_bytes,
            t.receive_window_bytes,
            t.send_window_bytes,
        ]
        .contains(&Some(0))
            || t.initial_rtt
                .is_some_and(|d| d.is_zero() || d > MAX_DURATION)
            || t.max_ack_delay
                .is_some_and(|d| d >= Duration::from_millis(1 << 14))
        {
            return fail(format!("flow {at}: transport {t:?}"));
        }
        let two_packets = 2 * u64::from(s.mtu_bytes - 28);
        let (window, factor) = match &f.controller {
            ControllerSpec::NewReno {
                initial_window,
                loss_reduction_factor,
            } => (*initial_window, *loss_reduction_factor),
            ControllerSpec::Cubic { initial_window } | ControllerSpec::Bbr { initial_window } => {
                (*initial_window, None)
            }
            ControllerSpec::Hybla(h) => {
                if h.rtt0.is_some_and(|d| d.is_zero() || d > MAX_DURATION)
                    || h.base_rtt_window
                        .is_some_and(|d| d.is_zero() || d > MAX_DURATION)
                    || matches!(h.initial_ssthresh, Some(HyblaSsthresh::Segments(g)) if !(g.is_finite() && g >= 2.0))
                    || matches!(h.initial_ssthresh, Some(HyblaSsthresh::Bytes(b)) if b < two_packets)
                    || (h.growth == Some(HyblaGrowth::Seed)
                        && (h.competing.is_some() || h.classifier.is_some()))
                {
                    return fail(format!("flow {at}: hybla {h:?}"));
                }
                (h.initial_window, h.loss_reduction_factor)
            }
        };
        if window.is_some_and(|w| w < two_packets)
            || factor.is_some_and(|b| !(b.is_finite() && b > 0.0 && b <= 1.0))
        {
            return fail(format!("flow {at}: controller {:?}", f.controller));
        }
        let scheduled = f
            .apps
            .iter()
            .any(|app| matches!(app.kind, AppKind::Media(_) | AppKind::Bulk(_)));
        if !scheduled && f.scheduler != SchedulerSpec::default() {
            return fail(format!("flow {at}: a scheduler without media or bulk"));
        }
        for app in &f.apps {
            match &app.kind {
                AppKind::Perf(p) => {
                    if p.download == Some(scenario::Download::Bytes(0)) || p.upload_bytes == Some(0)
                    {
                        return fail(format!("flow {at}: perf {p:?}"));
                    }
                }
                AppKind::Media(m) => {
                    if m.bitrate_bps == 0
                        || !(1..=240).contains(&m.video.fps)
                        || m.video.keyframe_interval == 0
                        || !(m.video.keyframe_ratio.is_finite()
                            && (1.0..=100.0).contains(&m.video.keyframe_ratio))
                        || !(m.video.jitter.is_finite() && (0.0..1.0).contains(&m.video.jitter))
                        || m.deadline.is_some_and(|d| d.is_zero() || d > MAX_DURATION)
                    {
                        return fail(format!("flow {at}: media {m:?}"));
                    }
                }
                AppKind::Bulk(b) => {
                    if b.rate_bps == Some(0) || b.start >= run {
                        return fail(format!("flow {at}: bulk {b:?}"));
                    }
                }
            }
        }
    }
    Ok(())
}

// ---- generators --------------------------------------------------------------------------------

/// Values for unit strings: numbers and units that are wrong, odd or out of range, next to a
/// few valid ones (so some mutations load, and the sanity check sees them).
fn unit_text() -> impl Strategy<Value = String> {
    let number = prop::sample::select(vec![
        "",
        "0",
        "-0",
        "1",
        "1.5",
        ".5",
        "-5",
        "+3",
        "1e400",
        "1e3",
        "NaN",
        "nan",
        "inf",
        "-inf",
        "99999999999999999999",
        "999999999999999999999999999",
        "0.0000000000000000000000001",
        "1.2.3",
        ".",
        "１０",
        "٣",
        "18446744073709551616",
        "5000000000000",
    ]);
    let unit = prop::sample::select(vec![
        "",
        "ms",
        "s",
        "h",
        "min",
        "us",
        "µs",
        "ns",
        "m",
        "Mbit",
        "Mbps",
        "Mbit/s",
        "MB/s",
        "bit",
        "Tbit",
        "MB",
        "MiB",
        "B",
        "KB",
        "%",
        "bdp",
        "pkt",
        "packets",
        "seg",
        " ms",
        "ms ",
        "xyz",
        "\u{0}",
        "Mbit\u{301}",
        "😀",
    ]);
    prop_oneof![
        8 => (number, unit).prop_map(|(n, u)| format!("{n}{u}")),
        1 => prop::sample::select(vec![
            "", " ", "auto", "unlimited", "none", "estimate", "32seg", "NaNseg", "infseg",
            "-5seg", "1e400seg", "10Mbps", "-5ms", "1e400bit", "NaN", "drop-tail", "red",
            "gilbert-elliott", "perf", "media", "bulk", "hybla", "balancer", "upload",
        ]).prop_map(str::to_owned),
        1 => "\\PC{0,12}",
    ]
}

/// Any TOML value, biased to type changes and edge cases.
fn toml_value() -> impl Strategy<Value = toml::Value> {
    let leaf = prop_oneof![
        4 => unit_text().prop_map(toml::Value::String),
        1 => prop::sample::select(vec![0i64, 1, -1, 5, 30, 1227, 65536, i64::MAX, i64::MIN])
            .prop_map(toml::Value::Integer),
        1 => prop::sample::select(vec![
            0.0, -0.0, 0.5, 1.0, 1.5, -5.0, 1e308, f64::NAN, f64::INFINITY, f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
        ])
        .prop_map(toml::Value::Float),
        1 => any::<bool>().prop_map(toml::Value::Boolean),
        1 => Just(toml::Value::Datetime("1979-05-27T07:32:00Z".parse().unwrap())),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(toml::Value::Array),
            prop::collection::btree_map(key_name(), inner, 0..3)
                .prop_map(|m| toml::Value::Table(m.into_iter().collect())),
        ]
    })
}

/// Key names: near misses of real keys, real keys in the wrong place, and odd strings.
fn key_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "rat", "Rate", "rate", "delay", "delay_ms", "bandwidth", "cwnd", "cc", "cc_params",
            "rtt0", "queue", "loss", "kind", "name", "download", "upload", "flow", "path",
            "forward", "return", "schedule", "app", "at", "p", "r", "min", "max", "0", "7",
            "-1", "x y", "ü", "duration", "seed", "transport", "scheduler", "count",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z_]{1,10}",
    ]
}

/// One change to a scenario's TOML tree.
#[derive(Debug, Clone)]
enum Mutation {
    /// Replace the value at a path (type change, wrong unit, edge value).
    Set(Index, toml::Value),
    /// Delete the key or array element at a path.
    Delete(Index),
    /// Add a key to a table (or the root) at a path.
    Add(Index, String, toml::Value),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<Index>(), toml_value()).prop_map(|(i, v)| Mutation::Set(i, v)),
        2 => any::<Index>().prop_map(Mutation::Delete),
        2 => (any::<Index>(), key_name(), toml_value()).prop_map(|(i, k, v)| Mutation::Add(i, k, v)),
    ]
}

/// Applies `m` to `tree`; returns the key path it touched (indices left out).
fn apply(tree: &mut toml::Value, m: &Mutation) -> Vec<String> {
    let toml::Value::Table(table) = &*tree else {
        unreachable!("the root is a table")
    };
    let paths = all_paths(table);
    match m {
        Mutation::Set(i, value) => {
            let path = i.get(&paths).clone();
            *get_mut(tree, &path).expect("path exists") = value.clone();
            keys(&path)
        }
        Mutation::Delete(i) => {
            let path = i.get(&paths).clone();
            let (last, parent) = path.split_last().expect("not the root");
            match (get_mut(tree, parent).expect("parent exists"), last) {
                (toml::Value::Table(t), Seg::Key(k)) => {
                    t.remove(k);
                }
                (toml::Value::Array(a), Seg::Index(i)) => {
                    a.remove(*i);
                }
                _ => unreachable!("paths match their parents"),
            }
            keys(&path)
        }
        Mutation::Add(i, key, value) => {
            // Into the table at the path, or the root when the path is no table.
            let path = i.get(&paths).clone();
            let mut at = match get_mut(tree, &path) {
                Some(toml::Value::Table(_)) => path,
                _ => Vec::new(),
            };
            if let Some(toml::Value::Table(t)) = get_mut(tree, &at) {
                t.insert(key.clone(), value.clone());
            }
            at.push(Seg::Key(key.clone()));
            keys(&at)
        }
    }
}

/// An override `key=value`: an existing path (one element or all of an array), maybe with an
/// unknown key after it or an index out of range, and a value as typed on a command line.
fn assignment(paths: Vec<Vec<Seg>>) -> impl Strategy<Value = (String, Vec<String>)> {
    let value = prop_oneof![
        4 => unit_text(),
        1 => prop::sample::select(vec![
            "{ a = 1 }", "{}", "[1, \"x\"]", "[]", "true", "1.5", "-3", "0", "nan", "inf",
            "\"quoted\"", "=", "a=b", "1979-05-27", "{ model = \"bernoulli\" }",
            "{ min = nan }", "[{ at = \"1s\" }]", "18446744073709551616",
        ])
        .prop_map(str::to_owned),
    ];
    (
        prop::sample::select(paths),
        any::<bool>(),
        prop_oneof![3 => Just(None), 1 => key_name().prop_map(Some), 1 => Just(Some("9".to_owned()))],
        value,
    )
        .prop_map(|(path, all, extra, value)| {
            let mut key = override_key(&path, all);
            let mut touched = keys(&path);
            if let Some(extra) = extra {
                key = format!("{key}.{extra}");
                if extra.parse::<usize>().is_err() {
                    touched.push(extra);
                }
            }
            (format!("{key}={value}"), touched)
        })
}

fn load(text: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    Scenario::from_toml_str(text, ORIGIN, overrides)
}

// ---- properties --------------------------------------------------------------------------------

/// Mutated files: one change to the tree of a built-in scenario (a value replaced by another
/// type, a wrong unit or an edge value; a key or element deleted; an unknown or misplaced key
/// added), written back as TOML.
#[test]
fn mutated_files_load_or_name_the_field() {
    let tally = Tally::default();
    let mut runner = TestRunner::new(config(CASES_FILE));
    let strategy = (0..SCENARIOS.len(), mutation());
    runner
        .run(&strategy, |(which, m)| {
            let (name, text) = SCENARIOS[which];
            let mut tree = toml::Value::Table(text.parse::<toml::Table>().unwrap());
            let touched = apply(&mut tree, &m);
            let mutated = toml::to_string(&tree).unwrap();
            let result = load(&mutated, &[]);
            tally.count(&result);
            match result {
                Ok(s) => assert_sane(&s),
                Err(e) => check_names_mutated(&e, &[touched]),
            }
            .map_err(|problem| TestCaseError::fail(format!("{name}: {m:?}: {problem}")))
        })
        .unwrap();
    tally.print("mutated_files_load_or_name_the_field");
}

/// `--set` overrides: one to three `key=value` on a built-in scenario.
#[test]
fn overrides_load_or_name_the_key() {
    let tally = Tally::default();
    let mut runner = TestRunner::new(config(CASES_SET));
    let strategy = (0..SCENARIOS.len()).prop_flat_map(|which| {
        let paths = all_paths(&SCENARIOS[which].1.parse::<toml::Table>().unwrap());
        (Just(which), prop::collection::vec(assignment(paths), 1..=3))
    });
    runner
        .run(&strategy, |(which, assignments)| {
            let (name, text) = SCENARIOS[which];
            let (sets, touched): (Vec<String>, Vec<Vec<String>>) = assignments.into_iter().unzip();
            let result = load(text, &sets);
            tally.count(&result);
            match result {
                Ok(s) => assert_sane(&s),
                Err(e) => check_names_mutated(&e, &touched),
            }
            .map_err(|problem| TestCaseError::fail(format!("{name}: {sets:?}: {problem}")))
        })
        .unwrap();
    tally.print("overrides_load_or_name_the_key");
}

/// Truncated files: a built-in scenario cut at any character.
#[test]
fn truncated_files_give_a_position_or_a_field() {
    let tally = Tally::default();
    let mut runner = TestRunner::new(config(CASES_TRUNCATE));
    let strategy = (0..SCENARIOS.len(), any::<Index>());
    runner
        .run(&strategy, |(which, cut)| {
            let (name, text) = SCENARIOS[which];
            let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
            let end = *cut.get(&boundaries);
            let truncated = &text[..end];
            let original: Vec<Vec<String>> = all_paths(&text.parse::<toml::Table>().unwrap())
                .iter()
                .map(|p| keys(p))
                .collect();
            let result = load(truncated, &[]);
            tally.count(&result);
            let verdict = match result {
                Ok(s) => assert_sane(&s),
                Err(e @ ScenarioError::Syntax { .. }) => {
                    check_syntax_position(&e.to_string(), truncated)
                }
                Err(ScenarioError::Invalid { field, problem, .. }) => {
                    let at = field_keys(&field);
                    // A missing key is named in the message; any other error by its path.
                    let named = original.iter().any(|k| {
                        *k == at
                            || (k.starts_with(&at)
                                && k.len() == at.len() + 1
                                && names(&problem, &k[at.len()]))
                    });
                    if named {
                        Ok(())
                    } else {
                        Err(format!(
                            "error names no field of the file: {field}: {problem}"
                        ))
                    }
                }
                Err(e) => Err(format!("unexpected error: {e}")),
            };
            verdict.map_err(|problem| {
                TestCaseError::fail(format!("{name} cut at byte {end}: {problem}"))
            })
        })
        .unwrap();
    tally.print("truncated_files_give_a_position_or_a_field");
}

/// Bytes, not text: a built-in scenario cut at any byte (possibly inside a UTF-8 sequence)
/// or with one byte replaced, read from a file. Invalid UTF-8 is a read error naming the file
/// and the line; everything else as above.
#[test]
fn files_with_bad_bytes_name_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("scenario-bad-bytes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("case.toml");
    let tally = Tally::default();
    let mut runner = TestRunner::new(config(CASES_TRUNCATE));
    let strategy = (
        0..SCENARIOS.len(),
        any::<Index>(),
        prop::option::of((any::<Index>(), any::<u8>())),
    );
    runner
        .run(&strategy, |(which, cut, replace)| {
            let (name, text) = SCENARIOS[which];
            let mut bytes = text.as_bytes().to_vec();
            if let Some((at, byte)) = replace {
                let at = at.index(bytes.len());
                bytes[at] = byte;
            }
            bytes.truncate(cut.index(bytes.len() + 1));
            std::fs::write(&file, &bytes).unwrap();
            let origin = file.display().to_string();
            let result = Scenario::from_file(&file, &[]);
            tally.count(&result);
            match result {
                Ok(s) => assert_sane(&s),
                Err(e) => {
                    let message = e.to_string();
                    match &e {
                        _ if !message.starts_with(&origin) => {
                            Err(format!("no file name: {message}"))
                        }
                        ScenarioError::NotUtf8 { line, .. } => {
                            let lines = bytes.split(|&b| b == b'\n').count();
                            if *line <= lines {
                                Ok(())
                            } else {
                                Err(format!("line beyond the file's {lines}: {message}"))
                            }
                        }
                        ScenarioError::Syntax { .. } => {
                            check_syntax_position(&message, &String::from_utf8_lossy(&bytes))
                        }
                        ScenarioError::Invalid { field, .. }
                            if !field.is_empty() || message.contains('`') =>
                        {
                            Ok(())
                        }
                        _ => Err(format!("error names no field: {message}")),
                    }
                }
            }
            .map_err(|problem| TestCaseError::fail(format!("{name}: {problem}")))
        })
        .unwrap();
    tally.print("files_with_bad_bytes_name_the_file_and_line");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The unit parsers on any text: never a panic; an accepted value is in range and the error
/// quotes the input.
#[test]
fn unit_parsers_accept_or_quote_the_input() {
    use scenario::units::{parse_duration, parse_probability, parse_queue, parse_rate, parse_size};
    let mut runner = TestRunner::new(config(CASES_UNITS));
    let strategy = prop_oneof![
        unit_text(),
        "\\PC{0,30}",
        "[-+0-9. ]{0,30}[a-zA-Zµ%/ ]{0,6}"
    ];
    runner
        .run(&strategy, |input| {
            // The input as given, or trimmed (a bare probability's hint quotes it trimmed).
            let (quoted, trimmed) = (format!("{input:?}"), format!("{:?}", input.trim()));
            let check = |result: Result<(), String>| {
                result.map_err(|e| TestCaseError::fail(format!("{input:?}: {e}")))
            };
            let quotes = |e: &dyn std::fmt::Display| {
                let m = e.to_string();
                if m.contains(&quoted) || m.contains(&trimmed) {
                    Ok(())
                } else {
                    Err(format!("error does not quote the input: {m}"))
                }
            };
            check(parse_rate(&input).map(|_| ()).or_else(|e| quotes(&e)))?;
            check(match parse_duration(&input) {
                Ok(d) if d > MAX_DURATION => Err(format!("accepted {d:?}")),
                Ok(_) => Ok(()),
                Err(e) => quotes(&e),
            })?;
            check(parse_size(&input).map(|_| ()).or_else(|e| quotes(&e)))?;
            check(match parse_probability(&input) {
                Ok(p) if !sane_probability(p) => Err(format!("accepted probability {p}")),
                Ok(_) => Ok(()),
                Err(e) => quotes(&e),
            })?;
            check(match parse_queue(&input) {
                Ok(QueueLimit::BdpMultiple(m)) if !(m.is_finite() && m >= 0.0) => {
                    Err(format!("accepted BDP multiple {m}"))
                }
                Ok(_) => Ok(()),
                Err(e) => quotes(&e),
            })
        })
        .unwrap();
}

/// The harness itself: a property that panics fails the run (so "never panics" is checked).
#[test]
fn a_panic_is_a_failure() {
    let mut runner = TestRunner::new(Config {
        cases: 16,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&any::<u8>(), |n| {
        if n > 0 {
            panic!("loading panicked");
        }
        Ok(())
    });
    assert!(result.is_err(), "a panicking property passed: {result:?}");
}
