//! The `summary.json` schema: what a summary holds, per path, run, flow, connection and
//! application, and the aggregates over seeds. Every type serializes and reads back.

use serde::{Deserialize, Serialize};

use netsim::{Aqm, LinkStats, LossModel, ScheduleStep};
use sim::apps::media::DelayPercentiles;

/// Bumped whenever a field changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;

/// Top of `summary.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// Schema of this file.
    pub schema_version: u32,
    /// satquic version that produced it.
    pub satquic_version: String,
    /// Scenario name.
    pub scenario: String,
    /// Scenario description, if any.
    pub description: Option<String>,
    /// First seed.
    pub seed: u64,
    /// Number of seeds per controller.
    pub seeds: u64,
    /// Scenario duration, seconds.
    pub duration_s: f64,
    /// The path as simulated.
    pub path: PathSummary,
    /// One entry per (controller, seed).
    pub runs: Vec<RunSummary>,
    /// Mean ± stdev over seeds, per controller and flow (also with one seed).
    pub aggregates: Vec<Aggregate>,
}

/// The path, resolved (queue limits in bytes, ceiling computed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PathSummary {
    /// Server → client.
    pub forward: LinkSummary,
    /// Client → server.
    #[serde(rename = "return")]
    pub return_link: LinkSummary,
    /// IP MTU, bytes.
    pub mtu_bytes: u32,
    /// Application bytes a full-size packet carries after IP/UDP/QUIC overhead.
    pub payload_bytes_per_packet: u32,
    /// Highest possible download goodput at the initial forward rate, bit/s.
    pub goodput_ceiling_bps: f64,
    /// Propagation RTT of the bottleneck (forward + return delay), ms.
    pub base_rtt_ms: f64,
}

/// One direction of the bottleneck.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LinkSummary {
    /// Initial rate, bit/s.
    pub rate_bps: u64,
    /// Initial one-way delay, ms.
    pub delay_ms: f64,
    /// Buffer limit in bytes (null when limited by packets).
    pub queue_limit_bytes: Option<u64>,
    /// Buffer limit in packets (null when limited by bytes).
    pub queue_limit_packets: Option<u64>,
    /// Queue discipline.
    pub aqm: Aqm,
    /// Initial random loss model.
    pub loss: LossModel,
    /// Its long-run loss rate.
    pub stationary_loss_rate: f64,
    /// Per-packet delay variation (absent when none).
    #[serde(default, skip_serializing_if = "netsim::Jitter::is_none")]
    pub jitter: netsim::Jitter,
    /// Mean extra delay the jitter distribution adds to a sparse packet, ms (absent when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_mean_ms: Option<f64>,
    /// Slotted delivery interval, ms (absent when packets leave as soon as serialized).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_ms: Option<f64>,
    /// Scheduled changes.
    pub schedule: Vec<ScheduleStep>,
}

/// One (controller, seed) run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSummary {
    /// Controller label of the run.
    pub cc: String,
    /// Seed.
    pub seed: u64,
    /// When the run ended, seconds.
    pub end_s: f64,
    /// Jain fairness index of the flows' goodputs while all were active (1 for one flow).
    pub jain_index: f64,
    /// Forward bottleneck busy fraction over the run.
    pub link_utilization: f64,
    /// Forward bottleneck counters.
    pub forward_link: LinkStats,
    /// Return bottleneck counters.
    pub return_link: LinkStats,
    /// Datagrams the real-time emulator lost outside the model (kernel socket drops,
    /// hand-off overload, send errors); zero in the simulator.
    pub emulator_drops: sim::EmulatorDrops,
    /// How late the real-time emulator delivered packets against the model (a busy machine
    /// inflates every RTT by this much); absent in the simulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulator_lateness: Option<sim::EmulatorLateness>,
    /// Per flow.
    pub flows: Vec<FlowSummary>,
    /// Per forward-capacity step, for runs with media or bulk applications (see
    /// [`crate::periods`]); absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub periods: Vec<crate::periods::Period>,
}

/// One flow of one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowSummary {
    /// Flow name.
    pub name: String,
    /// Controller.
    pub cc: String,
    /// "completed", "stopped", "running", "error", "not_connected".
    pub state: String,
    /// Close reason when `state` is "error".
    pub error: Option<String>,
    /// Goodput, bit/s.
    pub goodput_bps: f64,
    /// Goodput / mean bottleneck rate while transferring.
    pub efficiency: f64,
    /// Goodput / goodput ceiling (after protocol overhead).
    pub ceiling_fraction: f64,
    /// Bytes the flow's applications delivered in order (for perf: the downloads, or the
    /// uploads of an upload-only flow).
    pub bytes_delivered: u64,
    /// Upload bytes received in order by the server.
    pub bytes_uploaded: u64,
    /// Flow start, seconds.
    pub start_s: f64,
    /// Handshake duration, seconds.
    pub handshake_s: Option<f64>,
    /// First exchange: request sent → last byte read, seconds; null if unfinished.
    pub completion_s: Option<f64>,
    /// First exchange: request sent → this many bytes in order, seconds.
    pub time_to_bytes: Thresholds,
    /// Every exchange (two with `repeat_after`).
    pub exchanges: Vec<ExchangeSummary>,
    /// Packets the data sender declared lost.
    pub lost_packets: u64,
    /// Packets the data sender sent.
    pub sent_packets: u64,
    /// Congestion events at the data sender.
    pub congestion_events: u64,
    /// Most datagrams the data sender emitted at one instant (pacing check).
    pub max_burst_packets: u64,
    /// Largest congestion window sampled, bytes (compare with the burst).
    pub max_cwnd_bytes: u64,
    /// This flow's packets dropped by the forward buffer.
    pub forward_queue_drops: u64,
    /// This flow's packets corrupted by forward random loss.
    pub forward_random_losses: u64,
    /// The data sender's lost packets by cause (ground truth from the path), how its
    /// controller took them, and (simulator) the two matched packet by packet.
    #[serde(default)]
    pub losses: sim::LossAccounting,
    /// Each application on the connection, in flow order.
    pub apps: Vec<AppSummary>,
    /// A flow that reconnects (`reconnect_after`): each connection, in order, with its
    /// Careful Resume; absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<ConnectionSummary>,
}

/// One connection of a flow that reconnects.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConnectionSummary {
    /// The client started connecting, seconds since run start.
    pub start_s: f64,
    /// Handshake duration, seconds.
    pub handshake_s: Option<f64>,
    /// Its first exchange: request sent → last byte read, seconds.
    pub completion_s: Option<f64>,
    /// Its first exchange: request sent → this many bytes in order, seconds.
    pub time_to_bytes: Thresholds,
    /// Packets its data sender sent.
    pub sent_packets: u64,
    /// Packets its data sender declared lost.
    pub lost_packets: u64,
    /// The flow's packets the forward buffer dropped while it was open.
    pub forward_queue_drops: u64,
    /// How its data sender's Careful Resume went, if it resumed (RFC 9959).
    pub careful_resume: Option<ResumeSummary>,
    /// What its data sender saved for the next connection, if anything.
    pub saved: Option<SavedPathSummary>,
}

/// A saved path (RFC 9959 §3.1).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedPathSummary {
    /// saved_cwnd, bytes.
    pub cwnd_bytes: u64,
    /// saved_rtt, ms.
    pub rtt_ms: f64,
}

/// One connection's Careful Resume.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResumeSummary {
    /// What it resumed from.
    pub resumed_from: SavedPathSummary,
    /// jump_cwnd, bytes; null if the window never jumped.
    pub jump_bytes: Option<u64>,
    /// PipeSize at the end, bytes.
    pub pipe_bytes: u64,
    /// Whether it went through Safe Retreat.
    pub retreated: bool,
    /// The phase it ended in.
    pub phase: String,
    /// Each phase change: when (seconds since run start), from, to, why.
    pub transitions: Vec<ResumeTransitionSummary>,
}

/// One phase change of Careful Resume.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResumeTransitionSummary {
    /// Seconds since run start.
    pub at_s: f64,
    /// Phase left.
    pub from: String,
    /// Phase entered.
    pub to: String,
    /// The trigger (the Careful Resume qlog draft's names).
    pub trigger: String,
}

/// One application of a flow.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AppSummary {
    /// Name from the scenario.
    pub name: String,
    /// "perf", "media", ...
    pub kind: String,
    /// Bytes its receiving end got in order × 8 / the time it was transferring, bit/s.
    pub goodput_bps: f64,
    /// Media applications: frame counts and delays.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub media: Option<MediaSummary>,
}

/// The media section of an [`AppSummary`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MediaSummary {
    /// Frames captured and sent.
    pub frames_sent: u64,
    /// Frames received completely.
    pub frames_received: u64,
    /// One-way frame delay percentiles, ms.
    pub frame_delay_ms: DelayPercentiles,
    /// Received frames later than the deadline.
    pub late_frames: u64,
    /// The deadline, ms.
    pub deadline_ms: f64,
    /// Frames the sender cancelled because they could no longer arrive in time.
    pub cancelled_frames: u64,
    /// Mean rate the frames were encoded at (below the nominal rate when the source
    /// adapted), bit/s.
    pub mean_bitrate_bps: f64,
}

/// One request/response of a flow.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExchangeSummary {
    /// Request sent, seconds since run start.
    pub requested_s: f64,
    /// Request → last byte, seconds.
    pub completion_s: Option<f64>,
    /// Request → server has the whole upload, seconds.
    pub upload_completion_s: Option<f64>,
    /// Request → this many bytes in order, seconds.
    pub time_to_bytes: Thresholds,
}

/// Mean and spread of a flow's results over seeds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Aggregate {
    /// Controller.
    pub cc: String,
    /// Flow name.
    pub flow: String,
    /// Runs aggregated.
    pub runs: usize,
    /// Mean goodput, bit/s.
    pub goodput_bps_mean: f64,
    /// Sample standard deviation of goodput (0 with one run).
    pub goodput_bps_stdev: f64,
    /// Mean completion time over the runs that completed.
    pub completion_s_mean: Option<f64>,
    /// Sample standard deviation of completion time.
    pub completion_s_stdev: Option<f64>,
    /// Runs whose first exchange completed.
    pub completed_runs: usize,
    /// Mean lost packets.
    pub lost_packets_mean: f64,
}

/// Seconds until each transfer size was reached, in increasing size order; serialized as a
/// JSON object `{"2MB": 1.9, "10MB": null}` (null: never reached).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Thresholds(pub Vec<(String, Option<f64>)>);

impl FlowSummary {
    /// Share of the flow's time up to `end_s` (the run's end) in which its controller judged
    /// the bottleneck shared (Hybla's competing mode); `None` for a controller that does not
    /// say, or a flow that never ran.
    pub fn shared_share(&self, end_s: f64) -> Option<f64> {
        let verdicts = self.losses.verdicts?;
        let span = end_s - self.start_s;
        (span > 0.0).then(|| verdicts.shared_s / span)
    }
}

impl Thresholds {
    /// Seconds for the size labelled `label`, if reached.
    pub fn get(&self, label: &str) -> Option<f64> {
        self.0
            .iter()
            .find(|(l, _)| l == label)
            .and_then(|(_, v)| *v)
    }

    /// The size labels, in order.
    pub fn labels(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(l, _)| l.as_str())
    }
}

impl Serialize for Thresholds {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (label, seconds) in &self.0 {
            map.serialize_entry(label, seconds)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Thresholds {
    /// Reads the object in document order (the size order it was written in).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Thresholds;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of size label → seconds or null")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Thresholds, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Option<f64>>()? {
                    entries.push(entry);
                }
                Ok(Thresholds(entries))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}
