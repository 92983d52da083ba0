//! What the real-time endpoints measured of one flow, in the simulator's terms: a perf
//! client's report, a session's two ends.

use std::collections::BTreeMap;
use std::time::Duration;

use emu::apps::{AppEnd, EndReport, Received};
use emu::endpoint;
use emu::perf;
use emu::session::{ServerSession, SessionReport};
use perfwire::Sender;
use perfwire::media::FrameRecord;
use perfwire::session::{AppParams, ReceivedSummary, SentSummary, SessionApp, SessionRequest};
use sim::apps::media::MediaReport;
use sim::apps::perf::{Exchange, PerfReport};
use sim::{AppOutcome, FlowEnd};

/// One application of a session in the simulator's shape ([`AppOutcome`], its report as
/// `sim::apps::{media, bulk}` give it), from what its sender did (`sent`, times on the
/// receiver's clock) and what its receiver measured (`received`, with every frame it recorded
/// in `frames` where the receiver is at hand; a remote server's account of an upload has
/// counts and delays only).
pub fn session_app_outcome(
    name: &str,
    app: &SessionApp,
    sent: &SentSummary,
    received: &ReceivedSummary,
    frames: Vec<FrameRecord>,
) -> AppOutcome {
    let (kind, report) = match app.params {
        AppParams::Media(params) => {
            // Fields the simulator's report may gain later keep their defaults here.
            #[allow(clippy::needless_update)]
            let report = MediaReport {
                frames_sent: sent.frames_sent,
                frames_received: received.frames_received,
                frame_delay_ms: received.frame_delay_ms,
                late_frames: received.late_frames,
                deadline_ms: params.deadline.as_secs_f64() * 1e3,
                frames,
                cancelled_frames: sent.cancelled_frames,
                bitrate_bps: params.bitrate_bps,
                mean_bitrate_bps: sent.mean_bitrate_bps as f64,
                fps: params.video.fps,
                keyframe_interval: params.video.keyframe_interval,
                first_capture_s: sent.started_at.map_or(0.0, |t| t.as_secs_f64()),
                ..MediaReport::default()
            };
            (sim::apps::media::KIND, serde_json::to_value(report))
        }
        AppParams::Bulk(params) => (
            sim::apps::bulk::KIND,
            Ok(serde_json::json!({
                "written_bytes": sent.written_bytes,
                "offered_bps": params.rate_bps,
            })),
        ),
        // The server's account only: the perf client's own measurements are its report.
        AppParams::Perf(_) => (
            sim::apps::perf::KIND,
            Ok(serde_json::json!({
                "written_bytes": sent.written_bytes,
                "uploaded_bytes": received.received_bytes,
            })),
        ),
    };
    let report = match report {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    AppOutcome {
        name: name.to_owned(),
        kind: kind.to_owned(),
        received_bytes: received.received_bytes,
        busy_periods: sent.started_at.map(|t| (t, None)).into_iter().collect(),
        report,
    }
}

/// `sent` with its start on a clock `shift_ns` ahead of the sender's.
pub fn shift_sent(sent: &SentSummary, shift_ns: i64) -> SentSummary {
    let started_at = sent.started_at.map(|t| {
        let nanos = t.as_nanos() as i128 + i128::from(shift_ns);
        Duration::from_nanos(nanos.clamp(0, i128::from(u64::MAX)) as u64)
    });
    SentSummary {
        started_at,
        ..*sent
    }
}

/// A flow's progress at the sample ticks: each application's in-order bytes at its receiving
/// end, as (time, per-app bytes) in time order.
pub(super) type AppProgress = Vec<(Duration, Vec<u64>)>;

/// What a flow's client brought back (perf: with when it started connecting, run time).
pub(super) enum FlowResult {
    Perf(
        Duration,
        Result<perf::ClientReport, endpoint::EndpointError>,
    ),
    Session(Result<SessionReport, endpoint::EndpointError>),
}

/// What the emulator measured of one flow, in the simulator's terms.
pub(super) struct FlowMeasured {
    pub apps: Vec<AppOutcome>,
    pub delivered: u64,
    pub end: FlowEnd,
    pub ended_at: Option<Duration>,
    pub handshake: Option<Duration>,
    pub progress: AppProgress,
}

/// What a perf application's client measured, on the run's clock.
struct PerfMeasured {
    outcome: AppOutcome,
    /// In-order bytes received, all exchanges, at the client's sample times.
    progress: Vec<(Duration, u64)>,
    /// Whether the last exchange completed.
    completed: bool,
    /// When the last exchange completed, if it did.
    ended_at: Option<Duration>,
}

/// A perf application `name` from its client's report; `began` is when its connection started
/// (run time).
fn perf_app(name: &str, began: Duration, r: &perf::ClientReport) -> PerfMeasured {
    let seconds = Duration::from_secs_f64;
    let requested_at = began + seconds(r.requested_s);
    let completed_at = r.completed.then(|| requested_at + seconds(r.transfer_s));
    let at = |start: Duration, map: &BTreeMap<u64, f64>| {
        map.iter().map(|(b, t)| (*b, start + seconds(*t))).collect()
    };
    let mut exchanges = vec![Exchange {
        requested_at,
        completed_at,
        upload_completed_at: None,
        reached: at(requested_at, &r.time_to_bytes_s),
    }];
    let mut progress: Vec<(Duration, u64)> = r
        .samples
        .iter()
        .map(|(t, b)| (requested_at + seconds(*t), *b))
        .collect();
    let mut delivered = r.bytes_received;
    let mut ended_at = completed_at;
    let mut completed = r.completed;
    for repeat in &r.repeats {
        let start = requested_at + seconds(repeat.requested_s);
        let done = repeat.completed.then(|| start + seconds(repeat.transfer_s));
        progress.extend(
            repeat
                .samples
                .iter()
                .map(|(t, b)| (start + seconds(*t), delivered + *b)),
        );
        exchanges.push(Exchange {
            requested_at: start,
            completed_at: done,
            upload_completed_at: None,
            reached: at(start, &repeat.time_to_bytes_s),
        });
        delivered += repeat.bytes_received;
        ended_at = done;
        completed = repeat.completed;
    }
    PerfMeasured {
        outcome: PerfReport {
            exchanges,
            downloaded_bytes: delivered,
            uploaded_bytes: r.bytes_uploaded,
        }
        .into_outcome(name, delivered),
        progress,
        completed,
        ended_at,
    }
}

impl FlowMeasured {
    /// A flow whose client failed with `error`, with `apps` as they stand.
    fn failed(apps: Vec<AppOutcome>, error: &endpoint::EndpointError) -> FlowMeasured {
        FlowMeasured {
            apps,
            delivered: 0,
            end: FlowEnd::Error {
                reason: error.to_string(),
            },
            ended_at: None,
            handshake: None,
            progress: Vec::new(),
        }
    }
}

/// A perf application that brought nothing back.
fn no_perf(name: &str) -> AppOutcome {
    PerfReport {
        exchanges: Vec::new(),
        downloaded_bytes: 0,
        uploaded_bytes: 0,
    }
    .into_outcome(name, 0)
}

/// A perf flow's client report as a [`FlowMeasured`].
pub(super) fn perf_measured(
    name: &str,
    began: Duration,
    result: &Result<perf::ClientReport, endpoint::EndpointError>,
) -> FlowMeasured {
    let r = match result {
        Ok(r) => r,
        Err(e) => return FlowMeasured::failed(vec![no_perf(name)], e),
    };
    let measured = perf_app(name, began, r);
    FlowMeasured {
        delivered: measured.outcome.received_bytes,
        apps: vec![measured.outcome],
        end: if measured.completed {
            FlowEnd::Completed
        } else {
            FlowEnd::Running
        },
        ended_at: measured.ended_at,
        handshake: Some(Duration::from_secs_f64(r.handshake_s)),
        progress: measured
            .progress
            .into_iter()
            .map(|(t, b)| (t, vec![b]))
            .collect(),
    }
}

/// A session flow's two ends as a [`FlowMeasured`]: each application from its sender's
/// account and its receiver's measurements (both on the run's clock).
pub(super) fn session_measured(
    flow: &scenario::FlowSpec,
    request: &SessionRequest,
    result: &Result<SessionReport, endpoint::EndpointError>,
    server: Option<&ServerSession>,
) -> FlowMeasured {
    let report = match result {
        Ok(report) => report,
        Err(e) => return FlowMeasured::failed(Vec::new(), e),
    };
    let empty = EndReport::default();
    let server_end = server.and_then(|s| s.report.as_ref()).unwrap_or(&empty);
    let mut apps = Vec::new();
    let mut perf_progress = None;
    for (index, app) in request.apps.iter().enumerate() {
        let name = &flow.apps[index].name;
        if let AppParams::Perf(_) = app.params {
            match &report.perf {
                Some(r) => {
                    let measured = perf_app(name, report.started_at, r);
                    perf_progress = Some((index, measured.progress));
                    apps.push(measured.outcome);
                }
                None => apps.push(no_perf(name)),
            }
            continue;
        }
        let (sender_end, receiver_end) = match app.sender {
            Sender::Server => (server_end, &report.client),
            Sender::Client => (&report.client, server_end),
        };
        let sent = match sender_end.apps.get(index) {
            Some(AppEnd::Sent(sent)) => *sent,
            // The server's account travels in its summary too.
            _ => report
                .server_summary
                .apps
                .get(index)
                .map(|account| account.sent)
                .unwrap_or_default(),
        };
        let received = match receiver_end.apps.get(index) {
            Some(AppEnd::Received(received)) => received.clone(),
            _ => Received::default(),
        };
        apps.push(session_app_outcome(
            name,
            app,
            &sent,
            &received.summary(&app.params),
            received.frames,
        ));
    }
    // Each application's bytes at its receiving end, at the ticks both ends sampled.
    let mut progress: AppProgress = Vec::new();
    for (t, client_row) in &report.client.samples {
        let server_row = server_end
            .samples
            .iter()
            .rfind(|(at, _)| at <= t)
            .map(|(_, row)| row.as_slice())
            .unwrap_or(&[]);
        let row = request
            .apps
            .iter()
            .enumerate()
            .map(|(i, app)| match (&perf_progress, app.sender) {
                // The perf client's own samples (its bytes are not the ends' halves').
                (Some((perf, samples)), _) if *perf == i => samples
                    .iter()
                    .take_while(|(at, _)| at <= t)
                    .last()
                    .map_or(0, |&(_, bytes)| bytes),
                (_, Sender::Server) => client_row.get(i).copied().unwrap_or(0),
                (_, Sender::Client) => server_row.get(i).copied().unwrap_or(0),
            })
            .collect();
        progress.push((*t, row));
    }
    let error = server.and_then(|s| s.error.clone());
    FlowMeasured {
        delivered: apps.iter().map(|a| a.received_bytes).sum(),
        apps,
        end: match error {
            Some(reason) => FlowEnd::Error {
                reason: format!("server: {reason}"),
            },
            None => FlowEnd::Running,
        },
        ended_at: None,
        handshake: Some(report.handshake),
        progress,
    }
}
