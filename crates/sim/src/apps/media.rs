//! The media application in the simulator: synthetic real-time video, one QUIC unidirectional
//! stream per frame (as in \[Ruehl2024\]), from the sender half to the receiver half.
//!
//! What the halves do is [`appcore::media`]'s, shared with the real-time endpoints: the
//! sender is [`appcore::media::MediaSender`] on quinn-proto's connection, the receiver reads
//! every frame stream in any order into a [`FrameReader`]. This module adds the simulator's
//! side: the [`MediaSpec`] a scenario builds, the receiver's records (each frame's one-way
//! delay, capture → last byte, and the frames later than the deadline) and the
//! [`MediaReport`].

use perfwire::Sender;
use std::collections::BTreeMap;
use std::time::Duration;

use appcore::media::{FrameError, FrameReader};
use perfwire::session::{AppParams, MediaParams, SentSummary};
use quinn_proto::{Connection, Dir, ReadError, ReadableError, StreamId, VarInt};
use serde::{Deserialize, Serialize};

use super::Sending;
use crate::app::{App, AppError, AppOutcome, AppSpec, Context};

/// [`AppSpec::kind`] of the media application.
pub const KIND: &str = "media";

pub use perfwire::media::{DelayPercentiles, FRAME_EXPIRED, FRAME_HEADER_BYTES, FrameRecord};

/// A synthetic video source and its deadline ([`MediaParams`], as the session protocol
/// carries them to the real-time endpoints) and the end that sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaSpec {
    /// The source: rate, frame rate, keyframes, jitter, deadline, seed, whether it follows
    /// the scheduler's target rate (down to [`MIN_BITRATE_SHARE`] of its own).
    pub params: MediaParams,
    /// The end that sends the frames.
    pub sender: Sender,
}

pub use appcore::media::MIN_BITRATE_SHARE;

impl AppSpec for MediaSpec {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn data_sender(&self) -> Sender {
        self.sender
    }

    fn build(&self) -> (Box<dyn App>, Box<dyn App>) {
        let spec = self.clone();
        let sender: Box<dyn App> = Box::new(Sending::new(
            appcore::sending_half(AppParams::Media(self.params)).expect("media has a sending half"),
            move |sent| sender_report(&spec, sent),
        ));
        let receiver: Box<dyn App> = Box::new(MediaReceiver::new(self.params.deadline));
        match self.sender {
            Sender::Server => (receiver, sender),
            Sender::Client => (sender, receiver),
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
    /// A keyframe every this many frames, frame 0 the first (0: not known, as in reports
    /// written before it was recorded).
    #[serde(default)]
    pub keyframe_interval: u32,
    /// Capture time of frame 0, seconds since the start of the run (frame `n` is captured
    /// `n / fps` later).
    #[serde(default)]
    pub first_capture_s: f64,
    /// Bytes the sender handed to the transport in each 100 ms of the run
    /// ([`super::WRITTEN_BUCKET`]): its sending rate over time. Empty where the sender's
    /// side was not recorded (a real-time upload's server summary).
    #[serde(default, rename = "written_bytes_per_100ms")]
    pub written_bytes_per_bucket: Vec<u64>,
}

impl MediaReport {
    /// The report of `app`, if it is a media application.
    pub fn of(app: &AppOutcome) -> Option<MediaReport> {
        if app.kind != KIND {
            return None;
        }
        serde_json::from_value(serde_json::Value::Object(app.report.clone())).ok()
    }

    /// The deadline as a duration (`deadline_ms`).
    pub fn deadline(&self) -> Duration {
        Duration::from_secs_f64(self.deadline_ms / 1e3)
    }

    /// When frame `seq` was captured: frame 0 at `first_capture_s`, one frame every
    /// 1 / `fps` after it. The one place that says when a frame that never arrived (refused at
    /// the source, cancelled, lost) was due, for the periods' counts and `frames.csv` alike.
    pub fn capture_time(&self, seq: u64) -> Duration {
        Duration::from_secs_f64(self.first_capture_s)
            + perfwire::media::capture_offset(self.fps, seq)
    }
}

/// The sending half's part of the [`MediaReport`].
fn sender_report(
    spec: &MediaSpec,
    sent: &SentSummary,
) -> serde_json::Map<String, serde_json::Value> {
    let mut report = serde_json::Map::new();
    report.insert("frames_sent".into(), sent.frames_sent.into());
    report.insert("cancelled_frames".into(), sent.cancelled_frames.into());
    report.insert("fps".into(), spec.params.video.fps.into());
    report.insert(
        "keyframe_interval".into(),
        spec.params.video.keyframe_interval.into(),
    );
    report.insert("bitrate_bps".into(), spec.params.bitrate_bps.into());
    report.insert(
        "first_capture_s".into(),
        sent.started_at.map_or(0.0, |t| t.as_secs_f64()).into(),
    );
    report.insert(
        "mean_bitrate_bps".into(),
        (sent.mean_bitrate_bps as f64).into(),
    );
    report
}

/// A frame stream being received.
#[derive(Debug, Default)]
struct FrameStream {
    reader: FrameReader,
    /// All of it was read (FIN).
    fin: bool,
    /// The sender cancelled the frame.
    reset: bool,
}

/// The receiving half: reads every frame stream, verifies it ([`FrameReader`]), records its
/// delay.
#[derive(Debug)]
struct MediaReceiver {
    deadline: Duration,
    streams: BTreeMap<StreamId, FrameStream>,
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

/// A frame stream's bytes that break the media format, as the simulator reports them.
fn frame_error(id: StreamId, error: FrameError) -> AppError {
    match error {
        FrameError::Corrupt { offset, len } => AppError::Corruption {
            stream: u64::from(VarInt::from(id)),
            offset,
            len,
        },
        other => AppError::Protocol(format!("media frame on stream {id}: {other}")),
    }
}

/// Reads what quinn-proto has of frame stream `id`, in any order.
fn read_frame(
    conn: &mut Connection,
    id: StreamId,
    frame: &mut FrameStream,
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
                if let Err(error) = frame.reader.on_data(chunk.offset, &chunk.bytes) {
                    result = Err(frame_error(id, error));
                    break;
                }
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
        self.streams.insert(id, FrameStream::default());
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Result<bool, AppError> {
        let (conn, now) = (&mut *cx.connection, cx.now);
        let mut done = Vec::new();
        for (&id, frame) in &mut self.streams {
            read_frame(conn, id, frame)?;
            if frame.fin {
                let header = frame.reader.on_finished().map_err(|e| frame_error(id, e))?;
                let bytes = u64::from(header.size_bytes);
                self.frames.push(FrameRecord {
                    seq: header.seq,
                    captured_at: header.captured_at,
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
        let (delays, late) = perfwire::media::frame_delays(&self.frames, self.deadline);
        let mut report = serde_json::Map::new();
        report.insert("frames_received".into(), self.frames.len().into());
        report.insert("frame_delay_ms".into(), serde_json::json!(delays));
        report.insert("late_frames".into(), late.into());
        report.insert(
            "deadline_ms".into(),
            (self.deadline.as_secs_f64() * 1e3).into(),
        );
        report.insert("frames".into(), serde_json::json!(self.frames));
        report
    }
}
