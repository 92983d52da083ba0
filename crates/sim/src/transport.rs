//! QUIC transport settings for satellite paths: the preset and its translation to quinn.
//!
//! quinn's defaults are tuned for terrestrial paths and cap a GEO transfer long before the
//! congestion controller does: a 1.25 MB stream receive window allows at most ~16 Mbit/s at
//! 600 ms RTT, and one ACK per two packets does not fit in a 3 Mbit/s return link carrying a
//! 250 Mbit/s download. [`TransportSettings::satellite_preset`] sizes the windows from the path.
//!
//! ACK frequency is *not* thinned by default, because of a bug in quinn-proto 0.11.19 found here.
//! `Connection::poll_transmit` calls `timers.stop(Timer::MaxAckDelay)` whenever it sends an
//! ACK in *any* packet-number space. That timer belongs to the Data space only. At the end of
//! the handshake the client receives the server's first 1-RTT packet (carrying ACK_FREQUENCY),
//! arms the Data-space timer, then sends its Initial/Handshake ACKs in the same call. That stops
//! the timer while the Data space still records a pending ack-eliciting packet, so no timer is
//! armed again until more than k packets arrive. With a requested threshold k > 1 and a first
//! flight of k packets or fewer, nothing is ACKed until the server's PTO. Measured with the
//! quinn-proto source patched to log: sat, k = 10, the 7-packet first flight waited 1.5 s;
//! kuhn-large took 12.8 s for 100 MB instead of 10.7 s, and the whole difference is that
//! start-up stall. With k = 1 (quinn's default) the next packet forces the ACK. The preset
//! therefore keeps one ACK per two packets, and scenarios can still request a threshold. The
//! price is on the most asymmetric paths: ACK-only packets are about 62 bytes on the wire, so a
//! 3 Mbit/s return link carries about 6 000 ACKs/s, i.e. at most about 145 Mbit/s of 1500-byte
//! data at one ACK per two packets. kuhn-large and picoquic-sat (250/3) are ACK-clock bound
//! there, whichever controller runs.

use std::sync::Arc;
use std::time::Duration;

use quinn_proto::congestion::ControllerFactory;
use quinn_proto::{AckFrequencyConfig, TransportConfig, VarInt};
use serde::Serialize;

use netsim::{IP_UDP_HEADER_BYTES, PathConfig, QueueLimit, bdp_bytes};

/// Wire size of an ACK-only packet we budget for: IPv4/UDP 28 + short header ≈ 12 + ACK frame
/// with a few ranges ≈ 24 + AEAD tag 16.
pub const ACK_PACKET_WIRE_BYTES: u64 = 80;

/// Share of the reverse link that ACKs may use before the preset asks the peer to ACK less often.
pub const ACK_BUDGET_SHARE: f64 = 0.05;

/// Largest ACK-eliciting threshold the preset requests: beyond this, loss detection and
/// byte-counting growth see ACKs too rarely.
pub const MAX_ACK_ELICITING_THRESHOLD: u32 = 64;

/// quinn's default initial RTT, used when neither the preset nor the scenario sets one.
pub const QUINN_DEFAULT_INITIAL_RTT: Duration = Duration::from_millis(333);

/// Transport parameters of one flow, fully resolved (no "auto" left).
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// max_ack_delay requested with the thresholds; None keeps the peer's own (25 ms).
    pub max_ack_delay: Option<Duration>,
}

impl TransportSettings {
    /// The satellite preset for flow `flow` of `path`:
    /// - receive and send windows: 2 × (BDP + bottleneck buffer) at the highest scheduled rate of
    ///   the flow's base RTT, at least quinn's defaults, so flow control never binds before the
    ///   congestion window does (Hybla's windows may exceed the BDP by the whole buffer);
    /// - datagrams as large as the path MTU allows (MTU − 28), no MTU discovery;
    /// - ACK frequency: no request (quinn's standard ACK per two packets); scenarios can ask for
    ///   a threshold explicitly, and [`ack_threshold`] computes the one that keeps ACKs within
    ///   5 % of the reverse link.
    pub fn satellite_preset(path: &PathConfig, flow: usize) -> Self {
        let rtt = path.flow_base_rtt(flow);
        let window = |forward: &netsim::LinkConfig| -> u64 {
            let max_rate = forward
                .schedule
                .iter()
                .filter_map(|s| s.rate_bps)
                .chain([forward.rate_bps])
                .max()
                .unwrap_or(forward.rate_bps);
            let bdp = bdp_bytes(max_rate, rtt);
            let buffer = match forward.queue {
                QueueLimit::Bytes(b) => b,
                QueueLimit::Packets(p) => p.saturating_mul(u64::from(path.mtu_bytes)),
                QueueLimit::BdpMultiple(m) => {
                    (bdp_bytes(forward.rate_bps, path.base_rtt()) as f64 * m) as u64
                }
            };
            2 * (bdp + buffer)
        };
        let download_window = window(&path.forward).max(1_250_000);
        let upload_window = window(&path.return_link).max(1_250_000);
        let largest = download_window.max(upload_window);
        Self {
            initial_rtt: QUINN_DEFAULT_INITIAL_RTT,
            stream_receive_window_bytes: largest,
            receive_window_bytes: largest.max(15_000_000),
            send_window_bytes: largest.max(10_000_000),
            initial_mtu_bytes: (path.mtu_bytes - IP_UDP_HEADER_BYTES).min(u32::from(u16::MAX))
                as u16,
            // See the module docs: quinn-proto 0.11.19 stalls with thresholds above 1.
            server_ack_eliciting_threshold: None,
            client_ack_eliciting_threshold: None,
            max_ack_delay: None,
        }
    }

    /// quinn's TransportConfig for one side of the flow.
    pub fn to_quinn(
        &self,
        is_server: bool,
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
            .max_idle_timeout(None)
            .congestion_controller_factory(controller);
        let threshold = if is_server {
            self.server_ack_eliciting_threshold
        } else {
            self.client_ack_eliciting_threshold
        };
        if let Some(threshold) = threshold {
            let mut ack = AckFrequencyConfig::default();
            ack.ack_eliciting_threshold(VarInt::from_u32(threshold))
                .max_ack_delay(self.max_ack_delay);
            config.ack_frequency_config(Some(ack));
        }
        config
    }
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
        let ms = Duration::from_millis;
        let path = PathConfig {
            forward: netsim::LinkConfig::new(250_000_000, ms(325)),
            return_link: netsim::LinkConfig::new(3_000_000, ms(325)),
            mtu_bytes: 1500,
            access_delays: vec![Duration::ZERO],
        };
        let s = TransportSettings::satellite_preset(&path, 0);
        // BDP = 250e6 × 0.65 / 8 = 20 312 500; 1 BDP buffer → 2 × 40 625 000.
        assert_eq!(s.stream_receive_window_bytes, 81_250_000);
        assert_eq!(s.initial_mtu_bytes, 1472);
    }
}
