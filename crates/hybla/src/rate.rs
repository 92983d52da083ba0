//! Bandwidth-delay product estimate from the first flights (seed 002 §3.3.1: "by observing the
//! delay between the receptions of ACKs that correspond to consecutively transmitted segments,
//! it is possible to calculate at the connection start up a rough estimate of the channel
//! bandwidth-delay product").
//!
//! Delivery-rate sampling per ACK frame, as BBR does: within a round (the ACKs of packets sent
//! before the round's first ACK arrived), rate = bytes delivered since the round's first ACK /
//! max(ACK time elapsed, send time elapsed). Taking the larger of the two elapsed times means a
//! paced or application-limited flight never reads as faster than it was sent; a burst (the
//! initial window) spreads out at the bottleneck and measures it. The estimate is the maximum
//! over rounds.

use std::time::Duration;

/// Minimum data between the two ends of a sample, in packets: fewer is ACK-timing noise.
const MIN_SAMPLE_PACKETS: u64 = 4;

/// Delivery-rate estimator for the start-up phase.
#[derive(Debug, Clone, Default)]
pub struct DeliveryRate {
    delivered_bytes: u64,
    /// Largest send time among packets acknowledged so far.
    last_acked_sent: Duration,
    /// (ACK time, delivered bytes, send time of the newest acked packet) at the round's start.
    round_start: Option<(Duration, u64, Duration)>,
    max_rate_bytes_per_s: Option<f64>,
}

impl DeliveryRate {
    /// Records one newly acknowledged packet.
    pub fn on_ack(&mut self, sent: Duration, bytes: u64) {
        self.delivered_bytes += bytes;
        self.last_acked_sent = self.last_acked_sent.max(sent);
    }

    /// Closes one ACK frame at `now`; `mss_bytes` sets the minimum sample size.
    pub fn on_end_acks(&mut self, now: Duration, mss_bytes: u64) {
        let Some((t0, delivered0, sent0)) = self.round_start else {
            self.round_start = Some((now, self.delivered_bytes, self.last_acked_sent));
            return;
        };
        if self.last_acked_sent > t0 {
            // A packet sent after this round began is acknowledged: a new round.
            self.round_start = Some((now, self.delivered_bytes, self.last_acked_sent));
            return;
        }
        let bytes = self.delivered_bytes - delivered0;
        let elapsed = (now - t0).max(self.last_acked_sent.saturating_sub(sent0));
        if bytes >= MIN_SAMPLE_PACKETS * mss_bytes && !elapsed.is_zero() {
            let rate = bytes as f64 / elapsed.as_secs_f64();
            self.max_rate_bytes_per_s =
                Some(self.max_rate_bytes_per_s.map_or(rate, |m| m.max(rate)));
        }
    }

    /// Highest delivery rate measured, bytes per second.
    pub fn max_rate_bytes_per_s(&self) -> Option<f64> {
        self.max_rate_bytes_per_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: fn(u64) -> Duration = Duration::from_micros;

    #[test]
    fn a_burst_measures_the_bottleneck() {
        // Ten 1250-byte packets sent together at t = 0 through a 10 Mbit/s bottleneck (1 ms each)
        // with 500 ms RTT; the receiver ACKs every second packet.
        let mut r = DeliveryRate::default();
        for pair in 0..5u64 {
            let now = Duration::from_millis(500) + US(1000 * (2 * pair + 2));
            r.on_ack(Duration::ZERO, 1250);
            r.on_ack(Duration::ZERO, 1250);
            r.on_end_acks(now, 1250);
        }
        // 8 packets (10 000 B) over 8 ms = 1.25 MB/s = 10 Mbit/s.
        let rate = r.max_rate_bytes_per_s().unwrap();
        assert!((rate - 1.25e6).abs() < 1.0, "{rate}");
    }

    #[test]
    fn a_paced_flight_is_not_mistaken_for_a_fast_link() {
        // Packets sent 4 ms apart, the link takes 1 ms each: ACKs arrive 4 ms apart too.
        let mut r = DeliveryRate::default();
        for i in 0..10u64 {
            r.on_ack(US(4000 * i), 1250);
            r.on_end_acks(Duration::from_millis(500) + US(4000 * i + 1000), 1250);
        }
        let rate = r.max_rate_bytes_per_s().unwrap();
        assert!((rate - 1250.0 / 0.004).abs() < 1.0, "{rate}");
    }
}
