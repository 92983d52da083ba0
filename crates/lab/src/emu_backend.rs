//! The real-time backend: a scenario played over real UDP sockets on loopback — one quinn perf
//! server per flow (its own controller and transport preset), the relay imposing the
//! scenario's path on the same `netsim::Path` the simulator uses (access delays included), one
//! perf client per flow — producing the same [`RunOutcome`] as the simulator, with per-flow
//! bottleneck counters and queue samples, so every output and comparison works unchanged.
//!
//! Supported: one perf application per flow with a download (sized or unlimited), an
//! optional upload and an optional repeat, flows starting at any time. Not yet: several
//! applications per flow, upload-only flows.

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

/// Flows with the same start time connect this far apart, in flow order, so the relay (which
/// numbers clients as they first send) sees them in a known order.
const SAME_START_STAGGER: Duration = Duration::from_millis(2);

fn check_supported(scenario: &Scenario) -> Result<(), EmuError> {
    for (i, f) in scenario.flows.iter().enumerate() {
        let [app] = f.apps.as_slice() else {
            return Err(EmuError::Unsupported(format!(
                "flow[{i}]: one application per flow"
            )));
        };
        let scenario::apps::AppKind::Perf(perf) = &app.kind else {
            return Err(EmuError::Unsupported(format!(
                "flow[{i}].app {:?}: {} applications do not run in real time yet",
                app.name,
                app.kind.name()
            )));
        };
        if perf.download.is_none() {
            return Err(EmuError::Unsupported(format!("flow[{i}] needs a download")));
        }
    }
    Ok(())
}

/// Flow indices in the order their clients connect (start time, then flow order).
fn connect_order(scenario: &Scenario) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scenario.flows.len()).collect();
    order.sort_by_key(|&i| (scenario.flows[i].start, i));
    order
}

/// Plays `scenario` in real time; `progress` sees the elapsed time.
///
/// Each flow gets its own perf server (its own controller and transport settings, as in the
/// simulator) behind one relay that imposes the scenario's path, access delays included.
pub fn run(
    scenario: &Scenario,
    spec: &RunSpec,
    cancel: &AtomicBool,
    progress: &dyn Fn(Duration),
) -> Result<RunOutcome, EmuError> {
    check_supported(scenario)?;
    let mut controllers = Vec::new();
    for (index, flow) in scenario.flows.iter().enumerate() {
        let spec = crate::plan::flow_controller(flow, spec)?;
        controllers.push(controllers::build(
            &spec,
            Some(crate::plan::declared_bdp_bytes(scenario, index)),
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (cert, key) = perf::self_signed(vec!["localhost".into()])?;
    let identity = perf::parse_identity(&cert, &key)?;
    let roots = identity.0.clone();
    let order = connect_order(scenario);
    runtime.block_on(async {
        let socket_buffer_bytes = emu::sockbuf::buffer_bytes_for(
            scenario.forward.rate_bps.max(scenario.return_link.rate_bps),
            scenario.forward.delay + scenario.return_link.delay,
        );
        // The simulator's transport settings (satellite preset + scenario overrides) for each
        // flow, so the two backends differ only in their clocks and sockets.
        let mut servers = Vec::new();
        for (index, controller) in controllers.iter().enumerate() {
            let settings = crate::plan::transport_settings(scenario, index);
            servers.push(Server::start(ServerOptions {
                listen: "127.0.0.1:0".parse().expect("valid"),
                identity: perf::parse_identity(&cert, &key)?,
                transport: Arc::new(settings.to_quinn(true, controller.factory.clone())),
                log_dir: None,
                socket_buffer_bytes,
                session_epoch: None,
            })?);
        }
        let mut flow_upstreams = Vec::new();
        for &index in &order {
            flow_upstreams.push(servers[index].local_addr()?);
        }
        let relay = Relay::start(RelayConfig {
            listen: "127.0.0.1:0".parse().expect("valid"),
            upstream: flow_upstreams[0],
            flow_upstreams,
            forward: scenario.forward.clone(),
            return_link: scenario.return_link.clone(),
            mtu_bytes: scenario.mtu_bytes,
            access_delays: order
                .iter()
                .map(|&i| scenario.flows[i].access_delay)
                .collect(),
            seed: spec.seed,
            socket_buffer_bytes: None,
        })?;
        let relay_address = relay.local_addr();
        let epoch = Instant::now();
        let mut tasks = Vec::new();
        for (index, flow) in scenario.flows.iter().enumerate() {
            let settings = crate::plan::transport_settings(scenario, index);
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
                transport: Arc::new(settings.to_quinn(false, controllers[index].factory.clone())),
                socket_buffer_bytes,
                thresholds: scenario.time_to_bytes.clone(),
                verify: true,
                repeat_after: flow.perf().and_then(|p| p.repeat_after),
            };
            let same_start_before = order
                .iter()
                .take_while(|&&i| i != index)
                .filter(|&&i| scenario.flows[i].start == flow.start)
                .count() as u32;
            let start = flow.start + SAME_START_STAGGER * same_start_before;
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
        let traces: Vec<Vec<TracePoint>> = servers
            .iter()
            .map(|s| s.traces().into_iter().next().unwrap_or_default())
            .collect();
        let stats = relay.stats();
        relay.stop();
        for server in servers {
            server.stop().await;
        }
        let labels: Vec<String> = controllers.iter().map(|c| c.label.clone()).collect();
        Ok(outcome(
            scenario, spec, &labels, &order, results, &traces, stats, end_time,
        ))
    })
}

/// The real-time run as a [`RunOutcome`]. `traces[i]` is flow `i`'s server connection;
/// the relay numbers flows in `order` (connect order).
#[allow(clippy::too_many_arguments)]
fn outcome(
    scenario: &Scenario,
    spec: &RunSpec,
    labels: &[String],
    order: &[usize],
    results: Vec<(Duration, Result<perf::ClientReport, perf::PerfError>)>,
    traces: &[Vec<TracePoint>],
    stats: emu::relay::RelayStats,
    end_time: Duration,
) -> RunOutcome {
    let mut flows = Vec::new();
    let mut samples = Vec::new();
    let relay_index: BTreeMap<usize, usize> =
        order.iter().enumerate().map(|(k, &f)| (f, k)).collect();
    let queue_at = |t: Duration| {
        stats
            .queue_samples
            .iter()
            .take_while(|(at, _, _)| *at <= t)
            .last()
            .map_or((0, 0), |&(_, f, r)| (f, r))
    };
    for (index, (flow, (began, result))) in scenario.flows.iter().zip(results).enumerate() {
        let trace = traces.get(index).filter(|t| !t.is_empty());
        let bottleneck = stats
            .flows
            .get(relay_index[&index])
            .copied()
            .unwrap_or_default();
        let last = trace.and_then(|t| t.last());
        let mut sender = SenderStats::default();
        if let Some(p) = last {
            sender.sent_packets = p.sent_packets;
            sender.lost_packets = p.lost_packets;
            sender.congestion_events = p.congestion_events;
            sender.final_cwnd_bytes = p.cwnd_bytes;
        }
        let (exchanges, delivered, uploaded, end, ended_at, handshake, client_samples) =
            match &result {
                Ok(r) => {
                    let seconds = Duration::from_secs_f64;
                    let requested_at = began + seconds(r.handshake_s);
                    let completed_at = r.completed.then(|| requested_at + seconds(r.transfer_s));
                    let at = |start: Duration, map: &BTreeMap<u64, f64>| {
                        map.iter().map(|(b, t)| (*b, start + seconds(*t))).collect()
                    };
                    let mut exchanges = vec![Exchange {
                        requested_at,
                        completed_at,
                        upload_completed_at: None,
                        reached: at(requested_at, &r.time_to_bytes_s),
                    }];
                    let mut samples: Vec<(Duration, u64)> = r
                        .samples
                        .iter()
                        .map(|(t, b)| (requested_at + seconds(*t), *b))
                        .collect();
                    let mut delivered = r.bytes_received;
                    let mut ended_at = completed_at;
                    let mut completed = r.completed;
                    for repeat in &r.repeats {
                        let start = requested_at + seconds(repeat.requested_s);
                        let done = repeat.completed.then(|| start + seconds(repeat.transfer_s));
                        samples.extend(
                            repeat
                                .samples
                                .iter()
                                .map(|(t, b)| (start + seconds(*t), delivered + *b)),
                        );
                        exchanges.push(Exchange {
                            requested_at: start,
                            completed_at: done,
                            upload_completed_at: None,
                            reached: at(start, &repeat.time_to_bytes_s),
                        });
                        delivered += repeat.bytes_received;
                        ended_at = done;
                        completed = repeat.completed;
                    }
                    (
                        exchanges,
                        delivered,
                        r.bytes_uploaded,
                        if completed {
                            FlowEnd::Completed
                        } else {
                            FlowEnd::Running
                        },
                        ended_at,
                        Some(seconds(r.handshake_s)),
                        samples,
                    )
                }
                Err(e) => (
                    Vec::new(),
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
                    queue_forward_bytes: queue_at(tick).0,
                    queue_return_bytes: queue_at(tick).1,
                });
            }
            tick += Duration::from_millis(100);
        }
        flows.push(FlowOutcome {
            name: flow.name.clone(),
            cc: labels[index].clone(),
            start: flow.start,
            handshake,
            delivered_bytes: delivered,
            apps: vec![
                PerfReport {
                    exchanges,
                    downloaded_bytes: delivered,
                    uploaded_bytes: uploaded,
                }
                .into_outcome(&flow.apps[0].name, delivered),
            ],
            end,
            ended_at,
            sender,
            bottleneck_forward: bottleneck[0],
            bottleneck_return: bottleneck[1],
        });
    }
    samples.sort_by_key(|s| (s.t, s.flow));
    // One perf application per flow: its progress is the flow's.
    let app_samples = samples
        .iter()
        .map(|s| sim::AppSample {
            t: s.t,
            flow: s.flow,
            app: 0,
            delivered_bytes: s.delivered_bytes,
        })
        .collect();
    RunOutcome {
        seed: spec.seed,
        end_time,
        flows,
        samples,
        app_samples,
        link_samples: Vec::new(),
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
