//! The thin quinn adapter: [`HyblaConfig`] (settings and factory) and the `Controller` that
//! forwards quinn's callbacks to the pure [`Hybla`] core with times as `Duration`s.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use quinn_proto::RttEstimator;
use quinn_proto::congestion::{Controller, ControllerFactory, ControllerMetrics};

use crate::core::{
    CompetingGrowth, Growth, Hybla, HyblaParams, InitialSsthresh, LossClassifier, LossRecord,
    LossTally,
};
use crate::resume::{ResumeParams, ResumeReport, SavedPath};
use crate::truth::{LossTruth, TruthReader};

/// RFC 9002 §7.2's initial window for datagrams of `max_datagram_bytes`: min(10 × size,
/// max(2 × size, 14 720 B)).
pub fn rfc9002_initial_window(max_datagram_bytes: u64) -> u64 {
    (10 * max_datagram_bytes).min((2 * max_datagram_bytes).max(14_720))
}

/// Hybla's settings and the factory quinn calls per connection. Defaults: RTT0 = 25 ms, initial
/// ssthresh estimated from the first flight, satquic's pipe-aware growth.
///
/// Like quinn's own `NewRenoConfig`, it is both: set it up with the `&mut self` setters, then
/// hand it to quinn's `TransportConfig::congestion_controller_factory`, which builds one
/// controller per connection (and per path reset) from it.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use hybla::{HyblaConfig, InitialSsthresh};
///
/// // A GEO path of 20 Mbit/s at 600 ms: declaring its BDP (1.5 MB) lets start-up go
/// // straight to it instead of measuring it first.
/// let mut hybla = HyblaConfig::default();
/// hybla
///     .declared_bdp(1_500_000)
///     .initial_ssthresh(InitialSsthresh::Estimate)
///     .rtt0(Duration::from_millis(25));
///
/// // `quinn::TransportConfig` is this type, re-exported.
/// let mut transport = quinn_proto::TransportConfig::default();
/// transport.congestion_controller_factory(Arc::new(hybla));
/// // ... then `quinn::ServerConfig::transport_config` / `quinn::ClientConfig::transport_config`.
/// ```
#[derive(Debug, Clone, Default)]
pub struct HyblaConfig {
    params: HyblaParams,
    initial_window_explicit: bool,
    resume: Option<Arc<ResumeOnce>>,
    loss_truth: Option<Arc<dyn LossTruth>>,
}

/// Saved parameters that one controller may resume from, once: quinn builds a new controller
/// from the same factory when the connection moves to a new path, and RFC 9959 §3.2 (Path
/// change) allows no resumption there.
#[derive(Debug)]
struct ResumeOnce {
    params: ResumeParams,
    taken: AtomicBool,
}

impl HyblaConfig {
    /// The reference RTT Hybla equalizes to. Connections with RTT ≤ RTT0 behave as NewReno.
    pub fn rtt0(&mut self, value: Duration) -> &mut Self {
        self.params.rtt0 = value;
        self
    }

    /// Window before the first RTT sample, bytes (multiplied by ρ once ρ is known). Defaults
    /// to quinn's rule: min(10 × MTU, max(14720, 2 × MTU)).
    pub fn initial_window(&mut self, bytes: u64) -> &mut Self {
        self.params.initial_window_bytes = bytes;
        self.initial_window_explicit = true;
        self
    }

    /// Initial slow-start threshold: estimated (default), fixed, ρ·γ, or none.
    pub fn initial_ssthresh(&mut self, value: InitialSsthresh) -> &mut Self {
        self.params.initial_ssthresh = value;
        self
    }

    /// Growth rules: \[Caini2004\]'s, or satquic's pipe-aware extension (default).
    pub fn growth(&mut self, value: Growth) -> &mut Self {
        self.params.growth = value;
        self
    }

    /// Growth per RTT while the bottleneck is shared with other flows (pipe-aware growth only).
    pub fn competing_growth(&mut self, value: CompetingGrowth) -> &mut Self {
        self.params.competing_growth = value;
        self
    }

    /// How a loss is classified (pipe-aware growth only; default: the queue threshold).
    pub fn loss_classifier(&mut self, value: LossClassifier) -> &mut Self {
        self.params.loss_classifier = value;
        self
    }

    /// Multiplicative decrease on congestion (default 0.5).
    pub fn loss_reduction_factor(&mut self, value: f64) -> &mut Self {
        self.params.loss_reduction_factor = value;
        self
    }

    /// How long after a path change ρ may keep the old, shorter path's value.
    pub fn base_rtt_window(&mut self, value: Duration) -> &mut Self {
        self.params.base_rtt_window = value;
        self
    }

    /// The path's bandwidth-delay product as its user knows it (bytes): with the default
    /// estimated ssthresh, start-up goes straight to it instead of waiting for a measurement
    /// (which ACK thinning defeats). A wrong value costs one congestion event, as a wrong
    /// fixed ssthresh does.
    pub fn declared_bdp(&mut self, bytes: u64) -> &mut Self {
        self.params.declared_bdp_bytes = Some(bytes);
        self
    }

    /// Resume from what a previous connection on the same path measured (RFC 9959 Careful
    /// Resume): after the handshake flight is acknowledged with an RTT that matches, the
    /// window jumps to half the saved one, paced, and retreats to half of what was validated
    /// if that causes congestion. Build one factory per connection with the parameters saved
    /// for the peer it talks to (`quinn-satellite`'s `ResumeStore` keeps them per path); only
    /// the connection's first controller resumes, not the one quinn builds after a migration.
    pub fn careful_resume(&mut self, resume: ResumeParams) -> &mut Self {
        self.resume = Some(Arc::new(ResumeOnce {
            params: resume,
            taken: AtomicBool::new(false),
        }));
        self
    }

    /// Keep every loss batch with its verdict, for [`loss_report_of`] (an instrument: the log
    /// grows with every loss; the counts are always kept).
    pub fn record_losses(&mut self, on: bool) -> &mut Self {
        self.params.record_losses = on;
        self
    }

    /// Take every loss as `truth` says it was (a study's instrument: a simulator knows why each
    /// packet was lost), instead of as the loss classifier guesses. The rules around the
    /// verdict stay: [`Growth::Seed`], ρ = 1 and persistent congestion take every loss as
    /// congestion, as they do with the classifier. A batch the bottleneck dropped a packet of
    /// is congestion; one whose packets were corrupted on a link, or were not lost at all, is
    /// random. The controllers built from these settings share `truth`: each asks it only about
    /// the packets its own loss batches cover.
    pub fn loss_truth(&mut self, truth: Arc<dyn LossTruth>) -> &mut Self {
        self.loss_truth = Some(truth);
        self
    }

    /// The settings as given.
    pub fn params(&self) -> &HyblaParams {
        &self.params
    }
}

impl ControllerFactory for HyblaConfig {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        let mtu = u64::from(current_mtu);
        let mut params = self.params.clone();
        params.careful_resume = self
            .resume
            .as_ref()
            .filter(|once| !once.taken.swap(true, Ordering::Relaxed))
            .map(|once| once.params);
        if !self.initial_window_explicit {
            params.initial_window_bytes = rfc9002_initial_window(mtu);
        }
        let core = Hybla::new(params, mtu);
        Box::new(HyblaController {
            epoch: now,
            // What the core starts from (the MTU-derived default, and never below two
            // packets): quinn sizes its pacer from it, so it must be the window quinn sees.
            initial_window_bytes: core.window(),
            core,
            last_packet_number: None,
            loss_truth: self
                .loss_truth
                .clone()
                .map(|truth| TruthReader::new(truth, now)),
        })
    }
}

/// What a Hybla controller says of the losses it saw: how it took each batch.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LossReport {
    /// Batches and bytes by verdict.
    pub tally: LossTally,
    /// When its controller was built: [`LossRecord::sent`] counts from here.
    pub epoch: Instant,
    /// Every batch, in the order they happened; `None` without
    /// [`HyblaConfig::record_losses`].
    pub records: Option<Vec<LossRecord>>,
}

/// The loss report of a Hybla controller, e.g. a copy from quinn's
/// `Connection::congestion_state()`; `None` for any other controller.
pub fn loss_report_of(controller: Box<dyn Controller>) -> Option<LossReport> {
    let hybla = controller.into_any().downcast::<HyblaController>().ok()?;
    Some(LossReport {
        tally: hybla.core.loss_tally(),
        epoch: hybla.epoch,
        records: hybla
            .core
            .params()
            .record_losses
            .then(|| hybla.core.loss_records().to_vec()),
    })
}

/// What a Hybla controller knows of Careful Resume: how its own resumption went, and what it
/// measured of the path for the next connection.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResumeState {
    /// When its controller was built: the transitions' times count from here.
    pub epoch: Instant,
    /// How its resumption went; `None` if it did not resume.
    pub report: Option<ResumeReport>,
    /// What to save for the next connection on this path (RFC 9959 §3.1); `None` when the
    /// connection measured too little to be worth it. After a Safe Retreat this is what the
    /// connection measured afterwards, never the parameters it retreated from.
    pub observation: Option<SavedPath>,
}

/// The Careful Resume state of a Hybla controller (e.g. a copy from quinn's
/// `Connection::congestion_state()`, read when the connection closes); `None` for any other
/// controller.
pub fn resume_state_of(controller: Box<dyn Controller>) -> Option<ResumeState> {
    let hybla = controller.into_any().downcast::<HyblaController>().ok()?;
    Some(ResumeState {
        epoch: hybla.epoch,
        report: hybla.core.resume_report(),
        observation: hybla.core.observation(),
    })
}

/// quinn's view of one connection's Hybla.
#[derive(Debug, Clone)]
struct HyblaController {
    epoch: Instant,
    core: Hybla,
    /// The window the controller was built with, bytes ([`Controller::initial_window`]).
    initial_window_bytes: u64,
    /// The last packet number `on_sent` reported: how many packets the next report covers.
    last_packet_number: Option<u64>,
    /// Where the verdicts come from instead of the classifier ([`HyblaConfig::loss_truth`]).
    loss_truth: Option<TruthReader>,
}

/// The most packets one `on_sent` report is taken to cover: Linux sends at most 64 segments
/// per GSO call (`UDP_MAX_SEGMENTS`), so a larger gap in packet numbers is a switch of packet
/// number space, not one transmit.
const MAX_PACKETS_PER_TRANSMIT: u64 = 64;

impl HyblaController {
    fn since(&self, t: Instant) -> Duration {
        t.saturating_duration_since(self.epoch)
    }
}

impl Controller for HyblaController {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        let now = self.since(now);
        // A GSO batch is reported once, with its last packet number: the numbers since the
        // previous report are its packets (handshake spaces number apart; one packet there).
        let packets = match self.last_packet_number.replace(last_packet_number) {
            Some(previous)
                if last_packet_number > previous
                    && last_packet_number - previous <= MAX_PACKETS_PER_TRANSMIT =>
            {
                last_packet_number - previous
            }
            _ => 1,
        };
        self.core.on_sent(now, bytes, packets);
    }

    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        _rtt: &RttEstimator,
    ) {
        let (now, sent) = (self.since(now), self.since(sent));
        self.core.on_ack(now, sent, bytes, app_limited);
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        in_flight: u64,
        app_limited: bool,
        _largest: Option<u64>,
    ) {
        let now = self.since(now);
        self.core.on_end_acks(now, in_flight, app_limited);
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        lost_bytes: u64,
    ) {
        let truth = match &mut self.loss_truth {
            Some(reader) if lost_bytes > 0 => Some(reader.verdict(sent)),
            _ => None,
        };
        let (now, sent) = (self.since(now), self.since(sent));
        self.core.on_congestion_event_with_truth(
            now,
            sent,
            is_persistent_congestion,
            lost_bytes,
            truth,
        );
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.core.on_mtu_update(u64::from(new_mtu));
    }

    fn window(&self) -> u64 {
        self.core.window()
    }

    fn metrics(&self) -> ControllerMetrics {
        let mut metrics = ControllerMetrics::default();
        metrics.congestion_window = self.core.window();
        metrics.ssthresh = (self.core.ssthresh() != u64::MAX).then_some(self.core.ssthresh());
        metrics
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(self.clone())
    }

    fn initial_window(&self) -> u64 {
        self.initial_window_bytes
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Review finding (issue 22): `initial_window` returned the configured 14 720 bytes while
    /// `build` started the window from the connection's MTU, so quinn's pacer, sized from
    /// `initial_window`, disagreed with the window it paced.
    #[test]
    fn initial_window_is_the_window_build_starts_from() {
        let now = Instant::now();
        // RFC 9002 §7.2: min(10 × MSS, max(2 × MSS, 14 720 B)).
        for (mtu, expected) in [(1200u16, 12_000), (1472, 14_720), (8972, 17_944)] {
            let controller = Arc::new(HyblaConfig::default()).build(now, mtu);
            assert_eq!(controller.window(), expected, "MTU {mtu}");
            assert_eq!(controller.initial_window(), expected, "MTU {mtu}");
        }
        // An explicit initial window is kept, raised to two packets as the core raises it.
        let mut config = HyblaConfig::default();
        config.initial_window(1000);
        let controller = Arc::new(config).build(now, 1200);
        assert_eq!(controller.window(), 2400);
        assert_eq!(controller.initial_window(), controller.window());
    }

    /// Saved state serves one connection (RFC 9959 §7): a second controller built from the
    /// same settings, such as quinn's for a migrated path, starts from scratch.
    #[test]
    fn careful_resume_applies_to_the_first_controller_only() {
        let now = Instant::now();
        let mut config = HyblaConfig::default();
        config.careful_resume(crate::ResumeParams::new(crate::SavedPath {
            saved_cwnd_bytes: 10_000_000,
            saved_rtt: Duration::from_millis(600),
        }));
        let config = Arc::new(config);
        let first = resume_state_of(config.clone().build(now, 1200)).unwrap();
        assert!(first.report.is_some());
        let second = resume_state_of(config.build(now, 1200)).unwrap();
        assert_eq!(second.report, None);
        assert_eq!(second.observation, None);
    }
}
