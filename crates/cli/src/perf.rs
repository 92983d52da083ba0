//! `satquic serve` and `satquic get`: the perf protocol over real UDP (quinn + tokio).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use emu::perf::{self, ClientOptions, Server, ServerOptions, Trust};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use quinn::congestion::ControllerFactory;
use scenario::units;

/// A path as `--path FORWARD/RETURN/RTT`, e.g. "250Mbit/3Mbit/650ms": forward = server to
/// client (downloads), 1-BDP buffers.
fn parse_path(text: &str) -> anyhow::Result<netsim::PathConfig> {
    let parts: Vec<&str> = text.split('/').map(str::trim).collect();
    let [forward, back, rtt] = parts.as_slice() else {
        bail!("--path {text:?}: expected FORWARD/RETURN/RTT, e.g. 250Mbit/3Mbit/650ms");
    };
    let rate =
        |v: &str| units::parse_rate(v).with_context(|| format!("--path {text:?}: rate {v:?}"));
    let rtt =
        units::parse_duration(rtt).with_context(|| format!("--path {text:?}: RTT {rtt:?}"))?;
    if rtt.is_zero() {
        bail!("--path {text:?}: the RTT must be greater than zero");
    }
    Ok(netsim::PathConfig {
        forward: netsim::LinkConfig::new(rate(forward)?, rtt / 2),
        return_link: netsim::LinkConfig::new(rate(back)?, rtt / 2),
        mtu_bytes: 1500,
        access_delays: vec![std::time::Duration::ZERO],
    })
}

/// The endpoint's transport: with `--path`, satquic's satellite preset for that path (windows
/// from its BDP, ACK thinning sized to the return link with the quinn-proto stall workaround,
/// Hybla's start-up target at the path's BDP); without it, large windows only.
fn endpoint_transport(
    is_server: bool,
    path: Option<&str>,
    cc: &str,
    cc_params: &[String],
    window: &str,
) -> anyhow::Result<quinn::TransportConfig> {
    let Some(path) = path else {
        return Ok(perf::transport(
            controller(cc, cc_params, None)?,
            size("--window", window)?,
        ));
    };
    let path = parse_path(path)?;
    let settings = sim::TransportSettings::satellite_preset(&path, 0);
    let bdp = netsim::bdp_bytes(path.forward.rate_bps, path.base_rtt());
    let mut transport = settings.to_quinn(is_server, controller(cc, cc_params, Some(bdp))?);
    transport.max_idle_timeout(Some(
        std::time::Duration::from_secs(30)
            .try_into()
            .expect("30 s is a valid idle timeout"),
    ));
    Ok(transport)
}

/// The endpoint's UDP socket buffer: sized for `--path` if given, else the floor.
fn socket_buffer(path: Option<&str>) -> anyhow::Result<usize> {
    Ok(match path {
        Some(p) => {
            let path = parse_path(p)?;
            emu::sockbuf::buffer_bytes_for(
                path.forward.rate_bps.max(path.return_link.rate_bps),
                path.base_rtt(),
            )
        }
        None => emu::sockbuf::MIN_SOCKET_BUFFER_BYTES,
    })
}

/// Parses `--cc` and `--cc-param k=v` into a controller.
fn controller(
    name: &str,
    params: &[String],
    declared_bdp_bytes: Option<u64>,
) -> anyhow::Result<Arc<dyn ControllerFactory + Send + Sync>> {
    let mut map = BTreeMap::new();
    for p in params {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("--cc-param {p:?}: expected key=value, e.g. rtt0=25ms"))?;
        let value = v
            .parse::<toml::Value>()
            .unwrap_or_else(|_| toml::Value::String(v.to_owned()));
        let value = match value {
            toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => value,
            _ => toml::Value::String(v.to_owned()),
        };
        map.insert(k.trim().to_owned(), value);
    }
    let spec = scenario::controllers::ControllerSpec::parse(name, &map, "--cc")
        .map_err(|e| anyhow::anyhow!(e.to_string().replace("--cc_params", "--cc-param")))?;
    Ok(lab::controllers::build(&spec, declared_bdp_bytes).factory)
}

fn size(flag: &str, v: &str) -> anyhow::Result<u64> {
    units::parse_size(v).with_context(|| format!("{flag} {v:?}"))
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
    /// Flow-control windows and send buffer (without --path).
    #[arg(long, default_value = "64MB")]
    pub window: String,
    /// The satellite path as FORWARD/RETURN/RTT (e.g. 250Mbit/3Mbit/650ms): applies satquic's
    /// transport preset for it (windows from the BDP, ACK thinning, Hybla's start-up target).
    #[arg(long)]
    pub path: Option<String>,
}

/// Serves until Ctrl-C.
pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let identity = match (&args.cert, &args.key) {
        (Some(c), Some(k)) => {
            let cert =
                std::fs::read_to_string(c).with_context(|| format!("--cert {}", c.display()))?;
            let key =
                std::fs::read_to_string(k).with_context(|| format!("--key {}", k.display()))?;
            perf::parse_identity(&cert, &key).with_context(|| "--cert/--key")?
        }
        _ => {
            let (cert, key) = perf::self_signed(vec!["localhost".into()])?;
            let out = args
                .cert_out
                .clone()
                .unwrap_or_else(|| std::env::temp_dir().join("satquic-serve-cert.pem"));
            std::fs::write(&out, &cert).with_context(|| format!("writing {}", out.display()))?;
            eprintln!(
                "self-signed certificate for \"localhost\" written to {} (use it as the client's --ca)",
                out.display()
            );
            perf::parse_identity(&cert, &key)?
        }
    };
    let options = ServerOptions {
        listen: args.listen,
        identity,
        transport: Arc::new(endpoint_transport(
            true,
            args.path.as_deref(),
            &args.cc,
            &args.cc_params,
            &args.window,
        )?),
        log_dir: args.log_dir.clone(),
        socket_buffer_bytes: socket_buffer(args.path.as_deref())?,
        session_epoch: None,
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let server = Server::start(options)?;
        eprintln!(
            "perf server on {} ({}), Ctrl-C to stop",
            server.local_addr()?,
            args.cc
        );
        tokio::signal::ctrl_c()
            .await
            .context("waiting for Ctrl-C")?;
        server.stop().await;
        Ok(())
    })
}

/// Flags of `satquic get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// Server as HOST:PORT.
    pub server: String,
    /// Bytes to download ("100MB"), or "unlimited" with --duration.
    #[arg(long, default_value = "100MB")]
    pub download: String,
    /// Bytes to upload.
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
    /// Flow-control windows (without --path).
    #[arg(long, default_value = "64MB")]
    pub window: String,
    /// The satellite path as FORWARD/RETURN/RTT (e.g. 250Mbit/3Mbit/650ms): applies satquic's
    /// transport preset for it (windows from the BDP, ACK thinning, Hybla's start-up target).
    #[arg(long)]
    pub path: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Don't check the content (for other perf servers, which send other bytes): count only.
    #[arg(long)]
    pub no_verify: bool,
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
            eprintln!("WARNING: --insecure: the server's certificate is NOT verified");
            Trust::InsecureAcceptAnything
        }
        (None, false) => bail!(
            "give the server's CA certificate with --ca FILE (or --insecure for a self-signed test peer)"
        ),
    };
    let download_bytes = match args.download.as_str() {
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
    let host = args
        .server
        .rsplit_once(':')
        .map_or(args.server.as_str(), |(h, _)| h);
    let options = ClientOptions {
        server,
        server_name: args
            .server_name
            .clone()
            .unwrap_or_else(|| host.trim_matches(['[', ']']).to_owned()),
        trust,
        download_bytes,
        upload_bytes: size("--upload", &args.upload)?,
        duration,
        transport: Arc::new(endpoint_transport(
            false,
            args.path.as_deref(),
            &args.cc,
            &[],
            &args.window,
        )?),
        socket_buffer_bytes: socket_buffer(args.path.as_deref())?,
        thresholds: vec![2_000_000, 10_000_000, 100_000_000],
        verify: !args.no_verify,
        repeat_after: None,
    };
    if args.no_verify {
        eprintln!("WARNING: --no-verify: content is counted, not checked");
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
    let report = runtime.block_on(perf::get(options, &progress))?;
    bar.finish_and_clear();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
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
