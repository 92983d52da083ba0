//! One direction of a bottleneck: buffer (drop-tail or RED), serializer, random loss, and
//! propagation delay, in that order, with exact integer time arithmetic.
//!
//! Everything about a packet is decided when it arrives: whether the buffer admits it, when
//! its serialization starts and ends (FIFO, work-conserving), whether the link corrupts it, and
//! when it reaches the far end. That is exact because the rate and delay schedules are known
//! in advance, and it keeps the per-packet cost at a couple of deque operations.

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::{Aqm, ConfigError, Jitter, LinkConfig, LossModel, QueueLimit};
use crate::jitter;
use crate::loss::LossProcess;
use crate::red::Red;
use crate::rng::Uniform;

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Random-stream label of a link's jitter draws (its own stream, so adding jitter leaves loss
/// and AQM decisions unchanged): this plus the link's stream number.
const JITTER_STREAM_BASE: u64 = 0x4A17_7E50;

/// The first slot boundary at or after `t`: whole multiples of `slot` since time zero.
fn next_slot_boundary(t: Duration, slot: Duration) -> Duration {
    let (t, slot) = (t.as_nanos(), slot.as_nanos());
    let boundary = t.div_ceil(slot) * slot;
    Duration::from_nanos(u64::try_from(boundary).unwrap_or(u64::MAX))
}

/// What happened to a packet handed to a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It will be delivered.
    Queued,
    /// The buffer was full (or the packet would overflow it).
    DroppedQueueFull,
    /// RED dropped it early.
    DroppedEarly,
    /// Larger than the path MTU.
    DroppedOversize,
    /// It was serialized (it used link capacity) but the link's random loss corrupted it.
    LostOnLink,
}

/// Counters of one link direction. Bytes are IP bytes (QUIC datagram + 28).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LinkStats {
    /// Packets offered to the buffer.
    pub offered_packets: u64,
    /// Packets the buffer refused because it was full.
    pub queue_drops: u64,
    /// Packets RED dropped early.
    pub early_drops: u64,
    /// Packets larger than the MTU.
    pub oversize_drops: u64,
    /// Packets serialized but corrupted by random loss.
    pub random_losses: u64,
    /// Packets delivered to the far end (so far).
    pub delivered_packets: u64,
    /// Bytes whose serialization has finished (delivered or corrupted): the link's busy time
    /// times its rate, the numerator of utilization.
    pub serialized_bytes: u64,
    /// Largest buffer occupancy seen at an arrival, bytes.
    pub max_queue_bytes: u64,
}

/// A value that changes at known times, queried at non-decreasing times.
#[derive(Debug, Clone)]
struct Timeline<T: Copy> {
    steps: Vec<(Duration, T)>,
    cursor: usize,
}

impl<T: Copy> Timeline<T> {
    fn new(initial: T, changes: impl Iterator<Item = (Duration, T)>) -> Self {
        let mut steps = vec![(Duration::ZERO, initial)];
        steps.extend(changes);
        Self { steps, cursor: 0 }
    }

    /// The value at `t`; `t` must not go backwards between calls.
    fn advance_to(&mut self, t: Duration) -> T {
        while self
            .steps
            .get(self.cursor + 1)
            .is_some_and(|&(at, _)| at <= t)
        {
            self.cursor += 1;
        }
        self.steps[self.cursor].1
    }

    /// The value at any `t` (binary search, for out-of-order queries).
    fn at(&self, t: Duration) -> T {
        let index = self.steps.partition_point(|&(at, _)| at <= t);
        self.steps[index.saturating_sub(1)].1
    }
}

#[derive(Debug)]
struct InBuffer {
    serialized_at: Duration,
    wire_bytes: u32,
}

#[derive(Debug)]
struct Propagating<P> {
    arrives_at: Duration,
    wire_bytes: u32,
    payload: P,
}

/// One direction of a bottleneck link, generic over what the packets carry.
#[derive(Debug)]
pub struct Link<P> {
    mtu_bytes: u32,
    limit_bytes: u64,
    limit_packets: Option<u64>,
    rate_bps: Timeline<u64>,
    delay: Timeline<Duration>,
    loss_models: Timeline<LossModel>,
    loss: LossProcess,
    red: Option<Red>,
    loss_rng: Uniform,
    aqm_rng: Uniform,
    jitter: Jitter,
    jitter_rng: Uniform,
    /// The draw in force and the end of its interval (with `Jitter::interval`).
    jitter_held: (Duration, Duration),
    slot: Option<Duration>,
    buffer: VecDeque<InBuffer>,
    buffer_bytes: u64,
    /// ∫ `buffer_bytes` dt from time zero to `occupancy_until`, byte·nanoseconds: the mean
    /// queue over any stretch, where a point sample aliases with periodic traffic.
    occupancy_byte_nanos: u128,
    occupancy_until: Duration,
    serializer_free_at: Duration,
    /// Remainder of `bits·1e9 / rate` not yet turned into whole nanoseconds, so that
    /// back-to-back packets accumulate no rounding error.
    carry: u128,
    carry_rate_bps: u64,
    /// In arrival order (a sorted insert when jitter may reorder).
    propagating: VecDeque<Propagating<P>>,
    last_arrival_at: Duration,
    stats: LinkStats,
}

/// Serialization time of `bytes` at `rate_bps`, rounded down to whole nanoseconds.
pub fn serialization_time(bytes: u64, rate_bps: u64) -> Duration {
    let nanos = u128::from(bytes) * 8 * NANOS_PER_SEC / u128::from(rate_bps.max(1));
    Duration::from_nanos(nanos as u64)
}

/// Bandwidth-delay product in bytes (rounded down), [`u64::MAX`] where it does not fit.
pub fn bdp_bytes(rate_bps: u64, rtt: Duration) -> u64 {
    u128::from(rate_bps)
        .checked_mul(rtt.as_nanos())
        .map_or(u64::MAX, |bits_nanos| {
            u64::try_from(bits_nanos / (8 * NANOS_PER_SEC)).unwrap_or(u64::MAX)
        })
}

impl<P> Link<P> {
    /// Builds a link; `base_rtt` resolves a BDP-multiple queue limit, `seed` and `stream`
    /// select its random streams, `field` names it in errors.
    pub fn new(
        config: &LinkConfig,
        mtu_bytes: u32,
        base_rtt: Duration,
        seed: u64,
        stream: u64,
        field: &str,
    ) -> Result<Self, ConfigError> {
        config.validate(field)?;
        let (limit_bytes, limit_packets) = match config.queue {
            QueueLimit::Packets(packets) => (u64::MAX, Some(packets)),
            queue => (
                queue
                    .limit_bytes(config.rate_bps, base_rtt)
                    .expect("byte limits"),
                None,
            ),
        };
        if limit_bytes < u64::from(mtu_bytes) {
            return Err(ConfigError::QueueTooSmall {
                field: format!("{field}.queue"),
                limit_bytes,
                mtu_bytes,
            });
        }
        let steps = &config.schedule;
        Ok(Self {
            mtu_bytes,
            limit_bytes,
            limit_packets,
            rate_bps: Timeline::new(
                config.rate_bps,
                steps.iter().filter_map(|s| Some((s.at, s.rate_bps?))),
            ),
            delay: Timeline::new(
                config.delay,
                steps.iter().filter_map(|s| Some((s.at, s.delay?))),
            ),
            loss_models: Timeline::new(
                config.loss,
                steps.iter().filter_map(|s| Some((s.at, s.loss?))),
            ),
            loss: LossProcess::new(config.loss),
            red: match config.aqm {
                Aqm::DropTail => None,
                Aqm::Red(red) => Some(Red::new(red)),
            },
            loss_rng: Uniform::new(seed, stream * 2),
            aqm_rng: Uniform::new(seed, stream * 2 + 1),
            jitter: config.jitter,
            jitter_rng: Uniform::new(seed, JITTER_STREAM_BASE + stream),
            jitter_held: (Duration::ZERO, Duration::ZERO),
            slot: config.slot,
            buffer: VecDeque::new(),
            buffer_bytes: 0,
            occupancy_byte_nanos: 0,
            occupancy_until: Duration::ZERO,
            serializer_free_at: Duration::ZERO,
            carry: 0,
            carry_rate_bps: config.rate_bps,
            propagating: VecDeque::new(),
            last_arrival_at: Duration::ZERO,
            stats: LinkStats::default(),
        })
    }

    /// Buffer limit in bytes after resolving BDP multiples (`u64::MAX` if limited by packets).
    pub fn queue_limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    /// Buffer limit in packets, if the limit is a packet count.
    pub fn queue_limit_packets(&self) -> Option<u64> {
        self.limit_packets
    }

    /// Rate in force at `t`.
    pub fn rate_bps_at(&self, t: Duration) -> u64 {
        self.rate_bps.at(t)
    }

    /// One-way propagation delay in force at `t`.
    pub fn delay_at(&self, t: Duration) -> Duration {
        self.delay.at(t)
    }

    /// Counters so far.
    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    /// Bytes in the buffer at `now` (waiting or being serialized).
    pub fn queue_bytes(&mut self, now: Duration) -> u64 {
        self.drain_serialized(now);
        self.buffer_bytes
    }

    /// Packets in the buffer at `now` (waiting or being serialized).
    pub fn queue_packets(&mut self, now: Duration) -> u64 {
        self.drain_serialized(now);
        self.buffer.len() as u64
    }

    /// The buffer's occupancy integrated from time zero to `now`, byte·nanoseconds (waiting
    /// or being serialized, as [`Link::queue_bytes`]). Two readings give the mean queue
    /// between them exactly: a point sample of a queue that periodic traffic fills and
    /// empties sees the same phase of the cycle every time (30 fps media and 100 ms ticks).
    pub fn queue_byte_nanos(&mut self, now: Duration) -> u128 {
        self.drain_serialized(now);
        self.occupancy_byte_nanos
    }

    /// Adds the occupancy up to `t` (nothing if the integral is already there).
    fn integrate_occupancy(&mut self, t: Duration) {
        if t > self.occupancy_until {
            self.occupancy_byte_nanos +=
                u128::from(self.buffer_bytes) * (t - self.occupancy_until).as_nanos();
            self.occupancy_until = t;
        }
    }

    fn drain_serialized(&mut self, now: Duration) {
        while let Some(front) = self.buffer.front() {
            if front.serialized_at > now {
                break;
            }
            let serialized_at = front.serialized_at;
            self.integrate_occupancy(serialized_at);
            let done = self.buffer.pop_front().expect("front exists");
            self.buffer_bytes -= u64::from(done.wire_bytes);
            self.stats.serialized_bytes += u64::from(done.wire_bytes);
            if self.buffer.is_empty()
                && let Some(red) = &mut self.red
            {
                red.on_idle(done.serialized_at);
            }
        }
        self.integrate_occupancy(now);
    }

    /// Offers a packet of `wire_bytes` (IP size) at `now`. Calls must come in time order.
    pub fn send(&mut self, now: Duration, wire_bytes: u32, payload: P) -> Verdict {
        self.stats.offered_packets += 1;
        if wire_bytes > self.mtu_bytes {
            self.stats.oversize_drops += 1;
            return Verdict::DroppedOversize;
        }
        self.drain_serialized(now);
        let queued_packets = self.buffer.len() as u64;
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.buffer_bytes);
        if let Some(red) = &mut self.red {
            let packet_time = serialization_time(self.mtu_bytes.into(), self.rate_bps.at(now));
            if red.should_drop(now, queued_packets, packet_time, &mut self.aqm_rng) {
                self.stats.early_drops += 1;
                return Verdict::DroppedEarly;
            }
        }
        let over_bytes = self.buffer_bytes + u64::from(wire_bytes) > self.limit_bytes;
        let over_packets = self.limit_packets.is_some_and(|l| queued_packets + 1 > l);
        if over_bytes || over_packets {
            self.stats.queue_drops += 1;
            return Verdict::DroppedQueueFull;
        }

        if let Some(red) = &mut self.red {
            red.on_enqueue();
        }
        // FIFO, work-conserving serializer: start when both the packet and the link are there.
        let start = if now >= self.serializer_free_at {
            self.carry = 0;
            now
        } else {
            self.serializer_free_at
        };
        let rate_bps = self.rate_bps.advance_to(start);
        if rate_bps != self.carry_rate_bps {
            self.carry = 0;
            self.carry_rate_bps = rate_bps;
        }
        // serialization time = size·8 / rate, with the sub-nanosecond remainder carried
        let numerator = u128::from(wire_bytes) * 8 * NANOS_PER_SEC + self.carry;
        let nanos = numerator / u128::from(rate_bps);
        self.carry = numerator % u128::from(rate_bps);
        let serialized_at = start + Duration::from_nanos(nanos as u64);
        self.serializer_free_at = serialized_at;
        self.buffer.push_back(InBuffer {
            serialized_at,
            wire_bytes,
        });
        self.buffer_bytes += u64::from(wire_bytes);

        let model = self.loss_models.advance_to(now);
        if model != self.loss.model() {
            self.loss.set_model(model);
        }
        if self.loss.next_is_lost(&mut self.loss_rng) {
            self.stats.random_losses += 1;
            return Verdict::LostOnLink;
        }
        // Slotted delivery: the packet leaves at the end of the slot its serialization ended in.
        let departs_at = self.slot.map_or(serialized_at, |slot| {
            next_slot_boundary(serialized_at, slot)
        });
        let delay = self.delay.advance_to(serialized_at) + self.jitter_at(departs_at);
        let propagating = Propagating {
            arrives_at: departs_at + delay,
            wire_bytes,
            payload,
        };
        if self.jitter.reorder {
            // Each packet keeps its own delay: insert in arrival order (after equal times).
            let at = self
                .propagating
                .partition_point(|p| p.arrives_at <= propagating.arrives_at);
            self.propagating.insert(at, propagating);
        } else {
            // FIFO: neither a jitter draw nor a shorter delay after a schedule step lets a
            // packet overtake the one before it.
            let arrives_at = propagating.arrives_at.max(self.last_arrival_at);
            self.last_arrival_at = arrives_at;
            self.propagating.push_back(Propagating {
                arrives_at,
                ..propagating
            });
        }
        Verdict::Queued
    }

    /// The extra delay of a packet leaving at `departs_at`: a fresh draw, or the one held for
    /// the current interval.
    fn jitter_at(&mut self, departs_at: Duration) -> Duration {
        let Some(interval) = self.jitter.interval else {
            return jitter::draw(self.jitter.distribution, &mut self.jitter_rng);
        };
        let (held, until) = self.jitter_held;
        if departs_at < until {
            return held;
        }
        let draw = jitter::draw(self.jitter.distribution, &mut self.jitter_rng);
        let end = next_slot_boundary(departs_at + Duration::from_nanos(1), interval);
        self.jitter_held = (draw, end);
        draw
    }

    /// When the next packet reaches the far end.
    pub fn next_arrival(&self) -> Option<Duration> {
        self.propagating.front().map(|p| p.arrives_at)
    }

    /// The next packet that has reached the far end by `now`, with its arrival time and size.
    pub fn poll_arrival(&mut self, now: Duration) -> Option<(Duration, u32, P)> {
        if self.propagating.front()?.arrives_at > now {
            return None;
        }
        let p = self.propagating.pop_front()?;
        self.stats.delivered_packets += 1;
        Some((p.arrives_at, p.wire_bytes, p.payload))
    }
}
