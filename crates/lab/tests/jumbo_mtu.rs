//! A path with jumbo frames carries jumbo datagrams, with quinn's controllers and ours: quinn's
//! endpoint default caps datagrams at 1 472 B and its controllers' fixed 12 000 B initial
//! window cannot send a datagram of 12 000 B at all.

mod common;

#[test]
fn a_jumbo_mtu_path_carries_packets_of_its_mtu_with_every_controller() {
    for mtu in [9_000u32, 12_028] {
        let scenario = common::shipped("thesis-geo.toml", &["duration=5s", &format!("mtu={mtu}")]);
        let runs = common::run(
            &scenario,
            &common::per_controller(&["newreno", "cubic", "hybla"], 1),
        );
        for run in &runs {
            let link = &run.outcome.forward_link;
            assert!(
                link.delivered_packets > 100,
                "{} at {mtu}: {link:?}",
                run.label
            );
            // Nearly every packet the bottleneck serialized is a full one (the rest: the
            // handshake, ACK-only packets and the last of a burst).
            let mean = link.serialized_bytes as f64 / link.delivered_packets as f64;
            assert!(
                mean > 0.9 * f64::from(mtu),
                "{} at {mtu}: {mean:.0} B per packet",
                run.label
            );
        }
    }
}
