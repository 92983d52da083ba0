//! From a scenario to a concrete simulation: controllers resolved, "auto" transport settings
//! replaced by the satellite preset, one seed.

use std::path::PathBuf;
use std::time::Duration;

use std::sync::Arc;

use sim::apps::bulk::BulkSpec;
use sim::apps::media::MediaSpec;
use sim::apps::perf::PerfSpec;
use sim::{AppSpec, FlowApp, FlowConfig, SimConfig, TransportSettings};

use perfwire::session::{BulkParams, MediaParams};
use scenario::FieldError;
use scenario::apps::{AppConfig, AppKind, BulkConfig, MediaConfig};
use scenario::controllers::ControllerSpec;
use scenario::{RunSpec, Scenario};

use crate::controllers;

/// A media frame is late when its one-way delay exceeds the propagation delay by this much
/// (the default deadline; ITU-T G.114's 150 ms of mouth-to-ear budget beyond the path).
pub const MEDIA_DEADLINE_SLACK: Duration = Duration::from_millis(150);

/// The transport settings of flow `index`: the preset with the scenario's overrides applied.
pub fn transport_settings(scenario: &Scenario, index: usize) -> TransportSettings {
    let path = scenario.path_config();
    let spec = &scenario.flows[index].transport;
    let mut settings = sim::satellite_preset(&path, index);
    settings.send_fairness = !scenario.flows[index].scheduler.streams_in_write_order();
    if let Some(v) = spec.initial_rtt {
        settings.initial_rtt = v;
    }
    if let Some(v) = spec.stream_receive_window_bytes {
        settings.stream_receive_window_bytes = v;
    }
    if let Some(v) = spec.receive_window_bytes {
        settings.receive_window_bytes = v;
    }
    if let Some(v) = spec.send_window_bytes {
        settings.send_window_bytes = v;
    }
    if let Some(v) = spec.ack_eliciting_threshold {
        settings.server_ack_eliciting_threshold = Some(v);
        settings.client_ack_eliciting_threshold = Some(v);
    }
    if let Some(v) = spec.max_ack_delay {
        settings.max_ack_delay = Some(v);
    }
    settings
}

/// The bandwidth-delay product of the direction flow `index` sends its data in (forward for
/// downloads, return for upload-only flows) at the flow's base RTT: what the scenario
/// declares about the path, handed to controllers that can use it (Hybla's start-up target).
pub fn declared_bdp_bytes(scenario: &Scenario, index: usize) -> u64 {
    let path = scenario.path_config();
    let flow = &scenario.flows[index];
    let uploads_only = flow
        .perf()
        .is_some_and(|perf| perf.download.is_none() && perf.upload_bytes.is_some());
    let link = if uploads_only {
        &path.return_link
    } else {
        &path.forward
    };
    netsim::bdp_bytes(link.rate_bps, path.flow_base_rtt(index))
}

/// The controller flow `flow` runs with under `spec`: its own, or the `--cc` override.
/// Parameters belong to the scenario's controller; an override naming a different controller
/// runs with that controller's defaults.
pub fn flow_controller(
    flow: &scenario::FlowSpec,
    spec: &RunSpec,
) -> Result<ControllerSpec, FieldError> {
    match &spec.cc_override {
        Some(name) if name != flow.controller.name() => ControllerSpec::named(name, "--cc"),
        _ => Ok(flow.controller.clone()),
    }
}

/// The deadline of a media application of flow `flow`: its own, else the flow's one-way
/// propagation delay + [`MEDIA_DEADLINE_SLACK`] (both backends).
pub fn media_deadline(scenario: &Scenario, flow: usize, media: &MediaConfig) -> Duration {
    media
        .deadline
        .unwrap_or(scenario.path_config().flow_base_rtt(flow) / 2 + MEDIA_DEADLINE_SLACK)
}

/// The seed of application `index` of flow `flow` in a run with seed `seed` (its random
/// stream, e.g. a media source's frame sizes; both backends).
pub fn app_seed(seed: u64, flow: usize, index: usize) -> u64 {
    netsim::derive_seed(seed, 7000 + 64 * flow as u64 + index as u64)
}

/// Media application `index` of flow `flow` in a run with seed `seed`, as both backends run it
/// (the simulator's [`MediaSpec`], the real-time session request).
pub fn media_params(
    scenario: &Scenario,
    seed: u64,
    flow: usize,
    index: usize,
    media: &MediaConfig,
) -> MediaParams {
    MediaParams {
        bitrate_bps: media.bitrate_bps,
        video: media.video,
        deadline: media_deadline(scenario, flow, media),
        seed: app_seed(seed, flow, index),
        adaptive: media.adaptive,
    }
}

/// A bulk application's table as both backends run it.
pub fn bulk_params(bulk: &BulkConfig) -> BulkParams {
    BulkParams {
        rate_bps: bulk.rate_bps,
        start: bulk.start,
    }
}

/// The simulator's application for a scenario's app table: the one place that knows both.
/// `seed` is the run's seed; `flow` and `app` index the app (its random stream).
fn flow_app(scenario: &Scenario, seed: u64, flow: usize, index: usize, app: &AppConfig) -> FlowApp {
    let spec: Arc<dyn AppSpec> = match &app.kind {
        AppKind::Media(media) => Arc::new(MediaSpec {
            params: media_params(scenario, seed, flow, index, media),
            sender: media.sender,
        }),
        AppKind::Bulk(bulk) => Arc::new(BulkSpec {
            params: bulk_params(bulk),
            sender: bulk.sender,
        }),
        AppKind::Perf(perf) => Arc::new(PerfSpec {
            download: perf.download,
            upload_bytes: perf.upload_bytes,
            repeat_after: perf.repeat_after,
            time_to_bytes: scenario.time_to_bytes.clone(),
        }),
    };
    FlowApp {
        name: app.name.clone(),
        spec,
    }
}

/// Builds the simulation of `scenario` for `spec`.
pub fn sim_config(
    scenario: &Scenario,
    spec: &RunSpec,
    qlog_dir: Option<PathBuf>,
) -> Result<SimConfig, FieldError> {
    let mut flows = Vec::with_capacity(scenario.flows.len());
    for (index, flow) in scenario.flows.iter().enumerate() {
        let controller_spec = flow_controller(flow, spec)?;
        let declared_bdp = declared_bdp_bytes(scenario, index);
        let loss_truth = controller_spec
            .reads_the_path_record()
            .then(|| Arc::new(sim::PathLossTruth::default()));
        let record = controllers::PathRecord {
            record_losses: true,
            loss_truth: loss_truth
                .clone()
                .map(|truth| truth as Arc<dyn hybla::LossTruth>),
        };
        let field = format!("flow[{index}].cc");
        let controller = controllers::build(&controller_spec, Some(declared_bdp), &record, &field)?;
        let resumed_controller: Option<sim::ResumedController> = controller_spec
            .careful_resume()
            .then(|| -> sim::ResumedController {
                Arc::new(move |resume| {
                    controllers::build_resumed(
                        &controller_spec,
                        Some(declared_bdp),
                        &record,
                        &field,
                        Some(resume),
                    )
                    .expect("the same settings built the flow's first controller")
                    .factory
                })
            });
        flows.push(FlowConfig {
            name: flow.name.clone(),
            cc: controller.label,
            controller: controller.factory,
            start: flow.start,
            stop_at: flow.stop,
            apps: flow
                .apps
                .iter()
                .enumerate()
                .map(|(i, app)| flow_app(scenario, spec.seed, index, i, app))
                .collect(),
            transport: transport_settings(scenario, index),
            scheduler: flow.scheduler.clone(),
            qlog: flow.qlog && qlog_dir.is_some(),
            reconnect_after: flow.reconnect_after,
            resumed_controller,
            loss_truth,
        });
    }
    Ok(SimConfig {
        path: scenario.path_config(),
        seed: spec.seed,
        duration: scenario.duration,
        sample_interval: scenario.sample_interval,
        flows,
        qlog_dir,
    })
}
