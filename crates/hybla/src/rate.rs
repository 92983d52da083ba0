//! Bandwidth-delay product estimate from the first flights (\[Caini2004\] §3.3.1: "by observing the
//! delay between the receptions of ACKs that correspond to consecutively transmitted segments,
//! it is possible to calculate at the connection start up a rough estimate of the channel
//! bandwidth-delay product").
//!
//! Delivery-rate sampling per ACK frame, as BBR does: rate = bytes delivered between an
//! earlier ACK frame and this one / max(ACK time elapsed, send time elapsed). Taking the
//! larger of the two elapsed times means a paced or application-limited flight never reads as
//! faster than it was sent; a burst (the initial window) spreads out at the bottleneck and
//! measures it. Each sample spans the last few ACK frames (at least four packets); the
//! estimate is the maximum over a sliding window.

use std::time::Duration;

use crate::min_filter::WindowedMax;

/// Minimum data between the two ends of a sample, in packets: fewer is ACK-timing noise.
const MIN_SAMPLE_PACKETS: u64 = 4;

/// ACK frames a sample may span.
const SPAN_FRAMES: usize = 8;

/// How long the highest rate is remembered as the bottleneck's capacity: longer than the
/// pipe estimate's window, so that a competitor that took part of the link for a few seconds
/// does not make the flow forget what the link carries.
pub const CAPACITY_WINDOW: Duration = Duration::from_secs(10);

/// One closed ACK frame: when, how much had been delivered, newest send time acknowledged.
#[derive(Debug, Clone, Copy)]
struct Frame {
    acked_at: Duration,
    delivered_bytes: u64,
    newest_sent: Duration,
    /// Whether the application limited sending after this frame: a sample from here spans
    /// the time the sender waited for data.
    app_limited: bool,
}

/// Delivery-rate estimator: the maximum over a sliding window of per-frame samples.
#[derive(Debug, Clone)]
pub struct DeliveryRate {
    delivered_bytes: u64,
    /// Largest send time among packets acknowledged so far.
    newest_sent: Duration,
    /// The last SPAN_FRAMES frames, oldest first.
    frames: std::collections::VecDeque<Frame>,
    max_rate_bytes_per_s: WindowedMax,
    /// The same samples' maximum over [`CAPACITY_WINDOW`].
    capacity_bytes_per_s: WindowedMax,
    /// (ACK time, delivered bytes) checkpoints spanning at least the last `horizon`, oldest
    /// first: the recent delivery rate behind the loss floor.
    recent: std::collections::VecDeque<(Duration, u64)>,
    /// Whether a sample has started at an ACK frame after which the window, not the
    /// application, limited sending (see [`Self::window_limited_sampled`]).
    window_limited_sampled: bool,
}

impl Default for DeliveryRate {
    fn default() -> Self {
        Self::new(Duration::from_secs(10))
    }
}

impl DeliveryRate {
    /// An estimator whose maximum forgets samples older than `window`.
    pub fn new(window: Duration) -> Self {
        Self {
            delivered_bytes: 0,
            newest_sent: Duration::ZERO,
            frames: std::collections::VecDeque::with_capacity(SPAN_FRAMES + 1),
            max_rate_bytes_per_s: WindowedMax::new(window),
            capacity_bytes_per_s: WindowedMax::new(CAPACITY_WINDOW.max(window)),
            recent: std::collections::VecDeque::new(),
            window_limited_sampled: false,
        }
    }

    /// Records one newly acknowledged packet.
    pub fn on_ack(&mut self, sent: Duration, bytes: u64) {
        self.delivered_bytes += bytes;
        self.newest_sent = self.newest_sent.max(sent);
    }

    /// Closes one ACK frame at `now`; `mss_bytes` sets the minimum sample size, `horizon` how
    /// far back [`Self::recent_rate_bytes_per_s`] looks (one base RTT: the last round);
    /// `app_limited` whether the application, not the window, limits sending after it.
    pub fn on_end_acks(
        &mut self,
        now: Duration,
        mss_bytes: u64,
        horizon: Duration,
        app_limited: bool,
    ) {
        self.recent.push_back((now, self.delivered_bytes));
        // Keep one checkpoint at or beyond the horizon so the span covers it whole.
        while self.recent.len() > 2 && self.recent[1].0 + horizon <= now {
            self.recent.pop_front();
        }
        // The oldest frame that still leaves at least MIN_SAMPLE_PACKETS in the sample.
        let sample = self.frames.iter().find_map(|f| {
            let bytes = self.delivered_bytes - f.delivered_bytes;
            let elapsed = (now - f.acked_at).max(self.newest_sent.saturating_sub(f.newest_sent));
            (bytes >= MIN_SAMPLE_PACKETS * mss_bytes && !elapsed.is_zero())
                .then(|| (bytes as f64 / elapsed.as_secs_f64(), f.app_limited))
        });
        if let Some((rate, from_app_limited)) = sample {
            self.max_rate_bytes_per_s.update(now, rate);
            self.window_limited_sampled |= !from_app_limited;
        }
        // The capacity: rates over whole rounds only. A sample of a few frames reads jitter's
        // bunched deliveries (a delayed packet releases the ones behind it at once) as a faster
        // link; a round averages them out.
        if let (Some(&(t0, _)), Some(rate)) = (self.recent.front(), self.recent_rate_bytes_per_s())
            && now >= t0 + horizon
        {
            self.capacity_bytes_per_s.update(now, rate);
        }
        if self.frames.len() == SPAN_FRAMES {
            self.frames.pop_front();
        }
        self.frames.push_back(Frame {
            acked_at: now,
            delivered_bytes: self.delivered_bytes,
            newest_sent: self.newest_sent,
            app_limited,
        });
    }

    /// Delivery rate over the last `horizon` (or what has been seen of it), bytes per second:
    /// what the flow actually got in the last round, not its best moment.
    pub fn recent_rate_bytes_per_s(&self) -> Option<f64> {
        let (&(t0, d0), &(t1, d1)) = (self.recent.front()?, self.recent.back()?);
        let span = t1.checked_sub(t0).filter(|s| !s.is_zero())?;
        Some((d1 - d0) as f64 / span.as_secs_f64())
    }

    /// Whether a sample has measured a flight the window limited from its start. Until one
    /// has, every sample may span a time the sender waited for the application (after a
    /// first flight of one request packet: 4 packets over 600 ms, a 3 kB pipe where 250
    /// packets fit), and the highest of them is no reading of the bottleneck.
    pub fn window_limited_sampled(&self) -> bool {
        self.window_limited_sampled
    }

    /// Highest delivery rate measured within the window, bytes per second.
    pub fn max_rate_bytes_per_s(&self) -> Option<f64> {
        self.max_rate_bytes_per_s.get()
    }

    /// Highest delivery rate over a whole round within the capacity window (10 s), bytes per second:
    /// what the bottleneck gave this flow at best, its capacity when the flow had it alone.
    pub fn capacity_bytes_per_s(&self) -> Option<f64> {
        self.capacity_bytes_per_s.get()
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
            r.on_end_acks(now, 1250, Duration::from_millis(500), false);
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
            r.on_end_acks(
                Duration::from_millis(500) + US(4000 * i + 1000),
                1250,
                Duration::from_millis(500),
                false,
            );
        }
        let rate = r.max_rate_bytes_per_s().unwrap();
        assert!((rate - 1250.0 / 0.004).abs() < 1.0, "{rate}");
    }

    #[test]
    fn recent_rate_covers_the_last_round_only() {
        // 1 MB/s for 2 s, then 0.25 MB/s for 1 s, one 1000-byte ACK per ms / per 4 ms.
        let mut r = DeliveryRate::default();
        let horizon = Duration::from_millis(500);
        let mut t = Duration::ZERO;
        for _ in 0..2000 {
            t += US(1000);
            r.on_ack(t, 1000);
            r.on_end_acks(t, 1000, horizon, false);
        }
        assert!((r.recent_rate_bytes_per_s().unwrap() - 1e6).abs() < 1.0);
        for _ in 0..250 {
            t += US(4000);
            r.on_ack(t, 1000);
            r.on_end_acks(t, 1000, horizon, false);
        }
        assert!((r.recent_rate_bytes_per_s().unwrap() - 0.25e6).abs() < 1.0);
        // The maximum still remembers the fast period.
        assert!((r.max_rate_bytes_per_s().unwrap() - 1e6).abs() < 1.0);
    }
}
