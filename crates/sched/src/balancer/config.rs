//! The balancer's parameters: what a scenario may set ([`BalancerConfig`]) and the constants
//! behind the rules, each with the measurement that chose it.

use std::time::Duration;

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
    /// Share of the delivery rate an adaptive media source is asked to use (of the
    /// bottleneck's busy rate, see `Balancer::measure_busy_rate`). What is left is the room a
    /// keyframe needs: a 5× keyframe at this share takes most of the media's 150 ms slack.
    /// 0.89 measured best with `satquic media-bulk` (five seeds) once the pause before a
    /// keyframe drains at the spare rate (`MIN_SPARE_SHARE`) and the target follows a
    /// capacity drop at once: 0.87 left the thesis and RMCAT media at 79–80 % of the capacity
    /// in overload (reports/media-bulk, "A drop followed at once, the keyframe pause at the
    /// spare rate, share 0.89"). Before those two rules 0.88 made 5.2 % of
    /// thesis-adaptive/hybla's frames late.
    pub media_rate_share: f64,
    /// Whether bulk writes pause just before the media's next keyframe is due (learned from
    /// frame sizes; delay mode only), so that the bulk's queue at the bottleneck has drained
    /// when the keyframe arrives there.
    pub keyframe_gap: bool,
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
            media_rate_share: 0.89,
            keyframe_gap: true,
        }
    }
}

/// A pause for a keyframe that was due but has not come ends this long after it was due.
pub(super) const KEYFRAME_GAP_GIVE_UP: Duration = Duration::from_millis(100);

/// The smallest share of the delivery rate the media is taken to leave spare when the pause
/// before a keyframe is timed, while it leaves some: the queue ahead of the keyframe drains
/// only at the spare rate. Adaptive media in overload leaves 5–15 %; at 0.25 the pause was
/// half as long as the drain, and 2.4–4.6 % of the frames were late after the first 2 s of
/// overload on RMCAT §5.1 (five seeds; 1.7–2.5 % at 0.1).
pub(super) const MIN_SPARE_SHARE: f64 = 0.1;

/// The spare share the pause is timed with when the media offers at least the path's rate
/// (media that does not adapt, in overload): no pause drains that queue, and a pause timed
/// for 10 % spare (half a keyframe interval of bulk held back) made 1.8–3.3 % of
/// media-bulk-geo/hybla's frames late after the rise that ends such an overload.
pub(super) const OVERLOAD_SPARE_SHARE: f64 = 0.25;

/// The largest frame is taken over this long (frames arrive every 33 ms, keyframes every 2 s).
pub(super) const FRAME_WINDOW: Duration = Duration::from_secs(1);

/// Share of its offered bytes the media must get acknowledged for the path to count as
/// serving it (acknowledgements lag captures by a round trip; frames vary in size). On a GEO
/// path a keyframe written at the edge of the second, acknowledged just after it, plus a
/// queue rising by a target, is 20 % of a second's media: at 0.8 that halved the bulk every
/// few seconds on a path that served the media in full.
pub(super) const MEDIA_SATISFIED_SHARE: f64 = 0.7;

/// Share of what our connection delivers that the media may write next to a loss-based
/// competitor even when its frames cannot be on time (the rest is the bulk's).
pub(super) const MEDIA_SHARE_NEXT_TO_COMPETITOR: f64 = 0.5;

/// The drain interval doubles with each recheck that finds the competitor still there, at
/// most this many times (10 s becomes 40 s).
pub(super) const MAX_RECHECK_DOUBLINGS: u32 = 2;

/// Packets whose acknowledgements make one train for the bottleneck's rate (see
/// `Balancer::measure_ack_train`): 24, so that one acknowledgement more or less (every
/// other packet is acknowledged) moves the reading by a twelfth.
pub(super) const BURST_PROBE_PACKETS: u64 = 24;

/// A train on a slow path is [`BURST_PROBE_DURATION`] at the round's rate, at least this many
/// packets (each acknowledgement more or less moves the reading by a quarter; rises to read
/// there are 1.7–3× the rate, and the jump needs 1.15×).
pub(super) const BURST_PROBE_MIN_PACKETS: u64 = 8;

/// Where the round's rate brings fewer than [`BURST_PROBE_PACKETS`] packets in this long, a
/// train is this long: about the longest burst a slow path sees (a keyframe of eight packets
/// at 0.6 Mbit/s), where 24 packets took 480 ms to come back and no train was ever read.
pub(super) const BURST_PROBE_DURATION: Duration = Duration::from_millis(120);

/// A train's acknowledgements span at least this long: an observation that sees many at
/// once (a batch of datagrams in real time) is no rate.
pub(super) const BURST_PROBE_MIN_SPAN: Duration = Duration::from_millis(10);

/// A train of acknowledgements faster than this many times the round's delivery rate says
/// the bottleneck has room we do not use (trains read within a few percent of the
/// bottleneck's rate in the simulator).
pub(super) const BURST_JUMP_ABOVE: f64 = 1.15;

/// The cap jumps to this share of the pipe at a train's rate (× the minimum RTT).
pub(super) const BURST_PIPE_SHARE: f64 = 0.8;

/// How much faster than the controller's window per smoothed RTT the transport paces: quinn's
/// pacer sends 1.25 windows per RTT.
pub(super) const TRANSPORT_PACING_GAIN: f64 = 1.25;

/// A jump of the cap to a train's pipe is released over half a round where the transport's pacer
/// runs faster than this many times the train's rate (see `Balancer::released_window_bytes`).
pub(super) const JUMP_RELEASE_PACER_ABOVE: f64 = 1.5;

/// A train of acknowledgements faster than this many times the round's delivery rate lets the
/// cap grow by its multiplicative step up to the train's whole pipe: a train within a few
/// percent of what we deliver is the reading's own spread, not room.
pub(super) const BURST_GROW_ABOVE: f64 = 1.05;

/// A drain this soon after one found a competitor is a recheck (the first sample decides,
/// at one target): a loss-based flow that was there is likely still there, and its queue's
/// dips after its losses made first drains take it for ours (46 s of the delay mode next to
/// Cubic, media-bulk-competing seed 3).
pub(super) const COMPETITOR_MEMORY: Duration = Duration::from_secs(60);

/// The fairness increment's share (see `fairness_increment_bytes`), measured with
/// `satquic media-bulk`. Without the queue bound below (five seeds), 0.25 left rmcat-5.2's
/// Jain index at 0.81–0.85, and 0.75 raised it to 0.96–0.97 but cost the thesis and RMCAT
/// adaptive rates about two points. 0.5 with the bound gives 0.90–0.93, and no collapse in
/// sixty seeds.
pub(super) const FAIRNESS_INCREMENT_SHARE: f64 = 0.5;

/// The fairness increment's time scale: √(rate × this × MTU) is the geometric mean of a
/// packet and 100 ms of the connection's rate.
pub(super) const FAIRNESS_TIMESCALE: Duration = Duration::from_millis(100);

/// The fairness increment applies only while the queue is at most this many targets: a
/// larger excess is a capacity drop's backlog or an overload, where every byte more is late
/// media. With the increment at any excess, media-bulk-geo/hybla seed 8 had 75 frames late
/// in the first 4 s after the rise at 120 s (3 without the increment, 16 with this bound).
pub(super) const FAIRNESS_MAX_QUEUE_TARGETS: f64 = 2.0;

/// Busy stretches (see `Balancer::measure_busy_rate`) are kept this long.
pub(super) const BUSY_RATE_WINDOW: Duration = Duration::from_secs(2);

/// Busy stretches must add up to this much before their rate is used.
pub(super) const BUSY_RATE_MIN_SPAN: Duration = Duration::from_millis(200);

/// The newest busy stretches that say what the link serves now add up to this much (see
/// `Balancer::recent_busy_rate_bps`).
pub(super) const BUSY_RATE_RECENT_SPAN: Duration = Duration::from_millis(300);

/// The newest busy stretches' rate below this share of the rate the adaptive media's target
/// was taken from is a capacity drop, and the target follows it at once.
pub(super) const CAPACITY_DROP_BELOW: f64 = 0.8;

/// The adaptive media's rate is taken from the busy rate up to this many times what our
/// connection delivered over the last second. Alone on the link, the busy rate is the
/// capacity and the delivered rate 87–93 % of it (thesis and RMCAT §5.1 overload periods);
/// next to another flow a busy stretch can be one in which the other had nothing queued, and
/// the busy rate then overstates our share.
pub(super) const BUSY_RATE_MAX_LIFT: f64 = 1.1;

/// The queue, in targets, an adaptive source's largest frame is sized to wait behind
/// ([`crate::Scheduler::media_frame_limit_bytes`]): the admission test measures the queue
/// ahead when the frame starts, and the delay mode holds it near one target.
pub(super) const FRAME_LIMIT_QUEUE_TARGETS: f64 = 1.0;

/// How fast the target bitrate for adaptive media climbs while the path is not saturated, as
/// a share of itself per second.
pub(super) const MEDIA_RATE_CLIMB_PER_S: f64 = 0.1;

/// A round counts as empty (the cap's growth doubles) while its queue readings stay within
/// this many packets' serialization time (at the delivered rate) of the minimum RTT, where
/// that is more than a quarter target. On media-bulk-geo with adaptive media, after the rise from 0.6
/// to 1 Mbit/s the samples sat one packet (11.8 ms) above the minimum, over the 10 ms quarter
/// target: the cap grew by 2–8 % a round and the link took 5.5 / 7.4 s (mean / worst of five
/// seeds, Hybla) to reach 90 %; with the tolerance 3.1 / 3.9 s. It changes nothing above
/// 1.8 Mbit/s (with a 40 ms target and 1 500-byte packets).
pub(super) const EMPTY_PATH_PACKETS: f64 = 1.5;

/// The media's own pipe (its rate × the minimum RTT) is allowed this much more in flight.
pub(super) const MEDIA_PIPE_HEADROOM: f64 = 1.25;

/// Next to a loss-based flow the bulk may have this many congestion windows written and not
/// yet acknowledged (plus [`BULK_SLACK_PACKETS`]), so that the controller's window is the only
/// limit. quinn counts an acknowledgement as application-limited when its last attempt to send
/// found no data while the window had room, and neither Cubic nor Hybla grows on one (RFC 9002
/// §7.8); data lost and awaiting retransmission counts against the send window too. With one
/// window (media-bulk-competing), 28 % of the acknowledgements after 30 s were
/// application-limited (Hybla, seed 5) and our connection held 39–45 % of the link (Cubic,
/// five seeds); with two, 3 % and 44–51 %. Unsent bulk in the transport delays no frame:
/// media has the higher stream priority.
pub(super) const COMPETING_SEND_WINDOWS: u64 = 2;

/// Headroom above the congestion window for bulk writes: what one ACK can free before the next
/// write.
pub(super) const BULK_SLACK_PACKETS: u64 = 2;

/// A standing queue of more than this many targets is not what the balancer itself leaves
/// (the bulk's target, plus a media frame in service when the media is overloaded): either a
/// capacity drop's backlog still draining, or a flow that keeps the queue full.
pub const COMPETITION_QUEUE_TARGETS: f64 = 2.0;

/// The most of a frame's slack (its deadline beyond half the minimum RTT) the median frame
/// may take to serialize at the served rate for the admission to forecast at that rate (see
/// `Balancer::forecast_rate_bps`): beyond it only an empty queue gets a frame in time, and an
/// accurate forecast idles the link between the frames it refuses. Two thirds failed six of
/// issue 24's targets against four.
pub(super) const SERVED_RATE_MAX_FRAME_SHARE_OF_SLACK: f64 = 0.5;
