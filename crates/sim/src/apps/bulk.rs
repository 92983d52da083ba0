//! The bulk application: one long stream of offered load — unlimited (a file that is always
//! ready) or at a fixed rate — sharing its connection with other applications (media, in
//! \[Ruehl2024\]'s experiments). It writes only what the flow's scheduler allows, at the
//! scheduler's priority for [`Class::Bulk`].
//!
//! The sender opens a bidirectional stream (unidirectional ones belong to the media
//! application on the same connection: the driver routes peer streams by direction) and
//! writes [`perfwire::pattern`] bytes; the receiver reads in any order and verifies every byte
//! by offset.

use std::time::Duration;

use quinn_proto::{Dir, StreamId, WriteError};
use sched::Class;

use super::perf::VerifyingReader;
use crate::app::{App, AppError, AppSpec, Context, Role};

/// [`AppSpec::kind`] of the bulk application.
pub const KIND: &str = "bulk";

/// Largest chunk handed to quinn per write.
const WRITE_CHUNK_BYTES: u64 = 16 * 1024;

/// A rate-limited source wakes once this much has accumulated (not for every byte).
const RATE_WAKE_BYTES: u64 = 1200;

/// What the bulk application offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkSpec {
    /// Offered load, bit/s; `None` is unlimited (always data to send).
    pub rate_bps: Option<u64>,
    /// When the source starts offering, since the start of the run (it waits for the
    /// handshake if that is later).
    pub start: Duration,
    /// The end that sends.
    pub sender: Role,
}

impl AppSpec for BulkSpec {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn data_sender(&self) -> Role {
        self.sender
    }

    fn build(&self) -> (Box<dyn App>, Box<dyn App>) {
        let sender: Box<dyn App> = Box::new(BulkSender {
            spec: self.clone(),
            connected: false,
            started_at: None,
            stream: None,
            written_bytes: 0,
            last_drive: Duration::ZERO,
        });
        let receiver: Box<dyn App> = Box::new(BulkReceiver::default());
        match self.sender {
            Role::Server => (receiver, sender),
            Role::Client => (sender, receiver),
        }
    }
}

/// The sending half.
#[derive(Debug)]
struct BulkSender {
    spec: BulkSpec,
    connected: bool,
    started_at: Option<Duration>,
    stream: Option<StreamId>,
    written_bytes: u64,
    /// When it last ran.
    last_drive: Duration,
}

impl BulkSender {
    /// Bytes the source has offered by `now` (`u64::MAX`: unlimited).
    fn offered_bytes(&self, now: Duration) -> u64 {
        match (self.spec.rate_bps, self.started_at) {
            (_, None) => 0,
            (None, Some(_)) => u64::MAX,
            (Some(bps), Some(start)) => {
                (u128::from(bps) * (now - start).as_nanos() / 8_000_000_000) as u64
            }
        }
    }
}

impl App for BulkSender {
    fn on_connected(&mut self, _now: Duration) {
        self.connected = true;
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Result<bool, AppError> {
        let now = cx.now;
        self.last_drive = now;
        if !self.connected || now < self.spec.start {
            return Ok(false);
        }
        self.started_at.get_or_insert(now);
        let id = match self.stream {
            Some(id) => id,
            None => {
                let Some(id) = cx.connection.streams().open(Dir::Bi) else {
                    return Ok(false);
                };
                let _ = cx
                    .connection
                    .send_stream(id)
                    .set_priority(cx.scheduler.priority(Class::Bulk));
                self.stream = Some(id);
                id
            }
        };
        if let Some(windows) = cx.scheduler.send_window() {
            cx.connection.set_send_window(windows.bulk_bytes);
        }
        let mut budget = self
            .offered_bytes(now)
            .saturating_sub(self.written_bytes)
            .min(cx.scheduler.bulk_allowance(now));
        let mut stream = cx.connection.send_stream(id);
        let mut written_now = 0;
        while budget > 0 {
            let len = budget.min(WRITE_CHUNK_BYTES) as usize;
            let mut chunks = [perfwire::pattern::chunk(self.written_bytes, len)];
            match stream.write_chunks(&mut chunks) {
                Ok(written) if written.bytes > 0 => {
                    let n = written.bytes as u64;
                    self.written_bytes += n;
                    written_now += n;
                    budget -= n;
                }
                Ok(_) | Err(WriteError::Blocked) => break,
                Err(_) => break,
            }
        }
        if written_now > 0 {
            cx.scheduler.on_written(now, Class::Bulk, written_now);
        }
        Ok(false)
    }

    fn wakeup(&self) -> Option<Duration> {
        if !self.connected {
            return None;
        }
        let Some(start) = self.started_at else {
            return Some(self.spec.start);
        };
        // A rate-limited source wakes when another packet's worth has been offered. When it is
        // behind its offer (held back by the scheduler or the transport), that moment has
        // passed: the next network event or scheduler update drives it instead.
        let bps = self.spec.rate_bps?;
        let due_bytes = self.written_bytes + RATE_WAKE_BYTES;
        let nanos = u128::from(due_bytes) * 8_000_000_000 / u128::from(bps.max(1));
        let due = start + Duration::from_nanos(nanos.min(u128::from(u64::MAX)) as u64);
        (due > self.last_drive).then_some(due)
    }

    fn received_bytes(&self) -> u64 {
        0
    }

    fn busy_periods(&self) -> Vec<(Duration, Option<Duration>)> {
        self.started_at.map(|s| (s, None)).into_iter().collect()
    }

    fn report(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut report = serde_json::Map::new();
        report.insert("written_bytes".into(), self.written_bytes.into());
        report.insert(
            "offered_bps".into(),
            self.spec
                .rate_bps
                .map_or(serde_json::Value::Null, Into::into),
        );
        report
    }
}

/// The receiving half: reads the one bulk stream, verifies it.
#[derive(Debug, Default)]
struct BulkReceiver {
    stream: Option<StreamId>,
    reader: VerifyingReader,
}

impl App for BulkReceiver {
    fn accepts(&self, dir: Dir) -> bool {
        dir == Dir::Bi && self.stream.is_none()
    }

    fn adopt_stream(&mut self, id: StreamId, _now: Duration) {
        self.stream = Some(id);
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Result<bool, AppError> {
        if let Some(id) = self.stream {
            self.reader.read(cx.connection, id)?;
        }
        Ok(false)
    }

    fn received_bytes(&self) -> u64 {
        self.reader.prefix()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_limited_source_offers_rate_times_time() {
        let mut sender = BulkSender {
            spec: BulkSpec {
                rate_bps: Some(2_000_000),
                start: Duration::from_secs(10),
                sender: Role::Server,
            },
            connected: true,
            started_at: Some(Duration::from_secs(10)),
            stream: None,
            written_bytes: 0,
            last_drive: Duration::from_secs(10),
        };
        // 2 Mbit/s for 1.5 s = 375 000 bytes.
        assert_eq!(sender.offered_bytes(Duration::from_millis(11_500)), 375_000);
        // Next wake-up once 1200 more bytes are offered: 4.8 ms at 2 Mbit/s.
        assert_eq!(sender.wakeup(), Some(Duration::from_micros(10_004_800)));
        sender.written_bytes = 375_000;
        sender.last_drive = Duration::from_millis(11_500);
        assert_eq!(
            sender.wakeup(),
            Some(Duration::from_millis(11_500) + Duration::from_micros(4_800))
        );
        // Behind the offer: no wake-up of its own in the past.
        sender.last_drive = Duration::from_secs(12);
        assert_eq!(sender.wakeup(), None);
        sender.spec.rate_bps = None;
        assert_eq!(sender.offered_bytes(Duration::from_secs(11)), u64::MAX);
        assert_eq!(sender.wakeup(), None);
    }
}
