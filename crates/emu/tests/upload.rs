//! Regression: `perf::get` closed the connection as soon as the (small) response had arrived
//! and the upload was *written* into quinn's send buffer, cutting off the upload's tail still
//! in flight. The client must wait until the server has the whole upload.
//!
//! Real time: this test takes about 2 s.

use std::sync::Arc;
use std::time::{Duration, Instant};

use emu::endpoint::{self, Trust};
use emu::perf::{self, ClientOptions};
use emu::relay::{Relay, RelayConfig};
use emu::server::{Server, ServerOptions};
use netsim::{LinkConfig, QueueLimit};
use quinn::congestion::NewRenoConfig;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_returns_once_the_upload_is_delivered_not_when_it_is_buffered() {
    let (cert, key) = endpoint::self_signed(vec!["localhost".into()]).unwrap();
    let identity = endpoint::parse_identity(&cert, &key).unwrap();
    let roots = identity.0.clone();
    let server = Server::start(ServerOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        identity,
        transport: endpoint::transport_recipe(Arc::new(NewRenoConfig::default()), 8 << 20),
        qlog: None,
        log_dir: None,
        socket_buffer_bytes: emu::sockbuf::MIN_SOCKET_BUFFER_BYTES,
        session_epoch: None,
        kept_sessions: 0,
    })
    .unwrap();
    // The upload crosses a 4 Mbit/s return link: 500 kB take at least 1 s.
    let link = |rate| LinkConfig {
        queue: QueueLimit::Bytes(200_000),
        ..LinkConfig::new(rate, Duration::from_millis(10))
    };
    let relay = Relay::start(RelayConfig {
        access_delays: Vec::new(),
        flow_upstreams: Vec::new(),
        flow_clients: Vec::new(),
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream: server.local_addr().unwrap(),
        forward: link(100_000_000),
        return_link: link(4_000_000),
        mtu_bytes: 1500,
        seed: 1,
        socket_buffer_bytes: None,
    })
    .unwrap();
    let started = Instant::now();
    let report = perf::get(
        ClientOptions {
            server: relay.local_addr(),
            server_name: "localhost".into(),
            trust: Trust::Roots(roots),
            download_bytes: Some(1_000),
            upload_bytes: 500_000,
            duration: Some(Duration::from_secs(20)),
            transport: endpoint::transport_recipe(Arc::new(NewRenoConfig::default()), 8 << 20),
            qlog: None,
            socket: None,
            socket_buffer_bytes: emu::sockbuf::MIN_SOCKET_BUFFER_BYTES,
            thresholds: vec![],
            verify: true,
            repeat_after: None,
        },
        &|_| {},
    )
    .await
    .expect("transfer");
    let took = started.elapsed();
    assert!(report.completed);
    assert_eq!(report.bytes_uploaded, 500_000);
    // 500 kB × 8 / 4 Mbit/s = 1 s on the wire; returning sooner means the tail was cut off.
    assert!(took >= Duration::from_secs(1), "returned after {took:?}");
    // Every upload byte crossed the return link (plus headers and the request).
    let crossed = relay.stats().return_link.serialized_bytes;
    assert!(
        crossed >= 500_000,
        "only {crossed} bytes crossed the return link"
    );
    relay.stop();
    server.stop().await;
}
