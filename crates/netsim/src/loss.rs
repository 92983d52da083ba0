//! Random loss processes: the state behind a [`LossModel`].

use crate::config::LossModel;
use crate::rng::Uniform;

/// Decides, packet by packet, whether the link corrupts a packet.
#[derive(Debug, Clone)]
pub struct LossProcess {
    model: LossModel,
    in_bad_state: bool,
}

impl LossProcess {
    /// Starts in the good state.
    pub fn new(model: LossModel) -> Self {
        Self {
            model,
            in_bad_state: false,
        }
    }

    /// Replaces the model (schedule step); a Gilbert-Elliott chain keeps its state.
    pub fn set_model(&mut self, model: LossModel) {
        self.model = model;
        if !matches!(model, LossModel::GilbertElliott { .. }) {
            self.in_bad_state = false;
        }
    }

    /// The model in force.
    pub fn model(&self) -> LossModel {
        self.model
    }

    /// Whether the next packet is lost. Gilbert-Elliott: the loss draw uses the current state,
    /// then the chain makes one transition.
    pub fn next_is_lost(&mut self, rng: &mut Uniform) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { probability } => rng.chance(probability),
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => {
                let lost = if self.in_bad_state {
                    rng.chance(loss_in_bad)
                } else {
                    rng.chance(loss_in_good)
                };
                let flip = if self.in_bad_state {
                    p_bad_to_good
                } else {
                    p_good_to_bad
                };
                if rng.chance(flip) {
                    self.in_bad_state = !self.in_bad_state;
                }
                lost
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Binomial bound: |observed - expected| within `z` standard deviations.
    fn within_sigma(observed: u64, n: u64, p: f64, z: f64) -> bool {
        let expected = n as f64 * p;
        let sigma = (n as f64 * p * (1.0 - p)).sqrt();
        (observed as f64 - expected).abs() <= z * sigma
    }

    #[test]
    fn bernoulli_one_percent_over_a_million_packets() {
        let mut process = LossProcess::new(LossModel::Bernoulli { probability: 0.01 });
        let mut rng = Uniform::new(7, 1);
        let n = 1_000_000;
        let lost = (0..n).filter(|_| process.next_is_lost(&mut rng)).count() as u64;
        // 5 sigma: a correct generator fails this about once in 3.5 million runs.
        assert!(within_sigma(lost, n, 0.01, 5.0), "lost {lost} of {n}");
    }

    #[test]
    fn bernoulli_extremes_are_exact() {
        let mut rng = Uniform::new(1, 1);
        let mut never = LossProcess::new(LossModel::Bernoulli { probability: 0.0 });
        let mut always = LossProcess::new(LossModel::Bernoulli { probability: 1.0 });
        assert!((0..10_000).all(|_| !never.next_is_lost(&mut rng)));
        assert!((0..10_000).all(|_| always.next_is_lost(&mut rng)));
    }

    #[test]
    fn gilbert_elliott_stationary_rate_and_mean_burst() {
        // draft-kuhn bursty example: p = 0.018, r = 0.645 → 2.7 % loss, bursts of 1.55 packets.
        let model = LossModel::GilbertElliott {
            p_good_to_bad: 0.018,
            p_bad_to_good: 0.645,
            loss_in_good: 0.0,
            loss_in_bad: 1.0,
        };
        let expected_rate = model.stationary_loss_rate();
        assert!((expected_rate - 0.018 / 0.663).abs() < 1e-12);
        let mut process = LossProcess::new(model);
        let mut rng = Uniform::new(42, 3);
        let n = 1_000_000u64;
        let (mut lost, mut bursts, mut previous) = (0u64, 0u64, false);
        for _ in 0..n {
            let now = process.next_is_lost(&mut rng);
            lost += now as u64;
            bursts += (now && !previous) as u64;
            previous = now;
        }
        let rate = lost as f64 / n as f64;
        // Losses are correlated, so allow more than the binomial sigma: ±3 % relative.
        assert!((rate / expected_rate - 1.0).abs() < 0.03, "rate {rate}");
        let mean_burst = lost as f64 / bursts as f64;
        assert!(
            (mean_burst - 1.0 / 0.645).abs() < 0.03,
            "burst {mean_burst}"
        );
    }
}
