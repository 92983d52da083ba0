//! What a caller describes: the flows of a run (controller, start and stop, applications,
//! scheduler, transport, reconnection) and the run itself (path, seed, duration, sampling).

use perfwire::Sender;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use quinn_proto::congestion::ControllerFactory;

use netsim::{Direction, PathConfig};

use sched::SchedulerSpec;

use crate::app::AppSpec;
use crate::losses::PathLossTruth;
use quinn_satellite::TransportSettings;

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
    /// Where the path tells the flow's controller why each of its data packets was lost, as it
    /// happens (Hybla's `classifier = "truth"`); `None`: nobody asks.
    pub loss_truth: Option<Arc<PathLossTruth>>,
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
            .field("loss_truth", &self.loss_truth.is_some())
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
    pub fn data_sender(&self) -> Sender {
        self.apps
            .first()
            .map_or(Sender::Server, |app| app.spec.data_sender())
    }

    /// The way the flow's data crosses the bottleneck (from its [`Self::data_sender`]).
    pub fn data_direction(&self) -> Direction {
        match self.data_sender() {
            Sender::Server => Direction::Forward,
            Sender::Client => Direction::Return,
        }
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
