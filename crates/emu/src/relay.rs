//! A UDP relay that imposes a modelled satellite path on real traffic: the same
//! [`netsim::Path`] the simulator uses (bottleneck links and per-flow access segments),
//! driven by the wall clock.
//!
//! Clients send to the relay's listen address; each client gets its own upstream socket
//! towards the server, so replies find their way back. Client → server packets cross the
//! return link, server → client packets the forward link (forward = download, as in scenario
//! files). Everything shares one bottleneck per direction. Client `k` is flow `k` of the
//! path, with access delay `access_delays[k]` (zero beyond the list): the clients whose
//! addresses the configuration names (`flow_clients`) are flows 0, 1, … in that order whenever
//! they first send, and any other client takes the next number when it first sends.
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
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use netsim::{
    Delivery, Direction, FlowLinkStats, IP_UDP_HEADER_BYTES, LinkConfig, LinkStats, Path,
    PathConfig,
};

use crate::pump::{self, Arrival, PumpIo, PumpStats};

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
    /// A server per flow (clients beyond the list go to `upstream`): lets each flow have its
    /// own server, e.g. its own congestion controller.
    pub flow_upstreams: Vec<SocketAddr>,
    /// The address each flow's client sends from, where known in advance: flow `k` is the
    /// client at `flow_clients[k]` whichever client sends first. Without it flows are numbered
    /// in the order clients first send, which a busy machine may scramble when clients start
    /// close together.
    pub flow_clients: Vec<SocketAddr>,
    /// Server → client.
    pub forward: LinkConfig,
    /// Client → server.
    pub return_link: LinkConfig,
    /// IP MTU; larger packets are dropped.
    pub mtu_bytes: u32,
    /// Extra one-way delay of each flow's access segment.
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
            let fastest = self
                .forward
                .peak_rate_bps()
                .max(self.return_link.peak_rate_bps());
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
    /// Per flow (client, numbered as the module docs say): \[forward, return\] bottleneck
    /// counters.
    pub flows: Vec<[FlowLinkStats; 2]>,
    /// Bottleneck occupancy every [`pump::QUEUE_SAMPLE_INTERVAL`]: (time since start, forward
    /// bytes, return bytes).
    pub queue_samples: Vec<(Duration, u64, u64)>,
    /// Mean bottleneck occupancy over the interval ending at each of `queue_samples`: (time
    /// since start, forward bytes, return bytes).
    pub queue_mean_samples: Vec<(Duration, u64, u64)>,
    /// Bytes the forward bottleneck had serialized every [`pump::QUEUE_SAMPLE_INTERVAL`]:
    /// (time since start, bytes).
    pub forward_serialized: Vec<(Duration, u64)>,
    /// IP bytes the path had delivered to each client's (flow's) ends, every
    /// [`pump::QUEUE_SAMPLE_INTERVAL`]: (time since start, flow in client order,
    /// \[forward, return\]).
    pub flow_delivered: Vec<(Duration, usize, [u64; 2])>,
}

struct Client {
    address: SocketAddr,
    upstream: Arc<UdpSocket>,
    /// When it last sent; None until its first datagram (a named client not started yet).
    last_seen: Option<Instant>,
    /// Named in the configuration: never forgotten for being idle.
    pinned: bool,
    alive: Arc<AtomicBool>,
}

struct Shared {
    stop: AtomicBool,
    send_errors: AtomicU64,
    socket_buffer_bytes: usize,
    handoff_bytes: AtomicU64,
    overload_drops: AtomicU64,
    clients_seen: AtomicU64,
    stats: Mutex<PumpStats>,
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
    /// Binds the listen socket and starts relaying; the model's time zero (its rate schedule,
    /// its samples) is now.
    pub fn start(config: RelayConfig) -> io::Result<Relay> {
        Self::start_at(config, Instant::now())
    }

    /// Like [`Relay::start`] with the model's time zero at `epoch` (not in the future): lets
    /// the endpoints of a run share the path's clock, e.g. to schedule flows and measure frame
    /// delays in the same time as the capacity schedule.
    pub fn start_at(config: RelayConfig, epoch: Instant) -> io::Result<Relay> {
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
            stats: Mutex::new(PumpStats::default()),
        });
        let (tx, rx) = mpsc::sync_channel::<Arrival>(HANDOFF_CAPACITY);
        let clients: Arc<Mutex<Vec<Client>>> = Arc::new(Mutex::new(Vec::new()));
        let start = epoch.min(Instant::now());
        let mut threads = Vec::new();
        {
            let mut table = ClientTable {
                listen: listen.clone(),
                default_upstream: config.upstream,
                flow_upstreams: config.flow_upstreams.clone(),
                shared: shared.clone(),
                clients: clients.clone(),
                tx: tx.clone(),
                start,
                index_of: HashMap::new(),
                upstream_threads: Vec::new(),
            };
            // Before the receiver runs, so no datagram of a named client can be numbered
            // otherwise.
            for (k, &address) in config.flow_clients.iter().enumerate() {
                let added = if config.flow_clients[..k].contains(&address) {
                    Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "flow_clients: {address} is named twice (flows are one client each)"
                        ),
                    ))
                } else {
                    table.add(address, true)
                };
                if let Err(e) = added {
                    shared.stop.store(true, Ordering::Relaxed);
                    for t in table.upstream_threads {
                        let _ = t.join();
                    }
                    return Err(e);
                }
            }
            threads.push(std::thread::spawn(move || receive_from_clients(table)));
        }
        {
            let (listen, shared, clients) = (listen.clone(), shared.clone(), clients.clone());
            threads.push(std::thread::spawn(move || {
                let mut io = RelayIo {
                    listen: &listen,
                    clients: &clients,
                    shared: &shared,
                    access_delays: &access_delays,
                };
                pump::run(path, rx, &shared.stop, start, &mut io)
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
            lateness_us: published.lateness_us,
            flows: published.flows,
            queue_samples: published.queue_samples,
            queue_mean_samples: published.queue_mean_samples,
            forward_serialized: published.forward_serialized,
            flow_delivered: published.flow_delivered,
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

fn hand_off(tx: &SyncSender<Arrival>, packet: Arrival, shared: &Shared) {
    let len = packet.payload.len() as u64;
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

/// Where the clients' datagrams go: the client list the pump delivers to, which client is
/// which flow, and each client's upstream receiver.
struct ClientTable {
    listen: Arc<UdpSocket>,
    default_upstream: SocketAddr,
    flow_upstreams: Vec<SocketAddr>,
    shared: Arc<Shared>,
    clients: Arc<Mutex<Vec<Client>>>,
    tx: SyncSender<Arrival>,
    start: Instant,
    index_of: HashMap<SocketAddr, usize>,
    upstream_threads: Vec<JoinHandle<()>>,
}

impl ClientTable {
    /// The flow of a datagram from `from`, numbering a new client next; None (counted as an
    /// overload drop) when the table is full or no upstream socket can be opened.
    fn flow_of(&mut self, from: SocketAddr) -> Option<usize> {
        if let Some(&index) = self.index_of.get(&from) {
            return Some(index);
        }
        let live = self
            .clients
            .lock()
            .expect("no poisoning")
            .iter()
            .filter(|c| c.alive.load(Ordering::Relaxed))
            .count();
        if live >= MAX_CLIENTS {
            self.shared.overload_drops.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        match self.add(from, false) {
            Ok(index) => Some(index),
            Err(_) => {
                self.shared.overload_drops.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Opens `address`'s upstream socket and starts its receiver; a `pinned` client (named in
    /// the configuration) is never forgotten for being idle, since its flow may start late.
    fn add(&mut self, address: SocketAddr, pinned: bool) -> io::Result<usize> {
        let mut list = self.clients.lock().expect("no poisoning");
        let index = list.len();
        let upstream = self
            .flow_upstreams
            .get(index)
            .copied()
            .unwrap_or(self.default_upstream);
        let socket = UdpSocket::bind(SocketAddr::new(self.listen.local_addr()?.ip(), 0))?;
        socket.connect(upstream)?;
        socket.set_read_timeout(Some(POLL))?;
        sockbuf::size_or_warn(
            &socket,
            self.shared.socket_buffer_bytes,
            "relay upstream socket",
        );
        let socket = Arc::new(socket);
        let alive = Arc::new(AtomicBool::new(true));
        list.push(Client {
            address,
            upstream: socket.clone(),
            last_seen: None,
            pinned,
            alive: alive.clone(),
        });
        self.index_of.insert(address, index);
        let (shared, tx, start) = (self.shared.clone(), self.tx.clone(), self.start);
        self.upstream_threads.push(std::thread::spawn(move || {
            receive_from_server(&socket, index, &alive, &shared, &tx, start)
        }));
        Ok(index)
    }
}

/// The listen socket's receiver: numbers clients and hands their datagrams to the pump; a
/// client counts as seen when it first sends.
fn receive_from_clients(mut table: ClientTable) {
    let (listen, shared, clients, tx, start) = (
        table.listen.clone(),
        table.shared.clone(),
        table.clients.clone(),
        table.tx.clone(),
        table.start,
    );
    let mut buf = vec![0u8; MAX_DATAGRAM_BYTES];
    while !shared.stop.load(Ordering::Relaxed) {
        let (len, from) = match listen.recv_from(&mut buf) {
            Ok(x) => x,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                expire_idle(&clients, &mut table.index_of);
                continue;
            }
            Err(_) => continue,
        };
        let at = start.elapsed();
        let Some(client) = table.flow_of(from) else {
            continue;
        };
        if let Some(c) = clients.lock().expect("no poisoning").get_mut(client)
            && c.last_seen.replace(Instant::now()).is_none()
        {
            shared.clients_seen.fetch_add(1, Ordering::Relaxed);
        }
        hand_off(
            &tx,
            Arrival {
                flow: client,
                direction: Direction::Return,
                at,
                wire_bytes: len as u32 + IP_UDP_HEADER_BYTES,
                payload: buf[..len].to_vec(),
            },
            &shared,
        );
    }
    for c in clients.lock().expect("no poisoning").iter() {
        c.alive.store(false, Ordering::Relaxed);
    }
    for t in table.upstream_threads {
        let _ = t.join();
    }
}

fn expire_idle(clients: &Mutex<Vec<Client>>, index_of: &mut HashMap<SocketAddr, usize>) {
    let list = clients.lock().expect("no poisoning");
    for c in list.iter() {
        let idle = c.last_seen.is_some_and(|t| t.elapsed() > CLIENT_IDLE);
        if c.alive.load(Ordering::Relaxed) && !c.pinned && idle {
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
    tx: &SyncSender<Arrival>,
    start: Instant,
) {
    let mut buf = vec![0u8; MAX_DATAGRAM_BYTES];
    while alive.load(Ordering::Relaxed) && !shared.stop.load(Ordering::Relaxed) {
        match socket.recv(&mut buf) {
            Ok(len) => hand_off(
                tx,
                Arrival {
                    flow: client,
                    direction: Direction::Forward,
                    at: start.elapsed(),
                    wire_bytes: len as u32 + IP_UDP_HEADER_BYTES,
                    payload: buf[..len].to_vec(),
                },
                shared,
            ),
            Err(_) => continue,
        }
    }
}

/// The relay's side of the pump: clients' addresses and upstream sockets, counters.
struct RelayIo<'a> {
    listen: &'a UdpSocket,
    clients: &'a Mutex<Vec<Client>>,
    shared: &'a Shared,
    access_delays: &'a [Duration],
}

impl PumpIo for RelayIo<'_> {
    fn access_delay(&mut self, flow: usize) -> Duration {
        self.access_delays.get(flow).copied().unwrap_or_default()
    }

    fn dequeued(&mut self, arrival: &Arrival) {
        self.shared
            .handoff_bytes
            .fetch_sub(arrival.payload.len() as u64, Ordering::Relaxed);
    }

    fn deliver(&mut self, delivery: Delivery<Vec<u8>>) {
        let list = self.clients.lock().expect("no poisoning");
        let Some(client) = list.get(delivery.flow) else {
            return;
        };
        let sent = match delivery.direction {
            Direction::Return => client.upstream.send(&delivery.payload),
            Direction::Forward => self.listen.send_to(&delivery.payload, client.address),
        };
        if sent.is_err() {
            self.shared.send_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn publish(&mut self, stats: &PumpStats) {
        *self.shared.stats.lock().expect("no poisoning") = stats.clone();
    }
}
