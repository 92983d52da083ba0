//! A connection and a scheduler for the state machines' unit tests: streams by number, a fixed
//! amount of room per step, every call recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use bytes::Bytes;
use sched::{Class, Scheduler, TransportView};

use crate::{SendStreams, WriteOutcome};

/// Streams numbered from 0 in the order opened.
#[derive(Debug, Default)]
pub(crate) struct MockStreams {
    /// Bytes the transport still takes (then `Blocked`).
    pub(crate) room: u64,
    /// Streams the peer allows to be opened in all (`None`: any number).
    pub(crate) stream_limit: Option<u32>,
    /// Streams opened so far.
    pub(crate) opened: u32,
    /// Per stream: the bytes written, in order.
    pub(crate) written: Vec<Vec<u8>>,
    pub(crate) finished: BTreeSet<u32>,
    pub(crate) reset: BTreeSet<u32>,
    /// Streams the peer has acknowledged completely.
    pub(crate) acked: BTreeSet<u32>,
    pub(crate) send_window: Option<u64>,
    /// Per stream: the priority it was opened at.
    pub(crate) opened_at_priority: BTreeMap<u32, i32>,
    /// Every priority change after opening, in order: (stream, priority).
    pub(crate) priority_changes: Vec<(u32, i32)>,
}

impl SendStreams for MockStreams {
    type Stream = u32;

    fn open_uni(&mut self, priority: i32) -> Option<u32> {
        if self.stream_limit.is_some_and(|limit| self.opened >= limit) {
            return None;
        }
        self.opened_at_priority.insert(self.opened, priority);
        self.opened += 1;
        self.written.push(Vec::new());
        Some(self.opened - 1)
    }

    fn open_bi(&mut self, priority: i32) -> Option<u32> {
        self.open_uni(priority)
    }

    fn write(&mut self, stream: &mut u32, chunk: &mut Bytes) -> WriteOutcome {
        if self.reset.contains(stream) {
            return WriteOutcome::Closed;
        }
        let n = self.room.min(chunk.len() as u64);
        if n == 0 {
            return WriteOutcome::Blocked;
        }
        self.room -= n;
        let taken = chunk.split_to(n as usize);
        self.written[*stream as usize].extend_from_slice(&taken);
        WriteOutcome::Written(n)
    }

    fn finish(&mut self, stream: &mut u32) {
        self.finished.insert(*stream);
    }

    fn reset(&mut self, stream: &mut u32, _error_code: u32) -> bool {
        self.reset.insert(*stream)
    }

    fn set_priority(&mut self, stream: &mut u32, priority: i32) {
        self.priority_changes.push((*stream, priority));
    }

    fn is_acknowledged(&mut self, stream: &u32) -> bool {
        self.acked.contains(stream)
    }

    fn set_send_window(&mut self, bytes: u64) {
        self.send_window = Some(bytes);
    }
}

/// A scheduler that records what it is told: no limits, frames expire `expiry` before their
/// deadline if set, frames no larger than `frame_limit` if set.
#[derive(Debug, Default)]
pub(crate) struct RecordingScheduler {
    pub(crate) expiry: Option<Duration>,
    pub(crate) frame_limit: Option<u64>,
    pub(crate) late_priority: Option<i32>,
    pub(crate) bulk_allowance: Option<u64>,
    pub(crate) frames: u64,
    pub(crate) written: u64,
    pub(crate) acked: u64,
}

impl Scheduler for RecordingScheduler {
    fn name(&self) -> &'static str {
        "recording"
    }

    fn observe(&mut self, _view: &TransportView) {}

    fn priority(&self, _class: Class) -> i32 {
        0
    }

    fn on_frame(&mut self, _now: Duration, _bytes: u64) {
        self.frames += 1;
    }

    fn on_written(&mut self, _now: Duration, _class: Class, bytes: u64) {
        self.written += bytes;
    }

    fn on_acked(&mut self, _now: Duration, _class: Class, bytes: u64) {
        self.acked += bytes;
    }

    fn bulk_allowance(&mut self, _now: Duration) -> u64 {
        self.bulk_allowance.unwrap_or(u64::MAX)
    }

    fn frame_expiry(&self) -> Option<Duration> {
        self.expiry
    }

    fn late_frame_priority(&self) -> Option<i32> {
        self.late_priority
    }

    fn media_frame_limit_bytes(&self, _deadline: Duration) -> Option<u64> {
        self.frame_limit
    }
}
