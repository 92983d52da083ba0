//! `seed-balancer`: the StreamBalancer of \[Ruehl2024\] (M. Rühl, "Balancing real-time media
//! and bulk data on one QUIC connection", master's thesis, TU Munich, 2024), reproduced as a
//! pure algorithm so that our own balancer has a faithful baseline to beat.
//!
//! # Where the numbers come from
//!
//! The thesis (chapters 4 and 5) describes the design; its public code (GitHub
//! `haxkor/quic-go`, directory `streamtypebalancer/` plus `framer.go`) fixes the parameters.
//! Where the two disagree this module follows the code and says what the text has. References
//! of the form `streamtypebalancer.go:228` are to that repository's `HEAD` (commit `85417342`).
//!
//! # The algorithm
//!
//! Bytes are counted per class when the framer packs them (`framer.go:211`): prioritised
//! streams ("media", the code's `bidi_info`) and the rest ("bulk", `reststreams`). Every
//! 100 ms (`streamtypebalancer.go:222`) `UpdateUnirate` recomputes the growth factor `gf` of
//! the bulk class's byte budget `allowedbytes` (per sliding 1-s window), starting from 1.2:
//!
//! 1. **RateStatus** = slope(400 ms) / slope(5 s) of least-squares lines through (time in ms,
//!    cumulative media bytes) (`rate_status_factor`): `< 0.9` → `gf ×= rs²`; `> 1` →
//!    `gf ×= min(rs, 1.5)`; otherwise (or NaN) unchanged.
//! 2. **CurrentToMaximum** = media bytes of the last 2 s / the "median" of the twenty largest
//!    such values polled every 500 ms, shrunk 5 % per poll (`TopList`): `< 0.5` → `gf = −1`
//!    (the multiplication then clamps the budget to its 10-byte floor); `< 1` → `gf ×= x²`.
//! 3. **RTTStatus** = the slope of the RTT over the last 400 ms, normalised by a
//!    1 %-per-update decaying maximum of |slope| and shaped by `(x³ + x/3)/(4/3)`
//!    (`SlopeScorer`): `> 0.8` → `gf ×= 0.7`.
//! 4. bulk sent in the last 1 s `< ⌊0.9 · allowed⌋` → `gf = min(0.99, gf)`; then
//!    `gf = min(1.5, gf)`.
//! 5. growth stages around `lastmax` ([`Stage`]) pick the multiplier: `gf` (INCREASING,
//!    DECREASING), `0.95` (DECREASING_GENTLY), `(gf + 10)/11` (INCREASING_SLOWLY); the budget
//!    becomes `max(10, ⌊allowed · multiplier⌋)`.
//!
//! The framer packs prioritised streams first and skips a bulk stream while the bulk bytes of
//! the last second exceed `allowedbytes` (`CanSendUniFrame`, `framer.go:173`).
//!
//! # Mapping onto our lab
//!
//! - Packed bytes are what the applications write ([`Scheduler::on_written`]); the send-window
//!   emulation ([`Scheduler::send_window`]) keeps writes just in time, as the framer would.
//! - quic-go feeds the RTT monitor the *latest* RTT sample on every change
//!   (`streamtypebalancer.go:329`); quinn exposes only the smoothed RTT, so a sample is taken
//!   whenever the observed `srtt` changes. The EWMA delays and flattens the slope a little.
//! - quic-go's three goroutines (updates every 100 ms, throughput polls every 500 ms, sample
//!   intake) run here as deterministic events at `t0 + k·100 ms` and `t0 + j·500 ms` (`t0` = the
//!   first [`Scheduler::observe`]; a poll runs before an update due at the same instant, as the
//!   update loop drifts later in Go); a long gap between observations is caught up event by
//!   event, each event seeing the writes stamped before its own time (writes at `t` follow
//!   `observe(t)`) and the RTT samples taken at or before it.
//!
//! # Where the thesis text differs (the code is followed)
//!
//! - RateStatus over 400 ms / 5 s, not 1 s / 5 s (§5.4.1); the steady band's ends are neutral
//!   (Figure 5.1 leaves `= 0.9` and `= 1` open).
//! - Throughput list: 20 entries, polled every 500 ms over 2 s, shrunk 5 % per poll, with the
//!   insertion and "median" quirks of `TopList` (§4.5.1, §5.4.3: ten largest, every 100 ms,
//!   1 % per step); CurrentToMaximum below 0.5 collapses the budget (not in Figure 5.2).
//! - RTTStatus is the shaped, normalised 400-ms RTT slope, penalised when `> 0.8` (§5.5
//!   describes it as the latest RTT against the maximum, "at least 80 %").
//! - Underused budget: `gf = min(0.99, gf)`, not "set to 0.99" (§5.5.1).
//! - `lastmax` on a new limit is the bulk bytes actually sent in the last second, not the
//!   budget (§5.5.2); a downward change needs `gf < 0.9`; DECREASING_GENTLY is left for
//!   DECREASING only when `gf < 0` (a throughput collapse), staying gentle for `0 ≤ gf ≤ 0.5`
//!   too (the text: "a very low growth factor").

use std::collections::VecDeque;
use std::time::Duration;

use crate::{Class, Scheduler, SendWindows, TransportView};

/// The bulk budget's growth stage, the balancer's memory of what it did last (thesis §5.5.2;
/// the code's `growingStage`, `streamtypebalancer.go:23`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Growing by the full growth factor: no limit known nearby.
    Increasing,
    /// Shrinking by the full growth factor: a new limit was hit.
    Decreasing,
    /// Growing by `(gf + 10)/11`: the budget is within a factor two below `lastmax`.
    IncreasingSlowly,
    /// Shrinking by 5 % per update: the same limit as last time was hit again.
    DecreasingGently,
}

/// Parameters of [`SeedBalancer`]. [`Default`] gives the published ones (code at `HEAD` of
/// `haxkor/quic-go`); each field says where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedBalancerConfig {
    /// Period of `UpdateUnirate` (`streamtypebalancer.go:222`: 100 ms).
    pub update_interval: Duration,
    /// Growth factor every update starts from (`streamtypebalancer.go:228`: 1.2).
    pub base_growth: f64,
    /// Regression windows of the media rate monitor, longest first; RateStatus is the last
    /// slope over the first (`streamtypebalancer.go:107`: 5 s, 400 ms; thesis §5.4.1: 1 s and
    /// 5 s). In effect the 5-s line sees at most 4.1 s, because every throughput query prunes
    /// the shared sample queue to twice [`throughput_window`](Self::throughput_window)
    /// (`ratemonitor.go:86`); this module reproduces that pruning.
    pub rate_windows: Vec<Duration>,
    /// RateStatus below this is squared into the growth factor
    /// (`streamtypebalancer.go:235`: 0.9).
    pub rate_steady_low: f64,
    /// RateStatus above this multiplies the growth factor (`streamtypebalancer.go:237`: 1.0).
    pub rate_steady_high: f64,
    /// Cap on a rising RateStatus' factor (`streamtypebalancer.go:238`: 1.5).
    pub rate_gain_cap: f64,
    /// Window of the media throughput compared with its recent best
    /// (`ratemonitor.go:54`: 2 s; thesis §5.4.3 leaves it open).
    pub throughput_window: Duration,
    /// Period of the throughput polls feeding the top list (`ratemonitor.go:55`: 500 ms;
    /// thesis §5.4.3: 100 ms).
    pub throughput_poll_interval: Duration,
    /// Length of the list of largest throughputs (`ratemonitor.go:53`: 20; thesis §4.5.1 and
    /// §5.4.3: ten).
    pub throughput_top_len: usize,
    /// Factor applied to every listed throughput after each poll (`ratemonitor.go:105`: 0.95;
    /// thesis §5.4.3: 1 % per step).
    pub throughput_decay: f64,
    /// CurrentToMaximum below this replaces the growth factor by
    /// [`collapse_growth`](Self::collapse_growth) (`streamtypebalancer.go:242`: 0.5; not in
    /// the thesis, whose Figure 5.2 only squares).
    pub collapse_ratio: f64,
    /// Growth factor after a throughput collapse (`streamtypebalancer.go:243`: −1, which the
    /// budget's floor turns into [`min_allowed_bytes`](Self::min_allowed_bytes)).
    pub collapse_growth: f64,
    /// Regression windows of the RTT monitor, longest first; the last one's slope is scored
    /// (`streamtypebalancer.go:122`: 3 s, 1 s, 400 ms; `rttmonitor.go:110`).
    pub rtt_windows: Vec<Duration>,
    /// Per-update decay of the slope scorer's maximum (`slopescorer.go:19`: 0.99; thesis
    /// §5.4.2, Table 5.1: 1 % per step).
    pub slope_decay: f64,
    /// RTTStatus above this penalises the growth factor (`streamtypebalancer.go:252`: `> 0.8`;
    /// thesis §5.5: "at least 80 %").
    pub rtt_score_threshold: f64,
    /// Penalty for a rising RTT (`streamtypebalancer.go:255`: 0.7, thesis §5.5: "by 30 %").
    pub rtt_penalty: f64,
    /// Sliding window of the bulk budget (`streamtypebalancer.go:101`: 1 s).
    pub bulk_window: Duration,
    /// Share of the budget bulk must have used for the budget to grow
    /// (`streamtypebalancer.go:269`: 0.9; thesis §5.5.1).
    pub utilisation_threshold: f64,
    /// Growth factor cap while bulk underuses its budget (`streamtypebalancer.go:270`:
    /// `min(0.99, gf)`; thesis §5.5.1 says "set to 0.99").
    pub underused_growth_cap: f64,
    /// Overall growth factor cap (`streamtypebalancer.go:272`: 1.5; thesis §5.5.1).
    pub growth_cap: f64,
    /// A growth factor below this while increasing is a downward change
    /// (`streamtypebalancer.go:275`: 0.9).
    pub downward_below: f64,
    /// `lastmax / allowed` strictly above this and strictly below
    /// [`same_limit_high`](Self::same_limit_high) counts as hitting the same limit again
    /// (`streamtypebalancer.go:280`: 0.7; thesis: "somewhat similar").
    pub same_limit_low: f64,
    /// Upper end of the same-limit range (`streamtypebalancer.go:280`: 1.2).
    pub same_limit_high: f64,
    /// Growing with `allowed · this > lastmax` (and `allowed ≤ lastmax`) is approaching the
    /// last limit (`streamtypebalancer.go:297`: 2).
    pub approach_factor: f64,
    /// DECREASING_GENTLY persists while the growth factor stays above this
    /// (`streamtypebalancer.go:305`: 0.5).
    pub gentle_hold_above: f64,
    /// INCREASING_SLOWLY multiplies by `(gf + w)/(w + 1)` with this `w`
    /// (`streamtypebalancer.go:315`: 10; thesis Figure 5.3).
    pub slow_weight: f64,
    /// DECREASING_GENTLY's multiplier (`streamtypebalancer.go:317`: 0.95; thesis Figure 5.3).
    pub gentle_factor: f64,
    /// Bulk budget at the start, bytes per window (`streamtypebalancer.go:102`: 40).
    pub initial_allowed_bytes: u64,
    /// `lastmax` at the start, bytes (`streamtypebalancer.go:103`: 1).
    pub initial_lastmax_bytes: u64,
    /// Stage at the start (`streamtypebalancer.go:104`: INCREASING_SLOWLY).
    pub initial_stage: Stage,
    /// Floor of the bulk budget, bytes (`streamclassinfo.go:42`: 10).
    pub min_allowed_bytes: u64,
    /// Send-window headroom above the congestion window while media writes, in MTUs (ours:
    /// media data must be ready to pack slightly ahead of bulk, as in the framer's stream
    /// queues).
    pub media_headroom_mtus: u64,
    /// Send-window headroom above the congestion window while bulk writes, in MTUs (ours).
    pub bulk_headroom_mtus: u64,
}

impl Default for SeedBalancerConfig {
    fn default() -> Self {
        Self {
            update_interval: Duration::from_millis(100),
            base_growth: 1.2,
            rate_windows: vec![Duration::from_secs(5), Duration::from_millis(400)],
            rate_steady_low: 0.9,
            rate_steady_high: 1.0,
            rate_gain_cap: 1.5,
            throughput_window: Duration::from_secs(2),
            throughput_poll_interval: Duration::from_millis(500),
            throughput_top_len: 20,
            throughput_decay: 0.95,
            collapse_ratio: 0.5,
            collapse_growth: -1.0,
            rtt_windows: vec![
                Duration::from_secs(3),
                Duration::from_secs(1),
                Duration::from_millis(400),
            ],
            slope_decay: 0.99,
            rtt_score_threshold: 0.8,
            rtt_penalty: 0.7,
            bulk_window: Duration::from_secs(1),
            utilisation_threshold: 0.9,
            underused_growth_cap: 0.99,
            growth_cap: 1.5,
            downward_below: 0.9,
            same_limit_low: 0.7,
            same_limit_high: 1.2,
            approach_factor: 2.0,
            gentle_hold_above: 0.5,
            slow_weight: 10.0,
            gentle_factor: 0.95,
            initial_allowed_bytes: 40,
            initial_lastmax_bytes: 1,
            initial_stage: Stage::IncreasingSlowly,
            min_allowed_bytes: 10,
            media_headroom_mtus: 4,
            bulk_headroom_mtus: 2,
        }
    }
}

/// Go's `min` on floats: NaN if either is NaN (Rust's `f64::min` would drop the NaN).
fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// The RateStatus' contribution to the growth factor (thesis Figure 5.1;
/// `streamtypebalancer.go:235`): squared below the steady band so steep drops weigh more,
/// capped above it so a burst after idling cannot explode the budget, neutral inside the band
/// (both ends included, as the code's `else` branches) and for NaN (no usable regression).
fn rate_status_factor(cfg: &SeedBalancerConfig, rate_status: f64) -> f64 {
    if rate_status < cfg.rate_steady_low {
        rate_status * rate_status
    } else if rate_status > cfg.rate_steady_high {
        go_min(rate_status, cfg.rate_gain_cap)
    } else {
        1.0
    }
}

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
fn window_slopes(samples: &[(Duration, f64)], now: Duration, windows: &[Duration]) -> Vec<f64> {
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
struct ByteLog {
    /// (time of the write, cumulative bytes after it), oldest first.
    samples: VecDeque<(Duration, u64)>,
    /// Cumulative bytes over all writes.
    total_bytes: u64,
    /// Cumulative bytes of the newest dropped sample (0 if none was dropped).
    dropped_total_bytes: u64,
}

impl ByteLog {
    fn record(&mut self, at: Duration, bytes: u64) {
        // The framer registers only frames it packed, never empty ones.
        if bytes == 0 {
            return;
        }
        self.total_bytes += bytes;
        self.samples.push_back((at, self.total_bytes));
    }

    /// Drops samples stamped before `horizon` (`PopOld`); later queries must not reach back
    /// beyond it.
    fn drop_before(&mut self, horizon: Duration) {
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
    fn bytes_within(&self, now: Duration, window: Duration, edge: Edge) -> u64 {
        let end = self.cumulative(now, edge);
        match now.checked_sub(window) {
            Some(start) => end - self.cumulative(start, Edge::Through),
            None => end,
        }
    }

    /// (time, cumulative bytes) of the samples stamped before `now` (or at it).
    fn points(&self, now: Duration, edge: Edge) -> Vec<(Duration, f64)> {
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
enum Edge {
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
struct TopList {
    values: Vec<u64>,
    capacity: usize,
}

impl TopList {
    fn new(capacity: usize) -> Self {
        Self {
            values: Vec::with_capacity(capacity),
            capacity,
        }
    }

    fn add(&mut self, value: u64) {
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
    fn shrink(&mut self, factor: f64) {
        for v in &mut self.values {
            *v = (*v as f64 * factor) as u64;
        }
    }

    /// The entry at `len/2` (0 while empty).
    fn median(&self) -> u64 {
        self.values.get(self.values.len() / 2).copied().unwrap_or(0)
    }
}

/// Normalises a slope by the largest |slope| seen, the maximum decaying geometrically per
/// call (`slopescorer.go`; thesis §5.4.2), then shapes it by `(x³ + x/3)/(4/3)`, which maps
/// ±1 to ±1 and flattens small values.
#[derive(Debug, Clone, Default)]
struct SlopeScorer {
    max_abs_slope: f64,
}

impl SlopeScorer {
    fn score(&mut self, slope: f64, decay: f64) -> f64 {
        if slope.is_nan() {
            return 0.0;
        }
        self.max_abs_slope = (self.max_abs_slope * decay).max(slope.abs());
        let x = slope / self.max_abs_slope;
        (x * x * x + x / 3.0) / (4.0 / 3.0)
    }
}

/// The quality signals one update combines into the growth factor.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Signals {
    /// slope(short) / slope(long) of cumulative media bytes.
    rate_status: f64,
    /// Media bytes in the throughput window / the top list's "median".
    current_to_max: f64,
    /// Scored short-window RTT slope.
    rtt_status: f64,
    /// Bulk bytes sent in the bulk window.
    bulk_sent_bytes: u64,
}

/// The bulk budget and its growth-stage memory (`streamClassInfo.cc_data`).
#[derive(Debug, Clone)]
struct Allowance {
    allowed_bytes: u64,
    lastmax_bytes: u64,
    stage: Stage,
    /// Growth factor of the last update (the base before the first).
    growth: f64,
}

impl Allowance {
    fn new(cfg: &SeedBalancerConfig) -> Self {
        Self {
            allowed_bytes: cfg.initial_allowed_bytes,
            lastmax_bytes: cfg.initial_lastmax_bytes,
            stage: cfg.initial_stage,
            growth: cfg.base_growth,
        }
    }

    /// The growth factor (`streamtypebalancer.go:228`–`272`).
    fn growth_factor(&self, cfg: &SeedBalancerConfig, s: &Signals) -> f64 {
        let mut gf = cfg.base_growth * rate_status_factor(cfg, s.rate_status);
        // NaN (nothing polled yet and no media) or ∞ (nothing polled yet) leave gf alone.
        if s.current_to_max < cfg.collapse_ratio {
            gf = cfg.collapse_growth;
        } else if s.current_to_max < 1.0 {
            gf *= s.current_to_max * s.current_to_max;
        }
        if s.rtt_status > cfg.rtt_score_threshold {
            gf *= cfg.rtt_penalty;
        }
        let used_floor = (self.allowed_bytes as f64 * cfg.utilisation_threshold) as u64;
        if s.bulk_sent_bytes < used_floor {
            gf = go_min(cfg.underused_growth_cap, gf);
        }
        go_min(cfg.growth_cap, gf)
    }

    /// One `UpdateUnirate`: growth factor, stage transition, new budget
    /// (`streamtypebalancer.go:274`–`320`).
    fn update(&mut self, cfg: &SeedBalancerConfig, s: &Signals) {
        let gf = self.growth_factor(cfg, s);
        self.growth = gf;
        let increasing = matches!(self.stage, Stage::Increasing | Stage::IncreasingSlowly);
        if gf < cfg.downward_below && increasing {
            let ratio = self.lastmax_bytes as f64 / self.allowed_bytes as f64;
            if cfg.same_limit_low < ratio && ratio < cfg.same_limit_high {
                self.stage = Stage::DecreasingGently;
            } else {
                // A new limit: remember what bulk actually got through (the thesis says the
                // budget before the decrease; the code takes the bytes sent).
                self.lastmax_bytes = s.bulk_sent_bytes;
                self.stage = Stage::Decreasing;
            }
        } else if gf > 1.0 {
            if self.allowed_bytes > self.lastmax_bytes {
                self.lastmax_bytes = self.allowed_bytes;
                self.stage = Stage::Increasing;
            } else if (self.allowed_bytes as f64 * cfg.approach_factor) as u64 > self.lastmax_bytes
            {
                self.stage = Stage::IncreasingSlowly;
            } else {
                self.stage = Stage::Increasing;
            }
        } else if gf < 1.0 {
            let hold_gentle = gf > cfg.gentle_hold_above && self.stage == Stage::DecreasingGently;
            if !hold_gentle && gf < 0.0 {
                self.stage = Stage::Decreasing;
            }
            // Otherwise the stage stays as it is (also DECREASING_GENTLY for 0 ≤ gf ≤ 0.5, and
            // INCREASING(_SLOWLY) for 0.9 ≤ gf < 1).
        }
        let multiplier = match self.stage {
            Stage::IncreasingSlowly => (gf + cfg.slow_weight) / (cfg.slow_weight + 1.0),
            Stage::DecreasingGently => cfg.gentle_factor,
            Stage::Increasing | Stage::Decreasing => gf,
        };
        // Truncation toward zero as Go's ByteCount(float); a negative product clamps to 0 and
        // so to the floor, as the code's max(10, negative).
        let scaled = (self.allowed_bytes as f64 * multiplier) as u64;
        self.allowed_bytes = scaled.max(cfg.min_allowed_bytes);
    }
}

/// The StreamBalancer of \[Ruehl2024\]: strict priority for media plus a bulk byte budget per
/// sliding second that grows while media flows steadily and shrinks when it falters.
#[derive(Debug, Clone)]
pub struct SeedBalancer {
    cfg: SeedBalancerConfig,
    /// Time of the first observation (`None` before it).
    start: Option<Duration>,
    next_update: Duration,
    next_poll: Duration,
    updates_run: u64,
    media: ByteLog,
    bulk: ByteLog,
    /// (time, RTT in ns) samples, oldest first.
    rtt_samples: VecDeque<(Duration, f64)>,
    last_rtt: Duration,
    rtt_scorer: SlopeScorer,
    throughput_top: TopList,
    allowance: Allowance,
    /// Inputs of the last update (for tests and diagnostics).
    last_signals: Option<Signals>,
    last_view: Option<TransportView>,
}

impl Default for SeedBalancer {
    fn default() -> Self {
        Self::new(SeedBalancerConfig::default())
    }
}

impl SeedBalancer {
    /// A balancer with the given parameters.
    ///
    /// # Panics
    /// If either period is zero or a window list is empty (the monitors need at least one).
    pub fn new(cfg: SeedBalancerConfig) -> Self {
        assert!(
            !cfg.update_interval.is_zero(),
            "update interval must be positive"
        );
        assert!(
            !cfg.throughput_poll_interval.is_zero(),
            "poll interval must be positive"
        );
        assert!(
            !cfg.rate_windows.is_empty() && !cfg.rtt_windows.is_empty(),
            "windows needed"
        );
        Self {
            allowance: Allowance::new(&cfg),
            throughput_top: TopList::new(cfg.throughput_top_len),
            start: None,
            next_update: Duration::ZERO,
            next_poll: Duration::ZERO,
            updates_run: 0,
            media: ByteLog::default(),
            bulk: ByteLog::default(),
            rtt_samples: VecDeque::new(),
            last_rtt: Duration::ZERO,
            rtt_scorer: SlopeScorer::default(),
            last_signals: None,
            last_view: None,
            cfg,
        }
    }

    /// The parameters in use.
    pub fn config(&self) -> &SeedBalancerConfig {
        &self.cfg
    }

    /// The bulk budget (`allowedbytes`), bytes per sliding
    /// [`bulk_window`](SeedBalancerConfig::bulk_window).
    pub fn allowed_bytes(&self) -> u64 {
        self.allowance.allowed_bytes
    }

    /// The growth factor of the last update (the base factor, 1.2, before the first).
    pub fn growth_factor(&self) -> f64 {
        self.allowance.growth
    }

    /// The growth stage.
    pub fn stage(&self) -> Stage {
        self.allowance.stage
    }

    /// The remembered limit (`lastmax`), bytes per bulk window.
    pub fn lastmax_bytes(&self) -> u64 {
        self.allowance.lastmax_bytes
    }

    /// How many periodic updates have run.
    pub fn updates_run(&self) -> u64 {
        self.updates_run
    }

    /// The earliest pending periodic event, `None` before the first observation.
    fn next_event(&self) -> Option<Duration> {
        self.start.map(|_| self.next_update.min(self.next_poll))
    }

    /// Oldest time a future query may reach back to, minus `window`: queries run at `now` or
    /// at pending events, never earlier.
    fn horizon(&self, now: Duration, window: Duration) -> Duration {
        self.next_event()
            .map_or(now, |t| t.min(now))
            .saturating_sub(window)
    }

    /// Runs the throughput polls and updates due at or before `now`, in time order (a poll
    /// first when both fall due at once).
    fn run_due(&mut self, now: Duration) {
        loop {
            if self.next_poll <= self.next_update {
                if self.next_poll > now {
                    break;
                }
                self.poll(self.next_poll);
                self.next_poll += self.cfg.throughput_poll_interval;
            } else {
                if self.next_update > now {
                    break;
                }
                self.update(self.next_update);
                self.next_update += self.cfg.update_interval;
            }
        }
    }

    /// Media bytes of the throughput window (`getBitrateWithin`), pruning the media samples to
    /// twice that window as the Go code does (`ratemonitor.go:86`).
    fn media_throughput(&mut self, at: Duration) -> u64 {
        let window = self.cfg.throughput_window;
        self.media.drop_before(at.saturating_sub(window * 2));
        self.media.bytes_within(at, window, Edge::Before)
    }

    /// `recordBitrates` (`ratemonitor.go:99`).
    fn poll(&mut self, at: Duration) {
        let bytes = self.media_throughput(at);
        self.throughput_top.add(bytes);
        self.throughput_top.shrink(self.cfg.throughput_decay);
    }

    /// `UpdateUnirate` (`streamtypebalancer.go:227`) at time `at`.
    fn update(&mut self, at: Duration) {
        // RateStatus: media rate monitor regressions (ratemonitor.go:143, :202).
        self.media
            .drop_before(at.saturating_sub(self.cfg.rate_windows[0]));
        let slopes = window_slopes(
            &self.media.points(at, Edge::Before),
            at,
            &self.cfg.rate_windows,
        );
        let rate_status = slopes[slopes.len() - 1] / slopes[0];

        // CurrentToMaximum (streamclassinfo.go:37).
        let current = self.media_throughput(at);
        let current_to_max = current as f64 / self.throughput_top.median() as f64;

        // RTTStatus (rttmonitor.go:73, :108).
        let horizon = at.saturating_sub(self.cfg.rtt_windows[0]);
        while self.rtt_samples.front().is_some_and(|&(t, _)| t < horizon) {
            self.rtt_samples.pop_front();
        }
        let rtt_points: Vec<(Duration, f64)> = self
            .rtt_samples
            .iter()
            .take_while(|&&(t, _)| t <= at)
            .copied()
            .collect();
        let rtt_slopes = window_slopes(&rtt_points, at, &self.cfg.rtt_windows);
        let rtt_status = self
            .rtt_scorer
            .score(rtt_slopes[rtt_slopes.len() - 1], self.cfg.slope_decay);

        let window = self.cfg.bulk_window;
        self.bulk.drop_before(at.saturating_sub(window));
        let bulk_sent_bytes = self.bulk.bytes_within(at, window, Edge::Before);

        let signals = Signals {
            rate_status,
            current_to_max,
            rtt_status,
            bulk_sent_bytes,
        };
        self.allowance.update(&self.cfg, &signals);
        self.last_signals = Some(signals);
        self.updates_run += 1;
    }
}

impl Scheduler for SeedBalancer {
    fn name(&self) -> &'static str {
        "seed-balancer"
    }

    fn observe(&mut self, view: &TransportView) {
        if self.start.is_none() {
            self.start = Some(view.now);
            self.next_update = view.now + self.cfg.update_interval;
            self.next_poll = view.now + self.cfg.throughput_poll_interval;
        }
        // quic-go records the latest RTT whenever it changes; we only have the smoothed one.
        if view.srtt != self.last_rtt {
            self.last_rtt = view.srtt;
            self.rtt_samples
                .push_back((view.now, view.srtt.as_nanos() as f64));
        }
        self.last_view = Some(*view);
        self.run_due(view.now);
    }

    /// The framer serves prioritised streams first (`framer.go:134`).
    fn priority(&self, class: Class) -> i32 {
        match class {
            Class::Media => 1,
            Class::Bulk => 0,
        }
    }

    fn on_written(&mut self, now: Duration, class: Class, bytes: u64) {
        match class {
            Class::Media => {
                self.media.record(now, bytes);
                let longest = self.cfg.rate_windows[0].max(self.cfg.throughput_window * 2);
                let horizon = self.horizon(now, longest);
                self.media.drop_before(horizon);
            }
            Class::Bulk => {
                self.bulk.record(now, bytes);
                let horizon = self.horizon(now, self.cfg.bulk_window);
                self.bulk.drop_before(horizon);
            }
        }
    }

    /// `CanSendUniFrame` (`streamtypebalancer.go:339`) as a byte count: the budget minus the
    /// bulk bytes of the last window. quic-go lets a whole frame through while the count is
    /// at most the budget (overshooting by up to one packet); here bulk gets exactly the rest.
    fn bulk_allowance(&mut self, now: Duration) -> u64 {
        let window = self.cfg.bulk_window;
        let horizon = self.horizon(now, window);
        self.bulk.drop_before(horizon);
        self.allowance
            .allowed_bytes
            .saturating_sub(self.bulk.bytes_within(now, window, Edge::Through))
    }

    /// Data waits in its stream until the framer packs it into a packet the congestion
    /// controller admits; emulated by letting each class write only up to a little beyond
    /// the congestion window, media a little further than bulk.
    fn send_window(&self) -> Option<SendWindows> {
        self.last_view.map(|v| SendWindows {
            media_bytes: v
                .cwnd_bytes
                .saturating_add(self.cfg.media_headroom_mtus.saturating_mul(v.mtu_bytes)),
            bulk_bytes: v
                .cwnd_bytes
                .saturating_add(self.cfg.bulk_headroom_mtus.saturating_mul(v.mtu_bytes)),
        })
    }

    fn frame_expiry(&self) -> Option<Duration> {
        None
    }

    fn media_target_bps(&self) -> Option<u64> {
        None
    }

    fn wakeup(&self) -> Option<Duration> {
        self.next_event()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    fn view(now: Duration, srtt: Duration) -> TransportView {
        TransportView {
            now,
            cwnd_bytes: 50_000,
            in_flight_bytes: 0,
            srtt,
            min_rtt: srtt,
            rtt_sample_min: None,
            mtu_bytes: 1200,
        }
    }

    /// Signals that leave the base growth factor alone: steady rate, throughput at its best,
    /// flat RTT, bulk using its whole budget.
    fn neutral(bulk_sent_bytes: u64) -> Signals {
        Signals {
            rate_status: 1.0,
            current_to_max: 1.0,
            rtt_status: 0.0,
            bulk_sent_bytes,
        }
    }

    fn allowance(allowed_bytes: u64, lastmax_bytes: u64, stage: Stage) -> Allowance {
        Allowance {
            allowed_bytes,
            lastmax_bytes,
            stage,
            growth: 1.2,
        }
    }

    #[test]
    fn rate_status_factor_on_each_branch() {
        let cfg = SeedBalancerConfig::default();
        assert!(close(rate_status_factor(&cfg, 0.5), 0.25));
        assert!(close(rate_status_factor(&cfg, 0.0), 0.0));
        // The steady band [0.9, 1.0], both ends neutral.
        assert_eq!(rate_status_factor(&cfg, 0.9), 1.0);
        assert_eq!(rate_status_factor(&cfg, 0.95), 1.0);
        assert_eq!(rate_status_factor(&cfg, 1.0), 1.0);
        assert!(close(rate_status_factor(&cfg, 1.2), 1.2));
        assert_eq!(rate_status_factor(&cfg, 3.0), 1.5);
        assert_eq!(rate_status_factor(&cfg, f64::INFINITY), 1.5);
        assert_eq!(rate_status_factor(&cfg, f64::NAN), 1.0);
        // Into the growth factor: 1.2 · 0.8².
        let a = allowance(1000, 1, Stage::Increasing);
        let s = Signals {
            rate_status: 0.8,
            ..neutral(1000)
        };
        assert!(close(a.growth_factor(&cfg, &s), 1.2 * 0.64));
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

    #[test]
    fn throughput_polls_every_500ms_into_the_top_list() {
        let mut b = SeedBalancer::default();
        b.observe(&view(Duration::ZERO, Duration::ZERO));
        // 1000 media bytes at 50, 150, ... ms, observed every 100 ms.
        for k in 0..10u64 {
            b.observe(&view(ms(100 * k), Duration::ZERO));
            b.on_written(ms(100 * k + 50), Class::Media, 1000);
        }
        b.observe(&view(ms(1000), Duration::ZERO));
        // 0.5 s: 5 writes → 5000 · 0.95 = 4750; 1.0 s: 4750 · 0.95 = 4512.5 → 4512, and 10
        // writes → 10000 · 0.95 = 9500.
        assert_eq!(b.throughput_top.values, [4512, 9500]);
        assert_eq!(b.throughput_top.median(), 9500);
        // The update at 1.0 s (after the poll): 10000 / 9500.
        let s = b.last_signals.expect("updated");
        assert!(close(s.current_to_max, 10000.0 / 9500.0));
    }

    #[test]
    fn throughput_queries_cut_the_long_rate_window_to_4_1_s() {
        let mut b = SeedBalancer::default();
        for step in 0..=800u64 {
            let now = ms(10 * step);
            b.observe(&view(now, ms(100)));
            if step == 799 {
                // Last pruned by the update at 7.9 s to 7.9 − 2 · 2 s: the 5-s regression at
                // 8.0 s will see 3.9 … 7.99 s only.
                assert_eq!(b.media.samples.front().map(|s| s.0), Some(ms(3_900)));
            }
            b.on_written(now, Class::Media, 1_000);
        }
        assert_eq!(b.media.samples.front().map(|s| s.0), Some(ms(4_000)));
        // A steady rate: both regression lines have the same slope.
        let s = b.last_signals.expect("updated");
        assert!(close(s.rate_status, 1.0));
    }

    #[test]
    fn current_to_maximum_squares_and_collapses() {
        let cfg = SeedBalancerConfig::default();
        let a = allowance(1000, 1, Stage::Increasing);
        let gf = |ctm: f64| {
            a.growth_factor(
                &cfg,
                &Signals {
                    current_to_max: ctm,
                    ..neutral(1000)
                },
            )
        };
        assert!(close(gf(0.8), 1.2 * 0.64));
        assert!(close(gf(0.5), 1.2 * 0.25)); // 0.5 itself is not a collapse
        assert_eq!(gf(0.49), -1.0);
        assert!(close(gf(1.0), 1.2));
        assert!(close(gf(f64::INFINITY), 1.2));
        assert!(close(gf(f64::NAN), 1.2));

        // A collapse while increasing at a new limit: DECREASING, budget to the 10-byte floor.
        let mut a = allowance(10_001, 20_000, Stage::Increasing);
        a.update(
            &cfg,
            &Signals {
                current_to_max: 0.4,
                ..neutral(9_500)
            },
        );
        assert_eq!(
            (a.stage, a.allowed_bytes, a.lastmax_bytes),
            (Stage::Decreasing, 10, 9_500)
        );
    }

    #[test]
    fn rtt_penalty_above_strict_threshold() {
        let cfg = SeedBalancerConfig::default();
        let a = allowance(1000, 1, Stage::Increasing);
        let gf = |r: f64| {
            a.growth_factor(
                &cfg,
                &Signals {
                    rtt_status: r,
                    ..neutral(1000)
                },
            )
        };
        assert!(close(gf(0.81), 1.2 * 0.7));
        assert!(close(gf(0.8), 1.2));
        assert!(close(gf(f64::NAN), 1.2));
    }

    #[test]
    fn growth_factor_capped_at_one_and_a_half() {
        let cfg = SeedBalancerConfig::default();
        // 1.2 · min(2, 1.5) = 1.8 → 1.5; the budget exceeds lastmax: INCREASING, ×1.5.
        let mut a = allowance(10_001, 1, Stage::IncreasingSlowly);
        a.update(
            &cfg,
            &Signals {
                rate_status: 2.0,
                ..neutral(10_001)
            },
        );
        assert_eq!(a.growth, 1.5);
        assert_eq!(a.stage, Stage::Increasing);
        assert_eq!(a.lastmax_bytes, 10_001);
        assert_eq!(a.allowed_bytes, 15_001); // ⌊15001.5⌋
    }

    #[test]
    fn underused_budget_caps_growth_at_0_99() {
        let cfg = SeedBalancerConfig::default();
        // ⌊10001 · 0.9⌋ = 9000: 8999 bytes used is under, 9000 is not.
        let mut a = allowance(10_001, 20_000, Stage::Increasing);
        a.update(&cfg, &neutral(8_999));
        assert_eq!(a.growth, 0.99);
        assert_eq!(a.stage, Stage::Increasing); // 0.9 ≤ gf < 1 keeps the stage
        assert_eq!(a.allowed_bytes, 9_900); // ⌊9900.99⌋
        let a = allowance(10_001, 20_000, Stage::Increasing);
        assert!(close(a.growth_factor(&cfg, &neutral(9_000)), 1.2));
        // Only a cap: a lower factor stays lower.
        let s = Signals {
            rate_status: 0.5,
            ..neutral(0)
        };
        assert!(close(a.growth_factor(&cfg, &s), 0.3));
    }

    #[test]
    fn increasing_to_decreasing_on_a_new_limit() {
        let cfg = SeedBalancerConfig::default();
        // gf = 1.2 · 0.5² = 0.3 < 0.9 while increasing; lastmax / allowed = 0.5: a new limit.
        let mut a = allowance(10_001, 5_000, Stage::Increasing);
        a.update(
            &cfg,
            &Signals {
                rate_status: 0.5,
                ..neutral(9_500)
            },
        );
        assert_eq!(a.stage, Stage::Decreasing);
        assert_eq!(a.lastmax_bytes, 9_500); // what bulk sent in the last second
        assert_eq!(a.allowed_bytes, 3_000); // ⌊10001 · 0.3⌋ = ⌊3000.3⌋
        // Continuing down: stays DECREASING with the full factor.
        a.update(
            &cfg,
            &Signals {
                rate_status: 0.5,
                ..neutral(3_000)
            },
        );
        assert_eq!((a.stage, a.allowed_bytes), (Stage::Decreasing, 900));
    }

    #[test]
    fn decreasing_gently_at_the_same_limit() {
        let cfg = SeedBalancerConfig::default();
        // lastmax / allowed = 9000 / 10010 ≈ 0.899 ∈ (0.7, 1.2): the same limit again.
        let mut a = allowance(10_010, 9_000, Stage::IncreasingSlowly);
        a.update(
            &cfg,
            &Signals {
                rate_status: 0.5,
                ..neutral(10_010)
            },
        );
        assert_eq!(a.stage, Stage::DecreasingGently);
        assert_eq!(a.lastmax_bytes, 9_000);
        assert_eq!(a.allowed_bytes, 9_509); // ⌊10010 · 0.95⌋ = ⌊9509.5⌋
        // 0.5 < gf < 1 keeps it gentle; so does 0 ≤ gf ≤ 0.5 (no branch in the code).
        a.update(
            &cfg,
            &Signals {
                rate_status: 0.8,
                ..neutral(9_509)
            },
        ); // gf = 0.768
        assert_eq!((a.stage, a.allowed_bytes), (Stage::DecreasingGently, 9_033));
        a.update(
            &cfg,
            &Signals {
                rate_status: 0.5,
                ..neutral(9_033)
            },
        ); // gf = 0.3
        assert_eq!((a.stage, a.allowed_bytes), (Stage::DecreasingGently, 8_581));
        // A collapse (gf < 0) leaves it for DECREASING and the floor.
        a.update(
            &cfg,
            &Signals {
                current_to_max: 0.1,
                ..neutral(8_581)
            },
        );
        assert_eq!((a.stage, a.allowed_bytes), (Stage::Decreasing, 10));
        // Boundaries of the same-limit range are exclusive: 7000 / 10000 = 0.7 is new.
        let mut a = allowance(10_000, 7_000, Stage::Increasing);
        a.update(
            &cfg,
            &Signals {
                rate_status: 0.5,
                ..neutral(1_234)
            },
        );
        assert_eq!((a.stage, a.lastmax_bytes), (Stage::Decreasing, 1_234));
    }

    #[test]
    fn increasing_slowly_near_lastmax() {
        let cfg = SeedBalancerConfig::default();
        // allowed ≤ lastmax < 2 · allowed: (10 + 1.2) / 11 per update.
        let mut a = allowance(11_001, 20_000, Stage::Decreasing);
        a.update(&cfg, &neutral(11_001));
        assert_eq!(a.stage, Stage::IncreasingSlowly);
        assert_eq!(a.allowed_bytes, 11_201); // ⌊11001 · 11.2 / 11⌋ = ⌊11201.018⌋
        // Far below (2 · allowed ≤ lastmax): INCREASING, lastmax kept.
        let mut a = allowance(10_001, 20_002, Stage::DecreasingGently);
        a.update(&cfg, &neutral(10_001));
        assert_eq!(
            (a.stage, a.allowed_bytes, a.lastmax_bytes),
            (Stage::Increasing, 12_001, 20_002)
        );
        // Above lastmax: INCREASING and lastmax follows the budget.
        let mut a = allowance(10_001, 9_000, Stage::IncreasingSlowly);
        a.update(&cfg, &neutral(10_001));
        assert_eq!(
            (a.stage, a.allowed_bytes, a.lastmax_bytes),
            (Stage::Increasing, 12_001, 10_001)
        );
    }

    #[test]
    fn initial_state_and_idle_updates() {
        let mut b = SeedBalancer::default();
        assert_eq!((b.allowed_bytes(), b.lastmax_bytes()), (40, 1));
        assert_eq!(b.stage(), Stage::IncreasingSlowly);
        assert_eq!(b.growth_factor(), 1.2);
        assert_eq!(b.wakeup(), None);
        assert_eq!(b.send_window(), None);
        b.observe(&view(Duration::ZERO, Duration::ZERO));
        b.observe(&view(ms(100), Duration::ZERO));
        // No data: no regression (NaN), no throughput (0/0), bulk idle → min(0.99, 1.2);
        // INCREASING_SLOWLY stays: ⌊40 · 10.99 / 11⌋ = ⌊39.96⌋.
        assert_eq!(b.growth_factor(), 0.99);
        assert_eq!(
            (b.stage(), b.allowed_bytes()),
            (Stage::IncreasingSlowly, 39)
        );
    }

    #[test]
    fn updates_run_exactly_every_100ms() {
        let mut b = SeedBalancer::default();
        let t0 = ms(1_000);
        b.observe(&view(t0, Duration::ZERO));
        assert_eq!((b.updates_run(), b.wakeup()), (0, Some(ms(1_100))));
        b.observe(&view(ms(1_099), Duration::ZERO));
        assert_eq!(b.updates_run(), 0);
        b.observe(&view(ms(1_100), Duration::ZERO));
        assert_eq!((b.updates_run(), b.wakeup()), (1, Some(ms(1_200))));
        // A gap: updates at 1.2 … 2.3 s catch up, polls at 1.5 and 2.0 s.
        b.observe(&view(ms(2_350), Duration::ZERO));
        assert_eq!((b.updates_run(), b.wakeup()), (13, Some(ms(2_400))));
        assert_eq!(b.throughput_top.values.len(), 2);
        // Idle updates shrink 40 by one byte each (⌊a · 10.99/11⌋ = a − 1 for small a).
        assert_eq!(b.allowed_bytes(), 40 - 13);
    }

    /// 4 s of 10-ms steps: media at 2 Mbit/s, then ragged and lower from 2 s; 3000 bulk bytes
    /// per step; the srtt 100 ms, 166 ms at the end. `observe` runs at the first and last
    /// step and at every `every`-th (`None`: only those two), before the step's writes.
    fn scripted(every: Option<u64>) -> SeedBalancer {
        let mut b = SeedBalancer::default();
        for step in 0..=400u64 {
            let now = ms(10 * step);
            let srtt = if step == 400 { ms(166) } else { ms(100) };
            if step == 0 || step == 400 || every.is_some_and(|n| step % n == 0) {
                b.observe(&view(now, srtt));
            }
            let media = if step < 200 {
                2_500
            } else {
                900 + (step % 7) * 100
            };
            b.on_written(now, Class::Media, media);
            b.on_written(now, Class::Bulk, 3_000);
        }
        b
    }

    #[test]
    fn catch_up_after_a_gap_is_deterministic() {
        // Observed every step, every 100 ms, or only at 0 and 4 s: the same 40 updates at
        // 0.1, 0.2, … 4.0 s on the same inputs, so exactly the same state.
        let dense = scripted(Some(1));
        let on_time = scripted(Some(10));
        let gap = scripted(None);
        assert_eq!(dense.updates_run(), 40);
        for b in [&on_time, &gap] {
            assert_eq!(b.updates_run(), dense.updates_run());
            assert_eq!(b.allowed_bytes(), dense.allowed_bytes());
            assert_eq!(b.lastmax_bytes(), dense.lastmax_bytes());
            assert_eq!(b.stage(), dense.stage());
            assert_eq!(b.growth_factor().to_bits(), dense.growth_factor().to_bits());
            assert_eq!(b.last_signals, dense.last_signals);
            assert_eq!(b.throughput_top.values, dense.throughput_top.values);
            assert_eq!(b.wakeup(), Some(ms(4_100)));
        }
        // The budget did move (the comparison is not between idle balancers).
        assert_ne!(
            dense.allowed_bytes(),
            SeedBalancerConfig::default().initial_allowed_bytes
        );
    }

    #[test]
    fn bulk_allowance_over_a_sliding_second() {
        let mut b = SeedBalancer::default();
        b.observe(&view(Duration::ZERO, Duration::ZERO));
        b.allowance.allowed_bytes = 10_000;
        b.on_written(ms(200), Class::Bulk, 3_000);
        assert_eq!(b.bulk_allowance(ms(500)), 7_000);
        b.on_written(ms(700), Class::Bulk, 4_000);
        assert_eq!(b.bulk_allowance(ms(900)), 3_000);
        assert_eq!(b.bulk_allowance(ms(1_199)), 3_000);
        // Exactly one second after the write it no longer counts.
        assert_eq!(b.bulk_allowance(ms(1_200)), 6_000);
        assert_eq!(b.bulk_allowance(ms(1_699)), 6_000);
        assert_eq!(b.bulk_allowance(ms(1_700)), 10_000);
        b.on_written(ms(1_800), Class::Bulk, 12_000);
        assert_eq!(b.bulk_allowance(ms(1_800)), 0);
        // Media never counts against the budget.
        b.on_written(ms(2_900), Class::Media, 50_000);
        assert_eq!(b.bulk_allowance(ms(2_900)), 10_000);
    }

    #[test]
    fn priorities_and_send_windows() {
        let mut b = SeedBalancer::default();
        assert_eq!(b.name(), "seed-balancer");
        assert!(b.priority(Class::Media) > b.priority(Class::Bulk));
        b.observe(&view(Duration::ZERO, ms(50)));
        let w = b.send_window().expect("observed");
        assert_eq!(
            (w.media_bytes, w.bulk_bytes),
            (50_000 + 4 * 1200, 50_000 + 2 * 1200)
        );
        assert_eq!((b.frame_expiry(), b.media_target_bps()), (None, None));
    }

    /// A synthetic bottleneck: each 10-ms step bulk takes what the budget and the capacity
    /// allow, media (2 Mbit/s offered) gets the rest, and the RTT grows with the excess
    /// demand queued in a 60-kB buffer. Returns (time s, budget bytes) per step.
    fn run_link(secs: u64, capacity_bps: impl Fn(Duration) -> f64) -> Vec<(f64, u64)> {
        let mut b = SeedBalancer::default();
        let dt = ms(10);
        let base_rtt = ms(50);
        let media_offered = 2e6 / 8.0 * dt.as_secs_f64();
        let mut backlog = 0.0f64;
        let mut out = Vec::new();
        let mut now = Duration::ZERO;
        while now < Duration::from_secs(secs) {
            let c = capacity_bps(now);
            let cap = c / 8.0 * dt.as_secs_f64();
            let rtt = base_rtt + Duration::from_secs_f64(backlog * 8.0 / c);
            b.observe(&view(now, rtt));
            let bulk = (b.bulk_allowance(now) as f64).min(cap).floor();
            let media = media_offered.min(cap - bulk).floor();
            b.on_written(now, Class::Media, media as u64);
            b.on_written(now, Class::Bulk, bulk as u64);
            backlog = (backlog + media_offered + bulk - cap).clamp(0.0, 60_000.0);
            out.push((now.as_secs_f64(), b.allowed_bytes()));
            now += dt;
        }
        out
    }

    #[test]
    fn budget_grows_into_spare_capacity_and_falls_when_it_goes() {
        // 4 Mbit/s (2 spare), 1 Mbit/s from 25 s (none spare), 4 Mbit/s again from 45 s.
        let secs = |s: u64| Duration::from_secs(s);
        let series = run_link(70, |t| {
            if t < secs(25) || t >= secs(45) {
                4e6
            } else {
                1e6
            }
        });
        let mean = |from: f64, to: f64| {
            let v: Vec<f64> = series
                .iter()
                .filter(|(t, _)| (from..to).contains(t))
                .map(|&(_, a)| a as f64)
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        let max = |from: f64, to: f64| {
            series
                .iter()
                .filter(|(t, _)| (from..to).contains(t))
                .map(|p| p.1)
                .max()
                .unwrap()
        };
        // Spare 2 Mbit/s = 250 kB per second: from 40 bytes the budget grows towards it.
        assert!(max(0.0, 5.0) > 50_000, "grew to {}", max(0.0, 5.0));
        let before = mean(10.0, 25.0);
        assert!(before > 120_000.0, "mean budget before the drop {before}");
        // Within five seconds of the drop the budget is cut by more than half, and it stays
        // far below its earlier level while media cannot even get its own rate through.
        assert!(max(30.0, 45.0) < max(10.0, 25.0) / 2);
        let during = mean(30.0, 45.0);
        assert!(
            during < before / 3.0,
            "mean budget during the drop {during}"
        );
        // Capacity back: it grows again.
        let after = mean(50.0, 70.0);
        assert!(after > 3.0 * during, "mean budget after {after}");
    }
}
