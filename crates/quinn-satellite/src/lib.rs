//! quinn-satellite — quinn transport settings for satellite paths, from what you know about
//! the path.
//!
//! quinn's defaults are right for terrestrial paths and wrong for satellite ones. On a GEO
//! link (RTT 500–650 ms) Cubic and NewReno grow their window per round trip and take tens of
//! seconds to fill the link; quinn's 1.25 MB stream receive window caps any transfer at
//! ≈ 16 Mbit/s at 600 ms; and one ACK per two packets can fill a thin return link on its own
//! (a 3 Mbit/s return link carries the ACKs of at most ≈ 112 Mbit/s of data). Fixing only the
//! congestion controller leaves the other two limits in place.
//!
//! This crate turns a path description — forward and return rate, RTT, and optionally random
//! loss, buffers and MTU ([`SatellitePath`]) — into a complete quinn
//! [`TransportConfig`]:
//!
//! - **TCP Hybla** ([`hybla`], Caini & Firrincieli 2004) as the congestion controller, with the
//!   path's bandwidth-delay product declared, so start-up goes to it in a few round trips, and
//!   random loss below 5 % is not taken for congestion;
//! - **windows** (stream and connection flow control, send buffer) of 2 × (BDP + buffer);
//! - **datagrams** as large as the MTU allows from the first packet;
//! - **ACK thinning** (the ACK frequency extension) where one ACK per two packets would take
//!   more than 5 % of the reverse link, with a workaround for a quinn-proto 0.11 stall that
//!   otherwise costs a whole PTO after the handshake ([`settings`] explains it).
//!
//! One line on each side:
//!
//! ```
//! use std::time::Duration;
//! use quinn_satellite::SatellitePath;
//!
//! // 50 Mbit/s down, 5 Mbit/s up, RTT 600 ms (GEO), 0.01 % random loss.
//! let path = SatellitePath::new(50_000_000, 5_000_000, Duration::from_millis(600))
//!     .with_loss_rate(1e-4);
//! let client_transport = path.client_transport()?; // for quinn::ClientConfig::transport_config
//! let server_transport = path.server_transport()?; // for quinn::ServerConfig::transport_config
//! # let _ = (client_transport, server_transport);
//! # Ok::<(), quinn_satellite::PathError>(())
//! ```
//!
//! Both ends matter: the server's side sends downloads (its controller and send buffer), the
//! client's receives them (its windows, and the ACK thinning the server asks of it) — and the
//! other way round for uploads. [`SatellitePath::settings`] shows the numbers the preset
//! chose, to log or adjust before [`TransportSettings::to_quinn`].
//!
//! A connection that does not know its path can start from what the previous connection on
//! it measured: Hybla implements Careful Resume (RFC 9959, `HyblaConfig::careful_resume`), and
//! a [`ResumeStore`] keeps the measurements between connections — per path, for a Lifetime,
//! handed to one connection at a time, optionally in a file ([`resume`] shows a server's use).
//!
//! [`TransportConfig`] is quinn-proto's type, which quinn re-exports as
//! `quinn::TransportConfig`; this crate depends on quinn-proto only (without a TLS provider:
//! quinn's features choose that), so it works with any runtime and crypto quinn supports.
//! Only the feature `precise-timers` adds quinn and tokio, still without a TLS provider.
//! Everything the preset does not choose keeps quinn's default, the idle timeout among them.
//!
//! **Pacing in real time** (feature `precise-timers`, Linux): quinn paces every connection, and
//! its pacer sleeps about 1.6 ms between bursts. tokio's timer rounds each sleep up to its next
//! millisecond, and the tokens earned meanwhile beyond one burst are lost, so a paced
//! connection sends 55–80 % of the rate its window asks for. That costs nothing while the link
//! is the limit, but on a GEO path the window is the limit exactly when it matters: a Careful
//! Resume jump, the recovery after an outage. `PreciseTimerRuntime` is quinn's tokio runtime
//! with each connection's timer on a `timerfd`; pass it where an endpoint takes a runtime
//! (`quinn::Endpoint::new`).
//!
//! Features: `serde` makes [`TransportSettings`] `Serialize`; `precise-timers` adds
//! `PreciseTimerRuntime`. The satquic lab (the repository this crate lives in) measures what
//! these settings are worth: in virtual time over modelled satellite paths, and in real time
//! through its link emulator.

mod path;
pub mod resume;
pub mod settings;
#[cfg(all(feature = "precise-timers", target_os = "linux"))]
mod timer;

use std::sync::Arc;

use quinn_proto::TransportConfig;
use quinn_proto::congestion::ControllerFactory;

pub use hybla;
pub use hybla::HyblaConfig;
pub use path::{
    DEFAULT_MTU_BYTES, IP_UDP_HEADER_BYTES, MAX_MTU_BYTES, MIN_MTU_BYTES, PathError, SatellitePath,
    bdp_bytes,
};
/// Which end of the connection a configuration is for: quinn's own `Side`. The server sends
/// on the forward link, the client on the return link.
pub use quinn_proto::Side;
pub use resume::{
    LoadReport, PathKey, PrefixLengths, Recorded, ResumeOutcome, ResumeStore, ResumeStoreConfig,
    ResumeStoreError, Resumption,
};
pub use settings::{TransportSettings, ack_threshold, request_ack_thinning};
#[cfg(all(feature = "precise-timers", target_os = "linux"))]
pub use timer::{PreciseTimer, PreciseTimerRuntime};

impl SatellitePath {
    /// The transport settings the preset chooses for this path.
    pub fn settings(&self) -> Result<TransportSettings, PathError> {
        self.check()?;
        Ok(TransportSettings::for_path(self))
    }

    /// The bandwidth-delay product of the direction `side` sends in, bytes: what Hybla's
    /// start-up aims for.
    pub fn sending_bdp_bytes(&self, side: Side) -> u64 {
        let rate = match side {
            Side::Server => self.forward_rate_bps,
            Side::Client => self.return_rate_bps,
        };
        bdp_bytes(rate, self.rtt)
    }

    /// Hybla for `side`'s sending direction, with the path's BDP declared (start-up goes
    /// straight to it instead of waiting for a measurement that ACK thinning would delay).
    pub fn hybla(&self, side: Side) -> HyblaConfig {
        let mut config = HyblaConfig::default();
        config.declared_bdp(self.sending_bdp_bytes(side));
        config
    }

    /// The complete quinn transport for `side`: the preset's settings with Hybla.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use quinn_satellite::{SatellitePath, Side};
    ///
    /// // A LEO service: 100 Mbit/s down, 10 Mbit/s up, 40 ms, its capacity peaking at
    /// // 200 Mbit/s (windows are sized for the peak), 0.1 % random loss.
    /// let path = SatellitePath::new(100_000_000, 10_000_000, Duration::from_millis(40))
    ///     .with_peak_rates(200_000_000, 10_000_000)
    ///     .with_loss_rate(1e-3);
    /// let transport = path.transport(Side::Client)?;
    /// // With quinn: `client_config.transport_config(Arc::new(transport));`
    /// # let _ = Arc::new(transport);
    /// # Ok::<(), quinn_satellite::PathError>(())
    /// ```
    pub fn transport(&self, side: Side) -> Result<TransportConfig, PathError> {
        self.transport_with_controller(side, Arc::new(self.hybla(side)))
    }

    /// The preset's settings with another congestion controller (to compare against Hybla,
    /// or to wrap Hybla in an instrumenting factory).
    pub fn transport_with_controller(
        &self,
        side: Side,
        controller: Arc<dyn ControllerFactory + Send + Sync>,
    ) -> Result<TransportConfig, PathError> {
        Ok(self.settings()?.to_quinn(side, controller))
    }

    /// Shorthand for [`SatellitePath::transport`]`(Side::Server)`.
    pub fn server_transport(&self) -> Result<TransportConfig, PathError> {
        self.transport(Side::Server)
    }

    /// Shorthand for [`SatellitePath::transport`]`(Side::Client)`.
    pub fn client_transport(&self) -> Result<TransportConfig, PathError> {
        self.transport(Side::Client)
    }
}

/// The README's example, compiled and run with the doctests so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn hybla_aims_at_the_sending_directions_bdp() {
        let path = SatellitePath::new(50_000_000, 5_000_000, Duration::from_millis(600));
        // 50 Mbit/s × 0.6 s / 8 = 3 750 000; 5 Mbit/s → 375 000.
        assert_eq!(path.sending_bdp_bytes(Side::Server), 3_750_000);
        assert_eq!(path.sending_bdp_bytes(Side::Client), 375_000);
        let debug = format!("{:?}", path.hybla(Side::Server));
        assert!(debug.contains("3750000"), "{debug}");
    }

    #[test]
    fn a_bad_path_is_refused_by_every_builder() {
        let path = SatellitePath::new(0, 5_000_000, Duration::from_millis(600));
        for side in [Side::Server, Side::Client] {
            let error = path.transport(side).unwrap_err();
            assert!(error.to_string().starts_with("forward_rate_bps"), "{error}");
        }
        assert!(path.settings().is_err());
    }

    #[test]
    fn configurations_keep_quinns_idle_timeout() {
        let path = SatellitePath::new(50_000_000, 5_000_000, Duration::from_millis(600));
        let debug = format!("{:?}", path.client_transport().unwrap());
        assert!(debug.contains("max_idle_timeout: Some(30000)"), "{debug}");
    }
}
