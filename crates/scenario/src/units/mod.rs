//! Human units in scenario strings: `"10Mbit"`, `"250ms"`, `"100MB"`, `"1%"`, `"1bdp"`.
//!
//! Scenario files state quantities the way netem and iperf users write them, with the unit in
//! the string, so a file can be read without a manual and a wrong unit is an error instead of a
//! silent factor of 8 or 1000. Every parser here is a pure function returning
//! `Result<T, UnitError>`; the `deserialize_*` helpers plug them into serde with
//! `#[serde(deserialize_with = "...")]`.
//!
//! Numbers are plain decimals (`10`, `1.5`, `.5`), optionally separated from the unit by spaces.
//! They are converted with exact integer arithmetic, so `"1.5Gbit"` is exactly 1 500 000 000 and
//! `"0.3s"` exactly 300 ms.
//!
//! | quantity | units | result |
//! |---|---|---|
//! | rate | `bit`, `kbit`, `Mbit`, `Gbit`, `Tbit` (also `…bps`, `…bit/s`; prefix case-insensitive, SI: k = 10³) | bits per second |
//! | duration | `ns`, `us`, `ms`, `s`, `min`, `h` | [`Duration`](std::time::Duration) |
//! | size | `B`, `kB`/`KB`, `MB`, `GB`, `TB` (decimal, 10³ steps, as in the draft-kuhn-quic-4-sat objectives) and `KiB`, `MiB`, `GiB`, `TiB` (binary, 2¹⁰ steps) | bytes |
//! | probability | `%` only | fraction 0..=1 |
//! | queue | `bdp`, `pkt`/`packets`, a size or a duration | [`QueueLimit`](netsim::QueueLimit) |
//!
//! Inside: `parse` holds the parsers, `decimal` the exact decimal numbers they read, `error`
//! what a string was expected to hold and why it was rejected, and `de` the serde helpers.

mod de;
mod decimal;
mod error;
mod parse;

pub(crate) use de::{FieldReader, UnitVisitor};
pub use de::{
    deserialize_duration, deserialize_opt_duration, deserialize_opt_probability,
    deserialize_opt_queue, deserialize_opt_rate, deserialize_opt_size, deserialize_probability,
    deserialize_queue, deserialize_rate, deserialize_size,
};
pub use error::{Quantity, UnitError};
pub use parse::{
    MAX_DURATION, parse_duration, parse_probability, parse_queue, parse_rate, parse_size,
};
