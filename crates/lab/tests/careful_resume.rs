//! Careful Resume (RFC 9959) end to end: a flow that reconnects, its second connection's
//! server resuming from what the first measured, on a GEO path that is the same for both
//! connections and on one whose capacity fell to a quarter or a tenth in between (Safe
//! Retreat must fire). Byte-identical summaries for one seed.

mod common;

use report::summary::{ConnectionSummary, RunSummary};
use scenario::Scenario;

/// 50/5 Mbit/s, RTT 600 ms, 12 MB downloaded twice, 5 s apart; neither connection is told the
/// path.
const SCENARIO: &str = r#"
name = "resume-short"
duration = "60s"
time_to_bytes = ["12MB"]
[path.forward]
rate = "50Mbit"
delay = "300ms"
queue = "1bdp"
[path.return]
rate = "5Mbit"
delay = "300ms"
queue = "1bdp"
[[flow]]
name = "download"
cc = "hybla"
cc_params = { initial_ssthresh = "estimate", careful_resume = true }
download = "12MB"
reconnect_after = "5s"
"#;

fn summary(overrides: &[&str]) -> RunSummary {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = Scenario::from_toml_str(SCENARIO, "test", &overrides).unwrap();
    common::summary_seed(&scenario, 1)
}

fn connections(summary: &RunSummary) -> &[ConnectionSummary] {
    let connections = &summary.flows[0].connections;
    assert_eq!(connections.len(), 2, "two connections");
    connections
}

const NO_RESUME: &str =
    r#"flow.cc_params={ initial_ssthresh = "estimate", careful_resume = false }"#;

#[test]
fn the_second_connection_resumes_and_finishes_sooner() {
    let resumed = summary(&[]);
    let [first, second] = connections(&resumed) else {
        unreachable!()
    };
    assert_eq!(resumed.flows[0].state, "completed");
    assert!(first.careful_resume.is_none());
    let saved = first
        .saved
        .as_ref()
        .expect("the first connection saved its path");
    let cr = second.careful_resume.as_ref().expect("the second resumed");
    assert_eq!(cr.resumed_from.cwnd_bytes, saved.cwnd_bytes);
    assert_eq!(cr.jump_bytes, Some(saved.cwnd_bytes / 2));
    assert!(!cr.retreated);
    let path: Vec<&str> = cr.transitions.iter().map(|t| t.to.as_str()).collect();
    assert_eq!(path, ["unvalidated", "validating", "normal"]);
    // The jump comes after the second connection started and its handshake was acknowledged.
    assert!(cr.transitions[0].at_s > second.start_s + second.handshake_s.unwrap());
    // Both exchanges are the flow's.
    assert_eq!(resumed.flows[0].exchanges.len(), 2);
    assert_eq!(resumed.flows[0].bytes_delivered, 24_000_000);

    let plain = summary(&[NO_RESUME]);
    let [_, unresumed] = connections(&plain) else {
        unreachable!()
    };
    assert!(unresumed.careful_resume.is_none());
    let (with, without) = (
        second.completion_s.unwrap(),
        unresumed.completion_s.unwrap(),
    );
    // Half an RTT saved at least (the line-rate floor is 2.5 s; Hybla alone takes 4.2 s).
    assert!(with < without - 0.3, "resumed {with} s, not {without} s");
}

/// The capacity falls to `rate` (from 50 Mbit/s) before the reconnection, behind a buffer of
/// `queue`: the second connection's Careful Resume.
fn after_a_capacity_drop(rate: &str, queue: &str) -> ConnectionSummary {
    let schedule = format!(r#"path.forward.schedule=[{{ at = "8s", rate = "{rate}" }}]"#);
    let queue = format!("path.forward.queue={queue}");
    let resumed = summary(&[schedule.as_str(), queue.as_str()]);
    let second = connections(&resumed)[1].clone();
    assert!(
        second.start_s > 8.0,
        "the path changed before the reconnection"
    );
    assert_eq!(resumed.flows[0].state, "completed");
    second
}

#[test]
fn a_jump_into_a_quarter_of_the_capacity_retreats_on_its_queue_before_a_drop() {
    // The jump (half the old BDP, spread over 1.1 RTTs) is twice the new BDP. Behind a buffer
    // of the new BDP (a quarter of the old) or of a third of the old BDP it queues, without
    // overflowing, until its acknowledgements show that queue for a quarter RTT: Safe Retreat
    // on the jump's queue, not on a loss. (At RFC 9959's one-RTT rhythm the jump filled the
    // new BDP's buffer to the brim and a few dozen packets overflowed.)
    for queue in ["0.25bdp", "0.33bdp"] {
        let second = after_a_capacity_drop("12.5Mbit", queue);
        let cr = second.careful_resume.as_ref().unwrap();
        assert!(cr.retreated, "{queue}: {cr:?}");
        assert!(
            cr.transitions
                .iter()
                .any(|t| t.to == "safe_retreat" && t.trigger == "jump_outran_path"),
            "{queue}: {cr:?}"
        );
        assert_eq!(second.forward_queue_drops, 0, "{queue}");
    }
}

#[test]
fn a_jump_into_a_tenth_of_the_capacity_retreats() {
    let second = after_a_capacity_drop("5Mbit", "0.1bdp");
    let cr = second.careful_resume.as_ref().unwrap();
    assert!(cr.retreated, "{cr:?}");
    assert!(cr.transitions.iter().any(|t| t.to == "safe_retreat"));
}

#[test]
fn same_seed_gives_the_same_summary() {
    let a = serde_json::to_string(&summary(&[])).unwrap();
    let b = serde_json::to_string(&summary(&[])).unwrap();
    assert_eq!(a, b);
}
