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
//!   path ×1.25 alone would add 150 ms). A cap below the media's own pipe grows from that
//!   pipe, not from the floor: the cap counts both classes, and below the media's occupancy
//!   the bulk would send nothing for ten seconds of GEO rounds after each overload.
//! - **Room for media, just in time for both**: media may always have its own pipe (its rate
//!   × the minimum RTT, plus a quarter) and its largest recent frame in flight, whatever the
//!   bulk's cap; bulk is written just in time (the transport never holds more than the cap),
//!   so a media frame never queues behind bulk inside the sender, and frames that do not fit
//!   wait in the application, where one past its deadline can still be cancelled.
//! - **Media first**: while the media does not get what it offers (acknowledged bytes over a
//!   second below 70 % of those written a round trip earlier), the bulk's cap halves every
//!   round and does not grow. Frames refused at the source are no demand: counting them
//!   would hold the bulk back while the link idles.
//! - **Media is held to what the path delivers**: while there is a queue, media may have only
//!   the delivery rate × (minimum RTT + target) out (plus its largest frame while it gets
//!   what it offers; never less than the bulk's cap), so what it writes arrives instead of
//!   queueing at the bottleneck. "A queue" is the last round's and the latest RTT sample's:
//!   when capacity rises the queue empties mid-round, and the round's rate would hold the
//!   media back until the round ends.
//! - **Frames that cannot arrive are not started**: each frame is admitted just in time, when
//!   the one before it is written; on a saturated path a frame whose age + the queue ahead +
//!   its serialization at the delivery rate + half the minimum RTT exceeds its deadline is
//!   dropped at the source (one frame per round still goes, to keep measuring). The queue
//!   ahead is what is in flight beyond a minimum RTT's worth, measured when the frame starts;
//!   the rate is the round's, or, while the latest RTT sample shows no more than the target
//!   of queue, what is in flight over that sample if more (capacity that rose mid-round).
//! - **Coupled to the congestion controller**: the cap never exceeds the controller's window
//!   (plus two packets), and a loss that shrinks the window shrinks what bulk may write at
//!   once.
//! - **Late frames are cancelled**: a frame that cannot arrive before its deadline is reset
//!   instead of sent (RTP over QUIC, MoQ delivery timeouts), so an overload is not carried into
//!   the next second.
//! - **Holding on against a loss-based competitor**: a delay target next to a flow that fills
//!   the buffer only hands it our share (Little's law shrinks the cap every round; the
//!   StreamBalancer starved the same way). From one flow's view a queue of its own and a
//!   competitor's look alike, so the balancer asks the path: when even the shortest RTT
//!   sample of [`BalancerConfig::competition_rounds`] rounds in a row shows more than
//!   [`COMPETITION_QUEUE_TARGETS`] targets of queue, it drains (both classes together below
//!   half a pipe until what is out is under it) and times a packet sent after that (no drain
//!   for a queue the smoothed RTT already sees emptying, or one shrinking round by round).
//!   Back without a standing queue, the queue was ours (our own overloaded media, a capacity
//!   drop's backlog); still behind one, it is a competitor's, and the congestion controller's
//!   window governs (media first by priority, late frames still refused) until a drain
//!   [`BalancerConfig::drain_interval`] later checks again. Like BBR's ProbeRTT, which
//!   empties its own queue to see the path's, and Copa's competitive mode, which watches
//!   whether the queue ever empties.
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
    /// Rounds in a row in which even the shortest RTT sample shows more than
    /// [`COMPETITION_QUEUE_TARGETS`] targets of queue before a drain tests whose queue it is.
    pub competition_rounds: u32,
    /// At most one drain per interval: how often the competing mode checks whether the
    /// competitor is still there, and how long a drain that found the queue ours holds before
    /// the next one (each costs the media about a round of frames).
    pub drain_interval: Duration,
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
            competition_rounds: 4,
            drain_interval: Duration::from_secs(10),
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
/// serving it (acknowledgements lag captures by a round trip; frames vary in size). On a GEO
/// path a keyframe written at the edge of the second, acknowledged just after it, plus a
/// queue rising by a target, is 20 % of a second's media: at 0.8 that halved the bulk every
/// few seconds on a path that served the media in full.
const MEDIA_SATISFIED_SHARE: f64 = 0.7;

/// How fast the target bitrate for adaptive media climbs while the path is not saturated, as
/// a share of itself per second.
const MEDIA_RATE_CLIMB_PER_S: f64 = 0.1;

/// The media's own pipe (its rate × the minimum RTT) is allowed this much more in flight.
const MEDIA_PIPE_HEADROOM: f64 = 1.25;

/// Headroom above the congestion window for bulk writes: what one ACK can free before the next
/// write.
const BULK_SLACK_PACKETS: u64 = 2;

/// A standing queue of more than this many targets is not what the balancer itself leaves
/// (the bulk's target, plus a media frame in service when the media is overloaded): either a
/// capacity drop's backlog still draining, or a flow that keeps the queue full.
pub const COMPETITION_QUEUE_TARGETS: f64 = 2.0;

/// Whose queue the balancer believes the bottleneck holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// Ours: the bulk is held to the queue-delay target.
    Delay,
    /// Finding out: both classes are held to the floor until what we had sent is delivered
    /// (`settled_at`), so a queue of our own has emptied; a packet sent after that which
    /// comes back without a standing queue says the queue was ours.
    Draining {
        /// The drain gives up (inconclusive: the queue counts as ours) at this time if it has
        /// not settled.
        give_up_at: Duration,
        /// When our bytes in flight fell to the floor's.
        settled_at: Option<Duration>,
        /// The bulk's cap before the drain, restored if the queue was ours.
        resume_window_bytes: u64,
    },
    /// A loss-based flow keeps the queue full whatever we do: yielding would only hand it our
    /// share, so the controller's window governs (media first by priority) until `until`,
    /// when a drain checks again.
    Competing { until: Duration },
}

/// The balancer (scheduler name `balancer`).
#[derive(Debug, Clone)]
pub struct Balancer {
    config: BalancerConfig,
    view: Option<TransportView>,
    /// Cap on bytes written and not acknowledged while bulk writes.
    window_bytes: u64,
    /// Whose queue it is (see [`Mode`]).
    mode: Mode,
    /// No drain starts before this.
    next_drain_at: Duration,
    /// End of the current round (one smoothed RTT).
    round_end: Option<Duration>,
    /// Most bytes in flight seen this round: what the cap actually let out.
    round_max_in_flight: u64,
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
    /// Smallest RTT sample this round.
    round_min_sample: Option<Duration>,
    /// The last round's smallest RTT sample.
    last_round_min_sample: Option<Duration>,
    /// Consecutive rounds whose smallest RTT sample showed more than
    /// [`COMPETITION_QUEUE_TARGETS`] targets of queue.
    rounds_with_standing_queue: u32,
    /// The smallest RTT sample of the latest observation that had one.
    latest_rtt_sample: Option<Duration>,
}

impl Balancer {
    /// A balancer with these parameters.
    pub fn new(config: BalancerConfig) -> Self {
        Self {
            config,
            view: None,
            window_bytes: 0,
            mode: Mode::Delay,
            next_drain_at: Duration::ZERO,

            round_end: None,
            round_max_in_flight: 0,
            recent_frames: VecDeque::new(),
            recent_media_writes: VecDeque::new(),
            recent_media_acks: VecDeque::new(),
            media_target_bps: None,
            last_queue_delay: Duration::ZERO,
            last_rate_bps: None,
            last_admitted: None,
            round_min_sample: None,
            last_round_min_sample: None,
            rounds_with_standing_queue: 0,
            latest_rtt_sample: None,
        }
    }

    /// The in-flight cap for bulk writes, bytes (0 before the first observation).
    pub fn window_bytes(&self) -> u64 {
        self.window_bytes
    }

    /// Whether the balancer now believes a loss-based flow keeps the bottleneck's queue full.
    pub fn competing(&self) -> bool {
        matches!(self.mode, Mode::Competing { .. })
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

    /// The media's pipe: its rate over the last second × the minimum RTT, what it has out
    /// on a path without a queue.
    fn media_pipe_bytes(&self, view: &TransportView) -> f64 {
        self.media_demand_bytes_per_s(view.now) * view.min_rtt.as_secs_f64()
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

    /// What both classes may have out while draining: half the path's pipe at the last
    /// delivery rate (BBRv2's ProbeRTT keeps half its window too), at least the floor. Below
    /// a pipe, a queue of our own empties (at half the rate) and none forms again, while the
    /// link stays half busy: on a GEO path a drain at the floor would idle it for two round
    /// trips.
    fn drain_window_bytes(&self, view: &TransportView) -> u64 {
        let half_pipe = self
            .last_rate_bps
            .map_or(0.0, |bps| bps / 8.0 * view.min_rtt.as_secs_f64() / 2.0);
        (half_pipe as u64).max(self.floor_bytes(view))
    }

    /// Whether an RTT shows a standing queue: more than [`COMPETITION_QUEUE_TARGETS`] targets
    /// above the minimum RTT.
    fn shows_standing_queue(&self, rtt: Duration, view: &TransportView) -> bool {
        rtt.saturating_sub(view.min_rtt) > self.config.target.mul_f64(COMPETITION_QUEUE_TARGETS)
    }

    /// Whether the path is saturated: a queue of more than half the target at the end of the
    /// last round, and still in the latest RTT sample. The round's rate and queue are a
    /// round old; when capacity rises the queue empties mid-round, and frames refused or held
    /// on the old rate until the round ends are late for nothing (on a GEO path, twenty
    /// frames after each rise).
    fn saturated(&self, view: &TransportView) -> bool {
        let half_target = self.config.target / 2;
        self.last_queue_delay > half_target
            && self
                .latest_rtt_sample
                .is_none_or(|rtt| rtt.saturating_sub(view.min_rtt) > half_target)
    }

    fn floor_bytes(&self, view: &TransportView) -> u64 {
        self.config.min_window_packets * view.mtu_bytes.max(1200)
    }

    /// One round's update from the queue delay at its end: of the mode, of the cap, and of
    /// the rate signals.
    fn end_round(&mut self, view: &TransportView) {
        if view.min_rtt.is_zero() || view.srtt.is_zero() {
            return;
        }
        if matches!(self.mode, Mode::Draining { .. }) {
            // Nothing we send now says anything about the rate; the drain decides at its end.
            return;
        }
        let queue_delay = view.srtt.saturating_sub(view.min_rtt);
        if self
            .round_min_sample
            .is_some_and(|sample| self.shows_standing_queue(sample, view))
        {
            self.rounds_with_standing_queue += 1;
        } else {
            self.rounds_with_standing_queue = 0;
        }
        // A standing queue that shrank by more than a quarter target since the last round is
        // draining (a capacity drop's backlog): a competitor's would not.
        let queue_shrinking = matches!(
            (self.round_min_sample, self.last_round_min_sample),
            (Some(now), Some(before)) if now + self.config.target / 4 < before
        );
        self.last_round_min_sample = self.round_min_sample;
        let used = self.round_max_in_flight.max(self.floor_bytes(view));
        match self.mode {
            Mode::Delay => self.hold_queue_to_target(view, queue_delay, used),
            // The controller's window governs (see `send_window`).
            Mode::Competing { .. } | Mode::Draining { .. } => {}
        }
        // Coupled to the controller: never more than its window allows out at once.
        let cwnd_cap = view.cwnd_bytes + BULK_SLACK_PACKETS * view.mtu_bytes;
        self.window_bytes = self.window_bytes.min(cwnd_cap.max(self.floor_bytes(view)));
        let delivery_bps = view.in_flight_bytes.max(used) as f64 * 8.0 / view.srtt.as_secs_f64();
        self.last_queue_delay = queue_delay;
        self.last_rate_bps = Some(delivery_bps);

        // The rate the path delivers while it is saturated (a queue above half the target),
        // for an adaptive media source; otherwise let the source climb back, gently (SCReAM's
        // lesson: the hard part is when to increase): MEDIA_RATE_CLIMB_PER_S of the rate per
        // second of rounds, whatever the RTT.
        let climb = 1.0 + MEDIA_RATE_CLIMB_PER_S * view.srtt.as_secs_f64();
        self.media_target_bps = if queue_delay > self.config.target / 2 {
            Some((delivery_bps * self.config.media_rate_share) as u64)
        } else {
            self.media_target_bps
                .map(|bps| (bps as f64 * climb).max(delivery_bps * self.config.media_rate_share))
                .map(|bps| bps as u64)
        };

        // Whose queue is it? A standing queue the delay mode did not clear, or the competing
        // mode's time to check again, starts a drain.
        let check = match self.mode {
            Mode::Delay => {
                self.rounds_with_standing_queue >= self.config.competition_rounds
                    && view.now >= self.next_drain_at
                    // Not a queue the smoothed RTT already sees emptying (capacity rose), nor
                    // one shrinking round by round: nothing to ask.
                    && self.shows_standing_queue(view.srtt, view)
                    && !queue_shrinking
            }
            Mode::Competing { until } => view.now >= until,
            Mode::Draining { .. } => false,
        };
        if check {
            // What is in flight now is delivered within a round trip or so; two, plus a
            // second for what the transport still buffers, or the drain is inconclusive.
            self.mode = Mode::Draining {
                give_up_at: view.now + 2 * view.srtt + Duration::from_secs(1),
                settled_at: None,
                resume_window_bytes: self.window_bytes,
            };
            self.rounds_with_standing_queue = 0;
        }
    }

    /// The delay mode's update of the cap: Little's law towards the target.
    fn hold_queue_to_target(&mut self, view: &TransportView, queue_delay: Duration, used: u64) {
        let floor = self.floor_bytes(view);
        let base = view.min_rtt.as_secs_f64();
        let target = self.config.target.as_secs_f64();
        if !self.media_satisfied() {
            // Media first: while it does not get what it offers, the bulk halves each round
            // and does not grow, whatever the queue says.
            self.window_bytes = (self.window_bytes / 2).max(floor);
        } else if queue_delay > self.config.target {
            // Little's law: the cap that leaves `target` of queue at today's delivery rate.
            let scale = (base + target) / (base + queue_delay.as_secs_f64());
            let from = self.window_bytes.min(used) as f64;
            self.window_bytes = ((from * scale) as u64).max(floor);
        } else if used as f64 >= 0.8 * self.window_bytes as f64 {
            // Window-limited and below the target: grow.
            let growth = if queue_delay < self.config.target / 2 {
                self.config.max_growth_per_round
            } else {
                ((base + target) / (base + queue_delay.as_secs_f64()))
                    .clamp(1.0, self.config.max_growth_per_round)
            };
            // And at most one target's worth of the delivery rate per round: one round's
            // growth is queue for the next (the smoothed RTT shows it a round later), and on a
            // GEO path ×1.25 of a 600 ms pipe is 150 ms of queue, the media's whole slack.
            //
            // Grown from the media's own pipe (its rate × the minimum RTT) if the cap is
            // below it: the cap counts both classes, so below the media's occupancy the bulk
            // sends nothing, and climbing there from the floor by one target per round took
            // ten seconds of rounds on a GEO path after every overload. Its rate, not what it
            // has out at the moment: a keyframe in flight is no room for bulk, and the
            // smoothed RTT after an overload still holds the old queue.
            let rate_bytes_per_s = used as f64 / view.srtt.as_secs_f64();
            let from = self.window_bytes.max(self.media_pipe_bytes(view) as u64) as f64;
            let grown = (from * growth).min(from + rate_bytes_per_s * target);
            self.window_bytes = (grown as u64).max(floor);
        }
    }

    /// The drain's verdict at its end: a queue that stayed while we sent next to nothing is a
    /// competitor's.
    fn end_drain(&mut self, view: &TransportView, competitor: bool, resume: u64) {
        if competitor {
            self.mode = Mode::Competing {
                until: view.now + self.config.drain_interval,
            };
        } else {
            self.mode = Mode::Delay;
            self.window_bytes = resume;
            self.next_drain_at = view.now + self.config.drain_interval;
        }
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
        if let Some(sample) = view.rtt_sample_min {
            self.latest_rtt_sample = Some(sample);
            self.round_min_sample = Some(self.round_min_sample.map_or(sample, |m| m.min(sample)));
        }
        if let Mode::Draining {
            give_up_at,
            settled_at,
            resume_window_bytes,
        } = self.mode
        {
            // A sample no longer than the time since the drain settled is of a packet sent
            // after it (an older one took longer); if the smallest is older, all are.
            let since_settled = settled_at.map(|at| view.now.saturating_sub(at));
            let verdict = since_settled.and_then(|since| {
                view.rtt_sample_min
                    .filter(|&sample| sample <= since)
                    .map(|sample| self.shows_standing_queue(sample, view))
            });
            if settled_at.is_none() && view.in_flight_bytes <= self.drain_window_bytes(view) {
                self.mode = Mode::Draining {
                    give_up_at,
                    settled_at: Some(view.now),
                    resume_window_bytes,
                };
            }
            if verdict.is_some() || view.now >= give_up_at {
                self.end_drain(view, verdict == Some(true), resume_window_bytes);
                // The round restarts from here: what the drain let out says nothing.
                self.round_end = None;
                self.round_max_in_flight = 0;
            }
        }
        match self.round_end {
            None if !view.srtt.is_zero() => self.round_end = Some(view.now + view.srtt),
            Some(end) if view.now >= end => {
                self.end_round(view);
                self.round_max_in_flight = view.in_flight_bytes;
                self.round_min_sample = None;
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
        let bulk_bytes = match self.mode {
            Mode::Delay => self.window_bytes,
            Mode::Draining { .. } => {
                let drain = self.drain_window_bytes(&view);
                return Some(SendWindows {
                    media_bytes: drain,
                    bulk_bytes: drain,
                });
            }
            // Against a loss-based flow the controller competes for our share; media still
            // goes first (priority) and frames that cannot arrive are still refused.
            Mode::Competing { .. } => view.cwnd_bytes + BULK_SLACK_PACKETS * view.mtu_bytes,
        };
        // Media is never held to the bulk's cap: it may always have its own pipe (its rate
        // × the minimum RTT, with a quarter of headroom) in flight, whatever the bulk got.
        let media_pipe = (self.media_pipe_bytes(&view) * MEDIA_PIPE_HEADROOM) as u64;
        let largest_frame = self.media_reserve_bytes();
        let mut media_bytes = bulk_bytes.max(media_pipe) + largest_frame + 2 * view.mtu_bytes;
        // Saturated (a queue of half the target or more): the media may have no more out
        // than the path delivers in a minimum RTT plus the target, or what it writes only
        // queues at the bottleneck and arrives late. While it gets what it offers, one frame
        // more (its largest), so a keyframe goes whole.
        if let Some(rate_bps) = self.last_rate_bps
            && self.mode == Mode::Delay
            && self.saturated(&view)
        {
            let deliverable =
                (rate_bps / 8.0 * (view.min_rtt + self.config.target).as_secs_f64()) as u64;
            let cap = if self.media_satisfied() {
                deliverable + largest_frame
            } else {
                deliverable
            };
            // Never below the bulk's cap: the media goes first.
            media_bytes = media_bytes.min(cap.max(bulk_bytes).max(2 * view.mtu_bytes));
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
        let Some(view) = self.view else {
            return true;
        };
        if let Mode::Draining { settled_at, .. } = self.mode {
            // Before the drain settles it would wait behind the floor; after, its first
            // packets are what the drain measures.
            return settled_at.is_some();
        }
        // The delivery rate says what a frame can get only while the path is saturated (a
        // queue of at least half the target); otherwise the rate is our own demand, and
        // refusing frames because of it would starve the media for good.
        let saturated = self.saturated(&view);
        let admit = match (self.last_rate_bps, saturated) {
            (Some(round_rate_bps), true) => {
                // The round's rate is what we sent. If the latest RTT sample shows no more than
                // the target of queue, what is in flight now over that RTT is what the path
                // carries: capacity that rose mid-round shows there a round early. (Above the
                // target the path is overloaded and the round's rate is its rate.)
                let rate_bps = match self.latest_rtt_sample {
                    Some(rtt) if rtt.saturating_sub(view.min_rtt) <= self.config.target => {
                        round_rate_bps.max(view.in_flight_bytes as f64 * 8.0 / rtt.as_secs_f64())
                    }
                    _ => round_rate_bps,
                };
                // Arrival ≈ now + the queue ahead of it + its own serialization at the
                // delivery rate + half the minimum RTT. The queue ahead is what is in flight
                // beyond one minimum RTT's worth at the delivery rate, measured now (the
                // smoothed RTT lags a round, and counts the previous frame's own
                // serialization, which is over by the time this one starts): bytes already
                // sent are ahead of the frame at the bottleneck whichever class they carry.
                let serialization = Duration::from_secs_f64(bytes as f64 * 8.0 / rate_bps.max(1.0));
                let queue = Duration::from_secs_f64(
                    (view.in_flight_bytes as f64 * 8.0 / rate_bps.max(1.0)
                        - view.min_rtt.as_secs_f64())
                    .max(0.0),
                );
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
        match self.mode {
            Mode::Draining { give_up_at, .. } => {
                Some(self.round_end.map_or(give_up_at, |end| end.min(give_up_at)))
            }
            _ => self.round_end,
        }
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
            rtt_sample_min: None,
            mtu_bytes: MTU,
        }
    }

    /// A balancer whose last round ended saturated: 7 500 B in flight over 100 ms (600 kbit/s
    /// delivered) with a 50 ms minimum RTT, so 50 ms of queue, more than half the target.
    fn saturated_at_600_kbit() -> Balancer {
        let mut b = Balancer::new(config());
        b.observe(&view(0, 1_000_000, 7_500, 100, 50));
        b.observe(&view(100, 1_000_000, 7_500, 100, 50));
        b
    }

    /// `view` with the smallest RTT sample acknowledged since the last one.
    fn sampled(view: TransportView, sample_ms: u64) -> TransportView {
        TransportView {
            rtt_sample_min: Some(Duration::from_millis(sample_ms)),
            ..view
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
    fn a_cap_below_the_media_pipe_grows_from_that_pipe() {
        let mut b = Balancer::new(config());
        // A GEO path after an overload: about 2 Mbit/s of media over a 600 ms minimum RTT
        // is a pipe of about 150 kB; the bulk's cap is at the floor.
        for i in 0..=48u64 {
            b.on_frame(Duration::from_millis(i * 33), 8_333);
        }
        b.observe(&view(990, 1_000_000, 150_000, 600, 600));
        b.window_bytes = 4 * MTU;
        b.observe(&view(1_590, 1_000_000, 150_000, 600, 600));
        // Media demand at 1 590 ms: the 31 frames captured after 590 ms, 258 323 B/s,
        // × 0.6 s = 154 993 B; + one target of the delivery rate: 150 kB / 0.6 s × 25 ms.
        assert_eq!(b.window_bytes(), 154_993 + 6_250);
    }

    #[test]
    fn a_standing_queue_the_smoothed_rtt_no_longer_shows_starts_no_drain() {
        let config = config();
        let (mut b, mut now) = behind_a_standing_queue();
        // Every round's smallest sample showed the queue, but by the last round's end the
        // smoothed RTT is back near the minimum: the queue is emptying by itself.
        for _ in 1..config.competition_rounds {
            now += 350;
            b.observe(&sampled(view(now, 100_000, 30_000, 350, 50), 350));
        }
        now += 350;
        b.observe(&sampled(view(now, 100_000, 30_000, 60, 50), 350));
        assert!(matches!(b.mode, Mode::Delay));
    }

    #[test]
    fn a_standing_queue_shrinking_round_by_round_starts_no_drain() {
        let config = config();
        let (mut b, mut now) = behind_a_standing_queue();
        // A capacity drop's backlog: every round's smallest sample shows more than two
        // targets of queue, 20 ms less each round (more than a quarter target).
        for round in 1..=config.competition_rounds + 2 {
            now += 350;
            let sample = 350 - 20 * u64::from(round);
            b.observe(&sampled(view(now, 100_000, 30_000, 350, 50), sample));
            assert!(matches!(b.mode, Mode::Delay), "round {round}");
        }
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

    /// A balancer that has just started a drain: `competition_rounds` rounds of 350 ms whose
    /// every RTT sample showed 300 ms of queue over a 50 ms minimum, 30 kB in flight. Returns
    /// it and the time now, ms.
    /// A balancer whose first round starts with 300 ms of queue over a 50 ms minimum RTT,
    /// and the time of that observation.
    fn behind_a_standing_queue() -> (Balancer, u64) {
        let mut b = Balancer::new(config());
        let now = 0;
        b.observe(&sampled(view(now, 100_000, 30_000, 350, 50), 350));
        b.window_bytes = 20_000;
        (b, now)
    }

    fn draining() -> (Balancer, u64) {
        let config = config();
        let (mut b, mut now) = behind_a_standing_queue();
        for round in 1..=config.competition_rounds {
            assert!(matches!(b.mode, Mode::Delay), "round {round}");
            now += 350;
            b.observe(&sampled(view(now, 100_000, 30_000, 350, 50), 350));
        }
        (b, now)
    }

    #[test]
    fn a_standing_queue_starts_a_drain_that_holds_both_classes_below_the_pipe() {
        let (mut b, now) = draining();
        let floor = config().min_window_packets * MTU;
        // 30 kB over 350 ms delivered, × 50 ms / 2 = 2 143 B: less than the floor.
        assert_eq!(b.drain_window_bytes(&b.view.unwrap()), floor);
        assert!(matches!(
            b.mode,
            Mode::Draining {
                settled_at: None,
                ..
            }
        ));
        let w = b.send_window().unwrap();
        assert_eq!((w.media_bytes, w.bulk_bytes), (floor, floor));
        // Until what we sent is delivered, a frame would only wait behind the floor.
        assert!(!b.admit_frame(Duration::ZERO, 5_000, Duration::from_millis(175)));
        // Once it is, the next frame is the drain's probe.
        b.observe(&view(now + 300, 100_000, floor, 350, 50));
        assert!(b.admit_frame(Duration::ZERO, 5_000, Duration::from_millis(175)));
        // On a GEO path at 1 Mbit/s, half the pipe: 125 kB/s × 600 ms / 2.
        b.last_rate_bps = Some(1e6);
        let geo = view(now + 300, 1_000_000, 0, 700, 600);
        assert_eq!(b.drain_window_bytes(&geo), 37_500);
        // A queue that shows in one round only is a capacity drop's backlog, not a drain.
        let mut b = Balancer::new(config());
        b.observe(&sampled(view(0, 100_000, 30_000, 350, 50), 350));
        for now in [350, 700, 1_050, 1_400] {
            let sample = if now == 700 { 60 } else { 350 };
            b.observe(&sampled(view(now, 100_000, 30_000, 350, 50), sample));
        }
        assert!(matches!(b.mode, Mode::Delay));
    }

    #[test]
    fn a_queue_that_empties_while_we_drain_was_ours() {
        let (mut b, now) = draining();
        let floor = config().min_window_packets * MTU;
        let before = match b.mode {
            Mode::Draining {
                resume_window_bytes,
                ..
            } => resume_window_bytes,
            _ => unreachable!("draining"),
        };
        // Settled 300 ms later: our bytes in flight are down to the floor.
        let settled = now + 300;
        b.observe(&view(settled, 100_000, floor, 350, 50));
        // 200 ms after settling, a 340 ms sample is of a packet sent before: no verdict.
        b.observe(&sampled(view(settled + 200, 100_000, floor, 350, 50), 340));
        assert!(matches!(b.mode, Mode::Draining { .. }));
        // A packet sent after settling is back in 60 ms: 10 ms of queue, ours.
        b.observe(&sampled(view(settled + 260, 100_000, floor, 350, 50), 60));
        assert!(matches!(b.mode, Mode::Delay));
        assert_eq!(b.window_bytes(), before, "the cap from before the drain");
        // And no new drain within the drain interval, however the queue looks.
        let mut t = settled + 260;
        for _ in 0..20 {
            t += 350;
            b.observe(&sampled(view(t, 100_000, 30_000, 350, 50), 350));
            assert!(matches!(b.mode, Mode::Delay), "{t}");
        }
    }

    #[test]
    fn a_queue_that_stays_while_we_drain_is_a_competitors_and_the_controller_governs() {
        let (mut b, now) = draining();
        let floor = config().min_window_packets * MTU;
        let settled = now + 300;
        b.observe(&view(settled, 100_000, floor, 350, 50));
        // Sent after settling (330 ms ago at most), back with 280 ms of queue.
        b.observe(&sampled(view(settled + 330, 100_000, floor, 350, 50), 330));
        assert!(b.competing());
        // The bulk may fill the controller's window (+ 2 packets), media one frame more.
        b.on_frame(Duration::from_millis(settled + 330), 8_000);
        let w = b.send_window().unwrap();
        assert_eq!(w.bulk_bytes, 100_000 + 2 * MTU);
        assert_eq!(w.media_bytes, w.bulk_bytes + 8_000 + 2 * MTU);
        // The media's dissatisfaction does not halve the bulk while competing: yielding
        // would hand the competitor our share.
        b.on_written(Duration::from_millis(settled + 330), Class::Media, 50_000);
        b.observe(&view(settled + 700, 100_000, 90_000, 350, 50));
        b.observe(&view(settled + 1_100, 100_000, 90_000, 350, 50));
        assert_eq!(b.send_window().unwrap().bulk_bytes, 100_000 + 2 * MTU);
        // After the drain interval, a drain checks whether the competitor is still there.
        let mut t = settled + 1_100;
        while t < settled + 330 + 10_000 {
            t += 350;
            b.observe(&view(t, 100_000, 90_000, 350, 50));
        }
        assert!(matches!(b.mode, Mode::Draining { .. }));
    }

    #[test]
    fn a_drain_that_never_settles_leaves_the_queue_ours() {
        let (mut b, now) = draining();
        // 2 × 350 ms + 1 s later, still 30 kB in flight: inconclusive.
        b.observe(&view(now + 1_699, 100_000, 30_000, 350, 50));
        assert!(matches!(b.mode, Mode::Draining { .. }));
        assert_eq!(b.wakeup(), Some(Duration::from_millis(now + 1_700)));
        b.observe(&view(now + 1_700, 100_000, 30_000, 350, 50));
        assert!(matches!(b.mode, Mode::Delay));
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
    fn a_frame_that_cannot_arrive_in_time_is_not_started() {
        let mut b = Balancer::new(config());
        let deadline = Duration::from_millis(175);
        // Nothing measured yet: everything is admitted.
        assert!(b.admit_frame(Duration::from_millis(100), 40_000, deadline));
        // 7 500 B in flight over 100 ms of RTT: 600 kbit/s delivered, 50 ms of queue.
        b.observe(&view(0, 1_000_000, 7_500, 100, 50));
        b.observe(&view(100, 1_000_000, 7_500, 100, 50));
        assert_eq!(b.last_rate_bps, Some(600_000.0));
        b.last_admitted = Some(Duration::from_millis(100));
        // 7 500 B take 100 ms at 600 kbit/s; + 50 ms of queue + 25 ms = 175 ms: admitted
        // only when just captured.
        assert!(b.admit_frame(Duration::ZERO, 7_500, deadline));
        assert!(!b.admit_frame(Duration::from_millis(1), 7_500, deadline));
        // A keyframe five times as large never fits at this rate...
        assert!(!b.admit_frame(Duration::ZERO, 37_500, deadline));
        // ...but one frame per round goes anyway, to keep measuring the rate.
        b.observe(&view(200, 1_000_000, 7_500, 100, 50));
        assert!(b.admit_frame(Duration::ZERO, 37_500, deadline));
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
    fn on_a_saturated_path_media_may_have_only_what_it_delivers_in_flight() {
        let mut b = saturated_at_600_kbit();
        for i in 0..30u64 {
            b.on_frame(Duration::from_millis(100 + i * 33), 8_333);
            b.on_written(Duration::from_millis(100 + i * 33), Class::Media, 8_333);
        }
        b.observe(&view(1_100, 1_000_000, 7_500, 100, 50));
        assert!(!b.media_satisfied());
        // 75 000 B/s × (50 + 25) ms.
        assert_eq!(b.send_window().unwrap().media_bytes, 5_625);
        // Served again, and the path still saturated: what it delivers plus the largest
        // frame, so a keyframe goes whole (and not its own pipe of 2 Mbit/s × 50 ms × 1.25 +
        // a frame: 650 ms of queue at this rate).
        b.on_acked(Duration::from_millis(1_150), Class::Media, 250_000);
        assert_eq!(b.send_window().unwrap().media_bytes, 5_625 + 8_333);
    }

    #[test]
    fn a_queue_the_latest_sample_shows_empty_no_longer_refuses_or_holds_media() {
        let mut b = saturated_at_600_kbit();
        let deadline = Duration::from_millis(175);
        for i in 0..30u64 {
            b.on_frame(Duration::from_millis(100 + i * 33), 8_333);
        }
        b.observe(&sampled(view(1_100, 1_000_000, 7_500, 100, 50), 100));
        b.last_admitted = Some(Duration::from_millis(1_100));
        assert!(!b.admit_frame(Duration::from_millis(61), 3_000, deadline));
        assert_eq!(b.send_window().unwrap().media_bytes, 5_625 + 8_333);
        // Capacity rose mid-round: the latest packet came back without a queue. The round's
        // rate no longer says what a frame gets, and the media has its own pipe again.
        b.observe(&sampled(view(1_120, 1_000_000, 7_500, 100, 50), 55));
        assert!(b.admit_frame(Duration::from_millis(61), 3_000, deadline));
        // Its pipe: the 29 frames captured in the last second × 50 ms × 1.25.
        let pipe = (29.0 * 8_333.0 * 0.05 * MEDIA_PIPE_HEADROOM) as u64;
        assert_eq!(
            b.send_window().unwrap().media_bytes,
            b.window_bytes().max(pipe) + 8_333 + 2 * MTU
        );
    }

    #[test]
    fn a_small_queue_in_the_latest_sample_takes_the_rate_from_what_is_in_flight_now() {
        let deadline = Duration::from_millis(175);
        let saturated_by_the_last_round = |sample_ms| {
            let mut b = saturated_at_600_kbit();
            // Now twice as much is out.
            b.observe(&sampled(view(120, 1_000_000, 15_000, 100, 50), sample_ms));
            b.last_admitted = Some(Duration::from_millis(120));
            b
        };
        // The latest sample shows 20 ms of queue: still saturated (more than half the 25 ms
        // target), but no more than the target, so the rate is 15 000 B / 70 ms =
        // 1.71 Mbit/s: 20 ms of queue + 14 ms + 25 ms + 61 ms of age = 120 ms.
        let mut b = saturated_by_the_last_round(70);
        assert!(b.admit_frame(Duration::from_millis(61), 3_000, deadline));
        // 50 ms of queue in the latest sample: the round's 600 kbit/s stands, and 15 000 B
        // in flight is 150 ms of queue.
        let mut b = saturated_by_the_last_round(100);
        assert!(!b.admit_frame(Duration::from_millis(61), 3_000, deadline));
    }

    #[test]
    fn on_a_saturated_path_media_may_still_have_what_the_bulk_may() {
        let mut b = saturated_at_600_kbit();
        b.window_bytes = 20_000;
        // The delivery cap (75 000 B/s × 75 ms = 5 625 B) is below the bulk's cap: the
        // media, which goes first, gets the bulk's.
        let w = b.send_window().unwrap();
        assert_eq!(w.bulk_bytes, 20_000);
        assert_eq!(w.media_bytes, 20_000);
    }

    #[test]
    fn frames_see_the_whole_queue_ahead_of_them_measured_now() {
        let mut b = saturated_at_600_kbit();
        let deadline = Duration::from_millis(175);
        b.observe(&view(1_100, 1_000_000, 7_500, 100, 50));
        // 7 500 B in flight at 600 kbit/s is 100 ms, 50 ms of it queue (whether bulk or
        // media: bytes already sent are ahead at the bottleneck): 3 000 B (40 ms) + 50 + 25 =
        // 115 ms, admitted up to 60 ms old.
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
