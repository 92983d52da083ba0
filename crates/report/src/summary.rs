//! The metrics of a run and the `summary.json` schema, computed once from run outcomes so every
//! export (JSON, CSV, table, plots) reads the same numbers.
//!
//! Definitions: goodput = application bytes delivered in order / the time
//! the flow was transferring (request sent → last byte read, or → end of run for unfinished
//! and unlimited transfers); efficiency = goodput / the bottleneck's mean forward rate over that
//! time; ceiling fraction = goodput / what the link allows after IP, UDP and QUIC overhead; Jain
//! index over per-flow goodputs in the window where all flows were active; link utilization =
//! bytes serialized on the forward bottleneck / its capacity over the run.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use netsim::{Aqm, LinkConfig, LinkStats, LossModel, QueueLimit, ScheduleStep};
use sim::AppOutcome;
use sim::apps::media::{DelayPercentiles, MediaReport};
use sim::apps::perf::{Exchange, PerfReport};
use sim::{FlowEnd, FlowOutcome, RunOutcome, Sample};

use scenario::Scenario;

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

fn saved_summary(saved: &sim::SavedPathOutcome) -> SavedPathSummary {
    SavedPathSummary {
        cwnd_bytes: saved.cwnd_bytes,
        rtt_ms: saved.rtt.as_secs_f64() * 1e3,
    }
}

fn connection_summary(
    scenario: &Scenario,
    connection: &sim::ConnectionOutcome,
) -> ConnectionSummary {
    let perf = connection
        .apps
        .iter()
        .find_map(PerfReport::of)
        .unwrap_or_default();
    let first = perf.exchanges.first();
    ConnectionSummary {
        start_s: seconds(connection.start),
        handshake_s: connection.handshake.map(seconds),
        completion_s: first.and_then(|e| e.completed_at.map(|c| seconds(c - e.requested_at))),
        time_to_bytes: thresholds_map(
            first.unwrap_or(&Exchange::default()),
            &scenario.time_to_bytes,
        ),
        sent_packets: connection.sender.sent_packets,
        lost_packets: connection.sender.lost_packets,
        forward_queue_drops: connection.forward_queue_drops,
        careful_resume: connection
            .careful_resume
            .as_ref()
            .map(|resume| ResumeSummary {
                resumed_from: saved_summary(&resume.resumed_from),
                jump_bytes: resume.jump_bytes,
                pipe_bytes: resume.pipe_bytes,
                retreated: resume.retreated,
                phase: resume.phase.to_owned(),
                transitions: resume
                    .transitions
                    .iter()
                    .map(|t| ResumeTransitionSummary {
                        at_s: seconds(t.at),
                        from: t.from.to_owned(),
                        to: t.to.to_owned(),
                        trigger: t.trigger.to_owned(),
                    })
                    .collect(),
            }),
        saved: connection.saved.as_ref().map(saved_summary),
    }
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

fn app_summary(app: &AppOutcome, flow: &FlowOutcome, run_end: Duration) -> AppSummary {
    let busy: Duration = app
        .busy_periods
        .iter()
        .map(|&p| busy_end(p, flow, run_end) - p.0)
        .sum();
    let goodput_bps = if busy.is_zero() {
        0.0
    } else {
        app.received_bytes as f64 * 8.0 / busy.as_secs_f64()
    };
    AppSummary {
        name: app.name.clone(),
        kind: app.kind.clone(),
        goodput_bps,
        media: MediaReport::of(app).map(|m| MediaSummary {
            frames_sent: m.frames_sent,
            frames_received: m.frames_received,
            frame_delay_ms: m.frame_delay_ms,
            late_frames: m.late_frames,
            deadline_ms: m.deadline_ms,
            cancelled_frames: m.cancelled_frames,
            mean_bitrate_bps: m.mean_bitrate_bps,
        }),
    }
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

/// A size label as scenario files write it: "2MB", "100MB", "10MiB", "1500B".
pub fn size_label(bytes: u64) -> String {
    const UNITS: [(u64, &str); 6] = [
        (1 << 30, "GiB"),
        (1_000_000_000, "GB"),
        (1 << 20, "MiB"),
        (1_000_000, "MB"),
        (1 << 10, "KiB"),
        (1_000, "KB"),
    ];
    for (unit, name) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes}B")
}

fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn link_summary(config: &LinkConfig, base_rtt: Duration) -> LinkSummary {
    let bytes = config.queue.limit_bytes(config.rate_bps, base_rtt);
    let packets = match config.queue {
        QueueLimit::Packets(p) => Some(p),
        _ => None,
    };
    LinkSummary {
        rate_bps: config.rate_bps,
        delay_ms: config.delay.as_secs_f64() * 1e3,
        queue_limit_bytes: bytes,
        queue_limit_packets: packets,
        aqm: config.aqm,
        loss: config.loss,
        stationary_loss_rate: config.loss.stationary_loss_rate(),
        jitter: config.jitter,
        jitter_mean_ms: (!config.jitter.is_none())
            .then(|| config.jitter.distribution.mean_secs() * 1e3),
        slot_ms: config.slot.map(|slot| slot.as_secs_f64() * 1e3),
        schedule: config.schedule.clone(),
    }
}

/// The path part of the summary.
pub fn path_summary(scenario: &Scenario) -> PathSummary {
    let path = scenario.path_config();
    let payload = sim::payload_bytes_per_packet(scenario.mtu_bytes);
    PathSummary {
        forward: link_summary(&scenario.forward, path.base_rtt()),
        return_link: link_summary(&scenario.return_link, path.base_rtt()),
        mtu_bytes: scenario.mtu_bytes,
        payload_bytes_per_packet: payload,
        goodput_ceiling_bps: netsim::goodput_ceiling_bps(
            scenario.forward.rate_bps,
            payload,
            scenario.mtu_bytes,
        ),
        base_rtt_ms: path.base_rtt().as_secs_f64() * 1e3,
    }
}

/// When an exchange stopped transferring: completion, the flow's end, or the run's end.
/// When a busy period that began at `start` ended: its own end, else the flow's, else the run's.
fn busy_end(
    (start, end): (Duration, Option<Duration>),
    flow: &FlowOutcome,
    run_end: Duration,
) -> Duration {
    end.or(flow.ended_at)
        .unwrap_or(run_end)
        .min(run_end)
        .max(start)
}

/// The flow's perf application's report, if it has one.
fn perf_report(flow: &FlowOutcome) -> Option<PerfReport> {
    flow.apps.iter().find_map(PerfReport::of)
}

fn thresholds_map(exchange: &Exchange, thresholds: &[u64]) -> Thresholds {
    let mut sorted = thresholds.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    Thresholds(
        sorted
            .iter()
            .map(|&t| {
                (
                    size_label(t),
                    exchange
                        .reached
                        .get(&t)
                        .map(|at| seconds(*at - exchange.requested_at)),
                )
            })
            .collect(),
    )
}

fn flow_summary(
    scenario: &Scenario,
    flow: &FlowOutcome,
    run_end: Duration,
    ceiling_bps: f64,
    max_cwnd_bytes: u64,
) -> FlowSummary {
    // The flow was transferring while any of its applications was: the union of their busy
    // periods (one app's periods never overlap, so with one app this is their sum).
    let mut periods: Vec<(Duration, Duration)> = flow
        .apps
        .iter()
        .flat_map(|app| app.busy_periods.iter())
        .map(|&period| (period.0, busy_end(period, flow, run_end)))
        .collect();
    periods.sort();
    let mut merged: Vec<(Duration, Duration)> = Vec::new();
    for (start, end) in periods {
        match merged.last_mut() {
            Some(last) if start <= last.1 && flow.apps.len() > 1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let mut active = Duration::ZERO;
    let mut capacity_bits = 0.0;
    for (start, end) in merged {
        active += end - start;
        capacity_bits += scenario.forward.capacity_bits(start, end);
    }
    let useful_bytes = flow.delivered_bytes;
    let perf = perf_report(flow).unwrap_or_default();
    let goodput_bps = if active.is_zero() {
        0.0
    } else {
        useful_bytes as f64 * 8.0 / active.as_secs_f64()
    };
    let mean_rate_bps = if active.is_zero() {
        scenario.forward.rate_bps as f64
    } else {
        capacity_bits / active.as_secs_f64()
    };
    let (state, error) = match &flow.end {
        FlowEnd::Completed => ("completed", None),
        FlowEnd::Stopped => ("stopped", None),
        FlowEnd::Running => ("running", None),
        FlowEnd::Error { reason } => ("error", Some(reason.clone())),
        FlowEnd::NotConnected => ("not_connected", None),
    };
    let first = perf.exchanges.first();
    FlowSummary {
        name: flow.name.clone(),
        cc: flow.cc.clone(),
        state: state.to_owned(),
        error,
        goodput_bps,
        efficiency: goodput_bps / mean_rate_bps,
        ceiling_fraction: goodput_bps / ceiling_bps,
        bytes_delivered: flow.delivered_bytes,
        bytes_uploaded: perf.uploaded_bytes,
        start_s: seconds(flow.start),
        handshake_s: flow.handshake.map(seconds),
        completion_s: first.and_then(|e| e.completed_at.map(|c| seconds(c - e.requested_at))),
        time_to_bytes: thresholds_map(
            first.unwrap_or(&Exchange::default()),
            &scenario.time_to_bytes,
        ),
        exchanges: perf
            .exchanges
            .iter()
            .map(|e| ExchangeSummary {
                requested_s: seconds(e.requested_at),
                completion_s: e.completed_at.map(|c| seconds(c - e.requested_at)),
                upload_completion_s: e.upload_completed_at.map(|c| seconds(c - e.requested_at)),
                time_to_bytes: thresholds_map(e, &scenario.time_to_bytes),
            })
            .collect(),
        lost_packets: flow.sender.lost_packets,
        sent_packets: flow.sender.sent_packets,
        congestion_events: flow.sender.congestion_events,
        max_burst_packets: flow.sender.max_burst_packets,
        max_cwnd_bytes,
        forward_queue_drops: flow.bottleneck_forward.dropped_packets,
        forward_random_losses: flow.bottleneck_forward.random_losses,
        losses: flow.losses,
        apps: flow
            .apps
            .iter()
            .map(|app| app_summary(app, flow, run_end))
            .collect(),
        connections: flow
            .connections
            .iter()
            .map(|c| connection_summary(scenario, c))
            .collect(),
    }
}

/// J = (Σx)² / (n·Σx²); 1 when all equal, 1/n when one flow takes everything.
pub fn jain_index(values: &[f64]) -> f64 {
    let sum: f64 = values.iter().sum();
    let squares: f64 = values.iter().map(|x| x * x).sum();
    if values.is_empty() || squares == 0.0 {
        1.0
    } else {
        sum * sum / (values.len() as f64 * squares)
    }
}

/// Delivered bytes of `flow` at time `t`, from the samples (0 before the first one).
fn delivered_at(samples: &[Sample], flow: usize, t: Duration) -> u64 {
    samples
        .iter()
        .filter(|s| s.flow == flow && s.t <= t)
        .map(|s| s.delivered_bytes)
        .next_back()
        .unwrap_or(0)
}

/// Goodputs over the window in which every flow was transferring; whole-run goodputs when
/// that window is shorter than two samples.
fn steady_goodputs(outcome: &RunOutcome, flows: &[FlowSummary], interval: Duration) -> Vec<f64> {
    let start = outcome
        .flows
        .iter()
        .map(|f| {
            f.apps
                .iter()
                .filter_map(|a| a.busy_periods.first())
                .map(|p| p.0)
                .min()
                .unwrap_or(f.start)
        })
        .max()
        .unwrap_or_default();
    let end = outcome
        .flows
        .iter()
        .map(|f| f.ended_at.unwrap_or(outcome.end_time))
        .min()
        .unwrap_or(outcome.end_time);
    if end <= start || end - start < 2 * interval {
        return flows.iter().map(|f| f.goodput_bps).collect();
    }
    let window = (end - start).as_secs_f64();
    (0..outcome.flows.len())
        .map(|i| {
            let bytes = delivered_at(&outcome.samples, i, end).saturating_sub(delivered_at(
                &outcome.samples,
                i,
                start,
            ));
            bytes as f64 * 8.0 / window
        })
        .collect()
}

/// Summary of one run of `scenario`.
pub fn run_summary(scenario: &Scenario, cc: &str, outcome: &RunOutcome) -> RunSummary {
    let ceiling = path_summary(scenario).goodput_ceiling_bps;
    let flows: Vec<FlowSummary> = outcome
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let max_cwnd = outcome
                .samples
                .iter()
                .filter(|s| s.flow == i)
                .map(|s| s.cwnd_bytes)
                .max()
                .unwrap_or(0);
            flow_summary(scenario, f, outcome.end_time, ceiling, max_cwnd)
        })
        .collect();
    let jain = if flows.len() < 2 {
        1.0
    } else {
        jain_index(&steady_goodputs(outcome, &flows, scenario.sample_interval))
    };
    RunSummary {
        cc: cc.to_owned(),
        seed: outcome.seed,
        end_s: seconds(outcome.end_time),
        jain_index: jain,
        link_utilization: if outcome.forward_capacity_bits > 0.0 {
            outcome.forward_link.serialized_bytes as f64 * 8.0 / outcome.forward_capacity_bits
        } else {
            0.0
        },
        forward_link: outcome.forward_link,
        return_link: outcome.return_link,
        emulator_drops: outcome.emulator_drops,
        emulator_lateness: outcome.emulator_lateness,
        flows,
        periods: crate::periods::periods(outcome, &scenario.path_config().forward),
    }
}

fn mean_stdev(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, variance.sqrt())
}

/// Mean ± stdev per (controller, flow), in first-appearance order.
pub fn aggregates(runs: &[RunSummary]) -> Vec<Aggregate> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for run in runs {
        for flow in &run.flows {
            let key = (run.cc.clone(), flow.name.clone());
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    keys.into_iter()
        .map(|(cc, name)| {
            let flows: Vec<&FlowSummary> = runs
                .iter()
                .filter(|r| r.cc == cc)
                .flat_map(|r| r.flows.iter().filter(|f| f.name == name))
                .collect();
            let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_bps).collect();
            let completions: Vec<f64> = flows.iter().filter_map(|f| f.completion_s).collect();
            let (goodput_mean, goodput_stdev) = mean_stdev(&goodputs);
            let completion = (!completions.is_empty()).then(|| mean_stdev(&completions));
            Aggregate {
                cc,
                flow: name,
                runs: flows.len(),
                goodput_bps_mean: goodput_mean,
                goodput_bps_stdev: goodput_stdev,
                completion_s_mean: completion.map(|c| c.0),
                completion_s_stdev: completion.map(|c| c.1),
                completed_runs: completions.len(),
                lost_packets_mean: flows.iter().map(|f| f.lost_packets as f64).sum::<f64>()
                    / flows.len().max(1) as f64,
            }
        })
        .collect()
}

/// The whole summary of a set of runs of `scenario`.
pub fn summary(scenario: &Scenario, first_seed: u64, seeds: u64, runs: Vec<RunSummary>) -> Summary {
    Summary {
        schema_version: SCHEMA_VERSION,
        satquic_version: env!("CARGO_PKG_VERSION").to_owned(),
        scenario: scenario.name.clone(),
        description: scenario.description.clone(),
        seed: first_seed,
        seeds,
        duration_s: seconds(scenario.duration),
        path: path_summary(scenario),
        aggregates: aggregates(&runs),
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_extremes() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        // (1 + 3)² / (2 · (1 + 9)) = 0.8
        assert!((jain_index(&[1.0, 3.0]) - 0.8).abs() < 1e-12);
    }

    #[test]
    fn size_labels_read_like_scenario_files() {
        assert_eq!(size_label(2_000_000), "2MB");
        assert_eq!(size_label(100_000_000), "100MB");
        assert_eq!(size_label(10 << 20), "10MiB");
        assert_eq!(size_label(1_500), "1500B");
        assert_eq!(size_label(3_000), "3KB");
    }

    #[test]
    fn mean_and_sample_stdev() {
        let (m, s) = mean_stdev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(m, 5.0);
        assert!((s - 2.138_089_935).abs() < 1e-9);
    }
}
