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
//!   `in_flight × (min_rtt + target) / (min_rtt + queue_delay)`, plus, while the excess is at
//!   most another target, an increment that grows with the square root of the rate: with it
//!   two of our connections behind one queue converge to equal shares instead of keeping
//!   whatever split they reached (`fairness_increment_bytes`). One update per smoothed RTT
//!   moves the queue to the target in one round, on a LEO path or a GEO one alike; below the
//!   target the cap grows by the same law, at most ×1.25 and at most one target's worth of
//!   the delivery rate per round (the bulk regains capacity in a few rounds, not seconds of
//!   fixed steps, and one round's growth never becomes more queue than the target: on a GEO
//!   path ×1.25 alone would add 150 ms) — twice that after a round in which the path stayed
//!   empty (in the smoothed RTT, the latest sample and the median of the round's samples),
//!   four times after two, up to ×1.25, so that capacity that tripled is found in
//!   about six GEO rounds instead of seventeen. When a train of our packets (a keyframe, a
//!   cap that just grew) comes back faster than we deliver, the bottleneck has said its rate,
//!   and the cap goes to most of that pipe at once (packet-train dispersion; a GEO rise from
//!   2 to 4 Mbit/s was filled in 2.8 s instead of 5.1). A train is 24 packets, or 120 ms at
//!   the round's rate where that is fewer (at least eight): on a slow path no burst is long
//!   enough for 24. Where the transport's pacer runs far faster than the train (the
//!   controller's window well above the cap), the bulk is given the jump over half a round:
//!   written at once it left at the pacer's rate and queued in front of the media. A cap
//!   below the media's own pipe grows from that pipe, not from the floor: the cap counts both classes, and below the
//!   media's occupancy the bulk would send nothing for ten seconds of GEO rounds after each
//!   overload.
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
//! - **Keyframes meet an empty queue**: a keyframe is several frames' worth at once (40 kB from
//!   a 2 Mbit/s source, 105 ms at 3 Mbit/s against 150 ms of slack), so even the target's
//!   queue in front of it made most keyframes late where capacity was plentiful. The balancer
//!   learns the keyframe interval from frame sizes and, in the delay mode, pauses bulk writes
//!   from the queue's delay (plus a quarter target; at most two targets and a quarter of the
//!   interval in all) before the next is due until it is captured (at most 100 ms past due);
//!   the media keeps its room meanwhile. Bulk already handed to the transport still goes.
//! - **Late frames are cancelled**: a frame that cannot arrive before its deadline is reset
//!   instead of sent (RTP over QUIC, MoQ delivery timeouts), so an overload is not carried into
//!   the next second. In the delay mode a frame written and past its deadline is still
//!   delivered, but gives way (its stream drops below the media's priority, above the bulk's)
//!   to frames that can still be on time.
//! - **Holding on against a loss-based competitor**: a delay target next to a flow that fills
//!   the buffer only hands it our share (Little's law shrinks the cap every round; the
//!   StreamBalancer starved the same way). From one flow's view a queue of its own and a
//!   competitor's look alike, so the balancer asks the path: when even the shortest RTT
//!   sample of [`BalancerConfig::competition_rounds`] rounds in a row shows more than
//!   [`COMPETITION_QUEUE_TARGETS`] targets of queue, it drains (both classes together below
//!   half a pipe until what is out is under it) and times a packet sent after that (no drain
//!   for a queue the smoothed RTT already sees emptying, or one shrinking round by round).
//!   Back with at most a target of queue, the queue was ours (our own overloaded media, a
//!   capacity drop's backlog); still behind more, and still a round later without shrinking
//!   by an eighth, it is a competitor's (the confirming round: after a capacity drop half the
//!   *old* pipe of our own still stands in front of the first packets, and two of our
//!   connections took each other for loss-based flows, handed the link to Cubic's window and
//!   starved their media), and the congestion controller's window governs until a drain
//!   [`BalancerConfig::drain_interval`] later checks again (twice, then four times that
//!   while the competitor stays: each drain hands it the buffer space we free; for a minute
//!   after finding one, any drain checks as a recheck does, on one target). Media goes
//!   first by priority; frames that cannot arrive in time are still refused, but only once
//!   the media has written half of what we deliver: behind a competitor's queue no frame may
//!   be on time, and refusing them all starved the media while the bulk took our share. Like
//!   BBR's ProbeRTT, which empties its own queue to see the path's, and Copa's competitive
//!   mode, which watches whether the queue ever empties.
//! - **Rate signal for adaptive media**: a share ([`BalancerConfig::media_rate_share`]) of
//!   what the bottleneck serves while busy, counted from the bytes the peer acknowledged
//!   (both classes), while the link is saturated; climbing by 10 % a second otherwise. When
//!   the newest busy stretches serve much less behind a backlog, the capacity dropped, and
//!   the target follows at once, not at the end of a round that behind a GEO drop lasts
//!   seconds; so does the bulk's cap, to the new rate's pipe plus the target (from 4 to
//!   0.6 Mbit/s on GEO the round-based cap kept 300 kB out for another second, and the
//!   backlog every frame waits behind emptied a second later: at 185.0 s instead of 184.0 s,
//!   seed 2). In flight ÷ RTT, which the cap's own rules use, overstates the rate while a
//!   keyframe's burst is in flight, and an adaptive source that followed it was late by
//!   design.
//! - **Frames an adaptive source can deliver**: while the path is saturated (delay mode), the
//!   source is also told the largest frame that arrives by its deadline behind one target of
//!   queue at that capacity, never below three mean frames, so that the keyframe clock still
//!   tells its keyframes ([`Scheduler::media_frame_limit_bytes`]). At a rate that fits the
//!   path a keyframe (5 predicted frames) still took 125 of the 150 ms of slack at
//!   0.6 Mbit/s, and the admission refused about one in two in overload: the late-frame
//!   targets were met while only 50–72 % of frames were decodable. Bounded, 79–94 % are.

use std::collections::VecDeque;
use std::time::Duration;

use crate::{Class, Scheduler, SendWindows, TransportView};

mod config;
mod keyframes;

pub use config::{BalancerConfig, COMPETITION_QUEUE_TARGETS};

use keyframes::{KEYFRAME_VISIBLE_FACTOR, KeyframeClock, recent_frames_mean};

use config::{
    BULK_SLACK_PACKETS, BURST_GROW_ABOVE, BURST_JUMP_ABOVE, BURST_PIPE_SHARE, BURST_PROBE_DURATION,
    BURST_PROBE_MIN_PACKETS, BURST_PROBE_MIN_SPAN, BURST_PROBE_PACKETS, BUSY_RATE_MAX_LIFT,
    BUSY_RATE_MIN_SPAN, BUSY_RATE_RECENT_SPAN, BUSY_RATE_WINDOW, CAPACITY_DROP_BELOW,
    COMPETING_SEND_WINDOWS, COMPETITOR_MEMORY, EMPTY_PATH_PACKETS, FAIRNESS_INCREMENT_SHARE,
    FAIRNESS_MAX_QUEUE_TARGETS, FAIRNESS_TIMESCALE, FRAME_LIMIT_QUEUE_TARGETS, FRAME_WINDOW,
    JUMP_RELEASE_PACER_ABOVE, KEYFRAME_GAP_GIVE_UP, MAX_RECHECK_DOUBLINGS, MEDIA_PIPE_HEADROOM,
    MEDIA_RATE_CLIMB_PER_S, MEDIA_SATISFIED_SHARE, MEDIA_SHARE_NEXT_TO_COMPETITOR, MIN_SPARE_SHARE,
    OVERLOAD_SPARE_SHARE, SERVED_RATE_MAX_FRAME_SHARE_OF_SLACK, TRANSPORT_PACING_GAIN,
};

/// Whose queue the balancer believes the bottleneck holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// Ours: the bulk is held to the queue-delay target.
    Delay,
    /// Finding out: both classes are held below half a pipe until what we had sent is
    /// delivered (`settled_at`); a packet sent after that which comes back without a standing
    /// queue says the queue was ours. One that still shows one is confirmed for one more
    /// round (`confirming`): half a pipe of our own may still stand in front of the first
    /// packets after settling (after a capacity drop, half the *old* pipe: more than two
    /// targets), but it is gone a round later, and a delay-based peer's queue shrinks then,
    /// while a loss-based flow's does not.
    Draining {
        /// The drain gives up (inconclusive: the queue counts as ours) at this time if it has
        /// not settled.
        give_up_at: Duration,
        /// When our bytes in flight fell below half a pipe.
        settled_at: Option<Duration>,
        /// After a first sample of a packet sent after settling showed a standing queue.
        confirming: Option<Confirming>,
        /// Whether a competitor held the queue before this drain (the competing mode's
        /// periodic check, or a drain within [`COMPETITOR_MEMORY`] of finding one): then the
        /// first sample decides, as a round more at half a pipe would only hand the
        /// competitor more of the link.
        recheck: bool,
        /// The bulk's cap before the drain, restored if the queue was ours.
        resume_window_bytes: u64,
    },
    /// A loss-based flow keeps the queue full whatever we do: yielding would only hand it our
    /// share, so the controller's window governs (media first by priority) until `until`,
    /// when a drain checks again.
    Competing { until: Duration },
}

/// A drain's confirming round (see [`Mode::Draining`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Confirming {
    /// When the first sample came: packets sent after it are the round's.
    started: Duration,
    /// The round ends here, if one of its packets came back by then.
    until: Duration,
    /// The first sample.
    first: Duration,
    /// Whether a packet sent after `started` came back behind a queue that had not shrunk.
    stayed: bool,
}

/// The balancer (scheduler name `balancer`).
#[derive(Debug, Clone)]
pub struct Balancer {
    config: BalancerConfig,
    view: Option<TransportView>,
    /// Cap on bytes written and not acknowledged while bulk writes.
    window_bytes: u64,
    /// When the cap last jumped to a train's pipe, the cap its step alone gave, and the
    /// train's rate (bytes/s): the jump is released to the bulk over half the next round
    /// where the pacer would send it faster (see `released_window_bytes`).
    window_jumped_from: Option<(Duration, u64, f64)>,
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
    /// The transport's count of bytes acknowledged, at each observation of the last
    /// [`FRAME_WINDOW`] and the one before it (before the first acknowledgement, only the
    /// latest): (time, bytes).
    acked_history: VecDeque<(Duration, u64)>,
    /// The bitrate an adaptive media source is asked for, bit/s.
    media_target_bps: Option<u64>,
    /// The latest observation whose acknowledged count grew: (time, bytes acknowledged,
    /// whether its smallest RTT sample showed a queue). See `measure_busy_rate`.
    last_ack_observation: Option<(Duration, u64, bool)>,
    /// Stretches between two such observations that both showed a queue, over the last
    /// [`BUSY_RATE_WINDOW`]: (end, bytes acknowledged in it, its length).
    busy_stretches: VecDeque<(Duration, u64, Duration)>,
    /// Queue delay at the end of the last round.
    last_queue_delay: Duration,
    /// Delivery rate at the end of the last round (in flight ÷ RTT), bit/s.
    last_rate_bps: Option<f64>,
    /// When a frame was last admitted.
    last_admitted: Option<Duration>,
    /// Smallest RTT sample this round.
    round_min_sample: Option<Duration>,
    /// Every RTT sample this round, as queue delay (above the minimum RTT): their median
    /// says whether the round ran at an empty path (see `hold_queue_to_target`).
    round_queue_samples: Vec<Duration>,
    /// The last round's smallest RTT sample.
    last_round_min_sample: Option<Duration>,
    /// Consecutive rounds whose smallest RTT sample showed more than
    /// [`COMPETITION_QUEUE_TARGETS`] targets of queue.
    rounds_with_standing_queue: u32,
    /// The smallest RTT sample of the latest observation that had one.
    latest_rtt_sample: Option<Duration>,
    /// When the media's next keyframe is due.
    keyframes: KeyframeClock,
    /// Rounds in a row in which the bulk used its cap (which the controller's window may have
    /// lowered) and the queue stayed empty (within [`Self::empty_path_tolerance`] in the
    /// smoothed RTT, the latest sample and the round's median sample): each grew twice as
    /// much as the one before. While the controller's window is the limit the count runs on,
    /// so the cap keeps pace once that window grows.
    empty_rounds: u32,
    /// The cap before a capacity drop set it this round (`follow_capacity_drop`), if one did:
    /// each reading sets the cap from this, not from the last reading's, so the cap follows
    /// the newest stretches instead of ratcheting down to the lowest.
    cut_for_drop_from: Option<u64>,
    /// Rechecks in a row that found the competitor still there (see `end_drain`).
    competitor_rechecks: u32,
    /// When a drain last found a competitor: a drain within [`COMPETITOR_MEMORY`] of it is a
    /// recheck, as one from the competing mode is.
    competitor_found_at: Option<Duration>,
    /// The transport's count of bytes acknowledged at each observation that saw it grow,
    /// over about the last two rounds: (time, bytes); the train whose dispersion measures
    /// the bottleneck (see `measure_ack_train`).
    ack_train: VecDeque<(Duration, u64)>,
    /// The fastest the acknowledgements of a train (see `measure_ack_train`) came back this
    /// round, bit/s.
    round_burst_bps: f64,
}

impl Balancer {
    /// A balancer with these parameters.
    pub fn new(config: BalancerConfig) -> Self {
        Self {
            config,
            view: None,
            window_bytes: 0,
            window_jumped_from: None,
            mode: Mode::Delay,
            next_drain_at: Duration::ZERO,

            round_end: None,
            round_max_in_flight: 0,
            recent_frames: VecDeque::new(),
            recent_media_writes: VecDeque::new(),
            recent_media_acks: VecDeque::new(),
            acked_history: VecDeque::new(),
            media_target_bps: None,
            last_ack_observation: None,
            busy_stretches: VecDeque::new(),
            last_queue_delay: Duration::ZERO,
            last_rate_bps: None,
            last_admitted: None,
            round_min_sample: None,
            round_queue_samples: Vec::new(),
            last_round_min_sample: None,
            rounds_with_standing_queue: 0,
            latest_rtt_sample: None,
            keyframes: KeyframeClock::default(),
            empty_rounds: 0,
            cut_for_drop_from: None,
            competitor_rechecks: 0,
            competitor_found_at: None,
            ack_train: VecDeque::new(),
            round_burst_bps: 0.0,
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
        bytes_in_frame_window(&self.recent_frames, now) as f64 / FRAME_WINDOW.as_secs_f64()
    }

    /// The median size of the frames captured in the last [`FRAME_WINDOW`], bytes (0 without
    /// any).
    fn median_frame_bytes(&self, now: Duration) -> f64 {
        let mut sizes: Vec<u64> = self
            .recent_frames
            .iter()
            .filter(|&&(t, _)| t + FRAME_WINDOW > now)
            .map(|&(_, bytes)| bytes)
            .collect();
        if sizes.is_empty() {
            return 0.0;
        }
        let middle = sizes.len() / 2;
        *sizes.select_nth_unstable(middle).1 as f64
    }

    /// The rate the admission forecasts a frame at, bit/s: the round's (in flight ÷ RTT,
    /// what was sent), or, where the media asks for more than the path delivers and the
    /// queue is its own, the rate the bottleneck serves while busy.
    ///
    /// The forecast's queue is in flight over this rate less a minimum RTT, so on a GEO path
    /// each 5 % of rate moves it by 35 ms, and the round's rate, which counts the round's
    /// largest flight, reads 3–9 % above what an overloaded link serves. 2 Mbit/s of media at
    /// 1 Mbit/s, RTT 600 ms, arrived 36 ms after the forecast (median) and media-bulk-geo's
    /// 1 Mbit/s periods had 86–91 % of their frames late; at the served rate the median error
    /// is −1 ms and 51 % are late (half the media fits). The round's rate stays:
    /// - where the media gets what it asks for: next to other connections of ours the busy
    ///   rate is only a share and reads low (rmcat-5.2 refused frames that would have
    ///   arrived);
    /// - in the competing mode and within [`COMPETITOR_MEMORY`] of finding a competitor: the
    ///   queue is a loss-based flow's, and next to a Cubic download the media's worst
    ///   recovery after a drop went from 11.7 ± 5.6 to 20.4 ± 13.8 s over five seeds (15.4 ±
    ///   6.3 s with the memory, 12.6 ± 7.5 s with the median frame below);
    /// - where the last second's median frame takes more than
    ///   [`SERVED_RATE_MAX_FRAME_SHARE_OF_SLACK`] of the deadline's slack to serialize: only
    ///   an empty queue gets such a frame in time, refusing every other one idles the link
    ///   (GEO at 0.6 Mbit/s for 2 Mbit/s of media: 98 → 89 % utilized, below issue 10's
    ///   90 %), and the round's rate keeps it busy. The median, not the mean: the mean moves by
    ///   an eighth as a keyframe enters and leaves the second, and on the thesis path at
    ///   1 Mbit/s it crossed the threshold back and forth, the simulator and real time at
    ///   different moments (frames on time 38 / 35 % against 46 / 44 %; with the median
    ///   47 / 48 % against 50 / 50 %).
    ///
    /// Elsewhere (the media fits, or its median frame is too large for the rule above), where
    /// the newest busy stretches say the capacity dropped
    /// (`dropped_capacity_bps`), the forecast reads that rate, as the media's target and the
    /// bulk's cap already do: the round that began before the drop lasts as long as its
    /// backlog (seconds on GEO), and at its rate frames were admitted into that backlog and
    /// cancelled there, their bytes still ahead of the next frames. Only where the queue is
    /// our own, as above: next to a Cubic download a competitor's queue reads as a drop too
    /// (in every mode, one seed of five never got the media back to its share after the
    /// last drop).
    fn forecast_rate_bps(
        &self,
        view: &TransportView,
        deadline: Duration,
        round_rate_bps: f64,
    ) -> f64 {
        let own_queue = self.mode == Mode::Delay
            && self
                .competitor_found_at
                .is_none_or(|at| view.now > at + COMPETITOR_MEMORY);
        if !own_queue {
            return round_rate_bps;
        }
        let overloaded = self.media_demand_bytes_per_s(view.now) * 8.0 > self.delivered_bps(view);
        let slack = deadline.saturating_sub(view.min_rtt / 2).as_secs_f64();
        match self.recent_busy_rate_bps() {
            Some(busy_bps)
                if overloaded
                    && self.median_frame_bytes(view.now) * 8.0 / busy_bps
                        <= SERVED_RATE_MAX_FRAME_SHARE_OF_SLACK * slack =>
            {
                busy_bps
            }
            _ => self
                .dropped_capacity_bps(round_rate_bps, view)
                .unwrap_or(round_rate_bps),
        }
    }

    /// Media bytes handed to the transport per second over the last second, bit/s.
    fn media_written_bps(&self, now: Duration) -> f64 {
        bytes_in_frame_window(&self.recent_media_writes, now) as f64 * 8.0
            / FRAME_WINDOW.as_secs_f64()
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

    /// What the path delivered to the peer over the last [`FRAME_WINDOW`] (or since the last
    /// observation before the first acknowledgement), bit/s: the bytes acknowledged in it
    /// (packets, both classes). Unlike in flight ÷ the smoothed RTT it does
    /// not overstate the rate while a keyframe's burst is in flight and the smoothed RTT does
    /// not yet show the queue it makes (on a 600 kbit/s path that ratio read up to
    /// 1.4 Mbit/s), and unlike the bulk's writes a smoothed RTT earlier it does not read the
    /// old rate for seconds after a capacity drop, when the RTT itself is seconds stale (on a
    /// GEO path from 4 to 0.6 Mbit/s, 1.9 Mbit/s for five seconds).
    fn delivered_bps(&self, view: &TransportView) -> f64 {
        match self.acked_history.front() {
            Some(&(since, acked)) if view.now > since => {
                view.acked_bytes.saturating_sub(acked) as f64 * 8.0
                    / (view.now - since).as_secs_f64()
            }
            _ => 0.0,
        }
    }

    /// What the bottleneck serves while it is busy: the bytes acknowledged between two
    /// observations whose RTT samples both showed a queue, over those stretches' time. The
    /// bottleneck did not idle between them, so the acknowledgements came at its rate
    /// (packet-train dispersion over every busy stretch, not only a burst's). Unlike
    /// `delivered_bps` it does not count the link's idle time, so a media target taken from it
    /// does not ratchet down when the bulk keeps little queue.
    ///
    /// A queue at both ends does not prove one in between: the queue at the end may have
    /// formed after the link idled (a frame's burst into an empty link). A stretch longer than
    /// the target counts only where the later sample's queue delay is at least the stretch:
    /// that packet was already waiting when the stretch began (first in, first out). In the
    /// 0.6 Mbit/s period of media-bulk-geo with 3× rises (Hybla, seed 3) stretches of 42–87 ms
    /// with 39 ms of queue at their end read 270–560 kbit/s.
    fn measure_busy_rate(&mut self, view: &TransportView) {
        if self
            .last_ack_observation
            .is_some_and(|(_, acked, _)| acked >= view.acked_bytes)
        {
            return;
        }
        // The tolerance reads the delivered rate itself: no round rate to add.
        let busy = !view.min_rtt.is_zero()
            && view.rtt_sample_min.is_some_and(|sample| {
                sample.saturating_sub(view.min_rtt) > self.empty_path_tolerance(view, 0.0)
            });
        if let Some((since, acked, true)) = self.last_ack_observation
            && busy
            && view.now > since
            && (view.now - since <= self.config.target
                || view
                    .rtt_sample_min
                    .is_some_and(|sample| sample.saturating_sub(view.min_rtt) >= view.now - since))
        {
            self.busy_stretches
                .push_back((view.now, view.acked_bytes - acked, view.now - since));
        }
        self.last_ack_observation = Some((view.now, view.acked_bytes, busy));
        while self
            .busy_stretches
            .front()
            .is_some_and(|&(end, _, _)| end + BUSY_RATE_WINDOW <= view.now)
        {
            self.busy_stretches.pop_front();
        }
    }

    /// The bottleneck's rate while busy (see `measure_busy_rate`), bit/s, once the busy
    /// stretches of the last [`BUSY_RATE_WINDOW`] add up to [`BUSY_RATE_MIN_SPAN`].
    fn busy_rate_bps(&self) -> Option<f64> {
        let (bytes, span) = self
            .busy_stretches
            .iter()
            .fold((0u64, Duration::ZERO), |(b, s), &(_, bytes, span)| {
                (b + bytes, s + span)
            });
        (span >= BUSY_RATE_MIN_SPAN).then(|| rate_bps(bytes, span))
    }

    /// The bottleneck's rate over the newest busy stretches only, adding up to at least
    /// [`BUSY_RATE_RECENT_SPAN`], bit/s: what the link serves now, where the
    /// [`BUSY_RATE_WINDOW`] still averages in the rate before a capacity drop.
    fn recent_busy_rate_bps(&self) -> Option<f64> {
        let mut bytes = 0;
        let mut span = Duration::ZERO;
        for &(_, stretch_bytes, stretch_span) in self.busy_stretches.iter().rev() {
            bytes += stretch_bytes;
            span += stretch_span;
            if span >= BUSY_RATE_RECENT_SPAN {
                return Some(rate_bps(bytes, span));
            }
        }
        None
    }

    /// The newest busy stretches' rate, when it says the capacity dropped: below
    /// [`CAPACITY_DROP_BELOW`] of `rate_bps`, with the latest RTT sample behind more queue
    /// than the balancer leaves ([`COMPETITION_QUEUE_TARGETS`] targets). A drop's backlog
    /// shows at once; without the queue test, stretches in which the queue emptied for a
    /// moment read low and held GEO media at 77–80 % of a steady 2 Mbit/s.
    fn dropped_capacity_bps(&self, rate_bps: f64, view: &TransportView) -> Option<f64> {
        let queue = self.latest_rtt_sample?.saturating_sub(view.min_rtt);
        if queue <= self.config.target.mul_f64(COMPETITION_QUEUE_TARGETS) {
            return None;
        }
        self.recent_busy_rate_bps()
            .filter(|&recent_bps| recent_bps < rate_bps * CAPACITY_DROP_BELOW)
    }

    /// The adaptive media's target follows a capacity drop at once, not at the end of a round
    /// (a round behind a GEO drop's backlog lasts seconds): see `dropped_capacity_bps`. So
    /// does the bulk's cap, to the new rate's pipe plus the target: what the connection sends
    /// beyond that only lengthens the backlog every frame waits behind.
    fn follow_capacity_drop(&mut self, view: &TransportView) {
        if let Some(target_bps) = self.media_target_bps
            && let Some(recent_bps) =
                self.dropped_capacity_bps(target_bps as f64 / self.config.media_rate_share, view)
        {
            self.media_target_bps = Some((recent_bps * self.config.media_rate_share) as u64);
        }
        if self.mode == Mode::Delay
            && let Some(round_bps) = self.last_rate_bps
            && let Some(recent_bps) = self.dropped_capacity_bps(round_bps, view)
        {
            let pipe_bytes = self.pipe_and_target_bytes(recent_bps, view);
            let from = *self.cut_for_drop_from.get_or_insert(self.window_bytes);
            self.window_bytes = from.min(pipe_bytes.max(self.floor_bytes(view)));
        }
    }

    /// The dispersion of our acknowledgements: when packets leave faster than the bottleneck
    /// serves them (a keyframe written at once, a cap that just grew, quinn's pacing at 1.25×
    /// the window's rate), their acknowledgements come back spaced by the bottleneck's rate,
    /// whatever we sent before (packet-pair and packet-train estimation; BBR's delivery-rate
    /// samples). The fastest [`BURST_PROBE_PACKETS`] packets' worth (or
    /// [`BURST_PROBE_DURATION`] at the round's rate, at least [`BURST_PROBE_MIN_PACKETS`])
    /// over at least [`BURST_PROBE_MIN_SPAN`] is kept per round: delayed acknowledgements
    /// (every other packet) and steps that see several at once make shorter trains read high.
    fn measure_ack_train(&mut self, view: &TransportView) {
        if self
            .ack_train
            .back()
            .is_some_and(|&(_, acked)| acked >= view.acked_bytes)
        {
            return;
        }
        self.ack_train.push_back((view.now, view.acked_bytes));
        let keep = view.srtt.max(BURST_PROBE_MIN_SPAN) * 2;
        while self
            .ack_train
            .front()
            .is_some_and(|&(t, _)| t + keep < view.now)
        {
            self.ack_train.pop_front();
        }
        let packet_bytes = view.mtu_bytes.max(1200);
        // On a slow path a shorter train: 24 packets take 480 ms to come back at 0.6 Mbit/s,
        // longer than any burst the sender makes there (a keyframe is eight), so capacity that
        // rose from there was never read and the cap climbed by a target a round.
        let slow_path_bytes = self.last_rate_bps.map_or(u64::MAX, |bps| {
            (bps / 8.0 * BURST_PROBE_DURATION.as_secs_f64()) as u64
        });
        let span_bytes = slow_path_bytes.clamp(
            BURST_PROBE_MIN_PACKETS * packet_bytes,
            BURST_PROBE_PACKETS * packet_bytes,
        );
        // The latest observation at least a train behind this one, in time and in bytes.
        let start = self.ack_train.iter().rev().find(|&&(t, acked)| {
            view.acked_bytes - acked >= span_bytes && t + BURST_PROBE_MIN_SPAN <= view.now
        });
        if let Some(&(t, acked)) = start {
            let bps = (view.acked_bytes - acked) as f64 * 8.0 / (view.now - t).as_secs_f64();
            self.round_burst_bps = self.round_burst_bps.max(bps);
        }
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

    /// Whether a packet sent after a drain settled came back without our queue. What we had
    /// out beyond half a pipe is delivered by then, so a queue of our own is gone, but two
    /// kinds of queue that are not ours stay, and they need two thresholds:
    /// - Another delay-based flow (another of our connections) keeps its target and a frame
    ///   or two: 60 ms of queue at a 40 ms target in rmcat-5.2. A first drain (`recheck`
    ///   false) must take that for no competitor: at most two targets
    ///   ([`COMPETITION_QUEUE_TARGETS`], the threshold that starts a drain). At one target the
    ///   two connections took each other for loss-based flows after a drop to 1 Mbit/s and
    ///   half the frames of one were late.
    /// - A loss-based competitor, once found, dips after each of its losses (Cubic keeps 0.7
    ///   of its window). A recheck takes the queue for ours only at one target: at two,
    ///   media-bulk-competing (seed 3) saw 34–73 ms of the competitor's queue in rechecks at
    ///   4 Mbit/s, each handed the link back to the delay mode (once for 62 s), and our share
    ///   next to Cubic was a third.
    fn shows_queue_gone(&self, sample: Duration, view: &TransportView, recheck: bool) -> bool {
        let targets = if recheck {
            1.0
        } else {
            COMPETITION_QUEUE_TARGETS
        };
        sample.saturating_sub(view.min_rtt) <= self.config.target.mul_f64(targets)
    }

    /// Whether the queue a drain's confirming round saw shrank from `first` to `sample`: by
    /// more than a quarter target and an eighth of itself. A delay-based flow (another of
    /// ours) empties its queue within the round; a loss-based one's moves by a few percent
    /// (media-bulk-competing at 600 kbit/s: 700 → 670 ms, taken for shrinking at a quarter
    /// target alone, and the competitor for gone).
    fn shrank(&self, first: Duration, sample: Duration, view: &TransportView) -> bool {
        let margin = (self.config.target / 4).max(first.saturating_sub(view.min_rtt) / 8);
        sample + margin < first
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

    /// What `rate_bps` delivers in a minimum RTT plus the target: the pipe at that rate and
    /// the queue the balancer keeps.
    fn pipe_and_target_bytes(&self, rate_bps: f64, view: &TransportView) -> u64 {
        (rate_bps / 8.0 * (view.min_rtt + self.config.target).as_secs_f64()) as u64
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
        // A cap a capacity drop set this round is scaled again here, for the queue the old
        // capacity built: below the new pipe while the backlog lasts, so the bulk resumes only
        // once most of it drained. Keeping the cut instead made geo-adaptive's late frames
        // after 2 s 6.3 / 7.1 % (Cubic) and 6.9 / 9.4 % (Hybla), against 5.9 / 6.5 and
        // 5.5 / 6.2 %.
        match self.mode {
            Mode::Delay => self.hold_queue_to_target(view, queue_delay, used),
            // The controller's window governs (see `send_window`).
            Mode::Competing { .. } | Mode::Draining { .. } => {}
        }
        self.cut_for_drop_from = None;
        // Coupled to the controller: never more than its window allows out at once.
        let cwnd_cap = view.cwnd_bytes + BULK_SLACK_PACKETS * view.mtu_bytes;
        self.window_bytes = self.window_bytes.min(cwnd_cap.max(self.floor_bytes(view)));
        let delivery_bps = view.in_flight_bytes.max(used) as f64 * 8.0 / view.srtt.as_secs_f64();
        self.last_queue_delay = queue_delay;
        self.last_rate_bps = Some(delivery_bps);

        // For an adaptive media source: while the path is saturated (a queue above half the
        // target), a share of what it delivered over the last second, counted from what was
        // acknowledged (`delivered_bps`); otherwise the source climbs back, gently (SCReAM's
        // lesson: the hard part is when to increase): MEDIA_RATE_CLIMB_PER_S of the rate per
        // second of rounds, whatever the RTT, and never straight to in flight ÷ RTT, which
        // a keyframe's burst inflates (it took the target to twice the path's rate at
        // 600 kbit/s, and 37 % of the frames were late after the first 2 s of overload).
        let climb = 1.0 + MEDIA_RATE_CLIMB_PER_S * view.srtt.as_secs_f64();
        self.media_target_bps = if queue_delay > self.config.target / 2 {
            // The bottleneck's rate while busy, not only what it delivered over the second:
            // the link idles between the bulk's rounds and the media's frames, and a share of
            // a rate that counts the idle time held adaptive media at 71–78 % of the capacity
            // in overload (see `measure_busy_rate`). At most `BUSY_RATE_MAX_LIFT` times what
            // we delivered: next to other flows a busy stretch may have been ours alone.
            let delivered_bps = self.delivered_bps(view);
            let mut rate_bps = self
                .busy_rate_bps()
                .unwrap_or(0.0)
                .min(BUSY_RATE_MAX_LIFT * delivered_bps)
                .max(delivered_bps);
            // After a capacity drop both the window's busy rate and the second's delivered
            // rate still count the old capacity.
            if let Some(recent_bps) = self.dropped_capacity_bps(rate_bps, view) {
                rate_bps = recent_bps;
            }
            Some((rate_bps * self.config.media_rate_share) as u64)
        } else {
            self.media_target_bps.map(|bps| (bps as f64 * climb) as u64)
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
            // second for what the transport still buffers, and one for the confirming
            // round, or the drain is inconclusive.
            self.mode = Mode::Draining {
                give_up_at: view.now + 3 * view.srtt + Duration::from_secs(1),
                settled_at: None,
                confirming: None,
                recheck: matches!(self.mode, Mode::Competing { .. })
                    || self
                        .competitor_found_at
                        .is_some_and(|at| view.now < at + COMPETITOR_MEMORY),
                resume_window_bytes: self.window_bytes,
            };
            self.rounds_with_standing_queue = 0;
        }
    }

    /// When the bulk pauses before the next keyframe, if one is due and the pause is on: early
    /// enough that the queue has drained when the keyframe reaches the bottleneck (plus a
    /// quarter target), until it is captured (then the next one is due) or
    /// [`KEYFRAME_GAP_GIVE_UP`] after it was due. The media keeps sending through the pause,
    /// so the queue drains only at the rate the media leaves spare: the queue's delay ÷ the
    /// spare share of the delivery rate (with 2 Mbit/s of media on 3 Mbit/s, a third: a pause
    /// of the queue's delay alone left two thirds of it in front of every keyframe, and a
    /// controller whose window held a standing queue, Hybla's, had each keyframe in the
    /// 3 Mbit/s period of media-bulk-thesis late). The lead is at most two targets of queue
    /// over a spare share of at least a quarter, and a quarter of the keyframe interval: a
    /// larger queue is a backlog the delay mode drains anyway, and the bulk must never pause
    /// most of the time.
    fn keyframe_gap(&self, view: &TransportView) -> Option<(Duration, Duration)> {
        if !self.config.keyframe_gap {
            return None;
        }
        let (due, interval) = self.keyframes.next_due()?;
        let queue = view
            .srtt
            .saturating_sub(view.min_rtt)
            .min(2 * self.config.target);
        let delivered_bps = self.delivered_bps(view);
        let spare_share = if delivered_bps > 0.0 {
            let media_bps = self.media_demand_bytes_per_s(view.now) * 8.0;
            let spare_share = 1.0 - media_bps / delivered_bps;
            if spare_share > 0.0 {
                spare_share.clamp(MIN_SPARE_SHARE, 1.0)
            } else {
                OVERLOAD_SPARE_SHARE
            }
        } else {
            1.0
        };
        let lead = (queue.div_f64(spare_share) + self.config.target / 4).min(interval / 4);
        Some((due.saturating_sub(lead), due + KEYFRAME_GAP_GIVE_UP))
    }

    fn in_keyframe_gap(&self, view: &TransportView) -> bool {
        self.keyframe_gap(view)
            .is_some_and(|(start, end)| view.now >= start && view.now < end)
    }

    /// The bulk's cap: a jump to a train's pipe is released evenly over half the next round
    /// where the transport's pacer ([`TRANSPORT_PACING_GAIN`] × the controller's window per
    /// smoothed RTT) runs at
    /// more than [`JUMP_RELEASE_PACER_ABOVE`] times the train's rate. Written at once, the jump
    /// left at the pacer's rate and stood in the queue in front of the media (media-bulk-geo
    /// with 3× steps, Cubic, seed 2: 108 kB, 160 ms at 5.4 Mbit/s, with a window of 868 kB
    /// paced at 14 Mbit/s). Where the window is about the pipe (Hybla's) the pacer already
    /// spreads it, and holding the bulk back too slowed its growth.
    fn released_window_bytes(&self, view: &TransportView) -> u64 {
        let Some((at, from, train_bytes_per_s)) = self.window_jumped_from else {
            return self.window_bytes;
        };
        if view.srtt.is_zero() {
            return self.window_bytes;
        }
        let srtt = view.srtt.as_secs_f64();
        let pacer_bytes_per_s = TRANSPORT_PACING_GAIN * view.cwnd_bytes as f64 / srtt;
        if from >= self.window_bytes
            || pacer_bytes_per_s <= JUMP_RELEASE_PACER_ABOVE * train_bytes_per_s
        {
            return self.window_bytes;
        }
        let released = (view.now.saturating_sub(at).as_secs_f64() / (srtt / 2.0)).min(1.0);
        from + ((self.window_bytes - from) as f64 * released) as u64
    }

    /// The delay mode's update of the cap: Little's law towards the target.
    fn hold_queue_to_target(&mut self, view: &TransportView, queue_delay: Duration, used: u64) {
        let floor = self.floor_bytes(view);
        let base = view.min_rtt.as_secs_f64();
        let target = self.config.target.as_secs_f64();
        // The round's delivery rate: what was out over the smoothed RTT.
        let rate_bytes_per_s = used as f64 / view.srtt.as_secs_f64();
        let grew = self.empty_rounds;
        self.empty_rounds = 0;
        if !self.media_satisfied() {
            // Media first: while it does not get what it offers, the bulk halves each round
            // and does not grow, whatever the queue says.
            self.window_bytes = (self.window_bytes / 2).max(floor);
        } else if queue_delay > self.config.target {
            // Little's law: the cap that leaves `target` of queue at today's delivery rate.
            let scale = (base + target) / (base + queue_delay.as_secs_f64());
            let from = self.window_bytes.min(used) as f64;
            // Plus an increment that grows slower than the rate, while the excess is mild
            // (see `fairness_increment_bytes`): what makes two of our connections converge.
            let increment = if queue_delay <= self.config.target.mul_f64(FAIRNESS_MAX_QUEUE_TARGETS)
            {
                fairness_increment_bytes(rate_bytes_per_s, view.mtu_bytes)
            } else {
                0.0
            };
            self.window_bytes = ((from * scale + increment) as u64).max(floor);
        } else if used as f64 >= 0.8 * self.window_bytes as f64 {
            // Window-limited and below the target: grow.
            //
            // Where the path stayed empty round after round, each round's growth doubles the
            // last: the link has more room than a target's worth, and one target per round
            // takes 17 rounds (11 s at GEO) to triple. Empty in the smoothed RTT, the latest
            // sample and the median of the round's samples: the smoothed RTT lags a round and
            // the bulk's pause before each keyframe empties the queue for a moment, so on
            // media-bulk-geo after the rise from 2 to 6 Mbit/s a round whose samples sat
            // 25 ms above the minimum (median; 34 ms at the 90th percentile) read 9 ms in the
            // smoothed RTT and 1 ms in its last sample, counted as empty, and grew by four
            // targets: 150 ms of queue a round later, and 33 frames late (Cubic, seed 5).
            let empty_below = self.empty_path_tolerance(view, rate_bytes_per_s);
            let empty = queue_delay < empty_below
                && self
                    .latest_rtt_sample
                    .is_some_and(|s| s.saturating_sub(view.min_rtt) < empty_below)
                && self.round_median_queue().is_none_or(|q| q < empty_below);
            // An empty round grows by the full step even where its readings sit above half
            // the target: below about 0.9 Mbit/s a frame's own packets, one behind the other,
            // read 20–26 ms above the minimum, no standing queue, and Little's law towards the
            // target then grew the cap by 2–3 % a round (media-bulk-geo with adaptive media,
            // Cubic, seed 3: 44 → 66 kB over the ten rounds after the rise from 0.6 to
            // 1 Mbit/s).
            let growth = if queue_delay < self.config.target / 2 || empty {
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
            let from = self.window_bytes.max(self.media_pipe_bytes(view) as u64) as f64;
            self.empty_rounds = if empty { grew.saturating_add(1) } else { 0 };
            let targets = 2f64.powi(self.empty_rounds.saturating_sub(1).min(16) as i32);
            let grown = (from * growth).min(from + rate_bytes_per_s * target * targets);
            // The bottleneck itself said how fast it serves: a train of our packets came back
            // faster than we deliver (capacity rose). The cap goes to most of that pipe at
            // once instead of a target per round (on a GEO path from 2 to 4 Mbit/s, eight
            // rounds, five seconds). Below the train's whole pipe it grows by its
            // multiplicative step, not one target: the round's own frame bursts keep the
            // empty-path test from doubling (media-bulk-geo after the rise from 2 to
            // 6 Mbit/s, Hybla, seed 2: a median sample above a quarter target every round),
            // and one target a round took four rounds, 2.4 s, for the last fifth of the pipe.
            let burst_bytes_per_s = self.round_burst_bps / 8.0;
            let measured = if burst_bytes_per_s > BURST_JUMP_ABOVE * rate_bytes_per_s {
                BURST_PIPE_SHARE * burst_bytes_per_s * base
            } else {
                0.0
            };
            let toward_train = if burst_bytes_per_s > BURST_GROW_ABOVE * rate_bytes_per_s {
                (from * growth).min(burst_bytes_per_s * base)
            } else {
                0.0
            };
            self.window_bytes = (grown.max(measured).max(toward_train) as u64).max(floor);
            let stepped = (grown as u64).max(floor);
            self.window_jumped_from =
                (self.window_bytes > stepped).then_some((view.now, stepped, burst_bytes_per_s));
        }
    }

    /// The median of this round's queue readings (RTT samples above the minimum RTT).
    fn round_median_queue(&mut self) -> Option<Duration> {
        let middle = self.round_queue_samples.len() / 2;
        if self.round_queue_samples.is_empty() {
            return None;
        }
        let (_, median, _) = self.round_queue_samples.select_nth_unstable(middle);
        Some(*median)
    }

    /// How far above the minimum RTT the path still counts as empty: a quarter target, or
    /// [`EMPTY_PATH_PACKETS`] packets' serialization at the rate delivered where that is more
    /// (at most one target). A full-size packet's own serialization is no queue, yet the
    /// minimum RTT may come from a faster period or a smaller packet: at 1 Mbit/s one packet
    /// is 12 ms, above a 40 ms target's quarter, and no round counted as empty.
    fn empty_path_tolerance(&self, view: &TransportView, rate_bytes_per_s: f64) -> Duration {
        let quarter_target = self.config.target / 4;
        let rate_bps = self.delivered_bps(view).max(rate_bytes_per_s * 8.0);
        if rate_bps <= 0.0 {
            return quarter_target;
        }
        let packet = Duration::from_secs_f64(view.mtu_bytes as f64 * 8.0 / rate_bps);
        quarter_target
            .max(packet.mul_f64(EMPTY_PATH_PACKETS))
            .min(self.config.target)
    }

    /// The drain's verdict at its end: a queue that stayed while we sent next to nothing is a
    /// competitor's.
    ///
    /// A competitor found again by a recheck is checked for half as often as before, down to
    /// once every [`MAX_RECHECK_DOUBLINGS`] doublings of the drain interval: each drain hands
    /// the competitor the buffer space we free (at ten seconds our connection held 39 % of
    /// the link next to Cubic, at thirty 40–41 %), and one that leaves is noticed that much
    /// later.
    fn end_drain(&mut self, view: &TransportView, competitor: bool, recheck: bool, resume: u64) {
        // A drain is no empty round: growth starts again from one target.
        self.empty_rounds = 0;
        if competitor {
            self.competitor_found_at = Some(view.now);
            self.competitor_rechecks = if recheck {
                (self.competitor_rechecks + 1).min(MAX_RECHECK_DOUBLINGS)
            } else {
                0
            };
            self.mode = Mode::Competing {
                until: view.now + self.config.drain_interval * (1 << self.competitor_rechecks),
            };
        } else {
            self.competitor_rechecks = 0;
            self.mode = Mode::Delay;
            self.window_bytes = resume;
            self.next_drain_at = view.now + self.config.drain_interval;
        }
    }
}

/// Bytes over a span as bit/s.
fn rate_bps(bytes: u64, span: Duration) -> f64 {
    bytes as f64 * 8.0 / span.as_secs_f64()
}

/// The increment added to the cap at each decrease of the delay mode, for a connection
/// delivering `rate_bytes_per_s`: [`FAIRNESS_INCREMENT_SHARE`] × √(rate ×
/// [`FAIRNESS_TIMESCALE`] × MTU).
///
/// Why it exists: every connection behind the same queue sees the same queue delay, so
/// Little's law scales every cap by the same factor, and the growth below the target is a
/// share of each connection's own rate. Both keep the ratio of two caps, so any split of the
/// link is a fixed point, and which connection ends up starved is chance: in rmcat-5.2 (two
/// connections, each with adaptive media and a bulk transfer) the Jain index was 0.66, and
/// in 3 of 60 seeds per controller one connection's media collapsed (both media together at
/// 30–52 % of the capacity in overload, 59–100 % of the frames late after its first 2 s). With an increment c
/// added after the scaling, a cap holds where cap × (1 − scale) = c, and 1 − scale is the
/// same for every connection: caps in proportion to their increments. Since the increment
/// grows only with the square root of the rate, the one split where cap ∝ rate ∝ √rate is the
/// equal one (Chiu and Jain's argument for additive increase, with an increment that still
/// scales with the path). Alone on the link, it leaves c ÷ rate more queue: 0.5 ×
/// √(1 200 B × 0.1 s ÷ rate), 6 ms at 1 Mbit/s.
fn fairness_increment_bytes(rate_bytes_per_s: f64, mtu_bytes: u64) -> f64 {
    FAIRNESS_INCREMENT_SHARE
        * (rate_bytes_per_s.max(0.0) * FAIRNESS_TIMESCALE.as_secs_f64() * mtu_bytes as f64).sqrt()
}

/// The bytes of the (time, bytes) records of the last [`FRAME_WINDOW`] before `now`.
fn bytes_in_frame_window(records: &VecDeque<(Duration, u64)>, now: Duration) -> u64 {
    records
        .iter()
        .filter(|&&(t, _)| t + FRAME_WINDOW > now)
        .map(|&(_, b)| b)
        .sum()
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
        // The oldest kept is the last one at least a window old: the rate's base.
        while self
            .acked_history
            .get(1)
            .is_some_and(|&(t, _)| t + FRAME_WINDOW <= view.now)
        {
            self.acked_history.pop_front();
        }
        // Until the first acknowledgement the base moves with the clock: a rate counted from
        // before the handshake or the first round trip is not the path's.
        if view.acked_bytes == 0 {
            self.acked_history.clear();
        }
        if self.acked_history.back().is_none_or(|&(t, _)| t < view.now) {
            self.acked_history.push_back((view.now, view.acked_bytes));
        }
        self.measure_ack_train(view);
        self.measure_busy_rate(view);
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
            self.round_queue_samples
                .push(sample.saturating_sub(view.min_rtt));
        }
        self.follow_capacity_drop(view);
        if let Mode::Draining {
            give_up_at,
            settled_at,
            confirming,
            recheck,
            resume_window_bytes,
        } = self.mode
        {
            // A sample no longer than the time since the drain settled is of a packet sent
            // after it (an older one took longer); if the smallest is older, all are.
            let since_settled = settled_at.map(|at| view.now.saturating_sub(at));
            let probe = since_settled
                .and_then(|since| view.rtt_sample_min.filter(|&sample| sample <= since));
            let mut verdict = None;
            let mut confirming = confirming;
            match (probe, &mut confirming) {
                (Some(sample), _) if self.shows_queue_gone(sample, view, recheck) => {
                    verdict = Some(false);
                }
                (Some(_), None) if recheck => verdict = Some(true),
                (Some(sample), None) => {
                    confirming = Some(Confirming {
                        started: view.now,
                        until: view.now + view.srtt.max(view.min_rtt),
                        first: sample,
                        stayed: false,
                    });
                }
                (Some(sample), Some(round)) if self.shrank(round.first, sample, view) => {
                    // Shrinking while we hold back: not a flow that keeps the buffer full.
                    verdict = Some(false);
                }
                (Some(sample), Some(round)) => {
                    round.stayed |= sample <= view.now.saturating_sub(round.started);
                }
                _ => {}
            }
            // A competitor's only when a packet of the round itself saw the queue stay: a round
            // with no sample of its own (all at the floor, behind a capacity drop's backlog)
            // proves nothing, and two of our connections took each other for loss-based flows
            // that way after a drop to 1 Mbit/s (rmcat-5.2).
            if verdict.is_none()
                && let Some(round) = confirming
                && round.stayed
                && view.now >= round.until
            {
                verdict = Some(true);
            }
            let settled_at = match settled_at {
                None if view.in_flight_bytes <= self.drain_window_bytes(view) => Some(view.now),
                other => other,
            };
            self.mode = Mode::Draining {
                give_up_at,
                settled_at,
                confirming,
                recheck,
                resume_window_bytes,
            };
            if verdict.is_some() || view.now >= give_up_at {
                self.end_drain(view, verdict == Some(true), recheck, resume_window_bytes);
                // The round restarts from here: what the drain let out says nothing.
                self.round_end = None;
                self.round_max_in_flight = 0;
                self.round_queue_samples.clear();
            }
        }
        match self.round_end {
            None if !view.srtt.is_zero() => self.round_end = Some(view.now + view.srtt),
            Some(end) if view.now >= end => {
                self.end_round(view);
                self.round_burst_bps = 0.0;
                self.round_max_in_flight = view.in_flight_bytes;
                self.round_min_sample = None;
                self.round_queue_samples.clear();
                self.round_end = Some(view.now + view.srtt.max(Duration::from_millis(1)));
            }
            _ => {}
        }
        self.view = Some(*view);
    }

    fn priority(&self, class: Class) -> i32 {
        match class {
            Class::Media => 2,
            Class::Bulk => 0,
        }
    }

    /// Between the media that can still be on time and the bulk, in the delay mode, where a
    /// late frame is the exception. Next to a loss-based competitor nearly every frame is late,
    /// and reordering them slowed the media's recovery after a drop (media-bulk-competing,
    /// five seeds: 9.3 → 12.9 s per drop on average, the worst 17.2 → 36.3 s).
    fn late_frame_priority(&self) -> Option<i32> {
        (self.mode == Mode::Delay).then_some(1)
    }

    fn on_frame(&mut self, now: Duration, bytes: u64) {
        // `recent_frames` keeps at least the last second (until `observe` prunes it, a smoothed
        // RTT later): what the keyframe test compares with.
        self.keyframes
            .on_frame(now, bytes, self.recent_frames.iter().copied());
        self.recent_frames.push_back((now, bytes));
    }

    fn on_written(&mut self, now: Duration, class: Class, bytes: u64) {
        // The bulk's writes need no record: what the path delivered comes from the
        // acknowledgements (`TransportView::acked_bytes`).
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
            // Against a loss-based flow the controller competes for our share, and its window
            // must be the only limit (see COMPETING_SEND_WINDOWS); media still goes first
            // (priority) and frames that cannot arrive are still refused.
            Mode::Competing { .. } => {
                COMPETING_SEND_WINDOWS * view.cwnd_bytes + BULK_SLACK_PACKETS * view.mtu_bytes
            }
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
            let deliverable = self.pipe_and_target_bytes(rate_bps, &view);
            let cap = if self.media_satisfied() {
                deliverable + largest_frame
            } else {
                deliverable
            };
            // Never below the bulk's cap: the media goes first.
            media_bytes = media_bytes.min(cap.max(bulk_bytes).max(2 * view.mtu_bytes));
        }
        // Before a keyframe the bulk pauses; the media keeps the room the cap gives it.
        let bulk_bytes = if self.mode == Mode::Delay && self.in_keyframe_gap(&view) {
            0
        } else if self.mode == Mode::Delay {
            bulk_bytes.min(self.released_window_bytes(&view))
        } else {
            bulk_bytes
        };
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
                // The round's rate is what we sent; where the media is overloaded, or the
                // capacity dropped mid-round, the forecast reads the rate the bottleneck
                // serves (`forecast_rate_bps`). If the
                // latest RTT sample shows no more than the target of queue, what is in flight
                // now over that RTT is what the path carries: capacity that rose mid-round
                // shows there a round early. (Above the target the path is overloaded and the
                // measured rate is its rate.)
                let served_bps = self.forecast_rate_bps(&view, deadline, round_rate_bps);
                let rate_bps = match self.latest_rtt_sample {
                    Some(rtt) if rtt.saturating_sub(view.min_rtt) <= self.config.target => {
                        served_bps.max(view.in_flight_bytes as f64 * 8.0 / rtt.as_secs_f64())
                    }
                    _ => served_bps,
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
        // Next to a loss-based flow no frame may be on time (its queue alone can exceed the
        // media's slack), and refusing them all starves the media while the bulk takes our
        // whole share: the media is admitted however late while it has written less than
        // its share of what we deliver.
        let admit = admit
            || (self.competing()
                && self.media_written_bps(view.now)
                    < MEDIA_SHARE_NEXT_TO_COMPETITOR * self.delivered_bps(&view));
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

    /// In the delay mode, while the path is saturated: what the capacity behind the media's
    /// target delivers in the deadline's slack beyond half the minimum RTT, less the queue the
    /// balancer keeps (`FRAME_LIMIT_QUEUE_TARGETS` targets), so that the largest frame can
    /// arrive in time behind that queue. (The admission test reads the round's rate, which
    /// may be lower; taking the lower of the two made geo-adaptive/hybla's late frames after
    /// 2 s 5.8 / 6.5 % instead of 5.5 / 6.2 %.) Never below `KEYFRAME_VISIBLE_FACTOR` times
    /// the mean of the last second's frames: a keyframe held below what the balancer's own
    /// keyframe clock recognises would lose the pause before the next one (where the slack is
    /// that tight, a keyframe is refused or late as before). Not saturated, the path has room for a
    /// keyframe's burst; next to a competitor, its queue, not ours, decides.
    fn media_frame_limit_bytes(&self, deadline: Duration) -> Option<u64> {
        let view = self.view?;
        if self.mode != Mode::Delay || !self.saturated(&view) {
            return None;
        }
        let capacity_bps = self.media_target_bps? as f64 / self.config.media_rate_share;
        let budget = deadline.checked_sub(
            view.min_rtt / 2 + self.config.target.mul_f64(FRAME_LIMIT_QUEUE_TARGETS),
        )?;
        let (_, mean_frame_bytes) =
            recent_frames_mean(view.now, self.recent_frames.iter().copied());
        let visible = KEYFRAME_VISIBLE_FACTOR * mean_frame_bytes;
        Some((budget.as_secs_f64() * capacity_bps / 8.0).max(visible) as u64)
    }

    fn wakeup(&self) -> Option<Duration> {
        match self.mode {
            Mode::Draining {
                give_up_at,
                confirming,
                ..
            } => {
                // A confirming round past its end without a sample of its own waits for one
                // until the drain gives up.
                let now = self.view.map_or(Duration::ZERO, |v| v.now);
                let until = confirming
                    .filter(|round| round.until > now)
                    .map_or(give_up_at, |round| round.until.min(give_up_at));
                Some(self.round_end.map_or(until, |end| end.min(until)))
            }
            Mode::Competing { .. } => self.round_end,
            Mode::Delay => {
                // The pause's start, or its give-up time while it lasts.
                let view = self.view?;
                let edge = self
                    .keyframe_gap(&view)
                    .and_then(|(start, end)| [start, end].into_iter().find(|&t| t > view.now));
                match (self.round_end, edge) {
                    (Some(end), Some(edge)) => Some(end.min(edge)),
                    (end, edge) => end.or(edge),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
