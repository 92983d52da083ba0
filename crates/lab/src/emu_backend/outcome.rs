//! The real-time run as the simulator's [`RunOutcome`]: per-flow outcomes, 100 ms samples,
//! the relay's counters.

use std::time::Duration;

use emu::session::ServerSession;
use perfwire::Sender;
use scenario::apps::AppKind;
use scenario::{RunSpec, Scenario};

use super::measured::{FlowResult, perf_measured, session_measured};
use super::requests::session_request;
use emu::server::TracePoint;
use sim::{FlowOutcome, LinkSample, RunOutcome, Sample, SenderStats};

/// The real-time run as a [`RunOutcome`]. `traces[i]` and `sessions[i]` are flow `i`'s server
/// connection, and flow `i` of the relay.
#[allow(clippy::too_many_arguments)]
pub(super) fn outcome(
    scenario: &Scenario,
    spec: &RunSpec,
    labels: &[String],
    results: Vec<FlowResult>,
    sessions: &[Option<ServerSession>],
    traces: &[Vec<TracePoint>],
    stats: emu::relay::RelayStats,
    end_time: Duration,
) -> RunOutcome {
    let mut flows = Vec::new();
    let mut samples = Vec::new();
    let mut app_samples = Vec::new();
    // The last (forward, return) reading at or before `t` of a series sampled by the pump.
    let at_or_before = |series: &[(Duration, u64, u64)], t: Duration| {
        series
            .iter()
            .take_while(|(at, _, _)| *at <= t)
            .last()
            .map_or((0, 0), |&(_, f, r)| (f, r))
    };
    let queue_at = |t: Duration| at_or_before(&stats.queue_samples, t);
    let queue_mean_at = |t: Duration| at_or_before(&stats.queue_mean_samples, t);
    for (index, (flow, result)) in scenario.flows.iter().zip(results).enumerate() {
        let trace = traces.get(index).filter(|t| !t.is_empty());
        let bottleneck = stats.flows.get(index).copied().unwrap_or_default();
        let last = trace.and_then(|t| t.last());
        let mut sender = SenderStats::default();
        // The data direction: the first application's, as in the simulator.
        let data_direction = match flow.apps.first().map(|a| &a.kind) {
            Some(AppKind::Media(m)) if m.sender == Sender::Client => 1,
            Some(AppKind::Bulk(b)) if b.sender == Sender::Client => 1,
            _ => 0,
        };
        let losses = sim::LossAccounting {
            queue_drops: bottleneck[data_direction].queue_drops,
            aqm_drops: bottleneck[data_direction].early_drops,
            random_losses: bottleneck[data_direction].random_losses,
            verdicts: last.and_then(|p| p.loss_tally).map(Into::into),
            matched: None,
        };
        if let Some(p) = last {
            sender.sent_packets = p.sent_packets;
            sender.lost_packets = p.lost_packets;
            sender.congestion_events = p.congestion_events;
            sender.final_cwnd_bytes = p.cwnd_bytes;
        }
        let measured = match &result {
            FlowResult::Perf(began, r) => perf_measured(&flow.apps[0].name, *began, r),
            FlowResult::Session(r) => session_measured(
                flow,
                &session_request(scenario, spec, index),
                r,
                sessions.get(index).and_then(Option::as_ref),
            ),
        };
        // 100 ms samples over the run: bytes in order at the receiving ends, server
        // cwnd/RTT/losses, IP bytes the relay delivered in the data direction (the simulator
        // takes the direction from the first application too).
        let apps = measured.apps.len().max(1);
        let received_at = |t: Duration| {
            stats
                .flow_delivered
                .iter()
                .rev()
                .find(|(at, f, _)| *at <= t && *f == index)
                .map_or(0, |(_, _, bytes)| bytes[data_direction])
        };
        let mut tick = Duration::from_millis(100);
        while tick <= end_time {
            if tick >= flow.start {
                let row = measured
                    .progress
                    .iter()
                    .take_while(|(t, _)| *t <= tick)
                    .last()
                    .map(|(_, row)| row.clone())
                    .unwrap_or_default();
                for app in 0..apps {
                    app_samples.push(sim::AppSample {
                        t: tick,
                        flow: index,
                        app,
                        delivered_bytes: row.get(app).copied().unwrap_or(0),
                    });
                }
                let point = trace.and_then(|t| t.iter().take_while(|p| p.t <= tick).last());
                samples.push(Sample {
                    t: tick,
                    flow: index,
                    delivered_bytes: row.iter().sum(),
                    received_ip_bytes: received_at(tick),
                    cwnd_bytes: point.map_or(0, |p| p.cwnd_bytes),
                    in_flight_bytes: 0,
                    srtt: point.map_or(Duration::ZERO, |p| p.rtt),
                    min_rtt: Duration::ZERO,
                    lost_packets: point.map_or(0, |p| p.lost_packets),
                    queue_forward_bytes: queue_at(tick).0,
                    queue_return_bytes: queue_at(tick).1,
                    queue_forward_mean_bytes: queue_mean_at(tick).0,
                    queue_return_mean_bytes: queue_mean_at(tick).1,
                });
            }
            tick += Duration::from_millis(100);
        }
        flows.push(FlowOutcome {
            name: flow.name.clone(),
            cc: labels[index].clone(),
            start: flow.start,
            handshake: measured.handshake,
            delivered_bytes: measured.delivered,
            apps: measured.apps,
            end: measured.end,
            ended_at: measured.ended_at,
            sender,
            bottleneck_forward: bottleneck[0],
            bottleneck_return: bottleneck[1],
            losses,
            // Real time knows no drop's cause, and keeps no verdict log.
            loss_batches: Vec::new(),
            connections: Vec::new(),
        });
    }
    samples.sort_by_key(|s| (s.t, s.flow));
    app_samples.sort_by_key(|s| (s.t, s.flow, s.app));
    let link_samples = stats
        .forward_serialized
        .iter()
        .filter(|(t, _)| *t <= end_time)
        .map(|&(t, bytes)| LinkSample {
            t,
            forward_serialized_bytes: bytes,
        })
        .collect();
    RunOutcome {
        seed: spec.seed,
        end_time,
        flows,
        samples,
        app_samples,
        link_samples,
        forward_link: stats.forward,
        return_link: stats.return_link,
        forward_capacity_bits: scenario.forward.capacity_bits(Duration::ZERO, end_time),
        forward_queue_limit_bytes: 0,
        datagrams: stats.forward.delivered_packets + stats.return_link.delivered_packets,
        emulator_drops: sim::EmulatorDrops {
            kernel: stats.kernel_drops,
            overload: stats.overload_drops,
            send_errors: stats.send_errors,
        },
        emulator_lateness: Some(sim::EmulatorLateness {
            deliveries: stats.lateness_us.len(),
            p50_us: stats.lateness_us.value_at_quantile(0.5),
            p99_us: stats.lateness_us.value_at_quantile(0.99),
            max_us: stats.lateness_us.max(),
        }),
    }
}
