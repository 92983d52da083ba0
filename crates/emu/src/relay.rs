//! A UDP relay that imposes a modelled satellite path on real traffic: the same
//! [`netsim::Path`] the simulator uses (bottleneck links and per-flow access segments),
//! driven by the wall clock.
//!
//! Clients send to the relay's listen address; each client gets its own upstream socket
//! towards the server, so replies find their way back. Client → server packets cross the
//! return link, server → client packets the forward link (forward = download, as in scenario
//! files). Everything shares one bottleneck per direction. Client `k` (in the order clients
//! first send) is flow `k` of the path, with access delay `access_delays[k]` (zero beyond
//! the list).
//!
//! Threads: one receiver on the listen socket, one per client's upstream socket, and one
//! scheduler that owns both links, admits packets at their receive time and sends each one
//! when the model says it arrives. Receivers hand packets to the scheduler through a bounded
//! channel; what does not fit is dropped and counted — memory never grows with the offered
//! load, only with the configured buffers.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use netsim::{
    Direction, FlowLinkStats, IP_UDP_HEADER_BYTES, LinkConfig, LinkStats, Path, PathConfig,
};

use crate::sockbuf;

/// Largest UDP payload the relay accepts.
const MAX_DATAGRAM_BYTES: usize = 65_535;
/// Packets that may wait between the receivers and the scheduler.
const HANDOFF_CAPACITY: usize = 65_536;
/// Bytes that may wait between the receivers and the scheduler (whatever the packet sizes).
const HANDOFF_BYTES: u64 = 32 << 20;
/// Clients tracked at once; more are refused (and counted).
pub const MAX_CLIENTS: usize = 1024;
/// A client silent this long is forgotten (its upstream socket closed).
const CLIENT_IDLE: Duration = Duration::from_secs(60);
/// How often blocked threads look at the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// What the relay imposes.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// Where clients send.
    pub listen: SocketAddr,
    /// The server.
    pub upstream: SocketAddr,
    /// A server per client, in the order clients appear (clients beyond the list go to
    /// `upstream`): lets each flow have its own server, e.g. its own congestion controller.
    pub flow_upstreams: Vec<SocketAddr>,
    /// Server → client.
    pub forward: LinkConfig,
    /// Client → server.
    pub return_link: LinkConfig,
    /// IP MTU; larger packets are dropped.
    pub mtu_bytes: u32,
    /// Extra one-way delay of each client's access segment, in the order clients appear.
    pub access_delays: Vec<Duration>,
    /// Seed of the loss and AQM randomness.
    pub seed: u64,
    /// Receive and send buffer of every relay socket, bytes; None sizes them from the path
    /// ([`sockbuf::buffer_bytes_for`] of the fastest link and the base RTT).
    pub socket_buffer_bytes: Option<usize>,
}

impl RelayConfig {
    /// The socket buffer the relay asks for.
    pub fn socket_buffer_bytes(&self) -> usize {
        self.socket_buffer_bytes.unwrap_or_else(|| {
            let fastest = [&self.forward, &self.return_link]
                .iter()
                .flat_map(|l| {
                    l.schedule
                        .iter()
                        .filter_map(|s| s.rate_bps)
                        .chain([l.rate_bps])
                })
                .max()
                .unwrap_or(self.forward.rate_bps);
            sockbuf::buffer_bytes_for(fastest, self.forward.delay + self.return_link.delay)
        })
    }
}

/// Counters of a running relay.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RelayStats {
    /// Forward link counters.
    pub forward: LinkStats,
    /// Return link counters.
    pub return_link: LinkStats,
    /// Clients seen.
    pub clients: u64,
    /// Datagrams dropped before the model (hand-off full, too many clients).
    pub overload_drops: u64,
    /// Datagrams the kernel dropped at the relay's sockets before the relay read them (receive
    /// buffer full): the `drops` counters of the listen socket and every upstream socket.
    pub kernel_drops: u64,
    /// Datagrams the model delivered that the relay failed to send on.
    pub send_errors: u64,
    /// Socket buffer the kernel granted to the listen socket.
    pub socket_buffer: sockbuf::Granted,
    /// Lateness of each delivery against the model's arrival time, microseconds.
    pub lateness_us: Histogram<u64>,
    /// Per client (flow), in the order clients appeared: \[forward, return\] bottleneck
    /// counters.
    pub flows: Vec<[FlowLinkStats; 2]>,
    /// Bottleneck occupancy every [`QUEUE_SAMPLE_INTERVAL`]: (time since start, forward bytes,
    /// return bytes).
    pub queue_samples: Vec<(Duration, u64, u64)>,
}

/// Period of [`RelayStats::queue_samples`].
pub const QUEUE_SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

/// Counters the scheduler publishes.
#[derive(Clone)]
struct Published {
    forward: LinkStats,
    return_link: LinkStats,
    lateness: Histogram<u64>,
    flows: Vec<[FlowLinkStats; 2]>,
    queue_samples: Vec<(Duration, u64, u64)>,
}

struct Packet {
    client: usize,
    to_server: bool,
    at: Duration,
    data: Vec<u8>,
}

struct Client {
    address: SocketAddr,
    upstream: Arc<UdpSocket>,
    last_seen: Instant,
    alive: Arc<AtomicBool>,
}

struct Shared {
    stop: AtomicBool,
    send_errors: AtomicU64,
    socket_buffer_bytes: usize,
    handoff_bytes: AtomicU64,
    overload_drops: AtomicU64,
    clients_seen: AtomicU64,
    stats: Mutex<Published>,
}

/// A running relay; stops when dropped.
pub struct Relay {
    local: SocketAddr,
    listen: Arc<UdpSocket>,
    clients: Arc<Mutex<Vec<Client>>>,
    socket_buffer: sockbuf::Granted,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Relay {
    /// Binds the listen socket and starts relaying.
    pub fn start(config: RelayConfig) -> io::Result<Relay> {
        let invalid =
            |e: netsim::ConfigError| io::Error::new(io::ErrorKind::InvalidInput, e.to_string());
        let path: Path<Vec<u8>> = Path::new(
            &PathConfig {
                forward: config.forward.clone(),
                return_link: config.return_link.clone(),
                mtu_bytes: config.mtu_bytes,
                access_delays: Vec::new(),
            },
            config.seed,
        )
        .map_err(invalid)?;
        let access_delays = config.access_delays.clone();
        let listen = Arc::new(UdpSocket::bind(config.listen)?);
        listen.set_read_timeout(Some(POLL))?;
        let socket_buffer_bytes = config.socket_buffer_bytes();
        let socket_buffer =
            sockbuf::size_or_warn(&listen, socket_buffer_bytes, "relay listen socket");
        let local = listen.local_addr()?;
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            send_errors: AtomicU64::new(0),
            socket_buffer_bytes,
            handoff_bytes: AtomicU64::new(0),
            overload_drops: AtomicU64::new(0),
            clients_seen: AtomicU64::new(0),
            stats: Mutex::new(Published {
                forward: LinkStats::default(),
                return_link: LinkStats::default(),
                lateness: Histogram::new(3).expect("3 significant digits is valid"),
                flows: Vec::new(),
                queue_samples: Vec::new(),
            }),
        });
        let (tx, rx) = mpsc::sync_channel::<Packet>(HANDOFF_CAPACITY);
        let clients: Arc<Mutex<Vec<Client>>> = Arc::new(Mutex::new(Vec::new()));
        let start = Instant::now();
        let mut threads = Vec::new();
        {
            let (listen, shared, clients, tx) =
                (listen.clone(), shared.clone(), clients.clone(), tx.clone());
            let (upstream, flow_upstreams) = (config.upstream, config.flow_upstreams.clone());
            threads.push(std::thread::spawn(move || {
                receive_from_clients(
                    &listen,
                    upstream,
                    &flow_upstreams,
                    &shared,
                    &clients,
                    &tx,
                    start,
                )
            }));
        }
        {
            let (listen, shared, clients) = (listen.clone(), shared.clone(), clients.clone());
            threads.push(std::thread::spawn(move || {
                schedule(rx, &listen, path, &access_delays, &shared, &clients, start)
            }));
        }
        drop(tx);
        Ok(Relay {
            local,
            listen,
            clients,
            socket_buffer,
            shared,
            threads,
        })
    }

    /// The address clients should send to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Counters so far.
    pub fn stats(&self) -> RelayStats {
        let published = self.shared.stats.lock().expect("no poisoning").clone();
        let kernel_drops = sockbuf::kernel_drops(&self.listen).unwrap_or(0)
            + self
                .clients
                .lock()
                .expect("no poisoning")
                .iter()
                .map(|c| sockbuf::kernel_drops(&c.upstream).unwrap_or(0))
                .sum::<u64>();
        RelayStats {
            forward: published.forward,
            return_link: published.return_link,
            clients: self.shared.clients_seen.load(Ordering::Relaxed),
            overload_drops: self.shared.overload_drops.load(Ordering::Relaxed),
            kernel_drops,
            send_errors: self.shared.send_errors.load(Ordering::Relaxed),
            socket_buffer: self.socket_buffer,
            lateness_us: published.lateness,
            flows: published.flows,
            queue_samples: published.queue_samples,
        }
    }

    /// Stops all threads and waits for them.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn hand_off(tx: &SyncSender<Packet>, packet: Packet, shared: &Shared) {
    let len = packet.data.len() as u64;
    if shared.handoff_bytes.fetch_add(len, Ordering::Relaxed) + len > HANDOFF_BYTES {
        shared.handoff_bytes.fetch_sub(len, Ordering::Relaxed);
        shared.overload_drops.fetch_add(1, Ordering::Relaxed);
        return;
    }
    match tx.try_send(packet) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
            shared.handoff_bytes.fetch_sub(len, Ordering::Relaxed);
            shared.overload_drops.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn receive_from_clients(
    listen: &UdpSocket,
    default_upstream: SocketAddr,
    flow_upstreams: &[SocketAddr],
    shared: &Arc<Shared>,
    clients: &Arc<Mutex<Vec<Client>>>,
    tx: &SyncSender<Packet>,
    start: Instant,
) {
    let mut buf = vec![0u8; MAX_DATAGRAM_BYTES];
    let mut index_of: HashMap<SocketAddr, usize> = HashMap::new();
    let mut upstream_threads: Vec<JoinHandle<()>> = Vec::new();
    while !shared.stop.load(Ordering::Relaxed) {
        let (len, from) = match listen.recv_from(&mut buf) {
            Ok(x) => x,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                expire_idle(clients, &mut index_of);
                continue;
            }
            Err(_) => continue,
        };
        let at = start.elapsed();
        let client = match index_of.get(&from) {
            Some(&i) => i,
            None => {
                let mut list = clients.lock().expect("no poisoning");
                if list
                    .iter()
                    .filter(|c| c.alive.load(Ordering::Relaxed))
                    .count()
                    >= MAX_CLIENTS
                {
                    shared.overload_drops.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let upstream = flow_upstreams
                    .get(list.len())
                    .copied()
                    .unwrap_or(default_upstream);
                let Ok(socket) = UdpSocket::bind(SocketAddr::new(
                    listen.local_addr().map(|a| a.ip()).unwrap_or(upstream.ip()),
                    0,
                ))
                .and_then(|s| s.connect(upstream).map(|_| s))
                .and_then(|s| s.set_read_timeout(Some(POLL)).map(|_| s)) else {
                    shared.overload_drops.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                sockbuf::size_or_warn(&socket, shared.socket_buffer_bytes, "relay upstream socket");
                let socket = Arc::new(socket);
                let index = list.len();
                let alive = Arc::new(AtomicBool::new(true));
                list.push(Client {
                    address: from,
                    upstream: socket.clone(),
                    last_seen: Instant::now(),
                    alive: alive.clone(),
                });
                index_of.insert(from, index);
                shared.clients_seen.fetch_add(1, Ordering::Relaxed);
                let (shared, tx) = (shared.clone(), tx.clone());
                upstream_threads.push(std::thread::spawn(move || {
                    receive_from_server(&socket, index, &alive, &shared, &tx, start)
                }));
                index
            }
        };
        if let Some(c) = clients.lock().expect("no poisoning").get_mut(client) {
            c.last_seen = Instant::now();
        }
        hand_off(
            tx,
            Packet {
                client,
                to_server: true,
                at,
                data: buf[..len].to_vec(),
            },
            shared,
        );
    }
    for c in clients.lock().expect("no poisoning").iter() {
        c.alive.store(false, Ordering::Relaxed);
    }
    for t in upstream_threads {
        let _ = t.join();
    }
}

fn expire_idle(clients: &Mutex<Vec<Client>>, index_of: &mut HashMap<SocketAddr, usize>) {
    let list = clients.lock().expect("no poisoning");
    for c in list.iter() {
        if c.alive.load(Ordering::Relaxed) && c.last_seen.elapsed() > CLIENT_IDLE {
            c.alive.store(false, Ordering::Relaxed);
            index_of.remove(&c.address);
        }
    }
}

fn receive_from_server(
    socket: &UdpSocket,
    client: usize,
    alive: &AtomicBool,
    shared: &Shared,
    tx: &SyncSender<Packet>,
    start: Instant,
) {
    let mut buf = vec![0u8; MAX_DATAGRAM_BYTES];
    while alive.load(Ordering::Relaxed) && !shared.stop.load(Ordering::Relaxed) {
        match socket.recv(&mut buf) {
            Ok(len) => hand_off(
                tx,
                Packet {
                    client,
                    to_server: false,
                    at: start.elapsed(),
                    data: buf[..len].to_vec(),
                },
                shared,
            ),
            Err(_) => continue,
        }
    }
}

fn schedule(
    rx: Receiver<Packet>,
    listen: &UdpSocket,
    mut path: Path<Vec<u8>>,
    access_delays: &[Duration],
    shared: &Shared,
    clients: &Mutex<Vec<Client>>,
    start: Instant,
) {
    let mut last_admitted = Duration::ZERO;
    let mut lateness = Histogram::<u64>::new(3).expect("valid");
    let mut published = Instant::now();
    let mut queue_samples = Vec::new();
    let mut next_queue_sample = QUEUE_SAMPLE_INTERVAL;
    // Sends everything the path delivers by `at` (all of it due by now on the wall clock).
    let deliver = |path: &mut Path<Vec<u8>>, at: Duration, lateness: &mut Histogram<u64>| {
        let list = clients.lock().expect("no poisoning");
        let now = start.elapsed();
        while let Some(delivery) = path.poll(at) {
            let Some(c) = list.get(delivery.flow) else {
                continue;
            };
            let sent = match delivery.direction {
                Direction::Return => c.upstream.send(&delivery.payload),
                Direction::Forward => listen.send_to(&delivery.payload, c.address),
            };
            if sent.is_err() {
                shared.send_errors.fetch_add(1, Ordering::Relaxed);
            }
            let _ = lateness.record(now.saturating_sub(delivery.at).as_micros() as u64);
        }
    };
    let mut admit = |packet: Packet,
                     floor: Duration,
                     path: &mut Path<Vec<u8>>,
                     lateness: &mut Histogram<u64>| {
        shared
            .handoff_bytes
            .fetch_sub(packet.data.len() as u64, Ordering::Relaxed);
        // Receivers stamp packets; keep admissions in time order and not before the time the
        // path was last advanced to (`floor`): the path takes its inputs in time order.
        let at = packet.at.max(last_admitted).max(floor);
        last_admitted = at;
        deliver(path, at, lateness);
        while path.flows() <= packet.client {
            let delay = access_delays.get(path.flows()).copied().unwrap_or_default();
            path.add_flow(delay);
        }
        let wire = packet.data.len() as u32 + IP_UDP_HEADER_BYTES;
        let direction = if packet.to_server {
            Direction::Return
        } else {
            Direction::Forward
        };
        path.send(at, direction, packet.client, wire, packet.data);
        at
    };
    let publish = |path: &Path<Vec<u8>>, lateness: &Histogram<u64>, samples: &Vec<_>| {
        *shared.stats.lock().expect("no poisoning") = Published {
            forward: path.link_stats(Direction::Forward),
            return_link: path.link_stats(Direction::Return),
            lateness: lateness.clone(),
            flows: (0..path.flows())
                .map(|f| {
                    [
                        path.flow_stats(f, Direction::Forward),
                        path.flow_stats(f, Direction::Return),
                    ]
                })
                .collect(),
            queue_samples: samples.clone(),
        };
    };
    // The latest time fed to the path: queue samples are read there, never later, so the
    // path keeps seeing its inputs in time order.
    let mut latest = Duration::ZERO;
    while !shared.stop.load(Ordering::Relaxed) {
        let now = start.elapsed();
        deliver(&mut path, now, &mut lateness);
        latest = latest.max(now);
        while next_queue_sample <= latest {
            let forward = path.queue_bytes(Direction::Forward, latest);
            let back = path.queue_bytes(Direction::Return, latest);
            queue_samples.push((next_queue_sample, forward, back));
            next_queue_sample += QUEUE_SAMPLE_INTERVAL;
        }
        if published.elapsed() >= Duration::from_millis(100) {
            published = Instant::now();
            publish(&path, &lateness, &queue_samples);
        }
        let wait = path
            .next_event()
            .map_or(POLL, |t| t.saturating_sub(start.elapsed()).min(POLL));
        match rx.recv_timeout(wait) {
            Ok(packet) => {
                latest = latest.max(admit(packet, latest, &mut path, &mut lateness));
                // Admit what else is waiting, a bounded batch, before delivering again.
                for _ in 0..256 {
                    match rx.try_recv() {
                        Ok(packet) => {
                            latest = latest.max(admit(packet, latest, &mut path, &mut lateness))
                        }
                        Err(_) => break,
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    publish(&path, &lateness, &queue_samples);
}
