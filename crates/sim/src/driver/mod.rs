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
//!
//! Inside: `config` is what a caller describes (flows, their applications, the run),
//! `flow` what the loop keeps of each flow, `connections` sets up endpoints and starts,
//! reconnects and stops connections, `step` is one step's work (datagrams, timers, the touched
//! ends), and `measure` the samples at each tick and the outcomes at the end; this module is
//! the loop.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::BytesMut;

use netsim::{DropCause, Path};

use crate::app::AppError;
use crate::outcome::{AppSample, LinkSample, RunOutcome, Sample};
use crate::tls::TlsError;

mod config;
mod connections;
mod flow;
mod measure;
mod step;

pub use config::{FlowApp, FlowConfig, ResumedController, SimConfig};

use flow::FlowState;

/// Steps allowed at one instant before the run is declared livelocked.
const MAX_STEPS_AT_ONE_INSTANT: u64 = 1_000_000;

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
    /// Where the last sample read the buffers' mean occupancy.
    queue_meter: netsim::MeanQueueMeter,
    buf: Vec<u8>,
    datagrams: u64,
    /// How many of the path's recorded drops the flows' loss truths have been told of.
    drops_told: usize,
}

impl<'a> Simulation<'a> {
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

    /// Tells each flow that asks ([`FlowConfig::loss_truth`]) of its data sender's packets the
    /// path dropped since the last call. Called before every delivery: the acknowledgement
    /// that lets quinn declare a packet lost left the receiver after the packet's drop.
    fn tell_drops(&mut self) {
        let drops = self.path.recorded_drops();
        for drop in &drops[self.drops_told.min(drops.len())..] {
            let config = &self.config.flows[drop.flow];
            if let Some(truth) = &config.loss_truth
                && drop.direction == config.data_direction()
                && drop.cause != DropCause::Oversize
            {
                truth.record(self.base + drop.sent_at, drop.cause.is_congestion());
            }
        }
        self.drops_told = drops.len();
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
}
