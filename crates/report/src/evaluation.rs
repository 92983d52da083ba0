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
    /// When each of our flows ran.
    ours_running: Vec<(Duration, Duration)>,
    /// The forward link's constant-rate stretches: (start, end, bit/s).
    steps: Vec<(Duration, Duration, u64)>,
}

impl<'a> Run<'a> {
    fn of(outcome: &'a RunOutcome, forward: &LinkConfig) -> Self {
        let mut media = Vec::new();
        let mut bulk = Vec::new();
        let mut competitors = Vec::new();
        let mut ours_running = Vec::new();
        for (f, flow) in outcome.flows.iter().enumerate() {
            if !is_ours(flow) {
                competitors.push(running(flow, outcome.end_time));
                continue;
            }
            ours_running.push(running(flow, outcome.end_time));
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
            ours_running,
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
        // While a competitor ran in the step: the stretches between the moments any flow
        // started or ended, in each of which the same flows run; those with a competitor
        // count, each with its own fair share (capacity × our flows ÷ all flows running).
        let mut cuts: Vec<Duration> = vec![from, to];
        for &(a, b) in self.competitors.iter().chain(&self.ours_running) {
            cuts.extend([a, b].into_iter().filter(|t| (from..to).contains(t)));
        }
        cuts.sort();
        cuts.dedup();
        let runs_in = |flows: &[(Duration, Duration)], a: Duration, b: Duration| {
            flows
                .iter()
                .filter(|&&f| !overlap(f, (a, b)).is_zero())
                .count()
        };
        let (mut seconds, mut ours_bytes, mut media_bytes, mut demand_bits) = (0.0, 0, 0, 0.0);
        for pair in cuts.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let competitors = runs_in(&self.competitors, a, b);
            if competitors == 0 {
                continue;
            }
            let ours = runs_in(&self.ours_running, a, b);
            let length = (b - a).as_secs_f64();
            let fair_bps = capacity_bps * ours as f64 / (ours + competitors) as f64;
            seconds += length;
            ours_bytes += at(&self.ours_ip, b) - at(&self.ours_ip, a);
            media_bytes += self.received(self.media_apps(), a, b);
            demand_bits += media_rate_bps.min(fair_bps) * length;
        }
        let (competed_s, ours_share, media_fair_ratio) = if seconds > 0.0 {
            let media_bps = rate(media_bytes, seconds);
            let demand_bps = demand_bits / seconds;
            (
                seconds,
                Some(ours_bytes as f64 * 8.0 / (capacity_bps * seconds)),
                (demand_bps > 0.0).then(|| media_bps / demand_bps),
            )
        } else {
            (0.0, None, None)
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
    use netsim::{FlowLinkStats, LinkStats};
    use sim::{AppOutcome, AppSample, FlowEnd, LinkSample, Sample, SenderStats};

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

    #[track_caller]
    fn assert_close(actual: f64, expected: f64, what: &str) {
        assert!(
            close(actual, expected),
            "{what}: {actual}, expected {expected}"
        );
    }

    fn app(
        name: &str,
        kind: &str,
        report: serde_json::Map<String, serde_json::Value>,
    ) -> AppOutcome {
        AppOutcome {
            name: name.into(),
            kind: kind.into(),
            received_bytes: 0,
            busy_periods: Vec::new(),
            report,
        }
    }

    fn flow(
        name: &str,
        start: Duration,
        ended_at: Option<Duration>,
        apps: Vec<AppOutcome>,
        (sent_packets, lost_packets): (u64, u64),
    ) -> FlowOutcome {
        let mut sender = SenderStats::default();
        sender.sent_packets = sent_packets;
        sender.lost_packets = lost_packets;
        FlowOutcome {
            name: name.into(),
            cc: "cubic".into(),
            start,
            handshake: Some(ms(50)),
            delivered_bytes: 0,
            apps,
            end: if ended_at.is_some() {
                FlowEnd::Stopped
            } else {
                FlowEnd::Running
            },
            ended_at,
            sender,
            bottleneck_forward: FlowLinkStats::default(),
            bottleneck_return: FlowLinkStats::default(),
            losses: sim::LossAccounting::default(),
            loss_batches: Vec::new(),
            connections: Vec::new(),
        }
    }

    /// A flow's row at one tick; the evaluation reads only the IP bytes received.
    fn sample(t: Duration, flow: usize, received_ip_bytes: u64) -> Sample {
        Sample {
            t,
            flow,
            received_ip_bytes,
            ..Sample::default()
        }
    }

    /// The media frames' one-way delays, ms (None: never arrived). The deadline is 400 ms,
    /// a keyframe every 10 frames; everything else arrives in 100 ms.
    fn frame_delay_ms(seq: u64) -> Option<u64> {
        match seq {
            // Late, in the first 2 s of the first step; its keyframe (0) was on time.
            5 => Some(600),
            // A late keyframe, after the first step settled: 31–39 arrive on time but cannot
            // be decoded.
            30 => Some(500),
            // Lost, in the first 2 s of the second step.
            55 => None,
            // A lost keyframe after the second step settled (81–89 undecodable), and a late
            // frame behind it.
            80 => None,
            85 => Some(450),
            // Captured 9.95 s, 50 ms before the end of the run.
            99 => None,
            _ => Some(100),
        }
    }

    /// One 10 s run, sampled every 100 ms (tick k at k × 100 ms counts what arrived in
    /// ((k − 1) × 100, k × 100] ms), and its forward link: 4 Mbit/s, 1 Mbit/s from 5 s.
    ///
    /// Flow 0 ("call", ours, sent 2 000 packets, lost 30) carries
    /// - media at a nominal 1 Mbit/s, 10 fps from 50 ms (frame n captured at 50 + 100 n ms,
    ///   100 frames), deadline 400 ms, delays as [`frame_delay_ms`]; it receives 12 500 B per
    ///   tick (1 Mbit/s) to 3 s, 10 000 (800 kbit/s) to 5 s, 1 250 (100 kbit/s) to 6 s,
    ///   3 750 (300 kbit/s) to 7 s and 6 250 (500 kbit/s) to 10 s: 375 000 B by 3 s, 575 000
    ///   by 5 s, 587 500 by 6 s, 625 000 by 7 s, 812 500 by 10 s. Its sender wrote 12 500 B
    ///   in each 100 ms before 5 s and 6 250 after.
    /// - bulk receiving nothing to 1 s, 25 000 B per tick (2 Mbit/s) to 3 s, 12 500 to 5 s,
    ///   nothing to 7 s and 5 000 (400 kbit/s) to 10 s: 750 000 B by 5 s, 900 000 by 10 s.
    ///
    /// Its IP bytes received per tick: 13 000 to 1 s, 39 000 to 3 s, 24 000 to 5 s, 2 000 to
    /// 6 s, 4 500 to 7 s, 12 000 to 10 s (1 390 000 B by 5 s, 1 815 000 by 10 s).
    ///
    /// Flow 1 ("download", a competing perf download, sent 1 000 packets, lost 200) runs from
    /// 3 s to 7 s and receives 24 000 IP bytes per tick to 5 s, 10 500 to 6 s, 8 000 to 7 s
    /// (665 000 B). The link serialized the two flows' IP bytes: 1 870 000 B by 5 s,
    /// 2 480 000 by 10 s.
    fn media_bulk_run() -> (RunOutcome, LinkConfig) {
        let mut link = LinkConfig::new(4_000_000, ms(25));
        link.schedule.push(netsim::ScheduleStep {
            at: ms(5_000),
            rate_bps: Some(1_000_000),
            delay: None,
            loss: None,
        });
        let end_time = ms(10_000);

        let frames = (0..100)
            .filter_map(|seq| {
                let captured_at = ms(50 + 100 * seq);
                frame_delay_ms(seq).map(|delay| FrameRecord {
                    seq,
                    captured_at,
                    received_at: captured_at + ms(delay),
                    bytes: 12_500,
                })
            })
            .collect();
        let media = MediaReport {
            frames_sent: 100,
            frames_received: 97,
            deadline_ms: 400.0,
            frames,
            bitrate_bps: 1_000_000,
            mean_bitrate_bps: 750_000.0,
            fps: 10,
            keyframe_interval: 10,
            first_capture_s: 0.05,
            written_bytes_per_bucket: (0..100)
                .map(|bucket| if bucket < 50 { 12_500 } else { 6_250 })
                .collect(),
            ..MediaReport::default()
        };
        // The evaluation reads a media application through `MediaReport::of`, from the JSON
        // report the simulator hands over: build that, and check it reads back whole.
        let serde_json::Value::Object(media_report) = serde_json::to_value(&media).unwrap() else {
            unreachable!("a media report is a JSON object");
        };
        let call = flow(
            "call",
            Duration::ZERO,
            None,
            vec![
                app("media", sim::apps::media::KIND, media_report),
                app("bulk", sim::apps::bulk::KIND, serde_json::Map::new()),
            ],
            (2_000, 30),
        );
        let download = flow(
            "download",
            ms(3_000),
            Some(ms(7_000)),
            vec![app("perf", sim::apps::perf::KIND, serde_json::Map::new())],
            (1_000, 200),
        );
        assert_eq!(MediaReport::of(&call.apps[0]), Some(media));

        // Bytes in tick k, by the stretch it falls in.
        let media_bytes = |k: u64| match k {
            0..=30 => 12_500,
            31..=50 => 10_000,
            51..=60 => 1_250,
            61..=70 => 3_750,
            _ => 6_250,
        };
        let bulk_bytes = |k: u64| match k {
            0..=10 => 0,
            11..=30 => 25_000,
            31..=50 => 12_500,
            51..=70 => 0,
            _ => 5_000,
        };
        let ours_ip_bytes = |k: u64| match k {
            0..=10 => 13_000,
            11..=30 => 39_000,
            31..=50 => 24_000,
            51..=60 => 2_000,
            61..=70 => 4_500,
            _ => 12_000,
        };
        let download_ip_bytes = |k: u64| match k {
            31..=50 => 24_000,
            51..=60 => 10_500,
            61..=70 => 8_000,
            _ => 0,
        };
        let (mut media_total, mut bulk_total, mut ours_ip, mut download_ip) = (0, 0, 0, 0);
        let (mut samples, mut app_samples, mut link_samples) = (Vec::new(), Vec::new(), Vec::new());
        for k in 1..=100 {
            let t = ms(100 * k);
            media_total += media_bytes(k);
            bulk_total += bulk_bytes(k);
            ours_ip += ours_ip_bytes(k);
            download_ip += download_ip_bytes(k);
            samples.push(sample(t, 0, ours_ip));
            // The download is sampled from its start.
            if t >= download.start {
                samples.push(sample(t, 1, download_ip));
            }
            for (app, delivered_bytes) in [media_total, bulk_total].into_iter().enumerate() {
                app_samples.push(AppSample {
                    t,
                    flow: 0,
                    app,
                    delivered_bytes,
                });
            }
            link_samples.push(LinkSample {
                t,
                forward_serialized_bytes: ours_ip + download_ip,
            });
        }
        assert_eq!((media_total, bulk_total), (812_500, 900_000));
        assert_eq!((ours_ip, download_ip), (1_815_000, 665_000));
        let mut forward_link = LinkStats::default();
        forward_link.serialized_bytes = ours_ip + download_ip;
        let outcome = RunOutcome {
            seed: 1,
            end_time,
            flows: vec![call, download],
            samples,
            app_samples,
            link_samples,
            forward_link,
            return_link: LinkStats::default(),
            forward_capacity_bits: link.capacity_bits(Duration::ZERO, end_time),
            forward_queue_limit_bytes: u64::MAX,
            datagrams: 0,
            emulator_drops: sim::EmulatorDrops::default(),
            emulator_lateness: None,
        };
        (outcome, link)
    }

    fn evaluated(outcome: &RunOutcome, link: &LinkConfig) -> Evaluation {
        evaluate(outcome, link).expect("the run carries media and bulk")
    }

    #[test]
    fn each_capacity_step_counts_its_frames_and_those_after_the_settle_time() {
        let (outcome, link) = media_bulk_run();
        let periods = evaluated(&outcome, &link).periods;
        assert_eq!(periods.len(), 2);
        let counts = |p: &PeriodEvaluation| {
            (
                p.frames,
                p.late_frames,
                p.settled_frames,
                p.settled_late_frames,
            )
        };
        // [0, 5 s): frames 0–49 (captured 0.05–4.95 s), 5 and 30 late; settled from 2 s:
        // 20–49, 30 late.
        assert_eq!(counts(&periods[0]), (50, 2, 30, 1));
        // [5, 10 s): frames 50–95; 96–99, captured at or after 10 s − 400 ms = 9.6 s, are
        // left out whether they arrived (96–98) or not (99): the run ended before their
        // deadline. Late: 55 and 80 (lost), 85. Settled from 7 s: 70–95, 80 and 85 late.
        assert_eq!(counts(&periods[1]), (46, 3, 26, 2));
    }

    #[test]
    fn each_capacity_step_reads_its_rates_off_the_samples_over_the_step_and_once_settled() {
        let (outcome, link) = media_bulk_run();
        let periods = evaluated(&outcome, &link).periods;
        let (first, second) = (&periods[0], &periods[1]);
        assert_eq!(
            (first.start_s, first.end_s, first.capacity_bps),
            (0.0, 5.0, 4e6)
        );
        assert_eq!(
            (second.start_s, second.end_s, second.capacity_bps),
            (5.0, 10.0, 1e6)
        );
        assert_eq!((first.media_rate_bps, second.media_rate_bps), (1e6, 1e6));
        // A drop: no ramp to measure.
        assert_eq!((first.ramp_s, second.ramp_s), (None, None));
        // 1 870 000 B × 8 ÷ (4 Mbit/s × 5 s) = 14.96 ÷ 20 = 0.748;
        // (2 480 000 − 1 870 000) B × 8 ÷ (1 Mbit/s × 5 s) = 4.88 ÷ 5 = 0.976.
        assert_close(first.utilization.unwrap(), 0.748, "utilization, first");
        assert_close(second.utilization.unwrap(), 0.976, "utilization, second");

        // Media: 575 000 B × 8 ÷ 5 s = 920 kbit/s; settled (575 000 − 250 000) B × 8 ÷ 3 s
        // = 2.6 Mbit ÷ 3 s.
        assert_close(first.media_goodput_bps, 920_000.0, "media, first");
        assert_close(
            first.settled_media_goodput_bps,
            2_600_000.0 / 3.0,
            "settled media, first",
        );
        // (812 500 − 575 000) B × 8 ÷ 5 s = 380 kbit/s; settled 187 500 B × 8 ÷ 3 s
        // = 500 kbit/s.
        assert_close(second.media_goodput_bps, 380_000.0, "media, second");
        assert_close(
            second.settled_media_goodput_bps,
            500_000.0,
            "settled media, second",
        );
        // Written: 30 buckets × 12 500 B × 8 ÷ 3 s = 1 Mbit/s; 30 × 6 250 B × 8 ÷ 3 s
        // = 500 kbit/s.
        assert_close(first.settled_media_sent_bps.unwrap(), 1e6, "sent, first");
        assert_close(second.settled_media_sent_bps.unwrap(), 5e5, "sent, second");
        // Bulk: 750 000 B × 8 ÷ 5 s = 1.2 Mbit/s; 150 000 B × 8 ÷ 5 s = 240 kbit/s.
        assert_close(first.bulk_goodput_bps, 1_200_000.0, "bulk, first");
        assert_close(second.bulk_goodput_bps, 240_000.0, "bulk, second");
    }

    #[test]
    fn while_competed_the_media_is_judged_against_the_lower_of_its_rate_and_our_fair_share() {
        let (outcome, link) = media_bulk_run();
        let periods = evaluated(&outcome, &link).periods;
        let (first, second) = (&periods[0], &periods[1]);
        // The download runs 3–7 s: the last 2 s of the first step, the first 2 s of the
        // second.
        assert_eq!((first.competed_s, second.competed_s), (2.0, 2.0));
        // Our IP bytes, 3–5 s: 20 × 24 000 = 480 000 B × 8 ÷ (4 Mbit/s × 2 s) = 0.48.
        assert_close(first.ours_share.unwrap(), 0.48, "share, first");
        // 5–7 s: 10 × 2 000 + 10 × 4 500 = 65 000 B × 8 ÷ (1 Mbit/s × 2 s) = 0.26.
        assert_close(second.ours_share.unwrap(), 0.26, "share, second");
        // One flow of ours next to one download: our fair share is half the capacity.
        // 3–5 s: media 200 000 B × 8 ÷ 2 s = 800 kbit/s against min(1 Mbit/s nominal,
        // 4 Mbit/s × 1 ÷ 2 = 2 Mbit/s) = 1 Mbit/s: 0.8.
        assert_close(first.media_fair_ratio.unwrap(), 0.8, "fair ratio, first");
        // 5–7 s: media 50 000 B × 8 ÷ 2 s = 200 kbit/s against min(1 Mbit/s,
        // 1 Mbit/s × 1 ÷ 2 = 500 kbit/s) = 500 kbit/s: 0.4.
        assert_close(second.media_fair_ratio.unwrap(), 0.4, "fair ratio, second");
    }

    #[test]
    fn without_a_competitor_no_step_has_a_share_a_fair_ratio_or_a_competition() {
        let (mut outcome, link) = media_bulk_run();
        outcome.flows.truncate(1);
        outcome.samples.retain(|s| s.flow == 0);
        let evaluation = evaluated(&outcome, &link);
        for period in &evaluation.periods {
            assert_eq!(
                (
                    period.competed_s,
                    period.ours_share,
                    period.media_fair_ratio
                ),
                (0.0, None, None)
            );
        }
        assert_eq!(evaluation.competition, None);
    }

    #[test]
    fn the_competition_share_counts_the_capacity_of_each_step_it_spans() {
        let (outcome, link) = media_bulk_run();
        let competition = evaluated(&outcome, &link).competition.unwrap();
        assert_eq!((competition.from_s, competition.to_s), (3.0, 7.0));
        // Our IP bytes 3–7 s: 480 000 + 65 000 = 545 000 B = 4.36 Mbit, against 4 Mbit/s ×
        // 2 s + 1 Mbit/s × 2 s = 10 Mbit: 0.436 (at either rate alone: 0.2725 or 1.09).
        assert_close(competition.ours_share, 0.436, "competition share");
    }

    #[test]
    fn rfc8868_rates_run_from_the_first_capture_and_the_low_goodput_is_the_tenth_percentile() {
        let (outcome, link) = media_bulk_run();
        let rfc = evaluated(&outcome, &link).rfc8868;
        // From the first capture at 50 ms to 10 s, 9.95 s: received 812 500 B × 8
        // = 6.5 Mbit; written half of bucket 0 (6 250 B) + 49 × 12 500 + 50 × 6 250
        // = 931 250 B = 7.45 Mbit.
        assert_close(rfc.media_goodput_bps, 6_500_000.0 / 9.95, "media goodput");
        assert_close(
            rfc.media_sent_bps.unwrap(),
            7_450_000.0 / 9.95,
            "media sent",
        );
        // Bulk over the whole run: 900 000 B × 8 ÷ 10 s.
        assert_close(rfc.bulk_goodput_bps, 720_000.0, "bulk goodput");
        // The 200 ms windows ending at 0.3–10 s (98 of them, the first full one after the
        // first capture): 28 at 1 Mbit/s, 900 kbit/s, 19 at 800 kbit/s, 450 kbit/s, 9 at
        // 100 kbit/s (5.2–6 s), 200 kbit/s (ending 6.1 s: 1 250 + 3 750 B), 9 at 300 kbit/s,
        // 400 kbit/s, 29 at 500 kbit/s. Nearest rank ⌈0.1 × 98⌉ = 10: 200 kbit/s.
        assert_close(rfc.media_goodput_low_bps, 200_000.0, "low goodput");
        // 97 frames arrived (0–98 less 55 and 80): 94 in 100 ms, then 450, 500, 600 ms.
        // p95: rank ⌈92.15⌉ = 93; p99: rank ⌈96.03⌉ = 97, the largest.
        assert_close(rfc.frame_delay_ms.p50, 100.0, "p50");
        assert_close(rfc.frame_delay_ms.p95, 100.0, "p95");
        assert_close(rfc.frame_delay_ms.p99, 600.0, "p99");
        assert_close(rfc.frame_delay_ms.max, 600.0, "max");
    }

    #[test]
    fn a_late_keyframe_makes_the_on_time_frames_after_it_undecodable_but_not_late() {
        let (outcome, link) = media_bulk_run();
        let rfc = evaluated(&outcome, &link).rfc8868;
        // 96 frames count (0–95); 5 missed their deadline (5, 30, 55, 80, 85).
        assert_close(rfc.late_share, 5.0 / 96.0, "late share");
        // Of the 91 on time, 31–39 follow the late keyframe 30 and 81–84, 86–89 the lost
        // keyframe 80: 91 − 9 − 8 = 74 decodable.
        assert_close(rfc.decodable_share, 74.0 / 96.0, "decodable share");
    }

    #[test]
    fn the_loss_share_counts_only_our_senders_and_utilization_the_scheduled_capacity() {
        let (outcome, link) = media_bulk_run();
        let rfc = evaluated(&outcome, &link).rfc8868;
        // 30 lost of 2 000 sent; the download's 200 of 1 000 are not ours.
        assert_close(rfc.loss_share, 0.015, "loss share");
        // 2 480 000 B × 8 = 19.84 Mbit of 4 Mbit/s × 5 s + 1 Mbit/s × 5 s = 25 Mbit.
        assert_close(rfc.utilization, 0.7936, "utilization");
    }

    // The two tests below were written to the documented behaviour where the code departed
    // from it (it measured from the first competitor's start to the last one's end, and
    // counted every flow of ours in the run).

    #[test]
    fn a_gap_between_two_competitors_is_not_time_competed() {
        let (mut outcome, link) = media_bulk_run();
        // A second download, 8–9 s: in the second step competitors ran 5–7 s and 8–9 s.
        let mut again = outcome.flows[1].clone();
        again.name = "download 2".into();
        again.start = ms(8_000);
        again.ended_at = Some(ms(9_000));
        outcome.flows.push(again);
        let second = evaluated(&outcome, &link).periods.remove(1);
        // Seconds during which a competitor ran: 2 + 1 (not 5–9 s, 4).
        assert_eq!(second.competed_s, 3.0);
        // Our IP bytes then: 65 000 + 10 × 12 000 = 185 000 B × 8 ÷ (1 Mbit/s × 3 s)
        // (not 305 000 B over 4 s, 0.61).
        assert_close(second.ours_share.unwrap(), 1.48 / 3.0, "share");
        // Media then: 50 000 + 10 × 6 250 = 112 500 B × 8 ÷ 3 s = 300 kbit/s; one flow of
        // ours and one download running at any time, a fair share of 500 kbit/s: 0.6 (the
        // not 175 000 B over 4 s = 350 kbit/s against 1 Mbit/s × 1 ÷ 3, 1.05).
        assert_close(second.media_fair_ratio.unwrap(), 0.6, "fair ratio");
    }

    #[test]
    fn the_fair_share_counts_only_our_flows_that_are_running() {
        let (mut outcome, link) = media_bulk_run();
        // A flow of ours whose bulk ended at 1 s, before the download started.
        let mut done = outcome.flows[0].clone();
        done.name = "done".into();
        done.apps = vec![app("bulk", sim::apps::bulk::KIND, serde_json::Map::new())];
        done.ended_at = Some(ms(1_000));
        outcome.flows.push(done);
        let second = evaluated(&outcome, &link).periods.remove(1);
        // 5–7 s: "call" and the download run, a fair share of 1 Mbit/s × 1 ÷ 2: media
        // 200 kbit/s ÷ 500 kbit/s = 0.4 (not 1 Mbit/s × 2 ÷ 3, 0.3).
        assert_close(second.media_fair_ratio.unwrap(), 0.4, "fair ratio");
    }
}
