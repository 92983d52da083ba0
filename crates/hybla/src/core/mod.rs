//! The Hybla algorithm on plain numbers: bytes, `Duration`s since an epoch the caller picks.
//!
//! Notation of \[Caini2004\] (TCP Hybla, Caini & Firrincieli 2004): W is the congestion window in
//! segments (MSS), ρ = RTT / RTT0, γ the slow-start threshold. The per-ACK rules (eq. 9) are
//! applied with byte counting as in \[Cavallotti2024\] §4.2.3 (the picoquic implementation): every
//! acknowledged MSS counts as one ACK of eq. 9.
//!
//! Inside: `params` holds the settings and the constants behind the rules, `loss` the loss
//! classifier and its verdicts, `growth` ρ and the growth rules, `bottleneck` the pipe-aware
//! readings of the shared queue (a full link, competition and the other flows' growth, the
//! flow's own excess queue, the base-RTT refresh); this module holds the state and the events
//! that drive it.

use std::time::Duration;

/// quinn-proto's pacer sends `window × 5 / 4` bytes per smoothed RTT (its `Pacer`), whatever
/// the controller: (numerator, denominator).
pub(super) const QUINN_PACER_GAIN: (u64, u64) = (5, 4);

/// How far the window leads the flight at the end of Careful Resume's jump, packets: quinn
/// sends nothing once the flight plus two datagrams (one being built and the next) would reach
/// the window, so three leave the pacer in charge and one more is margin.
const JUMP_TAIL_HEADROOM_PACKETS: u64 = 4;

/// The current RTTs Careful Resume's jump is paced over: (numerator, denominator). RFC 9959
/// §4.3.2's rhythm spreads jump_cwnd over one RTT (a rate it sets as the most), so the jump's
/// last packet leaves as its first acknowledgement arrives, and behind a bottleneck whose
/// capacity fell the jump's whole excess is queued before any feedback can stop it: a jump
/// twice the new BDP fills a buffer of the new BDP to the brim (capacity at a quarter: 79
/// drops at the jump's tail). Over 1.1 RTTs the Unvalidated Phase ends at its one-RTT limit
/// (§3.3) with about 0.93 of the jump out, and that buffer peaks at 0.88 full. (1.2 RTTs left
/// more margin and cost the paths that did not change more: in real time on 250/3 Mbit/s,
/// 650 ms, the resumed 100 MB took 5.9-6.1 s against 5.7-6.0 s.)
const JUMP_SPAN_RTTS: (u64, u64) = (11, 10);

use crate::elastic::ElasticWindow;
use crate::loss_by_queue::LossByQueue;
use crate::loss_runs::LossRuns;
use crate::min_filter::{WindowedMax, WindowedMin};
use crate::queue::QueueMonitor;
use crate::rate::DeliveryRate;
use crate::resume::{
    CarefulResume, MIN_SAVED_WINDOW_IWS, ResumeCommand, ResumePhase, ResumeReport, SavedPath,
};

mod bottleneck;
mod growth;
mod loss;
mod params;

pub use loss::{LossContext, LossRecord, LossTally, LossVerdict};
#[cfg(test)]
pub(crate) use params::STARTUP_GAIN_PER_ROUND;
pub use params::{
    CompetingGrowth, Growth, HyblaParams, InitialSsthresh, LOSS_RATE_ROUNDS, LossClassifier,
    MAX_WINDOW_BYTES, MIN_RATE_SPAN, OBSERVATION_WINDOW, PATH_RTT_WINDOW, RANDOM_LOSS_MAX_RATE,
};
use params::{NOISE_RULES_MAX_RHO, SMALLER_FLOW_REDUCTION};

/// Slow start or congestion avoidance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// cwnd < ssthresh.
    SlowStart,
    /// cwnd ≥ ssthresh.
    CongestionAvoidance,
}

/// The Hybla state machine.
#[derive(Debug, Clone)]
pub struct Hybla {
    params: HyblaParams,
    mss_bytes: u64,
    cwnd_bytes: u64,
    ssthresh_bytes: u64,
    /// Whether more window still buys more delivery rate (the growth signal under noise).
    elastic: ElasticWindow,
    /// When the queue reading was last noisy (for `NOISE_HOLD`).
    noisy_seen_at: Option<Duration>,
    /// Fractional bytes of window increase not yet applied (\[Cavallotti2024\]'s increment_frac_sum).
    carry_bytes: f64,
    rho: f64,
    rho_known: bool,
    base_rtt: WindowedMin,
    /// Smallest RTT sample ever (the declared BDP's RTT, for the declared capacity).
    smallest_rtt: Option<Duration>,
    /// Smallest RTT sample of the current ACK frame (the freshest queue-delay reading).
    frame_min_rtt: Option<Duration>,
    /// Send time of the packet behind `frame_min_rtt`.
    frame_min_sent: Duration,
    /// Latest send time among the packets of the current ACK frame.
    frame_newest_sent: Duration,
    /// Bytes the current ACK frame acknowledged.
    frame_bytes: u64,
    /// Packets per ACK frame, averaged (gain 1/8): with ACK thinning each frame releases a
    /// burst of that many packets, which queue behind each other at the bottleneck.
    packets_per_frame: f64,
    /// Bytes delivered and lost in the current round (one base RTT).
    round_delivered_bytes: u64,
    round_lost_bytes: u64,
    round_start: Duration,
    /// Whether something other than the flow's own window (the application, or Careful
    /// Resume's jump) limited sending at any ACK frame of the current round.
    round_limited_elsewhere: bool,
    /// When the application (not the window) last limited sending, and when the first ACK
    /// frame ended: see `application_held_the_flow`.
    application_limited_at: Option<Duration>,
    first_ack_frame_at: Option<Duration>,
    /// Most bytes in flight after an ACK frame of the current round: what the sender used.
    round_max_in_flight: u64,
    /// (delivered, lost) bytes of the last [`LOSS_RATE_ROUNDS`] rounds, newest last.
    past_rounds: std::collections::VecDeque<(u64, u64)>,
    /// When start-up ended (its drain already took the window to the pipe).
    startup_ended_at: Option<Duration>,
    /// Start-up's drain, to be read again: when it drained, and the window it drained from
    /// (see [`Self::reread_the_drain`]).
    drain_reread: Option<(Duration, u64)>,
    /// When the window first reached the start-up target.
    reached_target_at: Option<Duration>,
    /// The bottleneck queue as the RTT samples show it; the loss classifier.
    queue: QueueMonitor,
    /// Bytes delivered and lost at each level of queue: whether a fuller queue loses more.
    loss_by_queue: LossByQueue,
    /// Packets whose fate is open, in send order: how many of a batch's losses came in a row.
    loss_runs: LossRuns,
    /// Until when the flow behaves as one of several sharing the bottleneck.
    competing_until: Option<Duration>,
    /// When the last ACK frame ended: the time since then that `competing_until` covers was
    /// spent competing.
    last_frame_end: Option<Duration>,
    /// When the window was last reduced (a congestion loss, or shedding the flow's own
    /// excess queue).
    reduced_at: Option<Duration>,
    /// Since when a queue has stood while the flow got clearly less than the capacity.
    competition_seen_since: Option<Duration>,
    /// When the flow last drained its own excess queue.
    drained_at: Option<Duration>,
    /// The window a congestion cut taken while credibly competing came from: the regrowth up
    /// to it is competing too (`hold_competition_through_regrowth`).
    competing_regrowth_to: Option<u64>,
    /// Whether the last detection of competition was credible: a share of the capacity that
    /// a competitor explains, on a quiet reading, after start-up.
    competition_credible: bool,
    /// At the last full link: whether the others' bytes in flight exceeded the flow's own
    /// (`compare_with_the_others`).
    others_hold_more: bool,
    /// When the last reading of a full link found the flow getting clearly more than the
    /// others (`yielding`), and when it found the others getting far more (`far_smaller`).
    yield_found_at: Option<Duration>,
    smaller_found_at: Option<Duration>,
    /// When the flow last gave window back (`yield_to_the_others`: a step per loop round).
    yielded_at: Option<Duration>,
    /// What the others got at the last step of the yield, bytes per second, until a
    /// congestion cut: the next episode of yielding reads whether they took what was given.
    others_bytes_per_s_at_yield: Option<f64>,
    /// Whether the others took nothing of a yield (a neighbour its application limits): no
    /// more yielding until a congestion cut or the competition ends.
    others_limited: bool,
    /// When a drain last took the window down to the pipe, below what the flow had in
    /// flight: a queue that outlives it is somebody else's. Not a drain that kept an
    /// application's flight (its queue target stands on after it): behind the balancer that
    /// made a lone connection on `media-bulk-geo` with 3× rises compete for 21 % of its run
    /// (5 % without).
    drained_flight_at: Option<Duration>,
    /// Where the current measurement of the other flows' growth started: (time, queue delay,
    /// window).
    growth_anchor: Option<(Duration, Duration, u64)>,
    /// The other flows' window growth, bytes per second (averaged over measurements).
    others_growth_bytes_per_s: f64,
    /// When a queue of at least the flow's budget was last seen.
    saturated_at: Option<Duration>,
    /// When a queue of twice the flow's budget was last seen, and the window then.
    clear_queue_at: Option<Duration>,
    clear_queue_window_bytes: u64,
    /// The window when the queue was last at the budget (`saturated_at`).
    saturated_window_bytes: u64,
    /// When a loss (of either verdict) was last declared.
    last_loss_at: Option<Duration>,
    /// The probe's growth per RTT, segments, while the window grows above the pipe with no
    /// queue in sight (the path may have more room than the pipe says): doubles with every
    /// window's worth of bytes acknowledged in that state; `None` outside it.
    probe_segments_per_rtt: Option<f64>,
    /// Since when a queue of more than twice the flow's budget has stood.
    excess_since: Option<Duration>,
    /// When the path was last seen without a standing queue (the base RTT is fresh).
    path_seen_empty_at: Option<Duration>,
    /// Smallest frame sample of the last [`PATH_RTT_WINDOW`]: the reference for "empty".
    path_rtt: WindowedMin,
    recovery_start: Option<Duration>,
    loss_seen: bool,
    /// Delivery rate over the last rounds: the start-up ssthresh and the pipe estimate.
    rate: DeliveryRate,
    /// In start-up (`Estimate` only): ssthresh unset until a queue or a loss shows the pipe.
    estimating_ssthresh: bool,
    /// Start-up target: the declared BDP, raised by the dispersion estimate of the first flights.
    startup_target_bytes: Option<u64>,
    /// Time of the latest ACK.
    now: Duration,
    /// Every loss batch's verdict, counted.
    loss_tally: LossTally,
    /// Every loss batch, when `record_losses` is on.
    loss_records: Vec<LossRecord>,
    /// RFC 9959's state machine, when resuming.
    resume: Option<CarefulResume>,
    /// Window-limited delivery per round trip (bytes) over [`OBSERVATION_WINDOW`]: the
    /// `saved_cwnd` this connection leaves for the next.
    observed_window: WindowedMax,
    /// The base RTT when `observed_window` was last sampled (`saved_rtt`).
    observed_rtt: Option<Duration>,
    /// Since when the window alone has limited sending (no application limit, no Careful
    /// Resume): the ACK time, the newest send time acknowledged then, and the bytes
    /// acknowledged since; the stretch `observed_window` samples.
    window_limited_since: Option<(Duration, Duration, u64)>,
    /// Since when the application has limited sending (from the ACK frame before the first
    /// that said so), until the window limits it again.
    app_limited_from: Option<Duration>,
}

impl Hybla {
    /// A fresh instance for a path with maximum datagram size `mss_bytes`.
    pub fn new(params: HyblaParams, mss_bytes: u64) -> Self {
        let mss_bytes = mss_bytes.max(1);
        let ssthresh_bytes = match params.initial_ssthresh {
            InitialSsthresh::Bytes(b) => b.max(2 * mss_bytes),
            InitialSsthresh::Segments(g) => (g * mss_bytes as f64) as u64,
            InitialSsthresh::Estimate | InitialSsthresh::Infinite => u64::MAX,
        };
        let cwnd_bytes = params.initial_window_bytes.max(2 * mss_bytes);
        Self {
            elastic: ElasticWindow::default(),
            noisy_seen_at: None,
            resume: params
                .careful_resume
                .map(|resume| CarefulResume::new(resume, cwnd_bytes, mss_bytes)),
            observed_window: WindowedMax::new(OBSERVATION_WINDOW),
            observed_rtt: None,
            window_limited_since: None,
            app_limited_from: None,
            estimating_ssthresh: params.initial_ssthresh == InitialSsthresh::Estimate,
            startup_target_bytes: params.declared_bdp_bytes,
            now: Duration::ZERO,
            rate: DeliveryRate::new(params.rate_window),
            cwnd_bytes,
            base_rtt: WindowedMin::new(params.base_rtt_window),
            params,
            mss_bytes,
            ssthresh_bytes,
            carry_bytes: 0.0,
            rho: 1.0,
            rho_known: false,
            smallest_rtt: None,
            frame_min_rtt: None,
            frame_min_sent: Duration::ZERO,
            frame_newest_sent: Duration::ZERO,
            frame_bytes: 0,
            packets_per_frame: 1.0,
            reached_target_at: None,
            startup_ended_at: None,
            drain_reread: None,
            round_delivered_bytes: 0,
            round_limited_elsewhere: false,
            application_limited_at: None,
            first_ack_frame_at: None,
            round_max_in_flight: 0,
            round_lost_bytes: 0,
            round_start: Duration::ZERO,
            past_rounds: std::collections::VecDeque::with_capacity(LOSS_RATE_ROUNDS + 1),
            queue: QueueMonitor::new(),
            loss_by_queue: LossByQueue::new(),
            loss_runs: LossRuns::default(),
            last_frame_end: None,
            competing_until: None,
            reduced_at: None,
            competition_seen_since: None,
            drained_at: None,
            competing_regrowth_to: None,
            competition_credible: false,
            others_hold_more: false,
            yield_found_at: None,
            smaller_found_at: None,
            yielded_at: None,
            others_bytes_per_s_at_yield: None,
            others_limited: false,
            drained_flight_at: None,
            growth_anchor: None,
            others_growth_bytes_per_s: 0.0,
            saturated_at: None,
            clear_queue_at: None,
            clear_queue_window_bytes: 0,
            saturated_window_bytes: 0,
            last_loss_at: None,
            probe_segments_per_rtt: None,
            excess_since: None,
            path_seen_empty_at: None,
            path_rtt: WindowedMin::new(PATH_RTT_WINDOW),
            recovery_start: None,
            loss_seen: false,
            loss_tally: LossTally::default(),
            loss_records: Vec::new(),
        }
    }

    /// The settings this instance runs with.
    pub fn params(&self) -> &HyblaParams {
        &self.params
    }

    /// How every loss batch so far was taken, counted.
    pub fn loss_tally(&self) -> LossTally {
        self.loss_tally
    }

    /// Every loss batch so far with its verdict (empty unless `record_losses` is on).
    pub fn loss_records(&self) -> &[LossRecord] {
        &self.loss_records
    }

    /// The Careful Resume phase, when resuming.
    pub fn resume_phase(&self) -> Option<ResumePhase> {
        self.resume.as_ref().map(CarefulResume::phase)
    }

    /// How Careful Resume went so far, when resuming.
    pub fn resume_report(&self) -> Option<ResumeReport> {
        self.resume.as_ref().map(CarefulResume::report)
    }

    /// What this connection measured of its path, for the next connection to resume from
    /// (RFC 9959 §3.1): the most bytes acknowledged per base RTT over a stretch of packets the
    /// window limited (`observe_window_limited`), over the last 10 s (`OBSERVATION_WINDOW`;
    /// at most the bottleneck's rate × the base RTT, so a slow-start overshoot does not count,
    /// §4.1), and the base RTT. `None` while it is below four initial windows (not worth
    /// resuming, §3.1) or the connection never filled its window.
    pub fn observation(&self) -> Option<SavedPath> {
        let window = self.observed_window.get()? as u64;
        let rtt = self.observed_rtt?;
        (window >= MIN_SAVED_WINDOW_IWS * self.params.initial_window_bytes).then_some(SavedPath {
            saved_cwnd_bytes: window,
            saved_rtt: rtt,
        })
    }

    /// The window was just reduced (a congestion loss, a retreat, shedding the flow's own
    /// queue or refreshing the base RTT): the time is kept, and a probe above the pipe starts
    /// again from its first step.
    pub(super) fn mark_reduced(&mut self, now: Duration) {
        self.reduced_at = Some(now);
        self.drain_reread = None;
        self.probe_segments_per_rtt = None;
        self.elastic.restart();
    }

    fn apply_resume(&mut self, now: Duration, command: Option<ResumeCommand>) {
        let Some(command) = command else {
            return;
        };
        self.carry_bytes = 0.0;
        match command {
            ResumeCommand::Jump(_) => self.pace_jump(),
            ResumeCommand::SetWindow(bytes) => {
                self.cwnd_bytes = bytes.min(MAX_WINDOW_BYTES);
            }
            ResumeCommand::Retreat(bytes) => {
                // The retreat is the answer to the jump's congestion: start-up and this
                // recovery period end here. Not below Hybla's minimum window (2ρ packets).
                self.cwnd_bytes = bytes.max(self.minimum_window()).min(MAX_WINDOW_BYTES);
                self.ssthresh_bytes = self.cwnd_bytes;
                self.estimating_ssthresh = false;
                self.startup_ended_at = Some(now);
                self.recovery_start = Some(now);
                self.mark_reduced(now);
            }
            ResumeCommand::ExitRetreat { ssthresh_bytes } => {
                self.ssthresh_bytes = ssthresh_bytes;
            }
            ResumeCommand::Validated => {
                // A queue that stood through the last round (not a moment's: the jump's and
                // slow start's bursts queue for a few milliseconds on a path with room to
                // spare): the jump filled the path, and Careful Resume's jump and slow start
                // were the start-up. Hybla's own ends here, at the validated window, and
                // congestion avoidance (whose pipe-aware rules drain a standing queue) goes
                // on from it. Start-up continuing instead would grow the window
                // exponentially past a path whose capacity fell since the saved one was
                // measured, as long as its buffer hides the excess (a quarter of the
                // capacity behind a buffer sized for the old one: 10 000 drops, none
                // without resumption). No standing queue: the saved window was below the
                // path's capacity (a short previous connection measures only what it
                // reached), and start-up goes on from the validated window (a 5.3 MB
                // transfer at 50 Mbit/s, RTT 600 ms, resumed from 1.2 MB: 3.61 s when
                // start-up always ended here, slower than not resuming).
                // Outside the estimating start-up (a fixed or infinite threshold) nothing
                // else would end Hybla's slow start: it ends here, as before.
                if !self.estimating_ssthresh || self.queue.standing() >= 2 * self.queue.budget() {
                    self.ssthresh_bytes = self.cwnd_bytes;
                    if std::mem::replace(&mut self.estimating_ssthresh, false) {
                        self.startup_ended_at = Some(now);
                    }
                }
            }
        }
    }

    /// The window quinn paces the Unvalidated Phase by: jump_cwnd over [`JUMP_SPAN_RTTS`]
    /// current RTTs (RFC 9959 §4.3.2's rhythm, one RTT, is the most). quinn's pacer sends 1.25
    /// windows per smoothed RTT whatever the controller, so the window is jump_cwnd / (1.25 ×
    /// 1.1) until the flight nears it, which leaves at the span's rate for 0.8 RTT. A window
    /// held there would leave jump_cwnd's last part for later (the RFC's CWND is jump_cwnd);
    /// from there it stays [`JUMP_TAIL_HEADROOM_PACKETS`] above the flight, so the pacer
    /// rather than the window times each packet, up to jump_cwnd. The rate then rises with
    /// the window, and at the phase's one-RTT limit about 0.93 of jump_cwnd is out. (The
    /// full window from the start sent the jump in 0.8 RTT: with capacity at a quarter behind
    /// a buffer of the new BDP, 878 drops.)
    fn pace_jump(&mut self) {
        let Some((jump, flight)) = self
            .resume
            .as_ref()
            .and_then(CarefulResume::unvalidated_flight)
        else {
            return;
        };
        let paced =
            jump * QUINN_PACER_GAIN.1 * JUMP_SPAN_RTTS.1 / (QUINN_PACER_GAIN.0 * JUMP_SPAN_RTTS.0);
        let ahead_of_flight = (flight + JUMP_TAIL_HEADROOM_PACKETS * self.mss_bytes).min(jump);
        self.cwnd_bytes = paced.max(ahead_of_flight).min(MAX_WINDOW_BYTES);
    }

    /// Whether Careful Resume sets the window now (from the jump until it ends).
    fn resume_owns_window(&self) -> bool {
        self.resume.as_ref().is_some_and(CarefulResume::owns_window)
    }

    /// Congestion window, bytes.
    pub fn window(&self) -> u64 {
        self.cwnd_bytes
    }

    /// Slow-start threshold, bytes (`u64::MAX` while unset).
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh_bytes
    }

    /// Start-up target (the declared or measured BDP), bytes, while in start-up.
    pub fn startup_target(&self) -> Option<u64> {
        self.startup_target_bytes
            .filter(|_| self.estimating_ssthresh)
    }

    /// Current ρ = max(1, base RTT / RTT0); 1 until the first RTT sample.
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// Current phase.
    pub fn phase(&self) -> Phase {
        if self.cwnd_bytes < self.ssthresh_bytes {
            Phase::SlowStart
        } else {
            Phase::CongestionAvoidance
        }
    }

    /// Window increase computed but not yet applied, bytes (always below one byte).
    pub fn pending_increment_bytes(&self) -> f64 {
        self.carry_bytes
    }

    /// The propagation-delay estimate ρ is computed from.
    pub fn base_rtt(&self) -> Option<Duration> {
        self.base_rtt.get()
    }

    /// Queueing delay: the smallest RTT sample of the last quarter base RTT (at least
    /// 10 ms) − base RTT.
    pub fn queue_delay(&self) -> Duration {
        self.queue.delay()
    }

    /// The queue this flow keeps as its own when alone (2 ms or twice the measured jitter).
    pub fn queue_budget(&self) -> Duration {
        self.queue.budget()
    }

    /// A loss at a queue of this delay or more is congestion (now: as one of several flows
    /// or as the only one).
    pub fn congestion_threshold(&self) -> Duration {
        self.queue.congestion_threshold(self.competing())
    }

    /// Jitter of the RTT samples (RFC 3550's mean absolute difference of successive ones).
    pub fn jitter(&self) -> Duration {
        self.queue.jitter()
    }

    /// Whether the flow currently behaves as one of several sharing the bottleneck.
    pub fn competing(&self) -> bool {
        self.competing_until.is_some_and(|until| self.now < until)
    }

    /// Smallest window: minimum_window_packets × MSS, times ρ (\[Cavallotti2024\] §4.2.3).
    pub fn minimum_window(&self) -> u64 {
        ((self.params.minimum_window_packets * self.mss_bytes) as f64 * self.rho) as u64
    }

    /// The datagram size changed (PLPMTUD); windows in bytes keep their value.
    pub fn on_mtu_update(&mut self, mss_bytes: u64) {
        self.mss_bytes = mss_bytes.max(1);
    }

    /// Sets ρ directly, as if the first RTT sample had arrived (the tests' shortcut).
    #[cfg(test)]
    pub(crate) fn set_rho_for_test(&mut self, rho: f64) {
        self.rho = rho.max(1.0);
        self.rho_known = true;
    }

    /// Whether the queue reading was noisy recently (the tests' window on the noise rules).
    #[cfg(test)]
    pub(crate) fn noisy_recently_for_test(&self) -> bool {
        self.noisy_recently()
    }

    /// `packets` packets of `bytes` in all were sent at `now`, one transmit (Careful Resume
    /// counts its flight from them; the send log its losses in a row).
    pub fn on_sent(&mut self, now: Duration, bytes: u64, packets: u64) {
        // No more packets than the bytes fill at the MTU: a gap in packet numbers may be a
        // number quinn skipped, or a switch of packet number space.
        let packets = packets.min(bytes.div_ceil(self.mss_bytes.max(1))).max(1);
        self.loss_runs.on_sent(now, bytes, packets);
        let command = self
            .resume
            .as_mut()
            .and_then(|resume| resume.on_sent(now, bytes, self.cwnd_bytes));
        self.apply_resume(now, command);
        self.pace_jump();
    }

    /// One newly acknowledged packet of `bytes`, sent at `sent`, acknowledged at `now`.
    pub fn on_ack(&mut self, now: Duration, sent: Duration, bytes: u64, app_limited: bool) {
        self.now = now;
        if let Some(resume) = self.resume.as_mut() {
            resume.on_ack(now, sent, bytes);
        }
        if let Some(sample) = now.checked_sub(sent) {
            self.base_rtt.update(now, sample);
            self.smallest_rtt = Some(self.smallest_rtt.map_or(sample, |m| m.min(sample)));
            if self.frame_min_rtt.is_none_or(|m| sample < m) {
                self.frame_min_rtt = Some(sample);
                self.frame_min_sent = sent;
            }
            self.frame_newest_sent = self.frame_newest_sent.max(sent);
            self.update_rho();
        }
        self.rate.on_ack(sent, bytes);
        self.loss_runs.on_ack(sent);
        self.round_delivered_bytes += bytes;
        if let Some((_, _, observed)) = &mut self.window_limited_since {
            *observed += bytes;
        }
        self.frame_bytes += bytes;
        // RFC 9002 §7.3.2: no growth for packets sent before the current recovery started,
        // and none while the application, not the window, limits sending.
        if app_limited || self.recovery_start.is_some_and(|start| sent <= start) {
            return;
        }
        self.grow(bytes);
    }

    /// End of one ACK frame, with quinn's bytes in flight after it and whether the application
    /// rather than the window limited sending before it: queue-delay reading, competition, the
    /// start-up bandwidth estimate, Careful Resume's phase changes and the observation of the
    /// path for the next connection.
    pub fn on_end_acks(&mut self, now: Duration, in_flight_bytes: u64, app_limited: bool) {
        if let (Some(at), Some(until)) = (self.last_frame_end, self.competing_until) {
            self.loss_tally.shared_time += until.min(now).saturating_sub(at);
        }
        self.round_limited_elsewhere |= app_limited || self.resume_owns_window();
        self.first_ack_frame_at.get_or_insert(now);
        if app_limited {
            self.application_limited_at = Some(now);
        }
        self.round_max_in_flight = self.round_max_in_flight.max(in_flight_bytes);
        self.loss_runs.on_end_acks();
        self.end_ack_frame(now, in_flight_bytes, app_limited);
        let command = self.resume.as_mut().and_then(|resume| {
            resume.on_end_acks(now, in_flight_bytes, app_limited, self.cwnd_bytes)
        });
        self.apply_resume(now, command);
        if app_limited {
            // Before the first ACK frame nothing said the window limited sending.
            self.app_limited_from
                .get_or_insert(self.last_frame_end.unwrap_or(Duration::ZERO));
        } else {
            self.app_limited_from = None;
        }
        // Acknowledgements of packets the window limited are window-limited samples, however
        // late they come: a sender that ran out of data with a queue at the bottleneck sees
        // the path deliver at capacity for another RTT (BBR counts a delivery-rate sample
        // application-limited by its packet's send time too).
        let app_limited_packets = self
            .app_limited_from
            .is_some_and(|from| self.frame_newest_sent >= from);
        self.observe_window_limited(now, app_limited_packets || self.resume_owns_window());
        self.last_frame_end = Some(now);
    }

    /// RFC 9959 §3.1 (Observing saved_cwnd): "the volume of data acknowledged in one RTT",
    /// over stretches in which the acknowledged packets were sent while the window alone
    /// limited sending: per base RTT, sampled once a stretch lasts a base RTT, and when it
    /// ends after at least half of one. A short transfer's best stretch is its last, at full
    /// rate, and it ends with the application's data: sampled only at whole rounds that no
    /// ACK frame called application-limited, a 5.3 MB GEO transfer (20 Mbit/s, 600 ms) saved
    /// 1.29 MB of the 1.47 MB it delivered per RTT at the end. The rate is over the longer of
    /// the ACK span and the send span of the packets acknowledged (BBR's delivery-rate
    /// interval): ACKs that come bunched do not make the path faster than it was fed.
    fn observe_window_limited(&mut self, now: Duration, limited: bool) {
        let horizon = self.base_rtt.get().unwrap_or(self.params.rtt0);
        let Some((since, sent_from, bytes)) = self.window_limited_since else {
            if !limited {
                self.window_limited_since = Some((now, self.frame_newest_sent, 0));
            }
            return;
        };
        let length = now.saturating_sub(since);
        if limited || length >= horizon {
            let interval = length.max(self.frame_newest_sent.saturating_sub(sent_from));
            if length >= horizon / 2 && !interval.is_zero() {
                let per_base_rtt = bytes as f64 * horizon.as_secs_f64() / interval.as_secs_f64();
                let sample = (per_base_rtt as u64).min(self.cwnd_bytes);
                self.observed_window.update(now, sample as f64);
                self.observed_rtt = self.base_rtt.get();
            }
            self.window_limited_since = (!limited).then_some((now, self.frame_newest_sent, 0));
        }
    }

    /// Closes one ACK frame: the queue reading and what it drives, and, at the first frame a
    /// base RTT after the last, the round (its delivered and lost bytes, for the loss rate).
    fn end_ack_frame(&mut self, now: Duration, in_flight_bytes: u64, app_limited: bool) {
        let owned = self.resume_owns_window();
        let mut queue_now = false;
        if let (Some(sample), Some(base)) = (self.frame_min_rtt.take(), self.base_rtt.get()) {
            let packet_time = self
                .capacity_bytes_per_s()
                .filter(|c| *c > 0.0)
                .map_or(Duration::ZERO, |c| {
                    Duration::from_secs_f64(self.mss_bytes as f64 / c)
                });
            let frame_bytes = std::mem::take(&mut self.frame_bytes);
            self.elastic.on_frame(
                now,
                base,
                frame_bytes,
                self.cwnd_bytes,
                !self.round_limited_elsewhere,
            );
            let packets = frame_bytes as f64 / self.mss_bytes as f64;
            self.packets_per_frame += (packets - self.packets_per_frame) / 8.0;
            // The flow's own queue: a couple of packets, plus the burst each ACK frame releases
            // (one ACK per k + 1 packets on a thinned return link), which queues behind itself.
            let own_queue = packet_time
                .mul_f64(f64::from(crate::queue::BUDGET_PACKETS) + self.packets_per_frame.max(0.0));
            self.queue
                .on_frame(now, self.frame_min_sent, sample, base, own_queue);
            if self.round_limited_elsewhere {
                self.queue.forget_excursion();
            } else {
                self.queue.track_excursion(now, base);
            }
            if self.params.loss_classifier == LossClassifier::LossByQueue {
                // Counted at the reading around its send time once the packets sent up to a
                // filter window after it have been sampled: the reading a loss gets.
                self.loss_by_queue
                    .on_delivered(self.frame_min_sent, frame_bytes);
                let settled = self
                    .frame_newest_sent
                    .saturating_sub(crate::queue::QueueMonitor::filter_window(base));
                let queue = &self.queue;
                self.loss_by_queue
                    .settle(now, settled, |sent| queue.at_send_time(sent, base));
            }
            if self.queue.noisy() {
                self.noisy_seen_at = Some(now);
            }
            queue_now = self.queue.reading() >= self.queue.budget();
            if self.queue_at_budget() {
                self.saturated_at = Some(now);
                self.saturated_window_bytes = self.cwnd_bytes;
            }
            if self.queue.delay() >= 2 * self.queue.budget() {
                self.clear_queue_at = Some(now);
                self.clear_queue_window_bytes = self.cwnd_bytes;
            }
            // The path is seen empty when a sample comes within half a budget of the smallest
            // RTT of the last minute, not of the base RTT: a base RTT that has crept up with a
            // standing queue would make the queue look empty.
            self.path_rtt.update(now, sample);
            if self
                .path_rtt
                .get()
                .is_some_and(|path| sample <= path + self.queue.own_allowance() / 2)
            {
                self.path_seen_empty_at = Some(now);
            }
            if self.params.growth == Growth::PipeAware && !self.estimating_ssthresh && !owned {
                self.compare_with_the_others(now, base, in_flight_bytes);
                self.hold_competition_through_regrowth(now, base);
                self.detect_competition(now, base);
                self.measure_others_growth(now, base);
                if !self.competing() {
                    self.drain_own_queue(now, base);
                    self.refresh_base_rtt(now, base);
                }
            }
        }
        let horizon = self.base_rtt.get().unwrap_or(self.params.rtt0);
        if now >= self.round_start + horizon {
            self.round_start = now;
            let round = (
                std::mem::take(&mut self.round_delivered_bytes),
                std::mem::take(&mut self.round_lost_bytes),
            );
            self.round_limited_elsewhere = false;
            self.round_max_in_flight = 0;
            if self.past_rounds.len() == LOSS_RATE_ROUNDS {
                self.past_rounds.pop_front();
            }
            self.past_rounds.push_back(round);
        }
        // The recent rate spans at least MIN_RATE_SPAN: over a 30 ms round, jitter's stalls and
        // the bursts that follow them swing the rate between a third and twice the capacity.
        self.rate
            .on_end_acks(now, self.mss_bytes, horizon.max(MIN_RATE_SPAN), app_limited);
        self.reread_the_drain(now);
        if !self.estimating_ssthresh {
            return;
        }
        // Only packets sent after the window reached the target can show a queue of ours:
        // before that we sent less than the estimate (a queue then is pacing bursts or
        // another flow's).
        let probing = self
            .reached_target_at
            .is_some_and(|t| self.frame_newest_sent > t);
        if queue_now && probing && !owned {
            // Start-up ends at the first queue: W ← min(W, pipe) drains the overshoot, and
            // congestion avoidance starts from the pipe, once a flight the window limited
            // measured it (see `DeliveryRate::window_limited_sampled`): a drain to a pipe
            // read across the application's pauses took the window to the minimum.
            let pipe_measured = self.rate.window_limited_sampled();
            if self.pipe_bytes().is_some() && pipe_measured {
                self.estimating_ssthresh = false;
                self.startup_ended_at = Some(now);
                self.drain_to_pipe(now);
            }
            return;
        }
        if let Some(bdp) = self.pipe_bytes() {
            // Target = estimated BDP = bottleneck rate × propagation RTT ([Caini2004] §3.3.1);
            // later rounds may only raise it (a paced first flight under-reads the bottleneck).
            let bdp = bdp.max(2 * self.mss_bytes);
            self.startup_target_bytes = Some(self.startup_target_bytes.map_or(bdp, |t| t.max(bdp)));
        }
    }

    /// A loss-detection batch (or ECN-CE when `lost_bytes == 0`) for packets up to one sent
    /// at `sent`.
    pub fn on_congestion_event(
        &mut self,
        now: Duration,
        sent: Duration,
        persistent: bool,
        lost_bytes: u64,
    ) {
        self.on_congestion_event_with_truth(now, sent, persistent, lost_bytes, None);
    }

    /// [`Self::on_congestion_event`], the batch's verdict given as `truth` where the caller
    /// knows why its packets were lost ([`HyblaConfig::loss_truth`](crate::HyblaConfig::loss_truth)):
    /// it replaces the classifier's, within the rules that take every loss as congestion.
    pub fn on_congestion_event_with_truth(
        &mut self,
        now: Duration,
        sent: Duration,
        persistent: bool,
        lost_bytes: u64,
        truth: Option<LossVerdict>,
    ) {
        self.loss_seen = true;
        if lost_bytes > 0 {
            self.last_loss_at = Some(now);
        }
        self.round_lost_bytes += lost_bytes;
        // ECN-CE (no bytes lost) is the bottleneck saying it is congested.
        let verdict = if lost_bytes == 0 {
            LossVerdict::Congestion
        } else {
            let base = self.base_rtt.get().unwrap_or(self.params.rtt0);
            let reading = self.queue.at_send_time(sent, base);
            // Counted only at a reading from its send time, as deliveries are: a burst loss
            // with no samples around it must not land at today's queue.
            if let Some(queue) = reading
                && self.params.loss_classifier == LossClassifier::LossByQueue
            {
                self.loss_by_queue.on_lost(now, queue, lost_bytes);
            }
            let queue = reading.unwrap_or(self.queue.delay());
            let in_a_row = self.loss_runs.on_lost(sent, lost_bytes);
            let seen = self
                .params
                .record_losses
                .then(|| self.loss_context(sent, queue, in_a_row));
            let verdict = self.classify(queue, persistent, in_a_row, truth);
            if self.params.loss_classifier == LossClassifier::LossByQueue
                && verdict == LossVerdict::Congestion
                && !persistent
            {
                self.note_low_queue_congestion(now, queue);
            }
            self.record_loss(sent, lost_bytes, verdict, seen.unwrap_or_default());
            verdict
        };
        if verdict == LossVerdict::Congestion {
            self.drain_reread = None;
        }
        // Careful Resume first: congestion during the jump is its Safe Retreat, and while it
        // sets the window a random loss changes nothing.
        if self.resume.is_some() {
            let command = match verdict {
                LossVerdict::Congestion => self
                    .resume
                    .as_mut()
                    .and_then(|resume| resume.on_congestion(now, lost_bytes == 0, persistent)),
                LossVerdict::Random => None,
            };
            if command.is_some() || self.resume_owns_window() {
                self.apply_resume(now, command);
                return;
            }
        }
        let was_starting_up = std::mem::replace(&mut self.estimating_ssthresh, false);
        if was_starting_up {
            self.startup_ended_at = Some(now);
        }
        if verdict == LossVerdict::Random {
            // Nothing to drain: the window stays, and no recovery period starts, so growth
            // goes on. The threshold ends slow start.
            self.ssthresh_bytes = self.cwnd_bytes;
            return;
        }
        // A packet sent in start-up, or in the round after it while its overshoot drains, met
        // start-up's own queue. If start-up ended at the first queue, its drain (W ← pipe)
        // has answered it already; if it ends with this loss, the drain is the answer.
        let base = self.base_rtt.get().unwrap_or(self.params.rtt0);
        let sent_in_startup =
            was_starting_up || self.startup_ended_at.is_some_and(|end| sent <= end + base);
        if self.params.growth == Growth::PipeAware && sent_in_startup && !persistent {
            if was_starting_up {
                self.drain_to_pipe(now);
            }
            return;
        }
        let in_this_recovery = self.recovery_start.is_some_and(|start| sent <= start);
        if !in_this_recovery {
            self.recovery_start = Some(now);
            // W ← β·W (Reno's halving, β = 0.5), once per recovery period (RFC 9002 §7.3.2);
            // alone on a path with jitter, no lower than the window the jitter needs. Next to
            // a competitor, the regrowth to this window competes too; a flow whose neighbours
            // get far more than it does cuts by Cubic's β only (`SMALLER_FLOW_REDUCTION`).
            let credibly_shared = self.competing() && self.competition_credible;
            self.competing_regrowth_to =
                (credibly_shared && !self.others_hold_more).then_some(self.cwnd_bytes);
            self.forget_the_last_yield();
            let factor = if credibly_shared && self.far_smaller() {
                self.params
                    .loss_reduction_factor
                    .max(SMALLER_FLOW_REDUCTION)
            } else {
                self.params.loss_reduction_factor
            };
            let halved = (self.cwnd_bytes as f64 * factor) as u64;
            let jitter_pipe = self.jitter_pipe_bytes(base).unwrap_or(0);
            let reduced = halved.max(jitter_pipe.min(self.cwnd_bytes));
            self.cwnd_bytes = reduced.max(self.minimum_window());
            self.ssthresh_bytes = self.cwnd_bytes;
            self.carry_bytes = 0.0;
            self.mark_reduced(now);
        }
        if persistent {
            self.cwnd_bytes = self.minimum_window();
            self.carry_bytes = 0.0;
        }
    }

    /// Start-up's end: W ← min(W, pipe), and congestion avoidance from there (BBR's drain,
    /// Hybla's ssthresh). Below ρ = [`NOISE_RULES_MAX_RHO`] the drain is read again two base
    /// RTTs later ([`Self::reread_the_drain`]).
    fn drain_to_pipe(&mut self, now: Duration) {
        if self.rho < NOISE_RULES_MAX_RHO {
            self.drain_reread = Some((now, self.cwnd_bytes));
        }
        let floor = self.minimum_window();
        if let Some(pipe) = self.pipe_bytes() {
            self.cwnd_bytes = self.cwnd_bytes.min(pipe.max(floor)).max(floor);
        }
        self.ssthresh_bytes = self.cwnd_bytes;
        self.carry_bytes = 0.0;
    }

    /// Two base RTTs after start-up's drain: W ← max(W, min(pipe, the window drained from)),
    /// unless a congestion verdict or another reduction came first. The delivery rate at the first queue lags the
    /// window by a round (start-up doubles it, and the round that filled the link is still
    /// being acknowledged); under jitter the first queue comes early, while the rate is far
    /// below the link's. Alone on the loss matrix's 20/2 Mbit/s, 30 ms path with 10 ms of
    /// mean jitter (0.1 % loss, seed 1), start-up drained from 214 kB to a 52 kB pipe, where
    /// two base RTTs later the flow measured 111 kB, and took 10 s to fill the link (7–9
    /// Mbit/s of 20): 77.6 → 81.9 % of the ceiling with the re-read. Only below ρ = 3, where
    /// the window regrows at most 9 segments per RTT: at 600 ms next to a flow that starts
    /// with it (the fairness matrix), the re-read doubled the overflow drops behind a 4-BDP
    /// drop-tail buffer (751 → 1 435) and took three NewReno cells further from the band.
    fn reread_the_drain(&mut self, now: Duration) {
        let Some((drained_at, drained_from)) = self.drain_reread else {
            return;
        };
        let base = self.base_rtt.get().unwrap_or(self.params.rtt0);
        if now < drained_at + 2 * base {
            return;
        }
        self.drain_reread = None;
        // Only at its time (no ACK frame for a round after it: the rate is stale), and not
        // where Careful Resume sets the window or a competitor shares the link.
        if now > drained_at + 3 * base || self.resume_owns_window() || self.competing() {
            return;
        }
        if let Some(pipe) = self.pipe_bytes() {
            let reread = pipe.min(drained_from);
            if reread > self.cwnd_bytes {
                self.cwnd_bytes = reread;
                self.ssthresh_bytes = reread;
            }
        }
    }

    /// What the bottleneck carries, bytes per second: the declared BDP over the base RTT when
    /// the path was declared, else the highest delivery rate over a round in the last
    /// 10 s (what the flow got when it had the link alone).
    pub fn capacity_bytes_per_s(&self) -> Option<f64> {
        let measured = self.rate.capacity_bytes_per_s();
        // Over the smallest RTT ever seen: the declared BDP is the propagation RTT's, and a
        // base RTT that crept up with a standing queue would shrink the capacity with it.
        let declared = self
            .params
            .declared_bdp_bytes
            .zip(self.smallest_rtt)
            .filter(|(_, rtt)| !rtt.is_zero())
            .map(|(bdp, rtt)| bdp as f64 / rtt.as_secs_f64());
        declared.or(measured)
    }

    /// Estimated pipe size: the windowed-max delivery rate × the base RTT, bytes.
    pub fn pipe_bytes(&self) -> Option<u64> {
        let rate = self.rate.max_rate_bytes_per_s()?;
        let base = self.base_rtt.get()?;
        Some((rate * base.as_secs_f64()) as u64)
    }
}
