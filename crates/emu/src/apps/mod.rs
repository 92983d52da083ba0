//! Media and bulk applications on one real quinn connection, shared through a `sched`
//! scheduler: [`appcore`]'s state machines — the simulator's very halves — driven by quinn +
//! tokio.
//!
//! quinn hides quinn-proto's connection behind async streams; `streams::QuinnStreams` polls
//! each stream operation once, so an [`appcore`] sending half steps here exactly as in the
//! simulator. One task per connection end drives everything this end sends: at each step
//! [`Scheduler::observe`] with a [`TransportView`] read from the connection (window, bytes in
//! flight from the [`probe`], RTTs, MTU), then each sending application's `step` in session
//! order. Where the backends differ is when a step runs: the simulator steps at every packet,
//! timer and wake-up; this end after every ACK frame (the probe's hook), at every capture time
//! and scheduler or source wake-up, and at least every [`MAX_STEP_GAP`].
//!
//! Receivers are tasks per stream feeding [`appcore`]'s assemblers: a media frame's delay is
//! the arrival of its last byte minus its capture time, both on this end's clock (the sender's
//! capture times are mapped through the session's clock offset, see [`crate::session`]); bulk
//! bytes are verified against the pattern and counted in order. Every [`SAMPLE_INTERVAL`] the
//! end records each application's in-order bytes, as the simulator's application samples.

mod bulk;
mod media;
mod streams;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use appcore::SendingHalf;
use perfwire::Sender;
use perfwire::media::FrameRecord;
use perfwire::session::{AppParams, ReceivedSummary, SentSummary, SessionApp};
use sched::{Scheduler, SchedulerSpec, TransportView};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use streams::{OpenStream, QuinnStreams};

/// Longest time between two sender steps when nothing else wakes the sender.
pub const MAX_STEP_GAP: Duration = Duration::from_millis(5);

/// Period of the per-application byte samples (the simulator's default sample interval).
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

/// Most frames a media receiver records one by one (beyond, frames are counted only): bounds
/// memory on long sessions (2²⁰ frames are 9.7 h at 30 fps).
pub const MAX_FRAME_RECORDS: usize = 1 << 20;

/// Per-application bytes received in order at each sample time.
pub type Samples = Vec<(Duration, Vec<u64>)>;

/// One end's part in a session.
#[derive(Debug, Clone)]
pub struct EndConfig {
    /// Which end this is.
    pub side: Sender,
    /// The session's applications, in order.
    pub apps: Vec<SessionApp>,
    /// How this end's sending applications share the connection.
    pub scheduler: SchedulerSpec,
    /// This end's clock zero: capture times, arrivals, start times and samples count from it.
    pub epoch: Instant,
}

/// What one application did at this end.
#[derive(Debug, Clone, PartialEq)]
pub enum AppEnd {
    /// This end sent it.
    Sent(SentSummary),
    /// This end received it.
    Received(Received),
    /// A perf exchange: served by the perf client and server on the session's connection, not
    /// by this end's halves (its measurements: [`crate::session::SessionReport::perf`] at the
    /// client, the server's summary at the server).
    Perf,
}

/// What a receiving half measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Received {
    /// Application bytes received in order (media: bytes of complete frames).
    pub received_bytes: u64,
    /// Media: every complete frame in arrival order, capture times on this end's clock (at
    /// most [`MAX_FRAME_RECORDS`]).
    pub frames: Vec<FrameRecord>,
    /// Media: frames completed (also those beyond the records).
    pub frames_received: u64,
}

impl Received {
    /// The account a receiver gives of application `params`: counts, and for media the delays
    /// of the recorded frames and how many missed the deadline.
    pub fn summary(&self, params: &AppParams) -> ReceivedSummary {
        let (frame_delay_ms, late_frames) = match params {
            AppParams::Media(media) => perfwire::media::frame_delays(&self.frames, media.deadline),
            AppParams::Bulk(_) | AppParams::Perf(_) => Default::default(),
        };
        ReceivedSummary {
            received_bytes: self.received_bytes,
            frames_received: self.frames_received,
            late_frames,
            frame_delay_ms,
        }
    }
}

/// What one end of a session did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndReport {
    /// Per application, in session order.
    pub apps: Vec<AppEnd>,
    /// Every [`SAMPLE_INTERVAL`] on this end's clock: each application's in-order bytes
    /// received here (0 for those this end sends).
    pub samples: Samples,
    /// The first failure (corrupt data, a protocol violation by the peer), if any.
    pub error: Option<String>,
}

/// State shared by an end's tasks.
#[derive(Debug, Default)]
struct Shared {
    /// Per application: bytes received in order here.
    received: Vec<AtomicU64>,
    /// Per application: frames received here (media).
    frames: Vec<Mutex<media::Frames>>,
    /// The first failure.
    error: Mutex<Option<String>>,
}

impl Shared {
    fn fail(&self, message: String) {
        let mut error = self.error.lock().expect("no poisoning");
        error.get_or_insert(message);
    }
}

/// A running end: its tasks and what they share.
pub struct End {
    config: EndConfig,
    shared: Arc<Shared>,
    stop_sending: watch::Sender<bool>,
    sender: Option<JoinHandle<Vec<(usize, SentSummary)>>>,
    /// Notified after every step of the sender task (when there is one): see
    /// [`End::writing_turns`].
    turns: Option<Arc<Notify>>,
    /// What the senders did, once stopped.
    sent: Option<Vec<SentSummary>>,
    receivers: Vec<JoinHandle<()>>,
    sampler: JoinHandle<()>,
    samples: Arc<Mutex<Samples>>,
}

impl End {
    /// Starts this end's halves on `connection`: a sender task if this end sends anything,
    /// receivers for what it receives, the sampler.
    ///
    /// A bidirectional stream the peer opens goes to the first bulk application this end
    /// receives that has none yet; every unidirectional stream to the first media application
    /// it receives (the simulator routes streams the same way; `perfwire::routing` is what
    /// makes that unambiguous). A perf application is not this end's to run: the session
    /// serves its streams.
    pub fn start(connection: quinn::Connection, config: EndConfig) -> End {
        let count = config.apps.len();
        let shared = Arc::new(Shared {
            received: (0..count).map(|_| AtomicU64::new(0)).collect(),
            frames: (0..count).map(|_| Mutex::default()).collect(),
            error: Mutex::new(None),
        });
        let receiving: Vec<(usize, &SessionApp)> = config
            .apps
            .iter()
            .enumerate()
            .filter(|(_, a)| a.sender != config.side && !is_perf(a))
            .collect();
        let media_receiver = receiving
            .iter()
            .find(|(_, a)| matches!(a.params, AppParams::Media(_)))
            .map(|&(i, _)| i);
        let bulk_receivers: Vec<usize> = receiving
            .iter()
            .filter(|(_, a)| matches!(a.params, AppParams::Bulk(_)))
            .map(|&(i, _)| i)
            .collect();
        let mut receivers = Vec::new();
        if let Some(index) = media_receiver {
            receivers.push(tokio::spawn(media::receive(
                connection.clone(),
                index,
                shared.clone(),
                config.epoch,
            )));
        }
        if !bulk_receivers.is_empty() {
            receivers.push(tokio::spawn(bulk::receive(
                connection.clone(),
                bulk_receivers,
                shared.clone(),
            )));
        }
        let (stop_sending, stop_rx) = watch::channel(false);
        let sending: Vec<(usize, SessionApp)> = config
            .apps
            .iter()
            .enumerate()
            .filter(|(_, a)| a.sender == config.side && !is_perf(a))
            .map(|(i, a)| (i, *a))
            .collect();
        let turns = (!sending.is_empty()).then(|| Arc::new(Notify::new()));
        let sender = turns.clone().map(|turns| {
            tokio::spawn(send_loop(
                connection.clone(),
                sending,
                config.scheduler.build(),
                config.epoch,
                stop_rx,
                turns,
            ))
        });
        let samples = Arc::new(Mutex::new(Vec::new()));
        let sampler = tokio::spawn(sample_loop(shared.clone(), samples.clone(), config.epoch));
        End {
            config,
            shared,
            stop_sending,
            sender,
            turns,
            sent: None,
            receivers,
            sampler,
            samples,
        }
    }

    /// When a writer outside this end's sender task (the session's perf application, on its
    /// own task) may write: notified after each step of the sending applications, or `None`
    /// when this end sends none. quinn's send window is the connection's, all streams
    /// together, and the scheduler sets it before each application writes; a writer woken
    /// by quinn whenever acknowledgements free room takes that room before the sender task's
    /// next step, and the media waits behind it (a 2 MB perf download next to 1 Mbit/s of
    /// media at 4 Mbit/s: 162 of 299 frames cancelled, against none in the simulator, whose
    /// loop steps the perf application after the others). Writing in these turns is the
    /// simulator's order.
    pub fn writing_turns(&self) -> Option<Arc<Notify>> {
        self.turns.clone()
    }

    /// Stops the senders (nothing more is captured or written) and returns what they did, per
    /// application in session order (default for those this end receives).
    pub async fn stop_sending(&mut self) -> Vec<SentSummary> {
        if let Some(sent) = &self.sent {
            return sent.clone();
        }
        let _ = self.stop_sending.send(true);
        let mut out = vec![SentSummary::default(); self.config.apps.len()];
        if let Some(task) = self.sender.take() {
            match task.await {
                Ok(sent) => {
                    for (index, summary) in sent {
                        out[index] = summary;
                    }
                }
                Err(e) => tracing::warn!("the sending task ended without its counts: {e}"),
            }
        }
        self.sent = Some(out.clone());
        out
    }

    /// Stops everything and reports. `peer_to_mine` maps the peer's capture times to this
    /// end's clock: this end's time = the peer's + `peer_to_mine` (signed nanoseconds).
    pub async fn finish(mut self, peer_to_mine_ns: i64) -> EndReport {
        let sent = self.stop_sending().await;
        self.sampler.abort();
        for task in &self.receivers {
            task.abort();
        }
        for task in self.receivers.drain(..) {
            let _ = task.await;
        }
        let mut apps = Vec::with_capacity(self.config.apps.len());
        for (index, app) in self.config.apps.iter().enumerate() {
            apps.push(if is_perf(app) {
                AppEnd::Perf
            } else if app.sender == self.config.side {
                AppEnd::Sent(sent[index])
            } else {
                AppEnd::Received(self.received(index, peer_to_mine_ns))
            });
        }
        let samples = std::mem::take(&mut *self.samples.lock().expect("no poisoning"));
        let error = self.shared.error.lock().expect("no poisoning").clone();
        EndReport {
            apps,
            samples,
            error,
        }
    }

    /// What this end has received so far of each application the peer sends (default for
    /// those it sends), its receivers still running: the account a server reports of an
    /// upload. `peer_to_mine_ns` as for [`End::finish`].
    pub fn received_so_far(&self, peer_to_mine_ns: i64) -> Vec<ReceivedSummary> {
        self.config
            .apps
            .iter()
            .enumerate()
            .map(|(index, app)| {
                if app.sender == self.config.side {
                    ReceivedSummary::default()
                } else {
                    self.received(index, peer_to_mine_ns).summary(&app.params)
                }
            })
            .collect()
    }

    /// What the receiver of application `index` has measured so far.
    fn received(&self, index: usize, peer_to_mine_ns: i64) -> Received {
        let frames = self.shared.frames[index].lock().expect("no poisoning");
        Received {
            received_bytes: self.shared.received[index].load(Ordering::Relaxed),
            frames_received: frames.count,
            frames: frames
                .records
                .iter()
                .map(|raw| raw.on_my_clock(peer_to_mine_ns))
                .collect(),
        }
    }

    /// The first failure so far, if any.
    pub fn error(&self) -> Option<String> {
        self.shared.error.lock().expect("no poisoning").clone()
    }
}

impl Drop for End {
    fn drop(&mut self) {
        if let Some(task) = &self.sender {
            task.abort();
        }
        for task in &self.receivers {
            task.abort();
        }
        self.sampler.abort();
    }
}

fn is_perf(app: &SessionApp) -> bool {
    matches!(app.params, AppParams::Perf(_))
}

/// Records each application's in-order bytes every [`SAMPLE_INTERVAL`] of `epoch`'s clock.
async fn sample_loop(shared: Arc<Shared>, samples: Arc<Mutex<Samples>>, epoch: Instant) {
    let first = (epoch.elapsed().as_nanos() / SAMPLE_INTERVAL.as_nanos() + 1) as u32;
    let mut tick = SAMPLE_INTERVAL * first;
    loop {
        tokio::time::sleep_until((epoch + tick).into()).await;
        let row: Vec<u64> = shared
            .received
            .iter()
            .map(|r| r.load(Ordering::Relaxed))
            .collect();
        samples.lock().expect("no poisoning").push((tick, row));
        tick += SAMPLE_INTERVAL;
    }
}

/// The transport state the scheduler sees, read from the connection at `now`.
fn transport_view(
    connection: &quinn::Connection,
    probe: Option<&probe::ProbeReadings>,
    now: Duration,
) -> TransportView {
    let stats = connection.stats();
    let path = stats.path;
    // Without a probe (a controller not wrapped in one), assume the window is full, and that
    // what was sent and neither lost nor in that window was acknowledged.
    let in_flight_bytes = probe.map_or(path.cwnd, |p| p.in_flight_bytes());
    TransportView {
        now,
        cwnd_bytes: path.cwnd,
        in_flight_bytes,
        acked_bytes: probe.map_or_else(
            || {
                stats
                    .udp_tx
                    .bytes
                    .saturating_sub(path.lost_bytes + in_flight_bytes)
            },
            |p| p.acked_bytes(),
        ),
        srtt: path.rtt,
        min_rtt: path.min_rtt,
        rtt_sample_min: probe.and_then(|p| p.take_min_rtt_sample()),
        mtu_bytes: u64::from(path.current_mtu),
    }
}

/// The sender task: observe, then each sending application in order, until stopped or the
/// connection ends.
async fn send_loop(
    connection: quinn::Connection,
    apps: Vec<(usize, SessionApp)>,
    mut scheduler: Box<dyn Scheduler>,
    epoch: Instant,
    mut stop: watch::Receiver<bool>,
    turns: Arc<Notify>,
) -> Vec<(usize, SentSummary)> {
    let wake = Arc::new(Notify::new());
    let probe = probe::readings_of(connection.congestion_state());
    if let Some(probe) = &probe {
        let wake = wake.clone();
        probe.set_ack_hook(Box::new(move || wake.notify_one()));
    }
    let mut halves: Vec<(usize, Box<dyn SendingHalf<OpenStream>>)> = apps
        .into_iter()
        .filter_map(|(index, app)| appcore::sending_half(app.params).map(|half| (index, half)))
        .collect();
    // The session has started: the simulator's halves start at the handshake, ours here.
    let started = epoch.elapsed();
    for (_, half) in &mut halves {
        half.on_connected(started);
    }
    while !*stop.borrow() && connection.close_reason().is_none() {
        let now = epoch.elapsed();
        scheduler.observe(&transport_view(&connection, probe.as_deref(), now));
        let mut streams = QuinnStreams(&connection);
        for (_, half) in &mut halves {
            half.step(now, scheduler.as_mut(), &mut streams);
        }
        turns.notify_waiters();
        let mut next = now + MAX_STEP_GAP;
        for t in halves
            .iter()
            .filter_map(|(_, h)| h.wakeup())
            .chain(scheduler.wakeup())
        {
            next = next.min(t);
        }
        tokio::select! {
            _ = tokio::time::sleep_until((epoch + next).into()) => {}
            _ = wake.notified() => {}
            changed = stop.changed() => if changed.is_err() {
                break;
            },
        }
    }
    // The scheduler's send window held the bulk to its allowance; the applications have
    // stopped, and what the session still writes (the server's summary, the client's stop) must
    // not wait until the bulk already buffered is acknowledged: with an unlimited bulk through a
    // 4 Mbit/s link the summary missed the client's 5 s wait (serve_get, on CI).
    connection.set_send_window(u64::MAX);
    halves
        .iter()
        .map(|(index, half)| (*index, half.summary()))
        .collect()
}
