//! Real QUIC over the modelled path: transfers complete, data is verified, runs are
//! reproducible.

mod common;

use std::time::Duration;

use common::{ms, single_flow};
use perfwire::Request as Download;
use sim::apps::perf::{PerfReport, PerfSpec};
use sim::{Control, FlowEnd, run};

fn run_ok(config: &sim::SimConfig) -> sim::RunOutcome {
    run(config, &mut |_| Control::Continue).expect("run succeeds")
}

#[test]
fn sized_download_completes_with_every_byte_verified() {
    let config = single_flow(
        10_000_000,
        ms(25),
        0.0,
        Download::Bytes(3_000_000),
        Duration::from_secs(30),
        "newreno",
    );
    let out = run_ok(&config);
    let flow = &out.flows[0];
    assert_eq!(flow.end, FlowEnd::Completed);
    assert_eq!(flow.delivered_bytes, 3_000_000);
    let perf = PerfReport::of(&flow.apps[0]).unwrap();
    assert_eq!(perf.downloaded_bytes, 3_000_000);
    let exchange = &perf.exchanges[0];
    let completion = exchange.completed_at.unwrap() - exchange.requested_at;
    // 3 MB at 10 Mbit/s is 2.4 s of serialization at the very least.
    assert!(completion > Duration::from_millis(2400), "{completion:?}");
    assert!(completion < Duration::from_secs(10), "{completion:?}");
    assert!(exchange.reached.contains_key(&2_000_000));
    assert!(!exchange.reached.contains_key(&10_000_000));
    // One handshake takes at least one RTT (50 ms) of propagation.
    assert!(flow.handshake.unwrap() >= ms(50));
    assert!(
        out.end_time < Duration::from_secs(30),
        "the run ends once every flow is done"
    );
}

#[test]
fn same_seed_same_outcome_different_seed_different_losses() {
    let mut config = single_flow(
        10_000_000,
        ms(100),
        0.01,
        Download::Unlimited,
        Duration::from_secs(20),
        "cubic",
    );
    let a = serde_json::to_string(&run_ok(&config)).unwrap();
    let b = serde_json::to_string(&run_ok(&config)).unwrap();
    assert_eq!(a, b, "same seed must give identical outcomes");
    config.seed = 2;
    let c = serde_json::to_string(&run_ok(&config)).unwrap();
    assert_ne!(a, c, "a different seed must change the random losses");
}

#[test]
fn random_loss_is_recovered_and_counted() {
    let config = single_flow(
        10_000_000,
        ms(50),
        0.01,
        Download::Bytes(2_000_000),
        Duration::from_secs(60),
        "newreno",
    );
    let out = run_ok(&config);
    let flow = &out.flows[0];
    assert_eq!(flow.end, FlowEnd::Completed);
    assert_eq!(flow.delivered_bytes, 2_000_000);
    assert!(flow.sender.lost_packets > 0);
    assert!(flow.bottleneck_forward.random_losses > 0);
}

#[test]
fn samples_cover_the_run_at_the_interval() {
    let config = single_flow(
        10_000_000,
        ms(250),
        0.0,
        Download::Unlimited,
        Duration::from_secs(5),
        "newreno",
    );
    let out = run_ok(&config);
    assert_eq!(out.samples.len(), 50);
    assert_eq!(out.samples[0].t, ms(100));
    assert_eq!(out.samples[49].t, Duration::from_secs(5));
    let last = out.samples.last().unwrap();
    assert!(last.delivered_bytes > 0 && last.cwnd_bytes > 0);
    assert!(last.min_rtt >= ms(500));
    assert!(
        out.samples
            .windows(2)
            .all(|w| w[0].delivered_bytes <= w[1].delivered_bytes)
    );
    assert_eq!(out.flows[0].end, FlowEnd::Running);
}

#[test]
fn upload_repeat_and_stop_workloads() {
    let mut config = single_flow(
        10_000_000,
        ms(50),
        0.0,
        Download::Bytes(500_000),
        Duration::from_secs(30),
        "newreno",
    );
    config.flows[0].apps = vec![common::perf_app(PerfSpec {
        download: Some(Download::Bytes(500_000)),
        upload_bytes: Some(700_000),
        repeat_after: Some(Duration::from_secs(2)),
        ..PerfSpec::default()
    })];
    let out = run_ok(&config);
    let flow = &out.flows[0];
    assert_eq!(flow.end, FlowEnd::Completed);
    let perf = PerfReport::of(&flow.apps[0]).unwrap();
    assert_eq!(perf.exchanges.len(), 2);
    assert_eq!(flow.delivered_bytes, 1_000_000);
    assert_eq!(perf.uploaded_bytes, 1_400_000);
    let first_done = perf.exchanges[0].completed_at.unwrap();
    assert_eq!(
        perf.exchanges[1].requested_at,
        first_done + Duration::from_secs(2)
    );
    assert!(perf.exchanges[0].upload_completed_at.is_some());

    let mut config = single_flow(
        10_000_000,
        ms(50),
        0.0,
        Download::Unlimited,
        Duration::from_secs(30),
        "newreno",
    );
    config.flows[0].stop_at = Some(Duration::from_secs(3));
    let out = run_ok(&config);
    assert_eq!(out.flows[0].end, FlowEnd::Stopped);
    assert_eq!(out.flows[0].ended_at, Some(Duration::from_secs(3)));
}

#[test]
fn observer_can_interrupt() {
    let config = single_flow(
        10_000_000,
        ms(50),
        0.0,
        Download::Unlimited,
        Duration::from_secs(30),
        "newreno",
    );
    let err = run(&config, &mut |t| {
        if t >= Duration::from_secs(1) {
            Control::Stop
        } else {
            Control::Continue
        }
    })
    .unwrap_err();
    assert!(matches!(err, sim::SimError::Interrupted(_)), "{err}");
}

#[test]
fn qlog_files_are_written_per_connection() {
    let dir = std::env::temp_dir().join(format!("satquic-qlog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut config = single_flow(
        10_000_000,
        ms(25),
        0.0,
        Download::Bytes(200_000),
        Duration::from_secs(10),
        "newreno",
    );
    config.flows[0].qlog = true;
    config.qlog_dir = Some(dir.clone());
    let out = run_ok(&config);
    assert_eq!(out.flows[0].end, FlowEnd::Completed);
    for role in ["client", "server"] {
        let text = std::fs::read_to_string(dir.join(format!("f-{role}.qlog"))).unwrap();
        assert!(
            text.contains("packet_sent") && text.contains("packet_received"),
            "{role}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
