//! How a flow's losses were taken, against what happened to its packets on the path: the
//! instrument behind a loss classifier's accuracy.
//!
//! The path knows why every packet it lost was lost ([`netsim::DropCause`]: a full buffer or an
//! AQM drop is congestion, link corruption is random). A classifying controller (Hybla) says how
//! it took every loss-detection batch ([`hybla::LossRecord`]). quinn reports one batch per
//! loss detection with the send time of its newest packet only, so a lost packet is matched to
//! the first batch (in the order they happened) whose newest packet was sent no earlier than it:
//! loss detection declares packets in packet-number (send) order, so that batch is the one that
//! declared it. A drop no batch covers was never declared lost (an ACK-only packet, a packet of
//! a connection that ended, an MTU probe); a batch that covers no drop declared packets that
//! were not lost (reordering, an early timer), or only packets an earlier batch covered.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use hybla::LossVerdict;

/// A flow's losses: what the path did, what the controller said, and the two matched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LossAccounting {
    /// The data sender's packets the bottleneck refused because its buffer was full.
    pub queue_drops: u64,
    /// The data sender's packets the bottleneck's AQM (RED) dropped early.
    pub aqm_drops: u64,
    /// The data sender's packets corrupted on the link (random loss).
    pub random_losses: u64,
    /// How the controller took its loss batches; `None` when it does not classify losses
    /// (quinn's NewReno and Cubic take every loss as congestion).
    pub verdicts: Option<VerdictCounts>,
    /// The drops matched to the batches that declared them (simulator only: it has both the
    /// path's record and the controller's).
    pub matched: Option<MatchedLosses>,
}

/// Loss batches and their bytes, by verdict, and the time the verdicts' thresholds were a
/// shared bottleneck's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct VerdictCounts {
    /// Batches taken as congestion.
    pub congestion_batches: u64,
    /// Bytes in them.
    pub congestion_bytes: u64,
    /// Batches taken as random loss.
    pub random_batches: u64,
    /// Bytes in them.
    pub random_bytes: u64,
    /// Seconds the controller judged the bottleneck shared (Hybla's competing mode). Absent
    /// from summaries written before it was counted.
    #[serde(default)]
    pub shared_s: f64,
}

impl From<hybla::LossTally> for VerdictCounts {
    fn from(tally: hybla::LossTally) -> Self {
        Self {
            congestion_batches: tally.congestion_events,
            congestion_bytes: tally.congestion_bytes,
            random_batches: tally.random_events,
            random_bytes: tally.random_bytes,
            shared_s: tally.shared_time.as_secs_f64(),
        }
    }
}

/// Lost packets by cause and by how the batch that declared them was taken.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MatchedLosses {
    /// Queue and AQM drops in batches taken as congestion.
    pub queue_drops_as_congestion: u64,
    /// Queue and AQM drops in batches taken as random.
    pub queue_drops_as_random: u64,
    /// Queue and AQM drops no batch declared.
    pub queue_drops_undeclared: u64,
    /// Random losses in batches taken as random.
    pub random_losses_as_random: u64,
    /// Random losses in batches taken as congestion.
    pub random_losses_as_congestion: u64,
    /// Random losses no batch declared.
    pub random_losses_undeclared: u64,
    /// Batches that declared none of the path's drops.
    pub batches_without_drops: u64,
    /// Share of the declared queue drops taken as congestion (`None` with none declared).
    pub queue_drop_accuracy: Option<f64>,
    /// Share of the declared random losses taken as random (`None` with none declared).
    pub random_loss_accuracy: Option<f64>,
}

/// One packet the path lost: when its sender sent it, and whether the cause was congestion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drop {
    /// When the sender handed it to the path.
    pub sent_at: Duration,
    /// A full buffer or an AQM drop (true), or link corruption (false).
    pub congestion: bool,
}

/// One loss batch as the controller took it, on the run's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// Send time of its newest packet.
    pub newest_sent: Duration,
    /// How it was taken.
    pub verdict: LossVerdict,
}

/// A flow's drops as the path makes them, told to its controller
/// ([`hybla::LossTruth`], Hybla's `classifier = "truth"`): the simulator records each of the
/// data sender's drops here when the path makes it, before any acknowledgement can show it
/// missing, so a loss batch's verdict is the path's, not a guess.
#[derive(Debug, Default)]
pub struct PathLossTruth {
    /// (send time, congestion), in send order.
    drops: Mutex<Vec<(Instant, bool)>>,
}

impl PathLossTruth {
    /// Records a drop of a packet sent at `sent` (a full buffer or an AQM drop when
    /// `congestion`, else link corruption). Drops come in the order the path makes them, not
    /// always in send order (a corrupted packet is lost at the link, after the buffer that
    /// refused a later one).
    pub fn record(&self, sent: Instant, congestion: bool) {
        let mut drops = self.drops.lock().unwrap_or_else(|e| e.into_inner());
        let at = drops.partition_point(|(t, _)| *t <= sent);
        drops.insert(at, (sent, congestion));
    }
}

impl hybla::LossTruth for PathLossTruth {
    fn congestion_between(&self, after: Option<Instant>, newest: Instant) -> Option<bool> {
        let drops = self.drops.lock().unwrap_or_else(|e| e.into_inner());
        let start = after.map_or(0, |after| drops.partition_point(|(t, _)| *t <= after));
        let end = drops.partition_point(|(t, _)| *t <= newest);
        let span = drops.get(start..end).filter(|span| !span.is_empty())?;
        Some(span.iter().any(|(_, congestion)| *congestion))
    }
}

/// One loss batch of a flow's classifying controller, on the run's clock, with what the path
/// did to the packets it declared: a classifier's rules studied against the truth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchOutcome {
    /// Send time of its newest packet.
    pub newest_sent: Duration,
    /// Bytes it declared lost.
    pub lost_bytes: u64,
    /// How it was taken.
    pub verdict: LossVerdict,
    /// What the controller saw when it judged it.
    pub seen: hybla::LossContext,
    /// The path's drops it declared, by cause.
    pub drops: DropCounts,
}

/// Drops of the path by cause: a full buffer or an AQM (congestion), or link corruption.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropCounts {
    /// Queue and AQM drops.
    pub congestion: u64,
    /// Random (link) losses.
    pub random: u64,
}

/// The path's drops each batch declared, in batch order, and those no batch declared: `drops`
/// (any order) matched to `batches` (in the order they happened), each drop to the first batch
/// whose newest packet was sent no earlier than it.
pub fn drops_per_batch(drops: &[Drop], batches: &[Batch]) -> (Vec<DropCounts>, DropCounts) {
    let mut drops = drops.to_vec();
    drops.sort_by_key(|d| d.sent_at);
    let count = |drops: &[Drop]| DropCounts {
        congestion: drops.iter().filter(|d| d.congestion).count() as u64,
        random: drops.iter().filter(|d| !d.congestion).count() as u64,
    };
    let mut next = 0;
    let per_batch = batches
        .iter()
        .map(|batch| {
            let end = next + drops[next..].partition_point(|d| d.sent_at <= batch.newest_sent);
            let counts = count(&drops[next..end]);
            next = end;
            counts
        })
        .collect();
    (per_batch, count(&drops[next..]))
}

/// Matches `drops` (any order) to `batches` (in the order they happened).
pub fn match_losses(drops: &[Drop], batches: &[Batch]) -> MatchedLosses {
    let (per_batch, undeclared) = drops_per_batch(drops, batches);
    let mut m = MatchedLosses {
        queue_drops_undeclared: undeclared.congestion,
        random_losses_undeclared: undeclared.random,
        ..MatchedLosses::default()
    };
    for (batch, counts) in batches.iter().zip(per_batch) {
        if counts == DropCounts::default() {
            m.batches_without_drops += 1;
        }
        match batch.verdict {
            LossVerdict::Congestion => {
                m.queue_drops_as_congestion += counts.congestion;
                m.random_losses_as_congestion += counts.random;
            }
            LossVerdict::Random => {
                m.queue_drops_as_random += counts.congestion;
                m.random_losses_as_random += counts.random;
            }
        }
    }
    m.with_accuracies()
}

impl MatchedLosses {
    /// The counts of several runs together (seeds of one cell), with the accuracies over all
    /// of them: a share of the pooled losses, not a mean of per-run shares, so a run with
    /// two drops weighs as two drops.
    pub fn pooled(runs: impl IntoIterator<Item = MatchedLosses>) -> MatchedLosses {
        runs.into_iter()
            .fold(MatchedLosses::default(), |a, b| MatchedLosses {
                queue_drops_as_congestion: a.queue_drops_as_congestion
                    + b.queue_drops_as_congestion,
                queue_drops_as_random: a.queue_drops_as_random + b.queue_drops_as_random,
                queue_drops_undeclared: a.queue_drops_undeclared + b.queue_drops_undeclared,
                random_losses_as_random: a.random_losses_as_random + b.random_losses_as_random,
                random_losses_as_congestion: a.random_losses_as_congestion
                    + b.random_losses_as_congestion,
                random_losses_undeclared: a.random_losses_undeclared + b.random_losses_undeclared,
                batches_without_drops: a.batches_without_drops + b.batches_without_drops,
                queue_drop_accuracy: None,
                random_loss_accuracy: None,
            })
            .with_accuracies()
    }

    fn with_accuracies(mut self) -> MatchedLosses {
        let share = |right: u64, wrong: u64| {
            (right + wrong > 0).then(|| right as f64 / (right + wrong) as f64)
        };
        self.queue_drop_accuracy =
            share(self.queue_drops_as_congestion, self.queue_drops_as_random);
        self.random_loss_accuracy = share(
            self.random_losses_as_random,
            self.random_losses_as_congestion,
        );
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn drop(ms: u64, congestion: bool) -> Drop {
        Drop {
            sent_at: MS(ms),
            congestion,
        }
    }

    fn batch(ms: u64, verdict: LossVerdict) -> Batch {
        Batch {
            newest_sent: MS(ms),
            verdict,
        }
    }

    #[test]
    fn each_drop_goes_to_the_first_batch_that_reaches_its_send_time() {
        use LossVerdict::*;
        // Drops at 10 (queue), 12 (queue), 30 (random), 50 (random), 90 (queue, never declared).
        let drops = [
            drop(30, false),
            drop(10, true),
            drop(12, true),
            drop(50, false),
            drop(90, true),
        ];
        // Batch 1 declares 10 and 12 (newest 12) as congestion; batch 2 (newest 20) covers no
        // drop: a spurious declaration; batch 3 declares 30 and 50 as random; a late batch
        // whose newest packet is older than the last one's matches nothing.
        let batches = [
            batch(12, Congestion),
            batch(20, Random),
            batch(55, Random),
            batch(40, Congestion),
        ];
        let m = match_losses(&drops, &batches);
        assert_eq!(
            (
                m.queue_drops_as_congestion,
                m.queue_drops_as_random,
                m.queue_drops_undeclared
            ),
            (2, 0, 1)
        );
        assert_eq!(
            (
                m.random_losses_as_random,
                m.random_losses_as_congestion,
                m.random_losses_undeclared
            ),
            (2, 0, 0)
        );
        assert_eq!(m.batches_without_drops, 2);
        assert_eq!(m.queue_drop_accuracy, Some(1.0));
        assert_eq!(m.random_loss_accuracy, Some(1.0));
    }

    #[test]
    fn accuracy_counts_declared_losses_only() {
        use LossVerdict::*;
        let drops = [
            drop(1, true),
            drop(2, false),
            drop(3, false),
            drop(4, false),
        ];
        let batches = [batch(1, Random), batch(3, Congestion), batch(4, Random)];
        let m = match_losses(&drops, &batches);
        assert_eq!(m.queue_drop_accuracy, Some(0.0));
        // Random losses: 2 and 3 as congestion, 4 as random.
        assert_eq!(m.random_loss_accuracy, Some(1.0 / 3.0));
        let none = match_losses(&[], &batches);
        assert_eq!(
            (none.queue_drop_accuracy, none.random_loss_accuracy),
            (None, None)
        );
        assert_eq!(none.batches_without_drops, 3);
    }

    #[test]
    fn pooled_runs_share_their_losses_not_their_accuracies() {
        use LossVerdict::*;
        // Run 1: one queue drop taken as congestion. Run 2: three taken as random.
        let one = match_losses(&[drop(1, true)], &[batch(1, Congestion)]);
        let three = match_losses(
            &[drop(1, true), drop(2, true), drop(3, true), drop(4, false)],
            &[batch(3, Random), batch(4, Random)],
        );
        let pooled = MatchedLosses::pooled([one, three]);
        assert_eq!(
            (
                pooled.queue_drops_as_congestion,
                pooled.queue_drops_as_random
            ),
            (1, 3)
        );
        // 1 of 4, not the mean of 100 % and 0 %.
        assert_eq!(pooled.queue_drop_accuracy, Some(0.25));
        assert_eq!(pooled.random_loss_accuracy, Some(1.0));
        assert_eq!(pooled.batches_without_drops, 0);
        assert_eq!(MatchedLosses::pooled([]).queue_drop_accuracy, None);
    }
}
