//! The perf server against malformed requests, from a real quinn client speaking raw perf:
//! a truncated size header, a reset in the header and in the upload, a stream opened and never
//! written, more idle streams than the connection may open, absurd sizes (and garbage as the
//! header), a unidirectional stream. Each is refused with its `perfwire::RequestError` code
//! (RESET_STREAM / STOP_SENDING, seen by the client), counted and logged by the server; the
//! server keeps serving well-formed requests, on the same connection and on a new one; what it
//! holds stays bounded (open streams back to 0, resident memory while streaming an absurd size).
//! All on 127.0.0.1; every wait is bounded.

mod common;
use common::rss_bytes;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use emu::endpoint::{self, Trust};
use emu::perf::{self, ClientOptions, RequestLimits};
use emu::server::Server;
use perfwire::{Request, RequestError, pattern};
use quinn::VarInt;
use rustls::pki_types::CertificateDer;

/// The tests' header timeout: short, so an idle stream is given back quickly.
const HEADER_TIMEOUT: Duration = Duration::from_millis(1500);
/// Longest wait for anything in these tests.
const PATIENCE: Duration = Duration::from_secs(20);

/// One test at a time: the memory bound is read from this process's resident set, which the
/// other tests' connections would otherwise share.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Setup {
    server: Server,
    address: SocketAddr,
    roots: Vec<CertificateDer<'static>>,
}

fn start() -> Setup {
    let (server, roots) = common::loopback_server(common::newreno());
    let server = Server::start_with_limits(
        server,
        RequestLimits {
            header_timeout: HEADER_TIMEOUT,
        },
    )
    .unwrap();
    let address = server.local_addr().unwrap();
    Setup {
        server,
        address,
        roots,
    }
}

impl Setup {
    /// A raw perf connection (ALPN "perf").
    async fn connect(&self) -> (quinn::Endpoint, quinn::Connection) {
        let transport = Arc::new(common::newreno().build());
        let config =
            endpoint::client_config(&Trust::Roots(self.roots.clone()), transport, perfwire::ALPN)
                .unwrap();
        let endpoint = endpoint::client_endpoint(
            self.address,
            None,
            emu::sockbuf::MIN_SOCKET_BUFFER_BYTES,
            config,
        )
        .unwrap();
        let connection = endpoint
            .connect(self.address, "localhost")
            .unwrap()
            .await
            .unwrap();
        (endpoint, connection)
    }

    /// The server still works: a well-formed request on `connection` and a fresh `perf::get`
    /// both receive every byte.
    async fn still_serves(&self, connection: &quinn::Connection) {
        well_formed(connection, 200_000).await;
        let report = perf::get(
            ClientOptions {
                requests: emu::perf::PerfRequests {
                    download_bytes: Some(1_000_000),
                    upload_bytes: 0,
                    duration: Some(PATIENCE),
                    ..Default::default()
                },
                ..common::client_options(self.address, &self.roots, common::newreno())
            },
            &|_| {},
        )
        .await
        .unwrap();
        assert!(report.completed, "{report:?}");
    }

    /// Waits until the server counts `n` refusals for `error` and no open stream.
    async fn refused_and_released(&self, error: RequestError, n: u64) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let counts = self.server.requests();
            if counts.refused.get(&error).copied().unwrap_or(0) >= n && counts.open_streams == 0 {
                assert_eq!(counts.refused.get(&error), Some(&n), "{counts:?}");
                return;
            }
            assert!(
                Instant::now() < deadline,
                "server never refused {n} × {error:?} and released them: {counts:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn code(error: RequestError) -> VarInt {
    VarInt::from_u64(error.code()).unwrap()
}

/// A request for `bytes` on a new stream, read to the end and checked against the pattern.
async fn well_formed(connection: &quinn::Connection, bytes: u64) {
    let (mut send, mut recv) = connection.open_bi().await.unwrap();
    send.write_all(&Request::Bytes(bytes).header())
        .await
        .unwrap();
    send.finish().unwrap();
    let body = tokio::time::timeout(PATIENCE, recv.read_to_end(usize::MAX))
        .await
        .expect("response in time")
        .unwrap();
    assert_eq!(body.len() as u64, bytes);
    assert!(pattern::matches(0, &body));
}

/// Reads `recv` until it ends, returning the bytes seen and how it ended.
async fn read_until_error(recv: &mut quinn::RecvStream) -> (u64, Result<(), quinn::ReadError>) {
    let mut received = 0;
    loop {
        match tokio::time::timeout(PATIENCE, recv.read_chunk(usize::MAX, true))
            .await
            .expect("the stream ends in time")
        {
            Ok(Some(chunk)) => received += chunk.bytes.len() as u64,
            Ok(None) => return (received, Ok(())),
            Err(e) => return (received, Err(e)),
        }
    }
}

/// How the client sees the refusal: its receive side reset with the error's code, which
/// `RequestError::describe` names.
fn assert_reset_with(ended: Result<(), quinn::ReadError>, error: RequestError) {
    match ended {
        Err(quinn::ReadError::Reset(got)) => {
            assert_eq!(
                got,
                code(error),
                "{}",
                RequestError::describe(got.into_inner())
            );
            assert!(RequestError::describe(got.into_inner()).starts_with(&error.to_string()));
        }
        other => panic!("expected a reset with {error:?}, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_header_is_reset_as_truncated() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let setup = start();
    let (_endpoint, connection) = setup.connect().await;
    let (mut send, mut recv) = connection.open_bi().await.unwrap();
    send.write_all(&[0, 0, 1]).await.unwrap();
    send.finish().unwrap();
    let (received, ended) = read_until_error(&mut recv).await;
    assert_eq!(received, 0);
    assert_reset_with(ended, RequestError::TruncatedHeader);
    setup
        .refused_and_released(RequestError::TruncatedHeader, 1)
        .await;
    // An empty stream (FIN only) is truncated too.
    let (mut send, mut recv) = connection.open_bi().await.unwrap();
    send.finish().unwrap();
    assert_reset_with(
        read_until_error(&mut recv).await.1,
        RequestError::TruncatedHeader,
    );
    setup
        .refused_and_released(RequestError::TruncatedHeader, 2)
        .await;
    setup.still_serves(&connection).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_in_the_header_is_reset_back() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let setup = start();
    let (_endpoint, connection) = setup.connect().await;
    let (mut send, mut recv) = connection.open_bi().await.unwrap();
    send.write_all(&[0, 0, 0, 0, 0]).await.unwrap();
    // Let the five bytes go out before the reset.
    tokio::time::sleep(Duration::from_millis(100)).await;
    send.reset(VarInt::from_u32(7)).unwrap();
    assert_reset_with(
        read_until_error(&mut recv).await.1,
        RequestError::RequestReset,
    );
    setup
        .refused_and_released(RequestError::RequestReset, 1)
        .await;
    setup.still_serves(&connection).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_in_the_upload_abandons_the_response() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let setup = start();
    let (_endpoint, connection) = setup.connect().await;
    let (mut send, mut recv) = connection.open_bi().await.unwrap();
    // Ask for 1 GB and start uploading; then reset the upload.
    send.write_all(&Request::Bytes(1 << 30).header())
        .await
        .unwrap();
    for offset in (0..1u64 << 20).step_by(32 << 10) {
        send.write_chunk(pattern::chunk(offset, 32 << 10))
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    send.reset(VarInt::from_u32(7)).unwrap();
    let (received, ended) = read_until_error(&mut recv).await;
    assert_reset_with(ended, RequestError::RequestReset);
    assert!(received < 1 << 30, "the whole response came: {received}");
    setup
        .refused_and_released(RequestError::RequestReset, 1)
        .await;
    setup.still_serves(&connection).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_never_written_is_given_back_and_blocks_nothing() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let setup = start();
    let (_endpoint, connection) = setup.connect().await;
    // Stream A is opened and never written; writing stream B (a later stream) makes the server
    // see A too (QUIC opens lower-numbered streams implicitly).
    let (send_a, mut recv_a) = connection.open_bi().await.unwrap();
    let opened = Instant::now();
    // Stream B, after A, is served while A waits.
    well_formed(&connection, 500_000).await;
    assert!(
        opened.elapsed() < HEADER_TIMEOUT,
        "stream B waited for stream A's timeout"
    );
    // B's handler ends once B is acknowledged; A's is held until its timeout.
    while setup.server.requests().open_streams != 1 {
        assert!(
            opened.elapsed() < HEADER_TIMEOUT,
            "{:?}",
            setup.server.requests()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (_, ended) = read_until_error(&mut recv_a).await;
    assert!(opened.elapsed() >= HEADER_TIMEOUT);
    assert_reset_with(ended, RequestError::HeaderTimeout);
    // The server also told the client to stop sending on A.
    let stopped = tokio::time::timeout(PATIENCE, send_a.stopped())
        .await
        .unwrap();
    assert_eq!(stopped, Ok(Some(code(RequestError::HeaderTimeout))));
    setup
        .refused_and_released(RequestError::HeaderTimeout, 1)
        .await;
    setup.still_serves(&connection).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_streams_are_bounded_by_the_stream_limit_and_the_timeout() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let setup = start();
    let (_endpoint, connection) = setup.connect().await;
    // Open as many streams as the connection allows (quinn's default: 100 concurrent
    // bidirectional streams), each with one byte of header and nothing more.
    let mut idle = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_millis(300), connection.open_bi()).await {
            Ok(Ok((mut send, recv))) => {
                send.write_all(&[0]).await.unwrap();
                idle.push((send, recv));
            }
            Ok(Err(e)) => panic!("{e}"),
            // The limit: no more streams until the server gives some back.
            Err(_) => break,
        }
        assert!(idle.len() <= 1000, "no stream limit");
    }
    let limit = idle.len() as u64;
    assert_eq!(limit, 100, "quinn's default stream limit");
    let held = setup.server.requests().open_streams;
    assert!(held <= limit, "{held} open streams > the limit {limit}");
    // Another connection is served meanwhile.
    let (_other_endpoint, other) = setup.connect().await;
    well_formed(&other, 200_000).await;
    // After the header timeout every idle stream is refused and the server's handlers end.
    for (send, mut recv) in idle {
        assert_reset_with(
            read_until_error(&mut recv).await.1,
            RequestError::HeaderTimeout,
        );
        // Dropping a stopped send stream answers STOP_SENDING with RESET_STREAM, which closes
        // the stream at the server too (a client that never does keeps only its own
        // connection's stream slots; the server's handler is gone either way).
        drop(send);
    }
    setup
        .refused_and_released(RequestError::HeaderTimeout, limit)
        .await;
    // Stream credit came back: the same connection opens and is served again.
    setup.still_serves(&connection).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absurd_sizes_are_served_with_bounded_memory() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let setup = start();
    let (_endpoint, connection) = setup.connect().await;
    // Garbage where the header goes: "GET / HT" is a request for 5.1e18 bytes, and the rest
    // an upload that is not the pattern. Then u64::MAX - 1 (u64::MAX means unlimited).
    let garbage = u64::from_be_bytes(*b"GET / HT");
    for (header, upload) in [
        (b"GET / HT".to_vec(), b"TP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        (Request::Bytes(u64::MAX - 1).header().to_vec(), Vec::new()),
    ] {
        let rss_before = rss_bytes();
        let (mut send, mut recv) = connection.open_bi().await.unwrap();
        send.write_all(&header).await.unwrap();
        send.write_all(&upload).await.unwrap();
        send.finish().unwrap();
        // Read 64 MiB of the response, checking it.
        let mut received = 0u64;
        let mut peak_rss = rss_before;
        while received < 64 << 20 {
            let chunk = tokio::time::timeout(PATIENCE, recv.read_chunk(usize::MAX, true))
                .await
                .expect("data in time")
                .unwrap()
                .expect("not finished");
            assert!(pattern::matches(chunk.offset, &chunk.bytes));
            received += chunk.bytes.len() as u64;
            peak_rss = peak_rss.max(rss_bytes());
        }
        // The server's memory does not follow the size asked for (5.1e18 bytes) nor what it has
        // sent (64 MiB): windows are 8 MiB each way.
        let growth = peak_rss.saturating_sub(rss_before);
        eprintln!("streamed {received} bytes: resident memory grew by {growth} bytes");
        assert!(
            growth < 40 << 20,
            "resident memory grew {growth} bytes while streaming {received} bytes of a {} byte request",
            u64::from_be_bytes(header[..8].try_into().unwrap())
        );
        // The client ends it; the server counts it as ended, not refused, and lets go.
        recv.stop(VarInt::from_u32(0)).unwrap();
        let deadline = Instant::now() + PATIENCE;
        while setup.server.requests().open_streams > 0 {
            assert!(Instant::now() < deadline, "{:?}", setup.server.requests());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    assert!(garbage > 5_000_000_000_000_000_000);
    let counts = setup.server.requests();
    assert!(counts.refused.is_empty(), "{counts:?}");
    assert_eq!(counts.ended, 2, "{counts:?}");
    setup.still_serves(&connection).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unidirectional_stream_is_stopped() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let setup = start();
    let (_endpoint, connection) = setup.connect().await;
    let mut send = connection.open_uni().await.unwrap();
    send.write_chunk(Bytes::from_static(
        b"\xff\x00garbage on a unidirectional stream",
    ))
    .await
    .unwrap();
    let stopped = tokio::time::timeout(PATIENCE, send.stopped())
        .await
        .unwrap();
    assert_eq!(stopped, Ok(Some(code(RequestError::UnidirectionalStream))));
    setup
        .refused_and_released(RequestError::UnidirectionalStream, 1)
        .await;
    setup.still_serves(&connection).await;
}
