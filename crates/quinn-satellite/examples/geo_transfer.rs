//! A quinn client that moves bytes over a satellite path with `quinn_satellite`'s settings, or
//! with quinn's defaults to compare: the one-line adoption, in a program that runs.
//!
//! It speaks the QUIC perf protocol (draft-banks-quic-performance), so any perf server is a
//! peer — `satquic serve` is one:
//!
//! ```sh
//! satquic serve --listen 127.0.0.1:4433 --cert-out /tmp/cert.pem &
//! satquic link --listen 127.0.0.1:5000 --to 127.0.0.1:4433 \
//!     --rate 20Mbit --return-rate 20Mbit --delay 300ms --loss 0.01% &
//! cargo run --release -p quinn-satellite --example geo_transfer -- 127.0.0.1:5000 \
//!     --ca /tmp/cert.pem --upload 10MB --forward 20Mbit --return 20Mbit --rtt 600ms --loss 0.0001
//! # the same with quinn's defaults:
//! cargo run --release -p quinn-satellite --example geo_transfer -- 127.0.0.1:5000 \
//!     --ca /tmp/cert.pem --upload 10MB --quinn-defaults
//! # the preset with quinn's timers on a timerfd (Linux):
//! cargo run --release -p quinn-satellite --features precise-timers --example geo_transfer -- \
//!     127.0.0.1:5000 --ca /tmp/cert.pem --upload 10MB --precise-timers
//! ```
//!
//! Uploads exercise this end's congestion controller (Hybla with the preset); downloads
//! exercise this end's receive windows and the ACK thinning the server may ask for, while the
//! server's controller sends. The program prints one JSON line with the completion time.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use quinn::crypto::rustls::QuicClientConfig;
use quinn_satellite::SatellitePath;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// Upload and/or download over a satellite path with the quinn-satellite preset.
#[derive(Debug, Parser)]
struct Args {
    /// Perf server address (HOST:PORT).
    server: SocketAddr,
    /// CA certificate (PEM) the server's certificate chains to.
    #[arg(long)]
    ca: PathBuf,
    /// Name in the server's certificate.
    #[arg(long, default_value = "localhost")]
    server_name: String,
    /// Bytes to upload (e.g. 10MB, 512KB, 1000).
    #[arg(long, default_value = "0", value_parser = parse_bytes)]
    upload: u64,
    /// Bytes to download.
    #[arg(long, default_value = "0", value_parser = parse_bytes)]
    download: u64,
    /// Forward (server → client) rate, e.g. 20Mbit.
    #[arg(long, default_value = "20Mbit", value_parser = parse_rate)]
    forward: u64,
    /// Return (client → server) rate.
    #[arg(long = "return", default_value = "20Mbit", value_parser = parse_rate)]
    return_rate: u64,
    /// Base round-trip time, e.g. 600ms.
    #[arg(long, default_value = "600ms", value_parser = parse_millis)]
    rtt: Duration,
    /// Random packet loss rate (probability, e.g. 0.0001).
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
    /// Ignore the path and use quinn's default transport (Cubic, default windows): the baseline.
    #[arg(long)]
    quinn_defaults: bool,
    /// Run quinn's timers on a timerfd (`PreciseTimerRuntime`), so that its pacer sends at the
    /// rate the window asks for. Needs the feature `precise-timers` (Linux).
    #[arg(long)]
    precise_timers: bool,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.upload == 0 && args.download == 0 {
        bail!("nothing to do: give --upload and/or --download a size");
    }
    let transport = if args.quinn_defaults {
        quinn::TransportConfig::default()
    } else {
        // The line this crate exists for.
        SatellitePath::new(args.forward, args.return_rate, args.rtt)
            .with_loss_rate(args.loss)
            .client_transport()
            .context("the path description")?
    };

    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(&args.ca)
        .with_context(|| format!("--ca {}", args.ca.display()))?
    {
        roots.add(cert.with_context(|| format!("--ca {}", args.ca.display()))?)?;
    }
    let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13])?
    .with_root_certificates(roots)
    .with_no_client_auth();
    tls.alpn_protocols = vec![b"perf".to_vec()];
    let mut client = quinn::ClientConfig::new(Arc::new(QuicClientConfig::try_from(tls)?));
    client.transport_config(Arc::new(transport));

    let bind: SocketAddr = if args.server.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    let mut endpoint = if args.precise_timers {
        precise_timer_endpoint(bind)?
    } else {
        quinn::Endpoint::client(bind)?
    };
    endpoint.set_default_client_config(client);

    let start = Instant::now();
    let connection = endpoint
        .connect(args.server, &args.server_name)?
        .await
        .context("handshake")?;
    let handshake = start.elapsed();
    let (mut send, mut recv) = connection.open_bi().await?;
    // perf: 8-byte big-endian count of bytes wanted back, then the upload, then FIN.
    send.write_all(&args.download.to_be_bytes()).await?;
    let upload_bytes = args.upload;
    let uploader = tokio::spawn(async move {
        let chunk = vec![0u8; 64 * 1024];
        let mut left = upload_bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            send.write_all(&chunk[..n]).await?;
            left -= n as u64;
        }
        send.finish()?;
        // Done when the peer has acknowledged every byte (or stopped the stream).
        let _ = send.stopped().await;
        anyhow::Ok(())
    });
    let mut received: u64 = 0;
    while let Some(chunk) = recv.read_chunk(usize::MAX, false).await? {
        received += chunk.bytes.len() as u64;
    }
    uploader.await??;
    let elapsed = start.elapsed();
    if received != args.download {
        bail!(
            "received {received} bytes of the {} requested",
            args.download
        );
    }
    connection.close(0u32.into(), b"done");
    endpoint.wait_idle().await;
    let bytes = args.upload + args.download;
    println!(
        "{{\"transport\":\"{}\",\"upload_bytes\":{},\"download_bytes\":{},\"handshake_s\":{:.3},\"completion_s\":{:.3},\"goodput_bps\":{:.0}}}",
        if args.quinn_defaults {
            "quinn-defaults"
        } else {
            "quinn-satellite"
        },
        args.upload,
        args.download,
        handshake.as_secs_f64(),
        elapsed.as_secs_f64(),
        bytes as f64 * 8.0 / elapsed.as_secs_f64()
    );
    Ok(())
}

/// "10MB", "512KB", "1GB" or a plain count of bytes (decimal units).
fn parse_bytes(text: &str) -> Result<u64, String> {
    parse_scaled(text, &[("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("B", 1.0)])
}

/// "20Mbit", "500kbit", "1Gbit" or plain bits per second.
fn parse_rate(text: &str) -> Result<u64, String> {
    parse_scaled(
        text,
        &[("Gbit", 1e9), ("Mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)],
    )
}

/// "600ms", "0.6s" or plain milliseconds.
fn parse_millis(text: &str) -> Result<Duration, String> {
    let ms = parse_scaled(text, &[("ms", 1.0), ("s", 1e3)])?;
    Ok(Duration::from_millis(ms))
}

fn parse_scaled(text: &str, units: &[(&str, f64)]) -> Result<u64, String> {
    let (number, scale) = units
        .iter()
        .find_map(|(suffix, scale)| text.strip_suffix(suffix).map(|n| (n, *scale)))
        .unwrap_or((text, 1.0));
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number with one of the units {units:?}"))?;
    if !(value.is_finite() && value >= 0.0) {
        return Err(format!("{text:?} must be a finite, non-negative amount"));
    }
    Ok((value * scale).round() as u64)
}

#[cfg(all(feature = "precise-timers", target_os = "linux"))]
fn precise_timer_endpoint(bind: SocketAddr) -> anyhow::Result<quinn::Endpoint> {
    let socket = std::net::UdpSocket::bind(bind).with_context(|| format!("binding {bind}"))?;
    Ok(quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        None,
        socket,
        quinn_satellite::PreciseTimerRuntime::shared(),
    )?)
}

#[cfg(not(all(feature = "precise-timers", target_os = "linux")))]
fn precise_timer_endpoint(_bind: SocketAddr) -> anyhow::Result<quinn::Endpoint> {
    bail!(
        "--precise-timers needs quinn-satellite's feature precise-timers (Linux): \
         cargo run --release -p quinn-satellite --features precise-timers --example geo_transfer"
    )
}
