//! appcore — satquic's applications as sans-IO state machines, written once and driven by
//! both backends: the simulator (`sim`, quinn-proto in virtual time) and the real-time
//! endpoints (`emu`, quinn + tokio).
//!
//! Layer: above `perfwire` (the wire formats), `sched` (how applications share a connection)
//! and `netsim` (only its seeded random stream, so frame sizes match across backends); below
//! `sim` and `emu`, which never depend on each other. No QUIC types, no clock, no I/O.
//!
//! The split is quinn-proto's: the logic of an application (when a frame is captured and how
//! large it is, which frames to cancel, what the scheduler is told and when, what a receiver
//! accepts as a frame) lives here; a backend only carries out what a step asks of its
//! connection. Every sending half is a [`SendingHalf`] (built from its parameters by
//! [`sending_half`]) with one calling protocol:
//!
//! 1. [`on_connected`](SendingHalf::on_connected) once, when the handshake completed (the
//!    real-time endpoints: when the session starts);
//! 2. at every step, after the backend has told the scheduler the transport state
//!    ([`sched::Scheduler::observe`]): [`step`](SendingHalf::step), which opens streams,
//!    writes, finishes, resets and reprioritises them through [`SendStreams`], whose
//!    operations never wait —
//!    quinn-proto's stream calls and quinn's polled once do the same;
//! 3. [`wakeup`](SendingHalf::wakeup): when the half next wants a step without any network
//!    event; [`summary`](SendingHalf::summary): what it did so far.
//!
//! `now` never goes backwards and counts from the backend's epoch (the start of the run, or the
//! end's clock zero in real time). Receiving halves are assemblers: the backend hands them each
//! chunk it reads with its stream offset, and they verify it and say when a frame is complete
//! ([`media::FrameReader`], [`bulk::PatternReader`]).
//!
//! Why stream operations through a trait rather than a list of returned commands: a write may
//! take only part of the bytes and a stream open may fail at the peer's stream limit; the next
//! decision of the step (write the next frame or stop; admit another frame) depends on that
//! answer, and the order of the scheduler calls within a step is part of the behaviour (the
//! simulator's golden summaries pin it). Calls that answer at once keep that order exactly.
//! The same seam makes every half testable without QUIC: the unit tests step them against a
//! recorded connection and scheduler (`mock`).

pub mod bulk;
pub mod media;
#[cfg(test)]
mod mock;

use std::time::Duration;

use bytes::Bytes;
use perfwire::session::{AppParams, SentSummary};
use sched::Scheduler;

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// This many bytes were taken (the chunk was advanced past them); may be fewer than
    /// offered.
    Written(u64),
    /// Nothing was taken: the stream's or the connection's flow control, or the send window, is
    /// full. Room opens when the peer acknowledges data; the backend steps again then.
    Blocked,
    /// The stream is gone (stopped by the peer, or the connection closed): nothing more will be
    /// written on it.
    Closed,
}

/// The stream operations a sending half asks of its connection, carried out at once (none
/// waits). The simulator implements it on quinn-proto's `Connection`; the real-time endpoints
/// on quinn's, polling each future once.
pub trait SendStreams {
    /// A stream this half writes on (quinn-proto: its id; quinn: its send half).
    type Stream;

    /// Opens a unidirectional stream at `priority` (quinn: higher first); `None` when the
    /// peer's stream limit is reached.
    fn open_uni(&mut self, priority: i32) -> Option<Self::Stream>;

    /// Opens a bidirectional stream at `priority`; `None` at the peer's stream limit. Only
    /// its sending direction is used; the backend keeps the receiving one open.
    fn open_bi(&mut self, priority: i32) -> Option<Self::Stream>;

    /// Writes what the transport takes now of `chunk`, advancing it past what was taken.
    fn write(&mut self, stream: &mut Self::Stream, chunk: &mut Bytes) -> WriteOutcome;

    /// Ends the stream after what was written (FIN).
    fn finish(&mut self, stream: &mut Self::Stream);

    /// Abandons the stream with `error_code` (RESET_STREAM): what was not sent never will
    /// be. Whether the reset happened (not if the stream was already gone or reset).
    fn reset(&mut self, stream: &mut Self::Stream, error_code: u32) -> bool;

    /// Changes the priority of an open stream from the next time the transport queues it
    /// (quinn: a retransmission of what it lost, or data written later). Data already queued
    /// keeps its place, and with quinn's `send_fairness` off a stream being sent is finished
    /// first.
    fn set_priority(&mut self, stream: &mut Self::Stream, priority: i32);

    /// Whether the transport has forgotten a finished stream: the peer acknowledged all of it
    /// (or its reset).
    fn is_acknowledged(&mut self, stream: &Self::Stream) -> bool;

    /// Sets the connection's send window (bytes written and not yet acknowledged, all streams).
    fn set_send_window(&mut self, bytes: u64);
}

/// The sending half of an application: a state machine stepped by the backend (see the crate
/// docs for the calling protocol). `S` is the backend's stream handle.
pub trait SendingHalf<S>: Send {
    /// The handshake completed (the real-time endpoints: the session started) at `now`.
    fn on_connected(&mut self, now: Duration);

    /// One step at `now`: everything the half does, through `streams`, telling `scheduler` what
    /// it writes (and the scheduler already told the transport state now).
    fn step(
        &mut self,
        now: Duration,
        scheduler: &mut dyn Scheduler,
        streams: &mut dyn SendStreams<Stream = S>,
    );

    /// When the half next wants a step without any network event, if ever.
    fn wakeup(&self) -> Option<Duration>;

    /// What the half did so far, as the session protocol reports it.
    fn summary(&self) -> SentSummary;
}

/// The sending half of the application `params` describe: the one place that maps an
/// application to its state machine, for both backends. `None` for perf, whose request and
/// response streams each backend still serves with its own perf client and server (the
/// simulator's `sim::apps::perf`, the real-time `emu::perf`).
pub fn sending_half<S: Send + 'static>(params: AppParams) -> Option<Box<dyn SendingHalf<S>>> {
    match params {
        AppParams::Media(params) => Some(Box::new(media::MediaSender::new(params))),
        AppParams::Bulk(params) => Some(Box::new(bulk::BulkSender::new(params))),
        AppParams::Perf(_) => None,
    }
}
