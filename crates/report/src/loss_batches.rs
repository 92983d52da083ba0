//! `losses.csv`: every loss batch a classifying controller (Hybla) judged, one row each, with
//! what it saw (queue reading, budget, losses in a row, window, pipe, competing mode, loss
//! share) next to what the path did to the packets the batch declared (queue and AQM drops,
//! random losses). The instrument for studying a loss classifier's rules: a rule's accuracy on
//! recorded runs can be read off this file before it is built into the controller (which then
//! changes the runs; measure it again there).

use std::io::Write;

use serde::{Deserialize, Serialize};

use hybla::LossVerdict;
use sim::RunOutcome;

/// One CSV row; also what [`read_csv`] gives back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// Run index in summary.json's `runs`.
    pub run: usize,
    /// Controller label of the run.
    pub cc: String,
    /// Seed of the run.
    pub seed: u64,
    /// Flow name.
    pub flow: String,
    /// Send time of the batch's newest packet, seconds on the run's clock.
    pub sent_s: f64,
    /// Bytes the batch declared lost.
    pub lost_bytes: u64,
    /// `congestion` or `random`.
    pub verdict: String,
    /// The queue reading around the newest lost packet's send time, ms.
    pub queue_ms: f64,
    /// The flow's own queue budget, ms.
    pub budget_ms: f64,
    /// The highest queue reading of the last 10 s, ms.
    pub highest_queue_ms: f64,
    /// Packets lost in a row, at most.
    pub in_a_row: u64,
    /// Congestion window before the verdict, bytes.
    pub window_bytes: u64,
    /// Pipe estimate (windowed-max delivery rate × base RTT), bytes; empty before one.
    pub pipe_bytes: Option<u64>,
    /// Base RTT, ms; empty before a sample.
    pub base_rtt_ms: Option<f64>,
    /// Whether the controller judged the bottleneck shared.
    pub competing: bool,
    /// Whether the queue reading was the path's noise.
    pub queue_is_noise: bool,
    /// Share of lost bytes in the loss sample.
    pub loss_share: f64,
    /// The queue over a round around that send time, ms; empty without samples from then.
    pub queue_over_round_ms: Option<f64>,
    /// The standing queue when the batch was declared, ms.
    pub standing_queue_ms: f64,
    /// The path's queue and AQM drops among the batch's packets.
    pub queue_drops: u64,
    /// The path's random (link) losses among them.
    pub random_losses: u64,
}

/// Whether any flow of `runs` has loss batches to write.
pub fn has_loss_batches(runs: &[(&str, &RunOutcome)]) -> bool {
    runs.iter()
        .any(|(_, outcome)| outcome.flows.iter().any(|f| !f.loss_batches.is_empty()))
}

/// Writes every loss batch of every flow of `runs` (label, outcome), in run and flow order.
pub fn write_csv<W: Write>(writer: W, runs: &[(&str, &RunOutcome)]) -> Result<(), csv::Error> {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let mut csv = csv::Writer::from_writer(writer);
    for (run, (cc, outcome)) in runs.iter().enumerate() {
        for flow in &outcome.flows {
            for batch in &flow.loss_batches {
                let seen = &batch.seen;
                csv.serialize(Row {
                    run,
                    cc: cc.to_string(),
                    seed: outcome.seed,
                    flow: flow.name.clone(),
                    sent_s: batch.newest_sent.as_secs_f64(),
                    lost_bytes: batch.lost_bytes,
                    verdict: match batch.verdict {
                        LossVerdict::Congestion => "congestion",
                        LossVerdict::Random => "random",
                    }
                    .to_owned(),
                    queue_ms: ms(seen.queue),
                    budget_ms: ms(seen.budget),
                    highest_queue_ms: ms(seen.highest_queue),
                    in_a_row: seen.in_a_row,
                    window_bytes: seen.window_bytes,
                    pipe_bytes: seen.pipe_bytes,
                    base_rtt_ms: seen.base_rtt.map(ms),
                    competing: seen.competing,
                    queue_is_noise: seen.queue_is_noise,
                    loss_share: seen.loss_share,
                    queue_over_round_ms: seen.queue_over_round.map(ms),
                    standing_queue_ms: ms(seen.standing_queue),
                    queue_drops: batch.drops.congestion,
                    random_losses: batch.drops.random,
                })?;
            }
        }
    }
    csv.flush()?;
    Ok(())
}

/// Reads a losses.csv written by [`write_csv`].
pub fn read_csv<R: std::io::Read>(reader: R) -> Result<Vec<Row>, csv::Error> {
    csv::Reader::from_reader(reader).deserialize().collect()
}
