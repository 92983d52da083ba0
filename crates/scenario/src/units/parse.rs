//! The parsers: a rate, a duration, a size, a probability or a queue limit from a string with
//! its unit.

use std::time::Duration;

use netsim::QueueLimit;

use super::decimal::{Decimal, format_decimal, reject_negative, split_number, too_large, whole};
use super::error::{Quantity, UnitError};

/// Parses a link rate into bits per second: `"10Mbit"`, `"10 Mbit/s"`, `"10Mbps"`,
/// `"250kbit"`, `"1.5Gbit"`, `"500bit"`.
///
/// Prefixes are SI (k = 10³, M = 10⁶, G = 10⁹, T = 10¹²) and case-insensitive (a milli-bit rate
/// makes no sense). Byte rates (`"10MB/s"`, `"10MBps"`) are rejected with the equivalent bit
/// rate as a hint. Zero is accepted here; scenario validation rejects it naming the field.
pub fn parse_rate(input: &str) -> Result<u64, UnitError> {
    const Q: Quantity = Quantity::Rate;
    let (value, unit) = split_number(input, Q)?;
    reject_negative(value, Q, input)?;
    if unit.is_empty() {
        return Err(UnitError::MissingUnit {
            quantity: Q,
            input: input.to_owned(),
        });
    }
    let (multiplier, rest) = match unit.as_bytes()[0] {
        b'k' | b'K' => (1_000u128, &unit[1..]),
        b'm' | b'M' => (1_000_000, &unit[1..]),
        b'g' | b'G' => (1_000_000_000, &unit[1..]),
        b't' | b'T' => (1_000_000_000_000, &unit[1..]),
        _ => (1, unit),
    };
    // Binary prefixes ("MiB/s") only appear in byte rates; accept them just far enough to
    // suggest the equivalent bit rate.
    let (multiplier, rest, binary) = match rest.strip_prefix('i') {
        Some(after) if multiplier > 1 => {
            let power = match multiplier {
                1_000 => 1,
                1_000_000 => 2,
                1_000_000_000 => 3,
                _ => 4,
            };
            (1u128 << (10 * power), after, true)
        }
        _ => (multiplier, rest, false),
    };
    let lower = rest.to_ascii_lowercase();
    if rest.starts_with('B') || lower.starts_with("byte") {
        return Err(UnitError::ByteRate {
            input: input.to_owned(),
            suggestion: suggest_bit_rate(value, multiplier),
        });
    }
    if binary
        || !matches!(
            lower.as_str(),
            "bit" | "bits" | "bit/s" | "bits/s" | "bps" | "b/s"
        )
    {
        return Err(UnitError::UnknownUnit {
            quantity: Q,
            input: input.to_owned(),
            unit: unit.to_owned(),
        });
    }
    whole(value, multiplier, Q, input, "bits per second")
}

/// The bit rate equal to `value × byte_multiplier` bytes per second, with an SI prefix.
fn suggest_bit_rate(value: Decimal, byte_multiplier: u128) -> String {
    let Some(bits) = value
        .mantissa
        .checked_mul(byte_multiplier)
        .and_then(|m| m.checked_mul(8))
    else {
        return "a rate in bits per second, e.g. \"80Mbit\"".into();
    };
    // bits × 10^exponent bits per second; pick the largest prefix that keeps it >= 1.
    let digits_before_point = bits.to_string().len() as i32 + value.exponent;
    let (prefix, power) = match digits_before_point {
        13.. => ("T", 12),
        10.. => ("G", 9),
        7.. => ("M", 6),
        4.. => ("k", 3),
        _ => ("", 0),
    };
    format!(
        "{}{prefix}bit",
        format_decimal(bits, value.exponent - power)
    )
}

/// The longest duration any scenario field or flag may state: 365 days. Longer values are
/// typos (`"5000000000000ms"`), and values near `u64::MAX` seconds overflow clock arithmetic in
/// the simulator and in real time (`Instant + Duration` panics past ~292 billion years); a
/// year is far beyond any satellite delay or experiment and keeps every sum of durations safe.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Nanoseconds in one duration unit, or `None` if `unit` is not one: `ns`, `us` (`µs`), `ms`,
/// `s`, `min`, `h`, case-sensitive (`MS` is no unit, `m` is ambiguous). Durations and queues
/// stated in time share them.
fn nanos_per_unit(unit: &str) -> Option<u128> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// Parses a duration: `"250ms"`, `"1.5s"`, `"300s"`, `"10us"`, `"2min"`, `"0s"`.
///
/// Units: `ns`, `us` (or `µs`), `ms`, `s`, `min`, `h`; a bare `m` is rejected as ambiguous.
/// Results are exact to the nanosecond (finer digits are rounded; a value that is not zero but
/// rounds to zero, `"0.4ns"`, is rejected). Negative values are rejected with "negative
/// duration", values beyond [`MAX_DURATION`] as out of range.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    parse_duration_as(input, Quantity::Duration)
}

/// The non-negative number of `input` and its unit's factor, which `factor` knows (None: an
/// unknown unit); a missing unit is an error.
fn number_and_factor(
    input: &str,
    quantity: Quantity,
    factor: impl Fn(&str) -> Option<u128>,
) -> Result<(Decimal, u128), UnitError> {
    let (value, unit) = split_number(input, quantity)?;
    reject_negative(value, quantity, input)?;
    if unit.is_empty() {
        return Err(UnitError::MissingUnit {
            quantity,
            input: input.to_owned(),
        });
    }
    let factor = factor(unit).ok_or_else(|| UnitError::UnknownUnit {
        quantity,
        input: input.to_owned(),
        unit: unit.to_owned(),
    })?;
    Ok((value, factor))
}

fn parse_duration_as(input: &str, quantity: Quantity) -> Result<Duration, UnitError> {
    let (value, nanos_per_unit) = number_and_factor(input, quantity, nanos_per_unit)?;
    let nanos = value
        .times_rounded(nanos_per_unit)
        .ok_or_else(|| too_large(quantity, input))?;
    if nanos == 0 && value.mantissa != 0 {
        return Err(UnitError::OutOfRange {
            quantity,
            input: input.to_owned(),
            problem: "rounds to zero at the 1 ns resolution".into(),
        });
    }
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| too_large(quantity, input))?;
    let duration = Duration::new(secs, (nanos % 1_000_000_000) as u32);
    if duration > MAX_DURATION {
        return Err(UnitError::OutOfRange {
            quantity,
            input: input.to_owned(),
            problem: "longer than 365 days (8760h), the most a scenario may state".into(),
        });
    }
    Ok(duration)
}

/// Multiplier of a size unit, or `None` if `unit` is not one.
fn size_multiplier(unit: &str) -> Option<u128> {
    Some(match unit {
        "B" | "byte" | "bytes" => 1,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => return None,
    })
}

fn parse_size_as(input: &str, quantity: Quantity) -> Result<u64, UnitError> {
    let (value, multiplier) = number_and_factor(input, quantity, size_multiplier)?;
    whole(value, multiplier, quantity, input, "bytes")
}

/// Parses a byte count: `"100MB"`, `"100MiB"`, `"1.5KB"`, `"1500B"`, `"10GB"`, `"2KiB"`.
///
/// `kB`/`KB`, `MB`, `GB`, `TB` are decimal (10³ steps) — like the draft-kuhn-quic-4-sat
/// objectives ("100 MB") — and `KiB`, `MiB`, `GiB`, `TiB` binary (2¹⁰ steps). The result must be
/// a whole number of bytes. Lower-case `b` (bits) is not a size unit.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    parse_size_as(input, Quantity::Size)
}

/// Parses a probability written in percent into a fraction: `"0.01%"` → 0.0001.
///
/// The `%` is mandatory: a bare `"0.01"` is rejected with the hint "write 1% not 0.01", because
/// a fraction and a percentage are a factor of 100 apart. Values must be within 0..=100 %.
pub fn parse_probability(input: &str) -> Result<f64, UnitError> {
    const Q: Quantity = Quantity::Probability;
    let (value, unit) = split_number(input, Q)?;
    reject_negative(value, Q, input)?;
    match unit {
        "%" => {}
        "" => {
            let trimmed = input.trim();
            let suggestion = if value.mantissa < 10u128.pow(value.exponent.unsigned_abs()) {
                // A fraction below 1 such as 0.01: the same value in percent.
                format!("{}%", format_decimal(value.mantissa, value.exponent + 2))
            } else {
                format!("{trimmed}%")
            };
            return Err(UnitError::BareProbability {
                input: trimmed.to_owned(),
                suggestion,
            });
        }
        _ => {
            return Err(UnitError::UnknownUnit {
                quantity: Q,
                input: input.to_owned(),
                unit: unit.to_owned(),
            });
        }
    }
    let percent = value.as_f64();
    if percent > 100.0 {
        return Err(UnitError::OutOfRange {
            quantity: Q,
            input: input.to_owned(),
            problem: "more than 100%".into(),
        });
    }
    let mut fraction = Decimal {
        exponent: value.exponent - 2,
        ..value
    }
    .as_f64();
    if fraction == 0.0 {
        fraction = 0.0; // no -0.0 from "-0%"
    }
    Ok(fraction)
}

/// Parses a bottleneck buffer limit: `"1bdp"`/`"0.5bdp"` (multiple of the bandwidth-delay
/// product), `"50pkt"`/`"50packets"`/`"50 packets"` (packet count), a size such as `"100KB"`
/// (bytes of IP packets), or a time such as `"300ms"` (that long of the link's rate, in any
/// duration unit: `ns`, `us`, `ms`, `s`, `min`, `h`).
///
/// Zero is accepted here; link validation rejects it naming the field.
pub fn parse_queue(input: &str) -> Result<QueueLimit, UnitError> {
    const Q: Quantity = Quantity::Queue;
    let (value, unit) = split_number(input, Q)?;
    reject_negative(value, Q, input)?;
    match unit.to_ascii_lowercase().as_str() {
        "" => Err(UnitError::MissingUnit {
            quantity: Q,
            input: input.to_owned(),
        }),
        "bdp" => Ok(QueueLimit::BdpMultiple(value.as_f64())),
        "pkt" | "pkts" | "packet" | "packets" => {
            whole(value, 1, Q, input, "packets").map(QueueLimit::Packets)
        }
        _ if nanos_per_unit(unit).is_some() => parse_duration_as(input, Q).map(QueueLimit::Time),
        _ => parse_size_as(input, Q).map(QueueLimit::Bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // ---- rate --------------------------------------------------------------------------------

    #[test]
    fn rates_in_bits_per_second() {
        for (input, bps) in [
            ("10Mbit", 10_000_000),
            ("10 Mbit/s", 10_000_000),
            ("10Mbps", 10_000_000),
            ("10mbit", 10_000_000),
            ("250kbit", 250_000),
            ("250Kbit", 250_000),
            ("1.5Gbit", 1_500_000_000),
            ("500bit", 500),
            ("500 bits/s", 500),
            ("0.5Mbit", 500_000),
            (".5Mbit", 500_000),
            ("2Tbit", 2_000_000_000_000),
            ("  3 kb/s ", 3_000),
            ("0bit", 0),
        ] {
            assert_eq!(parse_rate(input), Ok(bps), "{input}");
        }
    }

    #[test]
    fn byte_rates_are_rejected_with_the_bit_rate() {
        let err = parse_rate("10MB/s").unwrap_err();
        assert_eq!(
            err,
            UnitError::ByteRate {
                input: "10MB/s".into(),
                suggestion: "80Mbit".into()
            }
        );
        assert!(err.to_string().contains("bits per second"), "{err}");
        for (input, suggestion) in [
            ("10MBps", "80Mbit"),
            ("1.5 MB/s", "12Mbit"),
            ("125kB/s", "1Mbit"),
            ("100Bps", "800bit"),
            ("1MiB/s", "8.388608Mbit"),
            ("3 Mbyte/s", "24Mbit"),
        ] {
            match parse_rate(input) {
                Err(UnitError::ByteRate { suggestion: s, .. }) => assert_eq!(s, suggestion),
                other => panic!("{input}: {other:?}"),
            }
        }
    }

    #[test]
    fn bad_rates() {
        assert!(matches!(
            parse_rate("10"),
            Err(UnitError::MissingUnit { .. })
        ));
        assert!(matches!(
            parse_rate("10Mbits/h"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_rate("10Mibit"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_rate("-1Mbit"),
            Err(UnitError::Negative { .. })
        ));
        assert!(matches!(
            parse_rate("Mbit"),
            Err(UnitError::NotANumber { .. })
        ));
        assert!(matches!(
            parse_rate("1.2.3Mbit"),
            Err(UnitError::NotANumber { .. })
        ));
        assert!(matches!(
            parse_rate("0.5bit"),
            Err(UnitError::OutOfRange { .. })
        ));
        assert!(matches!(
            parse_rate("100000000000Tbit"),
            Err(UnitError::OutOfRange { .. })
        ));
        assert!(matches!(
            parse_rate("infbit"),
            Err(UnitError::NotANumber { .. })
        ));
    }

    // ---- duration ----------------------------------------------------------------------------

    #[test]
    fn durations() {
        for (input, expected) in [
            ("250ms", Duration::from_millis(250)),
            ("1.5s", Duration::from_millis(1500)),
            ("300s", Duration::from_secs(300)),
            ("10us", Duration::from_micros(10)),
            ("10µs", Duration::from_micros(10)),
            ("2min", Duration::from_secs(120)),
            ("1h", Duration::from_secs(3600)),
            ("0s", Duration::ZERO),
            ("-0s", Duration::ZERO),
            ("0.3s", Duration::from_millis(300)),
            ("7ns", Duration::from_nanos(7)),
            ("1.6ns", Duration::from_nanos(2)),
            ("325 ms", Duration::from_millis(325)),
        ] {
            assert_eq!(parse_duration(input), Ok(expected), "{input}");
        }
    }

    #[test]
    fn bad_durations() {
        let err = parse_duration("-5ms").unwrap_err();
        assert!(matches!(err, UnitError::Negative { .. }));
        assert!(err.to_string().contains("negative duration"), "{err}");
        assert!(matches!(
            parse_duration("5"),
            Err(UnitError::MissingUnit { .. })
        ));
        assert!(matches!(
            parse_duration("5m"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_duration("5 sec"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_duration("infs"),
            Err(UnitError::NotANumber { .. })
        ));
        assert!(matches!(
            parse_duration("NaNms"),
            Err(UnitError::NotANumber { .. })
        ));
        assert!(matches!(
            parse_duration(""),
            Err(UnitError::NotANumber { .. })
        ));
        assert!(matches!(
            parse_duration("999999999999999999999h"),
            Err(UnitError::OutOfRange { .. })
        ));
        // Found by tests/bad_input.rs: u64::MAX seconds used to be accepted.
        assert!(matches!(
            parse_duration("18446744073709551616 ms"),
            Err(UnitError::OutOfRange { .. })
        ));
        assert_eq!(parse_duration("8760h"), Ok(MAX_DURATION));
        assert!(matches!(
            parse_duration("8760.000000001h"),
            Err(UnitError::OutOfRange { .. })
        ));
    }

    // ---- size --------------------------------------------------------------------------------

    #[test]
    fn sizes_decimal_and_binary() {
        for (input, bytes) in [
            ("100MB", 100_000_000),
            ("100MiB", 100 * 1024 * 1024),
            ("1.5KB", 1_500),
            ("1.5kB", 1_500),
            ("1500B", 1_500),
            ("1500 bytes", 1_500),
            ("10GB", 10_000_000_000),
            ("2KiB", 2_048),
            ("18.75MB", 18_750_000),
            ("1TiB", 1 << 40),
        ] {
            assert_eq!(parse_size(input), Ok(bytes), "{input}");
        }
    }

    #[test]
    fn bad_sizes() {
        assert!(matches!(
            parse_size("100"),
            Err(UnitError::MissingUnit { .. })
        ));
        assert!(matches!(
            parse_size("100Mb"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_size("100mb"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_size("1.5B"),
            Err(UnitError::OutOfRange { .. })
        ));
        assert!(matches!(
            parse_size("-1MB"),
            Err(UnitError::Negative { .. })
        ));
        assert!(matches!(
            parse_size("100000000000TB"),
            Err(UnitError::OutOfRange { .. })
        ));
    }

    // ---- probability -------------------------------------------------------------------------

    #[test]
    fn probabilities_from_percent() {
        assert!((parse_probability("0.01%").unwrap() - 1e-4).abs() < 1e-15);
        assert_eq!(parse_probability("1%"), Ok(0.01));
        assert_eq!(parse_probability("100%"), Ok(1.0));
        assert_eq!(parse_probability("0%"), Ok(0.0));
        assert_eq!(parse_probability("64.5%"), Ok(0.645));
        assert_eq!(parse_probability("1.8 %"), Ok(0.018));
    }

    #[test]
    fn bad_probabilities() {
        let err = parse_probability("0.01").unwrap_err();
        assert_eq!(
            err,
            UnitError::BareProbability {
                input: "0.01".into(),
                suggestion: "1%".into()
            }
        );
        assert!(
            err.to_string().contains(r#"write "1%" not "0.01""#),
            "{err}"
        );
        match parse_probability("5") {
            Err(UnitError::BareProbability { suggestion, .. }) => assert_eq!(suggestion, "5%"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_probability("100.5%"),
            Err(UnitError::OutOfRange { .. })
        ));
        assert!(matches!(
            parse_probability("-1%"),
            Err(UnitError::Negative { .. })
        ));
        assert!(matches!(
            parse_probability("1 percent"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_probability("nan%"),
            Err(UnitError::NotANumber { .. })
        ));
    }

    // ---- queue -------------------------------------------------------------------------------

    #[test]
    fn queues() {
        assert_eq!(parse_queue("1bdp"), Ok(QueueLimit::BdpMultiple(1.0)));
        assert_eq!(parse_queue("0.5bdp"), Ok(QueueLimit::BdpMultiple(0.5)));
        assert_eq!(parse_queue("2 BDP"), Ok(QueueLimit::BdpMultiple(2.0)));
        assert_eq!(parse_queue("50pkt"), Ok(QueueLimit::Packets(50)));
        assert_eq!(
            parse_queue("300ms"),
            Ok(QueueLimit::Time(Duration::from_millis(300)))
        );
        assert_eq!(
            QueueLimit::Time(Duration::from_millis(300)).limit_bytes(4_000_000, Duration::ZERO),
            Some(150_000)
        );
        assert_eq!(parse_queue("50packets"), Ok(QueueLimit::Packets(50)));
        assert_eq!(parse_queue("50 packets"), Ok(QueueLimit::Packets(50)));
        assert_eq!(parse_queue("100KB"), Ok(QueueLimit::Bytes(100_000)));
        assert_eq!(parse_queue("64KiB"), Ok(QueueLimit::Bytes(65_536)));
    }

    #[test]
    fn bad_queues() {
        assert!(matches!(
            parse_queue("50"),
            Err(UnitError::MissingUnit { .. })
        ));
        assert!(matches!(
            parse_queue("1.5pkt"),
            Err(UnitError::OutOfRange { .. })
        ));
        assert!(matches!(
            parse_queue("-1bdp"),
            Err(UnitError::Negative { .. })
        ));
        let err = parse_queue("3 frames").unwrap_err();
        assert!(matches!(err, UnitError::UnknownUnit { .. }));
        assert!(err.to_string().starts_with("invalid queue"), "{err}");
    }

    /// Audit finding: a queue took `us`, `ms`, `s` and `min` but called `ns` and `h` an
    /// "unknown unit" while its message offered "a time unit such as ms, s".
    #[test]
    fn a_queue_stated_in_time_takes_every_duration_unit() {
        for (input, expected) in [
            ("500000000ns", Duration::from_millis(500)),
            ("500000us", Duration::from_millis(500)),
            ("500µs", Duration::from_micros(500)),
            ("0.5s", Duration::from_millis(500)),
            ("0.01min", Duration::from_millis(600)),
            ("0.0001h", Duration::from_millis(360)),
        ] {
            assert_eq!(
                parse_queue(input),
                Ok(QueueLimit::Time(expected)),
                "{input}"
            );
        }
        // Units are case-sensitive, as for durations; the message lists every one.
        for input in ["1MS", "1 S", "1sec"] {
            let err = parse_queue(input).unwrap_err();
            assert!(
                matches!(err, UnitError::UnknownUnit { .. }),
                "{input}: {err}"
            );
            let message = err.to_string();
            assert!(message.starts_with("invalid queue"), "{message}");
            assert!(
                message.contains("time unit (ns, us, ms, s, min, h)") && message.contains("GiB"),
                "{message}"
            );
        }
        // A time queue's errors speak of the queue.
        let err = parse_queue("9000h").unwrap_err();
        assert!(err.to_string().starts_with("invalid queue"), "{err}");
    }

    /// Audit finding: `duration = "0.4ns"` became zero and was reported as "must be greater
    /// than zero", as if the file said zero.
    #[test]
    fn a_duration_that_rounds_to_zero_says_so() {
        for input in ["0.4ns", "0.0000000001s"] {
            let err = parse_duration(input).unwrap_err();
            assert!(
                matches!(err, UnitError::OutOfRange { .. }),
                "{input}: {err}"
            );
            assert!(
                err.to_string()
                    .contains("rounds to zero at the 1 ns resolution"),
                "{err}"
            );
        }
        assert_eq!(parse_duration("0.5ns"), Ok(Duration::from_nanos(1)));
        assert_eq!(parse_duration("0.000ns"), Ok(Duration::ZERO));
    }
}
