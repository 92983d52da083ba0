//! Regression: `perf::get` closed the connection as soon as the (small) response had arrived
//! and the upload was *written* into quinn's send buffer, cutting off the upload's tail still
//! in flight. The client must wait until the server has the whole upload.
//!
//! Real time: this test takes about 2 s.

mod common;

use std::time::{Duration, Instant};

use emu::perf::{self, ClientOptions};
use emu::relay::Relay;
use emu::server::Server;
use netsim::{LinkConfig, QueueLimit};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_returns_once_the_upload_is_delivered_not_when_it_is_buffered() {
    let (server, roots) = common::loopback_server(common::newreno());
    let server = Server::start(server).unwrap();
    // The upload crosses a 4 Mbit/s return link: 500 kB take at least 1 s.
    let link = |rate| LinkConfig {
        queue: QueueLimit::Bytes(200_000),
        ..LinkConfig::new(rate, Duration::from_millis(10))
    };
    let relay = Relay::start(common::relay_config(
        server.local_addr().unwrap(),
        link(100_000_000),
        link(4_000_000),
    ))
    .unwrap();
    let started = Instant::now();
    let report = perf::get(
        ClientOptions {
            requests: emu::perf::PerfRequests {
                download_bytes: Some(1_000),
                upload_bytes: 500_000,
                duration: Some(Duration::from_secs(20)),
                ..Default::default()
            },
            ..common::client_options(relay.local_addr(), &roots, common::newreno())
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
