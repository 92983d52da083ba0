//! What the loop keeps of each flow: its two ends (endpoint, connection, timer, probe,
//! scheduler), its applications' halves, and where its connections stand.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use quinn_proto::{ClientConfig, Connection, ConnectionHandle, Endpoint};

use sched::Scheduler;

use crate::app::App;
use crate::outcome::{ConnectionOutcome, FlowEnd};
use probe::ProbeReadings;

/// One side (client or server) of a flow.
pub(super) struct Side {
    pub(super) endpoint: Endpoint,
    pub(super) address: SocketAddr,
    pub(super) connection: Option<(ConnectionHandle, Connection)>,
    pub(super) timeout: Option<Duration>,
    pub(super) probe: Arc<ProbeReadings>,
    pub(super) scheduler: Box<dyn Scheduler>,
    pub(super) dirty: bool,
    /// Most datagrams this side sent at a single virtual instant.
    pub(super) max_burst_packets: u64,
}

impl Side {
    pub(super) fn new(
        endpoint: Endpoint,
        address: SocketAddr,
        scheduler: Box<dyn Scheduler>,
    ) -> Self {
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

pub(super) struct FlowState {
    pub(super) client: Side,
    pub(super) server: Side,
    /// Client halves of the flow's applications, in application order.
    pub(super) client_apps: Vec<Box<dyn App>>,
    /// Server halves, in the same order.
    pub(super) server_apps: Vec<Box<dyn App>>,
    pub(super) client_config: Option<ClientConfig>,
    pub(super) started: bool,
    /// When the first connection's handshake completed.
    pub(super) connected_at: Option<Duration>,
    pub(super) end: Option<(FlowEnd, Duration)>,
    /// A flow that reconnects: its connections that ended, in order.
    pub(super) finished: Vec<ConnectionOutcome>,
    /// Between the connections of a flow that reconnects: when the next one starts.
    pub(super) reconnect_at: Option<Duration>,
    /// When the current connection's applications completed.
    pub(super) closed_at: Option<Duration>,
    /// When the current connection started and its handshake completed.
    pub(super) connection_start: Duration,
    pub(super) connection_connected_at: Option<Duration>,
    /// The flow's forward and return queue drops when the current connection started.
    pub(super) drops_at_start: (u64, u64),
    /// What a new connection of the flow is keyed with.
    pub(super) keys: Keys,
}

/// TLS settings and the token key of a flow's connections.
pub(super) struct Keys {
    pub(super) server: Arc<quinn_proto::crypto::rustls::QuicServerConfig>,
    pub(super) client: Arc<quinn_proto::crypto::rustls::QuicClientConfig>,
    pub(super) token: Arc<ring::hkdf::Prk>,
}
