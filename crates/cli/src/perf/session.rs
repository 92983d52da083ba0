//! `satquic get --media/--bulk/--upload-media/--upload-bulk`: a media/bulk session
//! (`emu::session`) instead of perf, from the flags to the printed report.

use std::net::SocketAddr;

use anyhow::{Context, bail};
use emu::endpoint::Trust;
use scenario::units;

use super::{GetArgs, client_recipe, parse_path, qlog_dir, server_name, size, socket_buffer};

/// A positive rate for `flag` (`unlimited` where `allow_unlimited`: `None`).
fn positive_rate(flag: &str, value: &str, allow_unlimited: bool) -> anyhow::Result<Option<u64>> {
    if allow_unlimited && value == "unlimited" {
        return Ok(None);
    }
    let bps = units::parse_rate(value).with_context(|| format!("{flag} {value:?}"))?;
    if bps == 0 {
        bail!("{flag} {value:?}: must be greater than zero");
    }
    Ok(Some(bps))
}

/// The session `get --media/--bulk` asks for, from the flags (each checked, naming the flag).
fn session_request(
    args: &GetArgs,
    duration: std::time::Duration,
) -> anyhow::Result<perfwire::session::SessionRequest> {
    use perfwire::Sender;
    use perfwire::session::{AppParams, BulkParams, MediaParams, PerfParams, SessionApp};
    let scheduler = args.scheduler.clone().unwrap_or_else(|| "none".to_owned());
    if let Err(unknown) = scheduler.parse::<sched::SchedulerSpec>() {
        bail!("--scheduler: {unknown}");
    }
    let defaults = scenario::apps::DEFAULT_MEDIA;
    let deadline = match &args.deadline {
        Some(d) => units::parse_duration(d).with_context(|| format!("--deadline {d:?}"))?,
        None => {
            let one_way = match args.transport.path.as_deref() {
                Some(p) => parse_path(p)?.rtt / 2,
                None => std::time::Duration::ZERO,
            };
            one_way + lab::plan::MEDIA_DEADLINE_SLACK
        }
    };
    let mut apps = Vec::new();
    let media = [
        (&args.media, "--media", Sender::Server),
        (&args.upload_media, "--upload-media", Sender::Client),
    ];
    for (rate, rate_flag, sender) in media {
        let Some(rate) = rate else { continue };
        let bitrate_bps =
            units::parse_rate(rate).with_context(|| format!("{rate_flag} {rate:?}"))?;
        let config = scenario::apps::MediaConfig {
            bitrate_bps,
            video: perfwire::media::VideoModel {
                fps: args.fps.unwrap_or(defaults.video.fps),
                ..defaults.video
            },
            deadline: Some(deadline),
            adaptive: args.adaptive,
            ..defaults
        };
        // The scenario crate's checks, with the flag that set each value.
        config.check().map_err(|e| {
            let flag = match e.field.as_str() {
                "bitrate" => rate_flag,
                "fps" => "--fps",
                "deadline" => "--deadline",
                other => other,
            };
            anyhow::anyhow!("{flag}: {}", e.problem)
        })?;
        apps.push(SessionApp {
            sender,
            params: AppParams::Media(MediaParams {
                bitrate_bps: config.bitrate_bps,
                video: config.video,
                deadline,
                seed: 1,
                adaptive: config.adaptive,
            }),
        });
    }
    if args.media.is_none()
        && args.upload_media.is_none()
        && (args.fps.is_some() || args.deadline.is_some() || args.adaptive)
    {
        bail!(
            "--fps, --deadline and --adaptive describe --media or --upload-media, neither of which is given"
        );
    }
    let bulk = [
        (&args.bulk, "--bulk", Sender::Server),
        (&args.upload_bulk, "--upload-bulk", Sender::Client),
    ];
    for (rate, rate_flag, sender) in bulk {
        let Some(rate) = rate else { continue };
        apps.push(SessionApp {
            sender,
            params: AppParams::Bulk(BulkParams {
                rate_bps: positive_rate(rate_flag, rate, true)?,
                start: std::time::Duration::ZERO,
            }),
        });
    }
    if let Some(perf) = perf_requests(args)? {
        if args.upload_bulk.is_some() {
            bail!(
                "--upload-bulk next to --download/--upload (perf): both open bidirectional streams from this end, which the server cannot tell apart"
            );
        }
        let downloads = perf.download_bytes != Some(0);
        apps.push(SessionApp {
            sender: if downloads {
                Sender::Server
            } else {
                Sender::Client
            },
            params: AppParams::Perf(PerfParams {
                downloads,
                uploads: perf.upload_bytes > 0,
            }),
        });
    }
    let request = perfwire::session::SessionRequest {
        scheduler,
        duration,
        apps,
    };
    request
        .validate()
        .map_err(|e| anyhow::anyhow!("--media/--bulk: {e}"))?;
    Ok(request)
}

/// The perf exchange `--download`/`--upload` ask for next to the session's media and bulk, if
/// either is given (`--download 0B` with an upload: upload only); it runs until the session
/// ends.
fn perf_requests(args: &GetArgs) -> anyhow::Result<Option<emu::perf::PerfRequests>> {
    let upload_bytes = size("--upload", &args.upload)?;
    let download_bytes = match args.download.as_deref() {
        None if upload_bytes == 0 => return Ok(None),
        None => Some(0),
        Some("unlimited") => None,
        Some(v) => Some(size("--download", v)?),
    };
    if download_bytes == Some(0) && upload_bytes == 0 {
        bail!("--download 0B: a perf exchange needs a download or an --upload");
    }
    Ok(Some(emu::perf::PerfRequests {
        download_bytes,
        upload_bytes,
        duration: None,
        thresholds: super::THRESHOLDS.to_vec(),
        verify: !args.no_verify,
        repeat_after: None,
    }))
}

/// `get --media/--bulk`: one session, then what arrived.
pub(super) fn get_session(args: &GetArgs, server: SocketAddr, trust: Trust) -> anyhow::Result<()> {
    let Some(duration) = args.duration.as_deref() else {
        bail!(
            "--media/--bulk and --upload-media/--upload-bulk need --duration (how long the session runs)"
        );
    };
    let duration =
        units::parse_duration(duration).with_context(|| format!("--duration {duration:?}"))?;
    if duration.is_zero() {
        bail!("--duration: must be greater than zero");
    }
    if args.resume_store.is_some() {
        bail!(
            "--resume-store applies to perf transfers (--download/--upload), not --media/--bulk sessions"
        );
    }
    let request = session_request(args, duration)?;
    let options = emu::session::SessionOptions {
        server,
        server_name: server_name(args),
        trust,
        request: request.clone(),
        transport: client_recipe(args, None)?,
        qlog: qlog_dir(args.qlog.as_deref())?,
        socket: None,
        socket_buffer_bytes: socket_buffer(args.transport.path.as_deref())?,
        shared_epoch: None,
        perf: perf_requests(args)?,
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let report = runtime.block_on(emu::session::run(options, async {
        let _ = tokio::signal::ctrl_c().await;
    }))?;
    let summary = session_summary(&request, &report, args);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_session(&summary);
    }
    Ok(())
}

/// What `get --media/--bulk` reports (`--json` prints it; the text form the same fields).
#[derive(Debug, serde::Serialize)]
struct SessionSummary {
    server: String,
    scheduler: String,
    /// Session start (after the handshake) → stop, s.
    duration_s: f64,
    handshake_s: f64,
    /// The estimated (server − client) clock offset the frame delays are corrected by, ms.
    clock_offset_ms: f64,
    /// Each application as `satquic run` reports it (media: the simulator's media report).
    apps: Vec<serde_json::Value>,
}

fn session_summary(
    request: &perfwire::session::SessionRequest,
    report: &emu::session::SessionReport,
    args: &GetArgs,
) -> SessionSummary {
    use emu::apps::AppEnd;
    use perfwire::Sender;
    let session_s = report
        .ended_at
        .saturating_sub(report.started_at + report.handshake)
        .as_secs_f64()
        .max(1e-9);
    let mut apps = Vec::new();
    for (index, app) in request.apps.iter().enumerate() {
        let account = report
            .server_summary
            .apps
            .get(index)
            .copied()
            .unwrap_or_default();
        if let perfwire::session::AppParams::Perf(_) = app.params {
            apps.push(perf_entry(app.sender, report.perf.as_ref(), &account));
            continue;
        }
        let mine = report.client.apps.get(index);
        // The sender's account with its times on our clock, the receiver's measurements.
        let (direction, sent, received, frames) = match app.sender {
            Sender::Server => {
                let sent = lab::emu_backend::shift_sent(
                    &account.sent,
                    report.clock_offset_ns.saturating_neg(),
                );
                let received = match mine {
                    Some(AppEnd::Received(received)) => received.clone(),
                    _ => emu::apps::Received::default(),
                };
                (
                    "download",
                    sent,
                    received.summary(&app.params),
                    received.frames,
                )
            }
            Sender::Client => {
                let sent = match mine {
                    Some(AppEnd::Sent(sent)) => *sent,
                    _ => Default::default(),
                };
                ("upload", sent, account.received, Vec::new())
            }
        };
        let name = match app.params {
            perfwire::session::AppParams::Media(_) => "media",
            _ => "bulk",
        };
        let outcome = lab::emu_backend::session_app_outcome(name, app, &sent, &received, frames);
        let mut entry = serde_json::Map::new();
        entry.insert("name".into(), outcome.name.into());
        entry.insert("kind".into(), outcome.kind.into());
        entry.insert("direction".into(), direction.into());
        entry.insert("received_bytes".into(), outcome.received_bytes.into());
        entry.insert(
            "goodput_bps".into(),
            (outcome.received_bytes as f64 * 8.0 / session_s).into(),
        );
        entry.extend(outcome.report);
        apps.push(serde_json::Value::Object(entry));
    }
    SessionSummary {
        server: args.server.clone(),
        scheduler: request.scheduler.clone(),
        duration_s: session_s,
        handshake_s: report.handshake.as_secs_f64(),
        clock_offset_ms: report.clock_offset_ns as f64 / 1e6,
        apps,
    }
}

/// The perf application's entry: the client's report (as `get --json` gives it for a perf
/// transfer) and the server's account of the bytes.
fn perf_entry(
    sender: perfwire::Sender,
    report: Option<&emu::perf::ClientReport>,
    account: &perfwire::session::AppAccount,
) -> serde_json::Value {
    let mut entry = serde_json::Map::new();
    entry.insert("name".into(), "perf".into());
    entry.insert("kind".into(), "perf".into());
    let direction = match sender {
        perfwire::Sender::Server => "download",
        perfwire::Sender::Client => "upload",
    };
    entry.insert("direction".into(), direction.into());
    if let Some(serde_json::Value::Object(fields)) =
        report.and_then(|r| serde_json::to_value(r).ok())
    {
        entry.extend(fields);
    }
    entry.insert(
        "server_written_bytes".into(),
        account.sent.written_bytes.into(),
    );
    entry.insert(
        "server_received_bytes".into(),
        account.received.received_bytes.into(),
    );
    serde_json::Value::Object(entry)
}

fn print_session(summary: &SessionSummary) {
    outln!(
        "{}: {:.1} s of media/bulk, scheduler {}; handshake {:.3} s, clock offset {:+.2} ms",
        summary.server,
        summary.duration_s,
        summary.scheduler,
        summary.handshake_s,
        summary.clock_offset_ms
    );
    for app in &summary.apps {
        let field = |k: &str| {
            app.get(k)
                .and_then(serde_json::Value::as_f64)
                .unwrap_or(0.0)
        };
        let goodput = field("goodput_bps") / 1e6;
        let direction = match app["direction"].as_str() {
            Some("upload") => "upload, measured at the server",
            _ => "download",
        };
        if app["kind"] == "perf" {
            if app.get("bytes_received").is_none() {
                outln!("  perf: no report (the session ended early)");
                continue;
            }
            outln!(
                "  perf: {} bytes {} in {:.2} s = {:.3} Mbit/s, first byte {}; {} bytes uploaded (the server received {})",
                field("bytes_received"),
                if app["verified"] == true {
                    "verified"
                } else {
                    "received (not verified)"
                },
                field("transfer_s"),
                field("goodput_bps") / 1e6,
                app["time_to_first_byte_s"]
                    .as_f64()
                    .map_or("-".into(), |t| format!("{t:.3} s")),
                field("bytes_uploaded"),
                field("server_received_bytes"),
            );
        } else if app["kind"] == "media" {
            let delay = |p: &str| app["frame_delay_ms"][p].as_f64().unwrap_or(0.0);
            outln!(
                "  media ({direction}): {} of {} frames received, {} late (> {:.0} ms), {} cancelled; delay p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms; {goodput:.3} Mbit/s",
                field("frames_received"),
                field("frames_sent"),
                field("late_frames"),
                field("deadline_ms"),
                field("cancelled_frames"),
                delay("p50"),
                delay("p95"),
                delay("p99"),
            );
        } else {
            outln!(
                "  bulk ({direction}): {} bytes in order, {goodput:.3} Mbit/s",
                field("received_bytes")
            );
        }
    }
}
