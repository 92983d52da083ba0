//! The applications the simulator ships; see [`crate::app`] for how to add one.
//!
//! Media and bulk are [`appcore`]'s state machines, shared with the real-time endpoints: their
//! modules here only hand them the connection (`ConnectionStreams`) and the stream data the
//! driver reads, and turn what they measured into reports.

pub mod bulk;
pub mod media;
pub mod perf;

use std::time::Duration;

use appcore::{SendStreams, SendingHalf, WriteOutcome};
use bytes::Bytes;
use perfwire::session::SentSummary;
use quinn_proto::{Connection, Dir, StreamId, WriteError};

use crate::app::{App, AppError, Context};

/// What a sending half reports, from what it did.
type SenderReport = Box<dyn Fn(&SentSummary) -> serde_json::Map<String, serde_json::Value>>;

/// Width of the buckets in which a sending half's written bytes are counted over time (its
/// report's [`WRITTEN_SERIES_KEY`]): RFC 8868 evaluates sending rates at 200 ms, two buckets.
pub const WRITTEN_BUCKET: Duration = Duration::from_millis(100);

/// The key of a sending half's report that holds the bytes it handed to the transport in each
/// [`WRITTEN_BUCKET`] since the start of the run (bucket `i` covers `[i, i + 1)` × the width).
pub const WRITTEN_SERIES_KEY: &str = "written_bytes_per_100ms";

/// An [`appcore`] sending half as the driver runs it: stepped on quinn-proto's connection
/// ([`ConnectionStreams`]), busy from its start, reporting through its application's `report`
/// (plus, under [`WRITTEN_SERIES_KEY`], what it wrote over time: the application's sending
/// rate, which its receiver cannot see).
pub(crate) struct Sending {
    half: Box<dyn SendingHalf<StreamId>>,
    report: SenderReport,
    /// Bytes written in each [`WRITTEN_BUCKET`] of the run.
    written_per_bucket: Vec<u64>,
    /// The half's written bytes at the end of the last step.
    written_bytes: u64,
}

impl Sending {
    /// `half`, reporting with `report`.
    pub(crate) fn new(
        half: Box<dyn SendingHalf<StreamId>>,
        report: impl Fn(&SentSummary) -> serde_json::Map<String, serde_json::Value> + 'static,
    ) -> Sending {
        Sending {
            half,
            report: Box::new(report),
            written_per_bucket: Vec::new(),
            written_bytes: 0,
        }
    }
}

impl App for Sending {
    fn on_connected(&mut self, now: Duration) {
        self.half.on_connected(now);
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Result<bool, AppError> {
        let mut streams = ConnectionStreams(&mut *cx.connection);
        self.half.step(cx.now, &mut *cx.scheduler, &mut streams);
        let written_bytes = self.half.summary().written_bytes;
        if written_bytes > self.written_bytes {
            let bucket = (cx.now.as_nanos() / WRITTEN_BUCKET.as_nanos()) as usize;
            if self.written_per_bucket.len() <= bucket {
                self.written_per_bucket.resize(bucket + 1, 0);
            }
            self.written_per_bucket[bucket] += written_bytes - self.written_bytes;
            self.written_bytes = written_bytes;
        }
        Ok(false)
    }

    fn wakeup(&self) -> Option<Duration> {
        self.half.wakeup()
    }

    fn received_bytes(&self) -> u64 {
        0
    }

    fn busy_periods(&self) -> Vec<(Duration, Option<Duration>)> {
        let started_at = self.half.summary().started_at;
        started_at.map(|s| (s, None)).into_iter().collect()
    }

    fn report(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut report = (self.report)(&self.half.summary());
        report.insert(
            WRITTEN_SERIES_KEY.into(),
            serde_json::json!(self.written_per_bucket),
        );
        report
    }
}

/// quinn-proto's connection as [`appcore`]'s sending halves use it: streams by id, every
/// operation answered at once.
pub(crate) struct ConnectionStreams<'a>(pub(crate) &'a mut Connection);

impl ConnectionStreams<'_> {
    fn open(&mut self, dir: Dir, priority: i32) -> Option<StreamId> {
        let id = self.0.streams().open(dir)?;
        let _ = self.0.send_stream(id).set_priority(priority);
        Some(id)
    }
}

impl SendStreams for ConnectionStreams<'_> {
    type Stream = StreamId;

    fn open_uni(&mut self, priority: i32) -> Option<StreamId> {
        self.open(Dir::Uni, priority)
    }

    fn open_bi(&mut self, priority: i32) -> Option<StreamId> {
        self.open(Dir::Bi, priority)
    }

    fn write(&mut self, stream: &mut StreamId, chunk: &mut Bytes) -> WriteOutcome {
        match self
            .0
            .send_stream(*stream)
            .write_chunks(std::slice::from_mut(chunk))
        {
            Ok(written) => WriteOutcome::Written(written.bytes as u64),
            Err(WriteError::Blocked) => WriteOutcome::Blocked,
            Err(_) => WriteOutcome::Closed,
        }
    }

    fn finish(&mut self, stream: &mut StreamId) {
        let _ = self.0.send_stream(*stream).finish();
    }

    fn reset(&mut self, stream: &mut StreamId, error_code: u32) -> bool {
        self.0
            .send_stream(*stream)
            .reset(quinn_proto::VarInt::from_u32(error_code))
            .is_ok()
    }

    fn set_priority(&mut self, stream: &mut StreamId, priority: i32) {
        // A stream quinn-proto already forgot has nothing left to send.
        let _ = self.0.send_stream(*stream).set_priority(priority);
    }

    fn is_acknowledged(&mut self, stream: &StreamId) -> bool {
        // quinn-proto forgets a send stream once all of it is acknowledged.
        self.0.send_stream(*stream).priority().is_err()
    }

    fn set_send_window(&mut self, bytes: u64) {
        self.0.set_send_window(bytes);
    }
}
