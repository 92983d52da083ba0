//! The Hybla algorithm on plain numbers: bytes, `Duration`s since an epoch the caller picks.
//!
//! Notation of \[Caini2004\] (TCP Hybla, Caini & Firrincieli 2004): W is the congestion window in
//! segments (MSS), ρ = RTT / RTT0, γ the slow-start threshold. The per-ACK rules (eq. 9) are
//! applied with byte counting as in \[Cavallotti2024\] §4.2.3 (the picoquic implementation): every
//! acknowledged MSS counts as one ACK of eq. 9.

use std::time::Duration;

use crate::min_filter::WindowedMin;
use crate::rate::DeliveryRate;

/// Window growth per round in start-up once the window has reached the path estimate (the
/// declared or dispersion-measured BDP) without a queue showing: NewReno's doubling. A paced
/// flight measures nothing beyond its own rate, so this is how start-up keeps probing; a
/// doubling overshoots by at most ≈ 0.44 BDP before the queue signal returns, one RTT later.
pub const STARTUP_GAIN_PER_ROUND: f64 = 2.0;

/// The loss floor is this fraction of the last round's pipe. Below 1 so that every
/// reduction empties the queue for a moment: a queue that stood longer than the base-RTT
/// window inflates the base RTT, hence the pipe estimate, hence the floor, and would then
/// sustain itself; 10 % below lets the next RTT samples see the empty path again.
pub const LOSS_FLOOR_FRACTION: f64 = 0.9;

/// Packets quinn's pacer may release at once (its minimum burst): a queue this long at the
/// bottleneck is the pacer's doing, not congestion.
pub const PACING_BURST_PACKETS: u64 = 10;

/// Above this share of lost bytes in a round, losses count as congestion even with no queue
/// in sight (a policer drops without queueing). BBRv2 uses 2 %; random loss on satellite
/// links reaches 1–2 %, so the bar sits higher.
pub const RANDOM_LOSS_MAX_RATE: f64 = 0.05;

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

/// One loss-detection batch as the controller took it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LossRecord {
    /// Send time of the newest packet in the batch (quinn reports no other), since the
    /// controller's epoch.
    pub sent: Duration,
    /// Bytes declared lost in the batch.
    pub lost_bytes: u64,
    /// How it was taken.
    pub verdict: LossVerdict,
}

/// How the initial slow-start threshold is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
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

/// Which growth rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Growth {
    /// \[Caini2004\] eq. 9 exactly: +(2^ρ − 1) per MSS in slow start, +ρ²/W per MSS in
    /// congestion avoidance.
    Seed,
    /// satquic's extension: \[Caini2004\]'s ρ² growth while the window is below the estimated pipe
    /// (delivery rate × base RTT), ρ·MSS per RTT above it; random loss kept apart from
    /// congestion; on congestion, Westwood+'s floor instead of a blind halving.
    ///
    /// Why ρ above the pipe: at ρ = 20 \[Caini2004\]'s congestion avoidance adds ρ² = 400 packets
    /// per RTT, about a whole 1-BDP buffer, and the loss signal arrives one RTT late — so every
    /// cycle ends in a burst of hundreds of drops (the QUIC Hybla thesis's picture; 14 % loss
    /// measured here). Once the pipe is full, extra window only fills the queue, and the
    /// reference connection Hybla emulates (RTT0) fills it at 1 MSS per RTT0 = ρ MSS per our
    /// RTT. Growing at that pace above the pipe keeps the overshoot at ρ packets, as for
    /// NewReno at RTT0, while below the pipe the window refills at full Hybla speed. The pipe
    /// is the smaller of the best in the rate window and the last round's, so after a
    /// congestion loss a flow does not jump back to a share it had before: that is what keeps
    /// Hybla within [0.5, 2] of a same-RTT Cubic.
    ///
    /// Random loss: a loss with no queue at the bottleneck (none above twice the saturation
    /// threshold within the last base RTT) and a loss share of at most
    /// [`RANDOM_LOSS_MAX_RATE`] keeps the window and opens no recovery period: at 1 % loss a
    /// 600 ms window of hundreds of packets has losses every round, and halving (or freezing
    /// growth) each round collapses it to the Mathis bound.
    ///
    /// Congestion: W ← max(β·W, min(W, [`LOSS_FLOOR_FRACTION`] × delivery rate of the last
    /// round × base RTT)) — Westwood+'s rule (Mascolo et al. 2001) with the rate the flow
    /// actually got in the last round trip, which drains a full buffer to this flow's share.
    /// Flows sharing a queue all see the same RTT inflation, so all reduce by the same factor
    /// base RTT / RTT: multiplicative decrease, equal for all, which keeps additive-increase
    /// convergence to fair shares.
    PipeAware,
}

/// Settings of one Hybla instance.
#[derive(Debug, Clone, PartialEq)]
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
    /// Smallest RTT sample of the current ACK frame (the freshest queue-delay reading).
    frame_min_rtt: Option<Duration>,
    /// Latest send time among the packets of the current ACK frame.
    frame_newest_sent: Duration,
    /// Bytes delivered and lost in the current round (one base RTT) and the loss share of
    /// the previous round.
    round_delivered_bytes: u64,
    round_lost_bytes: u64,
    round_start: Duration,
    previous_round_delivered_bytes: u64,
    previous_round_lost_bytes: u64,
    /// When start-up ended (its drain already took the window to the pipe).
    startup_ended_at: Option<Duration>,
    /// When the window first reached the start-up target.
    reached_target_at: Option<Duration>,
    /// Queueing delay: the smallest RTT sample of the last quarter base RTT − base RTT.
    queue_delay: Duration,
    /// Minimum of the per-frame RTT samples over the last quarter base RTT. A queue at the
    /// bottleneck lasts; a single inflated sample is ACK delay (a frame sent by the peer's
    /// max_ack_delay timer, up to 40 ms with the satellite preset) or jitter on the return
    /// link, and must not read as congestion.
    recent_rtt: WindowedMin,
    recovery_start: Option<Duration>,
    loss_seen: bool,
    /// Delivery rate over the last rounds: the start-up ssthresh and the pipe estimate.
    rate: DeliveryRate,
    /// In start-up (`Estimate` only): ssthresh unset until a queue or a loss shows the pipe.
    estimating_ssthresh: bool,
    /// Start-up target: the declared BDP, raised by the dispersion estimate of the first flights.
    startup_target_bytes: Option<u64>,
    /// Last time a queue of twice the saturation threshold was seen: a loss then is taken
    /// for congestion. Between one and two thresholds a queue may be our own pacing bursts
    /// plus ACK-timing jitter; answering it as congestion drains the window round after
    /// round under random loss.
    congested_at: Option<Duration>,
    /// Last time a queue was seen at the bottleneck (the pipe estimate is then a ceiling).
    saturated_at: Option<Duration>,
    /// Time of the latest ACK.
    now: Duration,
    /// Every loss batch's verdict, counted.
    loss_tally: LossTally,
    /// Every loss batch, when `record_losses` is on.
    loss_records: Vec<LossRecord>,
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
        Self {
            estimating_ssthresh: params.initial_ssthresh == InitialSsthresh::Estimate,
            startup_target_bytes: params.declared_bdp_bytes,
            saturated_at: None,
            congested_at: None,
            now: Duration::ZERO,
            rate: DeliveryRate::new(params.rate_window),
            cwnd_bytes: params.initial_window_bytes.max(2 * mss_bytes),
            base_rtt: WindowedMin::new(params.base_rtt_window),
            params,
            mss_bytes,
            ssthresh_bytes,
            carry_bytes: 0.0,
            rho: 1.0,
            rho_known: false,
            frame_min_rtt: None,
            frame_newest_sent: Duration::ZERO,
            reached_target_at: None,
            startup_ended_at: None,
            round_delivered_bytes: 0,
            round_lost_bytes: 0,
            round_start: Duration::ZERO,
            previous_round_delivered_bytes: 0,
            previous_round_lost_bytes: 0,
            queue_delay: Duration::ZERO,
            recent_rtt: WindowedMin::new(Duration::from_millis(100)),
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

    /// Queueing delay: smallest RTT sample of the last quarter base RTT − base RTT.
    pub fn queue_delay(&self) -> Duration {
        self.queue_delay
    }

    /// Smallest window: minimum_window_packets × MSS, times ρ (\[Cavallotti2024\] §4.2.3).
    pub fn minimum_window(&self) -> u64 {
        ((self.params.minimum_window_packets * self.mss_bytes) as f64 * self.rho) as u64
    }

    /// The datagram size changed (PLPMTUD); windows in bytes keep their value.
    pub fn on_mtu_update(&mut self, mss_bytes: u64) {
        self.mss_bytes = mss_bytes.max(1);
    }

    /// Sets ρ directly (tests, and callers that know the path).
    pub fn set_rho_for_test(&mut self, rho: f64) {
        self.rho = rho.max(1.0);
        self.rho_known = true;
    }

    /// One newly acknowledged packet of `bytes`, sent at `sent`, acknowledged at `now`.
    pub fn on_ack(&mut self, now: Duration, sent: Duration, bytes: u64, app_limited: bool) {
        self.now = now;
        if let Some(sample) = now.checked_sub(sent) {
            self.base_rtt.update(now, sample);
            self.frame_min_rtt = Some(self.frame_min_rtt.map_or(sample, |m| m.min(sample)));
            self.frame_newest_sent = self.frame_newest_sent.max(sent);
            self.update_rho();
        }
        self.rate.on_ack(sent, bytes);
        self.round_delivered_bytes += bytes;
        // RFC 9002 §7.3.2: no growth for packets sent before the current recovery started,
        // and none while the application, not the window, limits sending.
        if app_limited || self.recovery_start.is_some_and(|start| sent <= start) {
            return;
        }
        self.grow(bytes);
    }

    /// End of one ACK frame: queue-delay reading and the start-up bandwidth estimate.
    pub fn on_end_acks(&mut self, now: Duration) {
        let mut queue_now = false;
        if let (Some(sample), Some(base)) = (self.frame_min_rtt.take(), self.base_rtt.get()) {
            self.recent_rtt.set_window(base / 4);
            self.recent_rtt.update(now, sample);
            let recent = self.recent_rtt.get().unwrap_or(sample);
            self.queue_delay = recent.saturating_sub(base);
            // A queue of more than 2 % of the base RTT (at least 2 ms, above ACK-delay noise,
            // and more than one pacing burst) means the bottleneck is saturated and the
            // delivery rate is its capacity (or our share of it), not just cwnd / RTT.
            let threshold = self.queue_threshold(base);
            if self.queue_delay >= 2 * threshold {
                self.congested_at = Some(now);
            }
            if self.queue_delay >= threshold {
                self.saturated_at = Some(now);
                queue_now = true;
            }
        }
        let horizon = self.base_rtt.get().unwrap_or(self.params.rtt0);
        if now >= self.round_start + horizon {
            self.round_start = now;
            self.previous_round_delivered_bytes = std::mem::take(&mut self.round_delivered_bytes);
            self.previous_round_lost_bytes = std::mem::take(&mut self.round_lost_bytes);
        }
        self.rate.on_end_acks(now, self.mss_bytes, horizon);
        if !self.estimating_ssthresh {
            return;
        }
        // Only packets sent after the window reached the target can show a queue of ours:
        // before that we sent less than the estimate (a queue then is pacing bursts or
        // another flow's).
        let probing = self
            .reached_target_at
            .is_some_and(|t| self.frame_newest_sent > t);
        if queue_now && probing {
            // Start-up ends at the first queue: W ← min(W, pipe) drains the overshoot, and
            // congestion avoidance starts from the pipe (BBR's drain, Hybla's ssthresh).
            if let Some(pipe) = self.pipe_bytes() {
                self.estimating_ssthresh = false;
                self.startup_ended_at = Some(now);
                self.cwnd_bytes = self
                    .cwnd_bytes
                    .min(pipe.max(self.minimum_window()))
                    .max(self.minimum_window());
                self.ssthresh_bytes = self.cwnd_bytes;
                self.carry_bytes = 0.0;
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
        let was_starting_up = std::mem::replace(&mut self.estimating_ssthresh, false);
        self.round_lost_bytes += lost_bytes;
        if was_starting_up {
            self.startup_ended_at = Some(now);
        }
        let loss_rate = self.loss_rate();
        // A packet sent in start-up, or in the round after it while its overshoot drains, met
        // at most start-up's own queue, which the drain at its end (W ← pipe) has already
        // answered; reducing again would answer it twice.
        let base = self.base_rtt.get().unwrap_or(self.params.rtt0);
        let sent_in_startup =
            was_starting_up || self.startup_ended_at.is_some_and(|end| sent <= end + base);
        if self.params.growth == Growth::PipeAware
            && !persistent
            && lost_bytes > 0
            && (sent_in_startup || !self.queue_recently_seen())
            && loss_rate <= RANDOM_LOSS_MAX_RATE
        {
            // Start-up's losses met its own overshoot, which its drain answers: congestion,
            // answered once. The others are taken as random.
            let verdict = if sent_in_startup {
                LossVerdict::Congestion
            } else {
                LossVerdict::Random
            };
            self.record_loss(sent, lost_bytes, verdict);
            // A loss with no queue at the bottleneck and a modest loss rate is not
            // congestion: nothing to drain, so the window stays, and no recovery period
            // starts, so growth goes on (at 1 % loss a 600 ms window of thousands of packets
            // has losses every round; halving per round would collapse it, and a recovery
            // period per round would freeze it). The threshold ends slow start.
            self.ssthresh_bytes = self.cwnd_bytes;
            return;
        }
        if lost_bytes > 0 {
            self.record_loss(sent, lost_bytes, LossVerdict::Congestion);
        }
        let in_this_recovery = self.recovery_start.is_some_and(|start| sent <= start);
        if !in_this_recovery {
            self.recovery_start = Some(now);
            // W ← β·W (Reno's halving, β = 0.5).
            let mut reduced = (self.cwnd_bytes as f64 * self.params.loss_reduction_factor) as u64;
            if self.params.growth == Growth::PipeAware
                && let Some(pipe) = self.recent_pipe_bytes()
            {
                // Westwood+ with the last round's delivery rate ([`Growth::PipeAware`]): a
                // full buffer is drained to (a little below) this flow's share.
                let floor = (pipe as f64 * LOSS_FLOOR_FRACTION) as u64;
                reduced = reduced.max(floor.min(self.cwnd_bytes));
            }
            self.cwnd_bytes = reduced.max(self.minimum_window());
            self.ssthresh_bytes = self.cwnd_bytes;
            self.carry_bytes = 0.0;
        }
        if persistent {
            self.cwnd_bytes = self.minimum_window();
            self.carry_bytes = 0.0;
        }
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

    /// Share of lost bytes over the previous and the current round (so that a round that has
    /// just begun does not read one loss as 100 %).
    fn loss_rate(&self) -> f64 {
        let lost = self.round_lost_bytes + self.previous_round_lost_bytes;
        let total = lost + self.round_delivered_bytes + self.previous_round_delivered_bytes;
        if total == 0 {
            0.0
        } else {
            lost as f64 / total as f64
        }
    }

    /// Smallest queueing delay that counts as a queue: 2 % of the base RTT, at least 2 ms,
    /// and more than quinn's pacer makes by itself — it releases bursts of up to
    /// [`PACING_BURST_PACKETS`], which queue for their own serialization time.
    fn queue_threshold(&self, base: Duration) -> Duration {
        let burst = self
            .rate
            .max_rate_bytes_per_s()
            .map_or(Duration::ZERO, |rate| {
                Duration::from_secs_f64((PACING_BURST_PACKETS * self.mss_bytes) as f64 / rate)
            });
        (base / 50).max(Duration::from_millis(2)).max(burst)
    }

    /// Whether the bottleneck showed a queue within the last base RTT (the loss that is being
    /// reported now was sent about that long ago).
    fn queue_recently_seen(&self) -> bool {
        let base = self.base_rtt.get().unwrap_or(self.params.rtt0);
        self.congested_at
            .is_some_and(|t| self.now.saturating_sub(t) <= base)
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
    /// i.e. ρ²·MSS·bytes/cwnd in bytes; ρ/W per MSS above the pipe with `PipeAware`.
    fn ca_increment(&self, rho: f64, bytes: f64) -> f64 {
        // The pipe estimate is a ceiling only if the bottleneck was seen saturated recently:
        // while the window itself limits the flow, delivery rate × RTT is just the window.
        let recently_saturated = self
            .saturated_at
            .is_some_and(|t| self.now.saturating_sub(t) <= self.params.base_rtt_window);
        // The ceiling is what the flow got in the last round if that is less than its best in
        // the rate window: after a congestion loss with a competitor, refill at ρ per RTT,
        // not at ρ² up to a share it had before (that takes 3–4× a same-RTT Cubic's share).
        let ceiling = match (self.pipe_bytes(), self.recent_pipe_bytes()) {
            (Some(best), Some(recent)) => Some(best.min(recent)),
            (best, recent) => best.or(recent),
        };
        let above_pipe = self.params.growth == Growth::PipeAware
            && recently_saturated
            && ceiling.is_some_and(|pipe| self.cwnd_bytes >= pipe);
        let per_rtt_segments = if above_pipe { rho } else { rho * rho };
        per_rtt_segments * self.mss_bytes as f64 * bytes / self.cwnd_bytes as f64
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
