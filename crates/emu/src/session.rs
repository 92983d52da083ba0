//! Media and bulk on one real connection: a client asks a satquic server for a session of
//! applications under one scheduler ([`perfwire::session`], ALPN `satquic-apps/2` next to
//! perf's on the same server), and both ends run their halves ([`crate::apps`]).
//!
//! Clocks. A frame's delay is measured at its receiver: arrival of the last byte minus the
//! capture time the sender wrote in the header, on the sender's clock. The two ends agree on
//! clocks in one of two ways:
//!
//! - **Shared** (both ends in one process, `satquic run --backend emu`): both measure from the
//!   same `Instant` (the run's start, also the relay's time zero). Exact.
//! - **Estimated** (`satquic serve` / `get`, two processes, perhaps two machines): the server's
//!   clock starts when it reads the request and its reply carries the reading `s`; the client
//!   sent the request at `c0` and read the reply at `c1` on its own clock, and takes the
//!   server's `s` to be its `(c0 + c1) / 2` (one NTP-style exchange, on a path that carries
//!   nothing else yet). The error is half the difference of the request's and the reply's
//!   one-way delays (plus the server's reaction time, microseconds): zero on a symmetric path,
//!   at most half the exchange's RTT on a very asymmetric one. Emulated satellite paths have
//!   equal propagation delays both ways, but a slow return link adds its serialization time
//!   of the request (a few hundred bytes) to the error. The client sends its estimate back, so
//!   both ends map the other's capture times the same way; reports give it
//!   (`clock_offset_ns`).

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use perfwire::Sender;
use perfwire::session::{
    self, ACCEPTED_REPLY_BYTES, AppAccount, AppParams, MAX_REASON_BYTES, MAX_SUMMARY_BYTES,
    OFFSET_BYTES, ReceivedSummary, Reply, SentSummary, SessionRequest, Summary,
};
use quinn::VarInt;
use sched::SchedulerSpec;

use crate::apps::{End, EndConfig, EndReport};
use crate::endpoint::{EndpointError, Trust};
use crate::perf::{ClientReport, PerfRequests, PerfService, PerfTally, WritingTurns};

/// How long a server waits for the request after the handshake.
const REQUEST_WAIT: Duration = Duration::from_secs(10);
/// How long past the requested duration a server keeps sending if the client never says stop.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// How long either end waits for the other's last word (summary, close).
const CLOSING_WAIT: Duration = Duration::from_secs(5);
/// Connection close code: the request broke the protocol or was refused.
const REFUSED: u32 = 0x5246; // "RF"

/// A session as the server saw it.
#[derive(Debug, Clone, Default)]
pub struct ServerSession {
    /// The request, if one arrived and was valid.
    pub request: Option<SessionRequest>,
    /// The server's end of the session (what it sent and received), if it ran.
    pub report: Option<EndReport>,
    /// Why the session was refused or failed.
    pub error: Option<String>,
    /// The client's estimate of (server clock − client clock), ns; 0 with a shared clock.
    pub clock_offset_ns: i64,
}

/// Serves one session on `connection` (negotiated with the session ALPN). `epoch` is the
/// shared clock if both ends run in one process; `None` starts the server's session clock at
/// the request. A perf application's requests are served and counted as `perf` says.
pub(crate) async fn serve(
    connection: quinn::Connection,
    epoch: Option<Instant>,
    perf: PerfService,
) -> ServerSession {
    let mut out = ServerSession::default();
    let (mut send, mut recv, request) =
        match tokio::time::timeout(REQUEST_WAIT, read_request(&connection)).await {
            Ok(Ok(exchange)) => exchange,
            Ok(Err((reason, send))) => {
                refuse(&connection, send, &reason).await;
                out.error = Some(reason);
                return out;
            }
            Err(_) => {
                let reason = format!("no session request within {REQUEST_WAIT:?}");
                connection.close(VarInt::from_u32(REFUSED), reason.as_bytes());
                out.error = Some(reason);
                return out;
            }
        };
    let scheduler = match request.scheduler.parse::<SchedulerSpec>() {
        Ok(scheduler) => scheduler,
        Err(unknown) => {
            let reason = unknown.to_string();
            refuse(&connection, Some(send), &reason).await;
            out.error = Some(reason);
            return out;
        }
    };
    let epoch = epoch.unwrap_or_else(Instant::now);
    let reply = Reply::Accepted {
        clock: epoch.elapsed(),
    };
    if let Err(e) = send.write_all(&reply.encode()).await {
        out.error = Some(format!("replying: {e}"));
        return out;
    }
    let mut end = End::start(
        connection.clone(),
        EndConfig {
            side: Sender::Server,
            apps: request.apps.clone(),
            scheduler,
            epoch,
        },
    );
    // The client's bidirectional streams after the control stream are the perf application's
    // requests (`perfwire::routing`: nothing else opens them next to perf).
    let perf_app = request
        .apps
        .iter()
        .position(|app| matches!(app.params, AppParams::Perf(_)));
    let tally = Arc::new(PerfTally::default());
    let perf_requests = perf_app.map(|_| {
        tokio::spawn(crate::perf::serve_requests(
            connection.clone(),
            PerfService {
                turns: end.writing_turns(),
                ..perf
            },
            tally.clone(),
        ))
    });
    // The client's clock offset, then its FIN (stop); a client that never says stop gets
    // what it asked for and a little more.
    let guard = tokio::time::sleep(request.duration + STOP_GRACE);
    tokio::pin!(guard);
    let control = async {
        let mut offset = [0u8; OFFSET_BYTES];
        recv.read_exact(&mut offset)
            .await
            .map_err(|e| format!("reading the clock offset: {e}"))?;
        match recv.read_chunk(64, true).await {
            Ok(Some(_)) => Err("unexpected bytes on the control stream".to_owned()),
            Ok(None) => Ok(session::decode_offset(offset)),
            Err(e) => Err(format!("control stream: {e}")),
        }
    };
    tokio::select! {
        result = control => match result {
            Ok(offset) => out.clock_offset_ns = offset,
            Err(e) => out.error = Some(e),
        },
        _ = &mut guard => {},
    }
    let sent = end.stop_sending().await;
    // A frame the client sent just before it stopped is still on its way: wait for it as long
    // as it could arrive in time (a frame later than that is late whether it arrives or not).
    tokio::time::sleep(upload_grace(&request)).await;
    let received = end.received_so_far(out.clock_offset_ns);
    let mut apps: Vec<AppAccount> = sent
        .into_iter()
        .zip(received)
        .map(|(sent, received)| AppAccount { sent, received })
        .collect();
    if let Some(index) = perf_app {
        apps[index] = perf_account(&tally);
    }
    let _ = send.write_all(&Summary { apps }.encode()).await;
    let _ = send.finish();
    let _ = tokio::time::timeout(CLOSING_WAIT, connection.closed()).await;
    if let Some(task) = perf_requests {
        task.abort();
    }
    // Client capture times on the server's clock: client time + (server − client).
    let report = end.finish(out.clock_offset_ns).await;
    if out.error.is_none() {
        out.error = report.error.clone();
    }
    out.request = Some(request);
    out.report = Some(report);
    out
}

/// How long the server waits after the client stops before it takes its account of the
/// uploads: the longest deadline of a media source the client sends (zero without one).
fn upload_grace(request: &SessionRequest) -> Duration {
    request
        .apps
        .iter()
        .filter(|app| app.sender == Sender::Client)
        .filter_map(|app| match app.params {
            AppParams::Media(media) => Some(media.deadline),
            AppParams::Bulk(_) | AppParams::Perf(_) => None,
        })
        .max()
        .unwrap_or(Duration::ZERO)
}

/// The server's account of a perf application: the response bytes it wrote, the upload bytes
/// it received.
fn perf_account(tally: &PerfTally) -> AppAccount {
    AppAccount {
        sent: SentSummary {
            written_bytes: tally.written_bytes.load(Ordering::Relaxed),
            ..SentSummary::default()
        },
        received: ReceivedSummary {
            received_bytes: tally.uploaded_bytes.load(Ordering::Relaxed),
            ..ReceivedSummary::default()
        },
    }
}

/// Accepts the control stream and reads a request; on failure the reason and the stream to
/// refuse on (if any).
async fn read_request(
    connection: &quinn::Connection,
) -> Result<
    (quinn::SendStream, quinn::RecvStream, SessionRequest),
    (String, Option<quinn::SendStream>),
> {
    let (send, mut recv) = connection
        .accept_bi()
        .await
        .map_err(|e| (format!("waiting for the control stream: {e}"), None))?;
    let mut header = [0u8; 4];
    if let Err(e) = recv.read_exact(&mut header).await {
        return Err((format!("reading the request: {e}"), Some(send)));
    }
    let len = match SessionRequest::body_len(header) {
        Ok(len) => len,
        Err(e) => return Err((format!("bad request: {e}"), Some(send))),
    };
    let mut body = vec![0u8; len];
    if let Err(e) = recv.read_exact(&mut body).await {
        return Err((format!("reading the request: {e}"), Some(send)));
    }
    match SessionRequest::decode(&body) {
        Ok(request) => Ok((send, recv, request)),
        Err(e) => Err((format!("bad request: {e}"), Some(send))),
    }
}

/// Tells the client why (on the control stream, if there is one) and closes the connection.
async fn refuse(connection: &quinn::Connection, send: Option<quinn::SendStream>, reason: &str) {
    if let Some(mut send) = send {
        let reply = Reply::Refused {
            reason: reason.to_owned(),
        };
        let _ = send.write_all(&reply.encode()).await;
        let _ = send.finish();
        let _ = tokio::time::timeout(CLOSING_WAIT, send.stopped()).await;
    }
    let mut end = reason.len().min(MAX_REASON_BYTES);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    connection.close(VarInt::from_u32(REFUSED), &reason.as_bytes()[..end]);
}

/// What a session client asks for and how.
pub struct SessionOptions {
    /// Server (or relay) address.
    pub server: SocketAddr,
    /// Name expected in the certificate.
    pub server_name: String,
    /// Certificate policy.
    pub trust: Trust,
    /// The session: applications, scheduler, duration (from the start of connecting).
    pub request: SessionRequest,
    /// Transport settings (controller for what the client sends, windows, ...).
    pub transport: crate::endpoint::TransportRecipe,
    /// Where the connection's qlog file goes, if anywhere ([`crate::qlog`]).
    pub qlog: Option<crate::qlog::QlogDir>,
    /// The UDP socket to send from, bound in advance (e.g. so that a relay knows the flow
    /// by its address); None binds a fresh one.
    pub socket: Option<std::net::UdpSocket>,
    /// Receive and send buffer of the UDP socket, bytes.
    pub socket_buffer_bytes: usize,
    /// `Some`: the clock both ends share (one process; the server has the same `Instant`);
    /// `None`: the client's clock starts when it starts connecting and the offset to the
    /// server's is estimated (see the module docs).
    pub shared_epoch: Option<Instant>,
    /// The exchange of the request's perf application (given exactly when the request has
    /// one); it ends with the session at the latest.
    pub perf: Option<PerfRequests>,
}

/// What the client of a session measured.
#[derive(Debug, Clone)]
pub struct SessionReport {
    /// Server address.
    pub server: String,
    /// When the client started connecting, on its clock.
    pub started_at: Duration,
    /// Handshake duration.
    pub handshake: Duration,
    /// When the session ended (the client stopped), on its clock.
    pub ended_at: Duration,
    /// (server clock − client clock), ns: 0 with a shared clock, else the estimate.
    pub clock_offset_ns: i64,
    /// The client's end: what it received (frames with capture times on its clock) and sent.
    pub client: EndReport,
    /// The server's account: what it sent of each download and received of each upload (empty
    /// if it did not say).
    pub server_summary: Summary,
    /// What the perf application measured, if the session has one (and was not cut short).
    pub perf: Option<ClientReport>,
}

/// What the client's end of a session brought back ([`client_session`]).
struct ClientEnd {
    clock_offset_ns: i64,
    client: EndReport,
    server_summary: Summary,
    ended_at: Duration,
    perf: Option<(crate::perf::Exchange, Vec<crate::perf::RepeatReport>)>,
}

/// Connects, asks for the session, runs the client's end until the duration is over, collects
/// the server's summary, closes. `cancel` resolving ends the session early (as the duration
/// would).
pub async fn run(
    mut options: SessionOptions,
    cancel: impl std::future::Future<Output = ()>,
) -> Result<SessionReport, EndpointError> {
    let has_perf = options
        .request
        .apps
        .iter()
        .any(|app| matches!(app.params, AppParams::Perf(_)));
    if has_perf != options.perf.is_some() {
        return Err(EndpointError::Session(
            "a session's perf application and its exchange (SessionOptions::perf) come together"
                .into(),
        ));
    }
    let connect_started = Instant::now();
    let epoch = options.shared_epoch.unwrap_or(connect_started);
    let started_at = epoch.elapsed();
    let stop_at = Instant::now() + options.request.duration;
    let framed = options
        .request
        .encode()
        .map_err(|e| EndpointError::Session(format!("request: {e}")))?;
    let scheduler: SchedulerSpec = options
        .request
        .scheduler
        .parse()
        .map_err(|unknown: sched::UnknownScheduler| EndpointError::Session(unknown.to_string()))?;
    let (transport, qlog) = crate::endpoint::client_transport(
        &options.transport,
        options.qlog.as_ref(),
        options.server,
        // A session client does not resume (only the perf client keeps a store).
        None,
    )?;
    let endpoint = crate::endpoint::client_endpoint(
        options.server,
        options.socket.take(),
        options.socket_buffer_bytes,
        crate::endpoint::client_config(&options.trust, transport, session::ALPN)?,
    )?;
    let connection = endpoint
        .connect(options.server, &options.server_name)
        .map_err(|e| EndpointError::Connect(e.to_string()))?
        .await
        .map_err(|e| EndpointError::Connect(explain_connect_error(&e)))?;
    let handshake = epoch.elapsed().saturating_sub(started_at);
    let result = client_session(
        &connection,
        &options,
        framed,
        scheduler,
        epoch,
        stop_at,
        cancel,
    )
    .await;
    connection.close(0u32.into(), b"done");
    let _ = tokio::time::timeout(CLOSING_WAIT, endpoint.wait_idle()).await;
    if let Some(qlog) = qlog {
        qlog.flush()?;
    }
    let end = result?;
    let server = options.server.to_string();
    let verified = options.perf.as_ref().is_some_and(|p| p.verify);
    Ok(SessionReport {
        perf: end.perf.map(|(first, repeats)| {
            crate::perf::client_report(
                server.clone(),
                handshake,
                connect_started,
                verified,
                first,
                repeats,
            )
        }),
        server,
        started_at,
        handshake,
        ended_at: end.ended_at,
        clock_offset_ns: end.clock_offset_ns,
        client: end.client,
        server_summary: end.server_summary,
    })
}

/// The part of [`run`] on an open connection.
async fn client_session(
    connection: &quinn::Connection,
    options: &SessionOptions,
    framed: Vec<u8>,
    scheduler: SchedulerSpec,
    epoch: Instant,
    stop_at: Instant,
    cancel: impl std::future::Future<Output = ()>,
) -> Result<ClientEnd, EndpointError> {
    let lost = |e: &dyn std::fmt::Display| EndpointError::Connection(e.to_string());
    let (mut send, mut recv) = connection.open_bi().await.map_err(|e| lost(&e))?;
    let c0 = epoch.elapsed();
    send.write_all(&framed).await.map_err(|e| lost(&e))?;
    let reply = read_reply(&mut recv, connection).await?;
    let c1 = epoch.elapsed();
    let server_clock = match reply {
        Reply::Accepted { clock } => clock,
        Reply::Refused { reason } => {
            return Err(EndpointError::Session(format!(
                "the server refused the session: {reason}"
            )));
        }
    };
    let clock_offset_ns = if options.shared_epoch.is_some() {
        0
    } else {
        let midpoint = (c0.as_nanos() + c1.as_nanos()) / 2;
        (server_clock.as_nanos() as i128 - midpoint as i128)
            .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    };
    send.write_all(&session::encode_offset(clock_offset_ns))
        .await
        .map_err(|e| lost(&e))?;
    let mut end = End::start(
        connection.clone(),
        EndConfig {
            side: Sender::Client,
            apps: options.request.apps.clone(),
            scheduler,
            epoch,
        },
    );
    // The perf application's exchange, on its own task: it ends at the session's stop.
    let mut perf = options.perf.clone().map(|mut requests| {
        let left = stop_at.saturating_duration_since(Instant::now());
        requests.duration = Some(requests.duration.map_or(left, |d| d.min(left)));
        let connection = connection.clone();
        let turns = WritingTurns::of(end.writing_turns());
        tokio::spawn(async move {
            let no_progress = |_| {};
            crate::perf::transfer(&connection, &requests, &turns, &no_progress).await
        })
    });
    let on_time = tokio::select! {
        _ = tokio::time::sleep_until(stop_at.into()) => true,
        _ = cancel => false,
        _ = connection.closed() => false,
    };
    let ended_at = epoch.elapsed();
    end.stop_sending().await;
    // An exchange cut short by a cancel or a lost connection reports nothing.
    let perf = match perf.take() {
        Some(task) if on_time => match tokio::time::timeout(CLOSING_WAIT, task).await {
            Ok(Ok(result)) => Some(result),
            _ => None,
        },
        Some(task) => {
            task.abort();
            None
        }
        None => None,
    };
    let _ = send.finish();
    let summary_wait = CLOSING_WAIT + upload_grace(&options.request);
    let server_summary =
        match tokio::time::timeout(summary_wait, recv.read_to_end(MAX_SUMMARY_BYTES)).await {
            Ok(Ok(bytes)) => Summary::decode(&bytes)
                .map_err(|e| EndpointError::Session(format!("the server's summary: {e}")))?,
            // The server vanished or said nothing: what we measured still stands, and the
            // server's counts (frames sent, bytes received) are missing, which is said.
            Ok(Err(e)) => {
                tracing::warn!(
                    "the server's summary could not be read ({e}): its counts are missing"
                );
                Summary::default()
            }
            Err(_) => {
                tracing::warn!(
                    "the server's summary did not arrive within {:.1} s: its counts are missing",
                    summary_wait.as_secs_f64()
                );
                Summary::default()
            }
        };
    // Server capture times on the client's clock: server time − (server − client).
    let report = end.finish(clock_offset_ns.saturating_neg()).await;
    if report.error.is_none()
        && let Some(reason) = connection.close_reason()
        && !matches!(reason, quinn::ConnectionError::LocallyClosed)
        && !is_clean_close(&reason)
    {
        return Err(EndpointError::Connection(format!(
            "connection lost: {reason}"
        )));
    }
    if let Some(error) = &report.error {
        return Err(EndpointError::Session(error.clone()));
    }
    Ok(ClientEnd {
        clock_offset_ns,
        client: report,
        server_summary,
        ended_at,
        perf: perf.transpose()?,
    })
}

fn is_clean_close(reason: &quinn::ConnectionError) -> bool {
    matches!(reason, quinn::ConnectionError::ApplicationClosed(close) if close.error_code == 0u32.into())
}

/// Reads the server's reply: a status byte, then its clock or a reason.
async fn read_reply(
    recv: &mut quinn::RecvStream,
    connection: &quinn::Connection,
) -> Result<Reply, EndpointError> {
    let failed = |e: &dyn std::fmt::Display| {
        // A refusal closes the connection with the reason: show that rather than the read.
        match connection.close_reason() {
            Some(quinn::ConnectionError::ApplicationClosed(close)) => {
                EndpointError::Session(format!(
                    "the server refused the session: {}",
                    String::from_utf8_lossy(&close.reason)
                ))
            }
            _ => EndpointError::Connection(format!("reading the server's reply: {e}")),
        }
    };
    let mut bytes = vec![0u8; 1];
    recv.read_exact(&mut bytes).await.map_err(|e| failed(&e))?;
    let rest = match bytes[0] {
        0 => ACCEPTED_REPLY_BYTES - 1,
        _ => {
            let mut len = [0u8; 2];
            recv.read_exact(&mut len).await.map_err(|e| failed(&e))?;
            bytes.extend_from_slice(&len);
            usize::from(u16::from_be_bytes(len)).min(MAX_REASON_BYTES + 1)
        }
    };
    let start = bytes.len();
    bytes.resize(start + rest, 0);
    recv.read_exact(&mut bytes[start..])
        .await
        .map_err(|e| failed(&e))?;
    Reply::decode(&bytes).map_err(|e| EndpointError::Session(format!("the server's reply: {e}")))
}

/// A connect error with a hint when the server does not speak sessions.
fn explain_connect_error(e: &quinn::ConnectionError) -> String {
    let text = e.to_string();
    // TLS alert 120: no_application_protocol.
    if text.contains("no_application_protocol") || text.contains("0x178") {
        format!(
            "{text} (the server does not offer satquic's media/bulk sessions, ALPN {:?}: is it a \
             plain perf server? `satquic serve` offers both)",
            String::from_utf8_lossy(session::ALPN)
        )
    } else {
        text
    }
}

/// Finished sessions of a server, in the order they ended.
pub type Sessions = Arc<Mutex<Vec<ServerSession>>>;

/// Records `session` unless `limit` are kept already.
pub(crate) fn keep(sessions: &Sessions, session: ServerSession, limit: usize) {
    let mut all = sessions.lock().expect("no poisoning");
    if all.len() < limit {
        all.push(session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint;
    use crate::server::{Server, ServerOptions};
    use perfwire::session::{AppParams, BulkParams, MediaParams, SessionApp};
    use quinn::congestion::NewRenoConfig;

    fn server(epoch: Option<Instant>) -> (Server, Vec<rustls::pki_types::CertificateDer<'static>>) {
        let (cert, key) = endpoint::self_signed(vec!["localhost".into()]).unwrap();
        let identity = endpoint::parse_identity(&cert, &key).unwrap();
        let roots = identity.0.clone();
        let server = Server::start(ServerOptions {
            listen: "127.0.0.1:0".parse().unwrap(),
            identity,
            transport: endpoint::transport_recipe(Arc::new(NewRenoConfig::default()), 8 << 20),
            qlog: None,
            log_dir: None,
            socket_buffer_bytes: crate::sockbuf::MIN_SOCKET_BUFFER_BYTES,
            session_epoch: epoch,
            kept_sessions: 8,
        })
        .unwrap();
        (server, roots)
    }

    fn request(scheduler: &str) -> SessionRequest {
        SessionRequest {
            scheduler: scheduler.into(),
            duration: Duration::from_secs(3),
            apps: vec![
                SessionApp {
                    sender: Sender::Server,
                    params: AppParams::Media(MediaParams {
                        bitrate_bps: 1_000_000,
                        video: perfwire::media::VideoModel {
                            fps: 30,
                            keyframe_interval: 60,
                            keyframe_ratio: 5.0,
                            jitter: 0.2,
                        },
                        deadline: Duration::from_millis(150),
                        seed: 1,
                        adaptive: false,
                    }),
                },
                SessionApp {
                    sender: Sender::Server,
                    params: AppParams::Bulk(BulkParams {
                        rate_bps: Some(2_000_000),
                        start: Duration::ZERO,
                    }),
                },
                SessionApp {
                    sender: Sender::Client,
                    params: AppParams::Bulk(BulkParams {
                        rate_bps: Some(500_000),
                        start: Duration::ZERO,
                    }),
                },
            ],
        }
    }

    fn options(
        server: SocketAddr,
        roots: &[rustls::pki_types::CertificateDer<'static>],
        request: SessionRequest,
        shared_epoch: Option<Instant>,
    ) -> SessionOptions {
        SessionOptions {
            server,
            server_name: "localhost".into(),
            trust: Trust::Roots(roots.to_vec()),
            request,
            transport: endpoint::transport_recipe(Arc::new(NewRenoConfig::default()), 8 << 20),
            qlog: None,
            socket: None,
            socket_buffer_bytes: crate::sockbuf::MIN_SOCKET_BUFFER_BYTES,
            shared_epoch,
            perf: None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn media_and_bulk_both_ways_on_one_connection() {
        for shared in [true, false] {
            let epoch = shared.then(Instant::now);
            let (server, roots) = server(epoch);
            let address = server.local_addr().unwrap();
            let report = run(
                options(address, &roots, request("balancer"), epoch),
                std::future::pending(),
            )
            .await
            .unwrap();
            let crate::apps::AppEnd::Received(media) = &report.client.apps[0] else {
                panic!("the client receives the media");
            };
            // 3 s at 30 fps, less the handshake and what was in flight at the end.
            assert!(media.frames_received >= 75, "{}", media.frames_received);
            let sent = report.server_summary.apps[0].sent;
            assert!(sent.frames_sent >= media.frames_received, "{sent:?}");
            // Loopback: a frame of ~4 kB arrives within a few ms (loaded machines: allow 100).
            let delays: Vec<f64> = media
                .frames
                .iter()
                .map(|f| f.delay().as_secs_f64() * 1e3)
                .collect();
            let p50 = perfwire::media::DelayPercentiles::of(&delays).p50;
            assert!(p50 < 100.0, "shared clock {shared}: p50 {p50} ms");
            let crate::apps::AppEnd::Received(bulk) = &report.client.apps[1] else {
                panic!("the client receives the bulk");
            };
            // 2 Mbit/s for about 3 s.
            assert!(bulk.received_bytes > 500_000, "{}", bulk.received_bytes);
            assert!(report.client.samples.len() >= 25);
            server_side_saw_the_upload(&server, shared).await;
            server.stop().await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn perf_next_to_media_on_one_connection() {
        let (server, roots) = server(None);
        let address = server.local_addr().unwrap();
        let mut request = request("balancer");
        // Media down, then perf (a download with an upload) in place of the bulk sources.
        request.apps.truncate(1);
        request.apps.push(SessionApp {
            sender: Sender::Server,
            params: AppParams::Perf(perfwire::session::PerfParams {
                downloads: true,
                uploads: true,
            }),
        });
        let mut options = options(address, &roots, request, None);
        options.perf = Some(PerfRequests {
            download_bytes: Some(2_000_000),
            upload_bytes: 300_000,
            thresholds: vec![1_000_000],
            ..PerfRequests::default()
        });
        let report = run(options, std::future::pending()).await.unwrap();
        let perf = report.perf.as_ref().expect("the perf exchange's report");
        assert!(perf.completed && perf.verified, "{perf:?}");
        assert_eq!(
            (perf.bytes_received, perf.bytes_uploaded),
            (2_000_000, 300_000)
        );
        assert!(perf.time_to_bytes_s.contains_key(&1_000_000));
        // Its request went after the control stream's exchange.
        assert!(perf.requested_s > perf.handshake_s, "{perf:?}");
        assert_eq!(report.client.apps[1], crate::apps::AppEnd::Perf);
        // The server's account of the perf application: what it wrote and received.
        let account = report.server_summary.apps[1];
        assert_eq!(account.sent.written_bytes, 2_000_000);
        assert_eq!(account.received.received_bytes, 300_000);
        let crate::apps::AppEnd::Received(media) = &report.client.apps[0] else {
            panic!("the client receives the media");
        };
        assert!(media.frames_received >= 60, "{}", media.frames_received);
        // Counted with the server's perf requests.
        assert!(server.requests().ended >= 1, "{:?}", server.requests());
        server.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_perf_application_needs_its_exchange_and_the_other_way_round() {
        let (server, roots) = server(None);
        let address = server.local_addr().unwrap();
        let mut without = options(address, &roots, request("balancer"), None);
        without.perf = Some(PerfRequests::default());
        let error = run(without, std::future::pending()).await.unwrap_err();
        assert!(error.to_string().contains("come together"), "{error}");
        server.stop().await;
    }

    async fn server_side_saw_the_upload(server: &Server, shared: bool) {
        // The server records the session once the client has closed.
        let mut sessions = Vec::new();
        for _ in 0..100 {
            sessions = server.sessions();
            if !sessions.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let session = &sessions[0];
        assert_eq!(session.error, None);
        if shared {
            assert_eq!(session.clock_offset_ns, 0);
        }
        let report = session.report.as_ref().unwrap();
        let crate::apps::AppEnd::Received(upload) = &report.apps[2] else {
            panic!("the server receives the upload");
        };
        assert!(upload.received_bytes > 100_000, "{}", upload.received_bytes);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bad_requests_are_refused_with_the_reason_and_the_server_carries_on() {
        let (server, roots) = server(None);
        let address = server.local_addr().unwrap();
        let error = run(
            options(address, &roots, request("fastest"), None),
            std::future::pending(),
        )
        .await
        .unwrap_err()
        .to_string();
        // The client checks the name before it sends anything.
        assert!(error.contains("unknown scheduler \"fastest\""), "{error}");
        // Junk from the network: a raw client on the session ALPN.
        let one_bulk_app_named = |name: &str| {
            let mut body = vec![1u8];
            body.extend_from_slice(&1_000_000u64.to_be_bytes());
            body.push(name.len() as u8);
            body.extend_from_slice(name.as_bytes());
            body.extend_from_slice(&[1, 2, 1]);
            body.extend_from_slice(&[0; 16]);
            let mut framed = (body.len() as u32).to_be_bytes().to_vec();
            framed.extend_from_slice(&body);
            framed
        };
        let mut wrong_version = request("balancer").encode().unwrap();
        wrong_version[4] = 7;
        for (junk, expected) in [
            (vec![0xff, 0xff, 0xff, 0xff], "at most 4096"),
            (vec![0, 0, 0, 3, 1, 2, 3], "duration: message too short"),
            (wrong_version, "version"),
            (
                one_bulk_app_named("nothing"),
                "unknown scheduler \"nothing\"",
            ),
            (
                one_bulk_app_named("none")[..20].to_vec(),
                "reading the request",
            ),
        ] {
            let endpoint = endpoint::client_endpoint(
                address,
                None,
                crate::sockbuf::MIN_SOCKET_BUFFER_BYTES,
                endpoint::client_config(
                    &Trust::Roots(roots.clone()),
                    Arc::new(endpoint::transport(
                        Arc::new(NewRenoConfig::default()),
                        1 << 20,
                    )),
                    session::ALPN,
                )
                .unwrap(),
            )
            .unwrap();
            let connection = endpoint
                .connect(address, "localhost")
                .unwrap()
                .await
                .unwrap();
            let (mut send, mut recv) = connection.open_bi().await.unwrap();
            send.write_all(&junk).await.unwrap();
            // A truncated request ends with the stream.
            send.finish().unwrap();
            let reply = read_reply(&mut recv, &connection).await;
            let message = match reply {
                Ok(Reply::Refused { reason }) => reason,
                Err(e) => e.to_string(),
                Ok(other) => panic!("{junk:?} accepted: {other:?}"),
            };
            assert!(message.contains(expected), "{expected:?}: {message}");
            connection.close(0u32.into(), b"");
            endpoint.wait_idle().await;
        }
        // Still serving.
        let report = run(
            options(address, &roots, request("priority"), None),
            std::future::pending(),
        )
        .await
        .unwrap();
        assert!(report.server_summary.apps[0].sent.frames_sent > 0);
        server.stop().await;
    }

    /// Regression: a sender stopping with a frame half written dropped its stream, and quinn
    /// finishes a dropped stream: the receiver got a frame cut short (a protocol error) instead
    /// of a cancelled one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_session_ending_mid_frame_cancels_the_frame_instead_of_cutting_it_short() {
        let (server, roots) = server(None);
        // Media at four times the link's rate: frames are always being written.
        let relay = crate::relay::Relay::start(crate::relay::RelayConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            upstream: server.local_addr().unwrap(),
            flow_upstreams: Vec::new(),
            flow_clients: Vec::new(),
            forward: netsim::LinkConfig::new(2_000_000, Duration::from_millis(10)),
            return_link: netsim::LinkConfig::new(2_000_000, Duration::from_millis(10)),
            mtu_bytes: 1500,
            access_delays: Vec::new(),
            seed: 1,
            socket_buffer_bytes: None,
        })
        .unwrap();
        let mut request = request("seed-balancer");
        request.duration = Duration::from_secs(2);
        request.apps.truncate(1);
        if let AppParams::Media(media) = &mut request.apps[0].params {
            media.bitrate_bps = 8_000_000;
        }
        let report = run(
            options(relay.local_addr(), &roots, request, None),
            std::future::pending(),
        )
        .await
        .unwrap();
        assert_eq!(report.client.error, None);
        let crate::apps::AppEnd::Received(media) = &report.client.apps[0] else {
            panic!("the client receives the media");
        };
        assert!(report.server_summary.apps[0].sent.frames_sent > media.frames_received);
        relay.stop();
        server.stop().await;
    }
}
