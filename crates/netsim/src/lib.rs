//! netsim — the satellite path model of satquic, in abstract time.
//!
//! Layer: the bottom of the lab. No QUIC, no I/O, no clock: every call takes `now` (a
//! [`Duration`](std::time::Duration) since the start of the run) and the caller jumps to
//! [`Path::next_event`]. The same model runs in virtual time (crate `sim`) and on the wall clock
//! (the real-time emulator).
//!
//! A packet's journey, per direction: access delay (per flow, server side) → buffer
//! ([`Aqm::DropTail`] or [`Aqm::Red`], limited by [`QueueLimit`]) → serializer at the link rate
//! (size·8/rate, FIFO, exact to the nanosecond with carried remainders) → random loss
//! ([`LossModel`]) → slotted departure (optional, `LinkConfig::slot`) → propagation delay plus
//! per-packet [`Jitter`] (order-preserving unless reordering is asked for). Rates, delays and loss models can change on a
//! [`ScheduleStep`] timetable. Rates apply to IP packets: a QUIC datagram costs its size plus
//! [`IP_UDP_HEADER_BYTES`].
//!
//! ```
//! use std::time::Duration;
//! use netsim::{LinkConfig, Path, PathConfig, Direction};
//!
//! let ms = Duration::from_millis;
//! let config = PathConfig {
//!     forward: LinkConfig::new(10_000_000, ms(250)),
//!     return_link: LinkConfig::new(10_000_000, ms(250)),
//!     mtu_bytes: 1500,
//!     access_delays: vec![Duration::ZERO],
//! };
//! let mut path = Path::new(&config, 1).unwrap();
//! path.send(Duration::ZERO, Direction::Forward, 0, 1500, "hello");
//! let at = path.next_event().unwrap();
//! assert_eq!(at, ms(250) + Duration::from_micros(1200)); // 1500·8 bit / 10 Mbit/s + 250 ms
//! assert_eq!(path.poll(at).unwrap().payload, "hello");
//! ```

mod config;
mod jitter;
mod link;
mod loss;
mod path;
mod red;
mod rng;

pub use config::{
    Aqm, ConfigError, DEFAULT_MTU_BYTES, IP_UDP_HEADER_BYTES, Jitter, JitterDistribution,
    LinkConfig, LossModel, MAX_MTU_BYTES, MIN_MTU_BYTES, PathConfig, QueueLimit, RedConfig,
    ScheduleStep,
};
pub use link::{Link, LinkStats, Verdict, bdp_bytes, serialization_time};
pub use loss::LossProcess;
pub use path::{Delivery, Direction, DropCause, DropRecord, FlowLinkStats, MeanQueueMeter, Path};
pub use red::Red;
pub use rng::{Uniform, derive_seed};

/// The highest application goodput a link allows, bits per second: the rate times the share of
/// each IP packet that is application payload. `payload_bytes_per_packet` is what one full
/// packet carries for the application after all protocol overhead; `mtu_bytes` is the IP size.
pub fn goodput_ceiling_bps(rate_bps: u64, payload_bytes_per_packet: u32, mtu_bytes: u32) -> f64 {
    rate_bps as f64 * f64::from(payload_bytes_per_packet) / f64::from(mtu_bytes)
}

#[cfg(test)]
mod tests;
