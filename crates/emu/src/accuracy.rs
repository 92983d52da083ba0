//! How faithfully the relay reproduces the model on this machine: lateness of deliveries
//! against the model's arrival times, and achieved vs configured rate, under a saturating
//! paced load on loopback.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use netsim::{IP_UDP_HEADER_BYTES, LinkConfig, QueueLimit};
use serde::Serialize;

use crate::relay::{Relay, RelayConfig};

/// Payload of the probe datagrams (a full-size QUIC packet).
const PAYLOAD_BYTES: usize = 1472;

/// One measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Accuracy {
    /// Configured link rate, bit/s.
    pub configured_bps: u64,
    /// Offered load (sender), bit/s of IP packets.
    pub offered_bps: f64,
    /// Rate of IP packets arriving at the sink while the link was saturated, bit/s.
    pub achieved_bps: f64,
    /// Median lateness of a delivery against the model, µs.
    pub lateness_p50_us: u64,
    /// 99th percentile lateness, µs.
    pub lateness_p99_us: u64,
    /// Largest lateness, µs.
    pub lateness_max_us: u64,
    /// Packets delivered.
    pub delivered_packets: u64,
    /// Packets the model's buffer dropped (the offered load exceeds the rate on purpose).
    pub queue_drops: u64,
    /// Packets dropped before the model because the relay could not keep up.
    pub overload_drops: u64,
    /// Packets the kernel dropped at the relay's sockets (receive buffer full) before the
    /// relay read them.
    pub kernel_drops: u64,
    /// Packets the kernel dropped at the measuring sink.
    pub sink_kernel_drops: u64,
    /// Receive buffer the kernel granted to the relay's listen socket, bytes.
    pub relay_socket_buffer_bytes: usize,
}

/// Sends a paced load of `overload` × `rate_bps` for `duration` through a relay with a
/// `rate_bps` / `delay` link and measures it.
pub fn measure(
    rate_bps: u64,
    delay: Duration,
    duration: Duration,
    overload: f64,
) -> io::Result<Accuracy> {
    let sink = UdpSocket::bind("127.0.0.1:0")?;
    sink.set_read_timeout(Some(Duration::from_millis(50)))?;
    crate::sockbuf::size_or_warn(
        &sink,
        crate::sockbuf::buffer_bytes_for(rate_bps, 2 * delay),
        "link-bench sink",
    );
    let sink = Arc::new(sink);
    let link = LinkConfig {
        queue: QueueLimit::Packets(1000),
        ..LinkConfig::new(rate_bps, delay)
    };
    let relay = Relay::start(RelayConfig {
        access_delays: Vec::new(),
        flow_upstreams: Vec::new(),
        flow_clients: Vec::new(),
        listen: "127.0.0.1:0".parse().expect("valid address"),
        upstream: sink.local_addr()?,
        forward: link.clone(),
        return_link: link,
        mtu_bytes: 1500,
        seed: 1,
        socket_buffer_bytes: None,
    })?;
    let relay_address = relay.local_addr();
    let done = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    // Count IP bytes arriving at the sink from one second after the start (the queue is then
    // full and the link saturated) until the sender stops.
    let window_start = Duration::from_secs(1).min(duration / 2) + delay;
    let receiver = {
        let (done, received, sink) = (done.clone(), received.clone(), sink.clone());
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 2048];
            let start = Instant::now();
            let mut first: Option<Instant> = None;
            let mut last = start;
            while !done.load(Ordering::Relaxed) {
                if let Ok(n) = sink.recv(&mut buf) {
                    let now = Instant::now();
                    if now.duration_since(start) >= window_start {
                        first.get_or_insert(now);
                        last = now;
                        received.fetch_add(
                            (n as u64) + u64::from(IP_UDP_HEADER_BYTES),
                            Ordering::Relaxed,
                        );
                    }
                }
            }
            first.map(|f| last.duration_since(f))
        })
    };
    let offered_bps = send_paced(relay_address, rate_bps as f64 * overload, duration)?;
    std::thread::sleep(delay + Duration::from_millis(300));
    done.store(true, Ordering::Relaxed);
    let span = receiver
        .join()
        .expect("receiver thread")
        .unwrap_or_default();
    let stats = relay.stats();
    relay.stop();
    let lateness = &stats.lateness_us;
    Ok(Accuracy {
        configured_bps: rate_bps,
        offered_bps,
        achieved_bps: if span.is_zero() {
            0.0
        } else {
            received.load(Ordering::Relaxed) as f64 * 8.0 / span.as_secs_f64()
        },
        lateness_p50_us: lateness.value_at_quantile(0.5),
        lateness_p99_us: lateness.value_at_quantile(0.99),
        lateness_max_us: lateness.max(),
        delivered_packets: stats.return_link.delivered_packets,
        queue_drops: stats.return_link.queue_drops,
        overload_drops: stats.overload_drops,
        kernel_drops: stats.kernel_drops,
        sink_kernel_drops: crate::sockbuf::kernel_drops(&sink).unwrap_or(0),
        relay_socket_buffer_bytes: stats.socket_buffer.receive_bytes,
    })
}

/// Sends datagrams to `to` at `rate_bps` (IP bytes) for `duration`, pacing in 1 ms rounds;
/// returns the rate actually offered.
fn send_paced(to: SocketAddr, rate_bps: f64, duration: Duration) -> io::Result<f64> {
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    let payload = vec![0x5au8; PAYLOAD_BYTES];
    let wire_bits = ((PAYLOAD_BYTES as u32 + IP_UDP_HEADER_BYTES) * 8) as f64;
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed() < duration {
        let due = (start.elapsed().as_secs_f64() * rate_bps / wire_bits) as u64;
        while sent < due {
            socket.send_to(&payload, to)?;
            sent += 1;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    Ok(sent as f64 * wire_bits / start.elapsed().as_secs_f64())
}
