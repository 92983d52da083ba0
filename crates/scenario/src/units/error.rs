//! What kind of quantity a string was expected to hold, and why it was rejected.

use std::fmt;

/// What kind of quantity a string was expected to hold; names it in errors and suggests an
/// example.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// A link rate in bits per second.
    Rate,
    /// A time span.
    Duration,
    /// A byte count.
    Size,
    /// A probability written in percent.
    Probability,
    /// A bottleneck buffer limit.
    Queue,
}

impl Quantity {
    /// A valid example, shown in error messages.
    pub fn example(self) -> &'static str {
        match self {
            Quantity::Rate => "10Mbit",
            Quantity::Duration => "250ms",
            Quantity::Size => "100MB",
            Quantity::Probability => "1%",
            Quantity::Queue => "1bdp",
        }
    }

    /// The accepted units, shown when a unit is not recognised.
    pub fn units(self) -> &'static str {
        match self {
            Quantity::Rate => "bit, kbit, Mbit, Gbit, Tbit; also written Mbit/s or Mbps",
            Quantity::Duration => "ns, us, ms, s, min, h",
            Quantity::Size => "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB; B means bytes",
            Quantity::Probability => "%",
            Quantity::Queue => {
                "bdp, pkt, packets, a size unit (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB) or a time \
                 unit (ns, us, ms, s, min, h)"
            }
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Quantity::Rate => "rate",
            Quantity::Duration => "duration",
            Quantity::Size => "size",
            Quantity::Probability => "probability",
            Quantity::Queue => "queue",
        })
    }
}

/// Why a unit string was rejected. Every message quotes the input and says what would be
/// accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The string does not start with a decimal number.
    #[error("invalid {quantity} {input:?}: expected a number followed by a unit, e.g. {:?}", .quantity.example())]
    NotANumber {
        /// What was being parsed.
        quantity: Quantity,
        /// The offending string.
        input: String,
    },
    /// A bare number; the unit is mandatory so that factors of 8 or 1000 cannot slip in.
    #[error("invalid {quantity} {input:?}: missing unit, e.g. {:?} (units: {})", .quantity.example(), .quantity.units())]
    MissingUnit {
        /// What was being parsed.
        quantity: Quantity,
        /// The offending string.
        input: String,
    },
    /// The unit is not one of the accepted ones.
    #[error("invalid {quantity} {input:?}: unknown unit {unit:?} (units: {})", .quantity.units())]
    UnknownUnit {
        /// What was being parsed.
        quantity: Quantity,
        /// The offending string.
        input: String,
        /// The unit as written.
        unit: String,
    },
    /// A negative value where only non-negative ones make sense.
    #[error("invalid {quantity} {input:?}: negative {quantity}")]
    Negative {
        /// What was being parsed.
        quantity: Quantity,
        /// The offending string.
        input: String,
    },
    /// The value is out of the representable or meaningful range.
    #[error("invalid {quantity} {input:?}: {problem}")]
    OutOfRange {
        /// What was being parsed.
        quantity: Quantity,
        /// The offending string.
        input: String,
        /// What is wrong with the value.
        problem: String,
    },
    /// A byte rate such as `"10MB/s"`; link rates are bits per second, as in netem and iperf.
    #[error("invalid rate {input:?}: rates are bits per second, not bytes; write {suggestion:?}")]
    ByteRate {
        /// The offending string.
        input: String,
        /// The same rate in bits per second.
        suggestion: String,
    },
    /// A probability written as a bare fraction (`0.01`); probabilities are written in percent.
    #[error(
        "invalid probability {input:?}: probabilities are written in percent; write {suggestion:?} not {input:?}"
    )]
    BareProbability {
        /// The offending string.
        input: String,
        /// What was probably meant.
        suggestion: String,
    },
}
