//! sched — how a real-time media application and a bulk transfer share one QUIC connection.
//!
//! Layer: pure algorithms over bytes and [`Duration`]s (no QUIC types, no clock, no I/O), so
//! each scheduler can be unit-tested against the rules it implements and driven alike by the
//! virtual-time simulator (`sim`) and the real-time endpoints (`emu`).
//!
//! A [`Scheduler`] sits on the sending end of one connection. The applications tell it what
//! they write ([`Scheduler::on_written`], [`Scheduler::on_frame`]) and what the peer
//! acknowledged ([`Scheduler::on_acked`]); the connection's sender state arrives in a
//! [`TransportView`] at every step ([`Scheduler::observe`]). In return it decides:
//!
//! - the stream [priority](Scheduler::priority) of each [`Class`] (quinn: higher first);
//! - how many bulk bytes may be written now ([`Scheduler::bulk_allowance`]);
//! - how much unacknowledged data the transport may buffer while each class writes
//!   ([`Scheduler::send_window`]; quinn's `send_window` is shared by all streams, so without
//!   this bulk data queued in the transport delays every media frame behind it);
//! - which frames are worth starting ([`Scheduler::admit_frame`]) and which are past saving
//!   ([`Scheduler::frame_expiry`]), and the priority a frame past its deadline drops to
//!   ([`Scheduler::late_frame_priority`]);
//! - a target media bitrate for sources that adapt ([`Scheduler::media_target_bps`]).
//!
//! Schedulers ([`SchedulerSpec`]): `none` (quinn's round robin among equal priorities),
//! `priority` (strict priority for media), `seed-balancer` (the StreamBalancer of
//! \[Ruehl2024\], reproduced), `balancer` (ours).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

pub mod balancer;
pub mod seed;

/// What a stream carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Real-time frames: late is as bad as lost.
    Media,
    /// Data that is only ever in a hurry as a whole.
    Bulk,
}

/// The sending end's transport state at one instant, as quinn exposes it (plus bytes in
/// flight, which a wrapper around the congestion controller reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransportView {
    /// Time since the start of the run (or of the process, in real time).
    pub now: Duration,
    /// The congestion controller's window, bytes.
    pub cwnd_bytes: u64,
    /// Bytes sent and neither acknowledged nor declared lost.
    pub in_flight_bytes: u64,
    /// Bytes the peer acknowledged since the connection started (packets as the congestion
    /// controller counts them): what the path delivered, read as a rate over an interval. In
    /// flight ÷ RTT is what was sent, which after a capacity drop overstates the path until
    /// the RTT shows the new queue, and the RTT is then seconds stale.
    pub acked_bytes: u64,
    /// Smoothed RTT (zero before the first sample).
    pub srtt: Duration,
    /// Smallest RTT seen (zero before the first sample).
    pub min_rtt: Duration,
    /// Smallest RTT sample of the packets acknowledged since the previous view, if any: shows
    /// a queue that empties for a moment, which the smoothed RTT smooths away.
    pub rtt_sample_min: Option<Duration>,
    /// Largest UDP payload the path carries now, bytes.
    pub mtu_bytes: u64,
}

/// Send-buffer limits (quinn's connection-wide `send_window`: bytes written and not yet
/// acknowledged) to apply while each class writes. Media writes first, with the larger limit,
/// so bulk can never take the room media needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendWindows {
    /// Limit while media writes.
    pub media_bytes: u64,
    /// Limit while bulk writes.
    pub bulk_bytes: u64,
}

/// One scheduler instance per connection and run.
///
/// Every method takes or follows a `now` that never goes backwards. Calling order per step of
/// the sending end: [`observe`](Scheduler::observe), then the applications write (media
/// first), reporting [`on_frame`](Scheduler::on_frame) and
/// [`on_written`](Scheduler::on_written) as they go.
pub trait Scheduler: Send + std::fmt::Debug {
    /// The name as in scenario files.
    fn name(&self) -> &'static str;

    /// The transport state now; periodic updates that fell due since the last call run here.
    fn observe(&mut self, view: &TransportView);

    /// Stream priority of a class (higher first, as quinn's `set_priority`).
    fn priority(&self, class: Class) -> i32;

    /// A media frame of `bytes` was captured at `now` (the demand the media will write).
    fn on_frame(&mut self, _now: Duration, _bytes: u64) {}

    /// The application handed `bytes` of `class` to the transport at `now`.
    fn on_written(&mut self, _now: Duration, _class: Class, _bytes: u64) {}

    /// The peer acknowledged `bytes` of `class` (known when a stream's data is all
    /// acknowledged: for media, per frame).
    fn on_acked(&mut self, _now: Duration, _class: Class, _bytes: u64) {}

    /// Bulk bytes that may be written at `now` (`u64::MAX`: no limit).
    fn bulk_allowance(&mut self, _now: Duration) -> u64 {
        u64::MAX
    }

    /// Send-buffer limits, or `None` to leave the transport's configured window alone.
    fn send_window(&self) -> Option<SendWindows> {
        None
    }

    /// The priority a frame's stream drops to once the frame is past its deadline (a frame
    /// opened that late starts there), or `None` to keep it. A late frame is still delivered
    /// (the decoder may want it), but what the transport still has to send of it, mostly
    /// retransmissions of its lost packets, should not delay frames that can still be on
    /// time: quinn queues a retransmission behind the streams of its priority already waiting
    /// and ahead of every frame written after it. The new priority applies from the next time
    /// quinn queues the stream; data already queued keeps its place.
    fn late_frame_priority(&self) -> Option<i32> {
        None
    }

    /// A frame not yet acknowledged whose age (since capture) exceeds the media deadline minus
    /// this margin is cancelled (its stream reset: what was not sent never will be), as RTP
    /// over QUIC and MoQ do with frames past their deadline; `None` sends every frame however
    /// late.
    fn frame_expiry(&self) -> Option<Duration> {
        None
    }

    /// Whether a frame captured `age` ago, of `bytes`, due `deadline` after capture, should
    /// start to be sent at all: a frame that cannot arrive in time only delays the next ones
    /// (and its bytes are wasted when it is cancelled half-sent). Asked once per frame, before
    /// its stream is opened; a frame refused is dropped at the source.
    fn admit_frame(&mut self, _age: Duration, _bytes: u64, _deadline: Duration) -> bool {
        true
    }

    /// Whether a frame is admitted (and its stream opened) only once every frame before it is
    /// completely written, rather than as soon as it is captured: the admission then sees the
    /// queue the frame will actually join, not the one at its capture.
    fn frames_just_in_time(&self) -> bool {
        false
    }

    /// The bitrate an adaptive media source should aim for now, bit/s; `None` when this
    /// scheduler gives no such signal.
    fn media_target_bps(&self) -> Option<u64> {
        None
    }

    /// The largest frame an adaptive media source should encode now, bytes, for frames due
    /// `deadline` after capture; `None` when this scheduler sets no limit. A keyframe is
    /// several frames' worth at once: in overload, at a rate that fits the path, it can still
    /// take longer to serialize than the deadline leaves, and a frame that cannot arrive is
    /// refused or late, with every frame that depends on it. A real-time encoder's rate
    /// control caps its keyframes from its delay budget for the same reason.
    fn media_frame_limit_bytes(&self, _deadline: Duration) -> Option<u64> {
        None
    }

    /// When this scheduler next wants [`observe`](Scheduler::observe) called without any
    /// network event (a periodic update).
    fn wakeup(&self) -> Option<Duration> {
        None
    }
}

/// quinn as it is: every stream at the same priority, round robin among them.
#[derive(Debug, Default, Clone)]
pub struct RoundRobin;

impl Scheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "none"
    }
    fn observe(&mut self, _view: &TransportView) {}
    fn priority(&self, _class: Class) -> i32 {
        0
    }
}

/// quinn's strict priorities: media before bulk, nothing else.
#[derive(Debug, Default, Clone)]
pub struct StrictPriority;

impl Scheduler for StrictPriority {
    fn name(&self) -> &'static str {
        "priority"
    }
    fn observe(&mut self, _view: &TransportView) {}
    fn priority(&self, class: Class) -> i32 {
        match class {
            Class::Media => 1,
            Class::Bulk => 0,
        }
    }
}

/// A scheduler by name and parameters: what a scenario's `scheduler = "..."` chooses. Lives in
/// a flow's config (shared by every run); [`SchedulerSpec::build`] makes one instance per
/// connection end and run.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum SchedulerSpec {
    /// `none`: quinn's round robin.
    #[default]
    RoundRobin,
    /// `priority`: strict priority for media.
    Priority,
    /// `seed-balancer`: the StreamBalancer of \[Ruehl2024\], as published.
    SeedBalancer(Box<seed::SeedBalancerConfig>),
    /// `balancer`: ours.
    Balancer(balancer::BalancerConfig),
}

/// The scheduler names a scenario may give, in the order the reports list them.
pub const SCHEDULERS: [&str; 4] = ["none", "priority", "seed-balancer", "balancer"];

/// A scheduler name that is not one of [`SCHEDULERS`]. Its message lists them, so every place
/// that reads a name (scenario files, session requests, `--scheduler`) words it alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownScheduler {
    /// The name as given.
    pub name: String,
}

// Written out rather than derived with thiserror: this crate depends on nothing.
impl fmt::Display for UnknownScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown scheduler {:?}; available: {}",
            self.name,
            SCHEDULERS.join(", ")
        )
    }
}

impl std::error::Error for UnknownScheduler {}

/// A scheduler name (see [`SCHEDULERS`]) as its spec with default parameters.
impl FromStr for SchedulerSpec {
    type Err = UnknownScheduler;

    fn from_str(name: &str) -> Result<SchedulerSpec, UnknownScheduler> {
        Ok(match name {
            "none" => SchedulerSpec::RoundRobin,
            "priority" => SchedulerSpec::Priority,
            "seed-balancer" => SchedulerSpec::SeedBalancer(Box::default()),
            "balancer" => SchedulerSpec::Balancer(balancer::BalancerConfig::default()),
            _ => {
                return Err(UnknownScheduler {
                    name: name.to_owned(),
                });
            }
        })
    }
}

impl SchedulerSpec {
    /// The name as in scenario files.
    pub fn name(&self) -> &'static str {
        match self {
            SchedulerSpec::RoundRobin => "none",
            SchedulerSpec::Priority => "priority",
            SchedulerSpec::SeedBalancer(_) => "seed-balancer",
            SchedulerSpec::Balancer(_) => "balancer",
        }
    }

    /// Whether the transport should send streams of one priority in the order they were
    /// written (quinn's `send_fairness` off) rather than round robin. Ours: each frame is a
    /// stream, and in a round robin the next frames take turns with a keyframe the congestion
    /// window holds back, so it arrives after them and late (media-bulk-geo with Hybla, whose
    /// window sits at the pipe: late frames at capacity ≥ 1.5× the media 1.1 % → 0.8 % over
    /// five seeds). The others keep quinn's default, as published or as quinn is.
    pub fn streams_in_write_order(&self) -> bool {
        matches!(self, SchedulerSpec::Balancer(_))
    }

    /// A fresh instance for one connection end and run.
    pub fn build(&self) -> Box<dyn Scheduler> {
        match self {
            SchedulerSpec::RoundRobin => Box::new(RoundRobin),
            SchedulerSpec::Priority => Box::new(StrictPriority),
            SchedulerSpec::SeedBalancer(config) => {
                Box::new(seed::SeedBalancer::new(config.as_ref().clone()))
            }
            SchedulerSpec::Balancer(config) => Box::new(balancer::Balancer::new(config.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scheduler_name_reads_back_as_itself() {
        for name in SCHEDULERS {
            let spec: SchedulerSpec = name.parse().unwrap();
            assert_eq!(spec.name(), name);
        }
    }

    #[test]
    fn only_ours_asks_for_streams_in_write_order() {
        let in_order: Vec<bool> = SCHEDULERS
            .iter()
            .map(|name| {
                name.parse::<SchedulerSpec>()
                    .unwrap()
                    .streams_in_write_order()
            })
            .collect();
        assert_eq!(in_order, [false, false, false, true]);
    }

    #[test]
    fn an_unknown_scheduler_name_lists_the_known_ones() {
        let error = "fastest".parse::<SchedulerSpec>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown scheduler \"fastest\"; available: none, priority, seed-balancer, balancer"
        );
    }
}
