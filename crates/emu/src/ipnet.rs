//! IP-level emulation for traffic that is not ours: two network namespaces, a client side and a
//! server side, each with a TUN device whose file descriptor this process keeps. Every IP
//! packet one side routes into its TUN crosses the emulated path (the same netsim links) and
//! comes out of the other side's TUN — so kernel TCP (iperf3 with cubic, bbr, reno), other QUIC
//! stacks and satquic's own perf tools can share one emulated satellite path.
//!
//! Addresses (private, inside namespaces this process creates and deletes): client side
//! 10.77.0.2/24, server side 10.77.1.2/24. Forward = server → client, as in scenarios. Rates
//! apply to whole IP packets. Creating and deleting the namespaces needs root (CAP_NET_ADMIN)
//! and the `ip` tool (iproute2).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use netsim::{Delivery, Direction, LinkConfig, LinkStats, Path, PathConfig};

use crate::pump::{self, Arrival, PumpIo, PumpStats};

/// Client-side address.
pub const CLIENT_ADDRESS: &str = "10.77.0.2";
/// Server-side address.
pub const SERVER_ADDRESS: &str = "10.77.1.2";
/// Per-flow accounting period.
pub const BUCKET: Duration = Duration::from_millis(100);

/// What to build.
#[derive(Debug, Clone)]
pub struct NetnsConfig {
    /// Namespace and device name prefix ("sq" → sq-client, sq-server, sqc0, sqs0).
    pub prefix: String,
    /// Server → client.
    pub forward: LinkConfig,
    /// Client → server.
    pub return_link: LinkConfig,
    /// IP MTU of the TUN devices and the links.
    pub mtu_bytes: u32,
    /// Loss and AQM seed.
    pub seed: u64,
}

/// Why the namespaces could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    /// Not root.
    #[error(
        "the IP-level mode needs root (CAP_NET_ADMIN) to create namespaces and TUN devices; run it with sudo"
    )]
    NotRoot,
    /// A command failed.
    #[error("`{command}` failed: {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// What it printed.
        stderr: String,
    },
    /// The TUN device.
    #[error("TUN device {name}: {message}")]
    Tun {
        /// Device name.
        name: String,
        /// The error.
        message: String,
    },
    /// Invalid link configuration.
    #[error(transparent)]
    Config(#[from] netsim::ConfigError),
}

/// A flow seen at the emulator: protocol and the two endpoints (server side first).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlowKey {
    /// "tcp", "udp" or the IP protocol number.
    pub protocol: String,
    /// Server-side port.
    pub server_port: u16,
    /// Client-side port.
    pub client_port: u16,
}

/// Bytes delivered towards the client per flow, per [`BUCKET`] since start.
pub type FlowSeries = BTreeMap<FlowKey, Vec<u64>>;

fn run(args: &[&str]) -> Result<(), NetnsError> {
    let output = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| NetnsError::Command {
            command: args.join(" "),
            stderr: e.to_string(),
        })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(NetnsError::Command {
            command: args.join(" "),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// The running emulation; tears the namespaces down when dropped.
pub struct Netns {
    prefix: String,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    state: Arc<Mutex<(LinkStats, LinkStats, FlowSeries)>>,
}

fn flow_of(packet: &[u8]) -> Option<FlowKey> {
    // IPv4 only (the namespaces have IPv4 addresses).
    if packet.len() < 20 || packet[0] >> 4 != 4 {
        return None;
    }
    let header = usize::from(packet[0] & 0x0f) * 4;
    let protocol = packet[9];
    let ports = packet.get(header..header + 4).map(|p| {
        (
            u16::from_be_bytes([p[0], p[1]]),
            u16::from_be_bytes([p[2], p[3]]),
        )
    });
    let (source, destination) = ports.unwrap_or((0, 0));
    Some(FlowKey {
        protocol: match protocol {
            6 => "tcp".into(),
            17 => "udp".into(),
            other => other.to_string(),
        },
        // Forward packets go server → client: source is the server side.
        server_port: source,
        client_port: destination,
    })
}

impl Netns {
    /// Creates the namespaces and devices and starts forwarding.
    pub fn up(config: NetnsConfig) -> Result<Netns, NetnsError> {
        if !is_root() {
            return Err(NetnsError::NotRoot);
        }
        let (client_ns, server_ns) = (
            format!("{}-client", config.prefix),
            format!("{}-server", config.prefix),
        );
        let (client_dev, server_dev) = (
            format!("{}c0", config.prefix),
            format!("{}s0", config.prefix),
        );
        let base_rtt = config.forward.delay + config.return_link.delay;
        // All kernel traffic is one flow of the path (no access segment); per-connection
        // goodput is counted from the packets' ports on delivery.
        let path: Path<Vec<u8>> = Path::new(
            &PathConfig {
                forward: config.forward.clone(),
                return_link: config.return_link.clone(),
                mtu_bytes: config.mtu_bytes,
                access_delays: vec![Duration::ZERO],
            },
            config.seed,
        )?;
        let mut devices = Vec::new();
        for (ns, dev, address, peer_net) in [
            (&client_ns, &client_dev, CLIENT_ADDRESS, "10.77.1.0/24"),
            (&server_ns, &server_dev, SERVER_ADDRESS, "10.77.0.0/24"),
        ] {
            run(&["ip", "netns", "add", ns])?;
            let mut tun_config = tun::Configuration::default();
            tun_config
                .tun_name(dev)
                .mtu(config.mtu_bytes as u16)
                .layer(tun::Layer::L3);
            let device = tun::create(&tun_config).map_err(|e| NetnsError::Tun {
                name: dev.clone(),
                message: e.to_string(),
            })?;
            run(&["ip", "link", "set", dev, "netns", ns])?;
            run(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
            run(&[
                "ip",
                "-n",
                ns,
                "addr",
                "add",
                &format!("{address}/24"),
                "dev",
                dev,
            ])?;
            // The kernel queues packets for the TUN reader in the device's transmit queue
            // (500 packets by default) and drops what does not fit; size it like the sockets.
            let queue_packets = (crate::sockbuf::buffer_bytes_for(
                config.forward.rate_bps.max(config.return_link.rate_bps),
                base_rtt,
            ) / config.mtu_bytes.max(1) as usize)
                .to_string();
            run(&[
                "ip",
                "-n",
                ns,
                "link",
                "set",
                dev,
                "txqueuelen",
                &queue_packets,
            ])?;
            run(&["ip", "-n", ns, "link", "set", dev, "up"])?;
            run(&["ip", "-n", ns, "route", "add", peer_net, "dev", dev])?;
            devices.push(device);
        }
        let server_device = devices.pop().expect("two devices");
        let client_device = devices.pop().expect("two devices");
        let (client_reader, mut client_writer) = client_device.split();
        let (server_reader, mut server_writer) = server_device.split();
        let stop = Arc::new(AtomicBool::new(false));
        let state = Arc::new(Mutex::new((
            LinkStats::default(),
            LinkStats::default(),
            FlowSeries::new(),
        )));
        let (tx, rx) = mpsc::sync_channel::<Arrival>(65_536);
        let start = Instant::now();
        let mut threads = Vec::new();
        // Readers block in read(2); they end when the namespaces (and devices) are deleted or
        // with the process, so they are not joined.
        spawn_reader(
            client_reader,
            Direction::Return,
            tx.clone(),
            stop.clone(),
            start,
        );
        spawn_reader(server_reader, Direction::Forward, tx, stop.clone(), start);
        {
            let (stop, state) = (stop.clone(), state.clone());
            threads.push(std::thread::spawn(move || {
                let mut io = NetnsIo {
                    client_writer: &mut client_writer,
                    server_writer: &mut server_writer,
                    flows: FlowSeries::new(),
                    state: &state,
                };
                pump::run(path, rx, &stop, start, &mut io);
            }));
        }
        Ok(Netns {
            prefix: config.prefix,
            stop,
            threads,
            state,
        })
    }

    /// Link counters and per-flow delivered bytes so far.
    pub fn snapshot(&self) -> (LinkStats, LinkStats, FlowSeries) {
        self.state.lock().expect("no poisoning").clone()
    }

    /// Stops forwarding and deletes the namespaces (and with them the devices).
    pub fn down(mut self) -> (LinkStats, LinkStats, FlowSeries) {
        self.teardown();
        self.snapshot()
    }

    /// Packets the kernel dropped at the two TUN devices before satquic read them (their
    /// transmit queues overflowed): the devices' `tx_dropped` counters. None if unreadable.
    pub fn kernel_drops(&self) -> Option<u64> {
        [("client", "c0"), ("server", "s0")]
            .iter()
            .map(|(side, suffix)| {
                let output = Command::new("ip")
                    .args([
                        "netns",
                        "exec",
                        &format!("{}-{side}", self.prefix),
                        "cat",
                        &format!(
                            "/sys/class/net/{}{suffix}/statistics/tx_dropped",
                            self.prefix
                        ),
                    ])
                    .output()
                    .ok()?;
                String::from_utf8_lossy(&output.stdout)
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .sum()
    }

    fn teardown(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = delete(&self.prefix);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// Deletes the namespaces of `prefix` (also useful after a crash).
pub fn delete(prefix: &str) -> Result<(), NetnsError> {
    let a = run(&["ip", "netns", "del", &format!("{prefix}-client")]);
    let b = run(&["ip", "netns", "del", &format!("{prefix}-server")]);
    a.and(b)
}

/// The TUN side of the pump: writes packets into the namespaces, counts per-connection bytes.
struct NetnsIo<'a, C: Write, S: Write> {
    client_writer: &'a mut C,
    server_writer: &'a mut S,
    flows: FlowSeries,
    state: &'a Mutex<(LinkStats, LinkStats, FlowSeries)>,
}

impl<C: Write, S: Write> PumpIo for NetnsIo<'_, C, S> {
    fn access_delay(&mut self, _flow: usize) -> Duration {
        Duration::ZERO
    }

    fn deliver(&mut self, delivery: Delivery<Vec<u8>>) {
        let packet = &delivery.payload;
        match delivery.direction {
            Direction::Return => {
                let _ = self.server_writer.write(packet);
            }
            Direction::Forward => {
                if let Some(key) = flow_of(packet) {
                    let bucket = (delivery.at.as_nanos() / BUCKET.as_nanos()) as usize;
                    let series = self.flows.entry(key).or_default();
                    if series.len() <= bucket {
                        series.resize(bucket + 1, 0);
                    }
                    series[bucket] += packet.len() as u64;
                }
                let _ = self.client_writer.write(packet);
            }
        }
    }

    fn publish(&mut self, stats: &PumpStats) {
        *self.state.lock().expect("no poisoning") =
            (stats.forward, stats.return_link, self.flows.clone());
    }
}

fn spawn_reader<R: Read + Send + 'static>(
    mut reader: R,
    direction: Direction,
    tx: mpsc::SyncSender<Arrival>,
    stop: Arc<AtomicBool>,
    start: Instant,
) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_536];
        while !stop.load(Ordering::Relaxed) {
            match reader.read(&mut buf) {
                // A full hand-off drops the packet, as a full NIC ring would.
                Ok(n) if n > 0 => {
                    let _ = tx.try_send(Arrival {
                        flow: 0,
                        direction,
                        at: start.elapsed(),
                        wire_bytes: n as u32,
                        payload: buf[..n].to_vec(),
                    });
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    });
}
