//! `satquic link` (a real-time satellite-path relay for any UDP application) and
//! `satquic link-bench` (how accurately it runs on this machine).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use emu::relay::{Relay, RelayConfig};
use netsim::{LinkConfig, LossModel};
use scenario::units;

use crate::run::load_scenario;

/// A symmetric path from flags (`link`, `netns`), when no scenario file is given.
#[derive(Debug, Args)]
pub struct PathFlags {
    /// Server → client rate (and client → server unless --return-rate).
    #[arg(long, default_value = "10Mbit")]
    pub rate: String,
    /// Client → server rate.
    #[arg(long)]
    pub return_rate: Option<String>,
    /// One-way delay of each direction.
    #[arg(long, default_value = "250ms")]
    pub delay: String,
    /// Buffer of each direction ("1bdp", "100pkt", "500KB").
    #[arg(long, default_value = "1bdp")]
    pub queue: String,
    /// Bernoulli loss of each direction ("0.01%").
    #[arg(long)]
    pub loss: Option<String>,
}

impl PathFlags {
    /// (forward, return) links, each checked, errors naming the flag.
    pub fn links(&self) -> anyhow::Result<(LinkConfig, LinkConfig)> {
        let rate =
            units::parse_rate(&self.rate).with_context(|| format!("--rate {:?}", self.rate))?;
        let return_rate = match &self.return_rate {
            Some(r) => units::parse_rate(r).with_context(|| format!("--return-rate {r:?}"))?,
            None => rate,
        };
        let delay = units::parse_duration(&self.delay)
            .with_context(|| format!("--delay {:?}", self.delay))?;
        let queue =
            units::parse_queue(&self.queue).with_context(|| format!("--queue {:?}", self.queue))?;
        let loss = match &self.loss {
            Some(l) => LossModel::Bernoulli {
                probability: units::parse_probability(l)
                    .with_context(|| format!("--loss {l:?}"))?,
            },
            None => LossModel::None,
        };
        let make = |rate_bps: u64, flag: &str| -> anyhow::Result<LinkConfig> {
            let config = LinkConfig {
                queue,
                loss,
                ..LinkConfig::new(rate_bps, delay)
            };
            config.validate(flag)?;
            Ok(config)
        };
        Ok((make(rate, "forward")?, make(return_rate, "return")?))
    }
}

/// Flags of `satquic link`.
#[derive(Debug, Args)]
pub struct LinkArgs {
    /// Address clients send to.
    #[arg(long)]
    pub listen: SocketAddr,
    /// The server the relay forwards to.
    #[arg(long)]
    pub to: SocketAddr,
    /// Take both directions (rates, delays, buffers, loss, schedules) from a scenario.
    #[arg(long, conflicts_with_all = ["rate", "delay"])]
    pub scenario: Option<String>,
    /// The path, when no scenario is given.
    #[command(flatten)]
    pub path: PathFlags,
    /// Seed of the loss randomness.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Receive and send buffer of every relay socket ("32MB"); by default 4 BDPs of the
    /// fastest link, at least 8 MiB. At least one full-size packet (the path's MTU).
    #[arg(long)]
    pub socket_buffer: Option<String>,
}

/// Runs the relay until Ctrl-C.
pub fn link(args: LinkArgs) -> anyhow::Result<()> {
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
    let relay = Relay::start(RelayConfig {
        access_delays: Vec::new(),
        flow_upstreams: Vec::new(),
        flow_clients: Vec::new(),
        listen: args.listen,
        upstream: args.to,
        forward,
        return_link,
        mtu_bytes: mtu,
        seed: args.seed,
        socket_buffer_bytes: args
            .socket_buffer
            .as_deref()
            .map(|v| {
                crate::flags::packet_size("--socket-buffer", v, u64::from(mtu))
                    .map(|b| usize::try_from(b).unwrap_or(usize::MAX))
            })
            .transpose()?,
    })
    .with_context(|| format!("starting the relay on {}", args.listen))?;
    let granted = relay.stats().socket_buffer;
    errln!(
        "relaying {} -> {} (socket buffers {} B receive / {} B send; Ctrl-C to stop)",
        relay.local_addr(),
        args.to,
        granted.receive_bytes,
        granted.send_bytes
    );
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .context("installing the Ctrl-C handler")?;
    }
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let stats = relay.stats();
    relay.stop();
    outln!(
        "forward: {} delivered, {} queue drops, {} lost; return: {} delivered, {} queue drops, {} lost; clients {}, overload drops {}, kernel drops {}, send errors {}; lateness p50 {} µs, p99 {} µs",
        stats.forward.delivered_packets,
        stats.forward.queue_drops,
        stats.forward.random_losses,
        stats.return_link.delivered_packets,
        stats.return_link.queue_drops,
        stats.return_link.random_losses,
        stats.clients,
        stats.overload_drops,
        stats.kernel_drops,
        stats.send_errors,
        stats.lateness_us.value_at_quantile(0.5),
        stats.lateness_us.value_at_quantile(0.99),
    );
    Ok(())
}

/// Flags of `satquic link-bench`.
#[derive(Debug, Args)]
pub struct LinkBenchArgs {
    /// Link rates to measure.
    #[arg(long, value_delimiter = ',', default_values_t = ["10Mbit".to_string(), "50Mbit".to_string(), "250Mbit".to_string(), "500Mbit".to_string(), "1Gbit".to_string()])]
    pub rates: Vec<String>,
    /// One-way delay of the link.
    #[arg(long, default_value = "100ms")]
    pub delay: String,
    /// Load duration per rate.
    #[arg(long, default_value = "5s")]
    pub duration: String,
}

/// Measures the relay at each rate and prints the table.
pub fn link_bench(args: LinkBenchArgs) -> anyhow::Result<()> {
    let delay =
        units::parse_duration(&args.delay).with_context(|| format!("--delay {:?}", args.delay))?;
    let duration = units::parse_duration(&args.duration)
        .with_context(|| format!("--duration {:?}", args.duration))?;
    if duration < Duration::from_secs(2) {
        bail!("--duration: at least 2s (the first second fills the buffer)");
    }
    outln!(
        "{:>10} {:>12} {:>12} {:>9} {:>10} {:>10} {:>10} {:>10} {:>12} {:>11}",
        "configured",
        "offered",
        "achieved",
        "achieved%",
        "late p50",
        "late p99",
        "late max",
        "overload",
        "kernel drops",
        "relay rcvbuf"
    );
    for r in &args.rates {
        let rate = units::parse_rate(r).with_context(|| format!("--rates {r:?}"))?;
        if rate == 0 {
            bail!("--rates: {r:?} must be greater than zero");
        }
        let a = emu::accuracy::measure(rate, delay, duration, 1.1)?;
        outln!(
            "{:>10} {:>12} {:>12} {:>8.1}% {:>8} µs {:>8} µs {:>8} µs {:>10} {:>12} {:>9} MB",
            r,
            format!("{:.1} Mbit/s", a.offered_bps / 1e6),
            format!("{:.1} Mbit/s", a.achieved_bps / 1e6),
            a.achieved_bps / a.configured_bps as f64 * 100.0,
            a.lateness_p50_us,
            a.lateness_p99_us,
            a.lateness_max_us,
            a.overload_drops,
            a.kernel_drops + a.sink_kernel_drops,
            a.relay_socket_buffer_bytes / 1_000_000
        );
    }
    Ok(())
}
