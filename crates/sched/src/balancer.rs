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
//!   already sends media first: [`Class::Media`] has the higher priority).
//! - **A window, not a rate, sized from the path** (Little's law): bytes in flight ÷ RTT is
//!   the delivery rate, so the in-flight cap that leaves `target` of queue is
//!   `in_flight × (min_rtt + target) / (min_rtt + queue_delay)`. One update per smoothed RTT
//!   moves the queue to the target in one round, on a LEO path or a GEO one alike. Below half
//!   the target the link is not saturated and the cap doubles per round (the bulk regains
//!   capacity in log₂ rounds, not seconds of fixed steps).
//! - **Room for media, just in time for both**: media may buffer its largest recent frame on
//!   top of the cap, so a keyframe is handed to the transport whole; bulk is written just in
//!   time (the transport never holds more than the cap), so a media frame never queues behind
//!   bulk inside the sender, and frames that do not fit wait in the application, where one
//!   past its deadline can still be cancelled.
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
    /// takes most of it on a 2–4 Mbit/s link.
    pub target: Duration,
    /// Highest target when competing with a loss-based flow (SCReAM raises its target up to
    /// 0.4 s for the same reason).
    pub max_target: Duration,
    /// Rounds the queue must stay above target with our cap at its floor before the target is
    /// raised.
    pub competition_rounds: u32,
    /// Largest growth of the cap per round (below half the target).
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
            target: Duration::from_millis(25),
            max_target: Duration::from_millis(400),
            competition_rounds: 4,
            max_growth_per_round: 2.0,
            min_window_packets: 4,
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
    /// Media bytes the peer acknowledged in the last [`FRAME_WINDOW`]: (time, bytes).
    recent_media_acks: VecDeque<(Duration, u64)>,
    /// Delivery-rate estimate while saturated, bit/s, for adaptive media.
    media_target_bps: Option<u64>,
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
            recent_media_acks: VecDeque::new(),
            media_target_bps: None,
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
        self.recent_frames
            .iter()
            .map(|&(_, b)| b)
            .max()
            .unwrap_or(0)
    }

    /// Whether the media gets what it offers: acknowledged media bytes over the last second
    /// at least [`MEDIA_SATISFIED_SHARE`] of the bytes captured in it. When it does not, the
    /// queue is (also) the media's own, and raising the target would only make it later.
    fn media_satisfied(&self) -> bool {
        let captured: u64 = self.recent_frames.iter().map(|&(_, b)| b).sum();
        let acked: u64 = self.recent_media_acks.iter().map(|&(_, b)| b).sum();
        acked as f64 >= MEDIA_SATISFIED_SHARE * captured as f64
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
        if queue_delay > self.target {
            // Little's law: the cap that leaves `target` of queue at today's delivery rate.
            let scale = (base + target) / (base + queue_delay.as_secs_f64());
            let from = self.window_bytes.min(used) as f64;
            self.window_bytes = ((from * scale) as u64).max(floor);
            // The queue is someone else's only if cutting our bulk to the floor did not clear it
            // while our media gets all it offers.
            if at_floor && self.media_satisfied() {
                self.rounds_over_target_at_floor += 1;
            } else {
                self.rounds_over_target_at_floor = 0;
            }
            if !self.media_satisfied() && self.target > self.config.target {
                // Our own media overloads the path: a raised target only delays it more.
                self.target = self.target.mul_f64(0.8).max(self.config.target);
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
                self.window_bytes = ((self.window_bytes as f64 * growth) as u64).max(floor);
            }
            if queue_delay < self.target / 4 && self.target > self.config.target {
                // The competitor left: back towards our own target.
                self.target = self.target.mul_f64(0.8).max(self.config.target);
            }
        }
        if std::env::var_os("SQ_DEBUG_BAL").is_some() {
            eprintln!("{:.2} qd {:.1} tgt {:.1} used {} W {} cwnd {} inflight {} sat {}", view.now.as_secs_f64(), queue_delay.as_secs_f64()*1e3, self.target.as_secs_f64()*1e3, used, self.window_bytes, view.cwnd_bytes, view.in_flight_bytes, self.media_satisfied());
        }
        // Coupled to the controller: never more than its window allows out at once.
        let cwnd_cap = view.cwnd_bytes + BULK_SLACK_PACKETS * view.mtu_bytes;
        self.window_bytes = self.window_bytes.min(cwnd_cap.max(floor));
        // The rate the path delivers while it is saturated (a queue above half the target),
        // for an adaptive media source; otherwise let the source climb back.
        let delivery_bps = view.in_flight_bytes.max(used) as f64 * 8.0 / view.srtt.as_secs_f64();
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
        while self
            .recent_frames
            .front()
            .is_some_and(|&(t, _)| t + FRAME_WINDOW <= view.now)
        {
            self.recent_frames.pop_front();
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

    fn on_acked(&mut self, now: Duration, class: Class, bytes: u64) {
        if class == Class::Media {
            self.recent_media_acks.push_back((now, bytes));
        }
    }

    fn send_window(&self) -> Option<SendWindows> {
        let view = self.view?;
        let bulk_bytes = self.window_bytes;
        Some(SendWindows {
            media_bytes: bulk_bytes + self.media_reserve_bytes() + 2 * view.mtu_bytes,
            bulk_bytes,
        })
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
        let mut b = Balancer::new(BalancerConfig::default());
        // 100 kB in flight, min RTT 50 ms, srtt 150 ms: 100 ms of queue at 100 kB / 150 ms.
        b.observe(&view(0, 200_000, 100_000, 150, 50));
        assert_eq!(b.window_bytes(), 200_000);
        b.observe(&view(150, 200_000, 100_000, 150, 50));
        // cap = min(cap, used) × (50 + 25) / (50 + 100) = 100 000 × 0.5
        assert_eq!(b.window_bytes(), 50_000);
        assert_eq!(b.wakeup(), Some(Duration::from_millis(300)));
    }

    #[test]
    fn no_queue_doubles_the_cap_per_round_up_to_the_controller_window() {
        let mut b = Balancer::new(BalancerConfig::default());
        b.observe(&view(0, 40_000, 40_000, 50, 50));
        b.observe(&view(50, 40_000, 40_000, 50, 50));
        // Doubling is capped by cwnd + 2 packets.
        assert_eq!(b.window_bytes(), 40_000 + 2 * MTU);
        let mut b = Balancer::new(BalancerConfig::default());
        b.observe(&view(0, 1_000_000, 40_000, 50, 50));
        b.window_bytes = 40_000;
        b.observe(&view(50, 1_000_000, 40_000, 50, 50));
        assert_eq!(b.window_bytes(), 80_000);
    }

    #[test]
    fn between_half_and_full_target_growth_follows_littles_law() {
        let mut b = Balancer::new(BalancerConfig::default());
        b.observe(&view(0, 1_000_000, 50_000, 70, 50));
        b.window_bytes = 50_000;
        // 20 ms of queue (≥ target / 2 = 12.5 ms): × (50 + 25) / (50 + 20).
        b.observe(&view(70, 1_000_000, 50_000, 70, 50));
        assert_eq!(b.window_bytes(), (50_000.0 * 75.0 / 70.0) as u64);
    }

    #[test]
    fn an_unused_cap_does_not_grow() {
        let mut b = Balancer::new(BalancerConfig::default());
        b.observe(&view(0, 1_000_000, 10_000, 50, 50));
        b.window_bytes = 100_000;
        b.observe(&view(50, 1_000_000, 10_000, 50, 50));
        assert_eq!(b.window_bytes(), 100_000);
    }

    #[test]
    fn a_queue_that_is_not_ours_raises_the_target_then_it_decays() {
        let config = BalancerConfig::default();
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
        let mut b = Balancer::new(BalancerConfig::default());
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
        let config = BalancerConfig::default();
        let floor = config.min_window_packets * MTU;
        let mut b = Balancer::new(config.clone());
        let mut now = 0;
        b.observe(&view(now, 1_000_000, floor, 350, 50));
        b.window_bytes = floor;
        for _ in 0..40 {
            now += 350;
            // 10 kB of frames captured per round, none acknowledged.
            b.on_frame(Duration::from_millis(now), 10_000);
            b.observe(&view(now, 1_000_000, floor, 350, 50));
        }
        assert_eq!(b.target(), config.target);
        // Once the media is served, a queue that stays is someone else's.
        for _ in 0..config.competition_rounds {
            now += 350;
            b.on_frame(Duration::from_millis(now), 10_000);
            b.on_acked(Duration::from_millis(now), Class::Media, 30_000);
            b.observe(&view(now, 1_000_000, floor, 350, 50));
        }
        assert!(b.target() > config.target, "{:?}", b.target());
    }

    #[test]
    fn late_frames_are_cancelled_half_a_minimum_rtt_before_their_deadline() {
        let mut b = Balancer::new(BalancerConfig::default());
        b.observe(&view(0, 100_000, 0, 600, 600));
        assert_eq!(b.frame_expiry(), Some(Duration::from_millis(300)));
        let b = Balancer::new(BalancerConfig {
            cancel_late_frames: false,
            ..BalancerConfig::default()
        });
        assert_eq!(b.frame_expiry(), None);
    }

    #[test]
    fn the_media_target_is_a_share_of_the_delivery_rate_when_saturated() {
        let mut b = Balancer::new(BalancerConfig::default());
        // 75 kB in flight over 1 s of RTT with 950 ms of queue: 600 kbit/s delivered.
        b.observe(&view(0, 1_000_000, 75_000, 1_000, 50));
        b.observe(&view(1_000, 1_000_000, 75_000, 1_000, 50));
        assert_eq!(b.media_target_bps(), Some((600_000.0 * 0.85) as u64));
    }
}
