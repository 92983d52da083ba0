//! From a scenario's [`ControllerSpec`] to the quinn controller factory both endpoints use.
//! Names and parameters were validated when the scenario loaded (`scenario::controllers`).

use std::sync::Arc;

use quinn_proto::congestion::{BbrConfig, ControllerFactory, CubicConfig, NewRenoConfig};
use scenario::controllers::{
    ControllerSpec, HyblaClassifier, HyblaCompeting, HyblaGrowth, HyblaSpec, HyblaSsthresh,
};

/// A ready-to-use factory and the label reports show for it.
pub struct Controller {
    /// Label for tables and plots (the controller's name).
    pub label: String,
    /// The factory both endpoints use.
    pub factory: Arc<dyn ControllerFactory + Send + Sync>,
}

/// Builds `spec`. `declared_bdp_bytes` is the path's BDP where the caller knows the path
/// (Hybla's start-up target unless `initial_ssthresh` says otherwise). `record_losses` makes a
/// classifying controller keep every loss batch with its verdict (the simulator matches them
/// against the path's drops; a long-lived real-time endpoint keeps only the counts).
pub fn build(
    spec: &ControllerSpec,
    declared_bdp_bytes: Option<u64>,
    record_losses: bool,
) -> Controller {
    build_resumed(spec, declared_bdp_bytes, record_losses, None)
}

/// [`build`], resuming from a previous connection's saved path (RFC 9959) where the controller
/// implements Careful Resume (Hybla); other controllers start as usual ([`resumes`] says which).
pub fn build_resumed(
    spec: &ControllerSpec,
    declared_bdp_bytes: Option<u64>,
    record_losses: bool,
    resume: Option<hybla::ResumeParams>,
) -> Controller {
    let factory: Arc<dyn ControllerFactory + Send + Sync> = match spec {
        ControllerSpec::NewReno {
            initial_window,
            loss_reduction_factor,
        } => {
            let mut config = NewRenoConfig::default();
            if let Some(window) = initial_window {
                config.initial_window(*window);
            }
            if let Some(factor) = loss_reduction_factor {
                config.loss_reduction_factor(*factor as f32);
            }
            Arc::new(config)
        }
        ControllerSpec::Cubic { initial_window } => {
            let mut config = CubicConfig::default();
            if let Some(window) = initial_window {
                config.initial_window(*window);
            }
            Arc::new(config)
        }
        ControllerSpec::Bbr { initial_window } => {
            let mut config = BbrConfig::default();
            if let Some(window) = initial_window {
                config.initial_window(*window);
            }
            Arc::new(config)
        }
        ControllerSpec::Hybla(hybla) => {
            let mut config = hybla_config(hybla, declared_bdp_bytes);
            config.record_losses(record_losses);
            if let Some(resume) = resume {
                config.careful_resume(resume);
            }
            Arc::new(config)
        }
    };
    Controller {
        label: spec.name().to_owned(),
        factory,
    }
}

/// Whether `spec`'s controller implements Careful Resume, so that saving and resuming a path's
/// state for it means something.
pub fn resumes(spec: &ControllerSpec) -> bool {
    matches!(spec, ControllerSpec::Hybla(_))
}

fn hybla_config(spec: &HyblaSpec, mut declared_bdp_bytes: Option<u64>) -> hybla::HyblaConfig {
    use hybla::{CompetingGrowth, Growth, InitialSsthresh, LossClassifier};
    let mut config = hybla::HyblaConfig::default();
    if let Some(rtt0) = spec.rtt0 {
        config.rtt0(rtt0);
    }
    if let Some(choice) = spec.initial_ssthresh {
        config.initial_ssthresh(match choice {
            HyblaSsthresh::Auto => InitialSsthresh::Estimate,
            HyblaSsthresh::Estimate => {
                declared_bdp_bytes = None;
                InitialSsthresh::Estimate
            }
            HyblaSsthresh::Infinite => InitialSsthresh::Infinite,
            HyblaSsthresh::Segments(gamma) => InitialSsthresh::Segments(gamma),
            HyblaSsthresh::Bytes(bytes) => InitialSsthresh::Bytes(bytes),
        });
    }
    if let Some(window) = spec.initial_window {
        config.initial_window(window);
    }
    if let Some(factor) = spec.loss_reduction_factor {
        config.loss_reduction_factor(factor);
    }
    if let Some(window) = spec.base_rtt_window {
        config.base_rtt_window(window);
    }
    config.growth(match spec.growth.unwrap_or(HyblaGrowth::PipeAware) {
        HyblaGrowth::PipeAware => Growth::PipeAware,
        HyblaGrowth::Seed => Growth::Seed,
    });
    if let Some(competing) = spec.competing {
        config.competing_growth(match competing {
            HyblaCompeting::Matched => CompetingGrowth::Matched,
            HyblaCompeting::Reno => CompetingGrowth::Reno,
            HyblaCompeting::Rho => CompetingGrowth::Rho,
            HyblaCompeting::QueueRho => CompetingGrowth::QueueRho,
        });
    }
    if let Some(classifier) = spec.classifier {
        config.loss_classifier(match classifier {
            HyblaClassifier::Threshold => LossClassifier::QueueThreshold,
            HyblaClassifier::LossByQueue => LossClassifier::LossByQueue,
        });
    }
    if let Some(bdp) = declared_bdp_bytes {
        config.declared_bdp(bdp);
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_controller_builds() {
        for name in scenario::controllers::CONTROLLERS {
            let spec = ControllerSpec::named(name, "cc").unwrap();
            assert_eq!(build(&spec, Some(1_000_000), false).label, name);
        }
    }
}
