//! Random Early Detection (Floyd & Jacobson 1993), as used by \[Caini2004\] §4.

use std::time::Duration;

use crate::config::RedConfig;
use crate::rng::Uniform;

/// RED's average-queue estimate and drop spacing counter.
#[derive(Debug, Clone)]
pub struct Red {
    config: RedConfig,
    average_packets: f64,
    /// Arrivals since the last early drop; -1 while the average is below the min threshold.
    count: i64,
    /// While the queue is empty: the time up to which the average has been decayed for the
    /// idle period (when the queue emptied, then each arrival that found it still empty).
    /// Only a packet actually queued ends the idle period (Floyd & Jacobson 1993: the idle
    /// time runs until a packet is queued), so an early drop on an empty queue keeps it.
    idle_since: Option<Duration>,
}

impl Red {
    /// A RED queue with an empty history.
    pub fn new(config: RedConfig) -> Self {
        Self {
            config,
            average_packets: 0.0,
            count: -1,
            idle_since: Some(Duration::ZERO),
        }
    }

    /// Current average queue estimate, packets.
    pub fn average_packets(&self) -> f64 {
        self.average_packets
    }

    /// Records that the buffer drained completely at `at`.
    pub fn on_idle(&mut self, at: Duration) {
        self.idle_since.get_or_insert(at);
    }

    /// Records that an arrival was admitted to the buffer: the idle period, if any, is over.
    pub fn on_enqueue(&mut self) {
        self.idle_since = None;
    }

    /// Decides whether to drop an arrival finding `queue_packets` in the buffer.
    /// `packet_time` is the serialization time of a typical (MTU-sized) packet, used to age the
    /// average over an idle period as if that many small packets had arrived to an empty queue.
    pub fn should_drop(
        &mut self,
        now: Duration,
        queue_packets: u64,
        packet_time: Duration,
        rng: &mut Uniform,
    ) -> bool {
        let w = self.config.weight;
        if let Some(since) = &mut self.idle_since
            && !packet_time.is_zero()
        {
            // avg ← (1 − w)^m·avg, m = idle time / typical packet time. The idle period goes
            // on until a packet is queued (`on_enqueue`); this arrival may yet be dropped, so
            // only the time up to now is accounted for.
            let m = now.saturating_sub(*since).as_secs_f64() / packet_time.as_secs_f64();
            self.average_packets *= (1.0 - w).powf(m);
            *since = now.max(*since);
        }
        // avg ← (1 − w)·avg + w·q
        self.average_packets = (1.0 - w) * self.average_packets + w * queue_packets as f64;
        let (min, max) = (
            self.config.min_threshold_packets,
            self.config.max_threshold_packets,
        );
        if self.average_packets < min {
            self.count = -1;
            return false;
        }
        if self.average_packets >= max {
            self.count = 0;
            return true;
        }
        self.count += 1;
        // pb = max_p·(avg − min)/(max − min); pa = pb / (1 − count·pb)
        let pb = self.config.max_probability * (self.average_packets - min) / (max - min);
        let denominator = 1.0 - self.count as f64 * pb;
        let pa = if denominator <= 0.0 {
            1.0
        } else {
            pb / denominator
        };
        if rng.chance(pa) {
            self.count = 0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_min_threshold_never_drops() {
        let mut red = Red::new(RedConfig::default());
        let mut rng = Uniform::new(1, 1);
        let t = Duration::from_micros(100);
        assert!((0..10_000).all(|i| !red.should_drop(t * i, 4, t, &mut rng)));
        assert!(red.average_packets() < 5.0);
    }

    #[test]
    fn above_max_threshold_always_drops() {
        let mut red = Red::new(RedConfig {
            weight: 1.0,
            ..RedConfig::default()
        });
        let mut rng = Uniform::new(1, 1);
        let t = Duration::from_micros(100);
        assert!((0..1000).all(|i| red.should_drop(t * i, 20, t, &mut rng)));
    }

    #[test]
    fn drop_fraction_between_thresholds_matches_uniformized_rate() {
        // With a fixed average at the midpoint, pb = max_p/2 = 0.05. With pa = pb/(1 − count·pb)
        // the gap X between drops has P(X = n) = pb/(1 − pb) for n = 1..1/pb − 1: uniform over
        // 19 values with mean 10, so the drop fraction is exactly 1/10.
        let mut red = Red::new(RedConfig {
            weight: 1.0,
            ..RedConfig::default()
        });
        let mut rng = Uniform::new(9, 2);
        let t = Duration::from_micros(100);
        let n = 200_000;
        let drops = (0..n)
            .filter(|&i| red.should_drop(t * i, 10, t, &mut rng))
            .count();
        let fraction = drops as f64 / n as f64;
        assert!((fraction - 0.1).abs() < 0.002, "fraction {fraction}");
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut red = Red::new(RedConfig {
            weight: 0.5,
            ..RedConfig::default()
        });
        let mut rng = Uniform::new(1, 1);
        let t = Duration::from_millis(1);
        red.should_drop(Duration::ZERO, 12, t, &mut rng);
        red.on_enqueue();
        let before = red.average_packets();
        red.on_idle(Duration::from_millis(1));
        // 10 packet times idle: average × 0.5^10, then one sample of 0.
        red.should_drop(Duration::from_millis(11), 0, t, &mut rng);
        let expected = before * 0.5f64.powi(10) * 0.5;
        assert!((red.average_packets() - expected).abs() < 1e-12);
    }

    /// The bug: an arrival that RED dropped early on an empty queue used up the idle start,
    /// so later arrivals to the still-empty queue saw no idle decay, the average stayed above
    /// `max`, every arrival was dropped, and the flows stalled for good.
    #[test]
    fn early_drop_on_empty_queue_keeps_the_idle_period() {
        let config = RedConfig {
            weight: 0.5,
            ..RedConfig::default()
        };
        let mut red = Red::new(config);
        let mut rng = Uniform::new(1, 1);
        let t = Duration::from_millis(1);
        // A standing queue of 40 packets drives the average far above max (15).
        for i in 0..20 {
            red.on_enqueue();
            red.should_drop(t * i, 40, t, &mut rng);
        }
        assert!(red.average_packets() > 39.0);
        // The queue empties at 20 ms and an arrival comes at once: the average is still ≈ 20,
        // above max, so it is dropped early and the queue stays empty.
        red.on_idle(t * 20);
        assert!(red.should_drop(t * 20, 0, t, &mut rng), "dropped early");
        // Nothing was queued: the queue stays empty. 20 packet times later the average must
        // have decayed over the whole idle time: (0.5)^20 · avg, then one sample of 0.
        let before = red.average_packets();
        assert!(!red.should_drop(t * 40, 0, t, &mut rng));
        let expected = before * 0.5f64.powi(20) * 0.5;
        assert!(
            (red.average_packets() - expected).abs() < 1e-9,
            "average {} expected {expected}",
            red.average_packets()
        );
    }

    /// Decay is applied once per idle interval, not again from the start of the idle period
    /// at every arrival that finds the queue still empty.
    #[test]
    fn idle_decay_is_not_counted_twice() {
        let mut red = Red::new(RedConfig {
            weight: 0.5,
            ..RedConfig::default()
        });
        let mut rng = Uniform::new(1, 1);
        let t = Duration::from_millis(1);
        red.should_drop(Duration::ZERO, 30, t, &mut rng);
        red.on_enqueue();
        red.on_idle(t);
        let start = red.average_packets();
        // Two arrivals 2 and 4 packet times into the idle period, the first one not queued.
        red.should_drop(t * 3, 0, t, &mut rng);
        red.should_drop(t * 5, 0, t, &mut rng);
        // (0.5^2 · 0.5) · 0.5^2 · 0.5: four packet times of decay in all, two samples of 0.
        let expected = start * 0.5f64.powi(6);
        assert!((red.average_packets() - expected).abs() < 1e-9);
    }
}
