//! The StreamBalancer's monitors, as quic-go implements them: per-class byte logs, the
//! least-squares slopes of the rate and RTT monitors, the list of largest throughputs and the
//! RTT slope scorer.

use std::collections::VecDeque;
use std::time::Duration;

/// Least-squares slope of `y` over `x`, as gonum's `stat.LinearRegression(x, y, nil, false)`:
/// NaN unless the points have at least two distinct `x`.
fn ols_slope(points: &[(f64, f64)]) -> f64 {
    if points.len() < 2 {
        return f64::NAN;
    }
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for &(x, y) in points {
        sxy += (x - mean_x) * (y - mean_y);
        sxx += (x - mean_x) * (x - mean_x);
    }
    // 0/0 = NaN when all x coincide, as in gonum.
    sxy / sxx
}

/// Regression slopes of time-stamped `samples` (sorted by time, none newer than `now`, none
/// older than `windows[0]`) over each window, as the monitors' `RegressAll`
/// (`ratemonitor.go:143`, `rttmonitor.go:73`) selects them: x is the time in whole
/// milliseconds (`UnixMilli`), the first window takes every sample, and walking forward each
/// sample younger (strictly) than the *next* window opens that window, one window per
/// sample. With three windows the first sample younger than the middle window therefore
/// never enters the last one, even if it is young enough.
pub(super) fn window_slopes(
    samples: &[(Duration, f64)],
    now: Duration,
    windows: &[Duration],
) -> Vec<f64> {
    let points: Vec<(f64, f64)> = samples
        .iter()
        .map(|&(at, y)| (at.as_millis() as f64, y))
        .collect();
    let mut starts = vec![points.len(); windows.len()];
    if let Some(first) = starts.first_mut() {
        *first = 0;
    }
    let mut include_until = 0;
    for (idx, &(at, _)) in samples.iter().enumerate() {
        if include_until + 1 < windows.len() && now.saturating_sub(at) < windows[include_until + 1]
        {
            include_until += 1;
            starts[include_until] = idx;
        }
    }
    starts.iter().map(|&s| ols_slope(&points[s..])).collect()
}

/// Bytes one class handed to the transport: (time, cumulative bytes) per write, as the
/// `RateMonitor`'s `sentqueue` (`ratemonitor.go:117`).
#[derive(Debug, Clone, Default)]
pub(super) struct ByteLog {
    /// (time of the write, cumulative bytes after it), oldest first.
    pub(super) samples: VecDeque<(Duration, u64)>,
    /// Cumulative bytes over all writes.
    total_bytes: u64,
    /// Cumulative bytes of the newest dropped sample (0 if none was dropped).
    dropped_total_bytes: u64,
}

impl ByteLog {
    pub(super) fn record(&mut self, at: Duration, bytes: u64) {
        // The framer registers only frames it packed, never empty ones.
        if bytes == 0 {
            return;
        }
        self.total_bytes += bytes;
        self.samples.push_back((at, self.total_bytes));
    }

    /// Drops samples stamped before `horizon` (`PopOld`); later queries must not reach back
    /// beyond it.
    pub(super) fn drop_before(&mut self, horizon: Duration) {
        while let Some(&(at, total)) = self.samples.front() {
            if at >= horizon {
                break;
            }
            self.dropped_total_bytes = total;
            self.samples.pop_front();
        }
    }

    /// Cumulative bytes of the writes stamped before `at` (and at it, with [`Edge::Through`]).
    fn cumulative(&self, at: Duration, edge: Edge) -> u64 {
        let n = self.samples.partition_point(|&(t, _)| edge.includes(t, at));
        if n == 0 {
            self.dropped_total_bytes
        } else {
            self.samples[n - 1].1
        }
    }

    /// Bytes written in `(now − window, now)` (or `… now]`): quic-go's `getBitrateWithin`
    /// (`ratemonitor.go:77`) takes the newest cumulative count minus that of the oldest sample
    /// at most `window` old, which leaves out that one sample's own bytes (at most one packed
    /// frame there); counting whole writes avoids making that error as large as one of our
    /// (possibly larger) writes, and a write exactly `window` ago has expired.
    pub(super) fn bytes_within(&self, now: Duration, window: Duration, edge: Edge) -> u64 {
        let end = self.cumulative(now, edge);
        match now.checked_sub(window) {
            Some(start) => end - self.cumulative(start, Edge::Through),
            None => end,
        }
    }

    /// (time, cumulative bytes) of the samples stamped before `now` (or at it).
    pub(super) fn points(&self, now: Duration, edge: Edge) -> Vec<(Duration, f64)> {
        self.samples
            .iter()
            .take_while(|&&(at, _)| edge.includes(at, now))
            .map(|&(at, total)| (at, total as f64))
            .collect()
    }
}

/// Whether something stamped exactly at a query's instant counts. A periodic event at `t`
/// sees the writes before `t` only: writes at `t` follow `observe(t)`, which runs the event,
/// so this keeps a catch-up after a gap identical to observing on time. RTT samples are taken
/// inside `observe(t)` before its events run, and the bulk gate counts what was just written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Edge {
    /// `t ≤ at`.
    Through,
    /// `t < at`.
    Before,
}

impl Edge {
    fn includes(self, t: Duration, at: Duration) -> bool {
        match self {
            Edge::Through => t <= at,
            Edge::Before => t < at,
        }
    }
}

/// The "median throughput monitor" as `maxNlist`/`bitrateHolder` implement it
/// (`bitrateMedianHolder.go`), quirks included: until full it keeps values in arrival order
/// (unsorted); once full, a value above the last entry overwrites every entry from the first
/// one not above it to the end (the insertion loop never breaks and re-inserts the value it
/// just wrote); the "median" is the entry at index `len/2`. Verified against the Go code.
#[derive(Debug, Clone)]
pub(super) struct TopList {
    pub(super) values: Vec<u64>,
    capacity: usize,
}

impl TopList {
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            values: Vec::with_capacity(capacity),
            capacity,
        }
    }

    pub(super) fn add(&mut self, value: u64) {
        if self.values.len() < self.capacity {
            self.values.push(value);
            return;
        }
        if self.values.last().is_none_or(|&last| value <= last) {
            return;
        }
        if let Some(first) = self.values.iter().position(|&v| v <= value) {
            for v in &mut self.values[first..] {
                *v = value;
            }
        }
    }

    /// Multiplies every entry by `factor`, truncating to whole bytes (`ByteCount(float)`).
    pub(super) fn shrink(&mut self, factor: f64) {
        for v in &mut self.values {
            *v = (*v as f64 * factor) as u64;
        }
    }

    /// The entry at `len/2` (0 while empty).
    pub(super) fn median(&self) -> u64 {
        self.values.get(self.values.len() / 2).copied().unwrap_or(0)
    }
}

/// Normalises a slope by the largest |slope| seen, the maximum decaying geometrically per
/// call (`slopescorer.go`; thesis §5.4.2), then shapes it by `(x³ + x/3)/(4/3)`, which maps
/// ±1 to ±1 and flattens small values.
#[derive(Debug, Clone, Default)]
pub(super) struct SlopeScorer {
    max_abs_slope: f64,
}

impl SlopeScorer {
    pub(super) fn score(&mut self, slope: f64, decay: f64) -> f64 {
        if slope.is_nan() {
            return 0.0;
        }
        self.max_abs_slope = (self.max_abs_slope * decay).max(slope.abs());
        let x = slope / self.max_abs_slope;
        (x * x * x + x / 3.0) / (4.0 / 3.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::SeedBalancerConfig;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn least_squares_slope_of_a_known_series() {
        // x̄ = 1.5, ȳ = 3, Sxy = 3 + 0 − 0.5 + 4.5 = 7, Sxx = 5.
        let pts = [(0.0, 1.0), (1.0, 3.0), (2.0, 2.0), (3.0, 6.0)];
        assert!(close(ols_slope(&pts), 1.4));
        assert!(ols_slope(&[]).is_nan());
        assert!(ols_slope(&[(5.0, 1.0)]).is_nan());
        assert!(ols_slope(&[(5.0, 1.0), (5.0, 9.0)]).is_nan());
    }

    #[test]
    fn rate_monitor_windows_and_rate_status() {
        // Writes of 100, 100, 100, 100, 300 bytes at 0..400 ms; cumulative 100..700.
        let mut log = ByteLog::default();
        for (t, b) in [(0, 100), (100, 100), (200, 100), (300, 100), (400, 300)] {
            log.record(ms(t), b);
        }
        let now = ms(400);
        let cfg = SeedBalancerConfig::default();
        let slopes = window_slopes(&log.points(now, Edge::Through), now, &cfg.rate_windows);
        // 5 s: x̄ = 200, Σ(x−x̄)y = −20000 − 20000 + 40000 + 140000 = 140000, Sxx = 100000.
        assert!(close(slopes[0], 1.4));
        // 400 ms, strictly younger: the 0-ms write (exactly 400 ms old) is out; x̄ = 250,
        // Σ(x−x̄)y = −30000 − 15000 + 20000 + 105000 = 80000, Sxx = 50000.
        assert!(close(slopes[1], 1.6));
        assert!(close(slopes[1] / slopes[0], 8.0 / 7.0));
    }

    #[test]
    fn rtt_monitor_windows_open_one_per_sample() {
        // RTT (ms) samples at 8.0, 9.7, 9.8, 9.9 s, evaluated at 10 s.
        let s = |t: u64, v: f64| (ms(t), v);
        let samples = [
            s(8000, 100.0),
            s(9700, 100.0),
            s(9800, 110.0),
            s(9900, 130.0),
        ];
        let cfg = SeedBalancerConfig::default();
        let slopes = window_slopes(&samples, ms(10_000), &cfg.rtt_windows);
        // 3 s, all four: x̄ = 9350, Σ(x−x̄)y = −135000 + 35000 + 49500 + 71500 = 21000,
        // Sxx = 1822500 + 122500 + 202500 + 302500 = 2450000.
        assert!(close(slopes[0], 21000.0 / 2_450_000.0));
        // 1 s opens at 9.7 s: (130 − 100)·100 / 20000.
        assert!(close(slopes[1], 0.15));
        // 400 ms opens only at the next sample, 9.8 s, although 9.7 s is 300 ms old.
        assert!(close(slopes[2], 0.2));
    }

    #[test]
    fn slope_scorer_normalises_and_shrinks_one_percent() {
        // Table 5.1's inputs; the code also shapes by (x³ + x/3)·3/4.
        let shape = |x: f64| (x * x * x + x / 3.0) * 0.75;
        let mut s = SlopeScorer::default();
        assert!(close(s.score(100.0, 0.99), 1.0));
        assert!(close(s.max_abs_slope, 100.0));
        assert!(close(
            s.score(22.0, 0.99),
            (8.0 / 729.0 + 2.0 / 27.0) * 0.75
        ));
        assert!(close(s.max_abs_slope, 99.0));
        assert!(close(s.score(-1.0, 0.99), shape(-1.0 / 98.01)));
        assert!(close(s.max_abs_slope, 98.01));
        assert!(close(s.score(4000.0, 0.99), 1.0));
        assert!(close(s.score(100.0, 0.99), shape(100.0 / 3960.0)));
        assert!(close(s.max_abs_slope, 3960.0));
        // No regression: score 0, maximum untouched.
        assert_eq!(s.score(f64::NAN, 0.99), 0.0);
        assert!(close(s.max_abs_slope, 3960.0));
        // A flat RTT from the start scores NaN, which never exceeds the threshold.
        assert!(SlopeScorer::default().score(0.0, 0.99).is_nan());
    }

    #[test]
    fn top_list_keeps_the_go_quirks() {
        let mut t = TopList::new(4);
        for v in [5, 3, 9, 1] {
            t.add(v);
        }
        assert_eq!(t.values, [5, 3, 9, 1]); // arrival order until full
        assert_eq!(t.median(), 9); // index len/2 = 2
        t.add(4); // above the last entry: overwrite from the first entry ≤ 4 (index 1) on
        assert_eq!(t.values, [5, 4, 4, 4]);
        t.add(2); // not above the last entry
        assert_eq!(t.values, [5, 4, 4, 4]);
        t.add(6);
        assert_eq!(t.values, [6, 6, 6, 6]);
        t.shrink(0.95); // 5.7 truncated
        assert_eq!(t.values, [5, 5, 5, 5]);
        assert_eq!(TopList::new(20).median(), 0);

        // Add-then-shrink(0.95) trace, expected values printed by the original Go code.
        let mut t = TopList::new(20);
        let inputs = [
            500, 300, 900, 100, 700, 200, 800, 50, 650, 400, 1000, 20, 30, 600, 550, 90, 95, 97,
            99, 10,
        ];
        for v in inputs {
            t.add(v);
            t.shrink(0.95);
        }
        let go = [
            173, 108, 353, 37, 304, 88, 385, 20, 346, 223, 595, 11, 17, 416, 401, 68, 76, 82, 89, 9,
        ];
        assert_eq!(t.values, go);
        assert_eq!(t.median(), 595);
        t.add(120);
        t.shrink(0.95);
        let mut go = vec![114; 20];
        go[0] = 164;
        assert_eq!(t.values, go);
        t.add(5);
        t.shrink(0.95);
        go = vec![108; 20];
        go[0] = 155;
        assert_eq!(t.values, go);
        t.add(880);
        t.shrink(0.95);
        assert_eq!(t.values, vec![836; 20]);
    }
}
