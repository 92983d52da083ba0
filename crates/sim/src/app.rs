//! Applications on connections: the extension point of the simulator.
//!
//! A flow is one QUIC connection with one or more applications on it. Each application has a
//! client half and a server half ([`App`]), built together by its [`AppSpec`]; the driver
//! knows nothing about what they send. It hands them the connection when something happened
//! (data arrived, a timer fired, the handshake completed), routes the streams the peer opens
//! to the first half that [accepts](App::accepts) them, samples what they
//! [received](App::received_bytes), and collects their [reports](App::report).
//!
//! Adding an application means writing its halves once, as `appcore` state machines (so that
//! the real-time endpoints run them too), and its spec and report in `apps/`; nothing here or
//! in the driver.

use perfwire::Sender;
use std::fmt;
use std::time::Duration;

use quinn_proto::{Connection, Dir, StreamId};
use sched::Scheduler;
use serde::{Deserialize, Serialize};

/// What a half works with when it runs: the connection, the time, and the flow's scheduler on
/// this end (how the applications of one connection share it; see the `sched` crate).
pub struct Context<'a> {
    /// The connection this half runs on.
    pub connection: &'a mut Connection,
    /// Virtual time since the start of the run; the connection sees the same instant.
    pub now: Duration,
    /// The scheduler of this end of the connection, already told the transport state now.
    pub scheduler: &'a mut dyn Scheduler,
}

/// Data a receiver got that is not what was sent, or a peer that broke the application's
/// protocol: a bug in the stack or the simulator, never acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    /// Bytes differ from the pattern at their offset.
    #[error("data mismatch on stream {stream} at offset {offset} ({len} bytes)")]
    Corruption {
        /// Stream id.
        stream: u64,
        /// Offset of the bad chunk in the transfer.
        offset: u64,
        /// Its length.
        len: usize,
    },
    /// The peer sent something the application's protocol does not allow.
    #[error("{0}")]
    Protocol(String),
}

/// One half of an application: runs on one end of a connection, in virtual time.
///
/// Every method is called with the same `now` the connection sees; halves must not read the
/// wall clock (determinism).
pub trait App {
    /// The handshake completed on this end.
    fn on_connected(&mut self, _now: Duration) {}

    /// Whether this half serves streams of direction `dir` that the peer opens. The driver
    /// offers each new peer stream to the flow's halves in application order.
    fn accepts(&self, _dir: Dir) -> bool {
        false
    }

    /// A peer-opened stream this half [accepted](App::accepts).
    fn adopt_stream(&mut self, _id: StreamId, _now: Duration) {}

    /// Reads what arrived and writes what it can, as the scheduler allows. Returns whether the
    /// peer half should run too (it has something new to learn through the measurement
    /// harness, e.g. an upload's completion seen at the server).
    fn drive(&mut self, cx: &mut Context<'_>) -> Result<bool, AppError>;

    /// Whether this half writes outside the flow's scheduler (perf): the driver steps such
    /// halves after the others, so they never take the room the scheduler gave the others
    /// (quinn's send window is the whole connection's, and the scheduler sets it before each
    /// of its applications writes).
    fn writes_outside_the_scheduler(&self) -> bool {
        false
    }

    /// When this half wants to run without any network event (a timer of its own).
    fn wakeup(&self) -> Option<Duration> {
        None
    }

    /// Whether this half has finished its work. A flow ends (and closes its connection) once
    /// every client half is finished; server halves are not consulted.
    fn is_finished(&self) -> bool {
        false
    }

    /// Application bytes this half has received in order so far.
    fn received_bytes(&self) -> u64;

    /// Periods in which the application was transferring (start, end if it ended): the time
    /// its goodput is measured over. Only one half needs to report them.
    fn busy_periods(&self) -> Vec<(Duration, Option<Duration>)> {
        Vec::new()
    }

    /// This half's measurements, as a JSON object; the flow's report merges both halves'.
    fn report(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
}

/// What an application is and how to build its two halves. Lives in the flow's config, so it
/// is shared by every run of a scenario (hence `Send + Sync`); the halves it builds live in one
/// run only.
pub trait AppSpec: Send + Sync + fmt::Debug {
    /// The kind, as it appears in reports ("perf", "media", ...).
    fn kind(&self) -> &'static str;

    /// The end that sends this application's data: its congestion controller's counters are
    /// the flow's when this is the flow's first application.
    fn data_sender(&self) -> Sender;

    /// Fresh client and server halves for one run.
    fn build(&self) -> (Box<dyn App>, Box<dyn App>);
}

/// What one application did in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppOutcome {
    /// Name from the scenario.
    pub name: String,
    /// Its [`AppSpec::kind`].
    pub kind: String,
    /// Bytes its receiving half (the end opposite [`AppSpec::data_sender`]) got in order.
    pub received_bytes: u64,
    /// When it was transferring; see [`App::busy_periods`].
    pub busy_periods: Vec<(Duration, Option<Duration>)>,
    /// Both halves' [`App::report`]s merged; the application's own module gives it a type.
    pub report: serde_json::Map<String, serde_json::Value>,
}
