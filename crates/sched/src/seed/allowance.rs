//! The bulk budget of `seed-balancer`: the growth factor each update computes from the
//! quality signals, the growth stages around the last limit, and the budget they give.

use super::config::{SeedBalancerConfig, Stage};

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

/// The quality signals one update combines into the growth factor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Signals {
    /// slope(short) / slope(long) of cumulative media bytes.
    pub(super) rate_status: f64,
    /// Media bytes in the throughput window / the top list's "median".
    pub(super) current_to_max: f64,
    /// Scored short-window RTT slope.
    pub(super) rtt_status: f64,
    /// Bulk bytes sent in the bulk window.
    pub(super) bulk_sent_bytes: u64,
}

/// The bulk budget and its growth-stage memory (`streamClassInfo.cc_data`).
#[derive(Debug, Clone)]
pub(super) struct Allowance {
    pub(super) allowed_bytes: u64,
    pub(super) lastmax_bytes: u64,
    pub(super) stage: Stage,
    /// Growth factor of the last update (the base before the first).
    pub(super) growth: f64,
}

impl Allowance {
    pub(super) fn new(cfg: &SeedBalancerConfig) -> Self {
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
    pub(super) fn update(&mut self, cfg: &SeedBalancerConfig, s: &Signals) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
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
}
