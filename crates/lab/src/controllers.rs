//! From a scenario's [`ControllerSpec`] to the quinn controller factory both endpoints use.
//! Names and parameters were validated when the scenario loaded (`scenario::controllers`).

use std::sync::Arc;

use quinn_proto::congestion::{BbrConfig, ControllerFactory, CubicConfig, NewRenoConfig};
use scenario::FieldError;
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

/// What a backend keeps of its path for the controllers that read it: the simulator matches
/// every loss batch's verdict against its drops, and can tell a controller why each packet was
/// lost; a real-time endpoint, long-lived, keeps only the counts and knows no drop's cause.
#[derive(Clone, Default)]
pub struct PathRecord {
    /// Keep every loss batch with its verdict (a classifying controller: Hybla).
    pub record_losses: bool,
    /// Why each of the flow's packets was lost, for Hybla's `classifier = "truth"`.
    pub loss_truth: Option<Arc<dyn hybla::LossTruth>>,
}

/// Builds `spec`. `declared_bdp_bytes` is the path's BDP where the caller knows the path
/// (Hybla's start-up target unless `initial_ssthresh` says otherwise). `field` names the
/// controller's origin in errors (`flow[0].cc`, `--cc`): a controller that reads the path's
/// record of drops needs one (`record.loss_truth`).
pub fn build(
    spec: &ControllerSpec,
    declared_bdp_bytes: Option<u64>,
    record: &PathRecord,
    field: &str,
) -> Result<Controller, FieldError> {
    build_resumed(spec, declared_bdp_bytes, record, field, None)
}

/// [`build`], resuming from a previous connection's saved path (RFC 9959) where the controller
/// implements Careful Resume (Hybla); other controllers start as usual ([`resumes`] says which).
pub fn build_resumed(
    spec: &ControllerSpec,
    declared_bdp_bytes: Option<u64>,
    record: &PathRecord,
    field: &str,
    resume: Option<hybla::ResumeParams>,
) -> Result<Controller, FieldError> {
    if spec.reads_the_path_record() && record.loss_truth.is_none() {
        return Err(FieldError::new(
            format!("{field}_params.classifier"),
            "\"truth\" reads the simulator's record of why each packet was lost, which real \
             time has none of: run it in the simulator (the default backend)",
        ));
    }
    let factory: Arc<dyn ControllerFactory + Send + Sync> = match *spec {
        ControllerSpec::NewReno {
            initial_window,
            loss_reduction_factor,
        } => quinn_controller(initial_window, move |window| {
            let mut config = NewRenoConfig::default();
            if let Some(window) = window {
                config.initial_window(window);
            }
            if let Some(factor) = loss_reduction_factor {
                config.loss_reduction_factor(factor as f32);
            }
            Arc::new(config)
        }),
        ControllerSpec::Cubic { initial_window } => quinn_controller(initial_window, |window| {
            let mut config = CubicConfig::default();
            if let Some(window) = window {
                config.initial_window(window);
            }
            Arc::new(config)
        }),
        ControllerSpec::Bbr { initial_window } => quinn_controller(initial_window, |window| {
            let mut config = BbrConfig::default();
            if let Some(window) = window {
                config.initial_window(window);
            }
            Arc::new(config)
        }),
        ControllerSpec::Hybla(ref hybla) => {
            let mut config = hybla_config(hybla, declared_bdp_bytes);
            config.record_losses(record.record_losses);
            if let Some(truth) = record
                .loss_truth
                .clone()
                .filter(|_| spec.reads_the_path_record())
            {
                config.loss_truth(truth);
            }
            if let Some(resume) = resume {
                config.careful_resume(resume);
            }
            Arc::new(config)
        }
    };
    Ok(Controller {
        label: spec.name().to_owned(),
        factory,
    })
}

type Factory = Arc<dyn ControllerFactory + Send + Sync>;

/// One of quinn's own controllers, built by `make` from an initial window (None: quinn's
/// default). Given no window, quinn's default, unless the path's datagrams make it too small
/// ([`PathSizedWindow`]).
fn quinn_controller(
    initial_window: Option<u64>,
    make: impl Fn(Option<u64>) -> Factory + Send + Sync + 'static,
) -> Factory {
    match initial_window {
        Some(window) => make(Some(window)),
        None => Arc::new(PathSizedWindow {
            make: Box::new(make),
        }),
    }
}

/// quinn's controllers start from a fixed 12 000 B (RFC 9002 §7.2's window for 1 200 B
/// datagrams), whatever the path's MTU: from a 6 028 B MTU it holds fewer than two datagrams,
/// and from 12 028 B none, so the flow never sends. Where it holds fewer than two, the window
/// is RFC 9002's for the datagrams the connection starts with, min(10 × size, max(2 × size,
/// 14 720 B)); elsewhere quinn's default as shipped, so that every result at common MTUs is
/// quinn's.
struct PathSizedWindow {
    make: Box<dyn Fn(Option<u64>) -> Factory + Send + Sync>,
}

/// The initial window [`PathSizedWindow`] gives a connection whose datagrams are
/// `datagram_bytes`, given quinn's default `quinn_default_bytes`: None keeps the default.
fn path_sized_initial_window(quinn_default_bytes: u64, datagram_bytes: u64) -> Option<u64> {
    (quinn_default_bytes < 2 * datagram_bytes)
        .then(|| hybla::rfc9002_initial_window(datagram_bytes))
}

impl ControllerFactory for PathSizedWindow {
    fn build(
        self: Arc<Self>,
        now: std::time::Instant,
        current_mtu: u16,
    ) -> Box<dyn quinn_proto::congestion::Controller> {
        let quinn_default = (self.make)(None).build(now, current_mtu);
        match path_sized_initial_window(quinn_default.initial_window(), u64::from(current_mtu)) {
            Some(window) => (self.make)(Some(window)).build(now, current_mtu),
            None => quinn_default,
        }
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
            // The verdicts come from the path's record (`PathRecord::loss_truth`); the
            // classifier's own state runs as by default.
            HyblaClassifier::Truth => LossClassifier::QueueThreshold,
        });
    }
    if let Some(bdp) = declared_bdp_bytes {
        config.declared_bdp(bdp);
    }
    config
}

#[cfg(test)]
mod tests {
    #[test]
    fn quinns_controllers_start_from_two_jumbo_datagrams_at_least() {
        use super::path_sized_initial_window as window;
        // quinn's 12 000 B holds two 1 472 B and two 5 999 B datagrams: kept.
        assert_eq!(window(12_000, 1_472), None);
        assert_eq!(window(12_000, 6_000), None);
        // 8 972 B (a 9 000 B MTU): RFC 9002's max(2 × 8 972, 14 720) = 17 944 B.
        assert_eq!(window(12_000, 8_972), Some(17_944));
        // 12 000 B, which quinn's window could not send at all: 24 000 B.
        assert_eq!(window(12_000, 12_000), Some(24_000));
    }

    #[test]
    fn a_quinn_controller_without_a_window_gets_one_its_first_datagram_fits() {
        let spec = ControllerSpec::NewReno {
            initial_window: None,
            loss_reduction_factor: None,
        };
        let factory = super::build(&spec, None, &PathRecord::default(), "cc")
            .unwrap()
            .factory;
        let now = std::time::Instant::now();
        assert_eq!(factory.clone().build(now, 1_472).window(), 12_000);
        assert_eq!(factory.build(now, 12_000).window(), 24_000);
        // An explicit window is the caller's, as given.
        let spec = ControllerSpec::Cubic {
            initial_window: Some(30_000),
        };
        let factory = super::build(&spec, None, &PathRecord::default(), "cc")
            .unwrap()
            .factory;
        assert_eq!(factory.build(now, 12_000).window(), 30_000);
    }

    use super::*;

    #[test]
    fn every_registered_controller_builds() {
        for name in scenario::controllers::CONTROLLERS {
            let spec = ControllerSpec::named(name, "cc").unwrap();
            let record = PathRecord::default();
            assert_eq!(
                build(&spec, Some(1_000_000), &record, "cc").unwrap().label,
                name
            );
        }
    }
}
