//! What the caller knows about the path: rates, RTT, loss, buffers, MTU — checked before use.

use std::time::Duration;

use thiserror::Error;

/// Bytes of IPv4 + UDP header in front of every QUIC datagram.
pub const IP_UDP_HEADER_BYTES: u32 = 28;

/// The usual Ethernet-sized path MTU, bytes.
pub const DEFAULT_MTU_BYTES: u32 = 1500;

/// QUIC's smallest allowed datagram (RFC 9000 §14) plus the IPv4/UDP header: the smallest MTU
/// a QUIC path can have.
pub const MIN_MTU_BYTES: u32 = 1200 + IP_UDP_HEADER_BYTES;

/// The largest MTU: the largest IPv4 packet. IPv4's 16-bit total length counts the header, so
/// a packet is at most 65 535 bytes and the QUIC datagram in it at most 65 507.
pub const MAX_MTU_BYTES: u32 = 65_535;

/// Bandwidth-delay product in bytes (rounded down), [`u64::MAX`] where it does not fit.
pub fn bdp_bytes(rate_bps: u64, rtt: Duration) -> u64 {
    u128::from(rate_bps)
        .checked_mul(rtt.as_nanos())
        .map_or(u64::MAX, |bits_nanos| {
            u64::try_from(bits_nanos / (8 * 1_000_000_000)).unwrap_or(u64::MAX)
        })
}

/// A satellite path as its user knows it, seen from the server: **forward** is server → client
/// (a terminal's download, the satellite forward link), **return** is client → server.
///
/// Only the three numbers of [`SatellitePath::new`] are needed; the rest default to what a
/// plain GEO or LEO service looks like (no random loss, one BDP of buffer in each direction,
/// 1500-byte MTU, a constant rate) and the `with_*` methods change them. Fields are public so
/// a caller can read and fill in what it knows; every method that builds a quinn
/// configuration checks them first ([`SatellitePath::check`]). A description may gain fields
/// (each with a default that keeps today's settings), so the struct is `#[non_exhaustive]`:
/// start from [`SatellitePath::new`].
///
/// ```
/// use std::time::Duration;
/// use quinn_satellite::SatellitePath;
///
/// // GEO, 20 Mbit/s each way at 600 ms, a 500 kB buffer in front of the forward link.
/// let path = SatellitePath::new(20_000_000, 20_000_000, Duration::from_millis(600))
///     .with_buffers(500_000, 1_500_000)
///     .with_mtu(1400);
/// assert_eq!(path.check(), Ok(()));
/// assert_eq!(path.settings()?.initial_mtu_bytes, 1372); // MTU − IPv4/UDP headers
/// # Ok::<(), quinn_satellite::PathError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SatellitePath {
    /// Server → client bottleneck rate, bits per second.
    pub forward_rate_bps: u64,
    /// Client → server bottleneck rate, bits per second.
    pub return_rate_bps: u64,
    /// Base round-trip time (propagation, no queueing): ≈ 500–650 ms for GEO, 20–60 ms for LEO.
    pub rtt: Duration,
    /// Random (non-congestion) packet loss rate, 0 ≤ p < 1. It does not change the windows —
    /// 2 × (BDP + buffer) already holds a round of data waiting behind a retransmission — but
    /// above [`hybla::RANDOM_LOSS_MAX_RATE`] Hybla can no longer tell random loss from
    /// congestion, and [`SatellitePath::check`] says so.
    pub loss_rate: f64,
    /// Highest forward rate the path reaches (e.g. the best LEO capacity step), bits per
    /// second; windows are sized for it. None: the forward rate.
    pub forward_peak_rate_bps: Option<u64>,
    /// Highest return rate the path reaches, bits per second. None: the return rate.
    pub return_peak_rate_bps: Option<u64>,
    /// Bottleneck buffer of the forward direction, bytes. None: one forward BDP.
    pub forward_buffer_bytes: Option<u64>,
    /// Bottleneck buffer of the return direction, bytes. None: one return BDP.
    pub return_buffer_bytes: Option<u64>,
    /// Path MTU (IP packet), bytes; QUIC datagrams are 28 bytes smaller.
    pub mtu_bytes: u32,
}

/// A path description that cannot be used, naming the field and the problem. New checks may
/// add variants (`#[non_exhaustive]`).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PathError {
    /// A rate of zero (or a peak below the base rate).
    #[error("{field}: {problem}")]
    Rate {
        /// The field at fault.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// An RTT of zero.
    #[error("rtt: must be greater than zero")]
    ZeroRtt,
    /// A loss rate outside [0, 1) or above what Hybla tolerates as random loss.
    #[error("loss_rate: {0}")]
    Loss(String),
    /// An MTU QUIC cannot use.
    #[error("mtu_bytes: {0} is outside {MIN_MTU_BYTES}..={MAX_MTU_BYTES}")]
    Mtu(u32),
}

impl SatellitePath {
    /// A path with these rates and base RTT, no random loss, one BDP of buffer each way and a
    /// 1500-byte MTU.
    pub fn new(forward_rate_bps: u64, return_rate_bps: u64, rtt: Duration) -> Self {
        Self {
            forward_rate_bps,
            return_rate_bps,
            rtt,
            loss_rate: 0.0,
            forward_peak_rate_bps: None,
            return_peak_rate_bps: None,
            forward_buffer_bytes: None,
            return_buffer_bytes: None,
            mtu_bytes: DEFAULT_MTU_BYTES,
        }
    }

    /// The same path with random packet loss `rate` (e.g. 1e-4 for a packet error rate of
    /// 0.01 %).
    pub fn with_loss_rate(mut self, rate: f64) -> Self {
        self.loss_rate = rate;
        self
    }

    /// The same path with the highest rates it reaches, bits per second (e.g. the best
    /// capacity step of a LEO pass): windows are sized for them, the rest of the preset for
    /// the base rates.
    pub fn with_peak_rates(mut self, forward_bps: u64, return_bps: u64) -> Self {
        self.forward_peak_rate_bps = Some(forward_bps);
        self.return_peak_rate_bps = Some(return_bps);
        self
    }

    /// The same path with these bottleneck buffers, bytes (forward, return), instead of one
    /// BDP each.
    pub fn with_buffers(mut self, forward_bytes: u64, return_bytes: u64) -> Self {
        self.forward_buffer_bytes = Some(forward_bytes);
        self.return_buffer_bytes = Some(return_bytes);
        self
    }

    /// The same path with this MTU (IP packet), bytes.
    pub fn with_mtu(mut self, mtu_bytes: u32) -> Self {
        self.mtu_bytes = mtu_bytes;
        self
    }

    /// Every field usable, or the first that is not. A random loss rate above
    /// [`hybla::RANDOM_LOSS_MAX_RATE`] is refused: Hybla would halve its window on every
    /// round and the preset's promise (the link filled despite random loss) would not hold —
    /// such a link needs FEC or link-layer retransmission below QUIC.
    pub fn check(&self) -> Result<(), PathError> {
        let positive = |field: &'static str, value: u64| {
            if value == 0 {
                Err(PathError::Rate {
                    field,
                    problem: "must be greater than zero".into(),
                })
            } else {
                Ok(())
            }
        };
        positive("forward_rate_bps", self.forward_rate_bps)?;
        positive("return_rate_bps", self.return_rate_bps)?;
        for (field, peak, base) in [
            (
                "forward_peak_rate_bps",
                self.forward_peak_rate_bps,
                self.forward_rate_bps,
            ),
            (
                "return_peak_rate_bps",
                self.return_peak_rate_bps,
                self.return_rate_bps,
            ),
        ] {
            if let Some(peak) = peak
                && peak < base
            {
                return Err(PathError::Rate {
                    field,
                    problem: format!("{peak} bit/s is below the base rate {base} bit/s"),
                });
            }
        }
        if self.rtt.is_zero() {
            return Err(PathError::ZeroRtt);
        }
        if !(0.0..1.0).contains(&self.loss_rate) {
            return Err(PathError::Loss(format!(
                "{} is not a probability in [0, 1)",
                self.loss_rate
            )));
        }
        if self.loss_rate > hybla::RANDOM_LOSS_MAX_RATE {
            return Err(PathError::Loss(format!(
                "{} is above {}, the highest random loss Hybla tells from congestion",
                self.loss_rate,
                hybla::RANDOM_LOSS_MAX_RATE
            )));
        }
        if !(MIN_MTU_BYTES..=MAX_MTU_BYTES).contains(&self.mtu_bytes) {
            return Err(PathError::Mtu(self.mtu_bytes));
        }
        Ok(())
    }

    /// The forward rate windows are sized for.
    pub fn forward_peak_rate_bps(&self) -> u64 {
        self.forward_peak_rate_bps
            .unwrap_or(self.forward_rate_bps)
            .max(self.forward_rate_bps)
    }

    /// The return rate windows are sized for.
    pub fn return_peak_rate_bps(&self) -> u64 {
        self.return_peak_rate_bps
            .unwrap_or(self.return_rate_bps)
            .max(self.return_rate_bps)
    }

    /// The forward bottleneck buffer, bytes (one forward BDP unless given).
    pub fn forward_buffer_bytes(&self) -> u64 {
        self.forward_buffer_bytes
            .unwrap_or_else(|| bdp_bytes(self.forward_rate_bps, self.rtt))
    }

    /// The return bottleneck buffer, bytes (one return BDP unless given).
    pub fn return_buffer_bytes(&self) -> u64 {
        self.return_buffer_bytes
            .unwrap_or_else(|| bdp_bytes(self.return_rate_bps, self.rtt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GEO: Duration = Duration::from_millis(600);

    #[test]
    fn bdp_is_rate_times_rtt_in_bytes() {
        // 10 Mbit/s × 0.6 s = 6 Mbit = 750 000 bytes.
        assert_eq!(bdp_bytes(10_000_000, GEO), 750_000);
        // Rounded down: 1 bit/s × 1 s = 0.125 bytes.
        assert_eq!(bdp_bytes(1, Duration::from_secs(1)), 0);
    }

    /// Audit finding: rate × RTT overflowed u128 (a panic in debug builds) and a BDP above
    /// u64::MAX wrapped on the cast.
    #[test]
    fn a_bdp_too_large_for_u64_saturates() {
        assert_eq!(bdp_bytes(u64::MAX, Duration::MAX), u64::MAX);
        let two_years = Duration::from_secs(2 * 365 * 24 * 3600);
        assert_eq!(bdp_bytes(10_000_000_000_000, two_years), u64::MAX);
    }

    #[test]
    fn errors_name_the_field() {
        let base = SatellitePath::new(50_000_000, 5_000_000, GEO);
        assert_eq!(base.check(), Ok(()));
        let cases: [(SatellitePath, &str); 7] = [
            (SatellitePath::new(0, 5_000_000, GEO), "forward_rate_bps"),
            (SatellitePath::new(5_000_000, 0, GEO), "return_rate_bps"),
            (SatellitePath::new(5, 5, Duration::ZERO), "rtt"),
            (base.clone().with_loss_rate(-0.1), "loss_rate"),
            (base.clone().with_loss_rate(f64::NAN), "loss_rate"),
            (base.clone().with_loss_rate(0.2), "loss_rate"),
            (
                SatellitePath {
                    mtu_bytes: 576,
                    ..base.clone()
                },
                "mtu_bytes",
            ),
        ];
        for (path, field) in cases {
            let error = path.check().expect_err(field).to_string();
            assert!(error.starts_with(field), "{error}");
        }
        let low_peak = SatellitePath {
            forward_peak_rate_bps: Some(1),
            ..base
        };
        assert!(
            low_peak
                .check()
                .unwrap_err()
                .to_string()
                .starts_with("forward_peak_rate_bps")
        );
    }

    #[test]
    fn defaults_are_one_bdp_of_buffer_at_the_base_rate() {
        let path = SatellitePath::new(20_000_000, 2_000_000, GEO);
        assert_eq!(path.forward_buffer_bytes(), 1_500_000);
        assert_eq!(path.return_buffer_bytes(), 150_000);
        assert_eq!(path.forward_peak_rate_bps(), 20_000_000);
    }
}
