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

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use emu::apps::{AppEnd, EndReport, Received};
use emu::endpoint::{self, Trust};
use emu::perf::{self, ClientOptions};
use emu::relay::{Relay, RelayConfig};
use emu::server::{Server, ServerOptions, TracePoint};
use emu::session::{ServerSession, SessionOptions, SessionReport};
use perfwire::Sender;
use perfwire::media::FrameRecord;
use perfwire::session::{
    AppParams, PerfParams, ReceivedSummary, SentSummary, SessionApp, SessionRequest,
};
use scenario::apps::AppKind;
use sim::apps::media::MediaReport;
use sim::apps::perf::{Exchange, PerfReport};
use sim::{AppOutcome, FlowEnd, FlowOutcome, LinkSample, RunOutcome, Sample, SenderStats};

use quinn_proto::Side;

use crate::controllers;
use scenario::RunSpec;
use scenario::{Download, Scenario};

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

/// The session flow `index` asks its server for: its applications as the simulator plays them
/// (deadlines, seeds, start times from [`crate::plan`]), its scheduler, until its stop.
fn session_request(scenario: &Scenario, spec: &RunSpec, index: usize) -> SessionRequest {
    let flow = &scenario.flows[index];
    let apps = flow
        .apps
        .iter()
        .enumerate()
        .map(|(i, app)| match &app.kind {
            AppKind::Media(m) => SessionApp {
                sender: m.sender,
                params: AppParams::Media(crate::plan::media_params(
                    scenario, spec.seed, index, i, m,
                )),
            },
            AppKind::Bulk(b) => SessionApp {
                sender: b.sender,
                params: AppParams::Bulk(crate::plan::bulk_params(b)),
            },
            AppKind::Perf(p) => SessionApp {
                sender: if p.download.is_some() {
                    Sender::Server
                } else {
                    Sender::Client
                },
                params: AppParams::Perf(PerfParams {
                    downloads: p.download.is_some(),
                    uploads: p.upload_bytes.is_some(),
                }),
            },
        })
        .collect();
    SessionRequest {
        scheduler: flow.scheduler.name().to_owned(),
        duration: flow
            .stop
            .unwrap_or(scenario.duration)
            .saturating_sub(flow.start)
            .max(Duration::from_millis(1)),
        apps,
    }
}

/// The perf exchange of flow `index` (its perf application: the download, upload and repeat the
/// simulator plays), until the flow's stop, with the scenario's time-to-bytes marks.
fn perf_requests(scenario: &Scenario, index: usize) -> emu::perf::PerfRequests {
    let flow = &scenario.flows[index];
    let perf = flow.perf();
    emu::perf::PerfRequests {
        download_bytes: match perf.and_then(|p| p.download) {
            Some(Download::Bytes(n)) => Some(n),
            _ => None,
        },
        upload_bytes: perf.and_then(|p| p.upload_bytes).unwrap_or(0),
        duration: Some(
            flow.stop
                .unwrap_or(scenario.duration)
                .saturating_sub(flow.start),
        ),
        thresholds: scenario.time_to_bytes.clone(),
        verify: true,
        repeat_after: perf.and_then(|p| p.repeat_after),
    }
}

/// One application of a session in the simulator's shape ([`AppOutcome`], its report as
/// `sim::apps::{media, bulk}` give it), from what its sender did (`sent`, times on the
/// receiver's clock) and what its receiver measured (`received`, with every frame it recorded
/// in `frames` where the receiver is at hand; a remote server's account of an upload has
/// counts and delays only).
pub fn session_app_outcome(
    name: &str,
    app: &SessionApp,
    sent: &SentSummary,
    received: &ReceivedSummary,
    frames: Vec<FrameRecord>,
) -> AppOutcome {
    let (kind, report) = match app.params {
        AppParams::Media(params) => {
            // Fields the simulator's report may gain later keep their defaults here.
            #[allow(clippy::needless_update)]
            let report = MediaReport {
                frames_sent: sent.frames_sent,
                frames_received: received.frames_received,
                frame_delay_ms: received.frame_delay_ms,
                late_frames: received.late_frames,
                deadline_ms: params.deadline.as_secs_f64() * 1e3,
                frames,
                cancelled_frames: sent.cancelled_frames,
                bitrate_bps: params.bitrate_bps,
                mean_bitrate_bps: sent.mean_bitrate_bps as f64,
                fps: params.video.fps,
                first_capture_s: sent.started_at.map_or(0.0, |t| t.as_secs_f64()),
                ..MediaReport::default()
            };
            (sim::apps::media::KIND, serde_json::to_value(report))
        }
        AppParams::Bulk(params) => (
            sim::apps::bulk::KIND,
            Ok(serde_json::json!({
                "written_bytes": sent.written_bytes,
                "offered_bps": params.rate_bps,
            })),
        ),
        // The server's account only: the perf client's own measurements are its report.
        AppParams::Perf(_) => (
            sim::apps::perf::KIND,
            Ok(serde_json::json!({
                "written_bytes": sent.written_bytes,
                "uploaded_bytes": received.received_bytes,
            })),
        ),
    };
    let report = match report {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    AppOutcome {
        name: name.to_owned(),
        kind: kind.to_owned(),
        received_bytes: received.received_bytes,
        busy_periods: sent.started_at.map(|t| (t, None)).into_iter().collect(),
        report,
    }
}

/// `sent` with its start on a clock `shift_ns` ahead of the sender's.
pub fn shift_sent(sent: &SentSummary, shift_ns: i64) -> SentSummary {
    let started_at = sent.started_at.map(|t| {
        let nanos = t.as_nanos() as i128 + i128::from(shift_ns);
        Duration::from_nanos(nanos.clamp(0, i128::from(u64::MAX)) as u64)
    });
    SentSummary {
        started_at,
        ..*sent
    }
}

/// What a flow's client brought back (perf: with when it started connecting, run time).
enum FlowResult {
    Perf(
        Duration,
        Result<perf::ClientReport, endpoint::EndpointError>,
    ),
    Session(Result<SessionReport, endpoint::EndpointError>),
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
            false,
        ));
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

/// A flow's progress at the sample ticks: each application's in-order bytes at its receiving
/// end, as (time, per-app bytes) in time order.
type AppProgress = Vec<(Duration, Vec<u64>)>;

/// What the emulator measured of one flow, in the simulator's terms.
struct FlowMeasured {
    apps: Vec<AppOutcome>,
    delivered: u64,
    end: FlowEnd,
    ended_at: Option<Duration>,
    handshake: Option<Duration>,
    progress: AppProgress,
}

/// What a perf application's client measured, on the run's clock.
struct PerfMeasured {
    outcome: AppOutcome,
    /// In-order bytes received, all exchanges, at the client's sample times.
    progress: Vec<(Duration, u64)>,
    /// Whether the last exchange completed.
    completed: bool,
    /// When the last exchange completed, if it did.
    ended_at: Option<Duration>,
}

/// A perf application `name` from its client's report; `began` is when its connection started
/// (run time).
fn perf_app(name: &str, began: Duration, r: &perf::ClientReport) -> PerfMeasured {
    let seconds = Duration::from_secs_f64;
    let requested_at = began + seconds(r.requested_s);
    let completed_at = r.completed.then(|| requested_at + seconds(r.transfer_s));
    let at = |start: Duration, map: &BTreeMap<u64, f64>| {
        map.iter().map(|(b, t)| (*b, start + seconds(*t))).collect()
    };
    let mut exchanges = vec![Exchange {
        requested_at,
        completed_at,
        upload_completed_at: None,
        reached: at(requested_at, &r.time_to_bytes_s),
    }];
    let mut progress: Vec<(Duration, u64)> = r
        .samples
        .iter()
        .map(|(t, b)| (requested_at + seconds(*t), *b))
        .collect();
    let mut delivered = r.bytes_received;
    let mut ended_at = completed_at;
    let mut completed = r.completed;
    for repeat in &r.repeats {
        let start = requested_at + seconds(repeat.requested_s);
        let done = repeat.completed.then(|| start + seconds(repeat.transfer_s));
        progress.extend(
            repeat
                .samples
                .iter()
                .map(|(t, b)| (start + seconds(*t), delivered + *b)),
        );
        exchanges.push(Exchange {
            requested_at: start,
            completed_at: done,
            upload_completed_at: None,
            reached: at(start, &repeat.time_to_bytes_s),
        });
        delivered += repeat.bytes_received;
        ended_at = done;
        completed = repeat.completed;
    }
    PerfMeasured {
        outcome: PerfReport {
            exchanges,
            downloaded_bytes: delivered,
            uploaded_bytes: r.bytes_uploaded,
        }
        .into_outcome(name, delivered),
        progress,
        completed,
        ended_at,
    }
}

/// A perf application that brought nothing back.
fn no_perf(name: &str) -> AppOutcome {
    PerfReport {
        exchanges: Vec::new(),
        downloaded_bytes: 0,
        uploaded_bytes: 0,
    }
    .into_outcome(name, 0)
}

/// A perf flow's client report as a [`FlowMeasured`].
fn perf_measured(
    name: &str,
    began: Duration,
    result: &Result<perf::ClientReport, endpoint::EndpointError>,
) -> FlowMeasured {
    let r = match result {
        Ok(r) => r,
        Err(e) => {
            return FlowMeasured {
                apps: vec![no_perf(name)],
                delivered: 0,
                end: FlowEnd::Error {
                    reason: e.to_string(),
                },
                ended_at: None,
                handshake: None,
                progress: Vec::new(),
            };
        }
    };
    let measured = perf_app(name, began, r);
    FlowMeasured {
        delivered: measured.outcome.received_bytes,
        apps: vec![measured.outcome],
        end: if measured.completed {
            FlowEnd::Completed
        } else {
            FlowEnd::Running
        },
        ended_at: measured.ended_at,
        handshake: Some(Duration::from_secs_f64(r.handshake_s)),
        progress: measured
            .progress
            .into_iter()
            .map(|(t, b)| (t, vec![b]))
            .collect(),
    }
}

/// A session flow's two ends as a [`FlowMeasured`]: each application from its sender's
/// account and its receiver's measurements (both on the run's clock).
fn session_measured(
    flow: &scenario::FlowSpec,
    request: &SessionRequest,
    result: &Result<SessionReport, endpoint::EndpointError>,
    server: Option<&ServerSession>,
) -> FlowMeasured {
    let report = match result {
        Ok(report) => report,
        Err(e) => {
            return FlowMeasured {
                apps: Vec::new(),
                delivered: 0,
                end: FlowEnd::Error {
                    reason: e.to_string(),
                },
                ended_at: None,
                handshake: None,
                progress: Vec::new(),
            };
        }
    };
    let empty = EndReport::default();
    let server_end = server.and_then(|s| s.report.as_ref()).unwrap_or(&empty);
    let mut apps = Vec::new();
    let mut perf_progress = None;
    for (index, app) in request.apps.iter().enumerate() {
        let name = &flow.apps[index].name;
        if let AppParams::Perf(_) = app.params {
            match &report.perf {
                Some(r) => {
                    let measured = perf_app(name, report.started_at, r);
                    perf_progress = Some((index, measured.progress));
                    apps.push(measured.outcome);
                }
                None => apps.push(no_perf(name)),
            }
            continue;
        }
        let (sender_end, receiver_end) = match app.sender {
            Sender::Server => (server_end, &report.client),
            Sender::Client => (&report.client, server_end),
        };
        let sent = match sender_end.apps.get(index) {
            Some(AppEnd::Sent(sent)) => *sent,
            // The server's account travels in its summary too.
            _ => report
                .server_summary
                .apps
                .get(index)
                .map(|account| account.sent)
                .unwrap_or_default(),
        };
        let received = match receiver_end.apps.get(index) {
            Some(AppEnd::Received(received)) => received.clone(),
            _ => Received::default(),
        };
        apps.push(session_app_outcome(
            name,
            app,
            &sent,
            &received.summary(&app.params),
            received.frames,
        ));
    }
    // Each application's bytes at its receiving end, at the ticks both ends sampled.
    let mut progress: AppProgress = Vec::new();
    for (t, client_row) in &report.client.samples {
        let server_row = server_end
            .samples
            .iter()
            .rfind(|(at, _)| at <= t)
            .map(|(_, row)| row.as_slice())
            .unwrap_or(&[]);
        let row = request
            .apps
            .iter()
            .enumerate()
            .map(|(i, app)| match (&perf_progress, app.sender) {
                // The perf client's own samples (its bytes are not the ends' halves').
                (Some((perf, samples)), _) if *perf == i => samples
                    .iter()
                    .take_while(|(at, _)| at <= t)
                    .last()
                    .map_or(0, |&(_, bytes)| bytes),
                (_, Sender::Server) => client_row.get(i).copied().unwrap_or(0),
                (_, Sender::Client) => server_row.get(i).copied().unwrap_or(0),
            })
            .collect();
        progress.push((*t, row));
    }
    let error = server.and_then(|s| s.error.clone());
    FlowMeasured {
        delivered: apps.iter().map(|a| a.received_bytes).sum(),
        apps,
        end: match error {
            Some(reason) => FlowEnd::Error {
                reason: format!("server: {reason}"),
            },
            None => FlowEnd::Running,
        },
        ended_at: None,
        handshake: Some(report.handshake),
        progress,
    }
}

/// The real-time run as a [`RunOutcome`]. `traces[i]` and `sessions[i]` are flow `i`'s server
/// connection, and flow `i` of the relay.
#[allow(clippy::too_many_arguments)]
fn outcome(
    scenario: &Scenario,
    spec: &RunSpec,
    labels: &[String],
    results: Vec<FlowResult>,
    sessions: &[Option<ServerSession>],
    traces: &[Vec<TracePoint>],
    stats: emu::relay::RelayStats,
    end_time: Duration,
) -> RunOutcome {
    let mut flows = Vec::new();
    let mut samples = Vec::new();
    let mut app_samples = Vec::new();
    let queue_at = |t: Duration| {
        stats
            .queue_samples
            .iter()
            .take_while(|(at, _, _)| *at <= t)
            .last()
            .map_or((0, 0), |&(_, f, r)| (f, r))
    };
    for (index, (flow, result)) in scenario.flows.iter().zip(results).enumerate() {
        let trace = traces.get(index).filter(|t| !t.is_empty());
        let bottleneck = stats.flows.get(index).copied().unwrap_or_default();
        let last = trace.and_then(|t| t.last());
        let mut sender = SenderStats::default();
        // The data direction: the first application's, as in the simulator.
        let data_direction = match flow.apps.first().map(|a| &a.kind) {
            Some(AppKind::Media(m)) if m.sender == Sender::Client => 1,
            Some(AppKind::Bulk(b)) if b.sender == Sender::Client => 1,
            _ => 0,
        };
        let losses = sim::LossAccounting {
            queue_drops: bottleneck[data_direction].queue_drops,
            aqm_drops: bottleneck[data_direction].early_drops,
            random_losses: bottleneck[data_direction].random_losses,
            verdicts: last.and_then(|p| p.loss_tally).map(Into::into),
            matched: None,
        };
        if let Some(p) = last {
            sender.sent_packets = p.sent_packets;
            sender.lost_packets = p.lost_packets;
            sender.congestion_events = p.congestion_events;
            sender.final_cwnd_bytes = p.cwnd_bytes;
        }
        let measured = match &result {
            FlowResult::Perf(began, r) => perf_measured(&flow.apps[0].name, *began, r),
            FlowResult::Session(r) => session_measured(
                flow,
                &session_request(scenario, spec, index),
                r,
                sessions.get(index).and_then(Option::as_ref),
            ),
        };
        // 100 ms samples over the run: bytes in order at the receiving ends, server
        // cwnd/RTT/losses, IP bytes the relay delivered in the data direction (the simulator
        // takes the direction from the first application too).
        let apps = measured.apps.len().max(1);
        let received_at = |t: Duration| {
            stats
                .flow_delivered
                .iter()
                .rev()
                .find(|(at, f, _)| *at <= t && *f == index)
                .map_or(0, |(_, _, bytes)| bytes[data_direction])
        };
        let mut tick = Duration::from_millis(100);
        while tick <= end_time {
            if tick >= flow.start {
                let row = measured
                    .progress
                    .iter()
                    .take_while(|(t, _)| *t <= tick)
                    .last()
                    .map(|(_, row)| row.clone())
                    .unwrap_or_default();
                for app in 0..apps {
                    app_samples.push(sim::AppSample {
                        t: tick,
                        flow: index,
                        app,
                        delivered_bytes: row.get(app).copied().unwrap_or(0),
                    });
                }
                let point = trace.and_then(|t| t.iter().take_while(|p| p.t <= tick).last());
                samples.push(Sample {
                    t: tick,
                    flow: index,
                    delivered_bytes: row.iter().sum(),
                    received_ip_bytes: received_at(tick),
                    cwnd_bytes: point.map_or(0, |p| p.cwnd_bytes),
                    in_flight_bytes: 0,
                    srtt: point.map_or(Duration::ZERO, |p| p.rtt),
                    min_rtt: Duration::ZERO,
                    lost_packets: point.map_or(0, |p| p.lost_packets),
                    queue_forward_bytes: queue_at(tick).0,
                    queue_return_bytes: queue_at(tick).1,
                });
            }
            tick += Duration::from_millis(100);
        }
        flows.push(FlowOutcome {
            name: flow.name.clone(),
            cc: labels[index].clone(),
            start: flow.start,
            handshake: measured.handshake,
            delivered_bytes: measured.delivered,
            apps: measured.apps,
            end: measured.end,
            ended_at: measured.ended_at,
            sender,
            bottleneck_forward: bottleneck[0],
            bottleneck_return: bottleneck[1],
            losses,
            connections: Vec::new(),
        });
    }
    samples.sort_by_key(|s| (s.t, s.flow));
    app_samples.sort_by_key(|s| (s.t, s.flow, s.app));
    let link_samples = stats
        .forward_serialized
        .iter()
        .filter(|(t, _)| *t <= end_time)
        .map(|&(t, bytes)| LinkSample {
            t,
            forward_serialized_bytes: bytes,
        })
        .collect();
    RunOutcome {
        seed: spec.seed,
        end_time,
        flows,
        samples,
        app_samples,
        link_samples,
        forward_link: stats.forward,
        return_link: stats.return_link,
        forward_capacity_bits: scenario.forward.capacity_bits(Duration::ZERO, end_time),
        forward_queue_limit_bytes: 0,
        datagrams: stats.forward.delivered_packets + stats.return_link.delivered_packets,
        emulator_drops: sim::EmulatorDrops {
            kernel: stats.kernel_drops,
            overload: stats.overload_drops,
            send_errors: stats.send_errors,
        },
        emulator_lateness: Some(sim::EmulatorLateness {
            deliveries: stats.lateness_us.len(),
            p50_us: stats.lateness_us.value_at_quantile(0.5),
            p99_us: stats.lateness_us.value_at_quantile(0.99),
            max_us: stats.lateness_us.max(),
        }),
    }
}
