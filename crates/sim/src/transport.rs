//! The satellite transport preset for a modelled path: what `quinn_satellite` computes from a
//! path description, fed from the `netsim` model (scheduled rates, queue limits, per-flow RTTs).
//! The settings themselves, their reasons and the quinn-proto ACK-frequency stall workaround
//! live in `quinn_satellite::settings`, the one place for them, which applications use too.

use std::sync::Arc;

use netsim::{PathConfig, QueueLimit};
use quinn_proto::congestion::ControllerFactory;
use quinn_proto::{Side, TransportConfig};
use quinn_satellite::{SatellitePath, TransportSettings};

/// A run's quinn transport for one end: `settings` for `side` with `controller`, and no idle
/// timeout — a run's applications may idle on purpose, and the run's duration, not quinn,
/// ends a connection (`quinn_satellite` keeps quinn's 30 s for its users). Both backends
/// build their transports here (`sim::driver`, `lab::emu_backend`).
pub fn run_transport(
    settings: &TransportSettings,
    side: Side,
    controller: Arc<dyn ControllerFactory + Send + Sync>,
) -> TransportConfig {
    let mut transport = settings.to_quinn(side, controller);
    transport.max_idle_timeout(None);
    transport
}

/// The satellite preset for flow `flow` of `path` (`quinn_satellite::TransportSettings::for_path`):
/// windows for the highest scheduled rate of each direction and its bottleneck buffer, ACK
/// thinning from the rates the path starts with, at the flow's base RTT (its access delay
/// included).
pub fn satellite_preset(path: &PathConfig, flow: usize) -> TransportSettings {
    let buffer = |link: &netsim::LinkConfig| -> u64 {
        match link.queue {
            QueueLimit::Packets(p) => p.saturating_mul(u64::from(path.mtu_bytes)),
            queue => queue
                .limit_bytes(link.rate_bps, path.base_rtt())
                .expect("every limit but packets has a size in bytes"),
        }
    };
    let description = SatellitePath::new(
        path.forward.rate_bps,
        path.return_link.rate_bps,
        path.flow_base_rtt(flow),
    )
    .with_peak_rates(
        path.forward.peak_rate_bps(),
        path.return_link.peak_rate_bps(),
    )
    .with_buffers(buffer(&path.forward), buffer(&path.return_link))
    .with_mtu(path.mtu_bytes);
    TransportSettings::for_path(&description)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// `quinn_satellite` keeps its own copy of the path facts so that it stands alone for its
    /// users (it depends on no lab crate); the lab's are netsim's. The two must agree, or the
    /// preset would size windows for another path than the one modelled.
    #[test]
    fn quinn_satellite_and_netsim_agree_on_the_path_facts() {
        assert_eq!(
            quinn_satellite::IP_UDP_HEADER_BYTES,
            netsim::IP_UDP_HEADER_BYTES
        );
        assert_eq!(
            quinn_satellite::DEFAULT_MTU_BYTES,
            netsim::DEFAULT_MTU_BYTES
        );
        assert_eq!(quinn_satellite::MIN_MTU_BYTES, netsim::MIN_MTU_BYTES);
        assert_eq!(quinn_satellite::MAX_MTU_BYTES, netsim::MAX_MTU_BYTES);
        let ms = Duration::from_millis;
        for (rate_bps, rtt) in [(1, ms(1)), (10_000_000, ms(600)), (u64::MAX, ms(650))] {
            assert_eq!(
                quinn_satellite::bdp_bytes(rate_bps, rtt),
                netsim::bdp_bytes(rate_bps, rtt),
                "{rate_bps} bit/s over {rtt:?}"
            );
        }
    }

    /// A run's connections never time out (as before quinn_satellite kept quinn's 30 s).
    #[test]
    fn run_transports_have_no_idle_timeout() {
        let path = SatellitePath::new(10_000_000, 1_000_000, Duration::from_millis(600));
        let settings = TransportSettings::for_path(&path);
        for side in [Side::Server, Side::Client] {
            let controller = Arc::new(hybla::HyblaConfig::default());
            let transport = format!("{:?}", run_transport(&settings, side, controller));
            assert!(transport.contains("max_idle_timeout: None"), "{transport}");
        }
    }

    #[test]
    fn windows_follow_the_highest_scheduled_rate_and_the_buffer() {
        let ms = Duration::from_millis;
        let mut forward = netsim::LinkConfig::new(10_000_000, ms(300));
        forward.schedule = vec![netsim::ScheduleStep {
            at: Duration::from_secs(10),
            rate_bps: Some(40_000_000),
            delay: None,
            loss: None,
        }];
        forward.queue = QueueLimit::Packets(100);
        let path = PathConfig {
            forward,
            return_link: netsim::LinkConfig::new(10_000_000, ms(300)),
            mtu_bytes: 1500,
            access_delays: vec![Duration::ZERO],
        };
        let s = satellite_preset(&path, 0);
        // 40 Mbit/s × 0.6 s / 8 = 3 000 000 + 100 × 1500 → 2 × 3 150 000.
        assert_eq!(s.stream_receive_window_bytes, 6_300_000);
        // Thinning from the starting rate: 10/10 Mbit/s keeps quinn's ratio.
        assert_eq!(s.server_ack_eliciting_threshold, None);
    }
}
