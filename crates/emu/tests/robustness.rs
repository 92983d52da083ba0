//! The perf server under abuse: malformed datagrams, 100 concurrent clients, one client that
//! vanishes mid-transfer. It must keep serving, never panic, and keep its memory bounded.
//! All traffic stays on 127.0.0.1 and every loop is bounded in count and time.

mod common;
use common::rss_bytes;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use emu::perf::{self, ClientOptions};
use emu::relay::Relay;
use emu::server::Server;
use netsim::{LinkConfig, QueueLimit};

/// Sends malformed datagrams to `to` until `stop` (at most 200 000, ~20 000 per second).
fn flood(to: SocketAddr, stop: Arc<AtomicBool>, sent: Arc<AtomicU64>) {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let mut state = 0x1234_5678u32;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let start = Instant::now();
    while !stop.load(Ordering::Relaxed)
        && sent.load(Ordering::Relaxed) < 200_000
        && start.elapsed() < Duration::from_secs(60)
    {
        for _ in 0..100 {
            let len = (next() % 1500) as usize + 1;
            let mut datagram: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            match next() % 4 {
                // Long header, unknown version.
                0 => datagram[0] = 0xc0,
                // Long header, QUIC v1, garbage after.
                1 if len > 5 => datagram[..5].copy_from_slice(&[0xc0, 0, 0, 0, 1]),
                // Short header with a random connection id.
                2 => datagram[0] = 0x40 | (datagram[0] & 0x3f),
                _ => {}
            }
            let _ = socket.send_to(&datagram, to);
            sent.fetch_add(1, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_keeps_serving_through_garbage_crowds_and_a_vanishing_client() {
    let (server, roots) = common::loopback_server(common::newreno());
    let server = Server::start(server).unwrap();
    let address = server.local_addr().unwrap();
    let options = |server: SocketAddr, download: Option<u64>, duration: Duration| ClientOptions {
        requests: emu::perf::PerfRequests {
            download_bytes: download,
            upload_bytes: 0,
            duration: Some(duration),
            ..Default::default()
        },
        ..common::client_options(server, &roots, common::newreno())
    };
    let rss_before = rss_bytes();

    let (stop, sent) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let flooder = {
        let (stop, sent) = (stop.clone(), sent.clone());
        std::thread::spawn(move || flood(address, stop, sent))
    };

    // The client that disappears: it reaches the server through a relay that is then stopped,
    // so its packets vanish without a CONNECTION_CLOSE.
    let link = LinkConfig {
        queue: QueueLimit::Packets(10_000),
        ..LinkConfig::new(1_000_000_000, Duration::from_millis(1))
    };
    let relay = Relay::start(common::relay_config(address, link.clone(), link)).unwrap();
    let vanishing = tokio::spawn(perf::get(
        options(relay.local_addr(), None, Duration::from_secs(60)),
        &|_| {},
    ));

    let mut clients = Vec::new();
    for _ in 0..100 {
        clients.push(tokio::spawn(perf::get(
            options(address, Some(200_000), Duration::from_secs(60)),
            &|_| {},
        )));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    relay.stop();
    let mut completed = 0;
    for c in clients {
        let report = c.await.expect("client task").expect("client succeeds");
        assert_eq!(report.bytes_received, 200_000);
        completed += report.completed as u32;
    }
    assert_eq!(completed, 100, "every client got its verified 200 kB");
    vanishing.abort();

    // Still serving after all that.
    let late = perf::get(
        options(address, Some(1_000_000), Duration::from_secs(30)),
        &|_| {},
    )
    .await
    .unwrap();
    assert!(late.completed);

    stop.store(true, Ordering::Relaxed);
    flooder.join().unwrap();
    assert!(sent.load(Ordering::Relaxed) > 1_000, "the flood ran");
    let grown = rss_bytes().saturating_sub(rss_before);
    assert!(grown < 300 << 20, "memory grew by {} MB", grown >> 20);
    server.stop().await;
}

#[test]
fn the_relay_drops_and_counts_overload_instead_of_growing() {
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let link = LinkConfig {
        queue: QueueLimit::Packets(100),
        ..LinkConfig::new(1_000_000, Duration::from_millis(10))
    };
    let relay = Relay::start(common::relay_config(
        sink.local_addr().unwrap(),
        link.clone(),
        link,
    ))
    .unwrap();
    let source = UdpSocket::bind("127.0.0.1:0").unwrap();
    let rss_before = rss_bytes();
    // 20 000 packets of 1 000 bytes in well under a second: 160 Mbit/s into a 1 Mbit/s link.
    for _ in 0..20_000 {
        let _ = source.send_to(&[7u8; 1000], relay.local_addr());
    }
    std::thread::sleep(Duration::from_millis(300));
    let stats = relay.stats();
    relay.stop();
    // (The kernel's socket buffer drops part of the burst before the relay sees it.)
    let r = stats.return_link;
    assert!(r.offered_packets > 200, "offered {}", r.offered_packets);
    assert!(r.queue_drops > 0, "no drops");
    assert!(r.max_queue_bytes <= 100 * 1028, "{}", r.max_queue_bytes);
    // Every packet the model saw is delivered, dropped, or still in the 100-packet buffer.
    let unaccounted = r.offered_packets - r.queue_drops - r.delivered_packets;
    assert!(
        unaccounted <= 100,
        "{unaccounted} packets neither delivered nor dropped"
    );
    assert!(rss_bytes().saturating_sub(rss_before) < 64 << 20);
}

/// Regression: the relay's hand-off byte budget must be returned as packets move on, or it
/// drops everything after its first 32 MB.
#[test]
fn the_relay_keeps_forwarding_after_more_than_its_handoff_budget() {
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    sink.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let link = LinkConfig {
        queue: QueueLimit::Packets(100_000),
        ..LinkConfig::new(10_000_000_000, Duration::from_micros(100))
    };
    let relay = Relay::start(common::relay_config(
        sink.local_addr().unwrap(),
        link.clone(),
        link,
    ))
    .unwrap();
    let source = UdpSocket::bind("127.0.0.1:0").unwrap();
    // 48 MB in batches small enough for the sockets, waiting for each batch to come out.
    let mut received = 0u64;
    let mut buf = [0u8; 2048];
    for _ in 0..(48 << 20) / (1400 * 20) {
        for _ in 0..20 {
            source.send_to(&[1u8; 1400], relay.local_addr()).unwrap();
        }
        for _ in 0..20 {
            match sink.recv(&mut buf) {
                Ok(n) => received += n as u64,
                Err(_) => break,
            }
        }
    }
    relay.stop();
    assert!(
        received > 40 << 20,
        "only {} MB came through",
        received >> 20
    );
}
