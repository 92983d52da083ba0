//! The media application's receiving half in real time: every unidirectional stream the peer
//! opens is one frame, read in order into an [`appcore::media::FrameReader`] (the simulator's
//! checks, the same errors). The sending half is [`appcore::media::MediaSender`] itself.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use appcore::media::{FrameError, FrameReader};
use perfwire::media::FrameRecord;
use quinn::VarInt;

use super::{MAX_FRAME_RECORDS, Shared};

/// Error code with which a receiver stops a frame stream that breaks the format.
const BAD_FRAME: u32 = 0x4246; // "BF"

/// A complete frame, its capture time still on the sender's clock.
#[derive(Debug, Clone, Copy)]
pub(super) struct RawFrame {
    seq: u64,
    /// Capture time on the sender's clock.
    captured_at: Duration,
    /// Last byte read, on this end's clock.
    received_at: Duration,
    bytes: u64,
}

impl RawFrame {
    /// The frame with its capture time on this end's clock (this end's time = the sender's +
    /// `peer_to_mine_ns`; a mapped time before zero is zero).
    pub(super) fn on_my_clock(&self, peer_to_mine_ns: i64) -> FrameRecord {
        let nanos = self.captured_at.as_nanos() as i128 + i128::from(peer_to_mine_ns);
        FrameRecord {
            seq: self.seq,
            captured_at: Duration::from_nanos(nanos.clamp(0, i128::from(u64::MAX)) as u64),
            received_at: self.received_at,
            bytes: self.bytes,
        }
    }
}

/// Frames a media receiver completed.
#[derive(Debug, Default)]
pub(super) struct Frames {
    /// In arrival order, at most [`MAX_FRAME_RECORDS`].
    pub(super) records: Vec<RawFrame>,
    /// All completed frames.
    pub(super) count: u64,
}

/// The receiving half: every unidirectional stream the peer opens is one frame of app
/// `index`.
pub(super) async fn receive(
    connection: quinn::Connection,
    index: usize,
    shared: Arc<Shared>,
    epoch: Instant,
) {
    // Readers end with their streams (at most the peer's stream limit at once) and are
    // aborted with this task.
    let mut readers = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            stream = connection.accept_uni() => match stream {
                Ok(stream) => {
                    readers.spawn(read_frame(stream, index, shared.clone(), epoch));
                }
                Err(_) => break,
            },
            Some(_) = readers.join_next(), if !readers.is_empty() => {}
        }
    }
    while readers.join_next().await.is_some() {}
}

async fn read_frame(
    mut stream: quinn::RecvStream,
    index: usize,
    shared: Arc<Shared>,
    epoch: Instant,
) {
    match frame(&mut stream, epoch).await {
        Ok(Some(raw)) => {
            shared.received[index].fetch_add(raw.bytes, Ordering::Relaxed);
            let mut frames = shared.frames[index].lock().expect("no poisoning");
            frames.count += 1;
            if frames.records.len() < MAX_FRAME_RECORDS {
                frames.records.push(raw);
            }
        }
        Ok(None) => {}
        Err(problem) => {
            let _ = stream.stop(VarInt::from_u32(BAD_FRAME));
            shared.fail(format!("media frame on stream {}: {problem}", stream.id()));
        }
    }
}

/// Reads one frame stream: `Some` when complete, `None` when the sender cancelled it or the
/// connection ended, an error when the bytes are not a frame.
async fn frame(
    stream: &mut quinn::RecvStream,
    epoch: Instant,
) -> Result<Option<RawFrame>, FrameError> {
    let mut reader = FrameReader::default();
    loop {
        match stream.read_chunk(usize::MAX, true).await {
            Ok(Some(chunk)) => reader.on_data(chunk.offset, &chunk.bytes)?,
            Ok(None) => {
                let received_at = epoch.elapsed();
                let header = reader.on_finished()?;
                return Ok(Some(RawFrame {
                    seq: header.seq,
                    captured_at: header.captured_at,
                    received_at,
                    bytes: u64::from(header.size_bytes),
                }));
            }
            // Cancelled by the sender (FRAME_EXPIRED), or the connection is ending.
            Err(_) => return Ok(None),
        }
    }
}
