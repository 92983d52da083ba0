//! Shared builders for the end-to-end tests.

use std::sync::Arc;
use std::time::Duration;

use netsim::{LinkConfig, LossModel, PathConfig, QueueLimit};
use perfwire::Request;
use quinn_proto::congestion::{ControllerFactory, CubicConfig, NewRenoConfig};
use sim::apps::perf::PerfSpec;
use sim::{FlowApp, FlowConfig, SimConfig};

pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

pub fn controller(name: &str) -> Arc<dyn ControllerFactory + Send + Sync> {
    match name {
        "cubic" => Arc::new(CubicConfig::default()),
        _ => Arc::new(NewRenoConfig::default()),
    }
}

/// One flow over a symmetric path.
pub fn single_flow(
    rate_bps: u64,
    one_way: Duration,
    loss: f64,
    download: Request,
    duration: Duration,
    cc: &str,
) -> SimConfig {
    let link = LinkConfig {
        queue: QueueLimit::BdpMultiple(1.0),
        loss: if loss > 0.0 {
            LossModel::Bernoulli { probability: loss }
        } else {
            LossModel::None
        },
        ..LinkConfig::new(rate_bps, one_way)
    };
    let path = PathConfig {
        forward: link.clone(),
        return_link: link,
        mtu_bytes: 1500,
        access_delays: vec![Duration::ZERO],
    };
    let transport = sim::satellite_preset(&path, 0);
    SimConfig {
        path,
        seed: 1,
        duration,
        sample_interval: ms(100),
        flows: vec![FlowConfig {
            name: "f".into(),
            cc: cc.into(),
            controller: controller(cc),
            start: Duration::ZERO,
            stop_at: None,
            apps: vec![perf_app(PerfSpec {
                download: Some(download),
                time_to_bytes: vec![2_000_000, 10_000_000],
                ..PerfSpec::default()
            })],
            transport,
            scheduler: Default::default(),
            qlog: false,
            reconnect_after: None,
            resumed_controller: None,
            loss_truth: None,
        }],
        qlog_dir: None,
    }
}

/// A flow's perf application.
pub fn perf_app(spec: PerfSpec) -> FlowApp {
    FlowApp {
        name: "perf".into(),
        spec: Arc::new(spec),
    }
}
