//! The media application in real time: the simulator's `sim::apps::media` step for step
//! (capture on time, cancel what cannot arrive, one unidirectional stream per frame, oldest
//! first), on quinn.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use netsim::Uniform;
use perfwire::media::{FRAME_EXPIRED, FRAME_HEADER_BYTES, FrameHeader, FrameRecord, VideoModel};
use perfwire::pattern;
use perfwire::session::{MediaParams, SentSummary};
use quinn::VarInt;
use sched::Class;

use super::{Cx, MAX_FRAME_RECORDS, Shared, now_or_never};

/// Largest chunk handed to quinn per write (as the simulator's).
const WRITE_CHUNK_BYTES: usize = 32 * 1024;

/// The lowest rate an adaptive source goes down to, as a share of its nominal rate (as the
/// simulator's `MIN_BITRATE_SHARE`).
const MIN_BITRATE_SHARE: f64 = 0.1;

/// Error code with which a receiver stops a frame stream that breaks the format.
const BAD_FRAME: u32 = 0x4246; // "BF"

/// A frame on its stream, from its first write until the peer acknowledged all of it.
struct FrameWriter {
    stream: quinn::SendStream,
    captured_at: Duration,
    bytes: u64,
    header: Option<Bytes>,
    offset: u64,
    payload_bytes: u64,
    /// Written completely and finished (or reset); waiting for acknowledgement.
    finished: bool,
}

impl Drop for FrameWriter {
    /// A frame not completely written when the sender stops is cancelled: quinn would finish
    /// the stream on drop, and a frame cut short is not a frame.
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.stream.reset(VarInt::from_u32(FRAME_EXPIRED));
        }
    }
}

/// The sending half.
pub(super) struct MediaSender {
    params: MediaParams,
    model: VideoModel,
    rng: Uniform,
    started_at: Option<Duration>,
    next_seq: u64,
    /// Frames captured but not yet given a stream: (seq, capture, size).
    waiting: std::collections::VecDeque<(u64, Duration, u64)>,
    writing: Vec<FrameWriter>,
    cancelled_frames: u64,
    bitrate_bps: u64,
    bitrate_sum: f64,
    written_bytes: u64,
}

impl MediaSender {
    pub(super) fn new(params: MediaParams) -> Self {
        Self {
            model: params.video_model(),
            // The simulator's random stream for the same seed: the same frame sizes.
            rng: Uniform::new(params.seed, 0),
            bitrate_bps: params.bitrate_bps,
            params,
            started_at: None,
            next_seq: 0,
            waiting: Default::default(),
            writing: Vec::new(),
            cancelled_frames: 0,
            bitrate_sum: 0.0,
            written_bytes: 0,
        }
    }

    /// The source starts: frame 0 is captured at `now`.
    pub(super) fn start(&mut self, now: Duration) {
        self.started_at.get_or_insert(now);
    }

    fn capture_time(&self, seq: u64) -> Option<Duration> {
        Some(self.started_at? + self.model.capture_offset(seq))
    }

    /// Opens streams for waiting frames the scheduler admits (and drops those it refuses);
    /// `just_in_time`: only while no frame is still being written.
    fn open_frames(
        &mut self,
        conn: &quinn::Connection,
        scheduler: &mut dyn sched::Scheduler,
        now: Duration,
        just_in_time: bool,
    ) {
        while let Some(&(seq, at, size)) = self.waiting.front() {
            if just_in_time && self.writing.iter().any(|f| !f.finished) {
                break;
            }
            if !scheduler.admit_frame(now.saturating_sub(at), size, self.params.deadline) {
                // It could not arrive in time: drop it at the source.
                self.waiting.pop_front();
                self.cancelled_frames += 1;
                continue;
            }
            let Some(Ok(stream)) = now_or_never(conn.open_uni()) else {
                break;
            };
            let _ = stream.set_priority(scheduler.priority(Class::Media));
            self.waiting.pop_front();
            let header = FrameHeader {
                seq,
                captured_at: at,
                size_bytes: size as u32,
            }
            .encode();
            self.writing.push(FrameWriter {
                stream,
                captured_at: at,
                bytes: size,
                header: Some(Bytes::copy_from_slice(&header)),
                offset: 0,
                payload_bytes: size - FRAME_HEADER_BYTES,
                finished: false,
            });
        }
    }

    pub(super) fn wakeup(&self) -> Option<Duration> {
        self.capture_time(self.next_seq)
    }

    pub(super) fn summary(&self) -> SentSummary {
        SentSummary {
            frames_sent: self.next_seq,
            cancelled_frames: self.cancelled_frames,
            written_bytes: self.written_bytes,
            mean_bitrate_bps: if self.next_seq == 0 {
                0
            } else {
                (self.bitrate_sum / self.next_seq as f64).round() as u64
            },
            started_at: self.started_at,
        }
    }

    pub(super) fn step(&mut self, cx: &mut Cx<'_>) {
        let now = cx.now;
        let scheduler = &mut *cx.scheduler;
        let conn = cx.connection;
        if self.params.adaptive
            && let Some(target) = scheduler.media_target_bps()
        {
            let floor = (self.params.bitrate_bps as f64 * MIN_BITRATE_SHARE) as u64;
            self.bitrate_bps = target.clamp(floor.max(1), self.params.bitrate_bps);
        }
        while let Some(at) = self.capture_time(self.next_seq)
            && at <= now
        {
            let size = self
                .model
                .frame_bytes(self.next_seq, self.bitrate_bps, self.rng.next_f64());
            self.bitrate_sum += self.bitrate_bps as f64;
            scheduler.on_frame(at, size);
            self.waiting.push_back((self.next_seq, at, size));
            self.next_seq += 1;
        }
        // Frames that can no longer make their deadline are cancelled, if the scheduler says
        // so: whatever was not sent is never sent.
        if let Some(margin) = scheduler.frame_expiry() {
            let expiry = self.params.deadline.saturating_sub(margin);
            let expired = |captured_at: Duration| now.saturating_sub(captured_at) > expiry;
            let before = self.waiting.len();
            self.waiting.retain(|&(_, at, _)| !expired(at));
            self.cancelled_frames += (before - self.waiting.len()) as u64;
            // Only frames not yet completely written: one that is may arrive in time.
            for frame in self.writing.iter_mut().filter(|f| !f.finished) {
                if expired(frame.captured_at)
                    && frame.stream.reset(VarInt::from_u32(FRAME_EXPIRED)).is_ok()
                {
                    self.cancelled_frames += 1;
                    frame.payload_bytes = 0;
                    frame.finished = true;
                    frame.bytes = 0;
                }
            }
        }
        // Frames the peer has acknowledged completely: quinn forgets a finished stream then
        // (what `SendStream::stopped` reports as `Ok(None)`).
        self.writing.retain(|frame| {
            let acked = frame.finished && frame.stream.priority().is_err();
            if acked && frame.bytes > 0 {
                scheduler.on_acked(now, Class::Media, frame.bytes);
            }
            !acked
        });
        if let Some(windows) = scheduler.send_window() {
            conn.set_send_window(windows.media_bytes);
        }
        let just_in_time = scheduler.frames_just_in_time();
        let mut written_bytes = 0;
        loop {
            self.open_frames(conn, scheduler, now, just_in_time);
            // Oldest frames first: a later frame never overtakes an earlier one in our writes.
            let mut written_now = 0;
            for frame in self.writing.iter_mut().filter(|f| !f.finished) {
                written_now += write_frame(frame);
                if !frame.finished {
                    break;
                }
            }
            written_bytes += written_now;
            // Just in time, the next frame may start once this one is written.
            if !just_in_time
                || written_now == 0
                || self.waiting.is_empty()
                || self.writing.iter().any(|f| !f.finished)
            {
                break;
            }
        }
        if written_bytes > 0 {
            self.written_bytes += written_bytes;
            scheduler.on_written(now, Class::Media, written_bytes);
        }
    }
}

/// Writes what quinn takes of `frame` now (finishing the stream once all is written); returns
/// the bytes written.
fn write_frame(frame: &mut FrameWriter) -> u64 {
    let mut written_bytes = 0;
    if let Some(header) = frame.header.take() {
        let mut chunks = [header];
        match now_or_never(frame.stream.write_chunks(&mut chunks)) {
            Some(Ok(written)) if written.chunks == 1 => written_bytes += FRAME_HEADER_BYTES,
            Some(Ok(written)) => {
                // Part of the header went in; keep the rest for the next write.
                written_bytes += written.bytes as u64;
                frame.header = Some(std::mem::take(&mut chunks[0]));
                return written_bytes;
            }
            None => {
                frame.header = Some(std::mem::take(&mut chunks[0]));
                return written_bytes;
            }
            Some(Err(_)) => {
                frame.finished = true;
                return written_bytes;
            }
        }
    }
    while frame.offset < frame.payload_bytes {
        let len = (frame.payload_bytes - frame.offset).min(WRITE_CHUNK_BYTES as u64) as usize;
        let mut chunks = [pattern::chunk(frame.offset, len)];
        match now_or_never(frame.stream.write_chunks(&mut chunks)) {
            Some(Ok(written)) => {
                frame.offset += written.bytes as u64;
                written_bytes += written.bytes as u64;
            }
            None => return written_bytes,
            Some(Err(_)) => {
                frame.finished = true;
                return written_bytes;
            }
        }
    }
    let _ = frame.stream.finish();
    frame.finished = true;
    written_bytes
}

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
async fn frame(stream: &mut quinn::RecvStream, epoch: Instant) -> Result<Option<RawFrame>, String> {
    let mut header = [0u8; FRAME_HEADER_BYTES as usize];
    let mut header_bytes = 0u64;
    let mut decoded: Option<FrameHeader> = None;
    let mut payload_bytes = 0u64;
    loop {
        match stream.read_chunk(usize::MAX, true).await {
            Ok(Some(chunk)) => {
                let (mut offset, mut data): (u64, &[u8]) = (chunk.offset, &chunk.bytes);
                if offset < FRAME_HEADER_BYTES {
                    let end = (offset + data.len() as u64).min(FRAME_HEADER_BYTES);
                    let len = (end - offset) as usize;
                    header[offset as usize..end as usize].copy_from_slice(&data[..len]);
                    header_bytes += len as u64;
                    data = &data[len..];
                    offset = end;
                    if header_bytes == FRAME_HEADER_BYTES {
                        let h = FrameHeader::decode(&header);
                        if u64::from(h.size_bytes) <= FRAME_HEADER_BYTES {
                            return Err(format!(
                                "size {} bytes, not above the {FRAME_HEADER_BYTES}-byte header",
                                h.size_bytes
                            ));
                        }
                        decoded = Some(h);
                    }
                }
                if data.is_empty() {
                    continue;
                }
                // Ordered reads: the header is complete before any payload byte.
                let Some(h) = decoded else {
                    return Err("payload before the header".into());
                };
                let at = offset - FRAME_HEADER_BYTES;
                let end = at + data.len() as u64;
                if end + FRAME_HEADER_BYTES > u64::from(h.size_bytes) {
                    return Err(format!("more than the frame's {} bytes", h.size_bytes));
                }
                if !pattern::matches(at, data) {
                    return Err(format!(
                        "data mismatch at payload offset {at} ({} bytes)",
                        data.len()
                    ));
                }
                payload_bytes = end;
            }
            Ok(None) => {
                let received_at = epoch.elapsed();
                return match decoded {
                    Some(h) if payload_bytes + FRAME_HEADER_BYTES == u64::from(h.size_bytes) => {
                        Ok(Some(RawFrame {
                            seq: h.seq,
                            captured_at: h.captured_at,
                            received_at,
                            bytes: u64::from(h.size_bytes),
                        }))
                    }
                    Some(h) => Err(format!(
                        "ended after {} of {} bytes",
                        payload_bytes + FRAME_HEADER_BYTES,
                        h.size_bytes
                    )),
                    None => Err(format!("ended after {header_bytes} header bytes")),
                };
            }
            // Cancelled by the sender (FRAME_EXPIRED), or the connection is ending.
            Err(_) => return Ok(None),
        }
    }
}
