//! What a simulation run produces: per-flow outcomes, time series samples, link counters.

use std::time::Duration;

use serde::Serialize;

use netsim::{FlowLinkStats, LinkStats};

use crate::app::AppOutcome;

/// How a flow's connection ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum FlowEnd {
    /// Every requested transfer completed.
    Completed,
    /// An unlimited transfer was stopped at its stop time.
    Stopped,
    /// Still transferring when the run ended.
    Running,
    /// The connection closed with an error, e.g. quinn's "too many gaps in stream buffer".
    Error {
        /// quinn's description of the close reason.
        reason: String,
    },
    /// The handshake never completed.
    NotConnected,
}

/// Congestion-control counters of a flow's data sender (the server for downloads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SenderStats {
    /// Packets sent.
    pub sent_packets: u64,
    /// Packets quinn declared lost.
    pub lost_packets: u64,
    /// Bytes quinn declared lost.
    pub lost_bytes: u64,
    /// Congestion events (window reductions).
    pub congestion_events: u64,
    /// Congestion window at the end, bytes.
    pub final_cwnd_bytes: u64,
    /// Most datagrams sent at one instant (pacing check: a window sent at line rate would
    /// show up here as thousands).
    pub max_burst_packets: u64,
}

/// The result of one flow.
#[derive(Debug, Clone, Serialize)]
pub struct FlowOutcome {
    /// Flow name from the scenario.
    pub name: String,
    /// Congestion controller label.
    pub cc: String,
    /// When the client started connecting.
    pub start: Duration,
    /// Handshake duration (start → connected), if it completed.
    pub handshake: Option<Duration>,
    /// Bytes the flow's applications received in order, each at its receiving end.
    pub delivered_bytes: u64,
    /// What each application did, in flow order.
    pub apps: Vec<AppOutcome>,
    /// How it ended.
    pub end: FlowEnd,
    /// When it ended (completion, stop, or error), if before the end of the run.
    pub ended_at: Option<Duration>,
    /// Counters of the data sender.
    pub sender: SenderStats,
    /// This flow's packets at the bottleneck, server → client.
    pub bottleneck_forward: FlowLinkStats,
    /// This flow's packets at the bottleneck, client → server.
    pub bottleneck_return: FlowLinkStats,
    /// The data sender's lost packets by cause, and how its controller took them (a flow
    /// that reconnected: its last connection's).
    pub losses: crate::LossAccounting,
    /// Each loss batch of the data sender's classifying controller (Hybla), with what it saw
    /// and what the path did to the packets (the connection `losses` counts); empty for
    /// controllers that do not classify. Written as `losses.csv`, not with the outcome.
    #[serde(skip)]
    pub loss_batches: Vec<crate::losses::BatchOutcome>,
    /// Each connection of a flow that reconnected (`reconnect_after`), in order; empty for a
    /// flow of one connection (whose numbers are all above).
    pub connections: Vec<ConnectionOutcome>,
}

impl SenderStats {
    /// The counters of two connections of one flow, one after the other.
    pub fn then(self, later: SenderStats) -> SenderStats {
        SenderStats {
            sent_packets: self.sent_packets + later.sent_packets,
            lost_packets: self.lost_packets + later.lost_packets,
            lost_bytes: self.lost_bytes + later.lost_bytes,
            congestion_events: self.congestion_events + later.congestion_events,
            final_cwnd_bytes: later.final_cwnd_bytes,
            max_burst_packets: self.max_burst_packets.max(later.max_burst_packets),
        }
    }
}

/// One connection of a flow that reconnected.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectionOutcome {
    /// When the client started connecting (run time).
    pub start: Duration,
    /// Handshake duration, if it completed.
    pub handshake: Option<Duration>,
    /// When its applications completed (run time), if they did.
    pub ended_at: Option<Duration>,
    /// Bytes its applications received in order.
    pub delivered_bytes: u64,
    /// Its applications, in flow order.
    pub apps: Vec<AppOutcome>,
    /// Its data sender's counters.
    pub sender: SenderStats,
    /// The flow's packets dropped by the forward buffer while it was open.
    pub forward_queue_drops: u64,
    /// The flow's packets dropped by the return buffer while it was open.
    pub return_queue_drops: u64,
    /// How its data sender's Careful Resume went, if it resumed.
    pub careful_resume: Option<ResumeOutcome>,
    /// What its data sender saved for the next connection (RFC 9959 §3.1), if anything.
    pub saved: Option<SavedPathOutcome>,
}

/// A saved path: the window and RTT a connection measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SavedPathOutcome {
    /// saved_cwnd, bytes.
    pub cwnd_bytes: u64,
    /// saved_rtt.
    pub rtt: Duration,
}

impl From<hybla::SavedPath> for SavedPathOutcome {
    fn from(saved: hybla::SavedPath) -> Self {
        SavedPathOutcome {
            cwnd_bytes: saved.saved_cwnd_bytes,
            rtt: saved.saved_rtt,
        }
    }
}

/// One connection's Careful Resume (RFC 9959), with run times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResumeOutcome {
    /// What it resumed from.
    pub resumed_from: SavedPathOutcome,
    /// jump_cwnd, bytes, if the window jumped.
    pub jump_bytes: Option<u64>,
    /// PipeSize at the end, bytes.
    pub pipe_bytes: u64,
    /// Whether it went through Safe Retreat.
    pub retreated: bool,
    /// The phase it ended in.
    pub phase: &'static str,
    /// Every phase change.
    pub transitions: Vec<ResumeTransitionOutcome>,
}

/// One phase change of Careful Resume.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResumeTransitionOutcome {
    /// When (run time).
    pub at: Duration,
    /// Phase left (qlog name).
    pub from: &'static str,
    /// Phase entered.
    pub to: &'static str,
    /// Why.
    pub trigger: &'static str,
}

/// One application's progress at one sample tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AppSample {
    /// Sample time since the start of the run.
    pub t: Duration,
    /// Flow index.
    pub flow: usize,
    /// Application index within the flow.
    pub app: usize,
    /// Bytes its receiving end has got in order so far.
    pub delivered_bytes: u64,
}

/// The forward bottleneck at one sample tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LinkSample {
    /// Sample time since the start of the run.
    pub t: Duration,
    /// Bytes whose serialization had finished by `t`.
    pub forward_serialized_bytes: u64,
}

/// One row of the per-flow time series.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Sample {
    /// Sample time since the start of the run.
    pub t: Duration,
    /// Flow index.
    pub flow: usize,
    /// Bytes the flow's applications have received in order so far, each at its receiving end.
    pub delivered_bytes: u64,
    /// IP bytes of the flow's packets the path has handed to the data receiver so far (the
    /// client for downloads): every packet that arrived, in any order, headers and
    /// retransmissions included. Unlike `delivered_bytes` it does not wait for holes to be
    /// filled, so its rate shows what the link carried rather than head-of-line bursts.
    pub received_ip_bytes: u64,
    /// Congestion window of the data sender, bytes.
    pub cwnd_bytes: u64,
    /// Bytes in flight at the data sender.
    pub in_flight_bytes: u64,
    /// Smoothed RTT at the data sender.
    pub srtt: Duration,
    /// Minimum RTT at the data sender.
    pub min_rtt: Duration,
    /// Packets the data sender has declared lost so far.
    pub lost_packets: u64,
    /// Bottleneck buffer occupancy, server → client, bytes.
    pub queue_forward_bytes: u64,
    /// Bottleneck buffer occupancy, client → server, bytes.
    pub queue_return_bytes: u64,
    /// Mean forward buffer occupancy since the previous sample, bytes: the queue over the
    /// interval, where `queue_forward_bytes` is its value at one instant (which traffic with
    /// a period dividing the interval, 30 fps media at 100 ms, always catches in one phase).
    pub queue_forward_mean_bytes: u64,
    /// Mean return buffer occupancy since the previous sample, bytes.
    pub queue_return_mean_bytes: u64,
}

/// Datagrams a real-time run lost outside the path model, by cause; all zero in virtual time.
/// Every datagram is delivered, dropped by the model (queue, random loss: the link
/// counters), or counted here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct EmulatorDrops {
    /// Dropped by the kernel at the emulator's sockets before it read them (receive buffer
    /// full).
    pub kernel: u64,
    /// Dropped between the emulator's receivers and its scheduler (hand-off full, too many
    /// clients).
    pub overload: u64,
    /// Delivered by the model but not sent on (socket send error).
    pub send_errors: u64,
}

/// How late the real-time emulator delivered packets against the model's arrival times: a
/// busy machine delays deliveries, which adds to every RTT the run measured. Absent in
/// virtual time, where every delivery is exact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct EmulatorLateness {
    /// Deliveries measured.
    pub deliveries: u64,
    /// Median lateness, µs.
    pub p50_us: u64,
    /// 99th percentile lateness, µs.
    pub p99_us: u64,
    /// Largest lateness, µs.
    pub max_us: u64,
}

/// Everything one run produced.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutcome {
    /// Seed of this run.
    pub seed: u64,
    /// When the run ended (duration, or earlier when every flow finished).
    pub end_time: Duration,
    /// Per-flow results, in scenario order.
    pub flows: Vec<FlowOutcome>,
    /// Time series, ordered by time then flow.
    pub samples: Vec<Sample>,
    /// Per-application bytes received in order, at every sample tick (time, then flow, then
    /// application order): what splits a connection's goodput between its applications.
    pub app_samples: Vec<AppSample>,
    /// Bytes the forward bottleneck had serialized by each sample tick: utilization over any
    /// stretch of the run (e.g. one capacity step).
    pub link_samples: Vec<LinkSample>,
    /// Bottleneck counters, server → client.
    pub forward_link: LinkStats,
    /// Bottleneck counters, client → server.
    pub return_link: LinkStats,
    /// Bits the forward bottleneck could have carried from 0 to `end_time`.
    pub forward_capacity_bits: f64,
    /// Resolved forward buffer limit, bytes (u64::MAX when limited by packets).
    pub forward_queue_limit_bytes: u64,
    /// Datagrams the simulator moved (both directions): the unit of simulation speed.
    pub datagrams: u64,
    /// What the real-time emulator lost outside the model (zero in virtual time).
    pub emulator_drops: EmulatorDrops,
    /// How late the real-time emulator delivered against the model; None in virtual time.
    pub emulator_lateness: Option<EmulatorLateness>,
}
