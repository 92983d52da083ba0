//! The dumbbell: N flows share one bottleneck (a forward and a return [`Link`]); each flow has
//! a private access segment of constant delay on the server side.
//!
//! Forward packets (server → client) cross the access segment, then the bottleneck; return
//! packets (client → server) cross the bottleneck, then the access segment. Access segments
//! have no rate limit and no loss, so they only shift a flow's RTT.

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, PathConfig};
use crate::link::{Link, LinkStats, Verdict};

/// Which way a packet travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Server → client (downloads flow this way).
    Forward,
    /// Client → server (uploads and the ACKs of downloads).
    Return,
}

/// A packet that reached its destination endpoint.
#[derive(Debug)]
pub struct Delivery<P> {
    /// Which way it travelled (Forward: it arrives at the client).
    pub direction: Direction,
    /// Index of the flow it belongs to.
    pub flow: usize,
    /// IP size, bytes.
    pub wire_bytes: u32,
    /// Arrival time.
    pub at: Duration,
    /// What the sender handed in.
    pub payload: P,
}

/// Per-flow counters at the bottleneck, one set per direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FlowLinkStats {
    /// Packets dropped by the buffer (full, RED, or oversize): the sum of the next three.
    pub dropped_packets: u64,
    /// Packets refused because the buffer was full.
    #[serde(default)]
    pub queue_drops: u64,
    /// Packets RED dropped early.
    #[serde(default)]
    pub early_drops: u64,
    /// Packets larger than the path MTU.
    #[serde(default)]
    pub oversize_drops: u64,
    /// Packets corrupted by random loss.
    pub random_losses: u64,
    /// Packets delivered.
    pub delivered_packets: u64,
    /// IP bytes delivered.
    pub delivered_bytes: u64,
}

/// Why a packet never reached its endpoint: the ground truth a congestion controller's loss
/// classification is measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropCause {
    /// The buffer was full (congestion).
    QueueFull,
    /// RED dropped it early (congestion signalled by the AQM).
    Aqm,
    /// Larger than the path MTU.
    Oversize,
    /// Corrupted on the link after it left the buffer (random loss, not congestion).
    LinkLoss,
}

impl DropCause {
    /// Whether the drop is the bottleneck's answer to too much traffic.
    pub fn is_congestion(self) -> bool {
        matches!(self, DropCause::QueueFull | DropCause::Aqm)
    }
}

/// One packet lost on the path, recorded when [`Path::record_drops`] is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DropRecord {
    /// Which way it travelled.
    pub direction: Direction,
    /// Its flow.
    pub flow: usize,
    /// When its sender handed it to the path ([`Path::send`]'s `now`).
    pub sent_at: Duration,
    /// Why it was lost.
    pub cause: DropCause,
}

type Tagged<P> = (usize, P);

#[derive(Debug)]
struct InAccess<P> {
    at: Duration,
    wire_bytes: u32,
    payload: P,
}

/// The simulated path, generic over packet payloads.
#[derive(Debug)]
pub struct Path<P> {
    forward: Link<Tagged<P>>,
    return_link: Link<Tagged<P>>,
    access_delays: Vec<Duration>,
    /// Forward packets on their way from a server to the bottleneck, per flow.
    to_bottleneck: Vec<VecDeque<InAccess<P>>>,
    /// Return packets on their way from the bottleneck to a server, per flow.
    to_server: Vec<VecDeque<InAccess<P>>>,
    flow_stats: Vec<[FlowLinkStats; 2]>,
    /// Every lost packet since the last [`Path::take_drops`], when recording.
    drops: Option<Vec<DropRecord>>,
}

/// Where the earliest pending event sits.
enum Source {
    Forward,
    Return,
    ToBottleneck(usize),
    ToServer(usize),
}

/// Where the last [`Path::mean_queue_bytes`] reading was: a sampler's state, so that every
/// sample reports the mean queue over its own interval (a point sample aliases with periodic
/// traffic: 30 fps media at 100 ms ticks is always caught in one phase).
#[derive(Debug, Clone, Copy, Default)]
pub struct MeanQueueMeter {
    read_at: Duration,
    /// Occupancy integrals (forward, return) at `read_at`, byte·nanoseconds.
    integrals: [u128; 2],
}

impl<P> Path<P> {
    /// Builds the dumbbell; random streams derive from `seed`.
    pub fn new(config: &PathConfig, seed: u64) -> Result<Self, ConfigError> {
        let base_rtt = config.base_rtt();
        let forward = Link::new(
            &config.forward,
            config.mtu_bytes,
            base_rtt,
            seed,
            1,
            "path.forward",
        )?;
        let return_link = Link::new(
            &config.return_link,
            config.mtu_bytes,
            base_rtt,
            seed,
            2,
            "path.return",
        )?;
        let flows = config.access_delays.len();
        Ok(Self {
            forward,
            return_link,
            access_delays: config.access_delays.clone(),
            to_bottleneck: (0..flows).map(|_| VecDeque::new()).collect(),
            to_server: (0..flows).map(|_| VecDeque::new()).collect(),
            flow_stats: vec![[FlowLinkStats::default(); 2]; flows],
            drops: None,
        })
    }

    /// Starts (or stops) recording every lost packet with its cause, for [`Path::take_drops`].
    /// Off by default: a long-running emulator would otherwise grow the log without bound.
    pub fn record_drops(&mut self, on: bool) {
        self.drops = on.then(|| self.drops.take().unwrap_or_default());
    }

    /// The packets lost since the last call, in the order they were lost.
    pub fn take_drops(&mut self) -> Vec<DropRecord> {
        self.drops.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The packets lost since the last [`Path::take_drops`], in the order they were lost, left
    /// in the log: a caller that follows the drops as they happen reads the ones past its
    /// last reading.
    pub fn recorded_drops(&self) -> &[DropRecord] {
        self.drops.as_deref().unwrap_or_default()
    }

    /// Adds a flow with its own access delay (the real-time relay learns its flows as
    /// clients appear); returns its index.
    pub fn add_flow(&mut self, access_delay: Duration) -> usize {
        self.access_delays.push(access_delay);
        self.to_bottleneck.push(VecDeque::new());
        self.to_server.push(VecDeque::new());
        self.flow_stats.push([FlowLinkStats::default(); 2]);
        self.access_delays.len() - 1
    }

    /// Flows on the path.
    pub fn flows(&self) -> usize {
        self.access_delays.len()
    }

    /// The bottleneck link in one direction.
    pub fn link(&self, direction: Direction) -> &Link<Tagged<P>> {
        match direction {
            Direction::Forward => &self.forward,
            Direction::Return => &self.return_link,
        }
    }

    fn link_mut(&mut self, direction: Direction) -> &mut Link<Tagged<P>> {
        match direction {
            Direction::Forward => &mut self.forward,
            Direction::Return => &mut self.return_link,
        }
    }

    /// Counters of the bottleneck in one direction.
    pub fn link_stats(&self, direction: Direction) -> LinkStats {
        self.link(direction).stats()
    }

    /// Counters of one flow at the bottleneck.
    pub fn flow_stats(&self, flow: usize, direction: Direction) -> FlowLinkStats {
        self.flow_stats[flow][direction as usize]
    }

    /// Bytes in the bottleneck buffer at `now`.
    pub fn queue_bytes(&mut self, direction: Direction, now: Duration) -> u64 {
        self.link_mut(direction).queue_bytes(now)
    }

    /// One direction's buffer occupancy integrated from time zero to `now`, byte·nanoseconds
    /// (see [`Link::queue_byte_nanos`]).
    pub fn queue_byte_nanos(&mut self, direction: Direction, now: Duration) -> u128 {
        self.link_mut(direction).queue_byte_nanos(now)
    }

    /// Mean (forward, return) buffer occupancy, bytes, from `meter`'s previous reading up to
    /// `now`; the buffers at `now` if no time has passed since it.
    pub fn mean_queue_bytes(&mut self, meter: &mut MeanQueueMeter, now: Duration) -> (u64, u64) {
        let occupancy = [
            self.queue_byte_nanos(Direction::Forward, now),
            self.queue_byte_nanos(Direction::Return, now),
        ];
        let span_nanos = now.saturating_sub(meter.read_at).as_nanos();
        let mut mean = [0u64; 2];
        for (d, direction) in [Direction::Forward, Direction::Return]
            .into_iter()
            .enumerate()
        {
            mean[d] = (occupancy[d] - meter.integrals[d])
                .checked_div(span_nanos)
                .map_or_else(|| self.queue_bytes(direction, now), |bytes| bytes as u64);
        }
        *meter = MeanQueueMeter {
            read_at: now,
            integrals: occupancy,
        };
        (mean[0], mean[1])
    }

    /// Sends a packet of `wire_bytes` (IP size) from `flow`'s server (Forward) or client
    /// (Return) at `now`. Calls must come in time order.
    pub fn send(
        &mut self,
        now: Duration,
        direction: Direction,
        flow: usize,
        wire_bytes: u32,
        payload: P,
    ) {
        match direction {
            Direction::Forward if !self.access_delays[flow].is_zero() => {
                self.to_bottleneck[flow].push_back(InAccess {
                    at: now + self.access_delays[flow],
                    wire_bytes,
                    payload,
                });
            }
            _ => self.enter_bottleneck(now, now, direction, flow, wire_bytes, payload),
        }
    }

    fn enter_bottleneck(
        &mut self,
        now: Duration,
        sent_at: Duration,
        direction: Direction,
        flow: usize,
        wire_bytes: u32,
        payload: P,
    ) {
        let verdict = self
            .link_mut(direction)
            .send(now, wire_bytes, (flow, payload));
        let stats = &mut self.flow_stats[flow][direction as usize];
        let cause = match verdict {
            Verdict::Queued => return,
            Verdict::LostOnLink => {
                stats.random_losses += 1;
                DropCause::LinkLoss
            }
            Verdict::DroppedQueueFull => {
                stats.queue_drops += 1;
                DropCause::QueueFull
            }
            Verdict::DroppedEarly => {
                stats.early_drops += 1;
                DropCause::Aqm
            }
            Verdict::DroppedOversize => {
                stats.oversize_drops += 1;
                DropCause::Oversize
            }
        };
        if cause != DropCause::LinkLoss {
            stats.dropped_packets += 1;
        }
        if let Some(drops) = &mut self.drops {
            drops.push(DropRecord {
                direction,
                flow,
                sent_at,
                cause,
            });
        }
    }

    fn earliest(&self) -> Option<(Duration, Source)> {
        let mut best: Option<(Duration, Source)> = None;
        let mut consider = |at: Option<Duration>, source: Source| {
            if let Some(at) = at
                && best.as_ref().is_none_or(|(b, _)| at < *b)
            {
                best = Some((at, source));
            }
        };
        // Access segments first: at equal times, a packet reaching the bottleneck is admitted
        // before the bottleneck's own deliveries at that instant are handed out.
        for (flow, line) in self.to_bottleneck.iter().enumerate() {
            consider(line.front().map(|p| p.at), Source::ToBottleneck(flow));
        }
        consider(self.forward.next_arrival(), Source::Forward);
        consider(self.return_link.next_arrival(), Source::Return);
        for (flow, line) in self.to_server.iter().enumerate() {
            consider(line.front().map(|p| p.at), Source::ToServer(flow));
        }
        best
    }

    /// Time of the next thing that happens on the path, if anything is in flight.
    pub fn next_event(&self) -> Option<Duration> {
        self.earliest().map(|(at, _)| at)
    }

    /// The next packet that reached an endpoint by `now`, in arrival order.
    pub fn poll(&mut self, now: Duration) -> Option<Delivery<P>> {
        loop {
            let (at, source) = self.earliest()?;
            if at > now {
                return None;
            }
            match source {
                Source::ToBottleneck(flow) => {
                    let p = self.to_bottleneck[flow].pop_front().expect("front exists");
                    let sent_at = p.at - self.access_delays[flow];
                    self.enter_bottleneck(
                        p.at,
                        sent_at,
                        Direction::Forward,
                        flow,
                        p.wire_bytes,
                        p.payload,
                    );
                }
                Source::Forward => {
                    let (at, wire_bytes, (flow, payload)) =
                        self.forward.poll_arrival(now).expect("arrival due");
                    return Some(self.delivered(Direction::Forward, flow, at, wire_bytes, payload));
                }
                Source::Return => {
                    let (at, wire_bytes, (flow, payload)) =
                        self.return_link.poll_arrival(now).expect("arrival due");
                    let access = self.access_delays[flow];
                    if access.is_zero() {
                        return Some(self.delivered(
                            Direction::Return,
                            flow,
                            at,
                            wire_bytes,
                            payload,
                        ));
                    }
                    self.to_server[flow].push_back(InAccess {
                        at: at + access,
                        wire_bytes,
                        payload,
                    });
                }
                Source::ToServer(flow) => {
                    let p = self.to_server[flow].pop_front().expect("front exists");
                    return Some(self.delivered(
                        Direction::Return,
                        flow,
                        p.at,
                        p.wire_bytes,
                        p.payload,
                    ));
                }
            }
        }
    }

    fn delivered(
        &mut self,
        direction: Direction,
        flow: usize,
        at: Duration,
        wire_bytes: u32,
        payload: P,
    ) -> Delivery<P> {
        let stats = &mut self.flow_stats[flow][direction as usize];
        stats.delivered_packets += 1;
        stats.delivered_bytes += u64::from(wire_bytes);
        Delivery {
            direction,
            flow,
            wire_bytes,
            at,
            payload,
        }
    }
}
