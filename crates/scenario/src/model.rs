//! What a loaded scenario is: the validated [`Scenario`] with its flows and transport
//! settings, and the defaults a file may leave out. Everything here has passed the checks in
//! `validate`; the rest of the workspace reads these types and never the file.

use std::time::Duration;

use netsim::{LinkConfig, PathConfig};
use sched::SchedulerSpec;

use crate::apps::{AppConfig, AppKind, PerfConfig};
use crate::controllers::ControllerSpec;

/// Master seed when the file gives none, so that two runs of the same file agree.
pub const DEFAULT_SEED: u64 = 1;

/// Sampling period of per-flow time series when the file gives none.
pub const DEFAULT_SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

/// Shortest `sample_interval`: the simulator keeps one time-series row per flow and interval
/// in memory, and a finer series says nothing a 1 ms one does not (it is read over 100 ms and
/// longer windows).
pub const MIN_SAMPLE_INTERVAL: Duration = Duration::from_millis(1);

/// Most time-series rows a run may keep: flows × (`duration` / `sample_interval`). Each row
/// is about 120 bytes in memory, so this caps the series at about 1.2 GB; 1000 flows for
/// 300 s at the default 100 ms are 3 000 000 rows.
pub const MAX_TIME_SERIES_ROWS: u64 = 10_000_000;

/// Most flows a scenario may have after `count` expansion. Each is a QUIC connection with
/// two endpoints in one process; the largest shipped scenario has six.
pub const MAX_FLOWS: usize = 1000;

/// Largest buffer a link may have, bytes (1 GiB), a packet limit counted at `mtu` bytes per
/// packet. The simulator holds every queued packet in memory (and the transport preset sizes
/// windows from the buffer), so a typo such as `"100TB"` would exhaust the machine. 1 GiB is
/// 14 BDP of a 1 Gbit/s GEO link (600 ms), 8.6 s of queue at 1 Gbit/s, 715 827 packets of 1500
/// bytes.
pub const MAX_QUEUE_BYTES: u64 = 1 << 30;

/// Longest scenario or flow name, bytes: names become file and directory names (`out/NAME`,
/// qlog files), with suffixes added.
pub const MAX_NAME_BYTES: usize = 128;

/// The MTU bounds a scenario's `mtu` must keep: netsim's, the one place for them.
pub use netsim::{MAX_MTU_BYTES, MIN_MTU_BYTES};

/// Download sizes at which completion times are reported when the file gives none: the
/// draft-kuhn-quic-4-sat objectives are stated at 2, 10 and 100 MB (\[Kuhn-slides\]).
pub const DEFAULT_TIME_TO_BYTES: [u64; 3] = [2_000_000, 10_000_000, 100_000_000];

/// One experiment: the bottleneck in both directions, run length, and the flows crossing it.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Short identifier, used to name outputs.
    pub name: String,
    /// Free text for reports.
    pub description: Option<String>,
    /// Length of the run in (virtual or wall-clock) time.
    pub duration: Duration,
    /// Master seed; every random stream of the run is derived from it.
    pub seed: u64,
    /// Period of the per-flow time series.
    pub sample_interval: Duration,
    /// Largest IP packet the path carries, bytes.
    pub mtu_bytes: u32,
    /// Delivered-byte marks at which each flow's completion time is reported, bytes.
    pub time_to_bytes: Vec<u64>,
    /// Server → client (download) direction of the bottleneck.
    pub forward: LinkConfig,
    /// Client → server (upload, ACK) direction of the bottleneck.
    pub return_link: LinkConfig,
    /// Flows after `count` expansion, in file order.
    pub flows: Vec<FlowSpec>,
}

/// One QUIC connection and what it transfers.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    /// Unique name (after `count` expansion, `"name-1"`, `"name-2"`, ...).
    pub name: String,
    /// Congestion controller (`cc`) with its validated parameters (`cc_params`).
    pub controller: ControllerSpec,
    /// When the client connects, since the start of the run.
    pub start: Duration,
    /// Extra one-way delay of this flow's access segment, added in each direction.
    pub access_delay: Duration,
    /// The applications on this connection, in order (at least one): the `[[flow.app]]`
    /// tables, or the one perf application the shorthand (`download`, `upload`,
    /// `repeat_after` on the flow) describes.
    pub apps: Vec<AppConfig>,
    /// When the connection closes if still open (unlimited transfers), since the start of
    /// the run.
    pub stop: Option<Duration>,
    /// After the applications complete, the client closes the connection, waits this long and
    /// runs them again on a new connection (`reconnect_after`; draft-kuhn's "download, wait,
    /// download again" as two connections, where Careful Resume can carry the first
    /// connection's measurement to the second).
    pub reconnect_after: Option<Duration>,
    /// Whether to write a qlog file for this connection.
    pub qlog: bool,
    /// Transport settings: the flow's overrides merged over the scenario's `[transport]`.
    pub transport: TransportSpec,
    /// How the applications share the connection (`scheduler = "..."`; `none` by default).
    pub scheduler: SchedulerSpec,
}

impl FlowSpec {
    /// The flow's first perf application, if any.
    pub fn perf(&self) -> Option<&PerfConfig> {
        self.apps.iter().find_map(|app| match &app.kind {
            AppKind::Perf(perf) => Some(perf),
            _ => None,
        })
    }
}

/// Transport settings of one connection. `None` means "auto": the lab chooses (windows are
/// sized from the path's bandwidth-delay product, see `quinn_satellite::TransportSettings::for_path`) or leaves quinn's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransportSpec {
    /// RTT assumed before the first sample.
    pub initial_rtt: Option<Duration>,
    /// Per-stream flow-control window, bytes.
    pub stream_receive_window_bytes: Option<u64>,
    /// Connection flow-control window, bytes.
    pub receive_window_bytes: Option<u64>,
    /// Sender buffer limit, bytes.
    pub send_window_bytes: Option<u64>,
    /// ACK-frequency extension: ack-eliciting packets the receiver may get before it must ACK.
    pub ack_eliciting_threshold: Option<u32>,
    /// Longest time the receiver may delay an ACK.
    pub max_ack_delay: Option<Duration>,
}

impl Scenario {
    /// The netsim path of this scenario: both links, the MTU and each flow's access delay.
    pub fn path_config(&self) -> PathConfig {
        PathConfig {
            forward: self.forward.clone(),
            return_link: self.return_link.clone(),
            mtu_bytes: self.mtu_bytes,
            access_delays: self.flows.iter().map(|f| f.access_delay).collect(),
        }
    }
}
