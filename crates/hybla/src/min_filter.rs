//! Windowed minimum of RTT samples: the propagation-delay estimate behind ρ.
//!
//! The all-time minimum (what quinn's `RttEstimator::min` keeps) never rises, so after a LEO
//! handover or a delay step to a longer path ρ would stay stuck on the old, shorter path. Two
//! half-window buckets give the minimum over the last `window/2 ..= window`: a longer path is
//! adopted at most one window after it appears, a shorter one at once.

use std::time::Duration;

/// The extreme (per `keep`) of samples over a sliding window, kept in two half-window buckets.
#[derive(Debug, Clone)]
struct Windowed<T: Copy> {
    window: Duration,
    previous: Option<T>,
    current: Option<T>,
    current_start: Duration,
    keep: fn(T, T) -> T,
}

impl<T: Copy> Windowed<T> {
    fn new(window: Duration, keep: fn(T, T) -> T) -> Self {
        Self {
            window,
            previous: None,
            current: None,
            current_start: Duration::ZERO,
            keep,
        }
    }

    fn update(&mut self, now: Duration, sample: T) {
        if now >= self.current_start + self.window / 2 {
            // A whole skipped bucket means the old extreme is out of the window entirely.
            self.previous = if now >= self.current_start + self.window {
                None
            } else {
                self.current
            };
            self.current = None;
            self.current_start = now;
        }
        let keep = self.keep;
        self.current = Some(self.current.map_or(sample, |m| keep(m, sample)));
    }

    fn get(&self) -> Option<T> {
        match (self.previous, self.current) {
            (Some(a), Some(b)) => Some((self.keep)(a, b)),
            (a, b) => a.or(b),
        }
    }
}

/// Minimum of samples over a sliding window.
#[derive(Debug, Clone)]
pub struct WindowedMin(Windowed<Duration>);

impl WindowedMin {
    /// A filter over `window` (e.g. 10 s, as BBR's min-RTT filter).
    pub fn new(window: Duration) -> Self {
        Self(Windowed::new(window, Duration::min))
    }

    /// Adds a sample taken at `now`.
    pub fn update(&mut self, now: Duration, sample: Duration) {
        self.0.update(now, sample);
    }

    /// Changes the window (for windows that scale with the RTT); takes effect from the next
    /// bucket.
    pub fn set_window(&mut self, window: Duration) {
        self.0.window = window;
    }

    /// The minimum over the window, if any sample was seen.
    pub fn get(&self) -> Option<Duration> {
        self.0.get()
    }
}

/// Maximum of rate samples over a sliding window.
#[derive(Debug, Clone)]
pub struct WindowedMax(Windowed<f64>);

impl WindowedMax {
    /// A filter over `window`.
    pub fn new(window: Duration) -> Self {
        Self(Windowed::new(window, f64::max))
    }

    /// Adds a sample taken at `now`.
    pub fn update(&mut self, now: Duration, sample: f64) {
        self.0.update(now, sample);
    }

    /// The maximum over the window, if any sample was seen.
    pub fn get(&self) -> Option<f64> {
        self.0.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;
    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn a_shorter_path_is_adopted_at_once() {
        let mut f = WindowedMin::new(S(10));
        f.update(S(0), MS(600));
        f.update(S(1), MS(30));
        assert_eq!(f.get(), Some(MS(30)));
    }

    #[test]
    fn a_longer_path_is_adopted_within_one_window() {
        let mut f = WindowedMin::new(S(10));
        for t in 0..20 {
            f.update(S(t), MS(30));
        }
        for t in 20..31 {
            f.update(S(t), MS(600));
        }
        assert_eq!(f.get(), Some(MS(600)));
    }

    #[test]
    fn queueing_spikes_do_not_raise_the_minimum() {
        let mut f = WindowedMin::new(S(10));
        for t in 0..100 {
            let sample = if t % 3 == 0 { MS(500) } else { MS(800) };
            f.update(MS(t * 100), sample);
        }
        assert_eq!(f.get(), Some(MS(500)));
    }
}
