//! The Hybla algorithm on plain numbers: bytes, `Duration`s since an epoch the caller picks.
//!
//! Notation of \[Caini2004\] (TCP Hybla, Caini & Firrincieli 2004): W is the congestion window in
//! segments (MSS), ρ = RTT / RTT0, γ the slow-start threshold. The per-ACK rules (eq. 9) are
//! applied with byte counting as in \[Cavallotti2024\] §4.2.3 (the picoquic implementation): every
//! acknowledged MSS counts as one ACK of eq. 9.

use std::time::Duration;

use crate::min_filter::{WindowedMax, WindowedMin};
use crate::queue::{HIGHEST_QUEUE_WINDOW, QueueMonitor};
use crate::rate::DeliveryRate;
use crate::resume::{
    CarefulResume, MIN_SAVED_WINDOW_IWS, ResumeCommand, ResumeParams, ResumePhase, ResumeReport,
    SavedPath,
};

/// Window growth per round in start-up once the window has reached the path estimate (the
/// declared or dispersion-measured BDP) without a queue showing: NewReno's doubling. A paced
/// flight measures nothing beyond its own rate, so this is how start-up keeps probing; a
/// doubling overshoots by at most ≈ 0.44 BDP before the queue signal returns, one RTT later.
pub const STARTUP_GAIN_PER_ROUND: f64 = 2.0;

/// Above this share of lost bytes in a round, losses count as congestion even with no queue
/// in sight (a policer drops without queueing). BBRv2 uses 2 %; random loss on satellite
/// links reaches 1–2 %, so the bar sits higher.
pub const RANDOM_LOSS_MAX_RATE: f64 = 0.05;

/// The loss share is measured over at least this many packets' worth of bytes: with 2 %
/// random loss, 200 packets hold 4 losses on average and more than 10 (5 %) one time in 300.
pub const LOSS_RATE_SAMPLE_PACKETS: u64 = 200;

/// ... and over at most this many rounds.
pub const LOSS_RATE_ROUNDS: usize = 16;

/// The flow shares the bottleneck when, with a queue standing, it gets less than this share
/// of the capacity it has measured: someone else's packets are in the queue.
pub const COMPETITION_RATE_SHARE: f64 = 0.85;

/// When the base RTT needs refreshing, the window drops for a round to this share of the pipe
/// of the smallest recent RTT: the flow's own queue drains (a window at or below the pipe holds
/// no queue) while the link stays busy, and the samples see the path.
pub const BASE_REFRESH_FRACTION: f64 = 0.99;

/// The reference for an empty path: the smallest RTT of this long. Longer than the base-RTT
/// window, so that a base RTT that crept up is caught; a path that got longer for good (a LEO
/// handover to a farther satellite) only costs one refresh per half base-RTT window.
pub const PATH_RTT_WINDOW: Duration = Duration::from_secs(60);

/// The other flows' growth is measured over spans at least this long (and two base RTTs).
pub const GROWTH_SPAN: Duration = Duration::from_secs(2);

/// The delivery rate the flow compares with the capacity (saturation, competition, the drain
/// and refresh targets) spans at least a round and at least this long.
pub const MIN_RATE_SPAN: Duration = Duration::from_millis(1000);

/// What the flow saves for the next connection (RFC 9959 §3.1, `saved_cwnd`) is the largest
/// window-limited delivery of a round trip within this long before the connection ends: the
/// path as it was lately, not at a capacity it had before a handover.
pub const OBSERVATION_WINDOW: Duration = Duration::from_secs(10);

/// IPv4 + UDP header bytes: a declared BDP counts IP bytes, the window counts UDP payload.
pub const IP_UDP_HEADER_BYTES: u64 = 28;

/// Above the pipe, with no queue, a flow getting less than this share of the capacity is
/// clearly short of it (jitter or thinned ACKs lengthen its RTT): it probes at ρ per RTT.
pub const SHORT_RATE_SHARE: f64 = 0.9;

/// The link is full when the flow gets at least this share of the capacity.
pub const SATURATION_RATE_SHARE: f64 = 0.95;

/// How long the flow keeps behaving as one of several after the last sign of competition, at
/// least: a competitor's sawtooth empties a shallow queue for a few RTTs after each of its
/// losses, and regrowing at Hybla's speed into that gap would take the competitor's share;
/// and after each of its own reductions the flow needs two rounds to see the competitor
/// again, in which an alone flow's drain would cut its window to its current share (at
/// 600 ms against Cubic, a hold of 4 RTTs left Hybla a quarter of the link).
pub const COMPETITION_HOLD: Duration = Duration::from_secs(5);

/// ... and at least this many base RTTs.
pub const COMPETITION_HOLD_RTTS: u32 = 8;

/// Upper bound of the window, bytes: far beyond any path (2⁴⁸ B = 256 TiB), low enough that
/// no later arithmetic overflows even at ρ = 40 and beyond.
pub const MAX_WINDOW_BYTES: u64 = 1 << 48;

/// How the controller took a loss: the answer its loss classifier gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LossVerdict {
    /// The bottleneck is overloaded: the window is reduced (or already was, within the
    /// current recovery period or by start-up's drain).
    Congestion,
    /// A random (link) loss: the window stays.
    Random,
}

/// Loss-detection batches and their bytes, by verdict, since the connection began.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LossTally {
    /// Batches taken as congestion.
    pub congestion_events: u64,
    /// Bytes in those batches.
    pub congestion_bytes: u64,
    /// Batches taken as random loss.
    pub random_events: u64,
    /// Bytes in those batches.
    pub random_bytes: u64,
}

/// One loss-detection batch as the controller took it. Built by the controller only; it may
/// gain fields (what the classifier saw), hence `#[non_exhaustive]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LossRecord {
    /// Send time of the newest packet in the batch (quinn reports no other), since the
    /// controller's epoch.
    pub sent: Duration,
    /// Bytes declared lost in the batch.
    pub lost_bytes: u64,
    /// How it was taken.
    pub verdict: LossVerdict,
}

/// How the initial slow-start threshold is chosen. More ways may come (`#[non_exhaustive]`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum InitialSsthresh {
    /// Estimate the path's bandwidth-delay product from the first flight (\[Caini2004\] §3.3.1);
    /// slow-start growth waits for the estimate (at most one round, then plain slow start).
    Estimate,
    /// A fixed number of bytes (the thesis's INITIAL_SSTHRESH, e.g. 750 KB).
    Bytes(u64),
    /// γ segments, multiplied by ρ once ρ is known (\[Caini2004\] eq. 6: the threshold is ρ·γ).
    Segments(f64),
    /// No threshold: slow start until the first loss (NewReno's default).
    Infinite,
}

/// How a flow that shares its bottleneck grows its window each RTT. More rules may come
/// (`#[non_exhaustive]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompetingGrowth {
    /// As fast as the other flows grow: their window growth, measured from how fast the shared
    /// queue fills beyond what this flow adds to it, and at least one segment per RTT. Two
    /// flows that add the same bytes per second to a shared queue and halve on the same
    /// losses converge to the same window, whatever algorithm the other runs (a NewReno at
    /// 600 ms adds a segment per 600 ms, a Cubic tens).
    Matched,
    /// One segment per RTT: NewReno's additive increase.
    Reno,
    /// ρ segments per RTT: a NewReno at RTT0 filling a queue, seen from our RTT.
    Rho,
    /// ρ_q² segments per RTT with ρ_q = (base RTT + queue) / (RTT0 + queue): \[Caini2004\]'s
    /// rule with the RTTs the two flows actually have when the queue they share holds q.
    QueueRho,
}

/// Which growth rules apply. More may come (`#[non_exhaustive]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Growth {
    /// \[Caini2004\] eq. 9 exactly: +(2^ρ − 1) per MSS in slow start, +ρ²/W per MSS in
    /// congestion avoidance.
    Seed,
    /// satquic's extension: \[Caini2004\]'s growth where the path has room, a loss classifier
    /// that keeps random loss apart from congestion, and NewReno's manners where the queue is
    /// shared.
    ///
    /// Growth: ρ² per RTT (eq. 9) while no queue stands at the bottleneck (the window is below
    /// the pipe). With a queue of its own and nobody else's (the flow gets about the capacity
    /// it measured), the window holds: past the pipe, more window only lengthens the queue,
    /// and a flow that keeps the queue short sees its random losses at an empty queue. With
    /// somebody else's packets in the queue (the flow gets clearly less than the capacity) the
    /// flow competes: it grows by the `competing` rule of [`CompetingGrowth`] per RTT, whether
    /// the queue stands or a competitor's loss just emptied it.
    ///
    /// Losses (the crate's `queue` module has the rule): congestion when the queue at the lost packet's
    /// send time was in the upper part of what this path's queue has been seen to hold, or the
    /// loss share of the last two rounds exceeds [`RANDOM_LOSS_MAX_RATE`]; random otherwise. A
    /// random loss keeps the window and opens no recovery period (at 1 % loss a 600 ms window
    /// of hundreds of packets has losses every round; halving per round would collapse it to
    /// the Mathis bound). A congestion loss halves the window, once per recovery period, as
    /// NewReno does: where the flow is alone, Hybla's ρ² regrowth refills the pipe within a few
    /// RTTs, and where it is not, the same decrease as its neighbours' keeps the shares fair.
    PipeAware,
}

/// Settings of one Hybla instance. Start from [`HyblaParams::default`] (or
/// [`HyblaConfig::params`](crate::HyblaConfig::params)) and change fields: new settings come
/// with defaults that keep today's behaviour, so the struct is `#[non_exhaustive]`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HyblaParams {
    /// Reference RTT whose growth rate Hybla reproduces (\[Caini2004\] §7.1: 25 ms).
    pub rtt0: Duration,
    /// Window before ρ is known, bytes; multiplied by ρ at the first RTT sample.
    pub initial_window_bytes: u64,
    /// Smallest window in packets before the ρ scaling (RFC 9002: 2).
    pub minimum_window_packets: u64,
    /// Multiplicative decrease on congestion (0.5 halves).
    pub loss_reduction_factor: f64,
    /// Initial slow-start threshold.
    pub initial_ssthresh: InitialSsthresh,
    /// Growth rules.
    pub growth: Growth,
    /// Window of the minimum-RTT filter: how long after a path change ρ follows a longer path.
    pub base_rtt_window: Duration,
    /// Window of the delivery-rate maximum behind the pipe estimate: how long a rate drop
    /// (a capacity schedule step, a new competitor) takes to show.
    pub rate_window: Duration,
    /// Bandwidth-delay product of the path as declared by whoever configured it (bytes), if
    /// known: the start-up target under [`InitialSsthresh::Estimate`], as the thesis's fixed
    /// INITIAL_SSTHRESH is, without waiting for a measurement. Needed where the measurement
    /// cannot work: with ACK thinning, one ACK covers a whole 10-packet pacing burst, so
    /// ACK spacing no longer shows the bottleneck's dispersion.
    pub declared_bdp_bytes: Option<u64>,
    /// Keep a [`LossRecord`] of every loss batch (an instrument: the lab matches them
    /// against the path's ground truth). Off by default: the log grows with every loss.
    pub record_losses: bool,
    /// How the window grows while the bottleneck is shared ([`Growth::PipeAware`]).
    pub competing_growth: CompetingGrowth,
    /// Resume from a previous connection's measurement of the path (RFC 9959 Careful Resume;
    /// see the `resume` module). `None`: every connection starts from scratch.
    pub careful_resume: Option<ResumeParams>,
}

impl Default for HyblaParams {
    fn default() -> Self {
        Self {
            rtt0: Duration::from_millis(25),
            initial_window_bytes: 14_720,
            minimum_window_packets: 2,
            loss_reduction_factor: 0.5,
            initial_ssthresh: InitialSsthresh::Estimate,
            growth: Growth::PipeAware,
            base_rtt_window: Duration::from_secs(10),
            rate_window: Duration::from_secs(2),
            declared_bdp_bytes: None,
            record_losses: false,
            competing_growth: CompetingGrowth::Matched,
            careful_resume: None,
        }
    }
}

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
    /// (delivered, lost) bytes of the last [`LOSS_RATE_ROUNDS`] rounds, newest last.
    past_rounds: std::collections::VecDeque<(u64, u64)>,
    /// When start-up ended (its drain already took the window to the pipe).
    startup_ended_at: Option<Duration>,
    /// When the window first reached the start-up target.
    reached_target_at: Option<Duration>,
    /// The bottleneck queue as the RTT samples show it; the loss classifier.
    queue: QueueMonitor,
    /// Until when the flow behaves as one of several sharing the bottleneck.
    competing_until: Option<Duration>,
    /// When the window was last reduced (a congestion loss, or shedding the flow's own
    /// excess queue).
    reduced_at: Option<Duration>,
    /// Since when a queue has stood while the flow got clearly less than the capacity.
    competition_seen_since: Option<Duration>,
    /// When the flow last drained its own excess queue.
    drained_at: Option<Duration>,
    /// Where the current measurement of the other flows' growth started: (time, queue delay,
    /// window).
    growth_anchor: Option<(Duration, Duration, u64)>,
    /// The other flows' window growth, bytes per second (averaged over measurements).
    others_growth_bytes_per_s: f64,
    /// When a queue of at least the flow's budget was last seen.
    saturated_at: Option<Duration>,
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
            resume: params
                .careful_resume
                .map(|resume| CarefulResume::new(resume, cwnd_bytes, mss_bytes)),
            observed_window: WindowedMax::new(OBSERVATION_WINDOW),
            observed_rtt: None,
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
            round_delivered_bytes: 0,
            round_lost_bytes: 0,
            round_start: Duration::ZERO,
            past_rounds: std::collections::VecDeque::with_capacity(LOSS_RATE_ROUNDS + 1),
            queue: QueueMonitor::new(),
            competing_until: None,
            reduced_at: None,
            competition_seen_since: None,
            drained_at: None,
            growth_anchor: None,
            others_growth_bytes_per_s: 0.0,
            saturated_at: None,
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

    fn record_loss(&mut self, sent: Duration, lost_bytes: u64, verdict: LossVerdict) {
        let tally = &mut self.loss_tally;
        match verdict {
            LossVerdict::Congestion => {
                tally.congestion_events += 1;
                tally.congestion_bytes += lost_bytes;
            }
            LossVerdict::Random => {
                tally.random_events += 1;
                tally.random_bytes += lost_bytes;
            }
        }
        if self.params.record_losses {
            self.loss_records.push(LossRecord {
                sent,
                lost_bytes,
                verdict,
            });
        }
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
    /// (RFC 9959 §3.1): the largest window-limited delivery per round trip of the last
    /// 10 s, `OBSERVATION_WINDOW` (delivery rate × base RTT, so a slow-start overshoot does not
    /// count, §4.1) and the base RTT. `None` while it is below four initial windows (not worth
    /// resuming, §3.1) or the connection never filled its window.
    pub fn observation(&self) -> Option<SavedPath> {
        let window = self.observed_window.get()? as u64;
        let rtt = self.observed_rtt?;
        (window >= MIN_SAVED_WINDOW_IWS * self.params.initial_window_bytes).then_some(SavedPath {
            saved_cwnd_bytes: window,
            saved_rtt: rtt,
        })
    }

    fn apply_resume(&mut self, now: Duration, command: Option<ResumeCommand>) {
        let Some(command) = command else {
            return;
        };
        self.carry_bytes = 0.0;
        match command {
            ResumeCommand::Jump(bytes) | ResumeCommand::SetWindow(bytes) => {
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
                self.reduced_at = Some(now);
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

    /// Datagrams of `bytes` were sent at `now` (Careful Resume counts its flight from them).
    pub fn on_sent(&mut self, now: Duration, bytes: u64) {
        let command = self
            .resume
            .as_mut()
            .and_then(|resume| resume.on_sent(now, bytes, self.cwnd_bytes));
        self.apply_resume(now, command);
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
        self.round_delivered_bytes += bytes;
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
        self.end_ack_frame(now);
        let command = self.resume.as_mut().and_then(|resume| {
            resume.on_end_acks(now, in_flight_bytes, app_limited, self.cwnd_bytes)
        });
        self.apply_resume(now, command);
        if !app_limited
            && !self.resume_owns_window()
            && let Some(pipe) = self.recent_pipe_bytes()
        {
            let sample = pipe.min(self.cwnd_bytes);
            self.observed_window.update(now, sample as f64);
            self.observed_rtt = self.base_rtt.get();
        }
    }

    fn end_ack_frame(&mut self, now: Duration) {
        let owned = self.resume_owns_window();
        let mut queue_now = false;
        if let (Some(sample), Some(base)) = (self.frame_min_rtt.take(), self.base_rtt.get()) {
            let packet_time = self
                .capacity_bytes_per_s()
                .filter(|c| *c > 0.0)
                .map_or(Duration::ZERO, |c| {
                    Duration::from_secs_f64(self.mss_bytes as f64 / c)
                });
            let packets = std::mem::take(&mut self.frame_bytes) as f64 / self.mss_bytes as f64;
            self.packets_per_frame += (packets - self.packets_per_frame) / 8.0;
            // The flow's own queue: a couple of packets, plus the burst each ACK frame releases
            // (one ACK per k + 1 packets on a thinned return link), which queues behind itself.
            let own_queue = packet_time
                .mul_f64(f64::from(crate::queue::BUDGET_PACKETS) + self.packets_per_frame.max(0.0));
            self.queue
                .on_frame(now, self.frame_min_sent, sample, base, own_queue);
            queue_now = self.queue.delay() >= self.queue.budget();
            if queue_now {
                self.saturated_at = Some(now);
            }
            // The path is seen empty when a sample comes within half a budget of the smallest
            // RTT of the last minute, not of the base RTT: a base RTT that has crept up with a
            // standing queue would make the queue look empty.
            self.path_rtt.update(now, sample);
            if self
                .path_rtt
                .get()
                .is_some_and(|path| sample <= path + self.queue.budget() / 2)
            {
                self.path_seen_empty_at = Some(now);
            }
            if self.params.growth == Growth::PipeAware && !self.estimating_ssthresh && !owned {
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
            if self.past_rounds.len() == LOSS_RATE_ROUNDS {
                self.past_rounds.pop_front();
            }
            self.past_rounds.push_back(round);
        }
        // The recent rate spans at least MIN_RATE_SPAN: over a 30 ms round, jitter's stalls and
        // the bursts that follow them swing the rate between a third and twice the capacity.
        self.rate
            .on_end_acks(now, self.mss_bytes, horizon.max(MIN_RATE_SPAN));
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
            // congestion avoidance starts from the pipe.
            if self.pipe_bytes().is_some() {
                self.estimating_ssthresh = false;
                self.startup_ended_at = Some(now);
                self.drain_to_pipe();
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
        self.loss_seen = true;
        self.round_lost_bytes += lost_bytes;
        // ECN-CE (no bytes lost) is the bottleneck saying it is congested.
        let verdict = if lost_bytes == 0 {
            LossVerdict::Congestion
        } else {
            let verdict = self.classify(sent, persistent);
            self.record_loss(sent, lost_bytes, verdict);
            verdict
        };
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
                self.drain_to_pipe();
            }
            return;
        }
        let in_this_recovery = self.recovery_start.is_some_and(|start| sent <= start);
        if !in_this_recovery {
            self.recovery_start = Some(now);
            // W ← β·W (Reno's halving, β = 0.5), once per recovery period (RFC 9002 §7.3.2).
            let reduced = (self.cwnd_bytes as f64 * self.params.loss_reduction_factor) as u64;
            self.cwnd_bytes = reduced.max(self.minimum_window());
            self.ssthresh_bytes = self.cwnd_bytes;
            self.carry_bytes = 0.0;
            self.reduced_at = Some(now);
        }
        if persistent {
            self.cwnd_bytes = self.minimum_window();
            self.carry_bytes = 0.0;
        }
    }

    /// How a loss batch whose newest packet was sent at `sent` is taken.
    fn classify(&self, sent: Duration, persistent: bool) -> LossVerdict {
        // ρ = 1 (RTT ≤ RTT0): Hybla is NewReno ([Caini2004] §3.1), and NewReno takes every loss
        // for congestion. The random-loss extension is for paths that Hybla compensates.
        if self.params.growth == Growth::Seed || persistent || self.rho <= 1.0 {
            return LossVerdict::Congestion;
        }
        // A loss share above what random loss on a satellite link reaches: a policer, or an
        // overflow too short for the RTT samples to show.
        if self.loss_rate() > RANDOM_LOSS_MAX_RATE {
            return LossVerdict::Congestion;
        }
        let base = self.base_rtt.get().unwrap_or(self.params.rtt0);
        let queue = self
            .queue
            .at_send_time(sent, base)
            .unwrap_or(self.queue.delay());
        if queue >= self.queue.congestion_threshold(self.competing()) {
            LossVerdict::Congestion
        } else {
            LossVerdict::Random
        }
    }

    /// Start-up's end: W ← min(W, pipe), and congestion avoidance from there (BBR's drain,
    /// Hybla's ssthresh).
    fn drain_to_pipe(&mut self) {
        let floor = self.minimum_window();
        if let Some(pipe) = self.pipe_bytes() {
            self.cwnd_bytes = self.cwnd_bytes.min(pipe.max(floor)).max(floor);
        }
        self.ssthresh_bytes = self.cwnd_bytes;
        self.carry_bytes = 0.0;
    }

    /// Alone, the flow's own queue (its budget) never empties by itself, and a queue that
    /// stands longer than the base-RTT filter's window passes for propagation delay: the base
    /// RTT would creep up by a budget per window, and the queue with it. Half a window after
    /// the path was last seen empty, the window drops below the pipe for a round
    /// (W ← [`BASE_REFRESH_FRACTION`] × delivery rate × the smallest RTT of the last
    /// [`PATH_RTT_WINDOW`]), as BBR's ProbeRTT does, and Hybla's growth refills it within a
    /// few RTTs.
    fn refresh_base_rtt(&mut self, now: Duration, base: Duration) {
        let since = *self.path_seen_empty_at.get_or_insert(now);
        if now < since + self.params.base_rtt_window / 2
            || self
                .reduced_at
                .is_some_and(|t| now < t + base + self.queue.delay())
        {
            return;
        }
        let Some(rate) = self.rate.recent_rate_bytes_per_s() else {
            return;
        };
        // Below the pipe of the smallest RTT of the last minute, so that the flow's queue
        // drains within the round even if the base RTT has crept up (a window at the pipe
        // keeps a queue where it is).
        let path = self.path_rtt.get().unwrap_or(base).min(base);
        let target = (rate * path.mul_f64(BASE_REFRESH_FRACTION).as_secs_f64()) as u64;
        if target < self.cwnd_bytes {
            // The threshold too: the refill is congestion avoidance's ρ² below the pipe, not a
            // slow start that would overshoot back into the queue within the round.
            self.cwnd_bytes = target.max(self.minimum_window());
            self.ssthresh_bytes = self.cwnd_bytes;
            self.carry_bytes = 0.0;
            self.reduced_at = Some(now);
        }
        self.path_seen_empty_at = Some(now);
    }

    /// The bottleneck is shared when, for a whole round, a queue stands while the flow gets
    /// clearly less than the capacity it measured. Not within a round of its own reduction:
    /// its rate falls at once while its own queue takes that long to drain.
    fn detect_competition(&mut self, now: Duration, base: Duration) {
        let settled = self
            .reduced_at
            .is_none_or(|t| now >= t + base + self.queue.delay());
        let standing = self.queue.standing() >= 2 * self.queue.budget();
        // The flow drained its own excess a round ago, yet the queue still stands: it is not
        // the flow's (a competitor that fills the queue may leave the flow most of the rate).
        let round = base + self.queue.delay();
        let outlived_a_drain = self
            .drained_at
            .is_some_and(|t| now >= t + round && now <= t + 3 * round);
        if !(standing && settled && (self.shares_the_bottleneck() || outlived_a_drain)) {
            self.competition_seen_since = None;
            return;
        }
        let since = *self.competition_seen_since.get_or_insert(now);
        if now >= since + base {
            let hold = COMPETITION_HOLD.max(base * COMPETITION_HOLD_RTTS);
            self.competing_until = Some(now + hold);
        }
    }

    /// The other flows' window growth while the bottleneck is shared: a queue fills by what
    /// every flow adds to its window (the link is full), so the queue's rise since its lowest
    /// point after the last reduction × capacity − this flow's own window growth over the same
    /// time is theirs. Averaged from the trough, not over short spans: Cubic adds most of its
    /// window in the seconds after its reduction and little on its plateau, and what matches
    /// it is its mean growth over the cycle. Measured over at least [`GROWTH_SPAN`] (a NewReno
    /// at 600 ms adds 1.2 ms of queue per second at 10 Mbit/s).
    fn measure_others_growth(&mut self, now: Duration, base: Duration) {
        let shared_queue = self.competing() && self.queue.standing() >= self.queue.budget();
        if !shared_queue {
            self.growth_anchor = None;
            // The estimate outlives a competitor's sawtooth (its loss empties the queue for a
            // few rounds), not a competitor that left.
            if self
                .competing_until
                .is_none_or(|until| now > until + HIGHEST_QUEUE_WINDOW)
            {
                self.others_growth_bytes_per_s = 0.0;
            }
            return;
        }
        // The queue over the smallest RTT of the last minute: a competitor that never lets the
        // queue empty (Cubic's 0.7 on a 1-BDP buffer) lifts the 10 s base RTT, and each step
        // of it would read as the queue falling.
        let q1 = self.queue.delay() + base.saturating_sub(self.path_rtt.get().unwrap_or(base));
        // A new trough: after this flow's own reduction (its window fell, the queue with it)
        // or wherever the queue falls below the last one (a competitor reduced).
        let fresh = self
            .growth_anchor
            .is_none_or(|(t0, q0, _)| self.reduced_at.is_some_and(|r| r >= t0) || q1 <= q0);
        if fresh {
            self.growth_anchor = Some((now, q1, self.cwnd_bytes));
            return;
        }
        let Some((t0, q0, w0)) = self.growth_anchor else {
            return;
        };
        let span = now - t0;
        if span < GROWTH_SPAN.max(2 * base) {
            return;
        }
        let Some(capacity) = self.capacity_bytes_per_s() else {
            return;
        };
        let total = (q1 - q0).as_secs_f64() * capacity / span.as_secs_f64();
        let own = self.cwnd_bytes.saturating_sub(w0) as f64 / span.as_secs_f64();
        self.others_growth_bytes_per_s = (total - own).max(0.0);
    }

    /// Alone, a queue beyond twice the flow's budget is the flow's own excess (a capacity drop,
    /// an overshoot): take it out of the window at once, W ← delivery rate × (base RTT +
    /// budget), at most once per RTT. A queue left standing would outlast the base-RTT filter
    /// and pass for propagation delay.
    fn drain_own_queue(&mut self, now: Duration, base: Duration) {
        // The standing reading is the smallest of a whole round: a queue that lasts it keeps
        // the link busy, whether or not the round's delivery rate reached the capacity.
        if self.estimating_ssthresh || self.queue.standing() < 2 * self.queue.budget() {
            self.excess_since = None;
            return;
        }
        // Only a queue that stands for a round: the pacer runs a quarter faster than the
        // window allows, so a window that regrows at once queues its excess for a moment.
        let since = *self.excess_since.get_or_insert(now);
        if now < since + base {
            return;
        }
        let round = base + self.queue.delay();
        if self.reduced_at.is_some_and(|t| now < t + round) {
            return;
        }
        // A queue that outlives a drain is not the flow's own: leave the rounds after a drain
        // to competition detection, or the flow drains again as soon as it settles and
        // shrinks to its current share of a queue somebody else keeps full.
        if self.drained_at.is_some_and(|t| now < t + 3 * round) {
            return;
        }
        let Some(rate) = self.rate.recent_rate_bytes_per_s() else {
            return;
        };
        let target = (rate * (base + self.queue.budget()).as_secs_f64()) as u64;
        if target < self.cwnd_bytes {
            self.cwnd_bytes = target.max(self.minimum_window());
            self.ssthresh_bytes = self.cwnd_bytes;
            self.carry_bytes = 0.0;
            self.reduced_at = Some(now);
            self.drained_at = Some(now);
        }
    }

    /// Whether the flow gets (nearly) all the capacity and a queue was seen within the rate
    /// window: the link is full, so more window only makes queue.
    fn saturated(&self) -> bool {
        let queue_seen = self
            .saturated_at
            .is_some_and(|t| self.now.saturating_sub(t) <= self.params.rate_window);
        queue_seen
            && self
                .rate_share()
                .is_some_and(|share| share >= SATURATION_RATE_SHARE)
    }

    /// The last round's delivery rate over the capacity.
    fn rate_share(&self) -> Option<f64> {
        let (recent, capacity) = (
            self.rate.recent_rate_bytes_per_s()?,
            self.capacity_bytes_per_s()?,
        );
        (capacity > 0.0).then(|| recent / capacity)
    }

    /// Whether the flow gets clearly less than the capacity it measured: with a queue
    /// standing, the rest of the capacity goes to somebody else's packets.
    fn shares_the_bottleneck(&self) -> bool {
        self.rate_share()
            .is_some_and(|share| share < COMPETITION_RATE_SHARE)
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

    fn update_rho(&mut self) {
        let Some(base) = self.base_rtt.get() else {
            return;
        };
        // ρ = RTT / RTT0 (eq. 5), never below 1 (§3.1: fast connections keep standard rules).
        let rho = (base.as_secs_f64() / self.params.rtt0.as_secs_f64()).max(1.0);
        let first = !self.rho_known;
        self.rho = rho;
        self.rho_known = true;
        if first {
            // Initial window and threshold scale with ρ ([Caini2004] §3.1).
            if !self.loss_seen {
                let scaled = (self.params.initial_window_bytes as f64 * rho) as u64;
                self.cwnd_bytes = self.cwnd_bytes.max(scaled).min(MAX_WINDOW_BYTES);
            }
            if let InitialSsthresh::Segments(g) = self.params.initial_ssthresh {
                self.ssthresh_bytes = (g * rho * self.mss_bytes as f64) as u64;
            }
        }
        self.cwnd_bytes = self.cwnd_bytes.max(self.minimum_window());
    }

    /// Share of lost bytes over the current round and as many past ones as it takes to count
    /// [`LOSS_RATE_SAMPLE_PACKETS`] (at least one, at most [`LOSS_RATE_ROUNDS`]): on a 30 ms
    /// path two rounds hold 50 packets, and three random losses in them would read as 6 %.
    fn loss_rate(&self) -> f64 {
        let sample = LOSS_RATE_SAMPLE_PACKETS * self.mss_bytes;
        let (mut delivered, mut lost) = (self.round_delivered_bytes, self.round_lost_bytes);
        for (i, &(d, l)) in self.past_rounds.iter().rev().enumerate() {
            if i > 0 && delivered + lost >= sample {
                break;
            }
            delivered += d;
            lost += l;
        }
        let total = delivered + lost;
        if total == 0 {
            0.0
        } else {
            lost as f64 / total as f64
        }
    }

    /// What the flow got in the last round trip: recent delivery rate × base RTT, bytes.
    pub fn recent_pipe_bytes(&self) -> Option<u64> {
        let rate = self.rate.recent_rate_bytes_per_s()?;
        let base = self.base_rtt.get()?;
        Some((rate * base.as_secs_f64()) as u64)
    }

    /// Estimated pipe size: the windowed-max delivery rate × the base RTT, bytes.
    pub fn pipe_bytes(&self) -> Option<u64> {
        let rate = self.rate.max_rate_bytes_per_s()?;
        let base = self.base_rtt.get()?;
        Some((rate * base.as_secs_f64()) as u64)
    }

    fn apply(&mut self, increment_bytes: f64) {
        // Whole bytes now, the fraction carried ([Cavallotti2024] §4.2.3).
        let total = increment_bytes + self.carry_bytes;
        let whole = total.floor();
        self.carry_bytes = total - whole;
        let whole = whole.min(MAX_WINDOW_BYTES as f64) as u64;
        self.cwnd_bytes = self.cwnd_bytes.saturating_add(whole).min(MAX_WINDOW_BYTES);
    }

    /// Congestion-avoidance increment for `bytes` acknowledged: W += ρ²/W per MSS (eq. 9),
    /// i.e. ρ²·MSS·bytes/cwnd in bytes; with `PipeAware`, nothing while a queue of the flow's
    /// own stands, and the [`CompetingGrowth`] rule while the bottleneck is shared.
    fn ca_increment(&self, rho: f64, bytes: f64) -> f64 {
        let queue = self.queue.delay() >= self.queue.budget();
        let pipe = self.growth_pipe_bytes();
        let per_rtt_segments = match self.params.growth {
            Growth::Seed => rho * rho,
            Growth::PipeAware if self.competing() => self.competing_segments_per_rtt(),
            // A queue of the flow's own on a full link: more window only lengthens it.
            Growth::PipeAware if self.saturated() && queue => 0.0,
            // Full, or a queue reading on a link that is not full (jitter, a path longer than
            // the base RTT remembers): one segment per RTT. The queue shows a round late, so
            // the flow overshoots by a segment, not by ρ² (a whole BDP at ρ = 24).
            Growth::PipeAware if self.saturated() || queue => 1.0,
            // Below the pipe at Hybla's speed, but not past it in one go.
            Growth::PipeAware if pipe.is_some_and(|p| self.cwnd_bytes < p) => {
                let room = pipe.map_or(0, |p| p - self.cwnd_bytes) as f64;
                let increment = rho * rho * self.mss_bytes as f64 * bytes / self.cwnd_bytes as f64;
                return increment.min(room);
            }
            // Above the pipe, no queue, and clearly short of the capacity (jitter or ACK
            // thinning make the RTT longer than the base): the reference NewReno's
            // queue-filling pace, ρ per RTT; nearly full, one segment.
            Growth::PipeAware if pipe.is_some() => {
                if self
                    .rate_share()
                    .is_some_and(|share| share < SHORT_RATE_SHARE)
                {
                    rho
                } else {
                    1.0
                }
            }
            Growth::PipeAware => rho * rho,
        };
        per_rtt_segments * self.mss_bytes as f64 * bytes / self.cwnd_bytes as f64
    }

    /// The pipe that bounds Hybla's ρ² growth: the declared capacity × base RTT, less the
    /// share of a packet that is IP/UDP headers (the declaration counts IP bytes, the window
    /// UDP payload); else the measured pipe ([`Self::pipe_bytes`]: a burst of the pacer
    /// crosses the bottleneck back to back and measures it, but jitter's bunched deliveries
    /// and thinned ACKs blur the measurement).
    fn growth_pipe_bytes(&self) -> Option<u64> {
        let declared = self
            .params
            .declared_bdp_bytes
            .zip(self.base_rtt.get())
            .zip(self.capacity_bytes_per_s())
            .map(|((_, base), capacity)| {
                let payload_share =
                    self.mss_bytes as f64 / (self.mss_bytes + IP_UDP_HEADER_BYTES) as f64;
                (payload_share * capacity * base.as_secs_f64()) as u64
            });
        declared.or_else(|| self.pipe_bytes())
    }

    /// Segments per RTT while the bottleneck is shared.
    fn competing_segments_per_rtt(&self) -> f64 {
        match self.params.competing_growth {
            CompetingGrowth::Matched => {
                let rtt = self.base_rtt.get().unwrap_or(self.params.rtt0) + self.queue.delay();
                let matched =
                    self.others_growth_bytes_per_s * rtt.as_secs_f64() / self.mss_bytes as f64;
                matched.clamp(1.0, self.rho * self.rho)
            }
            CompetingGrowth::Reno => 1.0,
            CompetingGrowth::Rho => self.rho,
            CompetingGrowth::QueueRho => {
                let base = self.base_rtt.get().unwrap_or(self.params.rtt0);
                let queue = self.queue.delay();
                let rho = ((base + queue).as_secs_f64() / (self.params.rtt0 + queue).as_secs_f64())
                    .max(1.0);
                rho * rho
            }
        }
    }

    /// Start-up under [`InitialSsthresh::Estimate`]: Hybla's slow start up to the target (the
    /// declared or measured BDP), then [`STARTUP_GAIN_PER_ROUND`] per round until a queue
    /// shows. Without a target no growth: at ρ = 20 one slow-start ACK would add 2²⁰
    /// segments (\[Cavallotti2024\] §5.3).
    fn grow_in_startup(&mut self, rho: f64, bytes: u64) {
        let Some(target) = self.startup_target_bytes else {
            return;
        };
        let hybla_per_byte = 2f64.powf(rho) - 1.0;
        let probe_per_byte = (STARTUP_GAIN_PER_ROUND - 1.0).min(hybla_per_byte);
        let mut bytes = bytes as f64;
        if self.cwnd_bytes < target {
            // W += 2^ρ − 1 per MSS acknowledged, up to the target; the rest probes.
            let room = (target - self.cwnd_bytes) as f64 - self.carry_bytes;
            let hybla_bytes = (room.max(0.0) / hybla_per_byte).min(bytes);
            self.apply(hybla_bytes * hybla_per_byte);
            bytes -= hybla_bytes;
            if self.cwnd_bytes < target {
                return;
            }
        }
        if self.reached_target_at.is_none() {
            self.reached_target_at = Some(self.now);
        }
        self.apply(bytes * probe_per_byte);
    }

    fn grow(&mut self, bytes: u64) {
        match self.resume_phase() {
            // RFC 9959 §3.3 and §3.5: the window does not grow in these phases.
            Some(ResumePhase::Unvalidated | ResumePhase::SafeRetreat) => return,
            // §3.4 (Updating CWND): slow start, one byte per byte acknowledged, whatever ρ:
            // Hybla's 2^ρ − 1 would double the jump before it is validated. And none while a
            // queue of twice the flow's budget shows (Hybla's start-up ends at one budget;
            // here growth only holds): the jump already fills the path, and doubling it
            // would overflow a buffer that held the jump.
            Some(ResumePhase::Validating) => {
                if self.queue.delay() < 2 * self.queue.budget() {
                    self.apply(bytes as f64);
                }
                return;
            }
            _ => {}
        }
        let rho = self.rho;
        if self.phase() == Phase::CongestionAvoidance {
            let increment = self.ca_increment(rho, bytes as f64);
            self.apply(increment);
            return;
        }
        if self.estimating_ssthresh {
            self.grow_in_startup(rho, bytes);
            return;
        }
        // Slow start: W += 2^ρ − 1 per MSS acknowledged (eq. 9), in bytes.
        let per_byte = 2f64.powf(rho) - 1.0;
        let increment = per_byte * bytes as f64;
        let room = (self.ssthresh_bytes - self.cwnd_bytes) as f64;
        if increment + self.carry_bytes < room {
            self.apply(increment);
            return;
        }
        // The increment crosses ssthresh: the bytes that reach it count as slow start, the
        // rest as congestion avoidance ([Cavallotti2024] §4.2.3).
        let ss_bytes = ((room - self.carry_bytes).max(0.0) / per_byte).min(bytes as f64);
        let ca_bytes = (bytes as f64 - ss_bytes).max(0.0);
        self.cwnd_bytes = self.ssthresh_bytes;
        self.carry_bytes = 0.0;
        let increment = self.ca_increment(rho, ca_bytes);
        self.apply(increment);
    }
}
