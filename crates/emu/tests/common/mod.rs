//! What the emu integration tests share: a perf server on loopback with a self-signed
//! certificate, a client that trusts it, a relay between them, and the process's memory.

// Every test binary compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use emu::endpoint::{self, TransportRecipe, Trust};
use emu::perf::ClientOptions;
use emu::relay::RelayConfig;
use emu::server::ServerOptions;
use netsim::LinkConfig;
use quinn::congestion::NewRenoConfig;
use rustls::pki_types::CertificateDer;

/// Stream and connection windows of the tests that are not about windows.
const WINDOW_BYTES: u64 = 8 << 20;

/// NewReno with [`WINDOW_BYTES`] windows: the transport of the tests that are not about the
/// controller.
pub fn newreno() -> TransportRecipe {
    endpoint::transport_recipe(Arc::new(NewRenoConfig::default()), WINDOW_BYTES)
}

/// A server on 127.0.0.1 (a free port) sending with `transport`, under a self-signed
/// certificate for "localhost"; and the roots a client trusts that certificate by. Start it
/// with `Server::start` (or `Server::start_with_limits`).
pub fn loopback_server(
    transport: TransportRecipe,
) -> (ServerOptions, Vec<CertificateDer<'static>>) {
    let (cert, key) = endpoint::self_signed(vec!["localhost".into()]).unwrap();
    let identity = endpoint::parse_identity(&cert, &key).unwrap();
    let roots = identity.0.clone();
    let options = ServerOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        identity,
        transport,
        qlog: None,
        log_dir: None,
        socket_buffer_bytes: emu::sockbuf::MIN_SOCKET_BUFFER_BYTES,
        session_epoch: None,
        kept_sessions: 0,
    };
    (options, roots)
}

/// A perf client of `server` (a [`loopback_server`] or a relay in front of one) trusting
/// `roots`, sending with `transport`, checking every byte. What it transfers and for how long
/// is the test's to set (`download_bytes`, `upload_bytes`, `duration`): left as they are here,
/// an unlimited download with no upload and no time limit.
pub fn client_options(
    server: SocketAddr,
    roots: &[CertificateDer<'static>],
    transport: TransportRecipe,
) -> ClientOptions {
    ClientOptions {
        server,
        server_name: "localhost".into(),
        trust: Trust::Roots(roots.to_vec()),
        transport,
        qlog: None,
        socket: None,
        socket_buffer_bytes: emu::sockbuf::MIN_SOCKET_BUFFER_BYTES,
        requests: Default::default(),
    }
}

/// A relay on 127.0.0.1 (a free port) in front of `upstream`, one flow, 1500-byte MTU, seed
/// 1, default socket buffers.
pub fn relay_config(
    upstream: SocketAddr,
    forward: LinkConfig,
    return_link: LinkConfig,
) -> RelayConfig {
    RelayConfig {
        access_delays: Vec::new(),
        flow_upstreams: Vec::new(),
        flow_clients: Vec::new(),
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream,
        forward,
        return_link,
        mtu_bytes: 1500,
        seed: 1,
        socket_buffer_bytes: None,
    }
}

/// This process's resident memory, bytes (0 where /proc is unavailable): the tests bound what
/// a flood or an absurd request may cost.
pub fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}
