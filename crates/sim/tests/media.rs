//! The media application end to end: frames on their own streams, delays measured at the
//! receiver, alone and next to a bulk perf transfer on the same connection.

mod common;

use perfwire::Sender;
use std::sync::Arc;
use std::time::Duration;

use common::{ms, single_flow};
use perfwire::Request;
use perfwire::session::MediaParams;
use sim::apps::media::{MediaReport, MediaSpec};
use sim::apps::perf::{PerfReport, PerfSpec};
use sim::{Control, FlowApp, run};

fn media() -> FlowApp {
    media_adapting(false)
}

/// The 2 Mbit/s video source; `adaptive`: it follows the scheduler's target bitrate.
fn media_adapting(adaptive: bool) -> FlowApp {
    FlowApp {
        name: "video".into(),
        spec: Arc::new(MediaSpec {
            params: MediaParams {
                bitrate_bps: 2_000_000,
                video: perfwire::media::VideoModel {
                    fps: 30,
                    keyframe_interval: 60,
                    keyframe_ratio: 5.0,
                    jitter: 0.2,
                },
                deadline: ms(200),
                seed: 7,
                adaptive,
            },
            sender: Sender::Server,
        }),
    }
}

/// An unlimited bulk download on the same connection.
fn bulk() -> FlowApp {
    FlowApp {
        name: "bulk".into(),
        spec: Arc::new(PerfSpec {
            download: Some(Request::Unlimited),
            ..PerfSpec::default()
        }),
    }
}

#[test]
fn media_alone_arrives_on_time() {
    let mut config = single_flow(
        10_000_000,
        ms(50),
        0.0,
        Request::Unlimited,
        Duration::from_secs(6),
        "cubic",
    );
    config.flows[0].apps = vec![media()];
    let out = run(&config, &mut |_| Control::Continue).unwrap();
    let report = MediaReport::of(&out.flows[0].apps[0]).unwrap();
    // About 5.5 s of frames after a ~100 ms handshake, at 30 fps.
    assert!(report.frames_sent >= 160, "{report:?}");
    assert!(
        report.frames_received + 3 >= report.frames_sent,
        "{}",
        report.frames_received
    );
    // One-way propagation is 50 ms; once the congestion window has opened (the first
    // keyframe needs a few round trips of slow start), a 2 Mbit/s stream on a 10 Mbit/s link
    // adds little: serialization of a frame plus pacing.
    assert!(
        report.frame_delay_ms.p50 >= 50.0,
        "{:?}",
        report.frame_delay_ms
    );
    let steady: Vec<f64> = report
        .frames
        .iter()
        .filter(|f| f.captured_at >= Duration::from_secs(1))
        .map(|f| (f.received_at - f.captured_at).as_secs_f64() * 1e3)
        .collect();
    let worst = steady.iter().copied().fold(0.0, f64::max);
    assert!(
        steady.len() > 120 && worst < 150.0,
        "{} frames, worst {worst:.1} ms",
        steady.len()
    );
    assert!(out.flows[0].delivered_bytes > 1_000_000);
    // The sender's writes over time (its sending rate): one bucket per 100 ms up to the last
    // write, nothing before the handshake, and at least every byte the receiver got (frames
    // in flight at the end are written but not received; headers are part of both).
    let written = &report.written_bytes_per_bucket;
    assert_eq!(sim::apps::WRITTEN_BUCKET, ms(100));
    assert!(
        written.len() <= 60 && written.len() >= 55,
        "{}",
        written.len()
    );
    assert_eq!(written[0], 0, "nothing written before the handshake");
    let total: u64 = written.iter().sum();
    assert!(
        total >= out.flows[0].delivered_bytes && total <= out.flows[0].delivered_bytes + 100_000,
        "written {total}, delivered {}",
        out.flows[0].delivered_bytes
    );
}

#[test]
fn media_next_to_bulk_shares_the_connection() {
    let mut config = single_flow(
        10_000_000,
        ms(50),
        0.0,
        Request::Unlimited,
        Duration::from_secs(6),
        "cubic",
    );
    config.flows[0].apps = vec![media(), bulk()];
    let out = run(&config, &mut |_| Control::Continue).unwrap();
    let flow = &out.flows[0];
    let video = MediaReport::of(&flow.apps[0]).unwrap();
    let bulk = PerfReport::of(&flow.apps[1]).unwrap();
    assert!(video.frames_received > 100, "{video:?}");
    assert!(bulk.downloaded_bytes > 1_000_000, "{bulk:?}");
    // Both apps' bytes count towards the flow.
    assert_eq!(
        flow.delivered_bytes,
        flow.apps[0].received_bytes + flow.apps[1].received_bytes
    );
    // quinn's round robin gives the media no precedence: the bulk stream's queue delays it.
    eprintln!(
        "with bulk: frame delay {:?}, late {}",
        video.frame_delay_ms, video.late_frames
    );
}

#[test]
fn adaptive_media_follows_what_the_path_delivers() {
    // 2 Mbit/s of adaptive media and a bulk transfer through 1 Mbit/s with 300 ms of buffer:
    // the balancer asks the encoder for a share of what the peer acknowledged per second.
    let mut config = single_flow(
        1_000_000,
        ms(25),
        0.0,
        Request::Unlimited,
        Duration::from_secs(20),
        "cubic",
    );
    for link in [&mut config.path.forward, &mut config.path.return_link] {
        link.queue = netsim::QueueLimit::Time(ms(300));
    }
    config.flows[0].apps = vec![media_adapting(true), bulk()];
    config.flows[0].scheduler =
        sched::SchedulerSpec::Balancer(sched::balancer::BalancerConfig::default());
    let out = run(&config, &mut |_| Control::Continue).unwrap();
    let report = MediaReport::of(&out.flows[0].apps[0]).unwrap();
    // Nominal 2 Mbit/s for the first round trips, then about 87 % of 1 Mbit/s; without a
    // delivery rate the encoder would sit at its floor (0.2 Mbit/s), and one that ignored
    // the path would stay at 2 Mbit/s.
    assert!(
        (550_000.0..1_000_000.0).contains(&report.mean_bitrate_bps),
        "{report:?}"
    );
}
