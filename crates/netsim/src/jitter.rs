//! Per-packet delay variation: draws from a [`JitterDistribution`] on the link's own random
//! stream, so adding jitter changes no loss or AQM decision.

use std::time::Duration;

use crate::config::JitterDistribution;
use crate::rng::Uniform;

/// Draws one extra delay.
pub(crate) fn draw(distribution: JitterDistribution, rng: &mut Uniform) -> Duration {
    let secs = match distribution {
        JitterDistribution::None => return Duration::ZERO,
        JitterDistribution::Uniform { min, max } => {
            let (lo, hi) = (min.as_secs_f64(), max.as_secs_f64());
            lo + (hi - lo) * rng.next_f64()
        }
        // Inverse transform: −mean·ln(1 − U), U in [0, 1).
        JitterDistribution::Exponential { mean } => {
            -mean.as_secs_f64() * (1.0 - rng.next_f64()).ln()
        }
        // Box–Muller: √(−2 ln U₁)·cos(2π U₂), U₁ in (0, 1].
        JitterDistribution::Normal { mean, stddev } => {
            let u1 = 1.0 - rng.next_f64();
            let u2 = rng.next_f64();
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            mean.as_secs_f64() + stddev.as_secs_f64() * z
        }
    };
    Duration::from_secs_f64(secs.max(0.0))
}

/// Φ(z), the standard normal CDF (Abramowitz & Stegun 7.1.26 for erf, error < 1.5e-7).
pub(crate) fn standard_normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        (1.0 + erf) / 2.0
    } else {
        (1.0 - erf) / 2.0
    }
}

impl JitterDistribution {
    /// Mean extra delay actually applied (after truncation at zero), seconds.
    pub fn mean_secs(&self) -> f64 {
        match *self {
            JitterDistribution::None => 0.0,
            JitterDistribution::Uniform { min, max } => {
                (min.as_secs_f64() + max.as_secs_f64()) / 2.0
            }
            JitterDistribution::Exponential { mean } => mean.as_secs_f64(),
            JitterDistribution::Normal { mean, stddev } => {
                // E[max(0, X)] = μ·Φ(μ/σ) + σ·φ(μ/σ)
                let (mu, sigma) = (mean.as_secs_f64(), stddev.as_secs_f64());
                if sigma == 0.0 {
                    return mu;
                }
                let z = mu / sigma;
                let pdf = (-z * z / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
                mu * standard_normal_cdf(z) + sigma * pdf
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn sample_mean(distribution: JitterDistribution, n: usize) -> (f64, f64) {
        let mut rng = Uniform::new(7, 3);
        let draws: Vec<f64> = (0..n)
            .map(|_| draw(distribution, &mut rng).as_secs_f64())
            .collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        let min = draws.iter().cloned().fold(f64::INFINITY, f64::min);
        (mean, min)
    }

    #[test]
    fn exponential_draws_have_the_stated_mean_and_mean_difference() {
        let d = JitterDistribution::Exponential { mean: MS(10) };
        let mut rng = Uniform::new(1, 9);
        let n = 200_000;
        let draws: Vec<f64> = (0..n).map(|_| draw(d, &mut rng).as_secs_f64()).collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        let mean_difference =
            draws.windows(2).map(|w| (w[1] - w[0]).abs()).sum::<f64>() / (n - 1) as f64;
        // Standard error of the mean: 10 ms / √n ≈ 0.022 ms.
        assert!((mean - 0.010).abs() < 0.0001, "mean {mean}");
        assert!(
            (mean_difference - 0.010).abs() < 0.0002,
            "E|X − Y| {mean_difference}"
        );
        assert!((d.mean_secs() - 0.010).abs() < 1e-12);
    }

    #[test]
    fn uniform_draws_stay_in_range_with_the_midpoint_as_mean() {
        let d = JitterDistribution::Uniform {
            min: MS(2),
            max: MS(6),
        };
        let mut rng = Uniform::new(2, 9);
        for _ in 0..10_000 {
            let x = draw(d, &mut rng);
            assert!(x >= MS(2) && x <= MS(6), "{x:?}");
        }
        let (mean, _) = sample_mean(d, 100_000);
        assert!((mean - 0.004).abs() < 0.00003, "{mean}");
        assert!((d.mean_secs() - 0.004).abs() < 1e-12);
    }

    #[test]
    fn normal_draws_are_truncated_at_zero_and_match_the_truncated_mean() {
        // μ = σ: 16 % of draws fall below zero and count as zero.
        let d = JitterDistribution::Normal {
            mean: MS(5),
            stddev: MS(5),
        };
        let (mean, min) = sample_mean(d, 400_000);
        assert_eq!(min, 0.0);
        // E[max(0, X)] = μΦ(1) + σφ(1) = 5·0.841345 + 5·0.241971 = 5.416579 ms.
        assert!(
            (d.mean_secs() - 0.005_416_579).abs() < 1e-8,
            "{}",
            d.mean_secs()
        );
        assert!((mean - d.mean_secs()).abs() < 0.00003, "{mean}");
    }

    #[test]
    fn normal_cdf_matches_tabulated_values() {
        for (z, phi) in [
            (0.0, 0.5),
            (1.0, 0.841_344_7),
            (-1.96, 0.024_997_9),
            (3.0, 0.998_650_1),
        ] {
            assert!((standard_normal_cdf(z) - phi).abs() < 2e-7, "Φ({z})");
        }
    }
}
