//! The applications the simulator ships; see [`crate::app`] for how to add one.
//!
//! Media and bulk are [`appcore`]'s state machines, shared with the real-time endpoints: their
//! modules here only hand them the connection ([`ConnectionStreams`]) and the stream data the
//! driver reads, and turn what they measured into reports.

pub mod bulk;
pub mod media;
pub mod perf;

use appcore::{SendStreams, WriteOutcome};
use bytes::Bytes;
use quinn_proto::{Connection, Dir, StreamId, WriteError};

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

    fn is_acknowledged(&mut self, stream: &StreamId) -> bool {
        // quinn-proto forgets a send stream once all of it is acknowledged.
        self.0.send_stream(*stream).priority().is_err()
    }

    fn set_send_window(&mut self, bytes: u64) {
        self.0.set_send_window(bytes);
    }
}
