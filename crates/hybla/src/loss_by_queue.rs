//! How the loss rate varies with the queue a packet met: the evidence that tells an AQM's or a
//! shallow buffer's drops from random link loss once thresholds on the queue alone cannot.
//!
//! Random loss on a link does not care how full the bottleneck's queue is; a queue drop
//! happens only at some queue (drop-tail: at its top; RED: with a probability that rises from
//! its minimum threshold). So the flow counts the bytes delivered and the bytes lost at
//! each level of queue, both at the reading around the packet's send time (a delivery once the
//! packets sent just after it have been sampled; a loss batch at its newest packet's, an ACK
//! frame at its fastest packet's), and asks of a loss: were the packets sent at this queue or
//! a fuller one lost clearly more often than those sent at an emptier one? That is the idea of
//! \[Liu2003\] (the RTTs of lost packets against those of delivered ones, there with a hidden
//! Markov model) reduced to one one-sided test, and it scales with the path by construction:
//! no threshold is absolute, a 20 ms RED queue in front of a 600 ms flow and a 2 ms one at
//! 10 ms look alike. Where random loss dominates, the rates agree and the test stays quiet;
//! where there is no random loss, a handful of drops above an empty queue's clean record is
//! enough.

use std::collections::VecDeque;
use std::time::Duration;

/// Queue levels: `[0, 0.5 ms)`, then doublings from 0.5 ms; the last bin is open-ended
/// (≥ 1 s). A factor of two is as fine as the readings are: a queue reading is the minimum
/// over a filter window around the packet's send time.
const BINS: usize = 13;

/// Upper edge of the first bin.
const FIRST_EDGE: Duration = Duration::from_micros(500);

/// The counts halve every this long: long enough to hold a few random losses at 0.1 % on a
/// 10 Mbit/s link (20 s hold 20 000 packets), short enough to follow a path that changed.
pub const HALF_LIFE: Duration = Duration::from_secs(20);

/// The emptier levels must hold at least this many packets before their loss rate is trusted.
pub const MIN_BELOW_PACKETS: f64 = 200.0;

/// A loss is congestion when, under the emptier levels' loss rate (its upper bound, below),
/// the losses at its level or fuller would be at most this likely (with that rate doubled,
/// [`MIN_LOSS_RATE_RATIO`]). Low, because every loss is tested.
pub const SIGNIFICANCE: f64 = 0.001;

/// ... and only when they were lost at least this many times as often: a lone flow's own
/// dynamics tie its queue loosely to when it loses (it stops growing at a loss), so a
/// significant but small difference is no AQM.
pub const MIN_LOSS_RATE_RATIO: f64 = 2.0;

/// Lost packets added to the emptier levels' count before taking their rate (an upper
/// confidence bound: with none lost in n packets, 3 / n is the 95 % bound, the rule of three).
const BELOW_LOSS_PRIOR_PACKETS: f64 = 3.0;

/// Bytes sent and lost at each queue level, decaying with [`HALF_LIFE`].
#[derive(Debug, Clone)]
pub(crate) struct LossByQueue {
    /// Acknowledged bytes not yet counted, by send time: (send time, bytes). A delivered
    /// packet is counted at the same reading as a lost one, the queue around its send time,
    /// which needs the samples of packets sent a little after it.
    pending: VecDeque<(Duration, u64)>,
    /// Bytes acknowledged, per level.
    delivered: [f64; BINS],
    /// Bytes lost, per level.
    lost: [f64; BINS],
    /// When the counts were last decayed.
    decayed_at: Duration,
}

impl LossByQueue {
    pub(crate) fn new() -> Self {
        Self {
            pending: VecDeque::new(),
            delivered: [0.0; BINS],
            lost: [0.0; BINS],
            decayed_at: Duration::ZERO,
        }
    }

    /// The level a queue delay falls in.
    fn bin(queue: Duration) -> usize {
        if queue < FIRST_EDGE {
            return 0;
        }
        let doublings = (queue.as_secs_f64() / FIRST_EDGE.as_secs_f64()).log2();
        (1 + doublings.floor() as usize).min(BINS - 1)
    }

    fn decay(&mut self, now: Duration) {
        let elapsed = now.saturating_sub(self.decayed_at);
        if elapsed.is_zero() {
            return;
        }
        let factor = 0.5f64.powf(elapsed.as_secs_f64() / HALF_LIFE.as_secs_f64());
        for count in self.delivered.iter_mut().chain(self.lost.iter_mut()) {
            *count *= factor;
        }
        self.decayed_at = now;
    }

    /// `bytes` acknowledged, sent at `sent`; counted by [`Self::settle`].
    pub(crate) fn on_delivered(&mut self, sent: Duration, bytes: u64) {
        self.pending.push_back((sent, bytes));
    }

    /// Counts the acknowledged bytes sent before `settled`, at the queue `reading` gives for
    /// their send time (none: the packet is not counted).
    pub(crate) fn settle(
        &mut self,
        now: Duration,
        settled: Duration,
        reading: impl Fn(Duration) -> Option<Duration>,
    ) {
        self.decay(now);
        while let Some(&(sent, bytes)) = self.pending.front() {
            if sent >= settled {
                break;
            }
            self.pending.pop_front();
            if let Some(queue) = reading(sent) {
                self.delivered[Self::bin(queue)] += bytes as f64;
            }
        }
    }

    /// `bytes` declared lost at `now`, sent at a queue of `queue`.
    pub(crate) fn on_lost(&mut self, now: Duration, queue: Duration, bytes: u64) {
        self.decay(now);
        self.lost[Self::bin(queue)] += bytes as f64;
    }

    /// Whether packets sent at a queue of `queue` or more are lost clearly more often
    /// ([`MIN_LOSS_RATE_RATIO`] times, at [`SIGNIFICANCE`]) than those sent at an emptier one
    /// (packets of `mss_bytes`; a part of a packet lost counts as one). Counts the losses
    /// recorded so far, so record a loss before asking about it.
    pub(crate) fn fuller_queue_loses_more(&self, queue: Duration, mss_bytes: u64) -> bool {
        let level = Self::bin(queue);
        if level == 0 {
            return false;
        }
        let mss = mss_bytes.max(1) as f64;
        let packets = |counts: &[f64]| counts.iter().sum::<f64>() / mss;
        let (delivered_below, delivered_above) = self.delivered.split_at(level);
        let (lost_below, lost_above) = self.lost.split_at(level);
        let lost_below = packets(lost_below);
        let sent_below = packets(delivered_below) + lost_below;
        if sent_below < MIN_BELOW_PACKETS {
            return false;
        }
        let lost_above = packets(lost_above);
        let sent_above = packets(delivered_above) + lost_above;
        let rate_below = (lost_below + BELOW_LOSS_PRIOR_PACKETS) / sent_below;
        poisson_tail(
            sent_above * rate_below * MIN_LOSS_RATE_RATIO,
            lost_above.ceil() as u64,
        ) < SIGNIFICANCE
    }
}

/// P(X ≥ k) for X ~ Poisson(λ). Each term from its logarithm: e^−λ alone underflows above
/// λ ≈ 745, which a fast path's counts reach (at 100 Mbit/s the counts hold 300 000 packets).
pub(crate) fn poisson_tail(lambda: f64, k: u64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if lambda <= 0.0 {
        return 0.0;
    }
    let log_term = |j: u64| -lambda + j as f64 * lambda.ln() - ln_factorial(j);
    if k as f64 > lambda {
        // The upper tail directly: its terms fall by λ / (j + 1) < 1 from the first.
        let mut term = log_term(k).exp();
        let mut tail = term;
        let mut j = k;
        while term > tail * 1e-17 {
            j += 1;
            term *= lambda / j as f64;
            tail += term;
        }
        tail.min(1.0)
    } else {
        // At or below the mean the tail is at least about ½: 1 − P(X ≤ k − 1).
        let below: f64 = (0..k).map(|j| log_term(j).exp()).sum();
        (1.0 - below).max(0.0)
    }
}

/// ln(n!): summed up to 256, Stirling's series beyond (error below 1e-12 there).
fn ln_factorial(n: u64) -> f64 {
    if n <= 256 {
        return (2..=n).map(|j| (j as f64).ln()).sum();
    }
    let n = n as f64;
    n * n.ln() - n + 0.5 * (2.0 * std::f64::consts::PI * n).ln() + 1.0 / (12.0 * n)
        - 1.0 / (360.0 * n.powi(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1200;
    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn levels_double_from_half_a_millisecond() {
        assert_eq!(LossByQueue::bin(Duration::ZERO), 0);
        assert_eq!(LossByQueue::bin(Duration::from_micros(499)), 0);
        assert_eq!(LossByQueue::bin(Duration::from_micros(500)), 1);
        assert_eq!(LossByQueue::bin(MS(1)), 2);
        assert_eq!(LossByQueue::bin(MS(3)), 3);
        assert_eq!(LossByQueue::bin(MS(4)), 4);
        assert_eq!(LossByQueue::bin(MS(1024)), BINS - 1);
        assert_eq!(LossByQueue::bin(MS(60_000)), BINS - 1);
    }

    #[test]
    fn poisson_tail_matches_the_closed_forms() {
        // P(X ≥ 1) = 1 − e^−λ; P(X ≥ 2) = 1 − e^−λ (1 + λ).
        for lambda in [0.01f64, 0.6, 3.0] {
            let e = (-lambda).exp();
            assert!((poisson_tail(lambda, 1) - (1.0 - e)).abs() < 1e-12);
            assert!((poisson_tail(lambda, 2) - (1.0 - e * (1.0 + lambda))).abs() < 1e-12);
        }
        assert_eq!(poisson_tail(5.0, 0), 1.0);
        assert!(poisson_tail(0.5, 50) < 1e-40);
        // Beyond e^−λ's range the tails are tiny, not 1. P(X ≥ 800 | 746) ≈ 0.026 by the normal
        // approximation with continuity correction, 1 − Φ(53.5 / √746).
        assert!(poisson_tail(746.0, 2000) < 1e-100);
        assert!(poisson_tail(1000.0, 3000) < 1e-100);
        let near = poisson_tail(746.0, 800);
        assert!((near - 0.026).abs() < 0.004, "{near}");
        // At or below the mean the tail is about ½ or more.
        assert!(poisson_tail(2600.0, 2600) > 0.49);
        // Summed and Stirling's ln n! meet at 256.
        let summed: f64 = (2..=300u64).map(|j| (j as f64).ln()).sum();
        assert!((ln_factorial(300) - summed).abs() < 1e-9);
    }

    /// 10 000 packets at an empty queue and 2 000 at 20 ms: the loss pattern decides.
    fn with_losses(lost_empty: u64, lost_full: u64) -> LossByQueue {
        let mut m = LossByQueue::new();
        let now = MS(1000);
        m.on_delivered(MS(1), 10_000 * MSS);
        m.on_delivered(MS(2), 2_000 * MSS);
        m.settle(now, now, |sent| {
            Some(if sent == MS(1) {
                Duration::ZERO
            } else {
                MS(20)
            })
        });
        m.on_lost(now, Duration::ZERO, lost_empty * MSS);
        m.on_lost(now, MS(20), lost_full * MSS);
        m
    }

    #[test]
    fn drops_only_at_a_full_queue_are_congestion_after_a_few() {
        // No random loss: the emptier levels' bound is 3 / 10 000, so twice it over 2 000
        // packets is λ = 1.2; P(X ≥ 6) = 0.0015, P(X ≥ 7) = 0.0002.
        assert!(!with_losses(0, 6).fuller_queue_loses_more(MS(20), MSS));
        assert!(with_losses(0, 7).fuller_queue_loses_more(MS(20), MSS));
    }

    #[test]
    fn random_loss_at_every_level_is_not_congestion() {
        // 1 % everywhere: 100 of 10 000 below, 20 of 2 000 above (λ = 2 × 20.6).
        assert!(!with_losses(100, 20).fuller_queue_loses_more(MS(20), MSS));
        // Three times the rate (60 lost) is significant but not twice as often beyond doubt;
        // four and a half times (90) is.
        assert!(!with_losses(100, 60).fuller_queue_loses_more(MS(20), MSS));
        assert!(with_losses(100, 90).fuller_queue_loses_more(MS(20), MSS));
        // A loss at an empty queue has nothing emptier to compare with.
        assert!(!with_losses(0, 60).fuller_queue_loses_more(Duration::ZERO, MSS));
    }

    #[test]
    fn too_few_packets_at_emptier_levels_decide_nothing() {
        // 100 packets below, none lost; 1 000 delivered and 200 lost above: λ = 2 × 1 200 ×
        // 3 / 100 = 72 and 200 lost would be significant, but 100 packets are too few to trust.
        let mut m = LossByQueue::new();
        m.on_delivered(MS(1), 100 * MSS);
        m.on_delivered(MS(2), 1_000 * MSS);
        m.settle(MS(10), MS(10), |sent| {
            Some(if sent == MS(1) {
                Duration::ZERO
            } else {
                MS(20)
            })
        });
        m.on_lost(MS(10), MS(20), 200 * MSS);
        assert!(!m.fuller_queue_loses_more(MS(20), MSS));
        assert!(poisson_tail(72.0, 200) < SIGNIFICANCE);
    }

    #[test]
    fn counts_halve_every_half_life() {
        let mut m = LossByQueue::new();
        m.on_delivered(Duration::ZERO, 1000);
        m.settle(Duration::ZERO, MS(1), |_| Some(Duration::ZERO));
        m.settle(HALF_LIFE, MS(1), |_| Some(Duration::ZERO));
        assert!((m.delivered[0] - 500.0).abs() < 1e-9);
    }

    #[test]
    fn a_delivery_is_counted_once_its_send_time_is_settled_at_the_reading_then() {
        let mut m = LossByQueue::new();
        m.on_delivered(MS(100), 1200);
        m.on_delivered(MS(200), 2400);
        m.settle(MS(300), MS(150), |sent| Some(sent / 10));
        assert_eq!(m.delivered[LossByQueue::bin(MS(10))], 1200.0);
        assert_eq!(m.delivered.iter().sum::<f64>(), 1200.0);
        // No reading for its send time: not counted, not kept.
        m.settle(MS(300), MS(250), |_| None);
        assert_eq!(m.delivered.iter().sum::<f64>(), 1200.0);
        assert!(m.pending.is_empty());
    }
}
