//! What the media/bulk evaluation reads off one run: per capacity step, how fast the
//! bottleneck fills after a rise, the frames late once the step has settled, the media's
//! sending rate and goodput against the capacity, and the share our connections hold next to
//! a competing download; over the run, RFC 8868's metrics (media sending rate and goodput at
//! 200 ms, frame-delay percentiles, loss, utilization). Computed once here so that the study
//! (`studies::media_bulk`, which holds the targets and their thresholds) and any later report
//! read the same numbers.
//!
//! "Ours" are the flows that carry media or bulk applications; any other flow (a perf
//! download) is a competitor.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use netsim::LinkConfig;
use sim::apps::WRITTEN_BUCKET;
use sim::apps::media::{DelayPercentiles, FrameRecord, MediaReport};
use sim::{FlowOutcome, RunOutcome};

use crate::media::APP_THROUGHPUT_WINDOW;
use crate::periods::{self, delivered_at, first_window_reaching, frames_in};

/// A rise of capacity counts as filled once the bottleneck serializes this share of the new
/// capacity over [`RAMP_WINDOW`].
pub const RAMP_SHARE: f64 = 0.9;

/// The window of the ramp's rate: the media's recovery window, so that a rise and a drop are
/// judged over the same stretch.
pub const RAMP_WINDOW: Duration = periods::RECOVERY_WINDOW;

/// The first part of a capacity step that the "settled" measures leave out: the time an
/// adaptive source is given to find the new rate.
pub const SETTLE_TIME: Duration = Duration::from_secs(2);

/// The percentile of the media's 200 ms goodput reported as its low point (RFC 8868 asks for
/// rates at 200 ms; their mean hides the dips a viewer sees).
pub const LOW_GOODPUT_PERCENTILE: f64 = 0.1;

/// One run, evaluated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// Per stretch of constant forward capacity, in time order.
    pub periods: Vec<PeriodEvaluation>,
    /// RFC 8868's metrics over the run.
    pub rfc8868: Rfc8868,
    /// Next to a competing download, from its start to its end; absent without one.
    pub competition: Option<Competition>,
}

/// One capacity step of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeriodEvaluation {
    /// Start, seconds since the start of the run.
    pub start_s: f64,
    /// End, seconds.
    pub end_s: f64,
    /// Forward bottleneck rate, bit/s.
    pub capacity_bps: f64,
    /// Nominal rate of our media sources together, bit/s (what "capacity ≥ k × the media
    /// rate" compares with).
    pub media_rate_bps: f64,
    /// Bytes the bottleneck serialized × 8 ÷ (capacity × length) (all flows); null when the
    /// backend did not sample the link.
    pub utilization: Option<f64>,
    /// A step that raises the capacity: seconds from the step until the bottleneck first
    /// serialized [`RAMP_SHARE`] of the new capacity over [`RAMP_WINDOW`]; null (inside) if
    /// it never did within the step; absent for other steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_s: Option<Option<f64>>,
    /// Our media frames captured in the step (as `periods`: frames that could not arrive
    /// before the end of the run left out).
    pub frames: u64,
    /// Of those, frames that did not arrive by their deadline (late or never).
    pub late_frames: u64,
    /// Our media frames captured after the first [`SETTLE_TIME`] of the step.
    pub settled_frames: u64,
    /// Of those, frames that did not arrive by their deadline.
    pub settled_late_frames: u64,
    /// Our media's bytes handed to the transport after the first [`SETTLE_TIME`] × 8 ÷ that
    /// time, bit/s: the sending rate an adaptive source settled on. Null where the sender's
    /// writes were not recorded.
    pub settled_media_sent_bps: Option<f64>,
    /// Our media's bytes received after the first [`SETTLE_TIME`] × 8 ÷ that time, bit/s.
    pub settled_media_goodput_bps: f64,
    /// Our media's goodput over the step, bit/s.
    pub media_goodput_bps: f64,
    /// Our bulk's goodput over the step, bit/s.
    pub bulk_goodput_bps: f64,
    /// Seconds of the step during which a competitor ran.
    pub competed_s: f64,
    /// While a competitor ran: IP bytes of our flows' packets delivered × 8 ÷ (capacity ×
    /// that time): our share of the link. Absent when no competitor ran in the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ours_share: Option<f64>,
    /// While a competitor ran: our media's goodput ÷ min(its nominal rate, our fair share of
    /// the capacity, i.e. capacity × our flows ÷ all flows running). 1 is all the media could
    /// fairly get; near 0 is starved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_fair_ratio: Option<f64>,
}

/// RFC 8868 §4's metrics, as they apply to media and bulk on QUIC: rates at 200 ms, the
/// frames' one-way delays (a frame is what a viewer waits for; packets carry no timestamps
/// here), losses and the link's utilization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rfc8868 {
    /// Our media's bytes handed to the transport × 8 ÷ the time since its first capture,
    /// bit/s (its sending rate); null where the sender's writes were not recorded.
    pub media_sent_bps: Option<f64>,
    /// Our media's goodput since its first capture, bit/s.
    pub media_goodput_bps: f64,
    /// The [`LOW_GOODPUT_PERCENTILE`] of our media's goodput over 200 ms windows, bit/s.
    pub media_goodput_low_bps: f64,
    /// Our bulk's goodput over the run, bit/s.
    pub bulk_goodput_bps: f64,
    /// One-way delays of our media frames that arrived, ms.
    pub frame_delay_ms: DelayPercentiles,
    /// Our media frames that did not arrive by their deadline, of all captured (frames that
    /// could not arrive before the end of the run left out).
    pub late_share: f64,
    /// Our media frames a decoder could show (on time, and so was the keyframe they depend
    /// on: `periods::decodable_in`), of all captured. The late share counts a frame on time
    /// even when its keyframe was late, and an order that lets small frames overtake a
    /// keyframe scores well on it while the video shows nothing.
    #[serde(default)]
    pub decodable_share: f64,
    /// Packets our data senders declared lost ÷ packets they sent.
    pub loss_share: f64,
    /// Bytes the bottleneck serialized × 8 ÷ its capacity over the run (all flows).
    pub utilization: f64,
}

/// Our connections next to a competing download.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Competition {
    /// The first competitor's start, seconds.
    pub from_s: f64,
    /// The last competitor's end (or the end of the run), seconds.
    pub to_s: f64,
    /// IP bytes of our flows' packets delivered between the two × 8 ÷ the capacity over
    /// that time.
    pub ours_share: f64,
}

/// Whether a flow is one of ours: it carries media or bulk.
fn is_ours(flow: &FlowOutcome) -> bool {
    flow.apps
        .iter()
        .any(|a| a.kind == sim::apps::media::KIND || a.kind == sim::apps::bulk::KIND)
}

/// When a flow runs: its start to its end (or the end of the run).
fn running(flow: &FlowOutcome, end: Duration) -> (Duration, Duration) {
    (flow.start, flow.ended_at.unwrap_or(end).min(end))
}

/// The length of the overlap of two intervals.
fn overlap((a0, a1): (Duration, Duration), (b0, b1): (Duration, Duration)) -> Duration {
    a1.min(b1).saturating_sub(a0.max(b0))
}

/// The mean rate of a series of byte counts per bucket (bucket `i` covers
/// `[i × bucket, (i + 1) × bucket)`) over `[from, to)`, bit/s: buckets that straddle an end
/// count in proportion to their overlap.
pub fn bucket_rate_bps(buckets: &[u64], bucket: Duration, from: Duration, to: Duration) -> f64 {
    if to <= from || bucket.is_zero() {
        return 0.0;
    }
    let width = bucket.as_secs_f64();
    let (from_s, to_s) = (from.as_secs_f64(), to.as_secs_f64());
    let bits: f64 = buckets
        .iter()
        .enumerate()
        .map(|(i, &bytes)| {
            let (b0, b1) = (i as f64 * width, (i + 1) as f64 * width);
            let share = ((b1.min(to_s) - b0.max(from_s)) / width).max(0.0);
            bytes as f64 * 8.0 * share
        })
        .sum();
    bits / (to_s - from_s)
}

/// The nearest-rank `p` quantile (0 < p ≤ 1) of `values`; 0 when empty.
pub fn quantile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The value at `t` of a cumulative series sampled at `(time, value)` points in time order:
/// the last point at or before `t` (0 before any).
fn at(points: &[(Duration, u64)], t: Duration) -> u64 {
    points
        .iter()
        .rfind(|&&(pt, _)| pt <= t)
        .map_or(0, |&(_, v)| v)
}

/// The pieces of one run the evaluation reads, gathered once.
struct Run<'a> {
    outcome: &'a RunOutcome,
    /// (flow, app, report) of our media applications.
    media: Vec<(usize, usize, MediaReport)>,
    /// (flow, app) of our bulk applications.
    bulk: Vec<(usize, usize)>,
    /// Our flows' IP bytes delivered, summed, at each sample tick.
    ours_ip: Vec<(Duration, u64)>,
    /// When each competitor ran.
    competitors: Vec<(Duration, Duration)>,
    /// How many of our flows there are.
    ours: usize,
    /// The forward link's constant-rate stretches: (start, end, bit/s).
    steps: Vec<(Duration, Duration, u64)>,
}

impl<'a> Run<'a> {
    fn of(outcome: &'a RunOutcome, forward: &LinkConfig) -> Self {
        let mut media = Vec::new();
        let mut bulk = Vec::new();
        let mut competitors = Vec::new();
        let mut ours = 0;
        for (f, flow) in outcome.flows.iter().enumerate() {
            if !is_ours(flow) {
                competitors.push(running(flow, outcome.end_time));
                continue;
            }
            ours += 1;
            for (a, app) in flow.apps.iter().enumerate() {
                if let Some(report) = MediaReport::of(app) {
                    media.push((f, a, report));
                } else if app.kind == sim::apps::bulk::KIND {
                    bulk.push((f, a));
                }
            }
        }
        let mut ours_ip: Vec<(Duration, u64)> = Vec::new();
        for sample in &outcome.samples {
            if !is_ours(&outcome.flows[sample.flow]) {
                continue;
            }
            match ours_ip.last_mut() {
                Some((t, bytes)) if *t == sample.t => *bytes += sample.received_ip_bytes,
                _ => ours_ip.push((sample.t, sample.received_ip_bytes)),
            }
        }
        Run {
            outcome,
            media,
            bulk,
            ours_ip,
            competitors,
            ours,
            steps: periods::capacity_steps(forward, outcome.end_time),
        }
    }

    /// Bytes the listed applications received in `[from, to)`.
    fn received(
        &self,
        apps: impl Iterator<Item = (usize, usize)>,
        from: Duration,
        to: Duration,
    ) -> u64 {
        let samples = &self.outcome.app_samples;
        apps.map(|(f, a)| delivered_at(samples, f, a, to) - delivered_at(samples, f, a, from))
            .sum()
    }

    fn media_apps(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.media.iter().map(|&(f, a, _)| (f, a))
    }

    /// Our media's bytes handed to the transport in `[from, to)` × 8 ÷ its length; None if
    /// any media sender's writes were not recorded.
    fn media_sent_bps(&self, from: Duration, to: Duration) -> Option<f64> {
        if self.media.is_empty()
            || self
                .media
                .iter()
                .any(|(_, _, m)| m.written_bytes_per_bucket.is_empty())
        {
            return None;
        }
        Some(
            self.media
                .iter()
                .map(|(_, _, m)| {
                    bucket_rate_bps(&m.written_bytes_per_bucket, WRITTEN_BUCKET, from, to)
                })
                .sum(),
        )
    }

    /// Our media frames captured in `[from, to)` and how many missed their deadline.
    fn frames(&self, from: Duration, to: Duration) -> (u64, u64) {
        self.media.iter().fold((0, 0), |(n, late), (_, _, m)| {
            let (frames, missed) = frames_in(m, from, to, self.outcome.end_time);
            (n + frames, late + missed)
        })
    }

    fn period(&self, period: &periods::Period, increase: bool) -> PeriodEvaluation {
        let from = Duration::from_secs_f64(period.start_s);
        let to = Duration::from_secs_f64(period.end_s);
        let length = (to - from).as_secs_f64();
        let capacity_bps = period.capacity_bps;
        let ramp_s = increase.then(|| {
            let link: Vec<(Duration, u64)> = self
                .outcome
                .link_samples
                .iter()
                .map(|s| (s.t, s.forward_serialized_bytes))
                .collect();
            first_window_reaching(&link, from, to, RAMP_WINDOW, RAMP_SHARE * capacity_bps)
                .map(|t| (t - from).as_secs_f64())
        });
        let (frames, late_frames) = self.frames(from, to);
        let settled = (from + SETTLE_TIME).min(to);
        let (settled_frames, settled_late_frames) = self.frames(settled, to);
        let settled_length = (to - settled).as_secs_f64();
        let rate = |bytes: u64, seconds: f64| {
            if seconds > 0.0 {
                bytes as f64 * 8.0 / seconds
            } else {
                0.0
            }
        };
        let media_rate_bps = self
            .media
            .iter()
            .map(|(_, _, m)| m.bitrate_bps as f64)
            .sum::<f64>();
        // While a competitor ran in the step: from its (earliest) start in the step to its
        // (latest) end in it.
        let competed: Vec<(Duration, Duration)> = self
            .competitors
            .iter()
            .filter(|&&c| !overlap(c, (from, to)).is_zero())
            .map(|&(c0, c1)| (c0.max(from), c1.min(to)))
            .collect();
        let competed_from = competed.iter().map(|c| c.0).min();
        let competed_to = competed.iter().map(|c| c.1).max();
        let (competed_s, ours_share, media_fair_ratio) = match (competed_from, competed_to) {
            (Some(c0), Some(c1)) if c1 > c0 => {
                let seconds = (c1 - c0).as_secs_f64();
                let ours_bits = (at(&self.ours_ip, c1) - at(&self.ours_ip, c0)) as f64 * 8.0;
                let flows = (self.ours + competed.len()) as f64;
                let fair_bps = capacity_bps * self.ours as f64 / flows;
                let media_bps = rate(self.received(self.media_apps(), c0, c1), seconds);
                let demand_bps = media_rate_bps.min(fair_bps);
                (
                    seconds,
                    Some(ours_bits / (capacity_bps * seconds)),
                    (demand_bps > 0.0).then(|| media_bps / demand_bps),
                )
            }
            _ => (0.0, None, None),
        };
        PeriodEvaluation {
            start_s: period.start_s,
            end_s: period.end_s,
            capacity_bps,
            media_rate_bps,
            utilization: period.utilization,
            ramp_s,
            frames,
            late_frames,
            settled_frames,
            settled_late_frames,
            settled_media_sent_bps: self.media_sent_bps(settled, to),
            settled_media_goodput_bps: rate(
                self.received(self.media_apps(), settled, to),
                settled_length,
            ),
            media_goodput_bps: rate(self.received(self.media_apps(), from, to), length),
            bulk_goodput_bps: rate(self.received(self.bulk.iter().copied(), from, to), length),
            competed_s,
            ours_share,
            media_fair_ratio,
        }
    }

    fn rfc8868(&self) -> Rfc8868 {
        let end = self.outcome.end_time;
        let media_from = self
            .media
            .iter()
            .map(|(_, _, m)| Duration::from_secs_f64(m.first_capture_s))
            .min()
            .unwrap_or(Duration::ZERO);
        let media_seconds = (end.saturating_sub(media_from)).as_secs_f64();
        let per_second = |bytes: u64, seconds: f64| {
            if seconds > 0.0 {
                bytes as f64 * 8.0 / seconds
            } else {
                0.0
            }
        };
        // Our media's bytes received at each tick, summed over its applications.
        let mut media_points: Vec<(Duration, u64)> = Vec::new();
        for s in &self.outcome.app_samples {
            if !self
                .media
                .iter()
                .any(|&(f, a, _)| f == s.flow && a == s.app)
            {
                continue;
            }
            match media_points.last_mut() {
                Some((t, bytes)) if *t == s.t => *bytes += s.delivered_bytes,
                _ => media_points.push((s.t, s.delivered_bytes)),
            }
        }
        let windows: Vec<f64> =
            crate::timeseries::sliding_rate_bps(&media_points, APP_THROUGHPUT_WINDOW)
                .into_iter()
                .zip(&media_points)
                .filter(|&(_, &(t, _))| t >= media_from + APP_THROUGHPUT_WINDOW)
                .map(|(bps, _)| bps)
                .collect();
        let frames: Vec<FrameRecord> = self
            .media
            .iter()
            .flat_map(|(_, _, m)| m.frames.iter().cloned())
            .collect();
        let delays_ms: Vec<f64> = frames
            .iter()
            .map(|f| f.delay().as_secs_f64() * 1e3)
            .collect();
        let (all_frames, late) = self.frames(Duration::ZERO, end);
        let decodable: u64 = self
            .media
            .iter()
            .map(|(_, _, m)| periods::decodable_in(m, Duration::ZERO, end, self.outcome.end_time))
            .sum();
        let (lost, sent) = self
            .outcome
            .flows
            .iter()
            .filter(|f| is_ours(f))
            .fold((0, 0), |(l, s), f| {
                (l + f.sender.lost_packets, s + f.sender.sent_packets)
            });
        Rfc8868 {
            media_sent_bps: self.media_sent_bps(media_from, end),
            media_goodput_bps: per_second(
                self.received(self.media_apps(), media_from, end),
                media_seconds,
            ),
            media_goodput_low_bps: quantile(&windows, LOW_GOODPUT_PERCENTILE),
            bulk_goodput_bps: per_second(
                self.received(self.bulk.iter().copied(), Duration::ZERO, end),
                end.as_secs_f64(),
            ),
            frame_delay_ms: DelayPercentiles::of(&delays_ms),
            late_share: if all_frames > 0 {
                late as f64 / all_frames as f64
            } else {
                0.0
            },
            decodable_share: if all_frames > 0 {
                decodable as f64 / all_frames as f64
            } else {
                0.0
            },
            loss_share: if sent > 0 {
                lost as f64 / sent as f64
            } else {
                0.0
            },
            utilization: if self.outcome.forward_capacity_bits > 0.0 {
                self.outcome.forward_link.serialized_bytes as f64 * 8.0
                    / self.outcome.forward_capacity_bits
            } else {
                0.0
            },
        }
    }

    fn competition(&self) -> Option<Competition> {
        let from = self.competitors.iter().map(|c| c.0).min()?;
        let to = self.competitors.iter().map(|c| c.1).max()?;
        if to <= from {
            return None;
        }
        let ours_bits = (at(&self.ours_ip, to) - at(&self.ours_ip, from)) as f64 * 8.0;
        let capacity_bits = self.capacity_bits(from, to);
        Some(Competition {
            from_s: from.as_secs_f64(),
            to_s: to.as_secs_f64(),
            ours_share: if capacity_bits > 0.0 {
                ours_bits / capacity_bits
            } else {
                0.0
            },
        })
    }

    /// Bits the forward bottleneck could carry in `[from, to)`.
    fn capacity_bits(&self, from: Duration, to: Duration) -> f64 {
        self.steps
            .iter()
            .map(|&(a, b, rate)| overlap((a, b), (from, to)).as_secs_f64() * rate as f64)
            .sum()
    }
}

/// Evaluates a run whose forward link is `forward`; None when no flow carries media or bulk.
pub fn evaluate(outcome: &RunOutcome, forward: &LinkConfig) -> Option<Evaluation> {
    let steps = periods::periods(outcome, forward);
    if steps.is_empty() {
        return None;
    }
    let run = Run::of(outcome, forward);
    let periods = steps
        .iter()
        .enumerate()
        .map(|(i, p)| run.period(p, i > 0 && p.capacity_bps > steps[i - 1].capacity_bps))
        .collect();
    Some(Evaluation {
        periods,
        rfc8868: run.rfc8868(),
        competition: run.competition(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn bucket_rates_prorate_the_buckets_at_either_end() {
        // 100 ms buckets of 1 000, 2 000, 3 000, 4 000 bytes.
        let buckets = [1_000, 2_000, 3_000, 4_000];
        let rate = |from, to| bucket_rate_bps(&buckets, ms(100), ms(from), ms(to));
        // Whole buckets 1 and 2: 5 000 B in 200 ms = 200 kbit/s.
        assert!(close(rate(100, 300), 200_000.0), "{}", rate(100, 300));
        // Half of bucket 0 and half of bucket 1: 500 + 1 000 B in 100 ms = 120 kbit/s.
        assert!(close(rate(50, 150), 120_000.0), "{}", rate(50, 150));
        // Past the last bucket nothing was written: 4 000 B over 200 ms = 160 kbit/s.
        assert!(close(rate(300, 500), 160_000.0), "{}", rate(300, 500));
        assert_eq!(rate(300, 300), 0.0);
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 9.0, 8.0, 7.0, 6.0];
        // 10 % of 10 values: rank 1, the smallest; 25 %: rank ⌈2.5⌉ = 3.
        assert_eq!(quantile(&values, 0.1), 1.0);
        assert_eq!(quantile(&values, 0.25), 3.0);
        assert_eq!(quantile(&values, 1.0), 10.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }

    #[test]
    fn a_ramp_is_the_first_full_window_after_the_step_at_the_share() {
        // The link serializes 1 Mbit/s (12 500 B per 100 ms) until 10 s, then steps to
        // 4 Mbit/s and carries 2 Mbit/s for 1 s, then 4 Mbit/s (50 000 B per 100 ms).
        let mut points = Vec::new();
        let mut bytes = 0;
        for tick in 1..=150 {
            let t = ms(tick * 100);
            bytes += if t <= ms(10_000) {
                12_500
            } else if t <= ms(11_000) {
                25_000
            } else {
                50_000
            };
            points.push((t, bytes));
        }
        // 90 % of 4 Mbit/s = 3.6 Mbit/s over 500 ms: the window (t − 0.5 s, t] must hold at
        // least 4.5 of its 5 ticks at the full rate — at 4 Mbit/s only from (11.0, 11.5].
        // One tick at 2 Mbit/s leaves (25 000 + 4 × 50 000) × 8 / 0.5 = 3.6 Mbit/s: exactly
        // the share, at t = 11.4 s.
        let reached = first_window_reaching(&points, ms(10_000), ms(15_000), ms(500), 3.6e6);
        assert_eq!(reached, Some(ms(11_400)));
        // Bytes before the step never count: a window must start at the step or later.
        let early = first_window_reaching(&points, ms(10_000), ms(15_000), ms(500), 1.9e6);
        assert_eq!(early, Some(ms(10_500)));
        // Not reached before the end of the step.
        assert_eq!(
            first_window_reaching(&points, ms(10_000), ms(15_000), ms(500), 4.1e6),
            None
        );
    }

    #[test]
    fn overlaps_of_intervals() {
        assert_eq!(overlap((ms(0), ms(100)), (ms(50), ms(200))), ms(50));
        assert_eq!(overlap((ms(0), ms(100)), (ms(100), ms(200))), ms(0));
        assert_eq!(overlap((ms(300), ms(400)), (ms(0), ms(200))), ms(0));
    }
}
