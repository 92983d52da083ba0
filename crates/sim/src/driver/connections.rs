//! Every connection of a run, from its settings to its end: the endpoints and keys of each
//! flow, each connection's transport and TLS settings (qlog included), and the flows started,
//! reconnected after their gap (resuming from what the previous connection saved) and stopped.

use perfwire::Sender;
use std::fs::File;
use std::io::BufWriter;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn_proto::congestion::ControllerFactory;
use quinn_proto::{ClientConfig, Endpoint, EndpointConfig, ServerConfig};

use netsim::{Direction, Path};

use crate::apps::perf;
use crate::determinism::{FrozenClock, SeededCidGenerator, reset_key, seed_bytes, token_key};
use crate::outcome::FlowEnd;
use crate::tls::{self, Identity};
use probe::{ProbeReadings, ProbedFactory};

use super::flow::{FlowState, Keys, Side};
use super::{FlowConfig, SimConfig, SimError, Simulation};

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
        Sender::Server => (sender_controller, flow.controller.clone()),
        Sender::Client => (flow.controller.clone(), sender_controller),
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

impl<'a> Simulation<'a> {
    pub(super) fn new(config: &'a SimConfig) -> Result<Self, SimError> {
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
                // quinn's default (1 472 B) would cap every datagram at an Ethernet MTU,
                // whatever the path's: the scenario's MTU is what both ends accept.
                let payload = config.path.mtu_bytes - netsim::IP_UDP_HEADER_BYTES;
                c.max_udp_payload_size(u16::try_from(payload).unwrap_or(u16::MAX))
                    .expect("the scenario bounds the MTU to 1228..=65535");
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
            queue_meter: netsim::MeanQueueMeter::default(),
            buf: Vec::with_capacity(2048),
            datagrams: 0,
            drops_told: 0,
        })
    }

    pub(super) fn start_flows(&mut self, now: Duration) {
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
    pub(super) fn reconnect_flows(&mut self, now: Duration) -> Result<(), SimError> {
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

    pub(super) fn stop_flows(&mut self, now: Duration) {
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
