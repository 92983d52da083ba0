//! The real-time backend: a scenario played over real UDP sockets on loopback — one quinn
//! server per flow (its own controller and transport preset), the relay imposing the
//! scenario's path on the same `netsim::Path` the simulator uses (access delays included), one
//! client per flow — producing the same [`RunOutcome`] as the simulator, with per-flow
//! bottleneck counters, queue samples, per-application samples and the forward link's
//! serialized bytes, so every output and comparison works unchanged.
//!
//! Supported: a perf application (a download, sized or unlimited, an optional upload and an
//! optional repeat), or media and bulk applications (any number, either direction) under the
//! flow's scheduler, with at most one perf application next to them — one `emu::session` per
//! flow, both ends on the run's clock (the relay's time zero), so frame delays and capacity
//! steps are measured as in the simulator; flows starting at any time. Not yet: upload-only
//! perf, two perf applications on one connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use emu::endpoint::{self, Trust};
use emu::perf::{self, ClientOptions};
use emu::relay::{Relay, RelayConfig};
use emu::server::{Server, ServerOptions, TracePoint};
use emu::session::{ServerSession, SessionOptions};
use scenario::apps::AppKind;
use sim::RunOutcome;

use quinn_proto::Side;

use crate::controllers;
use scenario::RunSpec;
use scenario::Scenario;
mod measured;
mod outcome;
mod requests;

use measured::FlowResult;
pub use measured::{session_app_outcome, shift_sent};
use outcome::outcome;
use requests::{perf_requests, session_request};

/// Why a real-time run failed.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// The scenario uses something the real-time backend cannot do yet.
    #[error("--backend emu: {0}")]
    Unsupported(String),
    /// A controller name or parameter is invalid.
    #[error(transparent)]
    Controller(#[from] scenario::FieldError),
    /// The perf endpoints failed.
    #[error(transparent)]
    Perf(#[from] endpoint::EndpointError),
    /// Sockets, runtime, relay.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Ctrl-C.
    #[error("interrupted")]
    Interrupted,
    /// The qlog directory cannot be written.
    #[error(transparent)]
    Qlog(#[from] emu::qlog::QlogError),
}

/// Whether flow `flow` runs media and bulk applications (an `emu::session`) rather than perf.
fn is_session(flow: &scenario::FlowSpec) -> bool {
    flow.apps
        .iter()
        .any(|a| matches!(a.kind, AppKind::Media(_) | AppKind::Bulk(_)))
}

fn check_supported(scenario: &Scenario) -> Result<(), EmuError> {
    for (i, f) in scenario.flows.iter().enumerate() {
        if f.reconnect_after.is_some() {
            return Err(EmuError::Unsupported(format!(
                "flow[{i}].reconnect_after: a second connection runs in the simulator only; in \
                 real time, two `satquic get`s against one `satquic serve` show Careful Resume"
            )));
        }
        if is_session(f) {
            let mut perf = f.apps.iter().filter(|a| matches!(a.kind, AppKind::Perf(_)));
            if let (Some(first), Some(second)) = (perf.next(), perf.next()) {
                return Err(EmuError::Unsupported(format!(
                    "flow[{i}].app {:?}: a second perf application next to {:?}: a real-time \
                     session runs one (give it the whole exchange)",
                    second.name, first.name
                )));
            }
            if let Some(perf) = f.perf()
                && perf.download.is_none()
            {
                return Err(EmuError::Unsupported(format!(
                    "flow[{i}]: perf needs a download in real time"
                )));
            }
            if f.apps.len() > perfwire::session::MAX_APPS {
                return Err(EmuError::Unsupported(format!(
                    "flow[{i}]: at most {} applications per flow in real time",
                    perfwire::session::MAX_APPS
                )));
            }
            continue;
        }
        // Not a session: perf applications only.
        match f.apps.as_slice() {
            [app] if matches!(&app.kind, AppKind::Perf(p) if p.download.is_some()) => {}
            [_] => return Err(EmuError::Unsupported(format!("flow[{i}] needs a download"))),
            _ => {
                return Err(EmuError::Unsupported(format!(
                    "flow[{i}]: one perf application per flow"
                )));
            }
        }
    }
    Ok(())
}

/// How long the run waits for a server to record a session after its client returned.
const SESSION_RECORD_WAIT: Duration = Duration::from_secs(3);

/// Plays `scenario` in real time; `progress` sees the elapsed time.
///
/// Each flow gets its own server (its own controller and transport settings, as in the
/// simulator) behind one relay that imposes the scenario's path, access delays included. The
/// run's clock starts with the relay's model, and media/bulk sessions measure on it at both
/// ends.
pub fn run(
    scenario: &Scenario,
    spec: &RunSpec,
    cancel: &AtomicBool,
    progress: &dyn Fn(Duration),
) -> Result<RunOutcome, EmuError> {
    run_with_qlog(scenario, spec, None, cancel, progress)
}

/// [`run`], writing one qlog file per connection into `qlog_dir` if given, for the flows with
/// `qlog` set: per flow `FLOW-server-…` and `FLOW-client-…` (`emu::qlog` names the rest), event
/// times on the run's clock like the simulator's qlog.
pub fn run_with_qlog(
    scenario: &Scenario,
    spec: &RunSpec,
    qlog_dir: Option<&std::path::Path>,
    cancel: &AtomicBool,
    progress: &dyn Fn(Duration),
) -> Result<RunOutcome, EmuError> {
    check_supported(scenario)?;
    let qlog_dir = qlog_dir.map(emu::qlog::QlogDir::create).transpose()?;
    let mut controllers = Vec::new();
    for (index, flow) in scenario.flows.iter().enumerate() {
        let spec = crate::plan::flow_controller(flow, spec)?;
        controllers.push(controllers::build(
            &spec,
            Some(crate::plan::declared_bdp_bytes(scenario, index)),
            &controllers::PathRecord::default(),
            &format!("flow[{index}].cc"),
        )?);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (cert, key) = endpoint::self_signed(vec!["localhost".into()])?;
    let identity = endpoint::parse_identity(&cert, &key)?;
    let roots = identity.0.clone();
    runtime.block_on(async {
        let socket_buffer_bytes = emu::sockbuf::buffer_bytes_for(
            scenario.forward.rate_bps.max(scenario.return_link.rate_bps),
            scenario.forward.delay + scenario.return_link.delay,
        );
        // The run's clock: the relay's time zero (its capacity schedule), the flows' start
        // times, and both ends of every media/bulk session.
        let epoch = Instant::now();
        // One qlog directory handle per flow that asks for qlog (`qlog = true`, or `run
        // --qlog`): its files named after the flow.
        let flow_qlog = |index: usize| {
            let flow = &scenario.flows[index];
            qlog_dir
                .as_ref()
                .filter(|_| flow.qlog)
                .map(|dir| dir.clone().prefixed(&flow.name).with_epoch(epoch))
        };
        // The simulator's transport settings (satellite preset + scenario overrides) for each
        // flow, so the two backends differ only in their clocks and sockets; the controller
        // probed for bytes in flight, as the simulator's.
        let mut servers = Vec::new();
        for (index, controller) in controllers.iter().enumerate() {
            let settings = crate::plan::transport_settings(scenario, index);
            let factory = controller.factory.clone();
            servers.push(Server::start(ServerOptions {
                listen: "127.0.0.1:0".parse().expect("valid"),
                identity: endpoint::parse_identity(&cert, &key)?,
                transport: endpoint::TransportRecipe::new(move || {
                    sim::run_transport(&settings, Side::Server, endpoint::probed(factory.clone()))
                }),
                qlog: flow_qlog(index),
                log_dir: None,
                socket_buffer_bytes,
                session_epoch: Some(epoch),
                // One connection per server.
                kept_sessions: 1,
            })?);
        }
        let flow_upstreams = servers
            .iter()
            .map(Server::local_addr)
            .collect::<Result<Vec<_>, _>>()?;
        // Each flow's client socket, bound now so the relay knows every flow by its client's
        // address, however the clients' first datagrams race on a busy machine.
        let client_sockets = scenario
            .flows
            .iter()
            .map(|_| std::net::UdpSocket::bind("127.0.0.1:0"))
            .collect::<Result<Vec<_>, _>>()?;
        let flow_clients = client_sockets
            .iter()
            .map(std::net::UdpSocket::local_addr)
            .collect::<Result<Vec<_>, _>>()?;
        let relay = Relay::start_at(
            RelayConfig {
                listen: "127.0.0.1:0".parse().expect("valid"),
                upstream: flow_upstreams[0],
                flow_upstreams,
                forward: scenario.forward.clone(),
                return_link: scenario.return_link.clone(),
                mtu_bytes: scenario.mtu_bytes,
                access_delays: scenario.flows.iter().map(|f| f.access_delay).collect(),
                flow_clients,
                seed: spec.seed,
                socket_buffer_bytes: None,
            },
            epoch,
        )?;
        let relay_address = relay.local_addr();
        let mut tasks = Vec::new();
        for ((index, flow), socket) in scenario.flows.iter().enumerate().zip(client_sockets) {
            let settings = crate::plan::transport_settings(scenario, index);
            let factory = controllers[index].factory.clone();
            let transport = endpoint::TransportRecipe::new(move || {
                sim::run_transport(&settings, Side::Client, endpoint::probed(factory.clone()))
            });
            let start = flow.start;
            if is_session(flow) {
                let options = SessionOptions {
                    server: relay_address,
                    server_name: "localhost".into(),
                    trust: Trust::Roots(roots.clone()),
                    request: session_request(scenario, spec, index),
                    transport,
                    qlog: flow_qlog(index),
                    socket: Some(socket),
                    socket_buffer_bytes,
                    shared_epoch: Some(epoch),
                    perf: flow.perf().map(|_| perf_requests(scenario, index)),
                };
                tasks.push(tokio::spawn(async move {
                    tokio::time::sleep_until((epoch + start).into()).await;
                    FlowResult::Session(emu::session::run(options, std::future::pending()).await)
                }));
                continue;
            }
            let options = ClientOptions {
                server: relay_address,
                server_name: "localhost".into(),
                trust: Trust::Roots(roots.clone()),
                transport,
                qlog: flow_qlog(index),
                socket: Some(socket),
                socket_buffer_bytes,
                requests: perf_requests(scenario, index),
            };
            tasks.push(tokio::spawn(async move {
                tokio::time::sleep_until((epoch + start).into()).await;
                let began = epoch.elapsed();
                FlowResult::Perf(began, perf::get(options, &|_| {}).await)
            }));
        }
        let mut ticker = tokio::time::interval(Duration::from_millis(100));
        while !tasks.iter().all(|t| t.is_finished()) {
            ticker.tick().await;
            progress(epoch.elapsed());
            if cancel.load(Ordering::Relaxed) {
                for t in &tasks {
                    t.abort();
                }
                return Err(EmuError::Interrupted);
            }
        }
        let mut results = Vec::new();
        for t in tasks {
            results.push(
                t.await
                    .map_err(|e| EmuError::Io(std::io::Error::other(e.to_string())))?,
            );
        }
        let end_time = epoch
            .elapsed()
            .min(scenario.duration.max(Duration::from_millis(1)));
        // A session's server records it once the client has closed: a moment after the
        // client returned.
        let mut sessions: Vec<Option<ServerSession>> = Vec::new();
        for (server, flow) in servers.iter().zip(&scenario.flows) {
            let mut session = None;
            if is_session(flow) {
                let waited = Instant::now();
                while session.is_none() && waited.elapsed() < SESSION_RECORD_WAIT {
                    session = server.sessions().into_iter().next();
                    if session.is_none() {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            }
            sessions.push(session);
        }
        let traces: Vec<Vec<TracePoint>> = servers
            .iter()
            .map(|s| s.traces().into_iter().next().unwrap_or_default())
            .collect();
        let stats = relay.stats();
        relay.stop();
        for server in servers {
            server.stop().await;
        }
        let labels: Vec<String> = controllers.iter().map(|c| c.label.clone()).collect();
        Ok(outcome(
            scenario, spec, &labels, results, &sessions, &traces, stats, end_time,
        ))
    })
}
