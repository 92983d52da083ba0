//! What each flow's client asks for in real time: its session (the applications as the
//! simulator plays them) and its perf exchange.

use std::time::Duration;

use perfwire::Sender;
use perfwire::session::{AppParams, PerfParams, SessionApp, SessionRequest};
use scenario::apps::AppKind;
use scenario::{Download, RunSpec, Scenario};

/// The session flow `index` asks its server for: its applications as the simulator plays them
/// (deadlines, seeds, start times from [`crate::plan`]), its scheduler, until its stop.
pub(super) fn session_request(scenario: &Scenario, spec: &RunSpec, index: usize) -> SessionRequest {
    let flow = &scenario.flows[index];
    let apps = flow
        .apps
        .iter()
        .enumerate()
        .map(|(i, app)| match &app.kind {
            AppKind::Media(m) => SessionApp {
                sender: m.sender,
                params: AppParams::Media(crate::plan::media_params(
                    scenario, spec.seed, index, i, m,
                )),
            },
            AppKind::Bulk(b) => SessionApp {
                sender: b.sender,
                params: AppParams::Bulk(crate::plan::bulk_params(b)),
            },
            AppKind::Perf(p) => SessionApp {
                sender: if p.download.is_some() {
                    Sender::Server
                } else {
                    Sender::Client
                },
                params: AppParams::Perf(PerfParams {
                    downloads: p.download.is_some(),
                    uploads: p.upload_bytes.is_some(),
                }),
            },
        })
        .collect();
    SessionRequest {
        scheduler: flow.scheduler.name().to_owned(),
        duration: flow
            .stop
            .unwrap_or(scenario.duration)
            .saturating_sub(flow.start)
            .max(Duration::from_millis(1)),
        apps,
    }
}

/// The perf exchange of flow `index` (its perf application: the download, upload and repeat the
/// simulator plays), until the flow's stop, with the scenario's time-to-bytes marks.
pub(super) fn perf_requests(scenario: &Scenario, index: usize) -> emu::perf::PerfRequests {
    let flow = &scenario.flows[index];
    let perf = flow.perf();
    emu::perf::PerfRequests {
        download_bytes: match perf.and_then(|p| p.download) {
            Some(Download::Bytes(n)) => Some(n),
            _ => None,
        },
        upload_bytes: perf.and_then(|p| p.upload_bytes).unwrap_or(0),
        duration: Some(
            flow.stop
                .unwrap_or(scenario.duration)
                .saturating_sub(flow.start),
        ),
        thresholds: scenario.time_to_bytes.clone(),
        verify: true,
        repeat_after: perf.and_then(|p| p.repeat_after),
    }
}
