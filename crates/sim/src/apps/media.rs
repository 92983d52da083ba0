//! The media application: synthetic real-time video, one QUIC unidirectional stream per frame
//! (as in \[Ruehl2024\]), from the sender half to the receiver half.
//!
//! Frames leave every 1/fps from the handshake on. Sizes follow
//! [`perfwire::media::VideoModel`] (keyframes, jitter, the mean at the target bitrate). Each
//! frame starts with a [`FrameHeader`] — sequence number, capture time, size — followed by
//! [`perfwire::pattern`] bytes, which the receiver verifies (the format is `perfwire::media`'s,
//! shared with the real-time endpoints). The receiver records each frame's one-way delay
//! (capture → last byte) and counts frames later than the deadline.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use netsim::Uniform;
use perfwire::media::{FrameHeader, VideoModel};
use perfwire::{ReceivedRanges, pattern};
use quinn_proto::{Connection, Dir, ReadError, ReadableError, StreamId, VarInt, WriteError};
use sched::Class;
use serde::{Deserialize, Serialize};

use crate::app::{App, AppError, AppOutcome, AppSpec, Context, Role};

/// [`AppSpec::kind`] of the media application.
pub const KIND: &str = "media";

pub use perfwire::media::{DelayPercentiles, FRAME_EXPIRED, FRAME_HEADER_BYTES, FrameRecord};

/// Largest chunk handed to quinn per write.
const WRITE_CHUNK_BYTES: usize = 32 * 1024;

/// A synthetic video source and its deadline.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaSpec {
    /// Mean media rate, bit/s (frame bytes, headers included).
    pub bitrate_bps: u64,
    /// Frames per second.
    pub fps: u32,
    /// A keyframe every this many frames (the first frame is one).
    pub keyframe_interval: u32,
    /// Keyframe size / P-frame size.
    pub keyframe_ratio: f64,
    /// Each frame's size is scaled by a uniform factor in [1 − jitter, 1 + jitter].
    pub jitter: f64,
    /// A frame is late when its one-way delay exceeds this.
    pub deadline: Duration,
    /// The end that sends the frames.
    pub sender: Role,
    /// Seed of the frame-size jitter.
    pub seed: u64,
    /// Follow the scheduler's target bitrate ([`sched::Scheduler::media_target_bps`]) between
    /// [`MIN_BITRATE_SHARE`] of `bitrate_bps` and `bitrate_bps`, as an adaptive encoder would.
    pub adaptive: bool,
}

/// The lowest rate an adaptive source goes down to, as a share of its nominal rate.
pub const MIN_BITRATE_SHARE: f64 = 0.1;

impl MediaSpec {
    /// The size of frame `seq` at the nominal bitrate, bytes (at least a header and one
    /// payload byte).
    #[cfg(test)]
    fn frame_bytes(&self, seq: u64, rng: &mut Uniform) -> u64 {
        self.frame_bytes_at(seq, self.bitrate_bps, rng)
    }

    /// The size of frame `seq` when the encoder runs at `bitrate_bps`.
    fn frame_bytes_at(&self, seq: u64, bitrate_bps: u64, rng: &mut Uniform) -> u64 {
        self.video_model()
            .frame_bytes(seq, bitrate_bps, rng.next_f64())
    }

    /// The source's frame-size model (shared with the real-time media sender).
    pub fn video_model(&self) -> VideoModel {
        VideoModel {
            fps: self.fps,
            keyframe_interval: self.keyframe_interval,
            keyframe_ratio: self.keyframe_ratio,
            jitter: self.jitter,
        }
    }
}

impl AppSpec for MediaSpec {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn data_sender(&self) -> Role {
        self.sender
    }

    fn build(&self) -> (Box<dyn App>, Box<dyn App>) {
        let sender: Box<dyn App> = Box::new(MediaSender::new(self.clone()));
        let receiver: Box<dyn App> = Box::new(MediaReceiver::new(self.deadline));
        debug_assert!(self.fps > 0 && self.bitrate_bps > 0);
        match self.sender {
            Role::Server => (receiver, sender),
            Role::Client => (sender, receiver),
        }
    }
}

/// The media application's measurements, as its [`AppOutcome::report`] carries them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MediaReport {
    /// Frames the sender captured and started sending.
    pub frames_sent: u64,
    /// Frames the receiver got completely.
    pub frames_received: u64,
    /// One-way frame delay (capture → last byte) of received frames.
    pub frame_delay_ms: DelayPercentiles,
    /// Received frames whose delay exceeded the deadline.
    pub late_frames: u64,
    /// The deadline, ms.
    pub deadline_ms: f64,
    /// Every received frame, in arrival order.
    pub frames: Vec<FrameRecord>,
    /// Frames the sender cancelled because they could no longer arrive in time.
    #[serde(default)]
    pub cancelled_frames: u64,
    /// The source's nominal rate, bit/s.
    #[serde(default)]
    pub bitrate_bps: u64,
    /// Mean rate frames were encoded at (below `bitrate_bps` when the source adapted), bit/s.
    #[serde(default)]
    pub mean_bitrate_bps: f64,
    /// Frames per second.
    #[serde(default)]
    pub fps: u32,
    /// Capture time of frame 0, seconds since the start of the run (frame `n` is captured
    /// `n / fps` later).
    #[serde(default)]
    pub first_capture_s: f64,
}

impl MediaReport {
    /// The report of `app`, if it is a media application.
    pub fn of(app: &AppOutcome) -> Option<MediaReport> {
        if app.kind != KIND {
            return None;
        }
        serde_json::from_value(serde_json::Value::Object(app.report.clone())).ok()
    }
}

/// A frame on its stream, from its first write until the peer acknowledged all of it.
#[derive(Debug)]
struct FrameWriter {
    id: StreamId,
    captured_at: Duration,
    bytes: u64,
    header: Option<Bytes>,
    offset: u64,
    payload_bytes: u64,
    /// Written completely and finished; waiting for acknowledgement.
    finished: bool,
}

/// The sending half: captures frames on time and writes each on its own stream.
#[derive(Debug)]
struct MediaSender {
    spec: MediaSpec,
    rng: Uniform,
    started_at: Option<Duration>,
    next_seq: u64,
    /// Frames captured but not yet given a stream (stream limit reached): (seq, capture, size).
    waiting: Vec<(u64, Duration, u64)>,
    writing: Vec<FrameWriter>,
    /// Frames cancelled because they could no longer arrive in time.
    cancelled_frames: u64,
    /// The rate the encoder runs at now, bit/s.
    bitrate_bps: u64,
    /// Sum of the rates frames were encoded at (for the mean).
    bitrate_sum: f64,
}

impl MediaSender {
    fn new(spec: MediaSpec) -> Self {
        let rng = Uniform::new(spec.seed, 0);
        let bitrate_bps = spec.bitrate_bps;
        Self {
            spec,
            rng,
            started_at: None,
            next_seq: 0,
            waiting: Vec::new(),
            writing: Vec::new(),
            cancelled_frames: 0,
            bitrate_bps,
            bitrate_sum: 0.0,
        }
    }

    fn capture_time(&self, seq: u64) -> Option<Duration> {
        let start = self.started_at?;
        Some(start + self.spec.video_model().capture_offset(seq))
    }

    /// Opens streams for waiting frames the scheduler admits (and drops those it refuses);
    /// `just_in_time`: only while no frame is still being written.
    fn open_frames(
        &mut self,
        conn: &mut Connection,
        scheduler: &mut dyn sched::Scheduler,
        now: Duration,
        just_in_time: bool,
    ) {
        while let Some(&(seq, at, size)) = self.waiting.first() {
            if just_in_time && self.writing.iter().any(|f| !f.finished) {
                break;
            }
            if !scheduler.admit_frame(now.saturating_sub(at), size, self.spec.deadline) {
                // It could not arrive in time: drop it at the source.
                self.waiting.remove(0);
                self.cancelled_frames += 1;
                continue;
            }
            let Some(id) = conn.streams().open(Dir::Uni) else {
                break;
            };
            let _ = conn
                .send_stream(id)
                .set_priority(scheduler.priority(Class::Media));
            self.waiting.remove(0);
            let header = FrameHeader {
                seq,
                captured_at: at,
                size_bytes: size as u32,
            }
            .encode();
            self.writing.push(FrameWriter {
                id,
                captured_at: at,
                bytes: size,
                header: Some(Bytes::copy_from_slice(&header)),
                offset: 0,
                payload_bytes: size - FRAME_HEADER_BYTES,
                finished: false,
            });
        }
    }
}

/// Writes what fits of `frame` (marking it finished once all is written); returns the bytes
/// written.
fn pump_frame(conn: &mut Connection, frame: &mut FrameWriter) -> u64 {
    let mut stream = conn.send_stream(frame.id);
    let mut written_bytes = 0;
    if let Some(header) = frame.header.take() {
        let mut chunks = [header];
        match stream.write_chunks(&mut chunks) {
            Ok(written) if written.chunks == 1 => written_bytes += FRAME_HEADER_BYTES,
            Ok(written) => {
                // Part of the header went in; keep the rest for the next write.
                written_bytes += written.bytes as u64;
                frame.header = Some(std::mem::take(&mut chunks[0]));
                return written_bytes;
            }
            Err(WriteError::Blocked) => {
                frame.header = Some(std::mem::take(&mut chunks[0]));
                return written_bytes;
            }
            Err(_) => {
                frame.finished = true;
                return written_bytes;
            }
        }
    }
    while frame.offset < frame.payload_bytes {
        let len = (frame.payload_bytes - frame.offset).min(WRITE_CHUNK_BYTES as u64) as usize;
        let mut chunks = [pattern::chunk(frame.offset, len)];
        match stream.write_chunks(&mut chunks) {
            Ok(written) => {
                frame.offset += written.bytes as u64;
                written_bytes += written.bytes as u64;
            }
            Err(WriteError::Blocked) => return written_bytes,
            Err(_) => {
                frame.finished = true;
                return written_bytes;
            }
        }
    }
    let _ = stream.finish();
    frame.finished = true;
    written_bytes
}

impl App for MediaSender {
    fn on_connected(&mut self, now: Duration) {
        self.started_at.get_or_insert(now);
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Result<bool, AppError> {
        let now = cx.now;
        let scheduler = &mut *cx.scheduler;
        let conn = &mut *cx.connection;
        if self.spec.adaptive
            && let Some(target) = scheduler.media_target_bps()
        {
            let floor = (self.spec.bitrate_bps as f64 * MIN_BITRATE_SHARE) as u64;
            self.bitrate_bps = target.clamp(floor.max(1), self.spec.bitrate_bps);
        }
        while let Some(at) = self.capture_time(self.next_seq)
            && at <= now
        {
            let size = self
                .spec
                .frame_bytes_at(self.next_seq, self.bitrate_bps, &mut self.rng);
            self.bitrate_sum += self.bitrate_bps as f64;
            scheduler.on_frame(at, size);
            self.waiting.push((self.next_seq, at, size));
            self.next_seq += 1;
        }
        // Frames that can no longer make their deadline are cancelled, if the scheduler says
        // so: whatever was not sent is never sent, and the capacity goes to the next frames.
        if let Some(margin) = scheduler.frame_expiry() {
            let expiry = self.spec.deadline.saturating_sub(margin);
            let expired = |captured_at: Duration| now.saturating_sub(captured_at) > expiry;
            let before = self.waiting.len();
            self.waiting.retain(|&(_, at, _)| !expired(at));
            self.cancelled_frames += (before - self.waiting.len()) as u64;
            // Only frames not yet completely written: one that is written may already be on
            // its way and arrive in time.
            for frame in self.writing.iter_mut().filter(|f| !f.finished) {
                if expired(frame.captured_at)
                    && conn
                        .send_stream(frame.id)
                        .reset(VarInt::from_u32(FRAME_EXPIRED))
                        .is_ok()
                {
                    self.cancelled_frames += 1;
                    frame.payload_bytes = 0;
                    frame.finished = true;
                    frame.bytes = 0;
                }
            }
        }
        // Frames the peer has acknowledged completely: quinn forgets a finished stream then.
        self.writing.retain(|frame| {
            let acked = frame.finished && conn.send_stream(frame.id).priority().is_err();
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
                written_now += pump_frame(conn, frame);
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
            scheduler.on_written(now, Class::Media, written_bytes);
        }
        Ok(false)
    }

    fn wakeup(&self) -> Option<Duration> {
        self.capture_time(self.next_seq)
    }

    fn received_bytes(&self) -> u64 {
        0
    }

    fn busy_periods(&self) -> Vec<(Duration, Option<Duration>)> {
        self.started_at.map(|s| (s, None)).into_iter().collect()
    }

    fn report(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut report = serde_json::Map::new();
        report.insert("frames_sent".into(), self.next_seq.into());
        report.insert("cancelled_frames".into(), self.cancelled_frames.into());
        report.insert("fps".into(), self.spec.fps.into());
        report.insert("bitrate_bps".into(), self.spec.bitrate_bps.into());
        report.insert(
            "first_capture_s".into(),
            self.started_at.map_or(0.0, |t| t.as_secs_f64()).into(),
        );
        let mean_bps = if self.next_seq == 0 {
            0.0
        } else {
            self.bitrate_sum / self.next_seq as f64
        };
        report.insert("mean_bitrate_bps".into(), mean_bps.round().into());
        report
    }
}

/// A frame being received.
#[derive(Debug, Default)]
struct FrameReader {
    header: [u8; FRAME_HEADER_BYTES as usize],
    header_received: u64,
    payload: ReceivedRanges,
    fin: bool,
    /// The sender cancelled the frame.
    reset: bool,
}

impl FrameReader {
    /// (seq, capture time, size) once the header is in.
    fn header(&self) -> Option<(u64, Duration, u64)> {
        (self.header_received == FRAME_HEADER_BYTES).then(|| {
            let header = FrameHeader::decode(&self.header);
            (header.seq, header.captured_at, u64::from(header.size_bytes))
        })
    }
}

/// The receiving half: reads every frame stream, verifies it, records its delay.
#[derive(Debug)]
struct MediaReceiver {
    deadline: Duration,
    streams: BTreeMap<StreamId, FrameReader>,
    frames: Vec<FrameRecord>,
    received_bytes: u64,
}

impl MediaReceiver {
    fn new(deadline: Duration) -> Self {
        Self {
            deadline,
            streams: BTreeMap::new(),
            frames: Vec::new(),
            received_bytes: 0,
        }
    }
}

fn read_frame(
    conn: &mut Connection,
    id: StreamId,
    frame: &mut FrameReader,
) -> Result<(), AppError> {
    let mut stream = conn.recv_stream(id);
    let mut chunks = match stream.read(false) {
        Ok(chunks) => chunks,
        Err(ReadableError::ClosedStream) | Err(ReadableError::IllegalOrderedRead) => return Ok(()),
    };
    let mut result = Ok(());
    loop {
        match chunks.next(usize::MAX) {
            Ok(Some(chunk)) => {
                let (mut offset, mut data): (u64, &[u8]) = (chunk.offset, &chunk.bytes);
                if offset < FRAME_HEADER_BYTES {
                    let end = (offset + data.len() as u64).min(FRAME_HEADER_BYTES);
                    let len = (end - offset) as usize;
                    frame.header[offset as usize..end as usize].copy_from_slice(&data[..len]);
                    frame.header_received += len as u64;
                    data = &data[len..];
                    offset = end;
                }
                if data.is_empty() {
                    continue;
                }
                let at = offset - FRAME_HEADER_BYTES;
                if !pattern::matches(at, data) {
                    result = Err(AppError::Corruption {
                        stream: u64::from(VarInt::from(id)),
                        offset: at,
                        len: data.len(),
                    });
                    break;
                }
                frame.payload.insert(at, at + data.len() as u64);
            }
            Ok(None) => {
                frame.fin = true;
                break;
            }
            Err(ReadError::Blocked) => break,
            Err(ReadError::Reset(_)) => {
                frame.reset = true;
                break;
            }
        }
    }
    let _ = chunks.finalize();
    result
}

impl App for MediaReceiver {
    fn accepts(&self, dir: Dir) -> bool {
        dir == Dir::Uni
    }

    fn adopt_stream(&mut self, id: StreamId, _now: Duration) {
        self.streams.insert(id, FrameReader::default());
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Result<bool, AppError> {
        let (conn, now) = (&mut *cx.connection, cx.now);
        let mut done = Vec::new();
        for (&id, frame) in &mut self.streams {
            read_frame(conn, id, frame)?;
            if let Some((seq, captured_at, bytes)) = frame.header()
                && frame.fin
                && frame.payload.prefix() + FRAME_HEADER_BYTES == bytes
            {
                self.frames.push(FrameRecord {
                    seq,
                    captured_at,
                    received_at: now,
                    bytes,
                });
                self.received_bytes += bytes;
                done.push(id);
            } else if frame.reset {
                done.push(id);
            }
        }
        for id in done {
            self.streams.remove(&id);
        }
        Ok(false)
    }

    fn received_bytes(&self) -> u64 {
        self.received_bytes
    }

    fn report(&self) -> serde_json::Map<String, serde_json::Value> {
        let delays: Vec<f64> = self
            .frames
            .iter()
            .map(|f| f.received_at.saturating_sub(f.captured_at).as_secs_f64() * 1e3)
            .collect();
        let late = self
            .frames
            .iter()
            .filter(|f| f.received_at.saturating_sub(f.captured_at) > self.deadline)
            .count();
        let mut report = serde_json::Map::new();
        report.insert("frames_received".into(), self.frames.len().into());
        report.insert(
            "frame_delay_ms".into(),
            serde_json::json!(DelayPercentiles::of(&delays)),
        );
        report.insert("late_frames".into(), late.into());
        report.insert(
            "deadline_ms".into(),
            (self.deadline.as_secs_f64() * 1e3).into(),
        );
        report.insert("frames".into(), serde_json::json!(self.frames));
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> MediaSpec {
        MediaSpec {
            bitrate_bps: 2_000_000,
            fps: 30,
            keyframe_interval: 60,
            keyframe_ratio: 5.0,
            jitter: 0.0,
            deadline: Duration::from_millis(175),
            sender: Role::Server,
            seed: 1,
            adaptive: false,
        }
    }

    #[test]
    fn frame_sizes_average_to_the_bitrate() {
        let spec = spec();
        let mut rng = Uniform::new(1, 0);
        let total: u64 = (0..600).map(|seq| spec.frame_bytes(seq, &mut rng)).sum();
        // 600 frames at 30 fps = 20 s at 2 Mbit/s = 5 MB.
        assert!((total as f64 - 5e6).abs() < 5e6 * 0.001, "{total}");
        let key = spec.frame_bytes(0, &mut rng) as f64;
        let p = spec.frame_bytes(1, &mut rng) as f64;
        assert!((key / p - 5.0).abs() < 0.01);
        let jittery = MediaSpec {
            jitter: 0.2,
            ..spec
        };
        let mut rng = Uniform::new(1, 0);
        let total: u64 = (0..6000)
            .map(|seq| jittery.frame_bytes(seq, &mut rng))
            .sum();
        assert!((total as f64 - 5e7).abs() < 5e7 * 0.01, "{total}");
    }
}
