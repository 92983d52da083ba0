//! The real-time server: one UDP socket and QUIC endpoint that accepts both perf connections
//! (ALPN "perf", served by [`crate::perf`]) and media/bulk sessions (ALPN
//! [`perfwire::session::ALPN`], served by [`crate::session`]), samples every connection as
//! the data sender ([`TracePoint`]) and writes qlog files when asked.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::Endpoint;
use quinn::crypto::rustls::QuicServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::Serialize;

use crate::endpoint::{EndpointError, TransportRecipe, io, provider};
use crate::perf::{
    LOG_INTERVAL, PerfService, RequestCounts, RequestLimits, SharedCounts, serve_perf,
};
use crate::qlog::{ConnectionQlog, QlogDir};
use crate::resume::ResumeKeeper;
use quinn_satellite::Resumption;

/// How to run the server.
pub struct ServerOptions {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Certificate chain and key.
    pub identity: (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>),
    /// Transport settings (controller, windows, ...), e.g. from [`crate::endpoint::transport`].
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
    pub fn start(options: ServerOptions) -> Result<Server, EndpointError> {
        Server::start_with_limits(options, RequestLimits::default())
    }

    /// [`Server::start`] with the given per-request limits (tests shorten the header timeout).
    pub fn start_with_limits(
        options: ServerOptions,
        limits: RequestLimits,
    ) -> Result<Server, EndpointError> {
        let (chain, key) = options.identity;
        let mut tls = rustls::ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| EndpointError::Tls(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| EndpointError::Tls(e.to_string()))?;
        tls.alpn_protocols = vec![perfwire::ALPN.to_vec(), perfwire::session::ALPN.to_vec()];
        let crypto =
            QuicServerConfig::try_from(tls).map_err(|e| EndpointError::Tls(e.to_string()))?;
        let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        config.transport_config(Arc::new(options.transport.build()));
        // With qlog or Careful Resume, each connection is accepted with a copy of this and its
        // own transport.
        let per_connection =
            (options.qlog.is_some() || options.transport.resume().is_some()).then(|| {
                PerConnection {
                    config: config.clone(),
                    transport: options.transport.clone(),
                    qlog: options.qlog.clone(),
                }
            });
        let socket = std::net::UdpSocket::bind(options.listen)
            .map_err(io(format!("binding {}", options.listen)))?;
        crate::sockbuf::size_or_warn(&socket, options.socket_buffer_bytes, "perf server socket");
        let endpoint = Endpoint::new(
            crate::endpoint::endpoint_config(),
            Some(config),
            socket,
            quinn_satellite::PreciseTimerRuntime::shared(),
        )
        .map_err(io(format!("binding {}", options.listen)))?;
        if let Some(dir) = &options.log_dir {
            std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
        }
        // The local address of a connection whose packets do not say (no IP_PKTINFO).
        let bound_ip = endpoint
            .local_addr()
            .map_err(io(format!("binding {}", options.listen)))?
            .ip();
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
                let label = format!("connection {id}");
                let local = incoming.local_ip().unwrap_or(bound_ip);
                let Accepted {
                    connecting,
                    qlog,
                    resume,
                } = accept(incoming, per_connection.as_ref(), &label, local);
                tokio::spawn(async move {
                    // A failed or vanished client ends its own task only.
                    let connected = match connecting {
                        Some(connecting) => connecting.await.ok(),
                        None => None,
                    };
                    let Some(connection) = connected else {
                        if let Some((keeper, Some(taken))) = resume {
                            keeper.put_back(&label, taken);
                        }
                        return;
                    };
                    let slot = {
                        let mut all = all.lock().expect("no poisoning");
                        all.push(Vec::new());
                        all.len() - 1
                    };
                    let logger =
                        log_connection(connection.clone(), id, log_dir, (all, slot, started));
                    let perf = PerfService {
                        id,
                        limits,
                        counts,
                        turns: None,
                    };
                    if negotiated_alpn(&connection).as_deref() == Some(perfwire::session::ALPN) {
                        let session =
                            crate::session::serve(connection.clone(), session_epoch, perf).await;
                        crate::session::keep(&kept, session, kept_sessions);
                    } else {
                        serve_perf(connection.clone(), perf).await;
                    }
                    let _ = logger.await;
                    if qlog.is_some() || resume.is_some() {
                        connection.closed().await;
                    }
                    if let Some(qlog) = qlog
                        && let Err(e) = qlog.flush()
                    {
                        eprintln!("warning: {e}");
                    }
                    if let Some((keeper, taken)) = resume {
                        // The store's file is written here: off the runtime's threads.
                        let _ = tokio::task::spawn_blocking(move || {
                            keeper.record(&label, &connection, local, taken)
                        })
                        .await;
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

/// What each connection is accepted with when it gets a transport of its own (with qlog, or
/// with a resuming recipe): the server's config to copy, the recipe, the qlog directory.
struct PerConnection {
    config: quinn::ServerConfig,
    transport: TransportRecipe,
    qlog: Option<QlogDir>,
}

/// An accepted connection on its way: the handshake, its qlog stream, and the keeper of the
/// store it resumes from with the saved parameters it took (if any).
struct Accepted {
    connecting: Option<quinn::Connecting>,
    qlog: Option<ConnectionQlog>,
    resume: Option<(Arc<ResumeKeeper>, Option<Resumption>)>,
}

/// Accepts `incoming` (connection `label`, to `local`): with the endpoint's shared config, or
/// (`per_connection`) with a transport of its own, carrying the connection's qlog stream and
/// resuming from the saved parameters of its path. A qlog file that cannot be created costs
/// the connection its qlog, not its service (a warning says so).
fn accept(
    incoming: quinn::Incoming,
    per_connection: Option<&PerConnection>,
    label: &str,
    local: IpAddr,
) -> Accepted {
    let Some(per_connection) = per_connection else {
        return Accepted {
            connecting: incoming.accept().ok(),
            qlog: None,
            resume: None,
        };
    };
    let remote = incoming.remote_address();
    let resume = per_connection
        .transport
        .resume()
        .map(|keeper| (keeper.clone(), keeper.take(label, local, remote)));
    let mut own = per_connection.transport.build_resumed(
        resume
            .as_ref()
            .and_then(|(_, taken)| taken.as_ref().map(Resumption::params)),
    );
    let qlog = per_connection.qlog.as_ref().and_then(|dir| {
        match dir.attach(
            &mut own,
            quinn::Side::Server,
            remote,
            Some(&incoming.orig_dst_cid()),
        ) {
            Ok(qlog) => Some(qlog),
            Err(e) => {
                eprintln!("warning: {e}; this connection has no qlog");
                None
            }
        }
    });
    let mut config = per_connection.config.clone();
    config.transport_config(Arc::new(own));
    Accepted {
        connecting: incoming.accept_with(Arc::new(config)).ok(),
        qlog,
        resume,
    }
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
