//! Why lost packets were lost, told by someone who saw them lost: an instrument for studies,
//! not a part of the controller a quinn application runs.
//!
//! A loss classifier guesses from the queue and the loss pattern whether a loss was the
//! bottleneck's (a full buffer, an AQM) or the link's (corruption). A simulator knows. Given
//! that knowledge ([`HyblaConfig::loss_truth`](crate::HyblaConfig::loss_truth)), the
//! controller's rules run with a perfect classifier, and a study can separate what its
//! classifier costs from what its responses to the verdicts cost: the bound any classifier
//! works against.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::core::LossVerdict;

/// The fate of a connection's lost packets, from a record of its path (e.g. a simulator's drop
/// log), queried once per loss-detection batch.
pub trait LossTruth: Send + Sync + Debug {
    /// What happened to the packets sent after `after` (from the first, when `None`) and no
    /// later than `newest`, on the clock quinn's packet send times use: `Some(true)` where the
    /// bottleneck dropped one (a full buffer or an AQM), `Some(false)` where the only ones lost
    /// were corrupted on a link, `None` where none was lost (quinn declared packets lost that
    /// were not).
    fn congestion_between(&self, after: Option<Instant>, newest: Instant) -> Option<bool>;
}

/// One controller's reading of a [`LossTruth`]: each loss batch covers the packets sent after
/// the newest one the batches before it covered (quinn declares losses in packet-number order),
/// up to its own newest.
#[derive(Debug, Clone)]
pub(crate) struct TruthReader {
    truth: Arc<dyn LossTruth>,
    /// The newest send time the batches so far covered; before the first, an instant before
    /// the controller was built (`None` at the clock's start): a record kept for a flow that
    /// reconnects holds its earlier connections' drops too.
    covered_to: Option<Instant>,
}

impl TruthReader {
    /// A reader for a controller built at `epoch`, which sent nothing before it.
    pub(crate) fn new(truth: Arc<dyn LossTruth>, epoch: Instant) -> Self {
        Self {
            truth,
            covered_to: epoch.checked_sub(Duration::from_nanos(1)),
        }
    }

    /// The verdict on a batch whose newest packet was sent at `newest_sent`: congestion where
    /// the bottleneck dropped one of its packets, else random (corrupted, or not lost at all).
    pub(crate) fn verdict(&mut self, newest_sent: Instant) -> LossVerdict {
        let congestion = self.truth.congestion_between(self.covered_to, newest_sent);
        self.covered_to = Some(self.covered_to.map_or(newest_sent, |t| t.max(newest_sent)));
        match congestion {
            Some(true) => LossVerdict::Congestion,
            Some(false) | None => LossVerdict::Random,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A path record of drops at fixed send times (ms after `t0`), which also keeps the spans
    /// it was asked about.
    #[derive(Debug)]
    struct Record {
        t0: Instant,
        drops: Vec<(u64, bool)>,
        asked: Mutex<Vec<(Option<u64>, u64)>>,
    }

    impl LossTruth for Record {
        fn congestion_between(&self, after: Option<Instant>, newest: Instant) -> Option<bool> {
            let ms = |t: Instant| t.duration_since(self.t0).as_millis() as u64;
            let (after, newest) = (after.map(ms), ms(newest));
            self.asked.lock().unwrap().push((after, newest));
            let span: Vec<bool> = self
                .drops
                .iter()
                .filter(|(at, _)| after.is_none_or(|a| *at > a) && *at <= newest)
                .map(|(_, congestion)| *congestion)
                .collect();
            (!span.is_empty()).then(|| span.contains(&true))
        }
    }

    #[test]
    fn each_batch_is_judged_by_the_drops_since_the_batch_before_it() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let record = Arc::new(Record {
            t0,
            // An earlier connection's overflow at 3 ms; then, for the controller built at
            // 5 ms, a corrupted packet at 10 ms, an overflow at 20 and 25 ms with a corrupted
            // one between them, a corrupted one at 40 ms.
            drops: vec![
                (3, true),
                (10, false),
                (20, true),
                (22, false),
                (25, true),
                (40, false),
            ],
            asked: Mutex::new(Vec::new()),
        });
        let mut reader = TruthReader::new(record.clone(), at(5));
        assert_eq!(reader.verdict(at(10)), LossVerdict::Random);
        assert_eq!(reader.verdict(at(22)), LossVerdict::Congestion);
        // The overflow's packet at 25 ms, declared in a batch of its own.
        assert_eq!(reader.verdict(at(25)), LossVerdict::Congestion);
        // Declared lost but never dropped (reordering): not congestion.
        assert_eq!(reader.verdict(at(30)), LossVerdict::Random);
        assert_eq!(reader.verdict(at(40)), LossVerdict::Random);
        // A batch whose newest packet is older than one already covered (a later packet
        // number sent at the same instant) asks from where the batches got to.
        assert_eq!(reader.verdict(at(35)), LossVerdict::Random);
        assert_eq!(
            *record.asked.lock().unwrap(),
            [
                (Some(4), 10),
                (Some(10), 22),
                (Some(22), 25),
                (Some(25), 30),
                (Some(30), 40),
                (Some(40), 35)
            ]
        );
    }
}
