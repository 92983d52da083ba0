//! The parameters of `seed-balancer`: the published values of \[Ruehl2024\]'s code, each with
//! where it comes from.

use std::time::Duration;

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

/// Parameters of [`SeedBalancer`](super::SeedBalancer). [`Default`] gives the published ones (code at `HEAD` of
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
