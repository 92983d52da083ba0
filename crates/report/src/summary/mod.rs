//! The metrics of a run and the `summary.json` schema, computed once from run outcomes so every
//! export (JSON, CSV, table, plots) reads the same numbers.
//!
//! Definitions: goodput = application bytes delivered in order / the time
//! the flow was transferring (request sent → last byte read, or → end of run for unfinished
//! and unlimited transfers); efficiency = goodput / the bottleneck's mean forward rate over that
//! time; ceiling fraction = goodput / what the link allows after IP, UDP and QUIC overhead; Jain
//! index over per-flow goodputs in the window where all flows were active; link utilization =
//! bytes serialized on the forward bottleneck / its capacity over the run.
//!
//! Inside: `schema` holds the types of `summary.json` (re-exported here); this module computes
//! them from a run's outcome and its scenario.

use std::time::Duration;

use netsim::{LinkConfig, QueueLimit};
use sim::AppOutcome;
use sim::apps::media::MediaReport;
use sim::apps::perf::{Exchange, PerfReport};
use sim::{FlowEnd, FlowOutcome, RunOutcome, Sample};

use scenario::Scenario;

mod schema;

pub use schema::{
    Aggregate, AppSummary, ConnectionSummary, ExchangeSummary, FlowSummary, LinkSummary,
    MediaSummary, PathSummary, ResumeSummary, ResumeTransitionSummary, RunSummary, SCHEMA_VERSION,
    SavedPathSummary, Summary, Thresholds,
};

/// A flow's `state` when no handshake completed before the run ended: its row measures
/// nothing (read by `satquic run` and `satquic sweep` to warn).
pub const NOT_CONNECTED: &str = "not_connected";

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
        FlowEnd::NotConnected => (NOT_CONNECTED, None),
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
