//! The media application: synthetic real-time video, one unidirectional stream per frame (as
//! in \[Ruehl2024\]), from the sending half to the receiving half.
//!
//! Frames are captured every 1/fps from [`MediaSender::on_connected`] on. Sizes follow
//! [`VideoModel`] (keyframes, jitter, the mean at the encoder's rate), drawn from a
//! [`netsim::Uniform`] stream of the source's seed, so both backends send the same frames.
//! Each frame stream carries a [`FrameHeader`] (sequence number, capture time, size), then
//! [`perfwire::pattern`] bytes, then FIN; the receiver ([`FrameReader`]) verifies every byte
//! and records the frame's one-way delay (capture → last byte).
//!
//! The sender asks the flow's scheduler at every step, in this order: the target rate (an
//! adaptive source), then it captures what is due ([`Scheduler::on_frame`]), cancels what can
//! no longer arrive ([`Scheduler::frame_expiry`]), moves written frames past their deadline to
//! [`Scheduler::late_frame_priority`], reports frames the peer acknowledged
//! ([`Scheduler::on_acked`]), applies the media send window, admits and opens frames
//! ([`Scheduler::admit_frame`], at capture or just in time) and writes them oldest first,
//! reporting what it wrote ([`Scheduler::on_written`]).

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use netsim::Uniform;
use perfwire::ReceivedRanges;
use perfwire::media::{FRAME_EXPIRED, FRAME_HEADER_BYTES, FrameHeader, VideoModel};
use perfwire::pattern;
use perfwire::session::{MediaParams, SentSummary};
use sched::{Class, Scheduler};

use crate::{SendStreams, SendingHalf, WriteOutcome};

/// Largest chunk handed to the transport per write.
pub const WRITE_CHUNK_BYTES: u64 = 32 * 1024;

/// The lowest rate an adaptive source goes down to, as a share of its nominal rate.
pub const MIN_BITRATE_SHARE: f64 = 0.1;

/// A frame captured and not yet given a stream.
#[derive(Debug, Clone, Copy)]
struct WaitingFrame {
    seq: u64,
    captured_at: Duration,
    bytes: u64,
}

/// A frame on its stream, from its first write until the peer acknowledged all of it.
#[derive(Debug)]
struct FrameWriter<S> {
    stream: S,
    captured_at: Duration,
    /// Its size, header included; 0 once cancelled (nothing to report as acknowledged).
    bytes: u64,
    /// What is left of the header to write.
    header: Option<Bytes>,
    /// Payload bytes written.
    offset: u64,
    payload_bytes: u64,
    /// Written completely and finished (or reset); waiting for acknowledgement.
    finished: bool,
    /// Past its deadline, its stream moved to the scheduler's late-frame priority.
    late: bool,
}

/// An adaptive encoder's answer to a frame limit ([`Scheduler::media_frame_limit_bytes`]): a
/// frame drawn larger is encoded at the limit (coarser), and the bytes it did not use go to the
/// predicted frames after it, evenly up to the next keyframe, so the source keeps its mean
/// rate (unless they reach the limit too), as a rate control spends its budget over a group of
/// pictures. A keyframe starts afresh: what the last group did not spend is gone. WebRTC's
/// encoders bound a keyframe by their delay budget in the same spirit (\[WebRTC-intra\] in
/// docs/references.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LimitedFrames {
    unspent_bytes: u64,
}

impl LimitedFrames {
    /// The size of a frame drawn at `drawn_bytes`, `position` frames after its group's keyframe
    /// (0: the keyframe), of a group of `interval` frames, under `limit_bytes`.
    fn size(
        &mut self,
        (position, interval): (u64, u64),
        drawn_bytes: u64,
        limit_bytes: Option<u64>,
    ) -> u64 {
        if position == 0 {
            self.unspent_bytes = 0;
        }
        let share = self.unspent_bytes / (interval - position).max(1);
        self.unspent_bytes -= share;
        let wanted = drawn_bytes + share;
        let bytes = limit_bytes.map_or(wanted, |limit| {
            wanted.min(limit.max(FRAME_HEADER_BYTES + 1))
        });
        self.unspent_bytes += wanted - bytes;
        bytes
    }
}

/// The sending half: captures frames on time, cancels what cannot arrive, writes each frame on
/// its own stream, oldest first. `S` is the backend's stream handle ([`SendStreams::Stream`]).
#[derive(Debug)]
pub struct MediaSender<S> {
    params: MediaParams,
    model: VideoModel,
    rng: Uniform,
    started_at: Option<Duration>,
    next_seq: u64,
    waiting: VecDeque<WaitingFrame>,
    writing: Vec<FrameWriter<S>>,
    cancelled_frames: u64,
    /// The rate the encoder runs at now, bit/s.
    bitrate_bps: u64,
    /// Bytes a limited frame did not use, for the frames after it.
    limited: LimitedFrames,
    /// Sum of the rates frames were encoded at (for the mean).
    bitrate_sum: f64,
    written_bytes: u64,
}

impl<S> MediaSender<S> {
    /// A source that has not started yet.
    pub fn new(params: MediaParams) -> Self {
        debug_assert!(params.video.fps > 0 && params.bitrate_bps > 0);
        Self {
            model: params.video,
            rng: Uniform::new(params.seed, 0),
            bitrate_bps: params.bitrate_bps,
            limited: LimitedFrames::default(),
            params,
            started_at: None,
            next_seq: 0,
            waiting: VecDeque::new(),
            writing: Vec::new(),
            cancelled_frames: 0,
            bitrate_sum: 0.0,
            written_bytes: 0,
        }
    }

    fn capture_time(&self, seq: u64) -> Option<Duration> {
        Some(self.started_at? + self.model.capture_offset(seq))
    }

    /// Captures every frame due by `now`, at the encoder's current rate; an adaptive source
    /// holds each frame to the scheduler's limit ([`Scheduler::media_frame_limit_bytes`]),
    /// but never below its mean frame at that rate: a limit that low says the rate itself is
    /// too high, which the target bitrate answers.
    fn capture(&mut self, now: Duration, scheduler: &mut dyn Scheduler) {
        let mean_frame_bytes = self.bitrate_bps / 8 / u64::from(self.model.fps.max(1));
        let limit_bytes = if self.params.adaptive {
            scheduler
                .media_frame_limit_bytes(self.params.deadline)
                .map(|limit| limit.max(mean_frame_bytes))
        } else {
            None
        };
        while let Some(at) = self.capture_time(self.next_seq)
            && at <= now
        {
            let drawn_bytes =
                self.model
                    .frame_bytes(self.next_seq, self.bitrate_bps, self.rng.next_f64());
            let bytes = self.limited.size(
                self.model.position_in_interval(self.next_seq),
                drawn_bytes,
                limit_bytes,
            );
            self.bitrate_sum += self.bitrate_bps as f64;
            scheduler.on_frame(at, bytes);
            self.waiting.push_back(WaitingFrame {
                seq: self.next_seq,
                captured_at: at,
                bytes,
            });
            self.next_seq += 1;
        }
    }

    /// Cancels the frames that can no longer make their deadline, if the scheduler says so:
    /// whatever was not sent is never sent, and the capacity goes to the next frames.
    fn expire(
        &mut self,
        now: Duration,
        scheduler: &dyn Scheduler,
        streams: &mut dyn SendStreams<Stream = S>,
    ) {
        let Some(margin) = scheduler.frame_expiry() else {
            return;
        };
        let expiry = self.params.deadline.saturating_sub(margin);
        let expired = |captured_at: Duration| now.saturating_sub(captured_at) > expiry;
        let before = self.waiting.len();
        self.waiting.retain(|frame| !expired(frame.captured_at));
        self.cancelled_frames += (before - self.waiting.len()) as u64;
        // Only frames not yet completely written: one that is written may already be on its
        // way and arrive in time.
        for frame in self.writing.iter_mut().filter(|f| !f.finished) {
            if expired(frame.captured_at) && streams.reset(&mut frame.stream, FRAME_EXPIRED) {
                self.cancelled_frames += 1;
                frame.payload_bytes = 0;
                frame.finished = true;
                frame.bytes = 0;
            }
        }
    }

    /// Moves the streams of frames past their deadline to the scheduler's late-frame priority
    /// (see `Scheduler::late_frame_priority`), once per frame.
    fn give_way_when_late(
        &mut self,
        now: Duration,
        scheduler: &dyn Scheduler,
        streams: &mut dyn SendStreams<Stream = S>,
    ) {
        let Some(priority) = scheduler.late_frame_priority() else {
            return;
        };
        let deadline = self.params.deadline;
        for frame in self
            .writing
            .iter_mut()
            .filter(|f| !f.late && f.bytes > 0 && now.saturating_sub(f.captured_at) > deadline)
        {
            streams.set_priority(&mut frame.stream, priority);
            frame.late = true;
        }
    }

    /// Opens streams for waiting frames the scheduler admits (and drops those it refuses);
    /// `just_in_time`: only while no frame is still being written.
    fn open_frames(
        &mut self,
        now: Duration,
        scheduler: &mut dyn Scheduler,
        streams: &mut dyn SendStreams<Stream = S>,
        just_in_time: bool,
    ) {
        while let Some(&frame) = self.waiting.front() {
            if just_in_time && self.writing.iter().any(|f| !f.finished) {
                break;
            }
            let age = now.saturating_sub(frame.captured_at);
            if !scheduler.admit_frame(age, frame.bytes, self.params.deadline) {
                // It could not arrive in time: drop it at the source.
                self.waiting.pop_front();
                self.cancelled_frames += 1;
                continue;
            }
            // A frame admitted past its deadline starts at the late-frame priority.
            let late_priority = scheduler
                .late_frame_priority()
                .filter(|_| age > self.params.deadline);
            let priority = late_priority.unwrap_or_else(|| scheduler.priority(Class::Media));
            let Some(stream) = streams.open_uni(priority) else {
                break;
            };
            self.waiting.pop_front();
            let header = FrameHeader {
                seq: frame.seq,
                captured_at: frame.captured_at,
                size_bytes: frame.bytes as u32,
            }
            .encode();
            self.writing.push(FrameWriter {
                stream,
                captured_at: frame.captured_at,
                bytes: frame.bytes,
                header: Some(Bytes::copy_from_slice(&header)),
                offset: 0,
                payload_bytes: frame.bytes - FRAME_HEADER_BYTES,
                finished: false,
                late: late_priority.is_some(),
            });
        }
    }
}

impl<S: Send> SendingHalf<S> for MediaSender<S> {
    /// The source starts (the handshake completed, or the session started): frame 0 is
    /// captured at `now`. Later calls change nothing.
    fn on_connected(&mut self, now: Duration) {
        self.started_at.get_or_insert(now);
    }

    /// One step at `now`: adapt, capture, expire, give way when late, acknowledge, admit and
    /// open, write (see the module docs for the order and what the scheduler is told).
    fn step(
        &mut self,
        now: Duration,
        scheduler: &mut dyn Scheduler,
        streams: &mut dyn SendStreams<Stream = S>,
    ) {
        if self.params.adaptive
            && let Some(target) = scheduler.media_target_bps()
        {
            let floor = (self.params.bitrate_bps as f64 * MIN_BITRATE_SHARE) as u64;
            self.bitrate_bps = target.clamp(floor.max(1), self.params.bitrate_bps);
        }
        self.capture(now, scheduler);
        self.expire(now, scheduler, streams);
        self.give_way_when_late(now, scheduler, streams);
        // Frames the peer has acknowledged completely: the transport forgets a finished stream
        // then.
        self.writing.retain(|frame| {
            let acked = frame.finished && streams.is_acknowledged(&frame.stream);
            if acked && frame.bytes > 0 {
                scheduler.on_acked(now, Class::Media, frame.bytes);
            }
            !acked
        });
        if let Some(windows) = scheduler.send_window() {
            streams.set_send_window(windows.media_bytes);
        }
        let just_in_time = scheduler.frames_just_in_time();
        let mut written_bytes = 0;
        loop {
            self.open_frames(now, scheduler, streams, just_in_time);
            // Oldest frames first: a later frame never overtakes an earlier one in our writes.
            let mut written_now = 0;
            for frame in self.writing.iter_mut().filter(|f| !f.finished) {
                written_now += write_frame(streams, frame);
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

    /// When the next frame is captured: the step the sender needs without any network event.
    fn wakeup(&self) -> Option<Duration> {
        self.capture_time(self.next_seq)
    }

    /// What the sender did so far.
    fn summary(&self) -> SentSummary {
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
}

/// Writes what the transport takes of `frame` (finishing its stream once all is written);
/// returns the bytes written.
fn write_frame<S>(streams: &mut dyn SendStreams<Stream = S>, frame: &mut FrameWriter<S>) -> u64 {
    let mut written_bytes = 0;
    if let Some(mut header) = frame.header.take() {
        match streams.write(&mut frame.stream, &mut header) {
            WriteOutcome::Written(n) => {
                written_bytes += n;
                if !header.is_empty() {
                    // Part of the header went in; keep the rest for the next write.
                    frame.header = Some(header);
                    return written_bytes;
                }
            }
            WriteOutcome::Blocked => {
                frame.header = Some(header);
                return written_bytes;
            }
            WriteOutcome::Closed => {
                frame.finished = true;
                return written_bytes;
            }
        }
    }
    while frame.offset < frame.payload_bytes {
        let len = (frame.payload_bytes - frame.offset).min(WRITE_CHUNK_BYTES) as usize;
        let mut chunk = pattern::chunk(frame.offset, len);
        match streams.write(&mut frame.stream, &mut chunk) {
            WriteOutcome::Written(n) => {
                frame.offset += n;
                written_bytes += n;
            }
            WriteOutcome::Blocked => return written_bytes,
            WriteOutcome::Closed => {
                frame.finished = true;
                return written_bytes;
            }
        }
    }
    streams.finish(&mut frame.stream);
    frame.finished = true;
    written_bytes
}

/// A frame stream that is not a frame: the peer broke the media format (never acceptable; a
/// bug in the stack or the sender).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The header gives a size that leaves no payload.
    #[error("size {size_bytes} bytes, not above the {FRAME_HEADER_BYTES}-byte header")]
    TooSmall {
        /// The size the header gives.
        size_bytes: u32,
    },
    /// Bytes beyond the size the header gives.
    #[error("more than the frame's {size_bytes} bytes")]
    TooLong {
        /// The size the header gives.
        size_bytes: u32,
    },
    /// Payload bytes that are not the pattern at their offset.
    #[error("data mismatch at payload offset {offset} ({len} bytes)")]
    Corrupt {
        /// Payload offset of the bad chunk.
        offset: u64,
        /// Its length.
        len: usize,
    },
    /// The stream ended before the header was complete.
    #[error("ended after {header_bytes} header bytes")]
    NoHeader {
        /// Header bytes received.
        header_bytes: u64,
    },
    /// The stream ended before the frame was complete.
    #[error("ended after {received_bytes} of {size_bytes} bytes")]
    Truncated {
        /// Bytes received in order, header included.
        received_bytes: u64,
        /// The size the header gives.
        size_bytes: u32,
    },
}

/// One frame stream being received: the header, then the payload in any order (unordered reads
/// are fine), every byte verified against the pattern at its offset.
#[derive(Debug, Default)]
pub struct FrameReader {
    header_bytes: [u8; FRAME_HEADER_BYTES as usize],
    header_received: u64,
    header: Option<FrameHeader>,
    payload: ReceivedRanges,
}

impl FrameReader {
    /// `data` arrived at stream `offset`.
    pub fn on_data(&mut self, offset: u64, data: &[u8]) -> Result<(), FrameError> {
        let (mut offset, mut data) = (offset, data);
        if offset < FRAME_HEADER_BYTES {
            let end = (offset + data.len() as u64).min(FRAME_HEADER_BYTES);
            let len = (end - offset) as usize;
            self.header_bytes[offset as usize..end as usize].copy_from_slice(&data[..len]);
            self.header_received += len as u64;
            data = &data[len..];
            offset = end;
            if self.header_received == FRAME_HEADER_BYTES {
                let header = FrameHeader::decode(&self.header_bytes);
                if u64::from(header.size_bytes) <= FRAME_HEADER_BYTES {
                    return Err(FrameError::TooSmall {
                        size_bytes: header.size_bytes,
                    });
                }
                self.header = Some(header);
            }
        }
        if data.is_empty() {
            return Ok(());
        }
        let at = offset - FRAME_HEADER_BYTES;
        let end = at + data.len() as u64;
        if let Some(header) = self.header
            && end + FRAME_HEADER_BYTES > u64::from(header.size_bytes)
        {
            return Err(FrameError::TooLong {
                size_bytes: header.size_bytes,
            });
        }
        if !pattern::matches(at, data) {
            return Err(FrameError::Corrupt {
                offset: at,
                len: data.len(),
            });
        }
        self.payload.insert(at, end);
        Ok(())
    }

    /// The header, once all of it arrived.
    pub fn header(&self) -> Option<FrameHeader> {
        self.header
    }

    /// The stream ended (FIN, all data read): the frame's header if every byte of it arrived.
    pub fn on_finished(&self) -> Result<FrameHeader, FrameError> {
        let Some(header) = self.header else {
            return Err(FrameError::NoHeader {
                header_bytes: self.header_received,
            });
        };
        let received_bytes = FRAME_HEADER_BYTES + self.payload.prefix();
        match received_bytes.cmp(&u64::from(header.size_bytes)) {
            std::cmp::Ordering::Equal => Ok(header),
            std::cmp::Ordering::Less => Err(FrameError::Truncated {
                received_bytes,
                size_bytes: header.size_bytes,
            }),
            std::cmp::Ordering::Greater => Err(FrameError::TooLong {
                size_bytes: header.size_bytes,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::{MockStreams, RecordingScheduler};

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    /// 10 frames a second of 1000 bytes each (no keyframes, no jitter), due 150 ms after
    /// capture.
    fn steady() -> MediaParams {
        MediaParams {
            bitrate_bps: 80_000,
            video: VideoModel {
                fps: 10,
                keyframe_interval: 1000,
                keyframe_ratio: 1.0,
                jitter: 0.0,
            },
            deadline: ms(150),
            seed: 1,
            adaptive: false,
        }
    }

    #[test]
    fn a_frame_is_its_header_then_the_pattern_then_fin_and_its_ack_is_reported() {
        let mut sender = MediaSender::new(steady());
        let (mut streams, mut scheduler) = (MockStreams::default(), RecordingScheduler::default());
        streams.room = u64::MAX;
        assert_eq!(sender.wakeup(), None, "no frame before the source starts");
        sender.on_connected(ms(5));
        sender.step(ms(5), &mut scheduler, &mut streams);
        let bytes = streams.written[0].clone();
        let header = FrameHeader::decode(bytes[..20].try_into().unwrap());
        assert_eq!((header.seq, header.captured_at), (0, ms(5)));
        assert_eq!(u64::from(header.size_bytes), bytes.len() as u64);
        assert!(pattern::matches(0, &bytes[20..]));
        assert!(streams.finished.contains(&0));
        assert_eq!(scheduler.written, bytes.len() as u64);
        assert_eq!(sender.wakeup(), Some(ms(105)));
        // Acknowledged: the scheduler hears of the whole frame, once.
        streams.acked.insert(0);
        sender.step(ms(6), &mut scheduler, &mut streams);
        sender.step(ms(7), &mut scheduler, &mut streams);
        assert_eq!(scheduler.acked, bytes.len() as u64);
    }

    /// A steady source started at 0 ms, a scheduler with `late_priority`, unlimited room and
    /// `stream_limit` streams (100 ms between frames, due 150 ms after capture; the peer
    /// acknowledges nothing).
    fn started_with_late_priority(
        late_priority: Option<i32>,
        stream_limit: Option<u32>,
    ) -> (MediaSender<u32>, RecordingScheduler, MockStreams) {
        let mut sender = MediaSender::new(steady());
        sender.on_connected(ms(0));
        let scheduler = RecordingScheduler {
            late_priority,
            ..RecordingScheduler::default()
        };
        let streams = MockStreams {
            room: u64::MAX,
            stream_limit,
            ..MockStreams::default()
        };
        (sender, scheduler, streams)
    }

    #[test]
    fn a_written_frame_past_its_deadline_gives_way_to_the_frames_that_can_be_on_time() {
        let (mut sender, mut scheduler, mut streams) = started_with_late_priority(Some(-1), None);
        sender.step(ms(0), &mut scheduler, &mut streams);
        sender.step(ms(150), &mut scheduler, &mut streams);
        assert!(streams.priority_changes.is_empty(), "due, not late");
        sender.step(ms(151), &mut scheduler, &mut streams);
        assert_eq!(streams.priority_changes, [(0, -1)]);
        // Frame 1 (captured at 100 ms) late at 251 ms, frame 2 (200 ms) not yet; frame 0 once.
        sender.step(ms(251), &mut scheduler, &mut streams);
        assert_eq!(streams.priority_changes, [(0, -1), (1, -1)]);
        assert_eq!(streams.opened_at_priority, [(0, 0), (1, 0), (2, 0)].into());
        // Without a late priority nothing changes.
        let (mut sender, mut scheduler, mut streams) = started_with_late_priority(None, None);
        sender.step(ms(0), &mut scheduler, &mut streams);
        sender.step(ms(300), &mut scheduler, &mut streams);
        assert!(streams.priority_changes.is_empty());
    }

    #[test]
    fn a_frame_opened_past_its_deadline_starts_at_the_late_priority() {
        // The peer allows no stream until 200 ms: frame 0 (due at 150 ms) waits past its
        // deadline, frames 1 and 2 (due at 250 and 350 ms) do not.
        let (mut sender, mut scheduler, mut streams) =
            started_with_late_priority(Some(-1), Some(0));
        sender.step(ms(0), &mut scheduler, &mut streams);
        streams.stream_limit = None;
        sender.step(ms(200), &mut scheduler, &mut streams);
        assert_eq!(streams.opened_at_priority, [(0, -1), (1, 0), (2, 0)].into());
        // Already at the late priority: not changed again.
        sender.step(ms(201), &mut scheduler, &mut streams);
        assert!(streams.priority_changes.is_empty());
    }

    #[test]
    fn a_frame_past_its_deadline_is_reset_and_the_next_ones_are_sent() {
        let mut sender = MediaSender::new(steady());
        let mut scheduler = RecordingScheduler {
            expiry: Some(Duration::ZERO),
            ..RecordingScheduler::default()
        };
        let mut streams = MockStreams {
            room: 500,
            ..MockStreams::default()
        };
        sender.on_connected(ms(0));
        sender.step(ms(0), &mut scheduler, &mut streams);
        assert_eq!(streams.written[0].len(), 500, "frame 0 half written");
        // 200 ms on, frame 0 (due at 150 ms) is past saving; frames 1 and 2 are captured.
        sender.step(ms(200), &mut scheduler, &mut streams);
        assert_eq!(streams.reset, [0].into());
        assert_eq!(streams.opened, 3);
        let summary = sender.summary();
        assert_eq!((summary.frames_sent, summary.cancelled_frames), (3, 1));
        streams.room = u64::MAX;
        sender.step(ms(210), &mut scheduler, &mut streams);
        assert_eq!(streams.finished, [1, 2].into());
        streams.acked.extend([0, 1, 2]);
        sender.step(ms(220), &mut scheduler, &mut streams);
        let (one, two) = (streams.written[1].len(), streams.written[2].len());
        assert_eq!(
            scheduler.acked,
            (one + two) as u64,
            "a cancelled frame is not acknowledged"
        );
        assert_eq!(scheduler.written, (500 + one + two) as u64);
    }

    #[test]
    fn frames_wait_for_the_peer_stream_limit_in_capture_order() {
        let mut sender = MediaSender::new(steady());
        let mut scheduler = RecordingScheduler::default();
        let mut streams = MockStreams {
            room: u64::MAX,
            stream_limit: Some(1),
            ..MockStreams::default()
        };
        sender.on_connected(ms(0));
        sender.step(ms(250), &mut scheduler, &mut streams);
        assert_eq!(scheduler.frames, 3);
        assert_eq!(streams.opened, 1);
        streams.stream_limit = Some(3);
        sender.step(ms(260), &mut scheduler, &mut streams);
        let seqs: Vec<u64> = streams
            .written
            .iter()
            .map(|bytes| FrameHeader::decode(bytes[..20].try_into().unwrap()).seq)
            .collect();
        assert_eq!(seqs, [0, 1, 2]);
    }

    fn params() -> MediaParams {
        MediaParams {
            bitrate_bps: 2_000_000,
            video: VideoModel {
                fps: 30,
                keyframe_interval: 60,
                keyframe_ratio: 5.0,
                jitter: 0.0,
            },
            deadline: Duration::from_millis(175),
            seed: 1,
            adaptive: false,
        }
    }

    #[test]
    fn frame_sizes_average_to_the_bitrate() {
        let model = params().video;
        let mut rng = Uniform::new(1, 0);
        let mut size = |model: &VideoModel, seq| model.frame_bytes(seq, 2_000_000, rng.next_f64());
        let total: u64 = (0..600).map(|seq| size(&model, seq)).sum();
        // 600 frames at 30 fps = 20 s at 2 Mbit/s = 5 MB.
        assert!((total as f64 - 5e6).abs() < 5e6 * 0.001, "{total}");
        let key = size(&model, 0) as f64;
        let p = size(&model, 1) as f64;
        assert!((key / p - 5.0).abs() < 0.01);
        let jittery = VideoModel {
            jitter: 0.2,
            ..params().video
        };
        let total: u64 = (0..6000).map(|seq| size(&jittery, seq)).sum();
        assert!((total as f64 - 5e7).abs() < 5e7 * 0.01, "{total}");
    }

    #[test]
    fn a_limited_frame_gives_what_it_did_not_use_to_the_rest_of_its_group() {
        let mut limited = LimitedFrames::default();
        // A group of 4: a keyframe drawn at 1 000 B under a 700 B limit, then 200 B P-frames
        // that get 100 B each of the 300 B the keyframe did not use.
        let sizes: Vec<u64> = [1_000, 200, 200, 200]
            .into_iter()
            .enumerate()
            .map(|(position, drawn)| limited.size((position as u64, 4), drawn, Some(700)))
            .collect();
        assert_eq!(sizes, [700, 300, 300, 300]);
        // Nothing is carried into the next group, and no limit changes nothing.
        assert_eq!(limited.size((0, 4), 1_000, None), 1_000);
        // A P-frame above the limit carries its excess on, split over the frames left.
        assert_eq!(limited.size((1, 4), 900, Some(700)), 700);
        assert_eq!(limited.size((2, 4), 200, Some(700)), 300);
        assert_eq!(limited.size((3, 4), 200, Some(700)), 300);
    }

    /// The sizes of the first `frames` frames of `params` captured under a scheduler whose
    /// frame limit is `limit`.
    fn sizes_under_limit(params: MediaParams, limit: Option<u64>, frames: u64) -> Vec<u64> {
        let mut sender = MediaSender::new(params);
        let mut scheduler = RecordingScheduler {
            frame_limit: limit,
            ..RecordingScheduler::default()
        };
        let mut streams = MockStreams {
            room: u64::MAX,
            ..MockStreams::default()
        };
        sender.on_connected(ms(0));
        let last = params.video.capture_offset(frames - 1);
        sender.step(last, &mut scheduler, &mut streams);
        streams
            .written
            .iter()
            .map(|bytes| u64::from(FrameHeader::decode(bytes[..20].try_into().unwrap()).size_bytes))
            .collect()
    }

    #[test]
    fn only_an_adaptive_source_holds_its_frames_to_the_limit_and_never_below_its_mean_frame() {
        // 2 Mbit/s at 30 fps: a mean frame of 8 333 B, predicted frames of 7 813 B and
        // keyframes of 39 063 B.
        let fixed = sizes_under_limit(params(), Some(20_000), 60);
        assert_eq!(
            fixed[0], 39_063,
            "a source that does not adapt ignores the limit"
        );
        let adaptive = MediaParams {
            adaptive: true,
            ..params()
        };
        let limited = sizes_under_limit(adaptive, Some(20_000), 60);
        assert_eq!(limited[0], 20_000);
        // The 19 063 B the keyframe did not use go to the 59 frames after it.
        let total: u64 = limited.iter().sum();
        assert!(total.abs_diff(fixed.iter().sum()) < 59, "{total}");
        // A limit below the mean frame is taken as the mean frame.
        assert_eq!(sizes_under_limit(adaptive, Some(1_000), 1)[0], 8_333);
    }

    #[test]
    fn a_frame_read_out_of_order_is_complete_at_its_end() {
        let header = FrameHeader {
            seq: 7,
            captured_at: Duration::from_millis(40),
            size_bytes: 1020,
        }
        .encode();
        let mut reader = FrameReader::default();
        let payload = pattern::chunk(0, 1000);
        reader.on_data(520, &payload[500..]).unwrap();
        assert_eq!(reader.header(), None);
        reader.on_data(0, &header).unwrap();
        reader.on_data(20, &payload[..500]).unwrap();
        assert_eq!(reader.on_finished().unwrap().seq, 7);
    }

    #[test]
    fn a_frame_stream_that_breaks_the_format_is_an_error() {
        let header = |size_bytes| {
            FrameHeader {
                seq: 0,
                captured_at: Duration::ZERO,
                size_bytes,
            }
            .encode()
        };
        let mut reader = FrameReader::default();
        assert_eq!(
            reader.on_data(0, &header(20)),
            Err(FrameError::TooSmall { size_bytes: 20 })
        );
        let mut reader = FrameReader::default();
        reader.on_data(0, &header(30)).unwrap();
        assert_eq!(
            reader.on_data(20, &pattern::chunk(0, 11)),
            Err(FrameError::TooLong { size_bytes: 30 })
        );
        assert_eq!(
            reader.on_data(20, &[0xff; 4]),
            Err(FrameError::Corrupt { offset: 0, len: 4 })
        );
        reader.on_data(20, &pattern::chunk(0, 5)).unwrap();
        assert_eq!(
            reader.on_finished(),
            Err(FrameError::Truncated {
                received_bytes: 25,
                size_bytes: 30
            })
        );
        assert_eq!(
            FrameReader::default().on_finished(),
            Err(FrameError::NoHeader { header_bytes: 0 })
        );
    }
}
