//! The bulk application in real time: the simulator's `sim::apps::bulk` step for step (one
//! bidirectional stream, the scheduler's allowance and send window, pattern bytes), on quinn.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use perfwire::pattern;
use perfwire::session::{BulkParams, SentSummary};
use quinn::VarInt;
use sched::Class;

use super::{Cx, Shared, now_or_never};

/// Largest chunk handed to quinn per write (as the simulator's).
const WRITE_CHUNK_BYTES: u64 = 16 * 1024;

/// A rate-limited source wakes once this much has accumulated (as the simulator's).
const RATE_WAKE_BYTES: u64 = 1200;

/// Error code with which a receiver stops a bulk stream whose bytes are not the pattern.
const BAD_DATA: u32 = 0x4244; // "BD"

/// The sending half.
pub(super) struct BulkSender {
    params: BulkParams,
    started_at: Option<Duration>,
    /// The stream and its receive half (kept open: dropping it would send STOP_SENDING).
    stream: Option<(quinn::SendStream, quinn::RecvStream)>,
    written_bytes: u64,
    last_step: Duration,
}

impl BulkSender {
    pub(super) fn new(params: BulkParams) -> Self {
        Self {
            params,
            started_at: None,
            stream: None,
            written_bytes: 0,
            last_step: Duration::ZERO,
        }
    }

    /// Bytes the source has offered by `now` (`u64::MAX`: unlimited).
    fn offered_bytes(&self, now: Duration) -> u64 {
        match (self.params.rate_bps, self.started_at) {
            (_, None) => 0,
            (None, Some(_)) => u64::MAX,
            (Some(bps), Some(start)) => {
                (u128::from(bps) * now.saturating_sub(start).as_nanos() / 8_000_000_000) as u64
            }
        }
    }

    pub(super) fn wakeup(&self) -> Option<Duration> {
        let Some(start) = self.started_at else {
            return Some(self.params.start);
        };
        // A rate-limited source wakes when another packet's worth has been offered (when it is
        // behind its offer, the next ACK or scheduler update drives it instead).
        let bps = self.params.rate_bps?;
        let due_bytes = self.written_bytes + RATE_WAKE_BYTES;
        let nanos = u128::from(due_bytes) * 8_000_000_000 / u128::from(bps.max(1));
        let due = start + Duration::from_nanos(nanos.min(u128::from(u64::MAX)) as u64);
        (due > self.last_step).then_some(due)
    }

    pub(super) fn summary(&self) -> SentSummary {
        SentSummary {
            written_bytes: self.written_bytes,
            started_at: self.started_at,
            ..SentSummary::default()
        }
    }

    pub(super) fn step(&mut self, cx: &mut Cx<'_>) {
        let now = cx.now;
        self.last_step = now;
        if now < self.params.start {
            return;
        }
        self.started_at.get_or_insert(now);
        if self.stream.is_none() {
            let Some(Ok((send, recv))) = now_or_never(cx.connection.open_bi()) else {
                return;
            };
            let _ = send.set_priority(cx.scheduler.priority(Class::Bulk));
            self.stream = Some((send, recv));
        }
        if let Some(windows) = cx.scheduler.send_window() {
            cx.connection.set_send_window(windows.bulk_bytes);
        }
        let mut budget = self
            .offered_bytes(now)
            .saturating_sub(self.written_bytes)
            .min(cx.scheduler.bulk_allowance(now));
        let Some((stream, _)) = &mut self.stream else {
            return;
        };
        let mut written_now = 0;
        while budget > 0 {
            let len = budget.min(WRITE_CHUNK_BYTES) as usize;
            let mut chunks = [pattern::chunk(self.written_bytes, len)];
            match now_or_never(stream.write_chunks(&mut chunks)) {
                Some(Ok(written)) if written.bytes > 0 => {
                    let n = written.bytes as u64;
                    self.written_bytes += n;
                    written_now += n;
                    budget -= n;
                }
                _ => break,
            }
        }
        if written_now > 0 {
            cx.scheduler.on_written(now, Class::Bulk, written_now);
        }
    }
}

/// The receiving halves: each bidirectional stream the peer opens goes to the next of `apps`
/// (application indices) without one; further streams are refused.
pub(super) async fn receive(connection: quinn::Connection, apps: Vec<usize>, shared: Arc<Shared>) {
    let mut readers = tokio::task::JoinSet::new();
    let mut next = apps.into_iter();
    loop {
        tokio::select! {
            stream = connection.accept_bi() => match stream {
                Ok((send, recv)) => {
                    // The reverse half stays silent (finished when dropped).
                    match next.next() {
                        Some(index) => {
                            readers.spawn(read_bulk(send, recv, index, shared.clone()));
                        }
                        None => {
                            let mut recv = recv;
                            let _ = recv.stop(VarInt::from_u32(BAD_DATA));
                            shared.fail("the peer opened more bulk streams than the session has".into());
                        }
                    }
                }
                Err(_) => break,
            },
            Some(_) = readers.join_next(), if !readers.is_empty() => {}
        }
    }
    while readers.join_next().await.is_some() {}
}

async fn read_bulk(
    _send: quinn::SendStream,
    mut recv: quinn::RecvStream,
    index: usize,
    shared: Arc<Shared>,
) {
    while let Ok(Some(chunk)) = recv.read_chunk(usize::MAX, true).await {
        if !pattern::matches(chunk.offset, &chunk.bytes) {
            let _ = recv.stop(VarInt::from_u32(BAD_DATA));
            shared.fail(format!(
                "bulk stream {}: data mismatch at offset {} ({} bytes)",
                recv.id(),
                chunk.offset,
                chunk.bytes.len()
            ));
            return;
        }
        shared.received[index].store(chunk.offset + chunk.bytes.len() as u64, Ordering::Relaxed);
    }
}
