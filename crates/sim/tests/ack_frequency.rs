//! ACK thinning on a thin return link, and the quinn-proto 0.11.19 stall it runs into.
//!
//! The stall (see the `quinn_satellite::settings` module docs): with an ACK-eliciting threshold k > 1,
//! the client stops its Data-space max_ack_delay timer when it sends its Handshake ACK and
//! never re-arms it, so a first 1-RTT flight of ≤ k packets is ACKed only after the server's
//! PTO. The preset's workaround must bring that first Data ACK back to one RTT plus
//! max_ack_delay.

use std::any::Any;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use netsim::{LinkConfig, PathConfig, QueueLimit};
use perfwire::Request;
use quinn_proto::RttEstimator;
use quinn_proto::congestion::{Controller, ControllerFactory, NewRenoConfig};
use sim::apps::perf::PerfSpec;
use sim::{
    ACK_STALL_WORKAROUND_MAX_ACK_DELAY, Control, FlowApp, FlowConfig, QUINN_DEFAULT_INITIAL_RTT,
    SimConfig, TransportSettings, run,
};

/// (acknowledged at, sent at) of every packet the server saw acknowledged, from the server
/// connection's creation.
type AckLog = Arc<Mutex<Vec<(Duration, Duration)>>>;

/// NewReno, recording every acknowledgement the server receives.
struct Recording {
    log: AckLog,
}

impl ControllerFactory for Recording {
    fn build(self: Arc<Self>, now: Instant, mtu: u16) -> Box<dyn Controller> {
        Box::new(Recorder {
            epoch: now,
            inner: Arc::new(NewRenoConfig::default()).build(now, mtu),
            log: self.log.clone(),
        })
    }
}

struct Recorder {
    epoch: Instant,
    inner: Box<dyn Controller>,
    log: AckLog,
}

impl Controller for Recorder {
    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        limited: bool,
        rtt: &RttEstimator,
    ) {
        let since = |t: Instant| t.saturating_duration_since(self.epoch);
        self.log.lock().unwrap().push((since(now), since(sent)));
        self.inner.on_ack(now, sent, bytes, limited, rtt);
    }
    fn on_congestion_event(&mut self, now: Instant, sent: Instant, persistent: bool, lost: u64) {
        self.inner.on_congestion_event(now, sent, persistent, lost);
    }
    fn on_mtu_update(&mut self, mtu: u16) {
        self.inner.on_mtu_update(mtu);
    }
    fn window(&self) -> u64 {
        self.inner.window()
    }
    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(Recorder {
            epoch: self.epoch,
            inner: self.inner.clone_box(),
            log: self.log.clone(),
        })
    }
    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

const ONE_WAY: Duration = Duration::from_millis(300);

/// 250/3 Mbit/s, RTT 600 ms (kuhn-large's ratio): the preset asks for k = 64.
fn thin_return_path() -> PathConfig {
    let link = |rate| LinkConfig {
        queue: QueueLimit::BdpMultiple(1.0),
        ..LinkConfig::new(rate, ONE_WAY)
    };
    PathConfig {
        forward: link(250_000_000),
        return_link: link(3_000_000),
        mtu_bytes: 1500,
        access_delays: vec![Duration::ZERO],
    }
}

/// When the server learns that the first packet it sent after the handshake (its first 1-RTT
/// flight, sent one RTT after its connection began) was received.
fn first_data_ack(transport: TransportSettings) -> Duration {
    let log = AckLog::default();
    let path = thin_return_path();
    let config = SimConfig {
        path,
        seed: 1,
        duration: Duration::from_secs(10),
        sample_interval: Duration::from_millis(100),
        flows: vec![FlowConfig {
            name: "f".into(),
            cc: "newreno".into(),
            controller: Arc::new(Recording { log: log.clone() }),
            start: Duration::ZERO,
            stop_at: None,
            apps: vec![FlowApp {
                name: "perf".into(),
                spec: Arc::new(PerfSpec {
                    download: Some(Request::Bytes(100_000)),
                    ..PerfSpec::default()
                }),
            }],
            transport,
            scheduler: Default::default(),
            qlog: false,
            reconnect_after: None,
            resumed_controller: None,
            loss_truth: None,
        }],
        qlog_dir: None,
    };
    run(&config, &mut |_| Control::Continue).expect("run succeeds");
    let log = log.lock().unwrap();
    // The server's handshake flight leaves at 0; its first 1-RTT packets one RTT later.
    log.iter()
        .find(|(_, sent)| *sent >= 2 * ONE_WAY - Duration::from_millis(50))
        .map(|(acked, _)| *acked)
        .expect("the first flight is acknowledged within the run")
}

#[test]
fn ack_frequency_stall_after_handshake() {
    let preset = sim::satellite_preset(&thin_return_path(), 0);
    assert_eq!(preset.server_ack_eliciting_threshold, Some(64));
    // Sent at 600 ms, received at 900 ms; the ACK is due max_ack_delay later and arrives
    // another 300 ms after that.
    let due = 4 * ONE_WAY + ACK_STALL_WORKAROUND_MAX_ACK_DELAY;
    let with_workaround = first_data_ack(preset.clone());
    assert!(
        with_workaround <= due + Duration::from_millis(30),
        "first Data ACK at {with_workaround:?}, due by {due:?}"
    );

    // Without the workaround quinn-proto 0.11.19 stalls until the server's PTO. If this starts
    // failing, quinn fixed the bug and the workaround can go.
    let mut plain = preset;
    plain.initial_rtt = QUINN_DEFAULT_INITIAL_RTT;
    plain.max_ack_delay = Some(Duration::from_millis(25));
    let stalled = first_data_ack(plain);
    eprintln!("first Data ACK: {with_workaround:?} with the workaround, {stalled:?} without");
    assert!(
        stalled > due + Duration::from_millis(500),
        "no stall without the workaround: first Data ACK at {stalled:?}"
    );
}
