//! The QUIC performance protocol (draft-banks-quic-performance, ALPN "perf") on quinn + tokio:
//! the same wire format as the simulated flows. The client opens a bidirectional stream and
//! sends an 8-byte big-endian count of bytes it wants back, then its upload, then FIN; the
//! server sends the requested bytes and FIN. Data is the shared pattern, verified by offset.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use perfwire::{REQUEST_HEADER_BYTES, ReceivedRanges, Request, RequestError, pattern};
use quinn::congestion::ControllerFactory;
use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn::{Endpoint, TransportConfig, VarInt};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::Serialize;

use crate::qlog::{ConnectionQlog, QlogDir};

/// Bytes per write of pattern data.
const WRITE_CHUNK_BYTES: usize = 32 * 1024;
/// Sampling period of the per-connection log.
const LOG_INTERVAL: Duration = Duration::from_millis(100);

/// Why a perf endpoint failed.
#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    /// TLS configuration (certificates, keys).
    #[error("TLS: {0}")]
    Tls(String),
    /// Socket or file error.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// Connecting failed.
    #[error("connect: {0}")]
    Connect(String),
    /// The connection failed during the transfer.
    #[error("connection: {0}")]
    Connection(String),
    /// Received data differs from what the protocol promises.
    #[error("data mismatch at offset {offset} ({len} bytes)")]
    Corrupt {
        /// Offset of the bad chunk.
        offset: u64,
        /// Its length.
        len: usize,
    },
    /// A media/bulk session was refused or broke its protocol ([`crate::session`]).
    #[error("session: {0}")]
    Session(String),
    /// A qlog file could not be written.
    #[error(transparent)]
    Qlog(#[from] crate::qlog::QlogError),
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> PerfError {
    let context = context.into();
    move |source| PerfError::Io { context, source }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// `controller` wrapped so that each connection's bytes in flight can be read
/// ([`probe::readings_of`]): what a media/bulk session's scheduler needs. Every transport
/// satquic builds for quinn goes through this.
pub fn probed(
    controller: Arc<dyn ControllerFactory + Send + Sync>,
) -> Arc<dyn ControllerFactory + Send + Sync> {
    Arc::new(probe::ProbedFactory::per_connection(controller))
}

/// How an endpoint makes each connection's transport settings. quinn's `TransportConfig`
/// cannot be cloned and carries the connection's qlog stream, so an endpoint writing one qlog
/// file per connection ([`crate::qlog`]) needs a fresh one for every connection; without qlog
/// one is built per endpoint and shared as before.
#[derive(Clone)]
pub struct TransportRecipe(Arc<dyn Fn() -> TransportConfig + Send + Sync>);

impl TransportRecipe {
    /// `make` builds the settings; it runs once per endpoint, and once per connection with qlog.
    pub fn new(make: impl Fn() -> TransportConfig + Send + Sync + 'static) -> TransportRecipe {
        TransportRecipe(Arc::new(make))
    }

    /// A fresh `TransportConfig`.
    pub fn build(&self) -> TransportConfig {
        (self.0)()
    }
}

impl std::fmt::Debug for TransportRecipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.build(), f)
    }
}

/// Transport settings shared by both ends: the controller (probed, see [`probed`]) and
/// flow-control windows large enough for satellite BDPs.
pub fn transport(
    controller: Arc<dyn ControllerFactory + Send + Sync>,
    window_bytes: u64,
) -> TransportConfig {
    let mut t = TransportConfig::default();
    let window = VarInt::from_u64(window_bytes.min(VarInt::MAX.into_inner())).expect("clamped");
    t.stream_receive_window(window)
        .receive_window(window)
        .send_window(window_bytes)
        .max_idle_timeout(Some(
            Duration::from_secs(30)
                .try_into()
                .expect("30 s is a valid idle timeout"),
        ))
        .congestion_controller_factory(probed(controller));
    t
}

/// [`transport`] as a recipe (a fresh `TransportConfig` per connection when qlog is on).
pub fn transport_recipe(
    controller: Arc<dyn ControllerFactory + Send + Sync>,
    window_bytes: u64,
) -> TransportRecipe {
    TransportRecipe::new(move || transport(controller.clone(), window_bytes))
}

/// A self-signed certificate for `names` (when no certificate is given), as PEM strings.
pub fn self_signed(names: Vec<String>) -> Result<(String, String), PerfError> {
    let cert =
        rcgen::generate_simple_self_signed(names).map_err(|e| PerfError::Tls(e.to_string()))?;
    Ok((cert.cert.pem(), cert.signing_key.serialize_pem()))
}

/// Parses a PEM certificate chain and key.
pub fn parse_identity(
    cert_pem: &str,
    key_pem: &str,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), PerfError> {
    use rustls::pki_types::pem::PemObject;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| PerfError::Tls(format!("certificate: {e}")))?;
    if chain.is_empty() {
        return Err(PerfError::Tls(
            "certificate file holds no certificate".into(),
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|e| PerfError::Tls(format!("key: {e}")))?;
    Ok((chain, key))
}

// ---- server --------------------------------------------------------------------------------

/// How to run the server.
pub struct ServerOptions {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Certificate chain and key.
    pub identity: (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>),
    /// Transport settings (controller, windows, ...), e.g. from [`transport`].
    pub transport: TransportRecipe,
    /// Where one qlog file per connection goes, if anywhere ([`crate::qlog`]).
    pub qlog: Option<QlogDir>,
    /// Where per-connection logs (JSON lines of cwnd, RTT, bytes) go, if anywhere.
    pub log_dir: Option<PathBuf>,
    /// Receive and send buffer of the UDP socket, bytes (see [`crate::sockbuf`]); at least
    /// [`crate::sockbuf::MIN_SOCKET_BUFFER_BYTES`].
    pub socket_buffer_bytes: usize,
    /// The clock media/bulk sessions share with their clients when both run in this process
    /// (see [`crate::session`]); `None` for a server on its own.
    pub session_epoch: Option<Instant>,
    /// How many finished sessions' reports to keep for [`Server::sessions`] (the first ones):
    /// 0 for a server that runs for ever and reports nothing (`satquic serve`).
    pub kept_sessions: usize,
}

/// How long a perf request stream may take to deliver its 8-byte size header before the server
/// gives the stream back ([`RequestError::HeaderTimeout`]). A client that opens streams and
/// never writes them would otherwise hold them (and their share of the connection's stream
/// limit) for as long as it keeps the connection alive.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Limits the perf server applies to each request stream, next to the transport's own
/// (stream count: `max_concurrent_bidi_streams`, buffered bytes: the receive windows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLimits {
    /// Longest wait for a stream's complete size header, from the moment the server sees the
    /// stream.
    pub header_timeout: Duration,
}

impl Default for RequestLimits {
    fn default() -> Self {
        RequestLimits {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
        }
    }
}

/// What the perf server did with request streams so far, over all connections
/// ([`Server::requests`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestCounts {
    /// Streams being handled right now (header, upload or response under way): bounded by the
    /// connections' stream limits, and back to 0 when every request has ended.
    pub open_streams: u64,
    /// Responses sent in full (FIN) or ended by the client (STOP_SENDING, connection closed).
    pub ended: u64,
    /// Streams refused or abandoned, by reason (each also logged on stderr and sent to the
    /// client as the stream's error code).
    pub refused: BTreeMap<RequestError, u64>,
}

type SharedCounts = Arc<std::sync::Mutex<RequestCounts>>;

/// One sample of a server-side connection (the data sender), every 100 ms.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TracePoint {
    /// Time since the server started.
    pub t: Duration,
    /// Congestion window, bytes.
    pub cwnd_bytes: u64,
    /// Smoothed RTT.
    pub rtt: Duration,
    /// UDP bytes sent so far.
    pub sent_bytes: u64,
    /// Packets declared lost so far.
    pub lost_packets: u64,
    /// Packets sent so far.
    pub sent_packets: u64,
    /// Congestion events so far.
    pub congestion_events: u64,
    /// How a classifying controller (Hybla) took its losses so far; `None` for others.
    #[serde(skip)]
    pub loss_tally: Option<hybla::LossTally>,
}

/// Server-side traces of all connections, in accept order.
pub type Traces = Arc<std::sync::Mutex<Vec<Vec<TracePoint>>>>;

/// A running server: perf (ALPN "perf") and media/bulk sessions (ALPN
/// [`perfwire::session::ALPN`]) on one socket.
pub struct Server {
    endpoint: Endpoint,
    task: tokio::task::JoinHandle<()>,
    traces: Traces,
    sessions: crate::session::Sessions,
    qlog: Option<QlogDir>,
    requests: SharedCounts,
}

impl Server {
    /// Binds and starts accepting connections (each served on its own task), with the default
    /// [`RequestLimits`].
    pub fn start(options: ServerOptions) -> Result<Server, PerfError> {
        Server::start_with_limits(options, RequestLimits::default())
    }

    /// [`Server::start`] with the given per-request limits (tests shorten the header timeout).
    pub fn start_with_limits(
        options: ServerOptions,
        limits: RequestLimits,
    ) -> Result<Server, PerfError> {
        let (chain, key) = options.identity;
        let mut tls = rustls::ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| PerfError::Tls(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| PerfError::Tls(e.to_string()))?;
        tls.alpn_protocols = vec![perfwire::ALPN.to_vec(), perfwire::session::ALPN.to_vec()];
        let crypto = QuicServerConfig::try_from(tls).map_err(|e| PerfError::Tls(e.to_string()))?;
        let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        config.transport_config(Arc::new(options.transport.build()));
        // With qlog, each connection is accepted with a copy of this and its own transport.
        let per_connection = options
            .qlog
            .clone()
            .map(|dir| (config.clone(), options.transport.clone(), dir));
        let socket = std::net::UdpSocket::bind(options.listen)
            .map_err(io(format!("binding {}", options.listen)))?;
        crate::sockbuf::size_or_warn(&socket, options.socket_buffer_bytes, "perf server socket");
        let endpoint = Endpoint::new(
            quinn::EndpointConfig::default(),
            Some(config),
            socket,
            Arc::new(quinn::TokioRuntime),
        )
        .map_err(io(format!("binding {}", options.listen)))?;
        if let Some(dir) = &options.log_dir {
            std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
        }
        let accepting = endpoint.clone();
        let log_dir = options.log_dir;
        let traces: Traces = Arc::default();
        let sessions = crate::session::Sessions::default();
        let started = Instant::now();
        let all = traces.clone();
        let requests = SharedCounts::default();
        let counts = requests.clone();
        let (kept, session_epoch, kept_sessions) = (
            sessions.clone(),
            options.session_epoch,
            options.kept_sessions,
        );
        let task = tokio::spawn(async move {
            let mut next_id = 0u64;
            while let Some(incoming) = accepting.accept().await {
                next_id += 1;
                let (id, log_dir, all, kept, counts) = (
                    next_id,
                    log_dir.clone(),
                    all.clone(),
                    kept.clone(),
                    counts.clone(),
                );
                let (connecting, qlog) = accept(incoming, per_connection.as_ref());
                tokio::spawn(async move {
                    // A failed or vanished client ends its own task only.
                    let Some(connecting) = connecting else {
                        return;
                    };
                    if let Ok(connection) = connecting.await {
                        let slot = {
                            let mut all = all.lock().expect("no poisoning");
                            all.push(Vec::new());
                            all.len() - 1
                        };
                        let logger =
                            log_connection(connection.clone(), id, log_dir, (all, slot, started));
                        if negotiated_alpn(&connection).as_deref() == Some(perfwire::session::ALPN)
                        {
                            let session =
                                crate::session::serve(connection.clone(), session_epoch).await;
                            crate::session::keep(&kept, session, kept_sessions);
                        } else {
                            serve_perf(connection.clone(), id, limits, counts).await;
                        }
                        let _ = logger.await;
                        if let Some(qlog) = qlog {
                            connection.closed().await;
                            if let Err(e) = qlog.flush() {
                                eprintln!("warning: {e}");
                            }
                        }
                    }
                });
            }
        });
        Ok(Server {
            endpoint,
            task,
            traces,
            sessions,
            qlog: options.qlog,
            requests,
        })
    }

    /// What happened to perf request streams so far (open, ended, refused by reason).
    pub fn requests(&self) -> RequestCounts {
        self.requests.lock().expect("no poisoning").clone()
    }

    /// The bound address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.endpoint.local_addr()
    }

    /// Server-side traces of every connection so far, in accept order.
    pub fn traces(&self) -> Vec<Vec<TracePoint>> {
        self.traces.lock().expect("no poisoning").clone()
    }

    /// Media/bulk sessions that ended so far, in the order they ended (the first
    /// [`ServerOptions::kept_sessions`]).
    pub fn sessions(&self) -> Vec<crate::session::ServerSession> {
        self.sessions.lock().expect("no poisoning").clone()
    }

    /// Open connections right now.
    pub fn open_connections(&self) -> usize {
        self.endpoint.open_connections()
    }

    /// Closes the endpoint, and writes out the qlog files still open.
    pub async fn stop(self) {
        self.endpoint.close(0u32.into(), b"server stopping");
        self.task.abort();
        self.endpoint.wait_idle().await;
        if let Some(dir) = &self.qlog
            && let Err(e) = dir.flush_all()
        {
            eprintln!("warning: {e}");
        }
    }
}

/// Accepts `incoming`: with qlog (`per_connection`: the server's config, its transport recipe,
/// the directory) with a transport of its own carrying the connection's qlog stream, else with
/// the endpoint's shared config. A qlog file that cannot be created costs the connection its
/// qlog, not its service (a warning says so).
fn accept(
    incoming: quinn::Incoming,
    per_connection: Option<&(quinn::ServerConfig, TransportRecipe, QlogDir)>,
) -> (Option<quinn::Connecting>, Option<ConnectionQlog>) {
    let Some((config, transport, dir)) = per_connection else {
        return (incoming.accept().ok(), None);
    };
    let mut own = transport.build();
    let qlog = match dir.attach(
        &mut own,
        quinn::Side::Server,
        incoming.remote_address(),
        Some(&incoming.orig_dst_cid()),
    ) {
        Ok(qlog) => Some(qlog),
        Err(e) => {
            eprintln!("warning: {e}; this connection has no qlog");
            None
        }
    };
    let mut config = config.clone();
    config.transport_config(Arc::new(own));
    (incoming.accept_with(Arc::new(config)).ok(), qlog)
}

#[derive(Serialize)]
struct LogLine {
    t_s: f64,
    cwnd_bytes: u64,
    rtt_ms: f64,
    sent_bytes: u64,
    lost_packets: u64,
}

/// The ALPN the client and server agreed on.
fn negotiated_alpn(connection: &quinn::Connection) -> Option<Vec<u8>> {
    connection
        .handshake_data()?
        .downcast::<quinn::crypto::rustls::HandshakeData>()
        .ok()?
        .protocol
}

/// Samples the connection (the server is the data sender) every [`LOG_INTERVAL`] until it
/// closes: into `traces[slot]`, and as JSON lines into `log_dir` if given.
fn log_connection(
    connection: quinn::Connection,
    id: u64,
    log_dir: Option<PathBuf>,
    (traces, slot, server_start): (Traces, usize, Instant),
) -> tokio::task::JoinHandle<()> {
    {
        tokio::spawn(async move {
            use std::io::Write as _;
            let mut file = log_dir.and_then(|dir| {
                std::fs::File::create(dir.join(format!("connection-{id}.jsonl"))).ok()
            });
            let start = Instant::now();
            loop {
                let s = connection.stats();
                traces.lock().expect("no poisoning")[slot].push(TracePoint {
                    t: server_start.elapsed(),
                    cwnd_bytes: s.path.cwnd,
                    rtt: s.path.rtt,
                    sent_bytes: s.udp_tx.bytes,
                    lost_packets: s.path.lost_packets,
                    sent_packets: s.path.sent_packets,
                    congestion_events: s.path.congestion_events,
                    loss_tally: probe::inner_of(connection.congestion_state())
                        .and_then(hybla::loss_report_of)
                        .map(|report| report.tally),
                });
                let line = LogLine {
                    t_s: start.elapsed().as_secs_f64(),
                    cwnd_bytes: s.path.cwnd,
                    rtt_ms: s.path.rtt.as_secs_f64() * 1e3,
                    sent_bytes: s.udp_tx.bytes,
                    lost_packets: s.path.lost_packets,
                };
                if let Some(file) = &mut file {
                    let _ = writeln!(
                        file,
                        "{}",
                        serde_json::to_string(&line).expect("serializable")
                    );
                }
                if connection.close_reason().is_some() {
                    break;
                }
                tokio::time::sleep(LOG_INTERVAL).await;
            }
        })
    }
}

/// The perf protocol: every bidirectional stream is a request; a unidirectional stream is
/// refused ([`RequestError::UnidirectionalStream`]), so its data is neither read nor kept.
async fn serve_perf(
    connection: quinn::Connection,
    id: u64,
    limits: RequestLimits,
    counts: SharedCounts,
) {
    let uni = {
        let (connection, counts) = (connection.clone(), counts.clone());
        tokio::spawn(async move {
            while let Ok(mut recv) = connection.accept_uni().await {
                let error = RequestError::UnidirectionalStream;
                let stream = recv.id();
                let _ = recv.stop(VarInt::from_u64(error.code()).expect("small code"));
                refuse(&counts, id, stream, error, "stopped it");
            }
        })
    };
    while let Ok((send, recv)) = connection.accept_bi().await {
        tokio::spawn(serve_stream(send, recv, id, limits, counts.clone()));
    }
    uni.abort();
}

/// Counts and logs a refused or abandoned request stream.
fn refuse(
    counts: &SharedCounts,
    connection: u64,
    stream: quinn::StreamId,
    error: RequestError,
    action: &str,
) {
    *counts
        .lock()
        .expect("no poisoning")
        .refused
        .entry(error)
        .or_default() += 1;
    eprintln!(
        "perf server: connection {connection}, stream {stream}: {error}; {action} with error code {:#x}",
        error.code()
    );
}

/// Keeps [`RequestCounts::open_streams`] right however a stream's handler ends.
struct OpenStream(SharedCounts);

impl OpenStream {
    fn new(counts: SharedCounts) -> OpenStream {
        counts.lock().expect("no poisoning").open_streams += 1;
        OpenStream(counts)
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.lock().expect("no poisoning").open_streams -= 1;
    }
}

/// How reading a request's size header ended, if not with the header.
enum HeaderFault {
    /// The request is malformed or abandoned: refuse it with this error.
    Refused(RequestError),
    /// The connection is gone; there is nobody to tell.
    Gone,
}

/// Reads the 8-byte size header within `timeout`.
async fn read_header(
    recv: &mut quinn::RecvStream,
    timeout: Duration,
) -> Result<[u8; REQUEST_HEADER_BYTES as usize], HeaderFault> {
    let mut header = [0u8; REQUEST_HEADER_BYTES as usize];
    let deadline = tokio::time::Instant::now() + timeout;
    let mut filled = 0;
    while filled < header.len() {
        // `read` is cancel-safe: a timeout loses no bytes.
        match tokio::time::timeout_at(deadline, recv.read(&mut header[filled..])).await {
            Err(_) => return Err(HeaderFault::Refused(RequestError::HeaderTimeout)),
            Ok(Ok(Some(n))) => filled += n,
            Ok(Ok(None)) => return Err(HeaderFault::Refused(RequestError::TruncatedHeader)),
            Ok(Err(quinn::ReadError::Reset(_))) => {
                return Err(HeaderFault::Refused(RequestError::RequestReset));
            }
            Ok(Err(_)) => return Err(HeaderFault::Gone),
        }
    }
    Ok(header)
}

/// Reads the upload after the header until FIN: bytes received and whether they were the
/// satquic pattern; `Err` when the client reset the stream. A peer whose upload is not the
/// pattern (another perf implementation) is still drained and answered.
async fn drain_upload(mut recv: quinn::RecvStream) -> Result<(u64, bool), RequestError> {
    let (mut received, mut ours) = (0u64, true);
    loop {
        match recv.read_chunk(usize::MAX, true).await {
            Ok(Some(chunk)) => {
                ours = ours && pattern::matches(chunk.offset - REQUEST_HEADER_BYTES, &chunk.bytes);
                received = chunk.offset - REQUEST_HEADER_BYTES + chunk.bytes.len() as u64;
            }
            Ok(None) => return Ok((received, ours)),
            Err(quinn::ReadError::Reset(_)) => return Err(RequestError::RequestReset),
            // The connection is gone; the response's writes fail too.
            Err(_) => return Ok((received, ours)),
        }
    }
}

/// One request: the size header (within `limits.header_timeout`), then the response while the
/// upload is drained. A malformed or abandoned request is refused: RESET_STREAM and
/// STOP_SENDING with its [`RequestError`] code, a log line, a count. Memory per stream is
/// constant: the response is generated chunk by chunk and quinn buffers at most the send
/// window, whatever size was asked for.
async fn serve_stream(
    mut send: quinn::SendStream,
    mut recv: quinn::RecvStream,
    connection: u64,
    limits: RequestLimits,
    counts: SharedCounts,
) {
    let _open = OpenStream::new(counts.clone());
    let stream = send.id();
    let refuse_with = |send: &mut quinn::SendStream, error: RequestError| {
        let _ = send.reset(VarInt::from_u64(error.code()).expect("small code"));
        refuse(&counts, connection, stream, error, "reset the response");
    };
    let header = match read_header(&mut recv, limits.header_timeout).await {
        Ok(header) => header,
        Err(HeaderFault::Refused(error)) => {
            let _ = recv.stop(VarInt::from_u64(error.code()).expect("small code"));
            refuse_with(&mut send, error);
            return;
        }
        Err(HeaderFault::Gone) => return,
    };
    let requested = Request::from_header(header).requested_bytes();
    let mut upload = tokio::spawn(drain_upload(recv));
    let mut upload_done = false;
    let mut offset = 0u64;
    let mut pending = Bytes::new();
    // quinn-proto 0.11 reports a writer blocked on *connection* flow control as Blocked before
    // it looks at STOP_SENDING, so a stopped stream whose client stopped reading would wait
    // for credit that never comes: the stop is watched on its own.
    let mut stopped = std::pin::pin!(send.stopped());
    while offset < requested || !pending.is_empty() {
        if pending.is_empty() {
            let len = (requested - offset).min(WRITE_CHUNK_BYTES as u64) as usize;
            pending = pattern::chunk(offset, len);
            offset += len as u64;
        }
        tokio::select! {
            // A reset upload abandons the response at once, even while it waits for flow
            // control; `write_chunks` is cancel-safe, so `pending` keeps what is not yet sent.
            joined = &mut upload, if !upload_done => {
                upload_done = true;
                if let Ok(Err(error)) = joined {
                    refuse_with(&mut send, error);
                    return;
                }
            }
            _ = &mut stopped => {
                // STOP_SENDING (or the connection closed): the client ended it.
                counts.lock().expect("no poisoning").ended += 1;
                upload.abort();
                return;
            }
            written = send.write_chunks(std::slice::from_mut(&mut pending)) => {
                if written.is_err() {
                    // STOP_SENDING or the connection closed: the client ended it.
                    counts.lock().expect("no poisoning").ended += 1;
                    upload.abort();
                    return;
                }
            }
        }
    }
    let _ = send.finish();
    if !upload_done && let Ok(Err(error)) = upload.await {
        refuse_with(&mut send, error);
        return;
    }
    let _ = send.stopped().await;
    counts.lock().expect("no poisoning").ended += 1;
}

// ---- client --------------------------------------------------------------------------------

/// How the client checks the server's certificate.
pub enum Trust {
    /// Only certificates chaining to these roots.
    Roots(Vec<CertificateDer<'static>>),
    /// Anything (self-signed test peers). Never for real servers.
    InsecureAcceptAnything,
}

/// What to fetch.
pub struct ClientOptions {
    /// Server (or relay) address.
    pub server: SocketAddr,
    /// Name expected in the certificate.
    pub server_name: String,
    /// Certificate policy.
    pub trust: Trust,
    /// Bytes to download; None for unlimited (bounded by `duration`).
    pub download_bytes: Option<u64>,
    /// Bytes to upload.
    pub upload_bytes: u64,
    /// Stop after this long (required for unlimited downloads).
    pub duration: Option<Duration>,
    /// Transport settings (controller for the upload direction, windows, ...).
    pub transport: TransportRecipe,
    /// Where the connection's qlog file goes, if anywhere ([`crate::qlog`]).
    pub qlog: Option<QlogDir>,
    /// The UDP socket to send from, bound in advance (e.g. so that a relay knows the flow
    /// by its address); None binds a fresh one.
    pub socket: Option<std::net::UdpSocket>,
    /// Receive and send buffer of the UDP socket, bytes (see [`crate::sockbuf`]).
    pub socket_buffer_bytes: usize,
    /// Sizes whose arrival times are reported.
    pub thresholds: Vec<u64>,
    /// Check every byte against the satquic pattern (false only for other perf servers,
    /// whose content the protocol leaves open).
    pub verify: bool,
    /// After a completed download, wait this long and download the same again on the same
    /// connection (draft-kuhn "repeat").
    pub repeat_after: Option<Duration>,
}

/// What the client measured.
#[derive(Debug, Clone, Serialize)]
pub struct ClientReport {
    /// Server address.
    pub server: String,
    /// Handshake duration, s.
    pub handshake_s: f64,
    /// Request → first response byte, s.
    pub time_to_first_byte_s: Option<f64>,
    /// Request → last byte (or stop), s.
    pub transfer_s: f64,
    /// Bytes received in order and verified.
    pub bytes_received: u64,
    /// Bytes uploaded.
    pub bytes_uploaded: u64,
    /// In-order goodput over the transfer, bit/s.
    pub goodput_bps: f64,
    /// Request → each size in order, s.
    pub time_to_bytes_s: BTreeMap<u64, f64>,
    /// Whether the whole requested download arrived.
    pub completed: bool,
    /// Whether every byte was checked against the pattern (false: counted only).
    pub verified: bool,
    /// Time series (t since request, bytes in order) at 100 ms, for plots.
    pub samples: Vec<(f64, u64)>,
    /// The repeated request of `repeat_after`, if any.
    pub repeats: Vec<RepeatReport>,
}

/// A later request on the same connection (draft-kuhn "repeat").
#[derive(Debug, Clone, Serialize)]
pub struct RepeatReport {
    /// When it was sent, seconds after the first request.
    pub requested_s: f64,
    /// Request → last byte (or stop), s.
    pub transfer_s: f64,
    /// Bytes received in order and verified.
    pub bytes_received: u64,
    /// Request → each size in order, s.
    pub time_to_bytes_s: BTreeMap<u64, f64>,
    /// Whether the whole requested download arrived.
    pub completed: bool,
    /// Time series (t since this request, bytes in order) at 100 ms.
    pub samples: Vec<(f64, u64)>,
}

#[derive(Debug)]
struct AcceptAnything(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAnything {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A client configuration offering `alpn` (public so that tests can speak raw perf, e.g.
/// malformed requests, to the server).
pub fn client_config(
    trust: &Trust,
    transport: Arc<TransportConfig>,
    alpn: &[u8],
) -> Result<quinn::ClientConfig, PerfError> {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| PerfError::Tls(e.to_string()))?;
    let mut tls = match trust {
        Trust::Roots(roots) => {
            let mut store = rustls::RootCertStore::empty();
            for r in roots {
                store
                    .add(r.clone())
                    .map_err(|e| PerfError::Tls(format!("CA certificate: {e}")))?;
            }
            builder.with_root_certificates(store).with_no_client_auth()
        }
        Trust::InsecureAcceptAnything => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnything(provider())))
            .with_no_client_auth(),
    };
    tls.alpn_protocols = vec![alpn.to_vec()];
    let crypto = QuicClientConfig::try_from(tls).map_err(|e| PerfError::Tls(e.to_string()))?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(transport);
    Ok(config)
}

/// A client's transport for its one connection to `server`, with the connection's qlog
/// stream attached when `qlog` is given.
pub(crate) fn client_transport(
    recipe: &TransportRecipe,
    qlog: Option<&QlogDir>,
    server: SocketAddr,
) -> Result<(Arc<TransportConfig>, Option<ConnectionQlog>), PerfError> {
    let mut transport = recipe.build();
    let qlog = qlog
        .map(|dir| dir.attach(&mut transport, quinn::Side::Client, server, None))
        .transpose()?;
    Ok((Arc::new(transport), qlog))
}

/// A client endpoint on `socket`, or on a fresh UDP socket of `server`'s address family.
pub fn client_endpoint(
    server: SocketAddr,
    socket: Option<std::net::UdpSocket>,
    socket_buffer_bytes: usize,
    config: quinn::ClientConfig,
) -> Result<Endpoint, PerfError> {
    let socket = match socket {
        Some(socket) => socket,
        None => {
            let bind: SocketAddr = if server.is_ipv4() {
                "0.0.0.0:0"
            } else {
                "[::]:0"
            }
            .parse()
            .expect("valid");
            std::net::UdpSocket::bind(bind).map_err(io("binding the client socket"))?
        }
    };
    crate::sockbuf::size_or_warn(&socket, socket_buffer_bytes, "perf client socket");
    let mut endpoint = Endpoint::new(
        quinn::EndpointConfig::default(),
        None,
        socket,
        Arc::new(quinn::TokioRuntime),
    )
    .map_err(io("binding the client socket"))?;
    endpoint.set_default_client_config(config);
    Ok(endpoint)
}

/// One request on an open connection, as measured by the client.
struct Exchange {
    request_at: Instant,
    first_byte: Option<Duration>,
    transfer: Duration,
    bytes_received: u64,
    bytes_uploaded: u64,
    reached: BTreeMap<u64, f64>,
    samples: Vec<(f64, u64)>,
    completed: bool,
}

/// Sends one request on `connection` and reads the response until FIN or `deadline`.
async fn exchange(
    connection: &quinn::Connection,
    options: &ClientOptions,
    deadline: Option<Instant>,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<Exchange, PerfError> {
    let (mut send, mut recv) = connection
        .open_bi()
        .await
        .map_err(|e| PerfError::Connection(e.to_string()))?;
    let request = options
        .download_bytes
        .map_or(Request::Unlimited, Request::Bytes);
    let request_at = Instant::now();
    send.write_chunk(Bytes::copy_from_slice(&request.header()))
        .await
        .map_err(|e| PerfError::Connection(e.to_string()))?;
    let upload_bytes = options.upload_bytes;
    let uploader = tokio::spawn(async move {
        let mut offset = 0u64;
        while offset < upload_bytes {
            let len = (upload_bytes - offset).min(WRITE_CHUNK_BYTES as u64) as usize;
            if send.write_chunk(pattern::chunk(offset, len)).await.is_err() {
                break;
            }
            offset += len as u64;
        }
        let _ = send.finish();
        offset
    });
    let mut ranges = ReceivedRanges::default();
    let mut first_byte = None;
    let mut reached = BTreeMap::new();
    let mut samples = Vec::new();
    let mut next_sample = LOG_INTERVAL;
    let mut completed = false;
    loop {
        let read = recv.read_chunk(usize::MAX, false);
        let chunk = match deadline {
            Some(d) => match tokio::time::timeout_at(d.into(), read).await {
                Ok(r) => r,
                Err(_) => break,
            },
            None => read.await,
        };
        let chunk = match chunk {
            Ok(Some(c)) => c,
            Ok(None) => {
                completed = true;
                break;
            }
            Err(quinn::ReadError::ConnectionLost(reason)) => {
                return Err(PerfError::Connection(format!("connection lost: {reason}")));
            }
            Err(quinn::ReadError::Reset(code)) => {
                return Err(PerfError::Connection(format!(
                    "the server reset the response: {}",
                    RequestError::describe(code.into_inner())
                )));
            }
            Err(e) => return Err(PerfError::Connection(e.to_string())),
        };
        if options.verify && !pattern::matches(chunk.offset, &chunk.bytes) {
            return Err(PerfError::Corrupt {
                offset: chunk.offset,
                len: chunk.bytes.len(),
            });
        }
        first_byte.get_or_insert_with(|| request_at.elapsed());
        ranges.insert(chunk.offset, chunk.offset + chunk.bytes.len() as u64);
        let now = request_at.elapsed();
        for &t in &options.thresholds {
            if ranges.prefix() >= t {
                reached.entry(t).or_insert(now.as_secs_f64());
            }
        }
        while now >= next_sample {
            samples.push((next_sample.as_secs_f64(), ranges.prefix()));
            next_sample += LOG_INTERVAL;
        }
        progress(ranges.prefix());
    }
    let transfer = request_at.elapsed();
    let bytes_uploaded = uploader.await.unwrap_or(0);
    Ok(Exchange {
        request_at,
        first_byte,
        transfer,
        bytes_received: ranges.prefix(),
        bytes_uploaded,
        reached,
        samples,
        completed: completed && options.download_bytes.is_some_and(|n| ranges.prefix() == n),
    })
}

/// Connects, requests (twice with `repeat_after`), verifies; `progress` sees the in-order byte
/// count of the current request as it grows.
pub async fn get(
    mut options: ClientOptions,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<ClientReport, PerfError> {
    let (transport, qlog) =
        client_transport(&options.transport, options.qlog.as_ref(), options.server)?;
    let endpoint = client_endpoint(
        options.server,
        options.socket.take(),
        options.socket_buffer_bytes,
        client_config(&options.trust, transport, perfwire::ALPN)?,
    )?;
    let started = Instant::now();
    let connection = endpoint
        .connect(options.server, &options.server_name)
        .map_err(|e| PerfError::Connect(e.to_string()))?
        .await
        .map_err(|e| PerfError::Connect(e.to_string()))?;
    let handshake = started.elapsed();
    let deadline = options.duration.map(|d| Instant::now() + d);
    let first = exchange(&connection, &options, deadline, progress).await?;
    let mut repeats = Vec::new();
    if let Some(gap) = options.repeat_after
        && first.completed
    {
        tokio::time::sleep(gap).await;
        let again = exchange(&connection, &options, deadline, progress).await?;
        repeats.push(RepeatReport {
            requested_s: (again.request_at - first.request_at).as_secs_f64(),
            transfer_s: again.transfer.as_secs_f64(),
            bytes_received: again.bytes_received,
            time_to_bytes_s: again.reached,
            completed: again.completed,
            samples: again.samples,
        });
    }
    connection.close(0u32.into(), b"done");
    endpoint.wait_idle().await;
    if let Some(qlog) = qlog {
        qlog.flush()?;
    }
    Ok(ClientReport {
        server: options.server.to_string(),
        handshake_s: handshake.as_secs_f64(),
        time_to_first_byte_s: first.first_byte.map(|d| d.as_secs_f64()),
        transfer_s: first.transfer.as_secs_f64(),
        bytes_received: first.bytes_received,
        bytes_uploaded: first.bytes_uploaded,
        goodput_bps: first.bytes_received as f64 * 8.0 / first.transfer.as_secs_f64().max(1e-9),
        time_to_bytes_s: first.reached,
        completed: first.completed,
        verified: options.verify,
        samples: first.samples,
        repeats,
    })
}
