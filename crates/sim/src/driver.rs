//! The virtual-time loop: real quinn-proto endpoints exchanging real packets over a
//! [`netsim::Path`], jumping from one event to the next.
//!
//! Calling protocol per step (quinn-proto's documented order): deliver every datagram due now
//! to its endpoint, fire due timers, then for every connection touched: endpoint events,
//! application events, application work (read, write), `poll_transmit` until empty, and
//! `poll_timeout`. The next step is the earliest of: a path arrival, a connection timer, an
//! application wake-up, a flow start or stop, a sample tick, the end of the run.
//!
//! Time: `base + offset`, with `base` taken once from `Instant::now()` (quinn needs an
//! `Instant`); no other wall-clock reading happens inside a run.

use std::fs::File;
use std::io::BufWriter;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use quinn_proto::congestion::ControllerFactory;
use quinn_proto::{
    ClientConfig, Connection, ConnectionError, ConnectionHandle, DatagramEvent, Dir, Endpoint,
    EndpointConfig, Event, ServerConfig,
};

use netsim::{Direction, DropCause, IP_UDP_HEADER_BYTES, Path, PathConfig};

use sched::{Scheduler, SchedulerSpec, TransportView};

use crate::app::{App, AppError, AppOutcome, AppSpec, Context, Role};
use crate::apps::perf::{self, PerfReport};
use crate::determinism::{FrozenClock, SeededCidGenerator, reset_key, seed_bytes, token_key};
use crate::losses;
use crate::outcome::{
    AppSample, ConnectionOutcome, FlowEnd, FlowOutcome, LinkSample, ResumeOutcome,
    ResumeTransitionOutcome, RunOutcome, Sample, SavedPathOutcome, SenderStats,
};
use crate::tls::{self, Identity, TlsError};
use probe::{ProbeReadings, ProbedFactory};
use quinn_satellite::TransportSettings;

/// Steps allowed at one instant before the run is declared livelocked.
const MAX_STEPS_AT_ONE_INSTANT: u64 = 1_000_000;

/// One flow of a run.
#[derive(Clone)]
pub struct FlowConfig {
    /// Name for reports.
    pub name: String,
    /// Label of the congestion controller (for reports).
    pub cc: String,
    /// The controller both endpoints of this flow use.
    pub controller: Arc<dyn ControllerFactory + Send + Sync>,
    /// When the client starts connecting (since run start).
    pub start: Duration,
    /// Close the connection at this time (since run start) if it is still open.
    pub stop_at: Option<Duration>,
    /// The applications on this connection, in order: the first one's data sender is the end
    /// whose congestion controller the flow reports.
    pub apps: Vec<FlowApp>,
    /// How the applications share the connection (each end gets its own instance; only the
    /// end that sends matters).
    pub scheduler: SchedulerSpec,
    /// Resolved transport parameters.
    pub transport: TransportSettings,
    /// Write qlog files for this flow's two connections (needs `SimConfig::qlog_dir`).
    pub qlog: bool,
    /// After the applications complete, the client closes the connection, waits this long,
    /// and runs fresh instances of them on a second connection (perf applications only).
    pub reconnect_after: Option<Duration>,
    /// The data sender's controller for a connection that resumes from what the flow's
    /// previous connection saved (Careful Resume, RFC 9959); `None`: connections never resume.
    pub resumed_controller: Option<ResumedController>,
}

/// Builds a controller factory resuming from a saved path (e.g. Hybla's
/// `HyblaConfig::careful_resume`).
pub type ResumedController =
    Arc<dyn Fn(hybla::ResumeParams) -> Arc<dyn ControllerFactory + Send + Sync> + Send + Sync>;

impl std::fmt::Debug for FlowConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowConfig")
            .field("name", &self.name)
            .field("cc", &self.cc)
            .field("start", &self.start)
            .field("stop_at", &self.stop_at)
            .field("apps", &self.apps)
            .field("scheduler", &self.scheduler)
            .field("transport", &self.transport)
            .field("reconnect_after", &self.reconnect_after)
            .field("resumes", &self.resumed_controller.is_some())
            .finish_non_exhaustive()
    }
}

/// One application of a flow.
#[derive(Debug, Clone)]
pub struct FlowApp {
    /// Name for reports (unique within the flow).
    pub name: String,
    /// What it is.
    pub spec: Arc<dyn AppSpec>,
}

impl FlowConfig {
    /// The end whose congestion controller carries the flow's data: its first application's
    /// sender (the server when the flow has no application).
    pub fn data_sender(&self) -> Role {
        self.apps
            .first()
            .map_or(Role::Server, |app| app.spec.data_sender())
    }
}

/// A whole run: path, flows, and how long and how finely to observe.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// The dumbbell; `access_delays` has one entry per flow.
    pub path: PathConfig,
    /// Master seed: link randomness, endpoint rngs, connection ids, keys.
    pub seed: u64,
    /// Virtual time after which the run stops.
    pub duration: Duration,
    /// Time-series sampling period.
    pub sample_interval: Duration,
    /// The flows.
    pub flows: Vec<FlowConfig>,
    /// Where qlog files go, if any flow asks for them.
    pub qlog_dir: Option<PathBuf>,
}

/// Why a run could not complete.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The path description is invalid.
    #[error(transparent)]
    Path(#[from] netsim::ConfigError),
    /// TLS setup failed.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The configuration is inconsistent.
    #[error("invalid simulation config: {0}")]
    Config(String),
    /// An application failed: bytes differ from what was sent, or a protocol violation.
    #[error("flow {flow}, app {app}: {source}")]
    App {
        /// Flow name.
        flow: String,
        /// Application name.
        app: String,
        /// What was wrong.
        source: AppError,
    },
    /// The run made no progress in virtual time.
    #[error(
        "livelock at t = {0:?}: more than {MAX_STEPS_AT_ONE_INSTANT} steps without time advancing"
    )]
    Livelock(Duration),
    /// The observer asked to stop.
    #[error("interrupted at t = {0:?}")]
    Interrupted(Duration),
    /// A qlog file could not be created.
    #[error("qlog file {path}: {source}")]
    Qlog {
        /// File path.
        path: PathBuf,
        /// I/O error.
        source: std::io::Error,
    },
}

/// What the observer wants after a progress report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Keep going.
    Continue,
    /// Stop now (the run returns [`SimError::Interrupted`]).
    Stop,
}

/// One side (client or server) of a flow.
struct Side {
    endpoint: Endpoint,
    address: SocketAddr,
    connection: Option<(ConnectionHandle, Connection)>,
    timeout: Option<Duration>,
    probe: Arc<ProbeReadings>,
    scheduler: Box<dyn Scheduler>,
    dirty: bool,
    /// Most datagrams this side sent at a single virtual instant.
    max_burst_packets: u64,
}

impl Side {
    fn new(endpoint: Endpoint, address: SocketAddr, scheduler: Box<dyn Scheduler>) -> Self {
        Self {
            endpoint,
            address,
            connection: None,
            timeout: None,
            probe: Arc::new(ProbeReadings::default()),
            scheduler,
            dirty: false,
            max_burst_packets: 0,
        }
    }
}

struct FlowState {
    client: Side,
    server: Side,
    /// Client halves of the flow's applications, in application order.
    client_apps: Vec<Box<dyn App>>,
    /// Server halves, in the same order.
    server_apps: Vec<Box<dyn App>>,
    client_config: Option<ClientConfig>,
    started: bool,
    /// When the first connection's handshake completed.
    connected_at: Option<Duration>,
    end: Option<(FlowEnd, Duration)>,
    /// A flow that reconnects: its connections that ended, in order.
    finished: Vec<ConnectionOutcome>,
    /// Between the connections of a flow that reconnects: when the next one starts.
    reconnect_at: Option<Duration>,
    /// When the current connection's applications completed.
    closed_at: Option<Duration>,
    /// When the current connection started and its handshake completed.
    connection_start: Duration,
    connection_connected_at: Option<Duration>,
    /// The flow's forward and return queue drops when the current connection started.
    drops_at_start: (u64, u64),
    /// What a new connection of the flow is keyed with.
    keys: Keys,
}

/// TLS settings and the token key of a flow's connections.
struct Keys {
    server: Arc<quinn_proto::crypto::rustls::QuicServerConfig>,
    client: Arc<quinn_proto::crypto::rustls::QuicClientConfig>,
    token: Arc<ring::hkdf::Prk>,
}

/// The settings of connection `number` (from 0) of flow `index`: installs the server's on its
/// endpoint, gives each end a fresh probe, and returns the client's. `sender_controller` is
/// the data sender's controller (resumed or not); the other end uses the flow's.
fn connection_configs(
    config: &SimConfig,
    index: usize,
    number: usize,
    sender_controller: Arc<dyn ControllerFactory + Send + Sync>,
    keys: &Keys,
    base: Instant,
    (server, client): (&mut Side, &mut Side),
) -> Result<ClientConfig, SimError> {
    let flow = &config.flows[index];
    let (server_controller, client_controller) = match flow.data_sender() {
        Role::Server => (sender_controller, flow.controller.clone()),
        Role::Client => (flow.controller.clone(), sender_controller),
    };
    server.probe = Arc::new(ProbeReadings::default());
    client.probe = Arc::new(ProbeReadings::default());
    let mut server_transport = crate::run_transport(
        &flow.transport,
        quinn_proto::Side::Server,
        Arc::new(ProbedFactory::new(server_controller, server.probe.clone())),
    );
    let mut client_transport = crate::run_transport(
        &flow.transport,
        quinn_proto::Side::Client,
        Arc::new(ProbedFactory::new(client_controller, client.probe.clone())),
    );
    if flow.qlog {
        let role = |end: &str| match number {
            0 => end.to_owned(),
            n => format!("{end}-{}", n + 1),
        };
        attach_qlog(config, flow, &role("server"), base, &mut server_transport)?;
        attach_qlog(config, flow, &role("client"), base, &mut client_transport)?;
    }
    let mut server_config = ServerConfig::new(keys.server.clone(), keys.token.clone());
    server_config
        .transport_config(Arc::new(server_transport))
        .time_source(Arc::new(FrozenClock));
    server
        .endpoint
        .set_server_config(Some(Arc::new(server_config)));
    let mut client_config = ClientConfig::new(keys.client.clone());
    client_config.transport_config(Arc::new(client_transport));
    Ok(client_config)
}

/// Addresses are labels only: nothing leaves the process.
fn addresses(flow: usize) -> (SocketAddr, SocketAddr) {
    let (hi, lo) = ((flow >> 8) as u8, flow as u8);
    (
        SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 1, hi, lo)), 4433),
        SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 2, hi, lo)), 50_000),
    )
}

/// Runs one simulation. `observe` is called at every sample tick with the virtual time and may
/// stop the run.
pub fn run(
    config: &SimConfig,
    observe: &mut dyn FnMut(Duration) -> Control,
) -> Result<RunOutcome, SimError> {
    Simulation::new(config)?.run(observe)
}

struct Simulation<'a> {
    config: &'a SimConfig,
    base: Instant,
    path: Path<BytesMut>,
    flows: Vec<FlowState>,
    samples: Vec<Sample>,
    app_samples: Vec<AppSample>,
    link_samples: Vec<LinkSample>,
    buf: Vec<u8>,
    datagrams: u64,
}

impl<'a> Simulation<'a> {
    fn new(config: &'a SimConfig) -> Result<Self, SimError> {
        if config.path.access_delays.len() != config.flows.len() {
            return Err(SimError::Config(format!(
                "{} access delays for {} flows",
                config.path.access_delays.len(),
                config.flows.len()
            )));
        }
        if config.sample_interval.is_zero() {
            return Err(SimError::Config("sample interval must be positive".into()));
        }
        let mut path = Path::new(&config.path, config.seed)?;
        path.record_drops(true);
        let identity = Identity::deterministic()?;
        let server_crypto = tls::server_crypto(&identity)?;
        let client_crypto = tls::client_crypto(&identity)?;
        let base = Instant::now();
        let mut flows = Vec::with_capacity(config.flows.len());
        for (index, flow) in config.flows.iter().enumerate() {
            let (server_address, client_address) = addresses(index);
            let stream = 1000 + 16 * index as u64;
            let endpoint_config = |offset: u64| {
                let mut c = EndpointConfig::new(reset_key(config.seed, stream + offset));
                let cid_seed = netsim::derive_seed(config.seed, stream + offset + 2);
                c.cid_generator(move || Box::new(SeededCidGenerator::new(cid_seed)))
                    .rng_seed(Some(seed_bytes(config.seed, stream + offset + 4)));
                Arc::new(c)
            };
            let mut server = Side::new(
                Endpoint::new(endpoint_config(0), None, false, None),
                server_address,
                flow.scheduler.build(),
            );
            let mut client = Side::new(
                Endpoint::new(endpoint_config(1), None, false, None),
                client_address,
                flow.scheduler.build(),
            );

            if flow.reconnect_after.is_some()
                && let Some(app) = flow.apps.iter().find(|a| a.spec.kind() != perf::KIND)
            {
                return Err(SimError::Config(format!(
                    "flow {}: reconnect_after works with perf applications only ({} is {})",
                    flow.name,
                    app.name,
                    app.spec.kind()
                )));
            }
            let keys = Keys {
                server: server_crypto.clone(),
                client: client_crypto.clone(),
                token: token_key(config.seed, stream + 8),
            };
            let client_config = connection_configs(
                config,
                index,
                0,
                flow.controller.clone(),
                &keys,
                base,
                (&mut server, &mut client),
            )?;
            server.timeout = None;
            client.timeout = None;
            let (client_apps, server_apps) = flow.apps.iter().map(|app| app.spec.build()).unzip();
            flows.push(FlowState {
                client,
                server,
                client_apps,
                server_apps,
                client_config: Some(client_config),
                started: false,
                connected_at: None,
                end: None,
                finished: Vec::new(),
                reconnect_at: None,
                closed_at: None,
                connection_start: flow.start,
                connection_connected_at: None,
                drops_at_start: (0, 0),
                keys,
            });
        }
        Ok(Self {
            config,
            base,
            path,
            flows,
            samples: Vec::new(),
            app_samples: Vec::new(),
            link_samples: Vec::new(),
            buf: Vec::with_capacity(2048),
            datagrams: 0,
        })
    }

    fn run(mut self, observe: &mut dyn FnMut(Duration) -> Control) -> Result<RunOutcome, SimError> {
        let mut now = Duration::ZERO;
        let mut next_sample = self.config.sample_interval;
        let mut steps_at_now = 0u64;
        let end_time = loop {
            self.start_flows(now);
            self.reconnect_flows(now)?;
            self.stop_flows(now);
            self.deliver(now);
            self.fire_timers(now);
            self.process_dirty(now)?;
            if now >= next_sample {
                self.sample(next_sample);
                if observe(next_sample) == Control::Stop {
                    return Err(SimError::Interrupted(now));
                }
                next_sample += self.config.sample_interval;
            }
            if self.flows.iter().all(|f| f.end.is_some()) {
                break now;
            }
            let next = self.next_event(next_sample);
            match next {
                Some(t) if t <= self.config.duration => {
                    if t <= now {
                        steps_at_now += 1;
                        if steps_at_now > MAX_STEPS_AT_ONE_INSTANT {
                            return Err(SimError::Livelock(now));
                        }
                    } else {
                        steps_at_now = 0;
                    }
                    now = t.max(now);
                }
                _ => break self.config.duration,
            }
        };
        Ok(self.finish(end_time))
    }

    fn instant(&self, t: Duration) -> Instant {
        self.base + t
    }

    fn start_flows(&mut self, now: Duration) {
        for (index, flow) in self.flows.iter_mut().enumerate() {
            if flow.started || self.config.flows[index].start > now {
                continue;
            }
            flow.started = true;
            let client_config = flow.client_config.take().expect("configured once");
            Self::connect(flow, self.base, now, client_config);
        }
    }

    fn connect(flow: &mut FlowState, base: Instant, now: Duration, client_config: ClientConfig) {
        match flow.client.endpoint.connect(
            base + now,
            client_config,
            flow.server.address,
            tls::SERVER_NAME,
        ) {
            Ok((handle, connection)) => {
                flow.client.connection = Some((handle, connection));
                flow.client.dirty = true;
            }
            Err(e) => {
                flow.end = Some((
                    FlowEnd::Error {
                        reason: e.to_string(),
                    },
                    now,
                ))
            }
        }
    }

    /// A flow that reconnects, its gap over: the ended connection's record (and what its data
    /// sender saved), then a new connection with fresh applications, the data sender resuming
    /// from the saved path when the flow resumes.
    fn reconnect_flows(&mut self, now: Duration) -> Result<(), SimError> {
        for index in 0..self.flows.len() {
            if self.flows[index].reconnect_at.is_none_or(|t| t > now) {
                continue;
            }
            let ended_at = self.flows[index].closed_at;
            let record = self.connection_outcome(index, ended_at);
            let config = &self.config.flows[index];
            let sender_controller = match (&config.resumed_controller, record.saved) {
                (Some(resumed), Some(saved)) => {
                    resumed(hybla::ResumeParams::new(hybla::SavedPath {
                        saved_cwnd_bytes: saved.cwnd_bytes,
                        saved_rtt: saved.rtt,
                    }))
                }
                _ => config.controller.clone(),
            };
            let drops = (
                self.path
                    .flow_stats(index, Direction::Forward)
                    .dropped_packets,
                self.path
                    .flow_stats(index, Direction::Return)
                    .dropped_packets,
            );
            let flow = &mut self.flows[index];
            let number = flow.finished.len() + 1;
            flow.finished.push(record);
            for side in [&mut flow.server, &mut flow.client] {
                side.connection = None;
                side.timeout = None;
                side.scheduler = config.scheduler.build();
                side.max_burst_packets = 0;
            }
            let client_config = connection_configs(
                self.config,
                index,
                number,
                sender_controller,
                &flow.keys,
                self.base,
                (&mut flow.server, &mut flow.client),
            )?;
            (flow.client_apps, flow.server_apps) =
                config.apps.iter().map(|app| app.spec.build()).unzip();
            flow.reconnect_at = None;
            flow.closed_at = None;
            flow.connection_start = now;
            flow.connection_connected_at = None;
            flow.drops_at_start = drops;
            Self::connect(flow, self.base, now, client_config);
        }
        Ok(())
    }

    /// The current connection of flow `index` as a record; `ended_at`: when its applications
    /// completed.
    fn connection_outcome(&self, index: usize, ended_at: Option<Duration>) -> ConnectionOutcome {
        let flow = &self.flows[index];
        let config = &self.config.flows[index];
        let sender = Self::data_sender(flow, config);
        let resume_state = sender
            .connection
            .as_ref()
            .and_then(|(_, c)| probe::inner_of(c.congestion_state().clone_box()))
            .and_then(hybla::resume_state_of);
        let careful_resume = resume_state.as_ref().and_then(|state| {
            let report = state.report.as_ref()?;
            let run_time = |at: Duration| (state.epoch + at).saturating_duration_since(self.base);
            Some(ResumeOutcome {
                resumed_from: report.saved.into(),
                jump_bytes: report.jump_bytes,
                pipe_bytes: report.pipe_bytes,
                retreated: report.retreated,
                phase: report.phase.name(),
                transitions: report
                    .transitions
                    .iter()
                    .map(|t| ResumeTransitionOutcome {
                        at: run_time(t.at),
                        from: t.from.name(),
                        to: t.to.name(),
                        trigger: t.trigger.name(),
                    })
                    .collect(),
            })
        });
        let dropped = |direction| self.path.flow_stats(index, direction).dropped_packets;
        ConnectionOutcome {
            start: flow.connection_start,
            handshake: flow
                .connection_connected_at
                .map(|t| t.saturating_sub(flow.connection_start)),
            ended_at,
            delivered_bytes: Self::connection_delivered_bytes(flow, config),
            apps: Self::app_outcomes(flow, config),
            sender: Self::sender_stats(sender),
            forward_queue_drops: dropped(Direction::Forward) - flow.drops_at_start.0,
            return_queue_drops: dropped(Direction::Return) - flow.drops_at_start.1,
            careful_resume,
            saved: resume_state
                .and_then(|state| state.observation)
                .map(SavedPathOutcome::from),
        }
    }

    fn stop_flows(&mut self, now: Duration) {
        for (index, flow) in self.flows.iter_mut().enumerate() {
            let Some(stop_at) = self.config.flows[index].stop_at else {
                continue;
            };
            if flow.end.is_some() || stop_at > now || !flow.started {
                continue;
            }
            if let Some((_, connection)) = &mut flow.client.connection {
                connection.close(self.base + now, 0u32.into(), "stop".into());
                flow.client.dirty = true;
            }
            flow.end = Some((FlowEnd::Stopped, now));
        }
    }

    fn deliver(&mut self, now: Duration) {
        while let Some(delivery) = self.path.poll(now) {
            self.datagrams += 1;
            let flow = &mut self.flows[delivery.flow];
            let (receiver, sender_address) = match delivery.direction {
                Direction::Forward => (&mut flow.client, flow.server.address),
                Direction::Return => (&mut flow.server, flow.client.address),
            };
            receiver.dirty = true;
            let event = receiver.endpoint.handle(
                self.base + now,
                sender_address,
                None,
                None,
                delivery.payload,
                &mut self.buf,
            );
            match event {
                Some(DatagramEvent::ConnectionEvent(handle, event)) => {
                    if let Some((h, connection)) = &mut receiver.connection
                        && *h == handle
                    {
                        connection.handle_event(event);
                    }
                }
                Some(DatagramEvent::NewConnection(incoming)) => {
                    if receiver.connection.is_some() {
                        receiver.endpoint.ignore(incoming);
                    } else {
                        match receiver.endpoint.accept(
                            incoming,
                            self.base + now,
                            &mut self.buf,
                            None,
                        ) {
                            Ok((handle, connection)) => {
                                receiver.connection = Some((handle, connection))
                            }
                            Err(e) => {
                                if let Some(response) = e.response {
                                    let size = response.size;
                                    let payload = BytesMut::from(&self.buf[..size]);
                                    self.path.send(
                                        now,
                                        Direction::Forward,
                                        delivery.flow,
                                        size as u32 + IP_UDP_HEADER_BYTES,
                                        payload,
                                    );
                                }
                            }
                        }
                    }
                }
                Some(DatagramEvent::Response(transmit)) => {
                    let size = transmit.size;
                    let payload = BytesMut::from(&self.buf[..size]);
                    let direction = match delivery.direction {
                        Direction::Forward => Direction::Return,
                        Direction::Return => Direction::Forward,
                    };
                    self.path.send(
                        now,
                        direction,
                        delivery.flow,
                        size as u32 + IP_UDP_HEADER_BYTES,
                        payload,
                    );
                }
                None => {}
            }
            self.buf.clear();
        }
    }

    fn fire_timers(&mut self, now: Duration) {
        let base = self.base;
        for flow in &mut self.flows {
            for side in [&mut flow.client, &mut flow.server] {
                if side.timeout.is_some_and(|t| t <= now)
                    && let Some((_, connection)) = &mut side.connection
                {
                    connection.handle_timeout(base + now);
                    side.timeout = None;
                    side.dirty = true;
                }
            }
            if flow
                .client_apps
                .iter()
                .any(|a| a.wakeup().is_some_and(|t| t <= now))
                || flow.client.scheduler.wakeup().is_some_and(|t| t <= now)
            {
                flow.client.dirty = true;
            }
            if flow
                .server_apps
                .iter()
                .any(|a| a.wakeup().is_some_and(|t| t <= now))
                || flow.server.scheduler.wakeup().is_some_and(|t| t <= now)
            {
                flow.server.dirty = true;
            }
        }
    }

    fn process_dirty(&mut self, now: Duration) -> Result<(), SimError> {
        for index in 0..self.flows.len() {
            // Server first: an upload completion seen there unblocks the client's exchange.
            if self.flows[index].server.dirty {
                self.process_side(index, Direction::Forward, now)?;
            }
            if self.flows[index].client.dirty {
                self.process_side(index, Direction::Return, now)?;
            }
        }
        Ok(())
    }

    /// Runs one endpoint's connection: `sends` is the direction its packets travel.
    fn process_side(
        &mut self,
        index: usize,
        sends: Direction,
        now: Duration,
    ) -> Result<(), SimError> {
        let at = self.instant(now);
        let flow_config = &self.config.flows[index];
        let flow = &mut self.flows[index];
        let (side, is_client) = match sends {
            Direction::Forward => (&mut flow.server, false),
            Direction::Return => (&mut flow.client, true),
        };
        side.dirty = false;
        let mut wake_peer = false;
        let Some((handle, connection)) = &mut side.connection else {
            return Ok(());
        };
        while let Some(event) = connection.poll_endpoint_events() {
            if let Some(reply) = side.endpoint.handle_event(*handle, event) {
                connection.handle_event(reply);
            }
        }
        while let Some(event) = connection.poll() {
            match event {
                Event::Connected => {
                    let apps = if is_client {
                        flow.connected_at.get_or_insert(now);
                        flow.connection_connected_at = Some(now);
                        &mut flow.client_apps
                    } else {
                        &mut flow.server_apps
                    };
                    for app in apps {
                        app.on_connected(now);
                    }
                }
                // Between the connections of a flow that reconnects, the closed one's end is
                // not the flow's.
                Event::ConnectionLost { reason }
                    if flow.end.is_none() && flow.reconnect_at.is_none() =>
                {
                    let end = match reason {
                        ConnectionError::LocallyClosed => FlowEnd::Completed,
                        ConnectionError::ApplicationClosed(ref close)
                            if close.error_code == 0u32.into() =>
                        {
                            FlowEnd::Completed
                        }
                        other => FlowEnd::Error {
                            reason: other.to_string(),
                        },
                    };
                    flow.end = Some((end, now));
                }
                _ => {}
            }
        }
        let apps = if is_client {
            &mut flow.client_apps
        } else {
            &mut flow.server_apps
        };
        // Streams the peer opened go to the first half that serves their direction; one
        // nobody serves is left unread (its flow control stalls only that stream).
        for dir in [Dir::Bi, Dir::Uni] {
            while let Some(id) = connection.streams().accept(dir) {
                if let Some(app) = apps.iter_mut().find(|a| a.accepts(dir)) {
                    app.adopt_stream(id, now);
                }
            }
        }
        side.scheduler.observe(&TransportView {
            now,
            cwnd_bytes: connection.congestion_state().window(),
            in_flight_bytes: side.probe.in_flight_bytes(),
            srtt: connection.rtt(),
            min_rtt: connection.min_rtt(),
            rtt_sample_min: side.probe.take_min_rtt_sample(),
            mtu_bytes: u64::from(connection.current_mtu()),
        });
        let mut cx = Context {
            connection,
            now,
            scheduler: side.scheduler.as_mut(),
        };
        for (app, app_config) in apps.iter_mut().zip(&flow_config.apps) {
            wake_peer |= app.drive(&mut cx).map_err(|source| SimError::App {
                flow: flow_config.name.clone(),
                app: app_config.name.clone(),
                source,
            })?;
        }
        if is_client
            && flow.end.is_none()
            && flow.reconnect_at.is_none()
            && !flow.client_apps.is_empty()
            && flow.client_apps.iter().all(|a| a.is_finished())
        {
            connection.close(at, 0u32.into(), "done".into());
            flow.closed_at = Some(now);
            match flow_config.reconnect_after {
                Some(gap) if flow.finished.is_empty() => flow.reconnect_at = Some(now + gap),
                _ => flow.end = Some((FlowEnd::Completed, now)),
            }
        }
        let mut burst_packets = 0u64;
        while let Some(transmit) = connection.poll_transmit(at, 1, &mut self.buf) {
            burst_packets += 1;
            let size = transmit.size;
            self.path.send(
                now,
                sends,
                index,
                size as u32 + IP_UDP_HEADER_BYTES,
                BytesMut::from(&self.buf[..size]),
            );
            self.buf.clear();
        }
        // Packets handed to the path at one instant: without pacing a whole window would
        // leave at once; with it, only quinn's small burst allowance.
        side.max_burst_packets = side.max_burst_packets.max(burst_packets);
        while let Some(event) = connection.poll_endpoint_events() {
            if let Some(reply) = side.endpoint.handle_event(*handle, event) {
                connection.handle_event(reply);
                side.dirty = true;
            }
        }
        side.timeout = connection
            .poll_timeout()
            .map(|t| t.saturating_duration_since(self.base));
        if wake_peer {
            let flow = &mut self.flows[index];
            let peer = if is_client {
                &mut flow.server
            } else {
                &mut flow.client
            };
            peer.dirty = true;
        }
        Ok(())
    }

    fn next_event(&self, next_sample: Duration) -> Option<Duration> {
        let mut next = Some(next_sample);
        let mut consider = |t: Option<Duration>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        };
        consider(self.path.next_event());
        for (index, flow) in self.flows.iter().enumerate() {
            let config = &self.config.flows[index];
            if !flow.started {
                consider(Some(config.start));
                continue;
            }
            consider(flow.client.timeout);
            consider(flow.server.timeout);
            for side in [&flow.client, &flow.server] {
                if side.connection.is_some() {
                    consider(side.scheduler.wakeup());
                }
            }
            for app in flow.client_apps.iter().chain(&flow.server_apps) {
                consider(app.wakeup());
            }
            if flow.end.is_none() {
                consider(config.stop_at);
            }
            consider(flow.reconnect_at);
        }
        next
    }

    fn data_sender<'f>(flow: &'f FlowState, config: &FlowConfig) -> &'f Side {
        match config.data_sender() {
            Role::Server => &flow.server,
            Role::Client => &flow.client,
        }
    }

    /// Bytes each of the flow's applications has received in order, at its receiving end, on
    /// all the flow's connections.
    fn app_delivered_bytes<'f>(
        flow: &'f FlowState,
        config: &'f FlowConfig,
    ) -> impl Iterator<Item = u64> + 'f {
        config
            .apps
            .iter()
            .zip(flow.client_apps.iter().zip(&flow.server_apps))
            .enumerate()
            .map(|(index, (app, (client, server)))| {
                let earlier: u64 = flow
                    .finished
                    .iter()
                    .map(|c| c.apps[index].received_bytes)
                    .sum();
                earlier
                    + match app.spec.data_sender() {
                        Role::Server => client.received_bytes(),
                        Role::Client => server.received_bytes(),
                    }
            })
    }

    /// Bytes the flow's applications have received in order, each at its receiving end.
    fn delivered_bytes(flow: &FlowState, config: &FlowConfig) -> u64 {
        Self::app_delivered_bytes(flow, config).sum()
    }

    /// [`Self::delivered_bytes`] on the current connection only.
    fn connection_delivered_bytes(flow: &FlowState, config: &FlowConfig) -> u64 {
        let earlier: u64 = flow.finished.iter().map(|c| c.delivered_bytes).sum();
        Self::delivered_bytes(flow, config) - earlier
    }

    /// The data sender's counters on its current connection.
    fn sender_stats(sender: &Side) -> SenderStats {
        sender
            .connection
            .as_ref()
            .map(|(_, c)| {
                let s = c.stats();
                SenderStats {
                    sent_packets: s.path.sent_packets,
                    lost_packets: s.path.lost_packets,
                    lost_bytes: s.path.lost_bytes,
                    congestion_events: s.path.congestion_events,
                    final_cwnd_bytes: s.path.cwnd,
                    max_burst_packets: sender.max_burst_packets,
                }
            })
            .unwrap_or_default()
    }

    /// The applications of a flow over all its connections: a perf application's exchanges
    /// one after the other, its bytes and busy periods added up.
    fn merged_app_outcomes(connections: &[ConnectionOutcome]) -> Vec<AppOutcome> {
        let Some(first) = connections.first() else {
            return Vec::new();
        };
        (0..first.apps.len())
            .map(|index| {
                let runs: Vec<&AppOutcome> = connections.iter().map(|c| &c.apps[index]).collect();
                let mut report = PerfReport::default();
                for run in &runs {
                    let part = PerfReport::of(run).unwrap_or_default();
                    report.exchanges.extend(part.exchanges);
                    report.downloaded_bytes += part.downloaded_bytes;
                    report.uploaded_bytes += part.uploaded_bytes;
                }
                let mut merged = report.into_outcome(
                    &first.apps[index].name,
                    runs.iter().map(|r| r.received_bytes).sum(),
                );
                merged.busy_periods = runs.iter().flat_map(|r| r.busy_periods.clone()).collect();
                merged
            })
            .collect()
    }

    /// The current connection's applications.
    fn app_outcomes(flow: &FlowState, config: &FlowConfig) -> Vec<AppOutcome> {
        config
            .apps
            .iter()
            .zip(flow.client_apps.iter().zip(&flow.server_apps))
            .map(|(app, (client, server))| {
                let receiver = match app.spec.data_sender() {
                    Role::Server => client,
                    Role::Client => server,
                };
                let mut busy_periods = client.busy_periods();
                busy_periods.extend(server.busy_periods());
                let mut report = client.report();
                report.extend(server.report());
                AppOutcome {
                    name: app.name.clone(),
                    kind: app.spec.kind().to_owned(),
                    received_bytes: receiver.received_bytes(),
                    busy_periods,
                    report,
                }
            })
            .collect()
    }

    fn sample(&mut self, t: Duration) {
        let queue_forward_bytes = self.path.queue_bytes(Direction::Forward, t);
        self.link_samples.push(LinkSample {
            t,
            forward_serialized_bytes: self.path.link_stats(Direction::Forward).serialized_bytes,
        });
        let queue_return_bytes = self.path.queue_bytes(Direction::Return, t);
        for (index, flow) in self.flows.iter().enumerate() {
            let config = &self.config.flows[index];
            if !flow.started {
                continue;
            }
            let sender = Self::data_sender(flow, config);
            // Before the sender's connection exists (handshake in flight) the row is zeros, so
            // every started flow has a sample at every tick.
            let path_stats = sender
                .connection
                .as_ref()
                .map(|(_, c)| c.stats().path)
                .unwrap_or_default();
            let delivered_bytes = Self::delivered_bytes(flow, config);
            let data_direction = match config.data_sender() {
                Role::Server => Direction::Forward,
                Role::Client => Direction::Return,
            };
            let received_ip_bytes = self.path.flow_stats(index, data_direction).delivered_bytes;
            for (app, bytes) in Self::app_delivered_bytes(flow, config).enumerate() {
                self.app_samples.push(AppSample {
                    t,
                    flow: index,
                    app,
                    delivered_bytes: bytes,
                });
            }
            self.samples.push(Sample {
                t,
                flow: index,
                delivered_bytes,
                received_ip_bytes,
                cwnd_bytes: path_stats.cwnd,
                in_flight_bytes: sender.probe.in_flight_bytes(),
                srtt: path_stats.rtt,
                min_rtt: path_stats.min_rtt,
                lost_packets: path_stats.lost_packets,
                queue_forward_bytes,
                queue_return_bytes,
            });
        }
    }

    /// The data sender's drops matched against its controller's loss verdicts.
    fn loss_accounting(&self, index: usize, drops: &[netsim::DropRecord]) -> crate::LossAccounting {
        let flow = &self.flows[index];
        let config = &self.config.flows[index];
        let direction = match config.data_sender() {
            Role::Server => Direction::Forward,
            Role::Client => Direction::Return,
        };
        let stats = self.path.flow_stats(index, direction);
        let ground_truth: Vec<losses::Drop> = drops
            .iter()
            .filter(|d| d.flow == index && d.direction == direction)
            .filter(|d| d.cause != DropCause::Oversize)
            // The controller that judged them is the current connection's.
            .filter(|d| d.sent_at >= flow.connection_start)
            .map(|d| losses::Drop {
                sent_at: d.sent_at,
                congestion: d.cause.is_congestion(),
            })
            .collect();
        let report = Self::data_sender(flow, config)
            .connection
            .as_ref()
            .and_then(|(_, c)| probe::inner_of(c.congestion_state().clone_box()))
            .and_then(hybla::loss_report_of);
        let matched = report.as_ref().and_then(|report| {
            let batches: Vec<losses::Batch> = report
                .records
                .as_ref()?
                .iter()
                .map(|r| losses::Batch {
                    newest_sent: (report.epoch + r.sent).saturating_duration_since(self.base),
                    verdict: r.verdict,
                })
                .collect();
            Some(losses::match_losses(&ground_truth, &batches))
        });
        crate::LossAccounting {
            queue_drops: stats.queue_drops,
            aqm_drops: stats.early_drops,
            random_losses: stats.random_losses,
            verdicts: report.map(|r| r.tally.into()),
            matched,
        }
    }

    fn finish(mut self, end_time: Duration) -> RunOutcome {
        let drops = self.path.take_drops();
        let mut flows = Vec::with_capacity(self.flows.len());
        for (index, flow) in self.flows.iter().enumerate() {
            let config = &self.config.flows[index];
            let mut sender_stats = Self::sender_stats(Self::data_sender(flow, config));
            let mut apps = Self::app_outcomes(flow, config);
            let (end, ended_at) = match &flow.end {
                Some((end, at)) => (end.clone(), Some(*at)),
                None if flow.connected_at.is_none() => (FlowEnd::NotConnected, None),
                None => (FlowEnd::Running, None),
            };
            let mut connections = Vec::new();
            if config.reconnect_after.is_some() {
                connections = flow.finished.clone();
                if flow.reconnect_at.is_none() {
                    let completed = matches!(end, FlowEnd::Completed).then_some(ended_at);
                    connections.push(self.connection_outcome(index, completed.flatten()));
                }
                sender_stats = connections
                    .iter()
                    .map(|c| c.sender)
                    .reduce(SenderStats::then)
                    .unwrap_or_default();
                apps = Self::merged_app_outcomes(&connections);
            }
            flows.push(FlowOutcome {
                name: config.name.clone(),
                cc: config.cc.clone(),
                start: config.start,
                handshake: flow.connected_at.map(|t| t.saturating_sub(config.start)),
                delivered_bytes: Self::delivered_bytes(flow, config),
                apps,
                end,
                ended_at,
                sender: sender_stats,
                bottleneck_forward: self.path.flow_stats(index, Direction::Forward),
                bottleneck_return: self.path.flow_stats(index, Direction::Return),
                losses: self.loss_accounting(index, &drops),
                connections,
            });
        }
        let forward = self.path.link(Direction::Forward);
        RunOutcome {
            seed: self.config.seed,
            end_time,
            flows,
            samples: self.samples,
            app_samples: self.app_samples,
            link_samples: self.link_samples,
            forward_link: forward.stats(),
            return_link: self.path.link_stats(Direction::Return),
            forward_capacity_bits: self
                .config
                .path
                .forward
                .capacity_bits(Duration::ZERO, end_time),
            forward_queue_limit_bytes: forward.queue_limit_bytes(),
            datagrams: self.datagrams,
            emulator_drops: Default::default(),
            emulator_lateness: None,
        }
    }
}

#[cfg(feature = "qlog")]
fn attach_qlog(
    config: &SimConfig,
    flow: &FlowConfig,
    role: &str,
    base: Instant,
    transport: &mut quinn_proto::TransportConfig,
) -> Result<(), SimError> {
    let Some(dir) = &config.qlog_dir else {
        return Ok(());
    };
    let path = dir.join(format!("{}-{role}.qlog", flow.name));
    let file = File::create(&path).map_err(|source| SimError::Qlog {
        path: path.clone(),
        source,
    })?;
    let mut qlog = quinn_proto::QlogConfig::default();
    qlog.writer(Box::new(BufWriter::new(file)))
        .title(Some(format!("satquic {} {role}", flow.name)))
        .start_time(base);
    transport.qlog_stream(qlog.into_stream());
    Ok(())
}

#[cfg(not(feature = "qlog"))]
fn attach_qlog(
    _config: &SimConfig,
    _flow: &FlowConfig,
    _role: &str,
    _base: Instant,
    _transport: &mut quinn_proto::TransportConfig,
) -> Result<(), SimError> {
    Err(SimError::Config(
        "qlog requested but satquic was built without the `qlog` feature".into(),
    ))
}
