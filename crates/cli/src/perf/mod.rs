//! `satquic serve` and `satquic get`: the perf protocol over real UDP (quinn + tokio), and media
//! plus bulk on one connection (`get --media/--bulk`, an `emu::session`: [`session`]).

mod session;

use std::io::IsTerminal;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use emu::endpoint::{self, Trust};
use emu::perf::{self, ClientOptions, PerfRequests};
use emu::resume::ResumeKeeper;
use emu::server::{Server, ServerOptions};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use quinn::congestion::ControllerFactory;
use scenario::units;

/// A path as `--path FORWARD/RETURN/RTT`, e.g. "250Mbit/3Mbit/650ms": forward = server to
/// client (downloads), 1-BDP buffers.
fn parse_path(text: &str) -> anyhow::Result<quinn_satellite::SatellitePath> {
    let parts: Vec<&str> = text.split('/').map(str::trim).collect();
    let [forward, back, rtt] = parts.as_slice() else {
        bail!("--path {text:?}: expected FORWARD/RETURN/RTT, e.g. 250Mbit/3Mbit/650ms");
    };
    let rate =
        |v: &str| units::parse_rate(v).with_context(|| format!("--path {text:?}: rate {v:?}"));
    let rtt =
        units::parse_duration(rtt).with_context(|| format!("--path {text:?}: RTT {rtt:?}"))?;
    let path = quinn_satellite::SatellitePath::new(rate(forward)?, rate(back)?, rtt);
    path.check().with_context(|| format!("--path {text:?}"))?;
    Ok(path)
}

/// `--ack-thinning`'s default for a resumed connection when the path is not known: one ACK
/// per ten packets, at most 40 ms apart. At 250 Mbit/s of data its ACKs take about half of a
/// 3 Mbit/s return link (80-byte ACKs), where RFC 9000's one per two would need 8 Mbit/s.
/// A fresh connection does not ask: through `satquic link` it cost the first 100 MB over
/// 50/10 Mbit/s at 650 ms 1.3 s (20.27 vs 18.95 s), lost in the first seconds.
const DEFAULT_ACK_THINNING: u32 = 9;

/// The transfer sizes whose arrival times `get` reports (draft-kuhn's 2, 10 and 100 MB marks).
const THRESHOLDS: [u64; 3] = [2_000_000, 10_000_000, 100_000_000];

/// The endpoint's transport: with `--path`, the satellite preset for that path from
/// `quinn_satellite` (windows from its BDP, ACK thinning sized to the return link with the
/// quinn-proto stall workaround, Hybla's start-up target at the sending direction's BDP) with
/// the `--cc` controller; without it, large windows only.
fn endpoint_transport(
    side: quinn_satellite::Side,
    path: Option<&str>,
    cc: &str,
    cc_params: &[String],
    window: &str,
    ack_thinning: Option<u32>,
    resume: Option<hybla::ResumeParams>,
) -> anyhow::Result<quinn::TransportConfig> {
    let Some(path) = path else {
        let mut config = endpoint::transport(
            controller(cc, cc_params, None, resume)?,
            window_bytes(window)?,
        );
        // Not told: only a resumed connection, which will send at the saved rate from its
        // second round trip, asks for thinning.
        let threshold = ack_thinning.unwrap_or(if resume.is_some() {
            DEFAULT_ACK_THINNING
        } else {
            0
        });
        if threshold > 0 {
            quinn_satellite::request_ack_thinning(&mut config, threshold, None, false);
        }
        return Ok(config);
    };
    let path = parse_path(path)?;
    let controller = controller(cc, cc_params, Some(path.sending_bdp_bytes(side)), resume)?;
    Ok(path.transport_with_controller(side, endpoint::probed(controller))?)
}

/// The endpoint's UDP socket buffer: sized for `--path` if given, else the floor.
fn socket_buffer(path: Option<&str>) -> anyhow::Result<usize> {
    Ok(match path {
        Some(p) => {
            let path = parse_path(p)?;
            emu::sockbuf::buffer_bytes_for(
                path.forward_rate_bps.max(path.return_rate_bps),
                path.rtt,
            )
        }
        None => emu::sockbuf::MIN_SOCKET_BUFFER_BYTES,
    })
}

/// Parses `--cc` and `--cc-param k=v` into a controller (read by the scenario crate, as
/// `cc_params` in a file), resuming from `resume` if given (Careful Resume: Hybla only).
fn controller(
    name: &str,
    params: &[String],
    declared_bdp_bytes: Option<u64>,
    resume: Option<hybla::ResumeParams>,
) -> anyhow::Result<Arc<dyn ControllerFactory + Send + Sync>> {
    let spec = scenario::controllers::ControllerSpec::from_flags(name, params)?;
    let record = lab::controllers::PathRecord::default();
    Ok(
        lab::controllers::build_resumed(&spec, declared_bdp_bytes, &record, "--cc", resume)
            .map_err(|e| scenario::FieldError {
                field: e.field.replace("--cc_params", "--cc-param"),
                problem: e.problem,
            })?
            .factory,
    )
}

/// Whether `--cc` names a controller that implements Careful Resume.
fn controller_resumes(name: &str, params: &[String]) -> anyhow::Result<bool> {
    let spec = scenario::controllers::ControllerSpec::from_flags(name, params)?;
    Ok(lab::controllers::resumes(&spec))
}

/// The Careful Resume store of `serve`/`get`: in memory, or kept in `file` (read and written
/// back now; a corrupt file or entry is ignored with a warning, one that cannot be read or
/// written fails the command, naming `--resume-store`).
fn resume_keeper(file: Option<&std::path::Path>) -> anyhow::Result<Arc<ResumeKeeper>> {
    let store = quinn_satellite::ResumeStore::new(quinn_satellite::ResumeStoreConfig::default())?;
    let keeper = ResumeKeeper::new(store, file.map(std::path::Path::to_path_buf));
    let report = keeper.load().context("--resume-store")?;
    // Written back now: a file that cannot be written fails the command here, not with a
    // warning after the first connection.
    keeper.save().context("--resume-store")?;
    if let Some(file) = file {
        errln!(
            "Careful Resume store {}: {} saved path(s) loaded{}",
            file.display(),
            report.loaded,
            if report.ignored.is_empty() {
                String::new()
            } else {
                format!(
                    ", {} line(s) ignored (see the warnings)",
                    report.ignored.len()
                )
            }
        );
    }
    Ok(Arc::new(keeper))
}

/// `--window`: at least one full-size packet (a window of 0 B lets nothing through, and the
/// transfer would wait forever).
fn window_bytes(window: &str) -> anyhow::Result<u64> {
    crate::flags::packet_size("--window", window, crate::flags::PACKET_BYTES)
}

fn size(flag: &str, v: &str) -> anyhow::Result<u64> {
    units::parse_size(v).with_context(|| format!("{flag} {v:?}"))
}

/// [`endpoint_transport`] as a recipe for every connection of the endpoint (with `--qlog` each
/// gets its own `TransportConfig` carrying its qlog stream; with `resume`, each connection's
/// controller resumes from the saved parameters of its path). The flags are checked here,
/// once, so a bad one fails the command before anything starts.
fn endpoint_recipe(
    side: quinn_satellite::Side,
    path: Option<&str>,
    cc: &str,
    cc_params: &[String],
    window: &str,
    ack_thinning: Option<u32>,
    resume: Option<Arc<ResumeKeeper>>,
) -> anyhow::Result<endpoint::TransportRecipe> {
    // Checked with --path too, where the preset sizes the windows: a bad flag is never silent.
    window_bytes(window)?;
    endpoint_transport(side, path, cc, cc_params, window, ack_thinning, None)?;
    let (path, cc, cc_params, window) = (
        path.map(str::to_owned),
        cc.to_owned(),
        cc_params.to_vec(),
        window.to_owned(),
    );
    let make = move |resume| {
        endpoint_transport(
            side,
            path.as_deref(),
            &cc,
            &cc_params,
            &window,
            ack_thinning,
            resume,
        )
        .expect("the same flags were accepted when the command started")
    };
    Ok(match resume {
        Some(keeper) => endpoint::TransportRecipe::resuming(make, keeper),
        None => endpoint::TransportRecipe::new(move || make(None)),
    })
}

/// `get`'s transport recipe from its flags (the client's own controller sends its uploads).
fn client_recipe(
    args: &GetArgs,
    resume: Option<Arc<ResumeKeeper>>,
) -> anyhow::Result<endpoint::TransportRecipe> {
    endpoint_recipe(
        quinn_satellite::Side::Client,
        args.transport.path.as_deref(),
        &args.cc,
        &[],
        &args.transport.window,
        args.transport.ack_thinning,
        resume,
    )
}

/// The `--qlog DIR` directory, created and checked to be writable now.
fn qlog_dir(dir: Option<&std::path::Path>) -> anyhow::Result<Option<emu::qlog::QlogDir>> {
    dir.map(|d| emu::qlog::QlogDir::create(d).context("--qlog"))
        .transpose()
}

/// Flags of `satquic serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:4433")]
    pub listen: SocketAddr,
    /// Congestion controller.
    #[arg(long, default_value = "hybla")]
    pub cc: String,
    /// Controller parameter, e.g. --cc-param rtt0=25ms (repeatable).
    #[arg(long = "cc-param", value_name = "KEY=VALUE")]
    pub cc_params: Vec<String>,
    /// Certificate chain (PEM). Without it a self-signed certificate for localhost is made.
    #[arg(long, requires = "key")]
    pub cert: Option<PathBuf>,
    /// Private key (PEM).
    #[arg(long, requires = "cert")]
    pub key: Option<PathBuf>,
    /// Where to write the generated self-signed certificate (for clients' --ca).
    #[arg(long, conflicts_with = "cert")]
    pub cert_out: Option<PathBuf>,
    /// Per-connection logs (JSON lines: cwnd, RTT, bytes sent, losses every 100 ms).
    #[arg(long)]
    pub log_dir: Option<PathBuf>,
    /// Write one qlog file per connection into DIR (quinn-proto's JSON-SEQ qlog: packets sent
    /// and received, losses, recovery metrics), named by role, number, start time, peer and
    /// the client's original connection ID.
    #[arg(long, value_name = "DIR")]
    pub qlog: Option<PathBuf>,
    /// Windows, ACK thinning, the satellite path.
    #[command(flatten)]
    pub transport: TransportArgs,
    /// Keep Careful Resume's saved paths (RFC 9959) in FILE: read at start, written after
    /// every connection that leaves one and at exit. Without it they live in memory for the
    /// server's lifetime. A corrupt, expired or foreign entry is ignored with a warning.
    #[arg(long, value_name = "FILE", conflicts_with = "no_resume")]
    pub resume_store: Option<PathBuf>,
    /// No Careful Resume: every connection starts from the initial window. (By default a
    /// Hybla server resumes each connection from what the previous one on the same path
    /// measured, and saves what it measured for the next.)
    #[arg(long)]
    pub no_resume: bool,
}

/// Serves until Ctrl-C.
pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    // Before anything is written (the self-signed certificate).
    window_bytes(&args.transport.window)?;
    let resumes = controller_resumes(&args.cc, &args.cc_params)?;
    if args.resume_store.is_some() && !resumes {
        bail!(
            "--resume-store: --cc {} does not implement Careful Resume (hybla does)",
            args.cc
        );
    }
    let keeper = if resumes && !args.no_resume {
        Some(resume_keeper(args.resume_store.as_deref())?)
    } else {
        None
    };
    let identity = match (&args.cert, &args.key) {
        (Some(c), Some(k)) => {
            let cert =
                std::fs::read_to_string(c).with_context(|| format!("--cert {}", c.display()))?;
            let key =
                std::fs::read_to_string(k).with_context(|| format!("--key {}", k.display()))?;
            endpoint::parse_identity(&cert, &key).with_context(|| "--cert/--key")?
        }
        _ => {
            let (cert, key) = endpoint::self_signed(vec!["localhost".into()])?;
            let out = args
                .cert_out
                .clone()
                .unwrap_or_else(|| std::env::temp_dir().join("satquic-serve-cert.pem"));
            std::fs::write(&out, &cert).with_context(|| format!("writing {}", out.display()))?;
            errln!(
                "self-signed certificate for \"localhost\" written to {} (use it as the client's --ca)",
                out.display()
            );
            endpoint::parse_identity(&cert, &key)?
        }
    };
    if let Some(dir) = &args.log_dir {
        crate::flags::results_dir("--log-dir", dir)?;
    }
    let options = ServerOptions {
        listen: args.listen,
        identity,
        transport: endpoint_recipe(
            quinn_satellite::Side::Server,
            args.transport.path.as_deref(),
            &args.cc,
            &args.cc_params,
            &args.transport.window,
            args.transport.ack_thinning,
            keeper.clone(),
        )?,
        qlog: qlog_dir(args.qlog.as_deref())?,
        log_dir: args.log_dir.clone(),
        socket_buffer_bytes: socket_buffer(args.transport.path.as_deref())?,
        session_epoch: None,
        kept_sessions: 0,
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let server = Server::start(options)?;
        errln!(
            "perf server on {} ({}{}; also media/bulk sessions for `satquic get --media/--bulk`), Ctrl-C to stop",
            server.local_addr()?,
            args.cc,
            match (&keeper, &args.resume_store) {
                (None, _) => String::new(),
                (Some(_), None) => ", Careful Resume from saved paths in memory".to_owned(),
                (Some(_), Some(file)) =>
                    format!(", Careful Resume from saved paths in {}", file.display()),
            }
        );
        tokio::signal::ctrl_c()
            .await
            .context("waiting for Ctrl-C")?;
        server.stop().await;
        if let Some(keeper) = &keeper {
            keeper.save().context("--resume-store")?;
        }
        Ok(())
    })
}

/// The transport flags `serve` and `get` share.
#[derive(Debug, Args)]
pub struct TransportArgs {
    /// Flow-control windows and send buffer (without --path); at least one full-size packet
    /// (1500 B).
    #[arg(long, default_value = "64MB")]
    pub window: String,
    /// Without --path: ask the peer to acknowledge only every K + 1 packets of this end's
    /// data (QUIC's ACK frequency extension; 0: every second packet, RFC 9000's default). One
    /// ACK per two packets can fill a thin return link: at 3 Mbit/s it carries about
    /// 100 Mbit/s of data. Default: 9 for a connection resumed by Careful Resume (it sends at
    /// the saved rate from its second round trip), 0 for the others. With --path the preset
    /// sizes it from the rates.
    #[arg(long, value_name = "K",
          value_parser = clap::value_parser!(u32).range(0..=64), conflicts_with = "path")]
    pub ack_thinning: Option<u32>,
    /// The satellite path as FORWARD/RETURN/RTT (e.g. 250Mbit/3Mbit/650ms): applies satquic's
    /// transport preset for it (windows from the BDP, ACK thinning, Hybla's start-up target).
    #[arg(long)]
    pub path: Option<String>,
}

/// Flags of `satquic get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// Server as HOST:PORT.
    pub server: String,
    /// Bytes to download ("100MB", the default), or "unlimited" with --duration. With
    /// --media/--bulk: a perf exchange next to them on the session's connection (none unless
    /// --download or --upload is given).
    #[arg(long)]
    pub download: Option<String>,
    /// Bytes to upload (with --media/--bulk, as for --download).
    #[arg(long, default_value = "0B")]
    pub upload: String,
    /// Stop after this long.
    #[arg(long)]
    pub duration: Option<String>,
    /// CA certificate (PEM) the server's certificate must chain to.
    #[arg(long, conflicts_with = "insecure")]
    pub ca: Option<PathBuf>,
    /// DANGEROUS: accept any server certificate (only for test peers with self-signed
    /// certificates).
    #[arg(long)]
    pub insecure: bool,
    /// Name expected in the server's certificate (default: the host part of SERVER).
    #[arg(long)]
    pub server_name: Option<String>,
    /// Congestion controller for the upload direction.
    #[arg(long, default_value = "hybla")]
    pub cc: String,
    /// Windows, ACK thinning, the satellite path.
    #[command(flatten)]
    pub transport: TransportArgs,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Don't check the content (for other perf servers, which send other bytes): count only.
    #[arg(long)]
    pub no_verify: bool,
    /// A session instead of a plain perf transfer: the server sends synthetic video at this
    /// rate (e.g. 2Mbit; one stream per frame, each frame's delay measured here) for
    /// --duration, on one connection with --bulk and --download/--upload if given. Needs a
    /// satquic server.
    #[arg(long, value_name = "RATE")]
    pub media: Option<String>,
    /// Instead of perf: the server sends bulk data at this rate (e.g. 2Mbit) or "unlimited" for
    /// --duration, on one connection with --media if given.
    #[arg(long, value_name = "RATE")]
    pub bulk: Option<String>,
    /// Instead of perf: this end sends synthetic video at this rate for --duration (as --media,
    /// the other way); the server measures each frame's delay and reports it at the end.
    #[arg(long, value_name = "RATE")]
    pub upload_media: Option<String>,
    /// Instead of perf: this end sends bulk data at this rate or "unlimited" for --duration
    /// (as --bulk, the other way); the server reports what it received.
    #[arg(long, value_name = "RATE")]
    pub upload_bulk: Option<String>,
    /// How --media and --bulk share the connection: none (the default), priority,
    /// seed-balancer, balancer.
    #[arg(long)]
    pub scheduler: Option<String>,
    /// Media frames per second (default 30).
    #[arg(long)]
    pub fps: Option<u32>,
    /// A media frame later than this is late (default: half the --path RTT + 150 ms, or
    /// 150 ms without --path).
    #[arg(long, allow_hyphen_values = true)]
    pub deadline: Option<String>,
    /// The media follows the scheduler's rate signal (as an adaptive encoder would).
    #[arg(long)]
    pub adaptive: bool,
    /// Write the connection's qlog file into DIR (quinn-proto's JSON-SEQ qlog), named
    /// client-0001-TIME-SERVER.sqlog.
    #[arg(long, value_name = "DIR")]
    pub qlog: Option<PathBuf>,
    /// Careful Resume (RFC 9959) for uploads: the connection resumes from the saved path to
    /// this server in FILE, and saves what it measured there when it ends (the client sends
    /// the upload; a download leaves the saved path as it was). Perf only, --cc hybla.
    #[arg(long, value_name = "FILE")]
    pub resume_store: Option<PathBuf>,
}

/// Fetches and reports.
pub fn get(args: GetArgs) -> anyhow::Result<()> {
    let server = args
        .server
        .to_socket_addrs()
        .with_context(|| format!("SERVER {:?}: expected HOST:PORT", args.server))?
        .next()
        .with_context(|| format!("SERVER {:?}: resolves to no address", args.server))?;
    let trust = match (&args.ca, args.insecure) {
        (Some(ca), _) => {
            use rustls::pki_types::{CertificateDer, pem::PemObject};
            let roots = CertificateDer::pem_file_iter(ca)
                .with_context(|| format!("--ca {}", ca.display()))?
                .collect::<Result<Vec<_>, _>>()
                .with_context(|| format!("--ca {}: not a PEM certificate file", ca.display()))?;
            if roots.is_empty() {
                bail!("--ca {}: no certificate in the file", ca.display());
            }
            Trust::Roots(roots)
        }
        (None, true) => {
            errln!("WARNING: --insecure: the server's certificate is NOT verified");
            Trust::InsecureAcceptAnything
        }
        (None, false) => bail!(
            "give the server's CA certificate with --ca FILE (or --insecure for a self-signed test peer)"
        ),
    };
    if args.media.is_some()
        || args.bulk.is_some()
        || args.upload_media.is_some()
        || args.upload_bulk.is_some()
    {
        return session::get_session(&args, server, trust);
    }
    for (given, flag) in [
        (args.scheduler.is_some(), "--scheduler"),
        (args.fps.is_some(), "--fps"),
        (args.deadline.is_some(), "--deadline"),
        (args.adaptive, "--adaptive"),
    ] {
        if given {
            bail!("{flag} applies to sessions (--media/--bulk, --upload-media/--upload-bulk) only");
        }
    }
    let download_bytes = match args.download.as_deref().unwrap_or("100MB") {
        "unlimited" => None,
        v => Some(size("--download", v)?),
    };
    let duration = args
        .duration
        .as_deref()
        .map(|d| units::parse_duration(d).with_context(|| format!("--duration {d:?}")))
        .transpose()?;
    if download_bytes.is_none() && duration.is_none() {
        bail!("--download unlimited needs --duration");
    }
    let resume = match &args.resume_store {
        Some(file) => {
            if !controller_resumes(&args.cc, &[])? {
                bail!(
                    "--resume-store: --cc {} does not implement Careful Resume (hybla does)",
                    args.cc
                );
            }
            Some(resume_keeper(Some(file))?)
        }
        None => None,
    };
    let options = ClientOptions {
        server,
        server_name: server_name(&args),
        trust,
        transport: client_recipe(&args, resume)?,
        qlog: qlog_dir(args.qlog.as_deref())?,
        socket: None,
        socket_buffer_bytes: socket_buffer(args.transport.path.as_deref())?,
        requests: PerfRequests {
            download_bytes,
            upload_bytes: size("--upload", &args.upload)?,
            duration,
            thresholds: THRESHOLDS.to_vec(),
            verify: !args.no_verify,
            repeat_after: None,
        },
    };
    if args.no_verify {
        errln!("WARNING: --no-verify: content is counted, not checked");
    }
    let bar = ProgressBar::with_draw_target(
        download_bytes,
        if std::io::stderr().is_terminal() && !args.json {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40.cyan/blue} {bytes}/{total_bytes} {bytes_per_sec} {elapsed}",
        )
        .expect("valid template"),
    );
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let progress = {
        let bar = bar.clone();
        move |n: u64| bar.set_position(n)
    };
    let qlog = options.qlog.clone();
    let report = runtime.block_on(async {
        tokio::select! {
            report = perf::get(options, &progress) => Ok(report?),
            _ = tokio::signal::ctrl_c() => {
                // What the connection's qlog holds so far stays readable.
                if let Some(dir) = &qlog {
                    dir.flush_all()?;
                }
                bail!("interrupted")
            }
        }
    })?;
    bar.finish_and_clear();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        outln!(
            "{}: {} bytes {} in {:.2} s = {:.3} Mbit/s; handshake {:.3} s, first byte {}; {}",
            report.server,
            report.bytes_received,
            if report.verified {
                "verified"
            } else {
                "received (not verified)"
            },
            report.transfer_s,
            report.goodput_bps / 1e6,
            report.handshake_s,
            report
                .time_to_first_byte_s
                .map_or("-".into(), |t| format!("{t:.3} s")),
            report
                .time_to_bytes_s
                .iter()
                .map(|(b, t)| format!("{} in {t:.2} s", report::summary::size_label(*b)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if download_bytes.is_some() && !report.completed && duration.is_none() {
        bail!("the download did not complete");
    }
    Ok(())
}

/// The name expected in the server's certificate: `--server-name`, else SERVER's host part.
fn server_name(args: &GetArgs) -> String {
    args.server_name.clone().unwrap_or_else(|| {
        args.server
            .rsplit_once(':')
            .map_or(args.server.as_str(), |(h, _)| h)
            .trim_matches(['[', ']'])
            .to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asks_for_thinning(ack_thinning: Option<u32>, resumed: bool) -> bool {
        let resume = resumed.then(|| {
            hybla::ResumeParams::new(hybla::SavedPath {
                saved_cwnd_bytes: 20_000_000,
                saved_rtt: std::time::Duration::from_millis(650),
            })
        });
        let config = endpoint_transport(
            quinn_satellite::Side::Server,
            None,
            "hybla",
            &[],
            "64MB",
            ack_thinning,
            resume,
        )
        .unwrap();
        format!("{config:?}").contains("ack_eliciting_threshold")
    }

    #[test]
    fn without_path_only_a_resumed_connection_asks_for_ack_thinning_unless_told() {
        assert!(!asks_for_thinning(None, false));
        assert!(asks_for_thinning(None, true));
        assert!(asks_for_thinning(Some(9), false));
        assert!(!asks_for_thinning(Some(0), true));
    }
}
