//! The real-time loop around a [`netsim::Path`]: receiver threads hand packets in, stamped with
//! the wall-clock time they arrived; the pump admits them in time order and hands each one out
//! when the model says it arrives. One loop for the UDP relay and the IP-level (TUN) mode, so
//! both impose exactly the simulator's path.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use netsim::{Delivery, Direction, FlowLinkStats, LinkStats, Path};

/// How often the pump looks at the stop flag when nothing is due.
const IDLE_POLL: Duration = Duration::from_millis(50);
/// How often [`PumpStats`] are published while running.
const PUBLISH_EVERY: Duration = Duration::from_millis(100);
/// Packets admitted in one batch before due deliveries are sent again.
const ADMIT_BATCH: usize = 256;

/// Period of [`PumpStats::queue_samples`].
pub const QUEUE_SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

/// A packet a receiver read, for the path.
#[derive(Debug)]
pub struct Arrival {
    /// Flow index on the path (flows are added as they first appear).
    pub flow: usize,
    /// Which way it travels.
    pub direction: Direction,
    /// When it was read, since the pump's start.
    pub at: Duration,
    /// IP size, bytes (what the bottleneck serializes).
    pub wire_bytes: u32,
    /// The bytes to hand out on delivery.
    pub payload: Vec<u8>,
}

/// What the pump has measured so far.
#[derive(Debug, Clone)]
pub struct PumpStats {
    /// Forward bottleneck counters.
    pub forward: LinkStats,
    /// Return bottleneck counters.
    pub return_link: LinkStats,
    /// Lateness of each delivery against the model's arrival time, microseconds.
    pub lateness_us: Histogram<u64>,
    /// Per flow: \[forward, return\] bottleneck counters.
    pub flows: Vec<[FlowLinkStats; 2]>,
    /// Bottleneck occupancy every [`QUEUE_SAMPLE_INTERVAL`]: (time, forward bytes, return
    /// bytes).
    pub queue_samples: Vec<(Duration, u64, u64)>,
    /// Mean bottleneck occupancy over the interval that ends at each of `queue_samples`
    /// (its integral over the time the pump has modelled since the previous sample): (time,
    /// forward bytes, return bytes). A point sample aliases with periodic traffic.
    pub queue_mean_samples: Vec<(Duration, u64, u64)>,
    /// Bytes the forward bottleneck had serialized, every [`QUEUE_SAMPLE_INTERVAL`]: (time,
    /// bytes). Utilization over any stretch of the run, as the simulator's link samples.
    pub forward_serialized: Vec<(Duration, u64)>,
    /// IP bytes the path had delivered to each flow's ends, every [`QUEUE_SAMPLE_INTERVAL`]:
    /// (time, flow, \[forward, return\]) for every flow seen so far. What each receiver got
    /// over time, in any order (the delivery-rate plot); flat, so publishing copies it cheaply.
    pub flow_delivered: Vec<(Duration, usize, [u64; 2])>,
}

impl Default for PumpStats {
    fn default() -> Self {
        Self {
            forward: LinkStats::default(),
            return_link: LinkStats::default(),
            lateness_us: Histogram::new(3).expect("3 significant digits is valid"),
            flows: Vec::new(),
            queue_samples: Vec::new(),
            queue_mean_samples: Vec::new(),
            forward_serialized: Vec::new(),
            flow_delivered: Vec::new(),
        }
    }
}

/// The hooks a pump's owner provides.
pub trait PumpIo {
    /// Access delay of flow `flow`, asked once when the flow first appears.
    fn access_delay(&mut self, flow: usize) -> Duration;
    /// An arrival left the hand-off (before admission), e.g. to release its budget.
    fn dequeued(&mut self, _arrival: &Arrival) {}
    /// A packet is due at its destination: send it on.
    fn deliver(&mut self, delivery: Delivery<Vec<u8>>);
    /// Fresh counters, about every 100 ms and once at the end.
    fn publish(&mut self, stats: &PumpStats);
}

/// Runs `path` on the wall clock (time 0 at `start`) until `stop` is set or every sender of
/// `arrivals` is gone.
pub fn run(
    mut path: Path<Vec<u8>>,
    arrivals: Receiver<Arrival>,
    stop: &AtomicBool,
    start: Instant,
    io: &mut dyn PumpIo,
) {
    let mut stats = PumpStats::default();
    let mut last_published = Instant::now();
    let mut next_queue_sample = QUEUE_SAMPLE_INTERVAL;
    // The latest time fed to the path: admissions and queue readings never go back before
    // it, so the path sees its inputs in time order.
    let mut latest = Duration::ZERO;
    // Where the last queue sample read the buffers' mean occupancy.
    let mut queue_meter = netsim::MeanQueueMeter::default();
    let deliver_due =
        |path: &mut Path<Vec<u8>>, at: Duration, stats: &mut PumpStats, io: &mut dyn PumpIo| {
            let now = start.elapsed();
            while let Some(delivery) = path.poll(at) {
                let _ = stats
                    .lateness_us
                    .record(now.saturating_sub(delivery.at).as_micros() as u64);
                io.deliver(delivery);
            }
        };
    let admit = |arrival: Arrival,
                 latest: &mut Duration,
                 path: &mut Path<Vec<u8>>,
                 stats: &mut PumpStats,
                 io: &mut dyn PumpIo| {
        io.dequeued(&arrival);
        let at = arrival.at.max(*latest);
        *latest = at;
        deliver_due(path, at, stats, io);
        while path.flows() <= arrival.flow {
            let delay = io.access_delay(path.flows());
            path.add_flow(delay);
        }
        path.send(
            at,
            arrival.direction,
            arrival.flow,
            arrival.wire_bytes,
            arrival.payload,
        );
    };
    let publish = |path: &Path<Vec<u8>>, stats: &mut PumpStats, io: &mut dyn PumpIo| {
        stats.forward = path.link_stats(Direction::Forward);
        stats.return_link = path.link_stats(Direction::Return);
        stats.flows = (0..path.flows())
            .map(|f| {
                [
                    path.flow_stats(f, Direction::Forward),
                    path.flow_stats(f, Direction::Return),
                ]
            })
            .collect();
        io.publish(stats);
    };
    while !stop.load(Ordering::Relaxed) {
        let now = start.elapsed().max(latest);
        deliver_due(&mut path, now, &mut stats, io);
        latest = now;
        while next_queue_sample <= latest {
            let forward = path.queue_bytes(Direction::Forward, latest);
            let back = path.queue_bytes(Direction::Return, latest);
            stats.queue_samples.push((next_queue_sample, forward, back));
            // Nothing modelled since the last sample (the pump fell behind): the buffers now.
            let (forward_mean, back_mean) = path.mean_queue_bytes(&mut queue_meter, latest);
            stats
                .queue_mean_samples
                .push((next_queue_sample, forward_mean, back_mean));
            // Read after queue_bytes, which counts what finished serializing by `latest`.
            let serialized = path.link_stats(Direction::Forward).serialized_bytes;
            stats
                .forward_serialized
                .push((next_queue_sample, serialized));
            for f in 0..path.flows() {
                stats.flow_delivered.push((
                    next_queue_sample,
                    f,
                    [
                        path.flow_stats(f, Direction::Forward).delivered_bytes,
                        path.flow_stats(f, Direction::Return).delivered_bytes,
                    ],
                ));
            }
            next_queue_sample += QUEUE_SAMPLE_INTERVAL;
        }
        if last_published.elapsed() >= PUBLISH_EVERY {
            last_published = Instant::now();
            publish(&path, &mut stats, io);
        }
        let wait = path.next_event().map_or(IDLE_POLL, |t| {
            t.saturating_sub(start.elapsed()).min(IDLE_POLL)
        });
        match arrivals.recv_timeout(wait) {
            Ok(arrival) => {
                admit(arrival, &mut latest, &mut path, &mut stats, io);
                // Admit what else is waiting, a bounded batch, before delivering again.
                for _ in 0..ADMIT_BATCH {
                    match arrivals.try_recv() {
                        Ok(arrival) => admit(arrival, &mut latest, &mut path, &mut stats, io),
                        Err(_) => break,
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    publish(&path, &mut stats, io);
}
