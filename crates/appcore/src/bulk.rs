//! The bulk application: one long stream of offered load — unlimited (a file that is always
//! ready) or at a fixed rate — sharing its connection with other applications (media, in
//! \[Ruehl2024\]'s experiments). It writes only what the flow's scheduler allows
//! ([`Scheduler::bulk_allowance`], the bulk send window), at the scheduler's priority for
//! [`Class::Bulk`].
//!
//! The sender opens a bidirectional stream (unidirectional ones belong to the media
//! application on the same connection: both backends route peer streams by direction) and
//! writes [`perfwire::pattern`] bytes; the receiver ([`PatternReader`]) takes them in any order
//! and verifies every byte by its offset.

use std::time::Duration;

use perfwire::session::{BulkParams, SentSummary};
use perfwire::{ReceivedRanges, pattern};
use sched::{Class, Scheduler};

use crate::{SendStreams, SendingHalf, WriteOutcome};

/// Largest chunk handed to the transport per write.
pub const WRITE_CHUNK_BYTES: u64 = 16 * 1024;

/// A rate-limited source wakes once this much has accumulated (not for every byte).
pub const RATE_WAKE_BYTES: u64 = 1200;

/// The sending half. `S` is the backend's stream handle ([`SendStreams::Stream`]).
#[derive(Debug)]
pub struct BulkSender<S> {
    params: BulkParams,
    connected: bool,
    started_at: Option<Duration>,
    stream: Option<S>,
    written_bytes: u64,
    /// When it last stepped.
    last_step: Duration,
}

impl<S> BulkSender<S> {
    /// A source that starts offering at `params.start` (or at the handshake, if later).
    pub fn new(params: BulkParams) -> Self {
        Self {
            params,
            connected: false,
            started_at: None,
            stream: None,
            written_bytes: 0,
            last_step: Duration::ZERO,
        }
    }

    /// Bytes the source has offered by `now` (`u64::MAX`: unlimited).
    pub fn offered_bytes(&self, now: Duration) -> u64 {
        match (self.params.rate_bps, self.started_at) {
            (_, None) => 0,
            (None, Some(_)) => u64::MAX,
            (Some(bps), Some(start)) => {
                (u128::from(bps) * now.saturating_sub(start).as_nanos() / 8_000_000_000) as u64
            }
        }
    }
}

impl<S: Send> SendingHalf<S> for BulkSender<S> {
    /// The handshake completed (the real-time endpoints: the session started).
    fn on_connected(&mut self, _now: Duration) {
        self.connected = true;
    }

    /// When the sender next wants a step without any network event: its start, then (a
    /// rate-limited source) when another packet's worth has been offered.
    fn wakeup(&self) -> Option<Duration> {
        if !self.connected {
            return None;
        }
        let Some(start) = self.started_at else {
            return Some(self.params.start);
        };
        // When it is behind its offer (held back by the scheduler or the transport), that
        // moment has passed: the next network event or scheduler update drives it instead.
        let bps = self.params.rate_bps?;
        let due_bytes = self.written_bytes + RATE_WAKE_BYTES;
        let nanos = u128::from(due_bytes) * 8_000_000_000 / u128::from(bps.max(1));
        let due = start + Duration::from_nanos(nanos.min(u128::from(u64::MAX)) as u64);
        (due > self.last_step).then_some(due)
    }

    /// One step at `now`: start, open the stream, apply the bulk send window, write what both
    /// the offer and the scheduler's allowance leave.
    fn step(
        &mut self,
        now: Duration,
        scheduler: &mut dyn Scheduler,
        streams: &mut dyn SendStreams<Stream = S>,
    ) {
        self.last_step = now;
        if !self.connected || now < self.params.start {
            return;
        }
        self.started_at.get_or_insert(now);
        if self.stream.is_none() {
            let Some(stream) = streams.open_bi(scheduler.priority(Class::Bulk)) else {
                return;
            };
            self.stream = Some(stream);
        }
        if let Some(windows) = scheduler.send_window() {
            streams.set_send_window(windows.bulk_bytes);
        }
        let mut budget = self
            .offered_bytes(now)
            .saturating_sub(self.written_bytes)
            .min(scheduler.bulk_allowance(now));
        let Some(stream) = &mut self.stream else {
            return;
        };
        let mut written_now = 0;
        while budget > 0 {
            let len = budget.min(WRITE_CHUNK_BYTES) as usize;
            let mut chunk = pattern::chunk(self.written_bytes, len);
            match streams.write(stream, &mut chunk) {
                WriteOutcome::Written(n) if n > 0 => {
                    self.written_bytes += n;
                    written_now += n;
                    budget -= n;
                }
                _ => break,
            }
        }
        if written_now > 0 {
            scheduler.on_written(now, Class::Bulk, written_now);
        }
    }

    /// What the sender did so far.
    fn summary(&self) -> SentSummary {
        SentSummary {
            written_bytes: self.written_bytes,
            started_at: self.started_at,
            ..SentSummary::default()
        }
    }
}

/// Bytes on a pattern stream that are not the pattern at their offset (never acceptable: a bug
/// in the stack or the sender).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("data mismatch at offset {offset} ({len} bytes)")]
pub struct PatternMismatch {
    /// Stream offset of the bad chunk.
    pub offset: u64,
    /// Its length.
    pub len: usize,
}

/// The receiving half of a pattern stream: chunks in any order, each verified; the in-order
/// prefix is what the application has received.
#[derive(Debug, Default)]
pub struct PatternReader {
    ranges: ReceivedRanges,
}

impl PatternReader {
    /// `data` arrived at stream `offset`.
    pub fn on_data(&mut self, offset: u64, data: &[u8]) -> Result<(), PatternMismatch> {
        if !pattern::matches(offset, data) {
            return Err(PatternMismatch {
                offset,
                len: data.len(),
            });
        }
        self.ranges.insert(offset, offset + data.len() as u64);
        Ok(())
    }

    /// Bytes received in order from offset 0.
    pub fn received_bytes(&self) -> u64 {
        self.ranges.prefix()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::{MockStreams, RecordingScheduler};

    #[test]
    fn bulk_writes_what_both_the_offer_and_the_scheduler_allow() {
        let mut streams = MockStreams {
            room: u64::MAX,
            ..MockStreams::default()
        };
        let mut scheduler = RecordingScheduler {
            bulk_allowance: Some(10_000),
            ..RecordingScheduler::default()
        };
        let mut unlimited = BulkSender::new(BulkParams {
            rate_bps: None,
            start: Duration::ZERO,
        });
        unlimited.step(Duration::ZERO, &mut scheduler, &mut streams);
        assert_eq!(streams.opened, 0, "nothing before the handshake");
        unlimited.on_connected(Duration::ZERO);
        unlimited.step(Duration::ZERO, &mut scheduler, &mut streams);
        assert_eq!(streams.written[0].len(), 10_000);
        assert!(pattern::matches(0, &streams.written[0]));
        assert_eq!(scheduler.written, 10_000);
        // 8 Mbit/s from 1 s: 10 000 bytes offered 10 ms later.
        let mut paced = BulkSender::new(BulkParams {
            rate_bps: Some(8_000_000),
            start: Duration::from_secs(1),
        });
        scheduler.bulk_allowance = None;
        paced.on_connected(Duration::ZERO);
        assert_eq!(paced.wakeup(), Some(Duration::from_secs(1)));
        paced.step(Duration::from_secs(1), &mut scheduler, &mut streams);
        paced.step(Duration::from_millis(1010), &mut scheduler, &mut streams);
        assert_eq!(streams.written[1].len(), 10_000);
        assert!(pattern::matches(0, &streams.written[1]));
    }

    #[test]
    fn a_rate_limited_source_offers_rate_times_time() {
        let mut sender = BulkSender::<()> {
            params: BulkParams {
                rate_bps: Some(2_000_000),
                start: Duration::from_secs(10),
            },
            connected: true,
            started_at: Some(Duration::from_secs(10)),
            stream: None,
            written_bytes: 0,
            last_step: Duration::from_secs(10),
        };
        // 2 Mbit/s for 1.5 s = 375 000 bytes.
        assert_eq!(sender.offered_bytes(Duration::from_millis(11_500)), 375_000);
        // Next wake-up once 1200 more bytes are offered: 4.8 ms at 2 Mbit/s.
        assert_eq!(sender.wakeup(), Some(Duration::from_micros(10_004_800)));
        sender.written_bytes = 375_000;
        sender.last_step = Duration::from_millis(11_500);
        assert_eq!(
            sender.wakeup(),
            Some(Duration::from_millis(11_500) + Duration::from_micros(4_800))
        );
        // Behind the offer: no wake-up of its own in the past.
        sender.last_step = Duration::from_secs(12);
        assert_eq!(sender.wakeup(), None);
        sender.params.rate_bps = None;
        assert_eq!(sender.offered_bytes(Duration::from_secs(11)), u64::MAX);
        assert_eq!(sender.wakeup(), None);
    }

    #[test]
    fn a_pattern_reader_counts_the_in_order_prefix_and_rejects_other_bytes() {
        let mut reader = PatternReader::default();
        reader.on_data(100, &pattern::chunk(100, 50)).unwrap();
        assert_eq!(reader.received_bytes(), 0);
        reader.on_data(0, &pattern::chunk(0, 100)).unwrap();
        assert_eq!(reader.received_bytes(), 150);
        let wrong = [!pattern::chunk(150, 1)[0]];
        assert_eq!(
            reader.on_data(150, &wrong),
            Err(PatternMismatch {
                offset: 150,
                len: 1
            })
        );
    }
}
