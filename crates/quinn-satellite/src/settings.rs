//! The preset's transport settings and their translation to quinn, with the reasons for each.
//!
//! quinn's defaults are tuned for terrestrial paths and cap a GEO transfer long before the
//! congestion controller does: a 1.25 MB stream receive window allows at most ~16 Mbit/s at
//! 600 ms RTT, and one ACK per two packets does not fit in a 3 Mbit/s return link carrying a
//! 250 Mbit/s download. [`TransportSettings::for_path`] sizes the windows from the path.
//!
//! ACK thinning is on by default wherever one ACK per two packets would take more than
//! [`ACK_BUDGET_SHARE`] of the reverse link ([`ack_threshold`]). The preset budgets
//! [`ACK_PACKET_WIRE_BYTES`] (80 bytes) per ACK-only packet on the wire: at one ACK per two
//! packets a 3 Mbit/s return link carries ≈ 4 700 ACKs/s, i.e. at most ≈ 112 Mbit/s of
//! 1500-byte data, whatever the congestion controller does.
//!
//! [`TransportSettings::to_quinn`] keeps quinn's idle timeout (30 s; quinn stretches it to
//! three PTOs where those are longer, so a slow path's connection is not closed between two
//! probes): a connection whose peer vanished is closed, as quinn's users expect. A caller that
//! wants connections idle for longer, or for ever, sets `max_idle_timeout` on the result.
//!
//! # The quinn-proto 0.11.19 ACK-frequency stall and its workaround
//!
//! `Connection::poll_transmit` calls `timers.stop(Timer::MaxAckDelay)` whenever it sends an
//! ACK in *any* packet-number space, although that timer belongs to the Data space only. At
//! the end of the handshake the client receives the server's first 1-RTT packets (carrying
//! ACK_FREQUENCY), arms the Data-space timer, then sends its Initial/Handshake ACKs in the same
//! call: the timer is stopped while the Data space still records a pending ack-eliciting
//! packet, and it is never re-armed (the Data space's `earliest_ack_eliciting_since_last_ack_sent`
//! is cleared only by a Data ACK). The Handshake ACK also pushes `next_bundled_ack_time` about
//! one RTT out, so no Data ACK rides on client packets either. With a threshold k > 1 and a
//! first flight of k packets or fewer, nothing is ACKed until the server's PTO: 1.5 s at 600 ms
//! (measured with a logging copy of quinn-proto; also present on quinn's main branch).
//!
//! The workaround, using only the public API ([`TransportSettings::to_quinn`] applies it on the
//! endpoint that requests thinning): that endpoint starts with `initial_rtt` =
//! [`ACK_STALL_WORKAROUND_INITIAL_RTT`] and asks for an explicit `max_ack_delay` of
//! [`ACK_STALL_WORKAROUND_MAX_ACK_DELAY`]. quinn requests min(max_ack_delay, smoothed RTT), so
//! the first ACK_FREQUENCY frame asks for 25 ms; after the first real RTT sample the candidate
//! becomes 40 ms, a change above quinn's 20 % threshold, so quinn sends a second ACK_FREQUENCY.
//! Its receipt re-arms the peer's timer (at a time already past), and the peer ACKs at once.
//! Cost: one spurious Handshake PTO on the requesting side (its timers start from 25 ms). On
//! paths with an RTT below ≈ 30 ms the second frame may never be sent, but there a stall lasts
//! one PTO of a short RTT and the budget rarely asks for thinning. The regression test
//! `ack_frequency_stall_after_handshake` pins the behaviour.

use std::sync::Arc;
use std::time::Duration;

use quinn_proto::congestion::ControllerFactory;
use quinn_proto::{AckFrequencyConfig, Side, TransportConfig, VarInt};

use crate::path::{IP_UDP_HEADER_BYTES, SatellitePath, bdp_bytes};

/// Wire size of an ACK-only packet we budget for: IPv4/UDP 28 + short header ≈ 12 + ACK frame
/// with a few ranges ≈ 24 + AEAD tag 16.
pub const ACK_PACKET_WIRE_BYTES: u64 = 80;

/// Share of the reverse link that ACKs may use before the preset asks the peer to ACK less often.
pub const ACK_BUDGET_SHARE: f64 = 0.05;

/// Largest ACK-eliciting threshold the preset requests: beyond this, loss detection and
/// byte-counting growth see ACKs too rarely.
pub const MAX_ACK_ELICITING_THRESHOLD: u32 = 64;

/// quinn's default initial RTT, used when neither the preset nor the caller sets one.
pub const QUINN_DEFAULT_INITIAL_RTT: Duration = Duration::from_millis(333);

/// Initial RTT of an endpoint that requests ACK thinning: low enough that its first
/// ACK_FREQUENCY frame asks for less than [`ACK_STALL_WORKAROUND_MAX_ACK_DELAY`] / 1.2, so quinn
/// sends a second one after the first RTT sample (see the module docs).
pub const ACK_STALL_WORKAROUND_INITIAL_RTT: Duration = Duration::from_millis(25);

/// `max_ack_delay` requested together with a threshold: above 1.2 × the workaround's initial
/// RTT, and short next to a satellite RTT (it adds to the sender's PTO and to RTT samples of
/// flights smaller than the threshold).
pub const ACK_STALL_WORKAROUND_MAX_ACK_DELAY: Duration = Duration::from_millis(40);

/// At least this many ACKs per base RTT at a full window (BDP): fewer would starve loss
/// detection and byte-counting growth on paths whose BDP is small next to the budget's k.
pub const MIN_ACKS_PER_BDP: u64 = 8;

/// quinn's default stream and connection receive window is smaller than this; the preset
/// never goes below it.
const WINDOW_FLOOR_BYTES: u64 = 1_250_000;

/// Transport parameters of one connection, fully resolved: what the preset chose, as plain
/// numbers a caller can inspect, log or override before [`TransportSettings::to_quinn`].
///
/// Built by [`TransportSettings::for_path`] (or [`SatellitePath::settings`]); the preset may
/// come to set more of quinn's parameters, so the struct is `#[non_exhaustive]`: change
/// fields of a built value instead of writing a struct literal. With the `serde` feature it
/// is `Serialize`, to record what a connection ran with.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use quinn_satellite::{HyblaConfig, SatellitePath, Side};
///
/// let path = SatellitePath::new(250_000_000, 3_000_000, Duration::from_millis(650));
/// let mut settings = path.settings()?;
/// // A 250 Mbit/s download whose ACKs must fit in 5 % of a 3 Mbit/s return link.
/// assert_eq!(settings.server_ack_eliciting_threshold, Some(64));
/// settings.initial_rtt = Duration::from_millis(650); // the caller knows the RTT
/// let server = settings.to_quinn(Side::Server, Arc::new(path.hybla(Side::Server)));
/// # let _ = server;
/// # Ok::<(), quinn_satellite::PathError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct TransportSettings {
    /// RTT assumed before the first sample (handshake timers).
    pub initial_rtt: Duration,
    /// Per-stream receive window (flow control), bytes.
    pub stream_receive_window_bytes: u64,
    /// Connection receive window, bytes.
    pub receive_window_bytes: u64,
    /// Send buffer the application may fill ahead of the congestion window, bytes.
    pub send_window_bytes: u64,
    /// Largest QUIC datagram (UDP payload) both ends send from the start, bytes.
    pub initial_mtu_bytes: u16,
    /// ACK-eliciting threshold the server requests of the client (download ACKs), if any;
    /// None sends no ACK_FREQUENCY request.
    pub server_ack_eliciting_threshold: Option<u32>,
    /// ACK-eliciting threshold the client requests of the server (upload ACKs), if any.
    pub client_ack_eliciting_threshold: Option<u32>,
    /// max_ack_delay requested with the thresholds; None asks for
    /// [`ACK_STALL_WORKAROUND_MAX_ACK_DELAY`] (module docs).
    pub max_ack_delay: Option<Duration>,
    /// quinn's round robin among streams of one priority (its default, true), or, when false,
    /// each stream sent whole in the order they were written: what real-time frames on one
    /// stream each need, or a later frame takes its turn from an earlier one that is late.
    pub send_fairness: bool,
}

impl TransportSettings {
    /// The satellite preset for `path`:
    /// - receive and send windows: 2 × (BDP + bottleneck buffer) at the highest rate the path
    ///   reaches, at least quinn's defaults, so flow control never binds before the congestion
    ///   window does (Hybla's windows may exceed the BDP by the whole buffer);
    /// - datagrams as large as the path MTU allows (MTU − 28), no MTU discovery;
    /// - ACK frequency: each data direction's receiver is asked to ACK every k + 1 packets, k
    ///   from [`ack_threshold`] (ACKs within 5 % of the reverse link, k ≤ 64) and at most
    ///   BDP / [`MIN_ACKS_PER_BDP`] packets; where k = 1 (quinn's default ratio) nothing is
    ///   requested. The requesting side carries the stall workaround (module docs).
    ///
    /// The path is taken as valid ([`SatellitePath::check`] is the caller's job; the
    /// `SatellitePath` methods that build quinn configurations call it).
    pub fn for_path(path: &SatellitePath) -> Self {
        let rtt = path.rtt;
        // Saturating: a path that fails `check`, or a huge buffer, must not overflow (windows
        // are clamped to QUIC's varint range in `to_quinn` anyway).
        let window = |bdp: u64, buffer: u64| bdp.saturating_add(buffer).saturating_mul(2);
        let download_window = window(
            bdp_bytes(path.forward_peak_rate_bps(), rtt),
            path.forward_buffer_bytes(),
        );
        let upload_window = window(
            bdp_bytes(path.return_peak_rate_bps(), rtt),
            path.return_buffer_bytes(),
        );
        let largest = download_window
            .max(WINDOW_FLOOR_BYTES)
            .max(upload_window.max(WINDOW_FLOOR_BYTES));
        let max_datagram_bytes = u64::from(path.mtu_bytes).max(1);
        let thinning = |data_rate_bps: u64, reverse_rate_bps: u64| {
            let bdp_packets = bdp_bytes(data_rate_bps, rtt) / max_datagram_bytes;
            let window_cap = (bdp_packets / MIN_ACKS_PER_BDP).saturating_sub(1);
            let k = ack_threshold(data_rate_bps, reverse_rate_bps, path.mtu_bytes)
                .min(u32::try_from(window_cap).unwrap_or(u32::MAX));
            (k > 1).then_some(k)
        };
        let server_ack_eliciting_threshold = thinning(path.forward_rate_bps, path.return_rate_bps);
        let client_ack_eliciting_threshold = thinning(path.return_rate_bps, path.forward_rate_bps);
        Self {
            initial_rtt: QUINN_DEFAULT_INITIAL_RTT,
            stream_receive_window_bytes: largest,
            receive_window_bytes: largest.max(15_000_000),
            send_window_bytes: largest.max(10_000_000),
            initial_mtu_bytes: (path.mtu_bytes.saturating_sub(IP_UDP_HEADER_BYTES))
                .min(u32::from(u16::MAX)) as u16,
            server_ack_eliciting_threshold,
            client_ack_eliciting_threshold,
            max_ack_delay: (server_ack_eliciting_threshold.is_some()
                || client_ack_eliciting_threshold.is_some())
            .then_some(ACK_STALL_WORKAROUND_MAX_ACK_DELAY),
            send_fairness: true,
        }
    }

    /// quinn's TransportConfig for one side of the connection, with `controller` as its
    /// congestion controller. The side that requests ACK thinning starts from
    /// [`ACK_STALL_WORKAROUND_INITIAL_RTT`] unless its initial RTT was set away from quinn's
    /// default explicitly (module docs: the quinn-proto stall). Everything the preset does
    /// not choose, the idle timeout among them, keeps quinn's default.
    pub fn to_quinn(
        &self,
        side: Side,
        controller: Arc<dyn ControllerFactory + Send + Sync>,
    ) -> TransportConfig {
        let mut config = TransportConfig::default();
        config
            .initial_rtt(self.initial_rtt)
            .stream_receive_window(varint(self.stream_receive_window_bytes))
            .receive_window(varint(self.receive_window_bytes))
            .send_window(self.send_window_bytes)
            .initial_mtu(self.initial_mtu_bytes)
            .min_mtu(self.initial_mtu_bytes.min(1200))
            .mtu_discovery_config(None)
            .send_fairness(self.send_fairness)
            .congestion_controller_factory(controller);
        let threshold = match side {
            Side::Server => self.server_ack_eliciting_threshold,
            Side::Client => self.client_ack_eliciting_threshold,
        };
        if let Some(threshold) = threshold {
            request_ack_thinning(
                &mut config,
                threshold,
                self.max_ack_delay,
                self.initial_rtt != QUINN_DEFAULT_INITIAL_RTT,
            );
        }
        config
    }
}

/// Asks the peer (quinn's ACK frequency extension) to ACK every `threshold` + 1 ack-eliciting
/// packets, at most `max_ack_delay` apart ([`ACK_STALL_WORKAROUND_MAX_ACK_DELAY`] if None),
/// with the quinn-proto stall workaround (module docs): the initial RTT drops to
/// [`ACK_STALL_WORKAROUND_INITIAL_RTT`] unless `initial_rtt_chosen` (the caller set it on
/// purpose). For endpoints that build their own `TransportConfig` but want the preset's ACK
/// thinning without knowing the path.
pub fn request_ack_thinning(
    config: &mut TransportConfig,
    threshold: u32,
    max_ack_delay: Option<Duration>,
    initial_rtt_chosen: bool,
) {
    if !initial_rtt_chosen {
        config.initial_rtt(ACK_STALL_WORKAROUND_INITIAL_RTT);
    }
    let mut ack = AckFrequencyConfig::default();
    ack.ack_eliciting_threshold(VarInt::from_u32(threshold))
        .max_ack_delay(Some(
            max_ack_delay.unwrap_or(ACK_STALL_WORKAROUND_MAX_ACK_DELAY),
        ));
    config.ack_frequency_config(Some(ack));
}

fn varint(value: u64) -> VarInt {
    VarInt::from_u64(value.min(VarInt::MAX.into_inner())).expect("clamped to VarInt::MAX")
}

/// Packets the data receiver may get before it must ACK, so that ACKs of a full-rate data flow
/// take at most [`ACK_BUDGET_SHARE`] of the reverse link. quinn's threshold k means "ACK after
/// more than k packets", i.e. one ACK per k + 1 packets.
pub fn ack_threshold(data_rate_bps: u64, reverse_rate_bps: u64, mtu_bytes: u32) -> u32 {
    let data_packets_per_s = data_rate_bps as f64 / (f64::from(mtu_bytes) * 8.0);
    let acks_per_s =
        reverse_rate_bps as f64 * ACK_BUDGET_SHARE / (ACK_PACKET_WIRE_BYTES as f64 * 8.0);
    let packets_per_ack = (data_packets_per_s / acks_per_s).ceil();
    (packets_per_ack as u32)
        .saturating_sub(1)
        .clamp(1, MAX_ACK_ELICITING_THRESHOLD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_geo_path_keeps_quinns_default_ack_ratio() {
        // 10/10 Mbit/s: 833 packets/s vs 781 ACKs/s of budget → one ACK per 2 packets.
        assert_eq!(ack_threshold(10_000_000, 10_000_000, 1500), 1);
    }

    #[test]
    fn asymmetric_paths_ack_less_often() {
        // 250/3: 20 833 packets/s, budget 234 ACKs/s → one ACK per 89 → capped at 64.
        assert_eq!(ack_threshold(250_000_000, 3_000_000, 1500), 64);
        // 50/10: 4 167 packets/s, budget 781 ACKs/s → one ACK per 6 → threshold 5.
        assert_eq!(ack_threshold(50_000_000, 10_000_000, 1500), 5);
    }

    #[test]
    fn windows_cover_bdp_plus_buffer_twice() {
        let path = SatellitePath::new(250_000_000, 3_000_000, Duration::from_millis(650));
        let s = TransportSettings::for_path(&path);
        // BDP = 250e6 × 0.65 / 8 = 20 312 500; 1 BDP buffer → 2 × 40 625 000.
        assert_eq!(s.stream_receive_window_bytes, 81_250_000);
        assert_eq!(s.receive_window_bytes, 81_250_000);
        assert_eq!(s.initial_mtu_bytes, 1472);
        // Downloads: ACKs within 5 % of 3 Mbit/s → k = 64 (see above); uploads at 3 Mbit/s
        // need no thinning on a 250 Mbit/s forward link.
        assert_eq!(s.server_ack_eliciting_threshold, Some(64));
        assert_eq!(s.client_ack_eliciting_threshold, None);
        assert_eq!(s.max_ack_delay, Some(ACK_STALL_WORKAROUND_MAX_ACK_DELAY));
    }

    /// Audit finding: 2 × (BDP + buffer) overflowed (a panic in debug builds, a wrapped,
    /// tiny window in release) for a large buffer; this is a public library, so no input may
    /// panic, a path that fails `check` included.
    #[test]
    fn windows_saturate_instead_of_overflowing() {
        let path = SatellitePath::new(u64::MAX, u64::MAX, Duration::MAX)
            .with_buffers(u64::MAX, u64::MAX)
            .with_peak_rates(u64::MAX, u64::MAX);
        let s = TransportSettings::for_path(&path);
        assert_eq!(s.stream_receive_window_bytes, u64::MAX);
        assert_eq!(s.receive_window_bytes, u64::MAX);
        assert_eq!(s.send_window_bytes, u64::MAX);
        // A buffer near u64::MAX on an ordinary path: the sum alone overflowed.
        let path = SatellitePath::new(10_000_000, 1_000_000, Duration::from_millis(600))
            .with_buffers(u64::MAX - 1, 100_000);
        assert_eq!(
            TransportSettings::for_path(&path).stream_receive_window_bytes,
            u64::MAX
        );
        // Invalid MTUs (which `check` refuses) do not divide by zero or underflow.
        for mtu in [0, 1, 27] {
            let path =
                SatellitePath::new(10_000_000, 1_000_000, Duration::from_millis(600)).with_mtu(mtu);
            assert_eq!(TransportSettings::for_path(&path).initial_mtu_bytes, 0);
        }
        // And the quinn configuration clamps the windows to QUIC's varint range.
        let path = SatellitePath::new(u64::MAX, u64::MAX, Duration::MAX);
        let factory = Arc::new(hybla::HyblaConfig::default());
        let _ = TransportSettings::for_path(&path).to_quinn(Side::Server, factory);
    }

    #[test]
    fn thinning_keeps_eight_acks_per_window() {
        // 20/1 Mbit/s at 50 ms: the budget asks for k = 21 (1 667 packets/s vs 78 ACKs/s → 22),
        // but the BDP is 83 packets → k ≤ 83 / 8 − 1 = 9.
        let path = SatellitePath::new(20_000_000, 1_000_000, Duration::from_millis(50));
        assert_eq!(ack_threshold(20_000_000, 1_000_000, 1500), 21);
        let s = TransportSettings::for_path(&path);
        assert_eq!(s.server_ack_eliciting_threshold, Some(9));
    }

    #[test]
    fn small_paths_keep_quinns_window_floor() {
        let path = SatellitePath::new(1_000_000, 1_000_000, Duration::from_millis(20));
        let s = TransportSettings::for_path(&path);
        assert_eq!(s.stream_receive_window_bytes, WINDOW_FLOOR_BYTES);
        assert_eq!(s.receive_window_bytes, 15_000_000);
        assert_eq!(s.send_window_bytes, 10_000_000);
        assert_eq!(s.server_ack_eliciting_threshold, None);
        assert_eq!(s.max_ack_delay, None);
    }

    #[test]
    fn the_thinning_side_carries_the_stall_workaround() {
        let path = SatellitePath::new(250_000_000, 3_000_000, Duration::from_millis(650));
        let s = TransportSettings::for_path(&path);
        let factory = Arc::new(hybla::HyblaConfig::default());
        // Only observable through Debug in quinn-proto 0.11: the server (which asks for
        // thinning) starts at 25 ms, the client at quinn's 333 ms.
        let server = format!("{:?}", s.to_quinn(Side::Server, factory.clone()));
        let client = format!("{:?}", s.to_quinn(Side::Client, factory));
        assert!(server.contains("initial_rtt: 25ms"), "{server}");
        assert!(client.contains("initial_rtt: 333ms"), "{client}");
        assert!(server.contains("ack_eliciting_threshold: 64"), "{server}");
    }

    #[test]
    fn to_quinn_sends_streams_in_write_order_when_asked() {
        let path = SatellitePath::new(50_000_000, 5_000_000, Duration::from_millis(600));
        let mut settings = TransportSettings::for_path(&path);
        let factory = Arc::new(hybla::HyblaConfig::default());
        let config = format!("{:?}", settings.to_quinn(Side::Server, factory.clone()));
        assert!(config.contains("send_fairness: true"), "{config}");
        settings.send_fairness = false;
        let config = format!("{:?}", settings.to_quinn(Side::Server, factory));
        assert!(config.contains("send_fairness: false"), "{config}");
    }

    /// Review finding (issue 22): `to_quinn` set no idle timeout at all (only the lab wants
    /// that), so a user following the docs got connections that never time out.
    #[test]
    fn to_quinn_keeps_quinns_idle_timeout() {
        let path = SatellitePath::new(50_000_000, 5_000_000, Duration::from_millis(600));
        let settings = TransportSettings::for_path(&path);
        let default = format!("{:?}", TransportConfig::default());
        assert!(
            default.contains("max_idle_timeout: Some(30000)"),
            "{default}"
        );
        for side in [Side::Server, Side::Client] {
            let factory = Arc::new(hybla::HyblaConfig::default());
            let config = format!("{:?}", settings.to_quinn(side, factory));
            assert!(config.contains("max_idle_timeout: Some(30000)"), "{config}");
        }
    }
}
