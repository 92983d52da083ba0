//! `--backend emu` plays per-flow access delays like the simulator: two Cubic downloads share a
//! 10 Mbit/s bottleneck with RTTs of 100 and 300 ms (access delays 0 and 100 ms); each flow's
//! goodput in real time (UDP on loopback through the relay) is within 10 % of the simulator's.
//!
//! Each flow's receive window is 60 kB, so its goodput is window / RTT (about 4.8 and
//! 1.6 Mbit/s, 6.4 in all, below the 10 Mbit/s bottleneck): the result measures the RTT each
//! flow sees, i.e. whether its access delay is applied, and not the chaotic outcome of two
//! flows competing for a queue (which differs from run to run in real time: 2.1 to 4.2 Mbit/s
//! for the far flow over three 30 s runs of the same scenario without the window).
//!
//! Real time: this test takes about 20 s.

mod common;

use common::sim_and_emu;
use scenario::Scenario;

const SCENARIO: &str = r#"
name = "access-two"
duration = "20s"

[path.forward]
rate = "10Mbit"
delay = "50ms"
queue = "1bdp"

[path.return]
rate = "10Mbit"
delay = "50ms"
queue = "1bdp"

[transport]
stream_receive_window = "60kB"
receive_window = "60kB"

[[flow]]
name = "near"
cc = "cubic"
download = "unlimited"

[[flow]]
name = "far"
cc = "cubic"
access_delay = "100ms"
download = "unlimited"
"#;

#[test]
fn emu_agrees_with_sim_per_flow_with_different_access_delays() {
    let scenario = Scenario::from_toml_str(SCENARIO, "access-two", &[]).unwrap();
    let (sim, emu) = sim_and_emu(&scenario);
    let goodput = |outcome: &sim::RunOutcome, flow: usize| {
        report::summary::run_summary(&scenario, "cubic", outcome).flows[flow].goodput_bps
    };
    for (flow, name) in ["near", "far"].iter().enumerate() {
        let (s, e) = (goodput(&sim, flow), goodput(&emu, flow));
        let difference = (e - s).abs() / s;
        assert!(
            difference < 0.10,
            "flow {name}: sim {:.3} Mbit/s, emu {:.3} Mbit/s ({:+.1} %); emulator drops {:?}, lateness {:?}",
            s / 1e6,
            e / 1e6,
            (e - s) / s * 100.0,
            emu.emulator_drops,
            emu.emulator_lateness
        );
    }
    // Window-limited: the near flow gets about three times the far flow's goodput.
    let ratio = goodput(&emu, 0) / goodput(&emu, 1);
    assert!((2.5..3.5).contains(&ratio), "near / far = {ratio:.2}");
    // The relay counted each flow's packets at the bottleneck.
    for flow in &emu.flows {
        let forward = flow.bottleneck_forward;
        assert!(
            forward.delivered_packets > 1000,
            "{}: {forward:?}",
            flow.name
        );
    }
}

/// `repeat_after` in real time: the second download goes out on the same connection after the
/// idle gap, and both complete in about the simulator's times (sim 2.72 / 1.87 s, emu 2.71 /
/// 1.87 s when measured).
#[test]
fn emu_plays_repeated_downloads_like_sim() {
    let text = r#"
name = "repeat"
duration = "10s"
[path.forward]
rate = "10Mbit"
delay = "100ms"
queue = "1bdp"
[path.return]
rate = "10Mbit"
delay = "100ms"
queue = "1bdp"
[[flow]]
name = "fetch"
cc = "cubic"
download = "2MB"
repeat_after = "2s"
"#;
    let scenario = Scenario::from_toml_str(text, "repeat", &[]).unwrap();
    let (sim, emu) = sim_and_emu(&scenario);
    let exchanges = |outcome: &sim::RunOutcome| {
        report::summary::run_summary(&scenario, "cubic", outcome).flows[0]
            .exchanges
            .iter()
            .map(|e| e.completion_s.expect("every exchange completes"))
            .collect::<Vec<f64>>()
    };
    let (s, e) = (exchanges(&sim), exchanges(&emu));
    assert_eq!((s.len(), e.len()), (2, 2), "sim {s:?}, emu {e:?}");
    for (s, e) in s.iter().zip(&e) {
        assert!(
            (e - s).abs() / s < 0.15,
            "completion sim {s:.3} s, emu {e:.3} s"
        );
    }
    assert_eq!(emu.flows[0].delivered_bytes, 4_000_000);
}
