//! How the controller takes a loss: the classifier (congestion or random loss, from the queue
//! at the lost packet's send time and the recent loss share) and what it keeps of its verdicts.

use std::time::Duration;

use super::Hybla;
use super::params::{
    CONGESTION_LOSSES_IN_A_ROW, Growth, LOSS_RATE_SAMPLE_PACKETS, LossClassifier,
    NOISE_RULES_MAX_RHO, RANDOM_LOSS_COUNT_SIGNIFICANCE, RANDOM_LOSS_EXPECTED_MAX_RATE,
    RANDOM_LOSS_MAX_RATE,
};
use crate::loss_by_queue::poisson_tail;

/// How the controller took a loss: the answer its loss classifier gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LossVerdict {
    /// The bottleneck is overloaded: the window is reduced (or already was, within the
    /// current recovery period or by start-up's drain).
    Congestion,
    /// A random (link) loss: the window stays.
    Random,
}

/// Loss-detection batches and their bytes, by verdict, since the connection began, and how
/// long the controller judged the bottleneck shared (the thresholds its verdicts used).
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
    /// Time in the competing mode (up to the last ACK frame): a lone
    /// flow that spends much of its run there reads its own path's noise as a neighbour's
    /// queue (reports/hybla-friendliness: 97 % of `leo-starlink`).
    pub shared_time: Duration,
}

/// One loss-detection batch as the controller took it. Built by the controller only; it may
/// gain fields (what the classifier saw), hence `#[non_exhaustive]`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct LossRecord {
    /// Send time of the newest packet in the batch (quinn reports no other), since the
    /// controller's epoch.
    pub sent: Duration,
    /// Bytes declared lost in the batch.
    pub lost_bytes: u64,
    /// How it was taken.
    pub verdict: LossVerdict,
    /// What the classifier saw, for studies of its rules against the path's record.
    pub seen: LossContext,
}

/// What the controller knew when it judged a loss batch: the classifier's inputs and the state
/// its rules read. A study matches these against why the packets were really lost (a
/// simulator's record) to see which signal tells the two causes apart, and where.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct LossContext {
    /// The queue reading around the newest lost packet's send time (or the latest one).
    pub queue: Duration,
    /// The flow's own queue budget then.
    pub budget: Duration,
    /// The highest queue reading of the last 10 s.
    pub highest_queue: Duration,
    /// Packets lost in a row, at most, counted as the batch arrived.
    pub in_a_row: u64,
    /// The congestion window before the verdict, bytes.
    pub window_bytes: u64,
    /// The pipe estimate (windowed-max delivery rate × base RTT), bytes.
    pub pipe_bytes: Option<u64>,
    /// The base RTT.
    pub base_rtt: Option<Duration>,
    /// Whether the flow judged the bottleneck shared (the competing mode).
    pub competing: bool,
    /// Whether the queue reading was the path's noise (see the classifier's noise rules).
    pub queue_is_noise: bool,
    /// Share of lost bytes in the loss sample.
    pub loss_share: f64,
    /// The queue over a whole round around the newest lost packet's send time (the smallest
    /// sample of packets sent within half a base RTT of it), where samples from then are kept:
    /// a reading with more of the jitter stripped, for comparison with `queue`.
    pub queue_over_round: Option<Duration>,
    /// The standing queue (smallest sample of the last round) when the batch was declared.
    pub standing_queue: Duration,
}

impl Hybla {
    /// What the classifier sees of a batch whose newest packet, sent at `sent`, met `queue` and which lost
    /// `in_a_row` packets in a row: recorded with its verdict where asked.
    pub(super) fn loss_context(
        &self,
        sent: Duration,
        queue: Duration,
        in_a_row: u64,
    ) -> LossContext {
        let base = self.base_rtt.get().unwrap_or(self.params.rtt0);
        LossContext {
            queue_over_round: self.queue.around_send_time(sent, base, base / 2),
            standing_queue: self.queue.standing(),
            queue,
            budget: self.queue.budget(),
            highest_queue: self.queue.highest(),
            in_a_row,
            window_bytes: self.cwnd_bytes,
            pipe_bytes: self.pipe_bytes(),
            base_rtt: self.base_rtt.get(),
            competing: self.competing(),
            queue_is_noise: self.queue_reading_is_noise(),
            loss_share: self.loss_rate(),
        }
    }

    pub(super) fn record_loss(
        &mut self,
        sent: Duration,
        lost_bytes: u64,
        verdict: LossVerdict,
        seen: LossContext,
    ) {
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
                seen,
            });
        }
    }

    /// How a loss batch whose newest packet met a queue of `queue` (the reading around its send
    /// time, or the latest one when none is kept from then) and which lost `in_a_row` packets
    /// in a row at most is taken; `truth`, where the caller knows it, instead of the
    /// classifier's guess.
    pub(super) fn classify(
        &self,
        queue: Duration,
        persistent: bool,
        in_a_row: u64,
        truth: Option<LossVerdict>,
    ) -> LossVerdict {
        // ρ = 1 (RTT ≤ RTT0): Hybla is NewReno ([Caini2004] §3.1), and NewReno takes every loss
        // for congestion. The random-loss extension is for paths that Hybla compensates.
        if self.params.growth == Growth::Seed || persistent || self.rho <= 1.0 {
            return LossVerdict::Congestion;
        }
        if let Some(verdict) = truth {
            return verdict;
        }
        // A loss share above what random loss on a satellite link reaches: a policer, or an
        // overflow too short for the RTT samples to show; or, over a sample large enough to
        // tell, clearly more losses than such random loss gives (an AQM dropping below any
        // queue threshold).
        if self.loss_rate() > RANDOM_LOSS_MAX_RATE || self.loss_count_beyond_random() {
            return LossVerdict::Congestion;
        }
        // Where the queue cannot be read for the path's noise, losses in a row are congestion:
        // random loss at rate p loses a lost packet's neighbour with probability p only, and
        // an overflow drops the packets that reach a full buffer together (ZigZag [Cen2003]).
        // With 10 ms of mean jitter on a 30 ms path (the loss matrix) the queue reading is
        // noise and 39–47 % of the overflow drops were taken as congestion; with this rule
        // 84–97 %, and the flow's own overflow drops fell by half. Not where the queue can be
        // read: ungated (and counting declared losses only), the rule took the 600 ms, 1 % cell
        // from 94.9 to 87.6 % of the ceiling (two random losses in a row, 1 % of the time, each
        // cut slow to regrow), and a
        // Gilbert-Elliott channel loses in bursts (draft-kuhn's: 1.55 packets on average).
        if in_a_row >= CONGESTION_LOSSES_IN_A_ROW && self.queue_reading_is_noise() {
            return LossVerdict::Congestion;
        }
        // Next to a flow whose window grows (its growth measured from the shared queue), a
        // loss is congestion wherever it met the queue: that neighbour halves on its own
        // random losses, and a flow that does not would take its share (reports/
        // hybla-friendliness §7, K6). A lone flow never measures another's growth, so its
        // loss tolerance stays.
        if self.competing() && self.others_growth_bytes_per_s > 0.0 {
            return LossVerdict::Congestion;
        }
        // Next to a credible competitor (see `CREDIBLE_COMPETITION_MIN_SHARE`), a loss at a
        // queue of at least one budget is congestion too: an AQM drops while its average is
        // low, below a quarter of the highest queue recently seen (the regrowth's and
        // start-up's peaks), and RED's drops behind a quarter-BDP buffer at 100 ms were 40–68 %
        // taken as congestion (62–80 % with this rule; neighbours harmed in 7 cells instead of
        // 9). A lone flow behind drop-tail does not compete credibly (the loss matrix is
        // unchanged); alone behind RED with 1 % loss it can (paper-linkloss at 100 ms, where
        // this rule took 7.04 back to 7.44 Mbit/s).
        if self.competing() && self.competition_credible && queue >= self.queue.budget() {
            return LossVerdict::Congestion;
        }
        // Above the threshold for this path's queue, or, if asked, where the flow's own record
        // shows a fuller queue losing clearly more than an emptier one (an AQM's drops below
        // any threshold, a shallow buffer's top).
        if queue >= self.queue.congestion_threshold(self.competing())
            || (self.params.loss_classifier == LossClassifier::LossByQueue
                && self
                    .loss_by_queue
                    .fuller_queue_loses_more(queue, self.mss_bytes))
        {
            LossVerdict::Congestion
        } else {
            LossVerdict::Random
        }
    }

    /// Whether the queue reading is the path's noise and the flow's alone: the budget is the
    /// path's jitter, the reading was noisy recently, the noise rules apply (ρ below
    /// [`NOISE_RULES_MAX_RHO`]) and no competitor was found.
    fn queue_reading_is_noise(&self) -> bool {
        self.queue.budget_is_jitter()
            && self.noisy_recently()
            && self.rho < NOISE_RULES_MAX_RHO
            && !self.competing()
    }

    /// The loss sample: bytes delivered and lost over the current round and as many past ones
    /// as it takes to count [`LOSS_RATE_SAMPLE_PACKETS`], and never over fewer (at least one
    /// round, at most [`LOSS_RATE_ROUNDS`](super::params::LOSS_RATE_ROUNDS)): on a 30 ms path
    /// two rounds hold 50 packets, and three random losses in them would read as 6 %.
    fn loss_sample_bytes(&self) -> (u64, u64) {
        let sample = LOSS_RATE_SAMPLE_PACKETS * self.mss_bytes;
        let (mut delivered, mut lost) = (self.round_delivered_bytes, self.round_lost_bytes);
        for (i, &(d, l)) in self.past_rounds.iter().rev().enumerate() {
            if i > 0 && delivered + lost >= sample {
                break;
            }
            delivered += d;
            lost += l;
        }
        (delivered, lost)
    }

    /// Share of lost bytes in the loss sample (`loss_sample_bytes`).
    fn loss_rate(&self) -> f64 {
        let sample = LOSS_RATE_SAMPLE_PACKETS * self.mss_bytes;
        let (delivered, lost) = self.loss_sample_bytes();
        // Before the connection has carried a full sample, the packets not yet seen count as
        // delivered: one random loss among the first ten acknowledged packets is not a 10 %
        // loss rate (a resumed connection took the first loss of its jump, 1 % random loss,
        // for a policer and retreated). A policer still shows: more than 5 % of a sample,
        // 11 packets, lost.
        lost as f64 / (delivered + lost).max(sample) as f64
    }

    /// Whether the loss sample holds more losses than random loss at
    /// [`RANDOM_LOSS_EXPECTED_MAX_RATE`] would give but for one time in
    /// [`RANDOM_LOSS_COUNT_SIGNIFICANCE`]⁻¹ (a one-sided Poisson test, in packets).
    fn loss_count_beyond_random(&self) -> bool {
        let (delivered, lost) = self.loss_sample_bytes();
        let mss = self.mss_bytes.max(1) as f64;
        let packets = (delivered + lost) as f64 / mss;
        let lost_packets = (lost as f64 / mss).round() as u64;
        poisson_tail(packets * RANDOM_LOSS_EXPECTED_MAX_RATE, lost_packets)
            < RANDOM_LOSS_COUNT_SIGNIFICANCE
    }
}
