//! `satquic netns`: the IP-level mode — two network namespaces joined through the emulated
//! path, for kernel TCP or any other stack — with per-flow goodput at the end.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use emu::ipnet::{self, BUCKET, CLIENT_ADDRESS, Netns, NetnsConfig, SERVER_ADDRESS};
use report::ipflows::{self, IpFlow};
use scenario::units;

use crate::link::PathFlags;
use crate::run::load_scenario;

/// Flags of `satquic netns`.
#[derive(Debug, Args)]
pub struct NetnsArgs {
    /// Take both directions from a scenario (rates, delays, buffers, loss, schedules).
    #[arg(long, conflicts_with_all = ["rate", "delay"])]
    pub scenario: Option<String>,
    /// The path, when no scenario is given.
    #[command(flatten)]
    pub path: PathFlags,
    /// Namespace prefix: PREFIX-client (10.77.0.2) and PREFIX-server (10.77.1.2).
    #[arg(long, default_value = "sq")]
    pub prefix: String,
    /// Stop by itself after this long (else at Ctrl-C).
    #[arg(long)]
    pub duration: Option<String>,
    /// Where flows.csv and the per-flow goodput plot go.
    #[arg(long, default_value = "out/netns")]
    pub out: PathBuf,
    /// Only delete leftover namespaces of PREFIX (after a crash) and exit.
    #[arg(long)]
    pub cleanup: bool,
}

/// Brings the namespaces up, waits, tears down, writes per-flow results.
pub fn netns(args: NetnsArgs) -> anyhow::Result<()> {
    if args.cleanup {
        ipnet::delete(&args.prefix).context("deleting the namespaces")?;
        outln!("deleted {0}-client and {0}-server", args.prefix);
        return Ok(());
    }
    let (forward, return_link, mtu) = match &args.scenario {
        Some(s) => {
            let scenario = load_scenario(s, &[])?;
            (scenario.forward, scenario.return_link, scenario.mtu_bytes)
        }
        None => {
            let (f, r) = args.path.links()?;
            (f, r, netsim::DEFAULT_MTU_BYTES)
        }
    };
    let duration = args
        .duration
        .as_deref()
        .map(|d| units::parse_duration(d).with_context(|| format!("--duration {d:?}")))
        .transpose()?;
    crate::flags::results_dir("--out", &args.out)?;
    let emulation = Netns::up(NetnsConfig {
        prefix: args.prefix.clone(),
        forward,
        return_link,
        mtu_bytes: mtu,
        seed: 1,
    })
    .context("setting up the namespaces")?;
    let p = &args.prefix;
    errln!(
        "up: {p}-client ({CLIENT_ADDRESS}) <-> emulated path <-> {p}-server ({SERVER_ADDRESS}); for example\n  \
         ip netns exec {p}-server iperf3 -s\n  ip netns exec {p}-client iperf3 -c {SERVER_ADDRESS} -R -C cubic -t 60\n  \
         ip netns exec {p}-server satquic serve --listen {SERVER_ADDRESS}:4433 --cert-out /tmp/sq.pem\n  \
         ip netns exec {p}-client satquic get {SERVER_ADDRESS}:4433 --ca /tmp/sq.pem --server-name localhost --download unlimited --duration 60s\n\
         {}",
        if duration.is_some() {
            ""
        } else {
            "Ctrl-C to stop."
        }
    );
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .context("installing the Ctrl-C handler")?;
    }
    let started = Instant::now();
    while !stop.load(Ordering::SeqCst) && duration.is_none_or(|d| started.elapsed() < d) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let kernel_drops = emulation.kernel_drops();
    let (forward, back, flows) = emulation.down();
    let flows: Vec<IpFlow> = flows
        .into_iter()
        .map(|(key, buckets)| IpFlow {
            protocol: key.protocol,
            server_port: key.server_port,
            client_port: key.client_port,
            buckets,
        })
        .collect();
    outln!(
        "{:<6} {:>11} {:>11} {:>14} {:>12}",
        "proto",
        "server port",
        "client port",
        "bytes to client",
        "avg Mbit/s"
    );
    for flow in ipflows::summarize(&flows, BUCKET) {
        outln!(
            "{:<6} {:>11} {:>11} {:>14} {:>12.3}",
            flow.protocol,
            flow.server_port,
            flow.client_port,
            flow.bytes,
            flow.mean_bps / 1e6
        );
    }
    let written = ipflows::write(&args.out, &flows, BUCKET)?;
    let csv_path = &written[0];
    outln!(
        "forward: {} delivered, {} queue drops; return: {} delivered, {} queue drops; kernel drops at the TUN devices: {}; wrote {} and flows.png",
        forward.delivered_packets,
        forward.queue_drops,
        back.delivered_packets,
        back.queue_drops,
        kernel_drops.map_or("unknown".to_owned(), |d| d.to_string()),
        csv_path.display()
    );
    Ok(())
}
