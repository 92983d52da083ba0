//! The real-time backend: a scenario played over real UDP sockets on loopback — a quinn perf
//! server, the netsim relay imposing the scenario's path, one perf client per flow — producing
//! the same [`RunOutcome`] as the simulator, so every output and comparison works unchanged.
//!
//! Supported: downloads (sized or unlimited) with optional uploads, flows starting at any time,
//! one controller for all flows (quinn fixes the controller per server endpoint). Not yet:
//! per-flow access delays, repeated downloads.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use emu::perf::{self, ClientOptions, Server, ServerOptions, TracePoint, Trust};
use emu::relay::{Relay, RelayConfig};
use sim::apps::perf::{Exchange, PerfReport};
use sim::{FlowEnd, FlowOutcome, RunOutcome, Sample, SenderStats};

use crate::controllers;
use scenario::RunSpec;
use scenario::{Download, Scenario};

/// Why a real-time run failed.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// The scenario uses something the real-time backend cannot do yet.
    #[error("--backend emu: {0}")]
    Unsupported(String),
    /// A controller name or parameter is invalid.
    #[error(transparent)]
    Controller(#[from] scenario::controllers::ControllerError),
    /// The perf endpoints failed.
    #[error(transparent)]
    Perf(#[from] perf::PerfError),
    /// Sockets, runtime, relay.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Ctrl-C.
    #[error("interrupted")]
    Interrupted,
}

fn check_supported(
    scenario: &Scenario,
    spec: &RunSpec,
) -> Result<scenario::controllers::ControllerSpec, EmuError> {
    for (i, f) in scenario.flows.iter().enumerate() {
        if !f.access_delay.is_zero() {
            return Err(EmuError::Unsupported(format!(
                "flow[{i}].access_delay is not supported yet"
            )));
        }
        let [app] = f.apps.as_slice() else {
            return Err(EmuError::Unsupported(format!(
                "flow[{i}]: one application per flow"
            )));
        };
        let scenario::apps::AppKind::Perf(perf) = &app.kind;
        if perf.repeat_after.is_some() {
            return Err(EmuError::Unsupported(format!(
                "flow[{i}].repeat_after is not supported yet"
            )));
        }
        if perf.download.is_none() {
            return Err(EmuError::Unsupported(format!("flow[{i}] needs a download")));
        }
    }
    let cc = crate::plan::flow_controller(&scenario.flows[0], spec)?;
    if spec.cc_override.is_none()
        && scenario
            .flows
            .iter()
            .any(|f| f.controller != scenario.flows[0].controller)
    {
        return Err(EmuError::Unsupported(
            "all flows must use the same controller (or give --cc)".into(),
        ));
    }
    Ok(cc)
}

/// Plays `scenario` in real time; `progress` sees the elapsed time.
pub fn run(
    scenario: &Scenario,
    spec: &RunSpec,
    cancel: &AtomicBool,
    progress: &dyn Fn(Duration),
) -> Result<RunOutcome, EmuError> {
    let cc = check_supported(scenario, spec)?;
    let controller = controllers::build(&cc, Some(crate::plan::declared_bdp_bytes(scenario, 0)));
    let cc = controller.label.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (cert, key) = perf::self_signed(vec!["localhost".into()])?;
    let identity = perf::parse_identity(&cert, &key)?;
    let roots = identity.0.clone();
    runtime.block_on(async {
        // The simulator's transport settings (satellite preset + scenario overrides), so the
        // two backends differ only in their clocks and sockets.
        let settings = crate::plan::transport_settings(scenario, 0);
        let socket_buffer_bytes = emu::sockbuf::buffer_bytes_for(
            scenario.forward.rate_bps.max(scenario.return_link.rate_bps),
            scenario.forward.delay + scenario.return_link.delay,
        );
        let server = Server::start(ServerOptions {
            listen: "127.0.0.1:0".parse().expect("valid"),
            identity,
            transport: Arc::new(settings.to_quinn(true, controller.factory.clone())),
            log_dir: None,
            socket_buffer_bytes,
        })?;
        let relay = Relay::start(RelayConfig {
            listen: "127.0.0.1:0".parse().expect("valid"),
            upstream: server.local_addr()?,
            forward: scenario.forward.clone(),
            return_link: scenario.return_link.clone(),
            mtu_bytes: scenario.mtu_bytes,
            seed: spec.seed,
            socket_buffer_bytes: None,
        })?;
        let relay_address = relay.local_addr();
        let epoch = Instant::now();
        let mut tasks = Vec::new();
        for flow in &scenario.flows {
            let options = ClientOptions {
                server: relay_address,
                server_name: "localhost".into(),
                trust: Trust::Roots(roots.clone()),
                download_bytes: match flow.perf().and_then(|p| p.download) {
                    Some(Download::Bytes(n)) => Some(n),
                    _ => None,
                },
                upload_bytes: flow.perf().and_then(|p| p.upload_bytes).unwrap_or(0),
                duration: Some(
                    flow.stop
                        .unwrap_or(scenario.duration)
                        .saturating_sub(flow.start),
                ),
                transport: Arc::new(settings.to_quinn(false, controller.factory.clone())),
                socket_buffer_bytes,
                thresholds: scenario.time_to_bytes.clone(),
                verify: true,
            };
            let start = flow.start;
            tasks.push(tokio::spawn(async move {
                tokio::time::sleep_until((epoch + start).into()).await;
                let began = epoch.elapsed();
                (began, perf::get(options, &|_| {}).await)
            }));
        }
        let mut ticker = tokio::time::interval(Duration::from_millis(100));
        while !tasks.iter().all(|t| t.is_finished()) {
            ticker.tick().await;
            progress(epoch.elapsed());
            if cancel.load(Ordering::Relaxed) {
                for t in &tasks {
                    t.abort();
                }
                return Err(EmuError::Interrupted);
            }
        }
        let mut results = Vec::new();
        for t in tasks {
            results.push(
                t.await
                    .map_err(|e| EmuError::Io(std::io::Error::other(e.to_string())))?,
            );
        }
        let end_time = epoch
            .elapsed()
            .min(scenario.duration.max(Duration::from_millis(1)));
        let traces = server.traces();
        let stats = relay.stats();
        relay.stop();
        server.stop().await;
        Ok(outcome(
            scenario, spec, &cc, results, &traces, stats, end_time,
        ))
    })
}

fn outcome(
    scenario: &Scenario,
    spec: &RunSpec,
    cc: &str,
    results: Vec<(Duration, Result<perf::ClientReport, perf::PerfError>)>,
    traces: &[Vec<TracePoint>],
    stats: emu::relay::RelayStats,
    end_time: Duration,
) -> RunOutcome {
    let mut flows = Vec::new();
    let mut samples = Vec::new();
    // Connections are accepted in flow-start order; flows starting together are symmetric.
    let mut order: Vec<usize> = (0..scenario.flows.len()).collect();
    order.sort_by_key(|&i| scenario.flows[i].start);
    let trace_of: BTreeMap<usize, &Vec<TracePoint>> =
        order.iter().zip(traces).map(|(&f, t)| (f, t)).collect();
    for (index, (flow, (began, result))) in scenario.flows.iter().zip(results).enumerate() {
        let trace = trace_of.get(&index).copied();
        let last = trace.and_then(|t| t.last());
        let mut sender = SenderStats::default();
        if let Some(p) = last {
            sender.sent_packets = p.sent_packets;
            sender.lost_packets = p.lost_packets;
            sender.congestion_events = p.congestion_events;
            sender.final_cwnd_bytes = p.cwnd_bytes;
        }
        let (exchange, delivered, uploaded, end, ended_at, handshake, client_samples) =
            match &result {
                Ok(r) => {
                    let requested_at = began + Duration::from_secs_f64(r.handshake_s);
                    let completed_at = r
                        .completed
                        .then(|| requested_at + Duration::from_secs_f64(r.transfer_s));
                    let reached = r
                        .time_to_bytes_s
                        .iter()
                        .map(|(b, t)| (*b, requested_at + Duration::from_secs_f64(*t)))
                        .collect();
                    let samples: Vec<(Duration, u64)> = r
                        .samples
                        .iter()
                        .map(|(t, b)| (requested_at + Duration::from_secs_f64(*t), *b))
                        .collect();
                    (
                        Some(Exchange {
                            requested_at,
                            completed_at,
                            upload_completed_at: None,
                            reached,
                        }),
                        r.bytes_received,
                        r.bytes_uploaded,
                        if r.completed {
                            FlowEnd::Completed
                        } else {
                            FlowEnd::Running
                        },
                        completed_at,
                        Some(Duration::from_secs_f64(r.handshake_s)),
                        samples,
                    )
                }
                Err(e) => (
                    None,
                    0,
                    0,
                    FlowEnd::Error {
                        reason: e.to_string(),
                    },
                    None,
                    None,
                    Vec::new(),
                ),
            };
        // 100 ms samples over the run: client bytes in order, server cwnd/RTT/losses.
        let mut tick = Duration::from_millis(100);
        while tick <= end_time {
            if tick >= flow.start {
                let delivered_bytes = client_samples
                    .iter()
                    .take_while(|(t, _)| *t <= tick)
                    .last()
                    .map_or(0, |s| s.1);
                let point = trace.and_then(|t| t.iter().take_while(|p| p.t <= tick).last());
                samples.push(Sample {
                    t: tick,
                    flow: index,
                    delivered_bytes,
                    cwnd_bytes: point.map_or(0, |p| p.cwnd_bytes),
                    in_flight_bytes: 0,
                    srtt: point.map_or(Duration::ZERO, |p| p.rtt),
                    min_rtt: Duration::ZERO,
                    lost_packets: point.map_or(0, |p| p.lost_packets),
                    queue_forward_bytes: 0,
                    queue_return_bytes: 0,
                });
            }
            tick += Duration::from_millis(100);
        }
        flows.push(FlowOutcome {
            name: flow.name.clone(),
            cc: cc.to_owned(),
            start: flow.start,
            handshake,
            delivered_bytes: delivered,
            apps: vec![
                PerfReport {
                    exchanges: exchange.into_iter().collect(),
                    downloaded_bytes: delivered,
                    uploaded_bytes: uploaded,
                }
                .into_outcome(&flow.apps[0].name, delivered),
            ],
            end,
            ended_at,
            sender,
            bottleneck_forward: Default::default(),
            bottleneck_return: Default::default(),
        });
    }
    samples.sort_by_key(|s| (s.t, s.flow));
    RunOutcome {
        seed: spec.seed,
        end_time,
        flows,
        samples,
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
    }
}
