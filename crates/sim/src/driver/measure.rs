//! What a run measures: each flow's sample at every tick (delivered bytes, window, RTT,
//! queues), and each connection's and flow's outcome when it ends (applications, sender
//! counters, Careful Resume, drops matched against the controller's loss verdicts).

use perfwire::Sender;
use std::time::Duration;

use netsim::{Direction, DropCause};

use crate::app::AppOutcome;
use crate::apps::perf::PerfReport;
use crate::losses;
use crate::outcome::{
    AppSample, ConnectionOutcome, FlowEnd, FlowOutcome, LinkSample, ResumeOutcome,
    ResumeTransitionOutcome, RunOutcome, Sample, SavedPathOutcome, SenderStats,
};

use super::flow::{FlowState, Side};
use super::{FlowConfig, Simulation};

impl<'a> Simulation<'a> {
    /// The current connection of flow `index` as a record; `ended_at`: when its applications
    /// completed.
    pub(super) fn connection_outcome(
        &self,
        index: usize,
        ended_at: Option<Duration>,
    ) -> ConnectionOutcome {
        let flow = &self.flows[index];
        let config = &self.config.flows[index];
        let sender = Self::data_sender(flow, config);
        let resume_state = sender
            .connection
            .as_ref()
            .and_then(|(_, c)| probe::inner_of(c.congestion_state().clone_box()))
            .and_then(hybla::resume_state_of);
        let careful_resume = resume_state.as_ref().and_then(|state| {
            let report = state.report.as_ref()?;
            let run_time = |at: Duration| (state.epoch + at).saturating_duration_since(self.base);
            Some(ResumeOutcome {
                resumed_from: report.saved.into(),
                jump_bytes: report.jump_bytes,
                pipe_bytes: report.pipe_bytes,
                retreated: report.retreated,
                phase: report.phase.name(),
                transitions: report
                    .transitions
                    .iter()
                    .map(|t| ResumeTransitionOutcome {
                        at: run_time(t.at),
                        from: t.from.name(),
                        to: t.to.name(),
                        trigger: t.trigger.name(),
                    })
                    .collect(),
            })
        });
        let dropped = |direction| self.path.flow_stats(index, direction).dropped_packets;
        ConnectionOutcome {
            start: flow.connection_start,
            handshake: flow
                .connection_connected_at
                .map(|t| t.saturating_sub(flow.connection_start)),
            ended_at,
            delivered_bytes: Self::connection_delivered_bytes(flow, config),
            apps: Self::app_outcomes(flow, config),
            sender: Self::sender_stats(sender),
            forward_queue_drops: dropped(Direction::Forward) - flow.drops_at_start.0,
            return_queue_drops: dropped(Direction::Return) - flow.drops_at_start.1,
            careful_resume,
            saved: resume_state
                .and_then(|state| state.observation)
                .map(SavedPathOutcome::from),
        }
    }

    fn data_sender<'f>(flow: &'f FlowState, config: &FlowConfig) -> &'f Side {
        match config.data_sender() {
            Sender::Server => &flow.server,
            Sender::Client => &flow.client,
        }
    }

    /// Bytes each of the flow's applications has received in order, at its receiving end, on
    /// all the flow's connections.
    fn app_delivered_bytes<'f>(
        flow: &'f FlowState,
        config: &'f FlowConfig,
    ) -> impl Iterator<Item = u64> + 'f {
        config
            .apps
            .iter()
            .zip(flow.client_apps.iter().zip(&flow.server_apps))
            .enumerate()
            .map(|(index, (app, (client, server)))| {
                let earlier: u64 = flow
                    .finished
                    .iter()
                    .map(|c| c.apps[index].received_bytes)
                    .sum();
                earlier
                    + match app.spec.data_sender() {
                        Sender::Server => client.received_bytes(),
                        Sender::Client => server.received_bytes(),
                    }
            })
    }

    /// Bytes the flow's applications have received in order, each at its receiving end.
    fn delivered_bytes(flow: &FlowState, config: &FlowConfig) -> u64 {
        Self::app_delivered_bytes(flow, config).sum()
    }

    /// [`Self::delivered_bytes`] on the current connection only.
    fn connection_delivered_bytes(flow: &FlowState, config: &FlowConfig) -> u64 {
        let earlier: u64 = flow.finished.iter().map(|c| c.delivered_bytes).sum();
        Self::delivered_bytes(flow, config) - earlier
    }

    /// The data sender's counters on its current connection.
    fn sender_stats(sender: &Side) -> SenderStats {
        sender
            .connection
            .as_ref()
            .map(|(_, c)| {
                let s = c.stats();
                SenderStats {
                    sent_packets: s.path.sent_packets,
                    lost_packets: s.path.lost_packets,
                    lost_bytes: s.path.lost_bytes,
                    congestion_events: s.path.congestion_events,
                    final_cwnd_bytes: s.path.cwnd,
                    max_burst_packets: sender.max_burst_packets,
                }
            })
            .unwrap_or_default()
    }

    /// The applications of a flow over all its connections: a perf application's exchanges
    /// one after the other, its bytes and busy periods added up.
    fn merged_app_outcomes(connections: &[ConnectionOutcome]) -> Vec<AppOutcome> {
        let Some(first) = connections.first() else {
            return Vec::new();
        };
        (0..first.apps.len())
            .map(|index| {
                let runs: Vec<&AppOutcome> = connections.iter().map(|c| &c.apps[index]).collect();
                let mut report = PerfReport::default();
                for run in &runs {
                    let part = PerfReport::of(run).unwrap_or_default();
                    report.exchanges.extend(part.exchanges);
                    report.downloaded_bytes += part.downloaded_bytes;
                    report.uploaded_bytes += part.uploaded_bytes;
                }
                let mut merged = report.into_outcome(
                    &first.apps[index].name,
                    runs.iter().map(|r| r.received_bytes).sum(),
                );
                merged.busy_periods = runs.iter().flat_map(|r| r.busy_periods.clone()).collect();
                merged
            })
            .collect()
    }

    /// The current connection's applications.
    fn app_outcomes(flow: &FlowState, config: &FlowConfig) -> Vec<AppOutcome> {
        config
            .apps
            .iter()
            .zip(flow.client_apps.iter().zip(&flow.server_apps))
            .map(|(app, (client, server))| {
                let receiver = match app.spec.data_sender() {
                    Sender::Server => client,
                    Sender::Client => server,
                };
                let mut busy_periods = client.busy_periods();
                busy_periods.extend(server.busy_periods());
                let mut report = client.report();
                report.extend(server.report());
                AppOutcome {
                    name: app.name.clone(),
                    kind: app.spec.kind().to_owned(),
                    received_bytes: receiver.received_bytes(),
                    busy_periods,
                    report,
                }
            })
            .collect()
    }

    pub(super) fn sample(&mut self, t: Duration) {
        let queue_forward_bytes = self.path.queue_bytes(Direction::Forward, t);
        self.link_samples.push(LinkSample {
            t,
            forward_serialized_bytes: self.path.link_stats(Direction::Forward).serialized_bytes,
        });
        let queue_return_bytes = self.path.queue_bytes(Direction::Return, t);
        let (queue_forward_mean_bytes, queue_return_mean_bytes) =
            self.path.mean_queue_bytes(&mut self.queue_meter, t);
        for (index, flow) in self.flows.iter().enumerate() {
            let config = &self.config.flows[index];
            if !flow.started {
                continue;
            }
            let sender = Self::data_sender(flow, config);
            // Before the sender's connection exists (handshake in flight) the row is zeros, so
            // every started flow has a sample at every tick.
            let path_stats = sender
                .connection
                .as_ref()
                .map(|(_, c)| c.stats().path)
                .unwrap_or_default();
            let delivered_bytes = Self::delivered_bytes(flow, config);
            let data_direction = match config.data_sender() {
                Sender::Server => Direction::Forward,
                Sender::Client => Direction::Return,
            };
            let received_ip_bytes = self.path.flow_stats(index, data_direction).delivered_bytes;
            for (app, bytes) in Self::app_delivered_bytes(flow, config).enumerate() {
                self.app_samples.push(AppSample {
                    t,
                    flow: index,
                    app,
                    delivered_bytes: bytes,
                });
            }
            self.samples.push(Sample {
                t,
                flow: index,
                delivered_bytes,
                received_ip_bytes,
                cwnd_bytes: path_stats.cwnd,
                in_flight_bytes: sender.probe.in_flight_bytes(),
                srtt: path_stats.rtt,
                min_rtt: path_stats.min_rtt,
                lost_packets: path_stats.lost_packets,
                queue_forward_bytes,
                queue_return_bytes,
                queue_forward_mean_bytes,
                queue_return_mean_bytes,
            });
        }
    }

    /// The data sender's drops matched against its controller's loss verdicts, in all and per
    /// loss batch.
    fn loss_accounting(
        &self,
        index: usize,
        drops: &[netsim::DropRecord],
    ) -> (crate::LossAccounting, Vec<losses::BatchOutcome>) {
        let flow = &self.flows[index];
        let config = &self.config.flows[index];
        let direction = config.data_direction();
        let stats = self.path.flow_stats(index, direction);
        let ground_truth: Vec<losses::Drop> = drops
            .iter()
            .filter(|d| d.flow == index && d.direction == direction)
            .filter(|d| d.cause != DropCause::Oversize)
            // The controller that judged them is the current connection's.
            .filter(|d| d.sent_at >= flow.connection_start)
            .map(|d| losses::Drop {
                sent_at: d.sent_at,
                congestion: d.cause.is_congestion(),
            })
            .collect();
        let report = Self::data_sender(flow, config)
            .connection
            .as_ref()
            .and_then(|(_, c)| probe::inner_of(c.congestion_state().clone_box()))
            .and_then(hybla::loss_report_of);
        let records = report
            .as_ref()
            .and_then(|r| r.records.as_deref())
            .unwrap_or(&[]);
        let batches: Vec<losses::Batch> = records
            .iter()
            .zip(report.iter().flat_map(|r| std::iter::repeat(r.epoch)))
            .map(|(r, epoch)| losses::Batch {
                newest_sent: (epoch + r.sent).saturating_duration_since(self.base),
                verdict: r.verdict,
            })
            .collect();
        let recorded = report.as_ref().is_some_and(|r| r.records.is_some());
        let matched = recorded.then(|| losses::match_losses(&ground_truth, &batches));
        let (per_batch, _) = losses::drops_per_batch(&ground_truth, &batches);
        let outcomes = records
            .iter()
            .zip(&batches)
            .zip(per_batch)
            .map(|((record, batch), drops)| losses::BatchOutcome {
                newest_sent: batch.newest_sent,
                lost_bytes: record.lost_bytes,
                verdict: record.verdict,
                seen: record.seen,
                drops,
            })
            .collect();
        let accounting = crate::LossAccounting {
            queue_drops: stats.queue_drops,
            aqm_drops: stats.early_drops,
            random_losses: stats.random_losses,
            verdicts: report.map(|r| r.tally.into()),
            matched,
        };
        (accounting, outcomes)
    }

    pub(super) fn finish(mut self, end_time: Duration) -> RunOutcome {
        let drops = self.path.take_drops();
        let mut flows = Vec::with_capacity(self.flows.len());
        for (index, flow) in self.flows.iter().enumerate() {
            let config = &self.config.flows[index];
            let mut sender_stats = Self::sender_stats(Self::data_sender(flow, config));
            let mut apps = Self::app_outcomes(flow, config);
            let (end, ended_at) = match &flow.end {
                Some((end, at)) => (end.clone(), Some(*at)),
                None if flow.connected_at.is_none() => (FlowEnd::NotConnected, None),
                None => (FlowEnd::Running, None),
            };
            let mut connections = Vec::new();
            if config.reconnect_after.is_some() {
                connections = flow.finished.clone();
                if flow.reconnect_at.is_none() {
                    let completed = matches!(end, FlowEnd::Completed).then_some(ended_at);
                    connections.push(self.connection_outcome(index, completed.flatten()));
                }
                sender_stats = connections
                    .iter()
                    .map(|c| c.sender)
                    .reduce(SenderStats::then)
                    .unwrap_or_default();
                apps = Self::merged_app_outcomes(&connections);
            }
            let (losses, loss_batches) = self.loss_accounting(index, &drops);
            flows.push(FlowOutcome {
                name: config.name.clone(),
                cc: config.cc.clone(),
                start: config.start,
                handshake: flow.connected_at.map(|t| t.saturating_sub(config.start)),
                delivered_bytes: Self::delivered_bytes(flow, config),
                apps,
                end,
                ended_at,
                sender: sender_stats,
                bottleneck_forward: self.path.flow_stats(index, Direction::Forward),
                bottleneck_return: self.path.flow_stats(index, Direction::Return),
                losses,
                loss_batches,
                connections,
            });
        }
        let forward = self.path.link(Direction::Forward);
        RunOutcome {
            seed: self.config.seed,
            end_time,
            flows,
            samples: self.samples,
            app_samples: self.app_samples,
            link_samples: self.link_samples,
            forward_link: forward.stats(),
            return_link: self.path.link_stats(Direction::Return),
            forward_capacity_bits: self
                .config
                .path
                .forward
                .capacity_bits(Duration::ZERO, end_time),
            forward_queue_limit_bytes: forward.queue_limit_bytes(),
            datagrams: self.datagrams,
            emulator_drops: Default::default(),
            emulator_lateness: None,
        }
    }
}
