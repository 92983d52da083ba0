//! Every datagram that enters the relay is delivered or counted in exactly one drop class —
//! including the ones the kernel drops before the relay reads them.

mod common;

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use emu::relay::{Relay, RelayConfig, RelayStats};
use emu::sockbuf;
use netsim::{LinkConfig, LossModel, QueueLimit};

const BURSTS: usize = 3;
const BURST_DATAGRAMS: u64 = 5_000;
const PAYLOAD_BYTES: usize = 1200;

struct Outcome {
    sent: u64,
    received: u64,
    sink_kernel_drops: u64,
    stats: RelayStats,
}

/// Sends [`BURSTS`] bursts of [`BURST_DATAGRAMS`] back to back from one socket through a
/// relay whose client → server link runs at 100 Mbit/s with a 300-packet buffer and 1 %
/// random loss, into a sink with a large buffer, and counts everything.
fn bursts_through_relay(relay_socket_buffer: Option<usize>) -> Outcome {
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    sink.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    sockbuf::size_or_warn(&sink, 64 << 20, "test sink");
    let sink = Arc::new(sink);
    let link = LinkConfig {
        queue: QueueLimit::Packets(300),
        loss: LossModel::Bernoulli { probability: 0.01 },
        ..LinkConfig::new(100_000_000, Duration::from_millis(5))
    };
    let relay = Relay::start(RelayConfig {
        seed: 7,
        socket_buffer_bytes: relay_socket_buffer,
        ..common::relay_config(sink.local_addr().unwrap(), link.clone(), link)
    })
    .unwrap();
    let (stop, received) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let reader = {
        let (stop, received, sink) = (stop.clone(), received.clone(), sink.clone());
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 2048];
            while !stop.load(Ordering::Relaxed) {
                if sink.recv(&mut buf).is_ok() {
                    received.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
    sockbuf::size_or_warn(&sender, 16 << 20, "test sender");
    let payload = vec![0xa5u8; PAYLOAD_BYTES];
    let mut sent = 0u64;
    for _ in 0..BURSTS {
        for _ in 0..BURST_DATAGRAMS {
            sender.send_to(&payload, relay.local_addr()).unwrap();
            sent += 1;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // Wait until the relay has moved everything it admitted and published its counters.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = (u64::MAX, 0);
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = (
            received.load(Ordering::Relaxed),
            relay.stats().return_link.offered_packets,
        );
        if now == last || Instant::now() > deadline {
            break;
        }
        last = now;
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    let stats = relay.stats();
    let sink_kernel_drops = sockbuf::kernel_drops(&sink).expect("Linux exposes socket drops");
    Outcome {
        sent,
        received: received.load(Ordering::Relaxed),
        sink_kernel_drops,
        stats,
    }
}

fn assert_every_datagram_accounted_for(o: &Outcome) {
    let link = &o.stats.return_link;
    let classes = [
        ("delivered to the sink", o.received),
        ("dropped by the kernel at the sink", o.sink_kernel_drops),
        ("queue drops", link.queue_drops),
        ("early (AQM) drops", link.early_drops),
        ("oversize drops", link.oversize_drops),
        ("random losses", link.random_losses),
        ("relay overload drops", o.stats.overload_drops),
        ("kernel drops at the relay", o.stats.kernel_drops),
        ("relay send errors", o.stats.send_errors),
    ];
    let total: u64 = classes.iter().map(|c| c.1).sum();
    eprintln!("sent {}: {classes:?}", o.sent);
    assert_eq!(
        total, o.sent,
        "sent {} but accounted for {total}: {classes:?}",
        o.sent
    );
    // What the model admitted is what it delivered or dropped.
    assert_eq!(
        link.offered_packets,
        link.delivered_packets
            + link.queue_drops
            + link.early_drops
            + link.oversize_drops
            + link.random_losses,
    );
}

#[test]
fn bursts_are_delivered_or_counted_with_sized_buffers() {
    let o = bursts_through_relay(None);
    assert_every_datagram_accounted_for(&o);
    assert!(
        o.stats.return_link.queue_drops > 0,
        "the bursts overflow the 300-packet buffer"
    );
    assert!(o.stats.return_link.random_losses > 0);
}

#[test]
fn kernel_drops_at_a_small_relay_buffer_are_counted_not_lost() {
    // 64 KiB holds about 50 datagrams: a 5 000-datagram burst overflows it in the kernel.
    let o = bursts_through_relay(Some(64 << 10));
    assert_every_datagram_accounted_for(&o);
    assert!(o.stats.kernel_drops > 0, "the small buffer must overflow");
}
