//! Our media/bulk balancer: a queue-delay target on top of the congestion controller, updated
//! once per round trip, with the media's demand reserved out of the window.
//!
//! Why not the StreamBalancer's design (\[Ruehl2024\]): it infers congestion from the media's
//! own throughput and RTT slopes over fixed wall-clock windows (400 ms, 5 s) and answers with
//! fixed multiplicative steps, so it zig-zags, takes more than 10 s to regain bulk rate after
//! a false alarm, cannot tell a GEO round trip from a queue, and starves when a loss-based flow
//! fills the queue. Here:
//!
//! - **One signal, measured where the delay is**: queue delay = smoothed RTT − minimum RTT,
//!   the delay every media packet sees at the bottleneck behind bulk packets (the sender
//!   already sends media first: [`Class::Media`] has the higher priority). The target is
//!   40 ms ([`BalancerConfig::target`]).
//! - **A window, not a rate, sized from the path** (Little's law): bytes in flight ÷ RTT is
//!   the delivery rate, so the in-flight cap that leaves `target` of queue is
//!   `in_flight × (min_rtt + target) / (min_rtt + queue_delay)`. One update per smoothed RTT
//!   moves the queue to the target in one round, on a LEO path or a GEO one alike; below the
//!   target the cap grows by the same law, at most ×1.25 and at most one target's worth of
//!   the delivery rate per round (the bulk regains capacity in a few rounds, not seconds of
//!   fixed steps, and one round's growth never becomes more queue than the target: on a GEO
//!   path ×1.25 alone would add 150 ms).
//! - **Room for media, just in time for both**: media may always have its own pipe (its rate
//!   × the minimum RTT, plus a quarter) and its largest recent frame in flight, whatever the
//!   bulk's cap; bulk is written just in time (the transport never holds more than the cap),
//!   so a media frame never queues behind bulk inside the sender, and frames that do not fit
//!   wait in the application, where one past its deadline can still be cancelled.
//! - **Media first**: while the media does not get what it offers (acknowledged bytes over a
//!   second below 80 % of those written a round trip earlier), the bulk's cap halves every
//!   round and does not grow. Frames refused at the source are no demand: counting them
//!   would hold the bulk back while the link idles.
//! - **An overloaded media is held to what the path delivers**: while it is short and there
//!   is a queue, media may have only the delivery rate × (minimum RTT + target) out, so what
//!   it writes arrives instead of queueing at the bottleneck.
//! - **Frames that cannot arrive are not started**: each frame is admitted just in time, when
//!   the one before it is written; on a saturated path a frame whose age + the queue ahead +
//!   its serialization at the delivery rate + half the minimum RTT exceeds its deadline is
//!   dropped at the source (one frame per round still goes, to keep measuring). The queue
//!   ahead is what is in flight beyond a minimum RTT's worth while the media is short, and
//!   the smoothed queue capped at the target (the bulk yields) while it is served.
//! - **Coupled to the congestion controller**: the cap never exceeds the controller's window
//!   (plus two packets), and a loss that shrinks the window shrinks what bulk may write at
//!   once.
//! - **Late frames are cancelled**: a frame that cannot arrive before its deadline is reset
//!   instead of sent (RTP over QUIC, MoQ delivery timeouts), so an overload is not carried into
//!   the next second.
//! - **Holding on against a loss-based competitor** (SCReAM's answer, RFC 8298): when the
//!   queue stays above target for [`BalancerConfig::competition_rounds`] rounds although our
//!   cap sits at its floor, the queue is not ours; the target is raised towards the observed
//!   delay, up to [`BalancerConfig::max_target`], and decays back once the queue clears.
//! - **Rate signal for adaptive media**: the delivery rate (in flight ÷ RTT) while the link is
//!   saturated, which an adaptive source follows when capacity falls below its rate.

use std::collections::VecDeque;
use std::time::Duration;

use crate::{Class, Scheduler, SendWindows, TransportView};

/// The balancer's parameters; the defaults are the ones the reports use.
#[derive(Debug, Clone, PartialEq)]
pub struct BalancerConfig {
    /// Queue delay the bulk may cause at the bottleneck. Small next to the media's slack
    /// (deadline − one-way delay, 150 ms by default), because a keyframe's own serialization
    /// takes most of it on a 2–4 Mbit/s link; 40 ms measured best on media-bulk-thesis
    /// (25 ms lets the queue run dry between rounds, 50 ms makes keyframes late).
    pub target: Duration,
    /// Highest target when competing with a loss-based flow (SCReAM raises its target up to
    /// 0.4 s for the same reason).
    pub max_target: Duration,
    /// Rounds the queue must stay above target with our cap at its floor before the target is
    /// raised.
    pub competition_rounds: u32,
    /// Largest growth of the cap per round. ×2 (slow start's pace) overshoots into the
    /// media's deadline after every keyframe; ×1.25 measured best.
    pub max_growth_per_round: f64,
    /// Smallest cap, in packets of the current MTU.
    pub min_window_packets: u64,
    /// Whether frames that cannot make their deadline are cancelled.
    pub cancel_late_frames: bool,
    /// Share of the delivery rate an adaptive media source is asked to use.
    pub media_rate_share: f64,
}

impl Default for BalancerConfig {
    fn default() -> Self {
        Self {
            target: Duration::from_millis(40),
            max_target: Duration::from_millis(400),
            competition_rounds: 4,
            max_growth_per_round: 1.25,
            min_window_packets: 2,
            cancel_late_frames: true,
            media_rate_share: 0.85,
        }
    }
}

/// The largest frame is taken over this long (frames arrive every 33 ms, keyframes every 2 s).
const FRAME_WINDOW: Duration = Duration::from_secs(1);

/// Share of its offered bytes the media must get acknowledged for the path to count as
/// serving it (acknowledgements lag captures by a round trip; frames vary in size).
const MEDIA_SATISFIED_SHARE: f64 = 0.8;

/// How fast the target bitrate for adaptive media climbs while the path is not saturated, as
/// a share of itself per second.
const MEDIA_RATE_CLIMB_PER_S: f64 = 0.1;

/// The media's own pipe (its rate × the minimum RTT) is allowed this much more in flight.
const MEDIA_PIPE_HEADROOM: f64 = 1.25;

/// Headroom above the congestion window for bulk writes: what one ACK can free before the next
/// write.
const BULK_SLACK_PACKETS: u64 = 2;

/// The balancer (scheduler name `balancer`).
#[derive(Debug, Clone)]
pub struct Balancer {
    config: BalancerConfig,
    view: Option<TransportView>,
    /// Cap on bytes written and not acknowledged while bulk writes.
    window_bytes: u64,
    /// Current queue-delay target.
    target: Duration,
    /// End of the current round (one smoothed RTT).
    round_end: Option<Duration>,
    /// Most bytes in flight seen this round: what the cap actually let out.
    round_max_in_flight: u64,
    /// Consecutive rounds above target with the cap at its floor.
    rounds_over_target_at_floor: u32,
    /// Frames captured in the last [`FRAME_WINDOW`]: (capture time, bytes).
    recent_frames: VecDeque<(Duration, u64)>,
    /// Media bytes handed to the transport, kept as long as `recent_frames`: (time, bytes).
    recent_media_writes: VecDeque<(Duration, u64)>,
    /// Media bytes the peer acknowledged in the last [`FRAME_WINDOW`]: (time, bytes).
    recent_media_acks: VecDeque<(Duration, u64)>,
    /// Delivery-rate estimate while saturated, bit/s, for adaptive media.
    media_target_bps: Option<u64>,
    /// Queue delay at the end of the last round.
    last_queue_delay: Duration,
    /// Delivery rate at the end of the last round (in flight ÷ RTT), bit/s.
    last_rate_bps: Option<f64>,
    /// When a frame was last admitted.
    last_admitted: Option<Duration>,
}

impl Balancer {
    /// A balancer with these parameters.
    pub fn new(config: BalancerConfig) -> Self {
        let target = config.target;
        Self {
            config,
            view: None,
            window_bytes: 0,
            target,
            round_end: None,
            round_max_in_flight: 0,
            rounds_over_target_at_floor: 0,
            recent_frames: VecDeque::new(),
            recent_media_writes: VecDeque::new(),
            recent_media_acks: VecDeque::new(),
            media_target_bps: None,
            last_queue_delay: Duration::ZERO,
            last_rate_bps: None,
            last_admitted: None,
        }
    }

    /// The in-flight cap for bulk writes, bytes (0 before the first observation).
    pub fn window_bytes(&self) -> u64 {
        self.window_bytes
    }

    /// The queue-delay target now (raised above the configured one while competing).
    pub fn target(&self) -> Duration {
        self.target
    }

    /// What media may buffer beyond the cap: its largest recent frame, so a keyframe is
    /// handed to the transport whole (and, at the higher priority, leaves before any bulk
    /// written after it) — but no more: frames that do not fit wait in the application,
    /// where a frame past its deadline can still be cancelled instead of sent.
    fn media_reserve_bytes(&self) -> u64 {
        let now = self.view.map_or(Duration::ZERO, |v| v.now);
        self.recent_frames
            .iter()
            .filter(|&&(t, _)| t + FRAME_WINDOW > now)
            .map(|&(_, b)| b)
            .max()
            .unwrap_or(0)
    }

    /// Media bytes captured per second over the last second.
    fn media_demand_bytes_per_s(&self, now: Duration) -> f64 {
        let bytes: u64 = self
            .recent_frames
            .iter()
            .filter(|&&(t, _)| t + FRAME_WINDOW > now)
            .map(|&(_, b)| b)
            .sum();
        bytes as f64 / FRAME_WINDOW.as_secs_f64()
    }

    /// Whether the media gets what it offers: media bytes acknowledged over the last second
    /// at least [`MEDIA_SATISFIED_SHARE`] of the bytes it wrote in the second one smoothed
    /// RTT earlier (an acknowledgement comes a round trip after its frame). Written, not
    /// captured: a frame refused because it could not arrive in time is no demand the path
    /// could have served, and counting it would hold the bulk back while the link idles. When
    /// it does not,
    /// the bulk must make room, and the queue is (also) the media's own: raising the target
    /// would only make it later.
    fn media_satisfied(&self) -> bool {
        let Some(view) = self.view else {
            return true;
        };
        let until = view.now.saturating_sub(view.srtt);
        let from = until.saturating_sub(FRAME_WINDOW);
        let written: u64 = self
            .recent_media_writes
            .iter()
            .filter(|&&(t, _)| t > from && t <= until)
            .map(|&(_, b)| b)
            .sum();
        let acked: u64 = self.recent_media_acks.iter().map(|&(_, b)| b).sum();
        acked as f64 >= MEDIA_SATISFIED_SHARE * written as f64
    }

    fn floor_bytes(&self, view: &TransportView) -> u64 {
        self.config.min_window_packets * view.mtu_bytes.max(1200)
    }

    /// One round's update of the cap and the target from the queue delay at its end.
    fn end_round(&mut self, view: &TransportView) {
        let floor = self.floor_bytes(view);
        if view.min_rtt.is_zero() || view.srtt.is_zero() {
            return;
        }
        let queue_delay = view.srtt.saturating_sub(view.min_rtt);
        let base = view.min_rtt.as_secs_f64();
        let target = self.target.as_secs_f64();
        let used = self.round_max_in_flight.max(floor);
        let at_floor = self.window_bytes <= floor.saturating_mul(2);
        let media_satisfied = self.media_satisfied();
        if !media_satisfied {
            // Media first: while it does not get what it offers, the bulk halves each round
            // and does not grow, whatever the queue says.
            self.window_bytes = (self.window_bytes / 2).max(floor);
            self.rounds_over_target_at_floor = 0;
            if self.target > self.config.target {
                self.target = self.target.mul_f64(0.8).max(self.config.target);
            }
        } else if queue_delay > self.target {
            // Little's law: the cap that leaves `target` of queue at today's delivery rate.
            let scale = (base + target) / (base + queue_delay.as_secs_f64());
            let from = self.window_bytes.min(used) as f64;
            self.window_bytes = ((from * scale) as u64).max(floor);
            // The queue is someone else's only if cutting our bulk to the floor did not clear it
            // while our media gets all it offers.
            if at_floor {
                self.rounds_over_target_at_floor += 1;
            } else {
                self.rounds_over_target_at_floor = 0;
            }
            if self.rounds_over_target_at_floor >= self.config.competition_rounds {
                // Not our queue: raise the target towards what is there, so the bulk holds its
                // share instead of starving behind a loss-based flow.
                let raised = self.target.mul_f64(1.5).min(queue_delay);
                self.target = raised.max(self.target).min(self.config.max_target);
                self.rounds_over_target_at_floor = 0;
            }
        } else {
            self.rounds_over_target_at_floor = 0;
            let window_limited = used as f64 >= 0.8 * self.window_bytes as f64;
            if window_limited {
                let growth = if queue_delay < self.target / 2 {
                    self.config.max_growth_per_round
                } else {
                    ((base + target) / (base + queue_delay.as_secs_f64()))
                        .clamp(1.0, self.config.max_growth_per_round)
                };
                // And at most one target's worth of the delivery rate per round: one round's
                // growth is queue for the next (the smoothed RTT shows it a round later), and
                // on a GEO path ×1.25 of a 600 ms pipe is 150 ms of queue, the media's whole
                // slack.
                let rate_bytes_per_s = used as f64 / view.srtt.as_secs_f64();
                let grown = (self.window_bytes as f64 * growth)
                    .min(self.window_bytes as f64 + rate_bytes_per_s * target);
                self.window_bytes = (grown as u64).max(floor);
            }
            if queue_delay < self.target / 4 && self.target > self.config.target {
                // The competitor left: back towards our own target.
                self.target = self.target.mul_f64(0.8).max(self.config.target);
            }
        }
        // Coupled to the controller: never more than its window allows out at once.
        let cwnd_cap = view.cwnd_bytes + BULK_SLACK_PACKETS * view.mtu_bytes;
        self.window_bytes = self.window_bytes.min(cwnd_cap.max(floor));
        // The rate the path delivers while it is saturated (a queue above half the target),
        // for an adaptive media source; otherwise let the source climb back.
        let delivery_bps = view.in_flight_bytes.max(used) as f64 * 8.0 / view.srtt.as_secs_f64();
        self.last_queue_delay = queue_delay;
        self.last_rate_bps = Some(delivery_bps);

        // Climbing back is gentle (SCReAM's lesson: the hard part is when to increase):
        // MEDIA_RATE_CLIMB_PER_S of the rate per second of rounds, whatever the RTT.
        let climb = 1.0 + MEDIA_RATE_CLIMB_PER_S * view.srtt.as_secs_f64();
        // Against the configured target, not a raised one: the media's own queue is never
        // a competitor's.
        self.media_target_bps = if queue_delay > self.config.target / 2 {
            Some((delivery_bps * self.config.media_rate_share) as u64)
        } else {
            self.media_target_bps
                .map(|bps| (bps as f64 * climb).max(delivery_bps * self.config.media_rate_share))
                .map(|bps| bps as u64)
        };
    }
}

impl Scheduler for Balancer {
    fn name(&self) -> &'static str {
        "balancer"
    }

    fn observe(&mut self, view: &TransportView) {
        // Frames are kept one smoothed RTT longer than the window: their acknowledgements
        // come that much later (see `media_satisfied`).
        while self
            .recent_frames
            .front()
            .is_some_and(|&(t, _)| t + FRAME_WINDOW + view.srtt <= view.now)
        {
            self.recent_frames.pop_front();
        }
        while self
            .recent_media_writes
            .front()
            .is_some_and(|&(t, _)| t + FRAME_WINDOW + view.srtt <= view.now)
        {
            self.recent_media_writes.pop_front();
        }
        while self
            .recent_media_acks
            .front()
            .is_some_and(|&(t, _)| t + FRAME_WINDOW <= view.now)
        {
            self.recent_media_acks.pop_front();
        }
        if self.view.is_none() {
            // Start from the controller's window: the first rounds measure.
            self.window_bytes = view.cwnd_bytes.max(self.floor_bytes(view));
        }
        self.round_max_in_flight = self.round_max_in_flight.max(view.in_flight_bytes);
        match self.round_end {
            None if !view.srtt.is_zero() => self.round_end = Some(view.now + view.srtt),
            Some(end) if view.now >= end => {
                self.end_round(view);
                self.round_max_in_flight = view.in_flight_bytes;
                self.round_end = Some(view.now + view.srtt.max(Duration::from_millis(1)));
            }
            _ => {}
        }
        self.view = Some(*view);
    }

    fn priority(&self, class: Class) -> i32 {
        match class {
            Class::Media => 1,
            Class::Bulk => 0,
        }
    }

    fn on_frame(&mut self, now: Duration, bytes: u64) {
        self.recent_frames.push_back((now, bytes));
    }

    fn on_written(&mut self, now: Duration, class: Class, bytes: u64) {
        if class == Class::Media {
            self.recent_media_writes.push_back((now, bytes));
        }
    }

    fn on_acked(&mut self, now: Duration, class: Class, bytes: u64) {
        if class == Class::Media {
            self.recent_media_acks.push_back((now, bytes));
        }
    }

    fn send_window(&self) -> Option<SendWindows> {
        let view = self.view?;
        let bulk_bytes = self.window_bytes;
        // Media is never held to the bulk's cap: it may always have its own pipe (its rate
        // × the minimum RTT, with a quarter of headroom) in flight, whatever the bulk got.
        let media_pipe = (self.media_demand_bytes_per_s(view.now)
            * view.min_rtt.as_secs_f64()
            * MEDIA_PIPE_HEADROOM) as u64;
        let mut media_bytes =
            bulk_bytes.max(media_pipe) + self.media_reserve_bytes() + 2 * view.mtu_bytes;
        // Overloaded (a queue, and still the media does not get what it offers): the media
        // may have no more out than the path delivers in a minimum RTT plus the target, or
        // what it writes only queues at the bottleneck and arrives late.
        if let Some(rate_bps) = self.last_rate_bps
            && self.last_queue_delay > self.target / 2
            && !self.media_satisfied()
        {
            let deliverable = rate_bps / 8.0 * (view.min_rtt + self.target).as_secs_f64();
            media_bytes = media_bytes.min((deliverable as u64).max(2 * view.mtu_bytes));
        }
        Some(SendWindows {
            media_bytes,
            bulk_bytes,
        })
    }

    fn admit_frame(&mut self, age: Duration, bytes: u64, deadline: Duration) -> bool {
        if !self.config.cancel_late_frames {
            return true;
        }
        // The delivery rate says what a frame can get only while the path is saturated (a
        // queue of at least half the target); otherwise the rate is our own demand, and
        // refusing frames because of it would starve the media for good.
        let saturated = self.last_queue_delay > self.target / 2;
        let Some(view) = self.view else {
            return true;
        };
        let admit = match (self.last_rate_bps, saturated) {
            (Some(rate_bps), true) => {
                // Arrival ≈ now + the queue ahead of it (at most the target: the bulk yields
                // to media) + its own serialization at the delivery rate + half the minimum
                // RTT.
                let serialization = Duration::from_secs_f64(bytes as f64 * 8.0 / rate_bps.max(1.0));
                // The queue ahead now: what is in flight beyond one minimum RTT's worth at the
                // delivery rate (the smoothed RTT lags a round, and counts the previous frame's
                // own serialization, which is over by the time this one starts). While the
                // media gets what it offers, that queue is the bulk's, which yields within a
                // round (so at most the target); otherwise it is the media's own.
                let queue_now = Duration::from_secs_f64(
                    (view.in_flight_bytes as f64 * 8.0 / rate_bps.max(1.0)
                        - view.min_rtt.as_secs_f64())
                    .max(0.0),
                );
                let queue = if self.media_satisfied() {
                    self.last_queue_delay.min(self.target)
                } else {
                    queue_now
                };
                age + queue + serialization + view.min_rtt / 2 <= deadline
                    // A probe: the rate is measured from what we send, so refusing every
                    // frame would keep it low for good; one frame per round goes anyway.
                    || self
                        .last_admitted
                        .is_none_or(|at| view.now >= at + view.srtt.max(view.min_rtt))
            }
            _ => true,
        };
        if admit {
            self.last_admitted = Some(view.now);
        }
        admit
    }

    fn frames_just_in_time(&self) -> bool {
        self.config.cancel_late_frames
    }

    fn frame_expiry(&self) -> Option<Duration> {
        if !self.config.cancel_late_frames {
            return None;
        }
        // A frame still at the sender needs at least half the minimum RTT to arrive.
        Some(self.view.map_or(Duration::ZERO, |v| v.min_rtt / 2))
    }

    fn media_target_bps(&self) -> Option<u64> {
        self.media_target_bps
    }

    fn wakeup(&self) -> Option<Duration> {
        self.round_end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 1200;

    /// The parameters the arithmetic below is worked out for.
    fn config() -> BalancerConfig {
        BalancerConfig {
            target: Duration::from_millis(25),
            max_growth_per_round: 2.0,
            min_window_packets: 4,
            ..BalancerConfig::default()
        }
    }

    fn view(
        now_ms: u64,
        cwnd: u64,
        in_flight: u64,
        srtt_ms: u64,
        min_rtt_ms: u64,
    ) -> TransportView {
        TransportView {
            now: Duration::from_millis(now_ms),
            cwnd_bytes: cwnd,
            in_flight_bytes: in_flight,
            srtt: Duration::from_millis(srtt_ms),
            min_rtt: Duration::from_millis(min_rtt_ms),
            mtu_bytes: MTU,
        }
    }

    #[test]
    fn a_queue_above_target_is_drained_to_target_in_one_round() {
        let mut b = Balancer::new(config());
        // 100 kB in flight, min RTT 50 ms, srtt 150 ms: 100 ms of queue at 100 kB / 150 ms.
        b.observe(&view(0, 200_000, 100_000, 150, 50));
        assert_eq!(b.window_bytes(), 200_000);
        b.observe(&view(150, 200_000, 100_000, 150, 50));
        // cap = min(cap, used) × (50 + 25) / (50 + 100) = 100 000 × 0.5
        assert_eq!(b.window_bytes(), 50_000);
        assert_eq!(b.wakeup(), Some(Duration::from_millis(300)));
    }

    #[test]
    fn no_queue_grows_the_cap_by_the_factor_or_one_target_of_rate_up_to_the_controller_window() {
        let mut b = Balancer::new(config());
        b.observe(&view(0, 40_000, 40_000, 50, 50));
        b.observe(&view(50, 40_000, 40_000, 50, 50));
        // Growth is capped by cwnd + 2 packets.
        assert_eq!(b.window_bytes(), 40_000 + 2 * MTU);
        // 40 kB over 50 ms is 800 kB/s: one 25 ms target's worth is 20 kB, less than ×2.
        let mut b = Balancer::new(config());
        b.observe(&view(0, 1_000_000, 40_000, 50, 50));
        b.window_bytes = 40_000;
        b.observe(&view(50, 1_000_000, 40_000, 50, 50));
        assert_eq!(b.window_bytes(), 60_000);
        // A short RTT: 10 kB over 10 ms is 1 MB/s, + 25 kB per round; ×2 is less.
        let mut b = Balancer::new(config());
        b.observe(&view(0, 1_000_000, 10_000, 10, 10));
        b.window_bytes = 10_000;
        b.observe(&view(10, 1_000_000, 10_000, 10, 10));
        assert_eq!(b.window_bytes(), 20_000);
        // GEO: 300 kB over 600 ms is 500 kB/s; a round adds 12.5 kB (25 ms of queue), not
        // 300 kB (600 ms of it).
        let mut b = Balancer::new(config());
        b.observe(&view(0, 1_000_000, 300_000, 600, 600));
        b.window_bytes = 300_000;
        b.observe(&view(600, 1_000_000, 300_000, 600, 600));
        assert_eq!(b.window_bytes(), 312_500);
    }

    #[test]
    fn between_half_and_full_target_growth_follows_littles_law() {
        let mut b = Balancer::new(config());
        b.observe(&view(0, 1_000_000, 50_000, 70, 50));
        b.window_bytes = 50_000;
        // 20 ms of queue (≥ target / 2 = 12.5 ms): × (50 + 25) / (50 + 20).
        b.observe(&view(70, 1_000_000, 50_000, 70, 50));
        assert_eq!(b.window_bytes(), (50_000.0 * 75.0 / 70.0) as u64);
    }

    #[test]
    fn an_unused_cap_does_not_grow() {
        let mut b = Balancer::new(config());
        b.observe(&view(0, 1_000_000, 10_000, 50, 50));
        b.window_bytes = 100_000;
        b.observe(&view(50, 1_000_000, 10_000, 50, 50));
        assert_eq!(b.window_bytes(), 100_000);
    }

    #[test]
    fn a_queue_that_is_not_ours_raises_the_target_then_it_decays() {
        let config = config();
        let floor = config.min_window_packets * MTU;
        let mut b = Balancer::new(config.clone());
        let mut now = 0;
        b.observe(&view(now, 1_000_000, floor, 350, 50));
        b.window_bytes = floor;
        for _ in 0..config.competition_rounds {
            now += 350;
            b.observe(&view(now, 1_000_000, floor, 350, 50));
        }
        // 300 ms of queue with the cap at its floor: the target rises by half (25 → 37.5 ms).
        assert_eq!(b.target(), Duration::from_micros(37_500));
        for _ in 0..40 {
            now += 350;
            b.observe(&view(now, 1_000_000, floor, 350, 50));
        }
        // Bounded by the observed delay and by max_target.
        assert_eq!(b.target(), Duration::from_millis(300));
        // The competitor leaves: the queue clears, the target decays back to the configured.
        for _ in 0..40 {
            now += 50;
            b.observe(&view(now, 1_000_000, floor, 50, 50));
        }
        assert_eq!(b.target(), config.target);
    }

    #[test]
    fn media_may_buffer_its_largest_recent_frame_beyond_the_bulk_cap() {
        let mut b = Balancer::new(config());
        for i in 0..30 {
            b.on_frame(
                Duration::from_millis(i * 33),
                if i == 0 { 40_000 } else { 8_000 },
            );
        }
        b.observe(&view(990, 100_000, 0, 100, 50));
        let w = b.send_window().unwrap();
        assert_eq!(w.bulk_bytes, 100_000);
        // The largest frame of the last second (40 000) + 2 MTU.
        assert_eq!(w.media_bytes, 100_000 + 40_000 + 2 * MTU);
        // A second later the frames have left the demand window (no queue: the cap stays).
        b.observe(&view(2_000, 100_000, 0, 50, 50));
        assert_eq!(b.send_window().unwrap().media_bytes, 100_000 + 2 * MTU);
    }

    #[test]
    fn the_target_is_not_raised_while_our_own_media_overloads_the_path() {
        let config = config();
        let floor = config.min_window_packets * MTU;
        let mut b = Balancer::new(config.clone());
        let mut now = 0;
        b.observe(&view(now, 1_000_000, floor, 350, 50));
        b.window_bytes = floor;
        for _ in 0..40 {
            now += 350;
            // 10 kB of frames captured and written per round, none acknowledged.
            b.on_frame(Duration::from_millis(now), 10_000);
            b.on_written(Duration::from_millis(now), Class::Media, 10_000);
            b.observe(&view(now, 1_000_000, floor, 350, 50));
        }
        assert_eq!(b.target(), config.target);
        // Once the media is served, a queue that stays is someone else's.
        for _ in 0..config.competition_rounds {
            now += 350;
            b.on_frame(Duration::from_millis(now), 10_000);
            b.on_written(Duration::from_millis(now), Class::Media, 10_000);
            b.on_acked(Duration::from_millis(now), Class::Media, 30_000);
            b.observe(&view(now, 1_000_000, floor, 350, 50));
        }
        assert!(b.target() > config.target, "{:?}", b.target());
    }

    #[test]
    fn a_frame_that_cannot_arrive_in_time_is_not_started() {
        let mut b = Balancer::new(config());
        let deadline = Duration::from_millis(175);
        // Nothing measured yet: everything is admitted.
        assert!(b.admit_frame(Duration::from_millis(100), 40_000, deadline));
        // 7 500 B in flight over 100 ms of RTT: 600 kbit/s delivered, 50 ms of queue (capped
        // at the 25 ms target in the estimate: the bulk yields to media).
        b.observe(&view(0, 1_000_000, 7_500, 100, 50));
        b.observe(&view(100, 1_000_000, 7_500, 100, 50));
        assert_eq!(b.last_rate_bps, Some(600_000.0));
        // 7 500 B take 100 ms at 600 kbit/s; + 25 ms of queue + 25 ms = 150 ms: admitted
        // when at most 25 ms old.
        assert!(b.admit_frame(Duration::from_millis(25), 7_500, deadline));
        assert!(!b.admit_frame(Duration::from_millis(26), 7_500, deadline));
        // A keyframe five times as large never fits at this rate.
        assert!(!b.admit_frame(Duration::ZERO, 37_500, deadline));
    }

    #[test]
    fn media_keeps_its_own_pipe_and_the_bulk_yields_while_media_is_short() {
        let mut b = Balancer::new(config());
        // A GEO path: 2 Mbit/s of media (250 kB/s) over a 600 ms minimum RTT.
        for i in 0..30u64 {
            b.on_frame(Duration::from_millis(i * 33), 8_333);
            b.on_written(Duration::from_millis(i * 33), Class::Media, 8_333);
        }
        b.observe(&view(990, 1_000_000, 0, 600, 600));
        b.window_bytes = 10_000;
        let w = b.send_window().unwrap();
        // Bulk: its cap. Media: its pipe 249 990 B/s × 0.6 s × 1.25 + one frame + 2 MTU.
        assert_eq!(w.bulk_bytes, 10_000);
        assert_eq!(w.media_bytes, 187_492 + 8_333 + 2 * MTU);
        // Nothing acknowledged a round later: the media is short, the bulk halves.
        b.observe(&view(1_590, 1_000_000, 10_000, 600, 600));
        assert_eq!(b.window_bytes(), 5_000);
        b.observe(&view(2_190, 1_000_000, 10_000, 600, 600));
        assert_eq!(b.window_bytes(), 4 * MTU);
    }

    #[test]
    fn frames_refused_at_the_source_are_no_demand_that_holds_the_bulk_back() {
        let mut b = Balancer::new(config());
        b.observe(&view(0, 1_000_000, 10_000, 100, 50));
        b.window_bytes = 10_000;
        // A second of frames captured, none written (all refused): the media is not short.
        for i in 0..30u64 {
            b.on_frame(Duration::from_millis(i * 33), 8_333);
        }
        b.observe(&view(1_000, 1_000_000, 10_000, 100, 50));
        assert!(b.media_satisfied());
    }

    #[test]
    fn an_overloaded_media_may_have_only_what_the_path_delivers_in_flight() {
        let mut b = Balancer::new(config());
        // 7 500 B in flight over 100 ms: 600 kbit/s delivered, 50 ms of queue (> target / 2).
        b.observe(&view(0, 1_000_000, 7_500, 100, 50));
        b.observe(&view(100, 1_000_000, 7_500, 100, 50));
        for i in 0..30u64 {
            b.on_frame(Duration::from_millis(100 + i * 33), 8_333);
            b.on_written(Duration::from_millis(100 + i * 33), Class::Media, 8_333);
        }
        b.observe(&view(1_100, 1_000_000, 7_500, 100, 50));
        assert!(!b.media_satisfied());
        // 75 000 B/s × (50 + 25) ms.
        assert_eq!(b.send_window().unwrap().media_bytes, 5_625);
        // Served again: the cap or its own pipe (29 frames of the last second × 50 ms ×
        // 1.25), plus its largest frame and 2 MTU.
        b.on_acked(Duration::from_millis(1_150), Class::Media, 250_000);
        let pipe = (29.0 * 8_333.0 * 0.05 * 1.25) as u64;
        assert_eq!(
            b.send_window().unwrap().media_bytes,
            b.window_bytes().max(pipe) + 8_333 + 2 * MTU
        );
    }

    #[test]
    fn while_the_media_is_short_its_frames_see_the_whole_queue_ahead() {
        let mut b = Balancer::new(config());
        let deadline = Duration::from_millis(175);
        b.observe(&view(0, 1_000_000, 7_500, 100, 50));
        b.observe(&view(100, 1_000_000, 7_500, 100, 50));
        // Media short: written but not acknowledged.
        b.on_written(Duration::from_millis(100), Class::Media, 50_000);
        b.observe(&view(1_100, 1_000_000, 7_500, 100, 50));
        assert!(!b.media_satisfied());
        // 7 500 B in flight at 600 kbit/s is 100 ms, 50 ms of it queue (not capped at the
        // target): 3 000 B (40 ms) + 50 + 25 = 115 ms, admitted up to 60 ms old.
        b.last_admitted = Some(Duration::from_millis(1_100));
        assert!(b.admit_frame(Duration::from_millis(60), 3_000, deadline));
        assert!(!b.admit_frame(Duration::from_millis(61), 3_000, deadline));
        // With nothing in flight, the queue ahead is empty.
        b.observe(&view(1_100, 1_000_000, 0, 100, 50));
        assert!(b.admit_frame(Duration::from_millis(110), 3_000, deadline));
        assert!(b.frames_just_in_time());
    }

    #[test]
    fn late_frames_are_cancelled_half_a_minimum_rtt_before_their_deadline() {
        let mut b = Balancer::new(config());
        b.observe(&view(0, 100_000, 0, 600, 600));
        assert_eq!(b.frame_expiry(), Some(Duration::from_millis(300)));
        let b = Balancer::new(BalancerConfig {
            cancel_late_frames: false,
            ..config()
        });
        assert_eq!(b.frame_expiry(), None);
    }

    #[test]
    fn the_media_target_is_a_share_of_the_delivery_rate_when_saturated() {
        let mut b = Balancer::new(config());
        // 75 kB in flight over 1 s of RTT with 950 ms of queue: 600 kbit/s delivered.
        b.observe(&view(0, 1_000_000, 75_000, 1_000, 50));
        b.observe(&view(1_000, 1_000_000, 75_000, 1_000, 50));
        assert_eq!(b.media_target_bps(), Some((600_000.0 * 0.85) as u64));
    }
}
