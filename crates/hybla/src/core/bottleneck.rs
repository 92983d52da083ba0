//! The pipe-aware rules' readings of the bottleneck
//! ([`Growth::PipeAware`](super::Growth::PipeAware)): whether the link is full, whether
//! somebody else's packets share the queue and how fast their window grows, whether the flow
//! gets clearly more than they do (and yields), and the two ways the flow empties a queue of
//! its own (draining an excess, refreshing the base RTT).

use std::time::Duration;

use crate::queue::HIGHEST_QUEUE_WINDOW;

use super::Hybla;
use super::params::{
    BASE_REFRESH_FRACTION, COMPETITION_HOLD, COMPETITION_HOLD_RTTS, COMPETITION_RATE_SHARE,
    CREDIBLE_AFTER_STARTUP_RTTS, CREDIBLE_COMPETITION_MIN_SHARE, DRAIN_ALLOWANCES, GROWTH_SPAN,
    JITTER_FLOOR_MIN_SHARE, NOISE_HOLD, NOISE_RULES_MAX_RHO, SATURATION_RATE_SHARE,
    WINDOW_LIMITED_FLIGHT_SHARE, YIELD_MIN_OTHERS_SHARE, YIELD_MIN_RHO, YIELD_OTHERS_MIN_GROWTH,
    YIELD_RATE_RATIO, YIELD_STEP,
};

impl Hybla {
    /// Alone, the flow's own queue (its budget) never empties by itself, and a queue that
    /// stands longer than the base-RTT filter's window passes for propagation delay: the base
    /// RTT would creep up by a budget per window, and the queue with it. Half a window after
    /// the path was last seen empty, the window drops below the pipe for a round
    /// (W ← [`BASE_REFRESH_FRACTION`] × delivery rate × the smallest RTT of the last
    /// [`PATH_RTT_WINDOW`](super::params::PATH_RTT_WINDOW)), as BBR's ProbeRTT does, and Hybla's growth refills it within a
    /// few RTTs.
    pub(super) fn refresh_base_rtt(&mut self, now: Duration, base: Duration) {
        let since = *self.path_seen_empty_at.get_or_insert(now);
        if now < since + self.params.base_rtt_window / 2 || !self.settled_for(now, base, 1) {
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
            self.mark_reduced(now);
        }
        self.path_seen_empty_at = Some(now);
    }

    /// The bottleneck is shared when, for a whole round, a queue stands while the flow gets
    /// clearly less than the capacity it measured. Not within a round of its own reduction:
    /// its rate falls at once while its own queue takes that long to drain. Nor, by the share,
    /// in a round something else limited: the flow's rate is then partly its application's
    /// choice, and a share below the capacity says nothing of a competitor. (After an
    /// overload of media that does not adapt, behind a scheduler, a share of a declared
    /// capacity the path no longer had read as one, and held the rise that ended the overload
    /// at the competing pace for seconds.) A queue that outlives a drain still shows one.
    pub(super) fn detect_competition(&mut self, now: Duration, base: Duration) {
        let settled = self.settled_for(now, base, 1);
        let standing = self.queue.standing() >= self.competition_queue();
        // The flow drained its own excess to the pipe a round ago, yet the queue still stands:
        // it is not the flow's (a competitor that fills the queue may leave the flow most of
        // the rate).
        let round = base + self.queue.delay();
        let outlived_a_drain = self
            .drained_flight_at
            .is_some_and(|t| now >= t + round && now <= t + 3 * round);
        let shares = !self.round_limited_elsewhere && self.shares_the_bottleneck();
        if !(standing && settled && (shares || outlived_a_drain)) {
            self.competition_seen_since = None;
            return;
        }
        let since = *self.competition_seen_since.get_or_insert(now);
        if now >= since + base {
            let hold = COMPETITION_HOLD.max(base * COMPETITION_HOLD_RTTS);
            self.competing_until = Some(now + hold);
            self.competition_credible = self
                .rate_share()
                .is_some_and(|share| share >= CREDIBLE_COMPETITION_MIN_SHARE)
                && !self.noise_discredits_competition()
                && self
                    .startup_ended_at
                    .is_none_or(|end| now >= end + CREDIBLE_AFTER_STARTUP_RTTS * base);
        }
    }

    /// Whether the reading's noise makes a competitor found now a doubtful one: only where the
    /// noise rules apply (ρ below [`NOISE_RULES_MAX_RHO`]), on the short paths whose jitter
    /// reads as a neighbour's queue (`leo-starlink`'s held draws). Above it the noise is the
    /// competitor's own doing: RED's early drops and a neighbour's sawtooth make the queue
    /// come and go within a round. Next to Cubic or NewReno at 100 ms behind a quarter-BDP
    /// RED queue the reading was noisy at every detection, the competition never credible,
    /// and each hold lapsed 5 s after the cut into a ρ² refill that RED answered by dropping
    /// the neighbour's packets: it kept 47 % (Cubic) and 63 % (NewReno) of what it gets next
    /// to its own kind, 87 % and 94 % with the noise left out of it above ρ = 3
    /// (reports/hybla-friendliness §7, "Competition credible under RED's noise").
    fn noise_discredits_competition(&self) -> bool {
        self.noisy_recently() && self.rho < NOISE_RULES_MAX_RHO
    }

    /// Whether `rounds` rounds (base RTT + the queue now) have passed since the window was last
    /// reduced, or it never was: the RTT samples then show the reduced window, not the queue
    /// the old one left.
    fn settled_for(&self, now: Duration, base: Duration, rounds: u32) -> bool {
        self.reduced_at
            .is_none_or(|t| now >= t + rounds * (base + self.queue.delay()))
    }

    /// After a congestion cut taken while competing (credibly: see
    /// [`CREDIBLE_COMPETITION_MIN_SHARE`]) and holding more than the others at the last full
    /// link ([`Self::compare_with_the_others`]), the regrowth up to the window the cut came
    /// from is competing too, however long it takes. The others cut on the same losses and
    /// regrow at their own pace; NewReno at 600 ms regrows a segment per 600 ms, over minutes. A hold
    /// that lapsed after its 5 s let Hybla's ρ² refill the whole pipe within a round, into
    /// the queue the others were still regrowing in: at 600 ms, 10 Mbit/s, behind a
    /// quarter-BDP RED queue NewReno kept 10 % of what it gets next to NewReno, and its
    /// window never passed 58 kB (ratio 21.95; 1.55 with the hold). AIMD converges only when
    /// both sides increase alike through the whole cycle, not just its first seconds.
    ///
    /// The cost: a competitor that leaves during the regrowth leaves the flow regrowing at the
    /// competing pace up to that window, one cycle of NewReno's manners.
    ///
    /// The hold ends in a round the application limited: a window it does not fill does not
    /// grow, and never reaches the target. A lone GEO media connection behind the balancer
    /// (media-bulk-geo with 3× rises, seed 5) stayed in the competing mode for 238 s of its
    /// 420 s that way.
    pub(super) fn hold_competition_through_regrowth(&mut self, now: Duration, base: Duration) {
        let Some(target) = self.competing_regrowth_to else {
            return;
        };
        if self.cwnd_bytes >= target || self.round_limited_elsewhere {
            self.competing_regrowth_to = None;
            return;
        }
        let until = now + base;
        if self.competing_until.is_none_or(|u| u < until) {
            self.competing_until = Some(until);
        }
    }

    /// At a full link, whether the others' bytes in flight exceed the flow's own: all the
    /// flows together hold the pipe (capacity × base RTT) and the standing queue, so the
    /// others hold that less the flow's own flight. Read only where it means something: a
    /// standing queue of two budgets, two rounds after the flow's own reduction (the round
    /// after a cut still holds the old window's queue, and a loss burst leaves the flight
    /// below the window for a while), the window limiting, a quiet reading. The capacity is
    /// the highest of the short-span and the whole-round delivery rates: a flow that has a
    /// small share of a standing queue still sends its bursts back to back through it.
    ///
    /// Next to Cubic at 600 ms the reading was 650–720 kB against Cubic's 610–710 kB in
    /// flight (10 Mbit/s, quarter-BDP drop-tail); alone, within ±3 % of the pipe.
    pub(super) fn compare_with_the_others(
        &mut self,
        now: Duration,
        base: Duration,
        in_flight_bytes: u64,
    ) {
        let settled = self.settled_for(now, base, 2);
        let window_limited = in_flight_bytes as f64
            >= WINDOW_LIMITED_FLIGHT_SHARE * self.cwnd_bytes as f64
            && !self.round_limited_elsewhere;
        if !settled
            || !window_limited
            || self.noisy_recently()
            || self.queue.standing() < 2 * self.queue.budget()
        {
            // Not a reading of a full link: the last verdict holds for a while (`yielding`).
            return;
        }
        let capacity = self
            .rate
            .max_rate_bytes_per_s()
            .into_iter()
            .chain(self.capacity_bytes_per_s())
            .fold(0.0, f64::max);
        let total = capacity * (base + self.queue.standing()).as_secs_f64();
        let own = in_flight_bytes as f64;
        self.others_hold_more = total - own > own;
        self.yield_to_the_others(now, base, capacity);
    }

    /// Next to a credible competitor at a full link, a flow that gets more than
    /// [`YIELD_RATE_RATIO`] × what the others get (the capacity less its own delivery rate)
    /// gives window back: [`YIELD_STEP`] of it per loop round (base RTT + the queue), with no
    /// growth for [`COMPETITION_HOLD_RTTS`] base RTTs after the verdict
    /// ([`Self::yielding`]). Shares are levels, which the flow reads well; the others' growth,
    /// which the matched growth follows, is a slope, which it does not: a NewReno at 600 ms
    /// behind 2–3 s of queue adds 0.5 kB/s, the queue's lowest reading after a cut sits in
    /// the gap the cut leaves going round the loop, and the growth read from it was 7–90 kB/s.
    /// Matching that kept the lead Hybla's start-up took for the whole run: against NewReno at
    /// 600 ms behind a 4-BDP drop-tail queue, 7.25 / 2.34 Mbit/s (1.31 with the yield; the
    /// fairness matrix over seeds 1–3: 26 → 24 cells out of the band, neighbours harmed in
    /// 5 → 2). Not where the others get less than [`YIELD_MIN_OTHERS_SHARE`] of the capacity
    /// (a lone flow's shortfall under random loss is nobody's share), nor below
    /// [`YIELD_MIN_RHO`]. A flow that yields empties its own part of the queue; alone, the
    /// full link it needs for the verdict goes with it.
    ///
    /// A neighbour its application limits (a call next to a download) takes nothing of what
    /// is given: the link stops being full, and the flow regrows at the competing pace. So
    /// an episode of yielding that starts after the last one's hold has lapsed first asks
    /// whether the others now get [`YIELD_OTHERS_MIN_GROWTH`] more than at its last step;
    /// if not, the flow yields no more until a congestion cut or the competition ends. Next
    /// to a 2 Mbit/s flow at 600 ms (10 Mbit/s, 1-BDP drop-tail, 300 s) the download got
    /// 6.80–6.98 Mbit/s (seeds 1–3) with the yield alone, 7.35–7.47 with this, 7.51 before
    /// the yield. A NewReno or Cubic regrows into the room over the same stretch and gets
    /// more: over seeds 1–3 the fairness matrix keeps 23 cells out of the band and one
    /// harmed, as without it. Asked one round after a step instead, a NewReno's rate read
    /// over a base RTT was noisier than the step (26 out and 5 harmed at seed 1).
    fn yield_to_the_others(&mut self, now: Duration, base: Duration, capacity: f64) {
        self.yield_found_at = None;
        self.smaller_found_at = None;
        if !self.competing() {
            self.forget_the_last_yield();
        }
        if !(self.competing() && self.competition_credible)
            || capacity <= 0.0
            || self.rho < YIELD_MIN_RHO
        {
            return;
        }
        let Some(own_rate) = self.rate.recent_rate_bytes_per_s() else {
            return;
        };
        let others_rate = capacity - own_rate;
        if others_rate > YIELD_RATE_RATIO * own_rate {
            self.smaller_found_at = Some(now);
        }
        if others_rate < YIELD_MIN_OTHERS_SHARE * capacity
            || own_rate <= YIELD_RATE_RATIO * others_rate
        {
            return;
        }
        if self.others_limited {
            return;
        }
        if let (Some(before), Some(at)) = (self.others_bytes_per_s_at_yield, self.yielded_at)
            && now >= at + Self::share_verdict_hold(base)
            && others_rate < before * (1.0 + YIELD_OTHERS_MIN_GROWTH)
        {
            self.others_limited = true;
            return;
        }
        self.yield_found_at = Some(now);
        let round = base + self.queue.delay();
        if self.yielded_at.is_some_and(|at| now < at + round) {
            return;
        }
        self.yielded_at = Some(now);
        self.others_bytes_per_s_at_yield = Some(others_rate);
        // The regrowth up to where the yield began competes too, as after a congestion cut:
        // below the pipe, Hybla's own pace would take it all back within a round (against
        // NewReno at 600 ms behind a quarter-BDP drop-tail queue the shares went from 1.07
        // to 7.01 without this). Not a reduction that restarts the comparison's two settling
        // rounds: the yield's pace is its own (29 cells out of the band and 9 harmed with
        // that, 25 and 3 without).
        let from = self
            .competing_regrowth_to
            .unwrap_or(self.cwnd_bytes)
            .max(self.cwnd_bytes);
        self.competing_regrowth_to = Some(from);
        let reduced = (self.cwnd_bytes as f64 * (1.0 - YIELD_STEP)) as u64;
        self.cwnd_bytes = reduced.max(self.minimum_window());
        self.ssthresh_bytes = self.ssthresh_bytes.min(self.cwnd_bytes);
        self.carry_bytes = 0.0;
    }

    /// Whether the flow yields to the others now: the last reading of a full link found it
    /// getting clearly more than they do ([`Self::share_verdict_holds`]).
    pub(super) fn yielding(&self) -> bool {
        self.share_verdict_holds(self.yield_found_at)
    }

    /// Whether the last reading of a full link (within [`COMPETITION_HOLD_RTTS`] base RTTs)
    /// found the others getting more than [`YIELD_RATE_RATIO`] × the flow's rate: the
    /// smaller side of the yield, which cuts by `SMALLER_FLOW_REDUCTION`. By rates, as the
    /// yield: two flows whose base RTTs differ (a latecomer's crept up behind the first one's
    /// queue) each read the flights as the other holding more.
    pub(super) fn far_smaller(&self) -> bool {
        self.share_verdict_holds(self.smaller_found_at)
    }

    /// Whether a verdict on the shares, found at `found_at`, still holds: while the flow
    /// competes, for [`COMPETITION_HOLD_RTTS`] base RTTs (readings of a full link come and go
    /// with the sawtooth; 5 s, the competition hold, is 500 rounds at 10 ms).
    fn share_verdict_holds(&self, found_at: Option<Duration>) -> bool {
        let base = self.base_rtt.get().unwrap_or(self.params.rtt0);
        self.competing()
            && found_at.is_some_and(|at| self.now < at + Self::share_verdict_hold(base))
    }

    /// How long a verdict on the shares holds at base RTT `base`: [`COMPETITION_HOLD_RTTS`]
    /// base RTTs, also the pause after which a new episode of yielding starts.
    fn share_verdict_hold(base: Duration) -> Duration {
        base * COMPETITION_HOLD_RTTS
    }

    /// Forgets what the others got at the last yield, and that they took nothing of it: after
    /// a congestion cut (both sides cut, and the next reading starts afresh) or once the
    /// competition ends.
    pub(super) fn forget_the_last_yield(&mut self) {
        self.others_bytes_per_s_at_yield = None;
        self.others_limited = false;
    }

    /// The standing queue that marks somebody else's packets: two budgets, and where the
    /// noise rules apply (the reading [noisy recently](Self::noisy_recently), ρ below
    /// [`NOISE_RULES_MAX_RHO`]) the most the flow keeps of its own before it drains,
    /// [`DRAIN_ALLOWANCES`] own allowances. On `leo-starlink` draws of jitter held for 10 ms
    /// keep a round's smallest sample 1–5 ms above the base against a budget of 1.5–4 ms:
    /// after each of its own reductions, while its rate lagged, the lone flow took that for
    /// a competitor's queue and grew at the competing pace. Without a declared BDP its worst
    /// recovery after a reconfiguration was 4.1 / 3.4 / 3.1 / 4.6 s (seeds 1–4), with this
    /// 3.3 / 2.6 / 3.8 / 2.8 s. The fairness matrix's only cells below ρ = 3 are at 10 ms,
    /// where ρ = 1 makes every loss congestion: there the flow judged itself shared 8–54 %
    /// of the time behind 1-BDP RED instead of 96–99 %, with the same shares.
    fn competition_queue(&self) -> Duration {
        if self.noisy_recently() && self.rho < NOISE_RULES_MAX_RHO {
            self.drain_limit()
        } else {
            2 * self.queue.budget()
        }
    }

    /// `classifier = "loss-by-queue"` only: a congestion loss at a queue below what a lone
    /// flow's own buffer limit would show (the alone threshold), while a queue of two budgets
    /// has stood the whole round, is somebody else's queue being managed: an AQM dropping at
    /// a low average that the competitor keeps. The flow competes, as if its share had shown
    /// it. Without the standing queue a lone flow's jitter fired it (30 ms jitter cells at
    /// 26 % of the ceiling); with it, the RED cells of the fairness matrix keep their
    /// neighbour 12–105 % instead of 7–73 % (reports/hybla-friendliness §7).
    pub(super) fn note_low_queue_congestion(&mut self, now: Duration, queue: Duration) {
        if queue < self.queue.congestion_threshold(false)
            && self.queue.standing() >= 2 * self.queue.budget()
        {
            let base = self.base_rtt.get().unwrap_or(self.params.rtt0);
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
    pub(super) fn measure_others_growth(&mut self, now: Duration, base: Duration) {
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

    /// The standing queue beyond which the flow drains its own excess: [`DRAIN_ALLOWANCES`]
    /// of its own allowance (the allowance covers the path's noise as well as its packets).
    fn drain_limit(&self) -> Duration {
        DRAIN_ALLOWANCES * self.queue.own_allowance()
    }

    /// Alone, a standing queue beyond [the drain's limit](Self::drain_limit) is the flow's own
    /// excess (a capacity drop, an overshoot): take it out of the window at once, W ← delivery
    /// rate × (base RTT + its own allowance), at most once per RTT. A queue left standing would outlast the base-RTT filter
    /// and pass for propagation delay. In a round the application limited, not below what it
    /// had in flight: a scheduler's queue target and its keyframes are not window excess, and
    /// a window cut to the pipe held every keyframe back (media-bulk-geo with 3× rises: late
    /// frames 1.8 → 0.8 % without the cut).
    pub(super) fn drain_own_queue(&mut self, now: Duration, base: Duration) {
        // The standing reading is the smallest of a whole round: a queue that lasts it keeps
        // the link busy, whether or not the round's delivery rate reached the capacity.
        if self.estimating_ssthresh || self.queue.standing() < self.drain_limit() {
            self.excess_since = None;
            return;
        }
        // Only a queue that stands for a round: the pacer runs a quarter faster than the
        // window allows, so a window that regrows at once queues its excess for a moment.
        let since = *self.excess_since.get_or_insert(now);
        if now < since + base {
            return;
        }
        if !self.settled_for(now, base, 1) {
            return;
        }
        let round = base + self.queue.delay();
        // A queue that outlives a drain is not the flow's own: leave the rounds after a drain
        // to competition detection, or the flow drains again as soon as it settles and
        // shrinks to its current share of a queue somebody else keeps full.
        if self.drained_at.is_some_and(|t| now < t + 3 * round) {
            return;
        }
        let Some(rate) = self.rate.recent_rate_bytes_per_s() else {
            return;
        };
        let rate_target = (rate * (base + self.queue.own_allowance()).as_secs_f64()) as u64;
        // The application limited sending in this round: what it had in flight is its own
        // bursts (a media scheduler keeps a queue target on purpose, and a keyframe needs
        // room), not window excess. Only the window beyond what it used goes, and the queue
        // that flight keeps will stand on: such a drain tests nothing about whose queue it is.
        let flight_kept = self.round_limited_elsewhere && self.round_max_in_flight > rate_target;
        let target = if flight_kept {
            self.round_max_in_flight
        } else {
            rate_target
        };
        if target < self.cwnd_bytes {
            self.cwnd_bytes = target.max(self.minimum_window());
            self.ssthresh_bytes = self.cwnd_bytes;
            self.carry_bytes = 0.0;
            self.mark_reduced(now);
            self.drained_at = Some(now);
            if !flight_kept {
                self.drained_flight_at = Some(now);
            }
        }
    }

    /// Whether the queue reading was noise (jitter the filter window cannot strip) now or
    /// within [`NOISE_HOLD`]: a LEO handover's delay spike is an excursion that stands for
    /// rounds, and the noise share fell below its bar for 5 s after each one, just when a
    /// halved window needed to regrow.
    pub(super) fn noisy_recently(&self) -> bool {
        self.queue.noisy()
            || self
                .noisy_seen_at
                .is_some_and(|t| self.now <= t + NOISE_HOLD)
    }

    /// The window a link with path jitter needs, bytes: the capacity × (base RTT +
    /// [`DRAIN_ALLOWANCES`] of the flow's own allowance), the largest window whose standing
    /// queue the drain accepts. Under jitter the RTT without any queue spans the base RTT
    /// and the jitter's excursions, and a window halved below that idles the link until it
    /// regrows: on the loss matrix's 30 ms path with 10 ms of mean jitter each way (RTT
    /// 36 ms at least, 62 ms on average with the queue empty) the flow halved from 115 kB,
    /// where the 37.5 kB buffer overflowed, to 57 kB, and held 67–72 % of the ceiling at
    /// 0.1–0.5 % loss (NewReno 50 %, Cubic 55 %). A congestion cut goes no lower than this:
    /// TCP Westwood's W ← bandwidth estimate × RTT after a loss \[Mascolo2001\], with the
    /// RTT that jitter makes instead of the smallest.
    ///
    /// `None` unless the budget is the path's jitter and not the flow's own packets
    /// ([`QueueMonitor::budget_is_jitter`](crate::queue::QueueMonitor::budget_is_jitter)),
    /// the reading was [noisy recently](Self::noisy_recently), ρ is below
    /// [`NOISE_RULES_MAX_RHO`] and no credible competitor was found. A doubtful one (found on
    /// a noisy reading below ρ = 3) leaves the floor in place while the flow still gets
    /// [`JITTER_FLOOR_MIN_SHARE`] of the capacity it measured: alone on the loss matrix's
    /// 30 ms, 20/2 Mbit/s path with 10 ms of mean jitter, such verdicts took the floor away
    /// and the window collapsed to 20–50 kB for 10 s at a time (63.2 % of the ceiling at 1 %
    /// loss, seed 2; 77.1 % with the floor kept). Over seeds 1–4 the worst of the target's
    /// 30 ms cells went 69.0 → 75.4 %, and at seed 1 every one of them is at 80 % or more;
    /// `leo-starlink` 84.0 → 86.2 Mbit/s (seeds 1–4), worst recovery 2.8–3.1 s as before.
    /// Kept away from every doubtful competitor, the floor cost paper-fairness its RTT
    /// fairness: the short flows, three among six behind RED, found theirs at shares of
    /// 0.20–0.26, and the long flows' share fell from 0.64 to 0.49 of theirs. Next to
    /// another flow the cut is the friendly one whatever the floor: behind a shallow buffer
    /// a floor near the pipe cuts by the queue's share only, and next to NewReno at 10 ms
    /// behind a quarter BDP that took 11.7 times NewReno's rate when the jitter gate was
    /// missing (its queue made the reading noisy, and its competition was not detected).
    pub(super) fn jitter_pipe_bytes(&self, base: Duration) -> Option<u64> {
        if !self.queue.budget_is_jitter()
            || !self.noisy_recently()
            || self.rho >= NOISE_RULES_MAX_RHO
            || (self.competing()
                && (self.competition_credible
                    || self
                        .rate_share()
                        .is_none_or(|share| share < JITTER_FLOOR_MIN_SHARE)))
        {
            return None;
        }
        let capacity = self.rate.capacity_bytes_per_s()?;
        let rtt = base + self.drain_limit();
        Some((capacity * rtt.as_secs_f64()) as u64)
    }

    /// Whether the queue reading is at least the flow's budget: the link is full. In a round
    /// the application limited, only a queue that stood through the whole round counts: an
    /// application that sends in bursts queues them behind each other for a moment, whatever
    /// room the link has (a 40 kB video keyframe is 80 ms at 4 Mbit/s, every 2 s). Taken as a
    /// full link, those bursts held a GEO media connection's window to one segment per RTT
    /// after the capacity doubled (media-bulk-geo: the bottleneck took 10.5 s to fill instead
    /// of 8.4 s, reports/media-bulk). A window-limited flow's queue is its window's excess,
    /// and is read at once, unless jitter makes the filtered reading noise
    /// ([`QueueMonitor::reading`](crate::queue::QueueMonitor::reading)).
    pub(super) fn queue_at_budget(&self) -> bool {
        let reading = if self.round_limited_elsewhere {
            self.queue.standing()
        } else {
            self.queue.reading()
        };
        reading >= self.queue.budget()
    }

    /// Whether the flow gets (nearly) all the capacity and a queue was seen within the rate
    /// window: the link is full, so more window only makes queue. Not once the bottleneck
    /// [outran](Self::outran) the window.
    pub(super) fn saturated(&self) -> bool {
        let queue_seen = self
            .saturated_at
            .is_some_and(|t| self.now.saturating_sub(t) <= self.params.rate_window);
        queue_seen
            && !self.outran()
            && self
                .rate_share()
                .is_some_and(|share| share >= SATURATION_RATE_SHARE)
    }

    /// Whether the bottleneck serves faster than when the link was last full (a capacity
    /// rise, a competitor gone): no queue of a budget for a whole round since the last one,
    /// the window that made it still out and not reduced since, and either a clear queue
    /// (twice the budget) seen within the rate window or no packet lost since that queue.
    /// Waiting out the rate window instead held media-bulk-geo's rise from 2 to 6 Mbit/s at
    /// a segment per round for its first 2.5 s.
    ///
    /// The clear queue is a hysteresis against a flow's own random losses: a loss empties
    /// the queue for a moment, and without it the loss matrix's lossy 250 and 600 ms cells
    /// read that as a faster link and probed into overflow (10 Mbit/s, 600 ms, 1 %: 97.4 →
    /// 92.9 % of the ceiling). Without a loss the queue of one budget is enough: behind the
    /// balancer's 40 ms target a queue of two budgets (47 ms at 2 Mbit/s) never stood, and
    /// after each rise of media-bulk-geo the flow waited out the rate window.
    ///
    /// Only where the budget is the flow's own queue rather than jitter (four times the
    /// jitter at least): with 10 ms of jitter on a 30 ms path a queue comes and goes at the
    /// same window, and the rule cost the loss matrix's jitter cells 68 → 54–59 % of the
    /// ceiling.
    fn outran(&self) -> bool {
        let Some(seen) = self.saturated_at else {
            return false;
        };
        let round = self.base_rtt.get().unwrap_or(self.params.rtt0);
        if self.now < seen + round || 4 * self.jitter() >= self.queue.budget() {
            return false;
        }
        // The window that made the queue at `at` is still out, and was not reduced since.
        let still_out = |at: Duration, window_bytes: u64| {
            self.reduced_at.is_none_or(|reduced| reduced < at) && self.cwnd_bytes >= window_bytes
        };
        let clear_queue_outran = self.clear_queue_at.is_some_and(|clear| {
            self.now <= clear + self.params.rate_window
                && still_out(clear, self.clear_queue_window_bytes)
        });
        let lossless_queue_outran = self.last_loss_at.is_none_or(|lost| lost < seen)
            && still_out(seen, self.saturated_window_bytes);
        clear_queue_outran || lossless_queue_outran
    }

    /// The last round's delivery rate over the capacity.
    pub(super) fn rate_share(&self) -> Option<f64> {
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
}
