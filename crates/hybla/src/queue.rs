//! What the RTT samples say about the bottleneck queue: its delay now, how full it gets, how
//! noisy the readings are, and what it was when any recent packet was sent.
//!
//! A loss is congestion when it happens at a queue that is full for this path: above the
//! flow's own small budget and in the upper part of the range the queue has been seen to span
//! — Spike's relative rule (congested above min + ½(max − min); Tobe et al., 2000), with the
//! range measured on the bottleneck's queueing delay instead of one-way delay. Absolute
//! thresholds fail both ways: a 20 ms buffer in front of a 600 ms flow never reaches 2 % of the
//! RTT, and 10 ms of jitter reads as a queue on a 30 ms path. The reading for a loss is the
//! queue when the lost packet was sent, not when the loss was detected one RTT later: a queue
//! that overflowed has often drained by then, and one that was empty may have filled.
//!
//! Noise: every reading is the smallest RTT sample over a filter window (a quarter of the base
//! RTT, at least [`MIN_FILTER_WINDOW`]). A queue lasts; ACK delay, the pacer's bursts and jitter
//! only ever add delay to some packets, so the minimum strips them. What is left of jitter after
//! that is measured as RFC 3550's interarrival jitter (the mean absolute difference of
//! successive samples) and scales the flow's own queue budget.
//!
//! Jitter that holds a delay for a while defeats the filter: Starlink's scheduler keeps one
//! draw for about 10 ms, so the minimum over a 10 ms window still carries it, and the filtered
//! reading jumps above the budget many times a second on a link with no queue at all. Such a
//! path shows itself by how its excursions end: jitter's are gone within a round, a queue's
//! stand. Where most of them end that way, the link-full decisions read the standing queue
//! instead ([`QueueMonitor::reading`]).

use std::collections::VecDeque;
use std::time::Duration;

use crate::min_filter::{WindowedMax, WindowedMin};

/// Shortest filter window: at short RTTs a quarter RTT (2.5 ms at 10 ms) is shorter than the
/// gap between two of the pacer's bursts at 10 Mbit/s (12 ms for 10 packets).
pub const MIN_FILTER_WINDOW: Duration = Duration::from_millis(10);

/// Alone, a loss is congestion only above this many budgets of queue: the flow's own queue
/// overshoots its budget by a packet or two (it stops growing one round late).
pub const ALONE_FLOOR_BUDGETS: u32 = 3;

/// Shortest window of the standing-queue reading (a whole base RTT otherwise).
pub const MIN_ROUND_WINDOW: Duration = Duration::from_millis(100);

/// Smallest queue the flow keeps as its own when it is alone, whatever the rate: timer and
/// clock granularity.
pub const MIN_QUEUE_BUDGET: Duration = Duration::from_micros(500);

/// The own budget is at least this many packets' serialization at the bottleneck, on top of
/// the burst each ACK frame releases: a queue shorter than that is the flow's own
/// back-to-back packets.
pub const BUDGET_PACKETS: u32 = 2;

/// The own budget is at least this many times the measured jitter (what the filter leaves).
pub const JITTER_BUDGET_FACTOR: f64 = 2.0;

/// While the bottleneck is shared, a loss is congestion above this share of the highest queue
/// seen recently (and above twice the own budget). Below ½ (Spike's) because an AQM drops
/// while its average queue is low: RED starts at min_th, typically a third of max_th and a
/// sixth of the buffer.
pub const SHARED_QUEUE_SHARE: f64 = 0.25;

/// While the flow is alone, a loss is congestion only at a queue this close to the highest
/// seen recently: the flow keeps its own queue at its budget, so a drop-tail buffer overflows
/// only at a new high (a capacity drop, an overshoot), and the flow's own transients (the
/// pacer's excess after the window regrows) are not the buffer's limit.
pub const ALONE_QUEUE_SHARE: f64 = 0.75;

/// How long the highest queue is remembered.
pub const HIGHEST_QUEUE_WINDOW: Duration = Duration::from_secs(10);

/// An excursion of the filtered reading starts at this many budgets, high enough that the
/// flow's own queue hovering at its budget does not make one.
pub const EXCURSION_BUDGETS: u32 = 2;

/// Weight of each excursion in the share of excursions that were noise.
const NOISE_SHARE_GAIN: f64 = 1.0 / 8.0;

/// The filtered reading is noise where more than this share of its excursions were gone
/// within a round.
pub const NOISY_SHARE: f64 = 0.5;

/// Gain of the jitter average (RFC 3550 §6.4.1: 1/16).
const JITTER_GAIN: f64 = 1.0 / 16.0;

/// The queue as seen from one flow's RTT samples.
#[derive(Debug, Clone)]
pub(crate) struct QueueMonitor {
    /// (newest send time, smallest RTT sample) of each ACK frame, oldest first: the queue at
    /// any recent send time.
    history: VecDeque<(Duration, Duration)>,
    /// Smallest frame sample over the filter window.
    recent: WindowedMin,
    /// Smallest frame sample over a whole round (at least [`MIN_ROUND_WINDOW`]).
    round: WindowedMin,
    /// Highest filtered queue delay over [`HIGHEST_QUEUE_WINDOW`], seconds.
    highest: WindowedMax,
    /// RFC 3550 jitter of successive frame samples, seconds.
    jitter_secs: f64,
    last_sample: Option<Duration>,
    /// Filtered queue delay: smallest sample over the filter window − base RTT.
    delay: Duration,
    /// Standing queue delay: smallest sample over the last round − base RTT.
    standing: Duration,
    /// The queue the flow's own packets make by themselves.
    own_queue: Duration,
    /// Share of the filtered reading's recent excursions above [`EXCURSION_BUDGETS`] that fell
    /// back below one budget within a round (an average over excursions).
    noise_share: f64,
    /// When the current excursion started, if one is under way.
    excursion_since: Option<Duration>,
    /// Whether the current excursion has lasted a round (counted as a queue already).
    excursion_stood: bool,
    /// How far the filtered reading sits above the standing one, averaged over ACK frames as
    /// RFC 3550 averages jitter (gain [`JITTER_GAIN`]), seconds: on a path whose jitter holds
    /// its draws, what the noise adds to the RTT of recent packets while no queue stands.
    spread_secs: f64,
    /// `JITTER_BUDGET_FACTOR × jitter_secs` and the highest filtered delay as `Duration`s,
    /// converted once per ACK frame, and the latter only when it changed: the budget and the
    /// thresholds are read several times a frame, and `Duration::from_secs_f64` was a sixth
    /// of the per-frame work (`cargo bench -p hybla`, `frame_pipe_aware`).
    jitter_budget: Duration,
    highest_secs: f64,
    highest_delay: Duration,
}

impl QueueMonitor {
    pub(crate) fn new() -> Self {
        Self {
            history: VecDeque::new(),
            recent: WindowedMin::new(MIN_FILTER_WINDOW),
            round: WindowedMin::new(MIN_ROUND_WINDOW),
            highest: WindowedMax::new(HIGHEST_QUEUE_WINDOW),
            jitter_secs: 0.0,
            last_sample: None,
            delay: Duration::ZERO,
            standing: Duration::ZERO,
            own_queue: Duration::ZERO,
            noise_share: 0.0,
            excursion_since: None,
            excursion_stood: false,
            spread_secs: 0.0,
            jitter_budget: Duration::ZERO,
            highest_secs: 0.0,
            highest_delay: Duration::ZERO,
        }
    }

    /// The filter window at base RTT `base`.
    pub(crate) fn filter_window(base: Duration) -> Duration {
        (base / 4).max(MIN_FILTER_WINDOW)
    }

    /// One ACK frame at `now`: its smallest RTT sample, from a packet sent at `sent`;
    /// `own_queue` is the queue the flow's own packets make by themselves ([`BUDGET_PACKETS`]
    /// and the burst an ACK frame releases, at the bottleneck's rate).
    pub(crate) fn on_frame(
        &mut self,
        now: Duration,
        sent: Duration,
        sample: Duration,
        base: Duration,
        own_queue: Duration,
    ) {
        self.own_queue = own_queue;
        if let Some(last) = self.last_sample {
            let difference = sample.abs_diff(last).as_secs_f64();
            self.jitter_secs += (difference - self.jitter_secs) * JITTER_GAIN;
        }
        self.last_sample = Some(sample);
        let window = Self::filter_window(base);
        self.recent.set_window(window);
        self.recent.update(now, sample);
        self.delay = self.recent.get().unwrap_or(sample).saturating_sub(base);
        self.round.set_window(base.max(MIN_ROUND_WINDOW));
        self.round.update(now, sample);
        self.standing = self.round.get().unwrap_or(sample).saturating_sub(base);
        self.highest.update(now, self.delay.as_secs_f64());
        let spread = self.delay.saturating_sub(self.standing).as_secs_f64();
        self.spread_secs += (spread - self.spread_secs) * JITTER_GAIN;
        self.jitter_budget = Duration::from_secs_f64(JITTER_BUDGET_FACTOR * self.jitter_secs);
        let highest_secs = self.highest.get().unwrap_or(0.0);
        if highest_secs != self.highest_secs {
            self.highest_secs = highest_secs;
            self.highest_delay = Duration::from_secs_f64(highest_secs);
        }
        // Keep the samples of packets sent within the last three base RTTs (a loss is declared
        // about one RTT, at most 9/8 RTT plus the PTO, after its packet was sent).
        if self.history.back().is_none_or(|&(s, _)| sent >= s) {
            self.history.push_back((sent, sample));
        }
        let horizon = 3 * base + window;
        while self
            .history
            .front()
            .is_some_and(|&(s, _)| s + horizon < sent)
        {
            self.history.pop_front();
        }
    }

    /// After [`Self::on_frame`] in a round the window limited: follows the filtered reading's
    /// excursions above [`EXCURSION_BUDGETS`]; one that falls back below a budget within a
    /// round counts as noise, one that lasts a round as a queue. Not where the application
    /// limited sending: its bursts (a video keyframe) queue and drain within a round too, and
    /// counting them took media-bulk-geo's late frames with 3× rises from 0.5 to 1.1 % (worst
    /// of five seeds).
    pub(crate) fn track_excursion(&mut self, now: Duration, base: Duration) {
        let round = base.max(MIN_ROUND_WINDOW);
        let budget = self.budget();
        match self.excursion_since {
            None => {
                if self.delay >= EXCURSION_BUDGETS * budget {
                    self.excursion_since = Some(now);
                    self.excursion_stood = false;
                }
            }
            Some(since) => {
                if self.delay < budget {
                    if !self.excursion_stood {
                        self.noise_share += (1.0 - self.noise_share) * NOISE_SHARE_GAIN;
                    }
                    self.excursion_since = None;
                } else if !self.excursion_stood && now >= since + round {
                    self.noise_share -= self.noise_share * NOISE_SHARE_GAIN;
                    self.excursion_stood = true;
                }
            }
        }
    }

    /// Drops the excursion under way: the application limited sending ([`Self::track_excursion`]).
    pub(crate) fn forget_excursion(&mut self) {
        self.excursion_since = None;
    }

    /// The queue the flow may keep standing before it drains its own excess, and within which
    /// a sample counts as the path seen empty (half of it): its budget, and where the filtered
    /// reading is [noisy](Self::noisy), at least the noise's mean spread above the standing
    /// reading. A window that carries jitter holds the packets the jitter delays: drained to
    /// delivery rate × (base RTT + budget), the flow on `leo-starlink` cut itself below what
    /// the link needed every few seconds (75.3 → 77.9 Mbit/s with the spread; without a
    /// declared BDP 48.3 → 52.5). Not for the classifier or saturation: RED's early drops
    /// make its queue noisy too, and a larger threshold there took the neighbour's share in
    /// the fairness matrix's shallow RED cells (at 100 and 600 ms). The competition test uses
    /// it only below ρ = 3 (`Hybla::competition_queue`).
    pub(crate) fn own_allowance(&self) -> Duration {
        if self.noisy() {
            self.budget().max(Duration::from_secs_f64(self.spread_secs))
        } else {
            self.budget()
        }
    }

    /// Filtered queueing delay now.
    pub(crate) fn delay(&self) -> Duration {
        self.delay
    }

    /// Whether most recent excursions of the filtered reading were gone within a round:
    /// jitter that the filter window cannot strip.
    pub(crate) fn noisy(&self) -> bool {
        self.noise_share > NOISY_SHARE
    }

    /// The queue reading for the link-full decisions (saturation, start-up's end): the
    /// filtered one, read at once; where that is [noisy](Self::noisy), the standing one, a
    /// round later. On `leo-starlink` (jitter held 10 ms) the filtered reading crossed the
    /// budget every few rounds with the link half empty, which held growth at a segment per
    /// RTT: 64.3 → 75.3 Mbit/s with the standing reading there. In the fairness matrix (no
    /// jitter) it never fired in the one cell traced (100 ms, 4 BDP drop-tail, no loss);
    /// some lossy and RED cells moved both ways, and the counts in and out of the band did not.
    pub(crate) fn reading(&self) -> Duration {
        if self.noisy() {
            self.standing
        } else {
            self.delay
        }
    }

    /// The queue that stood through the whole last round: its smallest reading. Jitter that
    /// stalls packets for a while passes within a round; a queue of other flows' packets (or
    /// of the flow's own excess) does not.
    pub(crate) fn standing(&self) -> Duration {
        self.standing
    }

    /// The queue when a packet sent at `sent` crossed the bottleneck: the smallest sample of
    /// packets sent within half a filter window of it, − base RTT. `None` with no sample there.
    pub(crate) fn at_send_time(&self, sent: Duration, base: Duration) -> Option<Duration> {
        self.around_send_time(sent, base, Self::filter_window(base) / 2)
    }

    /// The smallest sample of packets sent within `half` of `sent`, − base RTT: with `half`
    /// half a round, jitter that the filter window leaves is stripped further, at the cost of
    /// a queue that changed within the round (the loss study's second reading, `losses.csv`).
    pub(crate) fn around_send_time(
        &self,
        sent: Duration,
        base: Duration,
        half: Duration,
    ) -> Option<Duration> {
        let start = self.history.partition_point(|&(s, _)| s + half < sent);
        self.history
            .range(start..)
            .take_while(|&&(s, _)| s <= sent + half)
            .map(|&(_, rtt)| rtt)
            .min()
            .map(|rtt| rtt.saturating_sub(base))
    }

    /// The queue the flow may keep as its own: what its own packets make by themselves, or
    /// twice the jitter.
    pub(crate) fn budget(&self) -> Duration {
        MIN_QUEUE_BUDGET.max(self.own_queue).max(self.jitter_budget)
    }

    /// Whether the budget is the path's jitter rather than the flow's own packets: twice the
    /// jitter is at least what the flow's back-to-back packets queue by themselves. On the
    /// loss matrix's 30 ms path with 10 ms of mean jitter each way the jitter is 8–15 ms
    /// against an own queue of 11–24 ms (ACKs the return link held release larger bursts);
    /// next to NewReno at 10 ms behind a quarter-BDP buffer it is tens of microseconds
    /// against 1 ms.
    pub(crate) fn budget_is_jitter(&self) -> bool {
        self.jitter_budget >= MIN_QUEUE_BUDGET.max(self.own_queue)
    }

    /// Jitter of the readings (RFC 3550), for reports.
    pub(crate) fn jitter(&self) -> Duration {
        Duration::from_secs_f64(self.jitter_secs)
    }

    /// The highest filtered queue delay seen recently.
    pub(crate) fn highest(&self) -> Duration {
        self.highest_delay
    }

    /// A loss at a queue of this delay or more is congestion; `shared`: other flows' packets
    /// are in the queue too.
    pub(crate) fn congestion_threshold(&self, shared: bool) -> Duration {
        // Alone, the flow's own queue sits at its budget: a loss there is not the buffer's
        // limit. Shared, other flows' packets fill the queue beyond any budget of ours.
        let (share, floor) = if shared {
            (SHARED_QUEUE_SHARE, self.budget())
        } else {
            (ALONE_QUEUE_SHARE, ALONE_FLOOR_BUDGETS * self.budget())
        };
        floor.max(self.highest().mul_f64(share))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;
    const BASE: Duration = Duration::from_millis(500);

    /// A monitor fed one frame per millisecond from `from` to `to` with RTT = base + `queue(t)`,
    /// each frame's packet sent one RTT before it; 1 ms packets at the bottleneck.
    fn fed(monitor: &mut QueueMonitor, from: u64, to: u64, queue: impl Fn(u64) -> u64) {
        for t in from..to {
            let rtt = BASE + MS(queue(t));
            monitor.on_frame(MS(t), MS(t) - rtt, rtt, BASE, MS(2));
            monitor.track_excursion(MS(t), BASE);
        }
    }

    #[test]
    fn the_queue_at_a_send_time_is_the_smallest_reading_around_it() {
        // Queue 30 ms for packets sent in [1000, 1200) ms, else 0 (send time = t − RTT).
        let mut m = QueueMonitor::new();
        fed(&mut m, 1000, 2500, |t| {
            let sent = t - 500;
            if (1000..1200).contains(&sent) { 30 } else { 0 }
        });
        assert_eq!(m.at_send_time(MS(1100), BASE), Some(MS(30)));
        // Half a filter window (62.5 ms) from the edge the empty queue shows.
        assert_eq!(m.at_send_time(MS(1180), BASE), Some(Duration::ZERO));
        assert_eq!(m.at_send_time(MS(1500), BASE), Some(Duration::ZERO));
        // Older than the history keeps (3 base RTTs + a filter window): no reading.
        assert_eq!(m.at_send_time(MS(100), BASE), None);
    }

    #[test]
    fn a_queue_of_part_of_a_round_is_not_a_standing_queue() {
        let mut m = QueueMonitor::new();
        fed(&mut m, 1000, 2000, |t| if t >= 1800 { 50 } else { 0 });
        // The filter window (125 ms) is past the start of the queue; the round (500 ms) not.
        assert_eq!(m.delay(), MS(50));
        assert_eq!(m.standing(), Duration::ZERO);
        fed(&mut m, 2000, 2600, |_| 50);
        assert_eq!(m.standing(), MS(50));
        assert_eq!(m.highest(), MS(50));
    }

    #[test]
    fn jitter_that_outlasts_the_filter_but_not_a_round_makes_the_standing_queue_the_reading() {
        // +20 ms for 200 ms of every 600 ms: longer than the filter window (125 ms), shorter
        // than a round (500 ms). No queue stands.
        let mut m = QueueMonitor::new();
        fed(&mut m, 1000, 2000, |_| 0);
        assert!(!m.noisy());
        fed(&mut m, 2000, 8000, |t| if t % 600 < 200 { 20 } else { 0 });
        assert!(m.noisy());
        // Inside a spike the filtered reading is the spike, the reading the standing queue.
        fed(&mut m, 8000, 8150, |_| 20);
        assert_eq!(m.delay(), MS(20));
        assert_eq!(m.reading(), m.standing());
        assert_eq!(m.standing(), Duration::ZERO);
    }

    #[test]
    fn where_the_reading_is_noise_the_allowance_covers_its_spread() {
        let mut m = QueueMonitor::new();
        fed(&mut m, 1000, 2000, |_| 0);
        assert_eq!(m.own_allowance(), m.budget());
        // The spikes of the test above: 20 ms for a third of the time, the standing reading 0.
        fed(&mut m, 2000, 8000, |t| if t % 600 < 200 { 20 } else { 0 });
        assert!(m.noisy());
        // At the end of a spike the filtered reading has stood 20 ms above the standing one for
        // dozens of frames: the allowance is the spike's height, ten times the 2 ms budget.
        let allowance = m.own_allowance().as_secs_f64();
        assert!(
            (allowance - 0.020).abs() < 1e-4,
            "allowance {allowance} s, budget {:?}",
            m.budget()
        );
        assert!(allowance > 2.0 * m.budget().as_secs_f64());
    }

    #[test]
    fn a_queue_that_stands_keeps_the_filtered_reading() {
        let mut m = QueueMonitor::new();
        fed(&mut m, 1000, 2000, |_| 0);
        // A queue builds to 30 ms and stands for seconds, three times over.
        for cycle in 0..3 {
            let start = 2000 + cycle * 3000;
            fed(&mut m, start, start + 2000, |t| ((t - start) / 10).min(30));
            fed(&mut m, start + 2000, start + 3000, |_| 0);
        }
        assert!(!m.noisy());
        fed(&mut m, 11_000, 11_200, |_| 30);
        assert_eq!(m.reading(), m.delay());
        assert_eq!(m.delay(), MS(30));
    }

    #[test]
    fn the_budget_is_two_packets_or_twice_the_jitter() {
        let mut m = QueueMonitor::new();
        fed(&mut m, 1000, 2000, |_| 0);
        assert_eq!(m.budget(), MS(2));
        // Samples alternating 0 / 10 ms: RFC 3550 jitter → 10 ms, budget → 20 ms.
        fed(&mut m, 2000, 3000, |t| if t % 2 == 0 { 10 } else { 0 });
        assert!(
            (m.jitter().as_secs_f64() - 0.010).abs() < 1e-6,
            "{:?}",
            m.jitter()
        );
        assert!((m.budget().as_secs_f64() - 0.020).abs() < 1e-6);
    }

    #[test]
    fn alone_only_a_queue_near_the_highest_is_full_shared_a_quarter_of_it() {
        let mut m = QueueMonitor::new();
        fed(&mut m, 1000, 2000, |t| if t < 1500 { 40 } else { 0 });
        assert_eq!(m.highest(), MS(40));
        // Alone: max(3 budgets = 6 ms, ¾ × 40 ms); shared: max(1 budget, ¼ × 40 ms).
        assert_eq!(m.congestion_threshold(false), MS(30));
        assert_eq!(m.congestion_threshold(true), MS(10));
        // With a highest below the floors, the floors decide.
        let mut quiet = QueueMonitor::new();
        fed(&mut quiet, 1000, 2000, |_| 1);
        assert_eq!(quiet.congestion_threshold(false), MS(6));
        assert_eq!(quiet.congestion_threshold(true), MS(2));
    }
}
