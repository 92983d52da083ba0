//! Media and bulk on one real connection: the small control protocol a client uses to ask a
//! server for a session of applications (media, bulk, either direction) under one scheduler,
//! on ALPN [`ALPN`] next to the perf protocol's (a plain perf client never offers it, so the
//! perf protocol is untouched).
//!
//! On the first bidirectional stream the client opens (the control stream):
//!
//! 1. client → server: a [`SessionRequest`], framed as a 4-byte big-endian length then the
//!    body ([`SessionRequest::encode`]; at most [`MAX_REQUEST_BYTES`]);
//! 2. server → client: a [`Reply`]: accepted, with the server's clock reading, or refused,
//!    with the reason;
//! 3. client → server: the clock offset the client estimated ([`encode_offset`]), so either
//!    end can map the other's capture times to its own clock;
//! 4. the session runs (frames on unidirectional streams, bulk on a bidirectional stream of its
//!    own, see [`crate::media`] and [`crate::pattern`]; a perf application's requests on the
//!    client's further bidirectional streams, as on a perf connection) until the client
//!    finishes its side of the control stream; [`crate::routing`] keeps every stream's
//!    application unambiguous;
//! 5. server → client: a [`Summary`] of what the server sent and received (the receiver's
//!    account of an upload: bytes, frames, their delays), then FIN; the client closes the
//!    connection. The server takes the account when the client stops, after waiting the
//!    longest upload deadline, so a frame in flight at the stop is counted if it arrives in
//!    time and can only be late if it does not.
//!
//! Every decoder takes untrusted bytes: lengths are bounded before anything is allocated and
//! every value is range-checked, so a malformed message is an error naming the field, never a
//! panic.

use std::time::Duration;

use crate::Sender;
use crate::media::{DelayPercentiles, VideoModel};
use crate::routing::{StreamUse, check_routing};

/// ALPN of a media/bulk session (satquic's own; versioned: 2 added what the server received to
/// its summary, so that an upload's measurements reach the client).
pub const ALPN: &[u8] = b"satquic-apps/2";

/// Version byte at the start of a request body.
pub const VERSION: u8 = 1;

/// Largest request body accepted, bytes.
pub const MAX_REQUEST_BYTES: usize = 4096;

/// Most applications one session may carry.
pub const MAX_APPS: usize = 16;

/// Longest scheduler name, bytes.
pub const MAX_SCHEDULER_NAME_BYTES: usize = 64;

/// Longest session a server accepts.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

/// Largest refusal message, bytes.
pub const MAX_REASON_BYTES: usize = 1024;

/// A synthetic video source and its deadline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MediaParams {
    /// Mean rate, bit/s (frame bytes, headers included).
    pub bitrate_bps: u64,
    /// Frame sizes and capture times.
    pub video: VideoModel,
    /// A frame later than this (capture → last byte) is late.
    pub deadline: Duration,
    /// Seed of the frame-size jitter.
    pub seed: u64,
    /// Follow the scheduler's target bitrate.
    pub adaptive: bool,
}

/// Offered load on one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkParams {
    /// Offered load, bit/s; `None` is unlimited.
    pub rate_bps: Option<u64>,
    /// When the source starts, since the sender's session start.
    pub start: Duration,
}

/// A perf exchange next to the session's other applications: the client's bidirectional
/// streams after the control stream are perf requests ([`crate::Request`], answered as on a
/// perf connection). The requests say what they ask for; the session says which ways data
/// goes, so that the server can check the stream routing and account for the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfParams {
    /// The requests ask for data back (the server sends).
    pub downloads: bool,
    /// The requests carry an upload (the client sends).
    pub uploads: bool,
}

/// What an application is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AppParams {
    /// Synthetic video, one stream per frame.
    Media(MediaParams),
    /// One long stream of pattern bytes.
    Bulk(BulkParams),
    /// Perf requests on the session's connection (at most one per session; its
    /// [`SessionApp::sender`] is the server if it downloads, the client otherwise).
    Perf(PerfParams),
}

/// One application of a session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionApp {
    /// Which end sends its data.
    pub sender: Sender,
    /// What it is.
    pub params: AppParams,
}

/// What the client asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRequest {
    /// How the applications share the connection at each sending end (a `sched` scheduler
    /// name; the server checks it).
    pub scheduler: String,
    /// How long the client will run the session; the server stops sending a little after it
    /// in any case.
    pub duration: Duration,
    /// The applications, in order (their order on the connection and in reports).
    pub apps: Vec<SessionApp>,
}

/// A message that is not what the protocol allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The message ended early.
    #[error("{0}: message too short")]
    Truncated(&'static str),
    /// Bytes after the end of the message.
    #[error("{0} trailing bytes after the request")]
    Trailing(usize),
    /// A length beyond its limit.
    #[error("{field}: {len} bytes, at most {max} allowed")]
    TooLong {
        /// What was too long.
        field: &'static str,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A value out of range or unknown.
    #[error("{field}: {problem}")]
    Invalid {
        /// Which field.
        field: String,
        /// What is wrong.
        problem: String,
    },
}

fn invalid(field: impl Into<String>, problem: impl Into<String>) -> SessionError {
    SessionError::Invalid {
        field: field.into(),
        problem: problem.into(),
    }
}

/// Reads big-endian values off a byte slice, naming the field that ran short.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], SessionError> {
        if self.bytes.len() < n {
            return Err(SessionError::Truncated(field));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u8(&mut self, field: &'static str) -> Result<u8, SessionError> {
        Ok(self.take(1, field)?[0])
    }

    fn u32(&mut self, field: &'static str) -> Result<u32, SessionError> {
        let mut word = [0u8; 4];
        word.copy_from_slice(self.take(4, field)?);
        Ok(u32::from_be_bytes(word))
    }

    fn u64(&mut self, field: &'static str) -> Result<u64, SessionError> {
        let mut word = [0u8; 8];
        word.copy_from_slice(self.take(8, field)?);
        Ok(u64::from_be_bytes(word))
    }

    fn f64(&mut self, field: &'static str) -> Result<f64, SessionError> {
        Ok(f64::from_bits(self.u64(field)?))
    }
}

const KIND_MEDIA: u8 = 1;
const KIND_BULK: u8 = 2;
const KIND_PERF: u8 = 3;
/// Perf flags: bit 0 downloads, bit 1 uploads.
const PERF_DOWNLOADS: u8 = 1;
const PERF_UPLOADS: u8 = 2;

fn duration_from_micros(micros: u64) -> Duration {
    Duration::from_micros(micros)
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl SessionRequest {
    /// The request as sent: a 4-byte big-endian body length, then the body. Fails if the
    /// request itself breaks the protocol's limits (the same checks the server makes).
    pub fn encode(&self) -> Result<Vec<u8>, SessionError> {
        self.validate()?;
        let mut body = vec![VERSION];
        body.extend_from_slice(&micros(self.duration).to_be_bytes());
        body.push(self.scheduler.len() as u8);
        body.extend_from_slice(self.scheduler.as_bytes());
        body.push(self.apps.len() as u8);
        for app in &self.apps {
            let sender = match app.sender {
                Sender::Client => 0u8,
                Sender::Server => 1u8,
            };
            match app.params {
                AppParams::Media(m) => {
                    body.extend_from_slice(&[KIND_MEDIA, sender]);
                    body.extend_from_slice(&m.bitrate_bps.to_be_bytes());
                    body.extend_from_slice(&m.video.fps.to_be_bytes());
                    body.extend_from_slice(&m.video.keyframe_interval.to_be_bytes());
                    body.extend_from_slice(&m.video.keyframe_ratio.to_bits().to_be_bytes());
                    body.extend_from_slice(&m.video.jitter.to_bits().to_be_bytes());
                    body.extend_from_slice(&micros(m.deadline).to_be_bytes());
                    body.extend_from_slice(&m.seed.to_be_bytes());
                    body.push(u8::from(m.adaptive));
                }
                AppParams::Bulk(b) => {
                    body.extend_from_slice(&[KIND_BULK, sender]);
                    body.extend_from_slice(&b.rate_bps.unwrap_or(0).to_be_bytes());
                    body.extend_from_slice(&micros(b.start).to_be_bytes());
                }
                AppParams::Perf(p) => {
                    let flags = if p.downloads { PERF_DOWNLOADS } else { 0 }
                        | if p.uploads { PERF_UPLOADS } else { 0 };
                    body.extend_from_slice(&[KIND_PERF, sender, flags]);
                }
            }
        }
        let mut framed = (body.len() as u32).to_be_bytes().to_vec();
        framed.extend_from_slice(&body);
        Ok(framed)
    }

    /// The body length a 4-byte frame header announces, if within [`MAX_REQUEST_BYTES`].
    pub fn body_len(header: [u8; 4]) -> Result<usize, SessionError> {
        let len = u32::from_be_bytes(header) as usize;
        if len > MAX_REQUEST_BYTES {
            return Err(SessionError::TooLong {
                field: "request",
                len,
                max: MAX_REQUEST_BYTES,
            });
        }
        Ok(len)
    }

    /// The request a body describes, checked.
    pub fn decode(body: &[u8]) -> Result<SessionRequest, SessionError> {
        if body.len() > MAX_REQUEST_BYTES {
            return Err(SessionError::TooLong {
                field: "request",
                len: body.len(),
                max: MAX_REQUEST_BYTES,
            });
        }
        let mut r = Reader { bytes: body };
        let version = r.u8("version")?;
        if version != VERSION {
            return Err(invalid(
                "version",
                format!("{version}: this server speaks version {VERSION}"),
            ));
        }
        let duration = duration_from_micros(r.u64("duration")?);
        let name_len = usize::from(r.u8("scheduler")?);
        let name = r.take(name_len, "scheduler")?;
        let scheduler = std::str::from_utf8(name)
            .map_err(|_| invalid("scheduler", "not UTF-8"))?
            .to_owned();
        let count = usize::from(r.u8("apps")?);
        let mut apps = Vec::with_capacity(count.min(MAX_APPS));
        for i in 0..count {
            if i == MAX_APPS {
                return Err(SessionError::TooLong {
                    field: "apps",
                    len: count,
                    max: MAX_APPS,
                });
            }
            let kind = r.u8("app kind")?;
            let sender = match r.u8("app sender")? {
                0 => Sender::Client,
                1 => Sender::Server,
                other => return Err(invalid(format!("apps[{i}].sender"), format!("{other}"))),
            };
            let params = match kind {
                KIND_MEDIA => AppParams::Media(MediaParams {
                    bitrate_bps: r.u64("media bitrate")?,
                    video: VideoModel {
                        fps: r.u32("media fps")?,
                        keyframe_interval: r.u32("media keyframe interval")?,
                        keyframe_ratio: r.f64("media keyframe ratio")?,
                        jitter: r.f64("media jitter")?,
                    },
                    deadline: duration_from_micros(r.u64("media deadline")?),
                    seed: r.u64("media seed")?,
                    adaptive: match r.u8("media adaptive")? {
                        0 => false,
                        1 => true,
                        other => {
                            return Err(invalid(
                                format!("apps[{i}].adaptive"),
                                format!("{other}: expected 0 or 1"),
                            ));
                        }
                    },
                }),
                KIND_BULK => AppParams::Bulk(BulkParams {
                    rate_bps: match r.u64("bulk rate")? {
                        0 => None,
                        bps => Some(bps),
                    },
                    start: duration_from_micros(r.u64("bulk start")?),
                }),
                KIND_PERF => {
                    let flags = r.u8("perf flags")?;
                    if flags & !(PERF_DOWNLOADS | PERF_UPLOADS) != 0 {
                        return Err(invalid(
                            format!("apps[{i}].flags"),
                            format!("{flags:#04x}: only bits 0 (downloads) and 1 (uploads) exist"),
                        ));
                    }
                    AppParams::Perf(PerfParams {
                        downloads: flags & PERF_DOWNLOADS != 0,
                        uploads: flags & PERF_UPLOADS != 0,
                    })
                }
                other => {
                    return Err(invalid(
                        format!("apps[{i}].kind"),
                        format!("{other}: expected 1 (media), 2 (bulk) or 3 (perf)"),
                    ));
                }
            };
            apps.push(SessionApp { sender, params });
        }
        if !r.bytes.is_empty() {
            return Err(SessionError::Trailing(r.bytes.len()));
        }
        let request = SessionRequest {
            scheduler,
            duration,
            apps,
        };
        request.validate()?;
        Ok(request)
    }

    /// Checks every value against the protocol's limits (what the scenario format allows).
    pub fn validate(&self) -> Result<(), SessionError> {
        if self.scheduler.len() > MAX_SCHEDULER_NAME_BYTES {
            return Err(SessionError::TooLong {
                field: "scheduler",
                len: self.scheduler.len(),
                max: MAX_SCHEDULER_NAME_BYTES,
            });
        }
        if self.duration.is_zero() || self.duration > MAX_DURATION {
            return Err(invalid(
                "duration",
                format!("{:?}: expected above 0 and at most 24 h", self.duration),
            ));
        }
        if self.apps.is_empty() {
            return Err(invalid("apps", "a session needs at least one application"));
        }
        if self.apps.len() > MAX_APPS {
            return Err(SessionError::TooLong {
                field: "apps",
                len: self.apps.len(),
                max: MAX_APPS,
            });
        }
        for (i, app) in self.apps.iter().enumerate() {
            let field = |name: &str| format!("apps[{i}].{name}");
            match app.params {
                AppParams::Media(m) => {
                    crate::media::check_source(m.bitrate_bps, &m.video)
                        .and_then(|()| crate::media::check_deadline(m.deadline))
                        .map_err(|e| invalid(field(e.field), e.problem))?;
                }
                AppParams::Bulk(b) => {
                    if b.rate_bps == Some(0) {
                        return Err(invalid(field("rate"), "must be greater than zero"));
                    }
                    if b.start > MAX_DURATION {
                        return Err(invalid(field("start"), "at most 24 h"));
                    }
                }
                AppParams::Perf(p) => {
                    if !p.downloads && !p.uploads {
                        return Err(invalid(
                            field("flags"),
                            "a perf application needs a download and/or an upload",
                        ));
                    }
                    let sender = if p.downloads {
                        Sender::Server
                    } else {
                        Sender::Client
                    };
                    if app.sender != sender {
                        return Err(invalid(
                            field("sender"),
                            "a perf application's sender is the server if it downloads, the client if it only uploads",
                        ));
                    }
                    if let Some(first) = self.apps[..i]
                        .iter()
                        .position(|a| matches!(a.params, AppParams::Perf(_)))
                    {
                        return Err(invalid(
                            field("kind"),
                            format!(
                                "a second perf application next to apps[{first}]: a session runs one (the server's account of its bytes would be shared)"
                            ),
                        ));
                    }
                }
            }
        }
        let names: Vec<String> = (0..self.apps.len()).map(|i| format!("apps[{i}]")).collect();
        let uses = self.apps.iter().zip(&names).map(|(app, name)| {
            let used = match app.params {
                AppParams::Media(_) => StreamUse::Media { sender: app.sender },
                AppParams::Bulk(b) => StreamUse::Bulk {
                    sender: app.sender,
                    start: b.start,
                },
                AppParams::Perf(p) => StreamUse::Perf { uploads: p.uploads },
            };
            (name.as_str(), used)
        });
        check_routing(uses).map_err(|conflict| {
            let at = format!("apps[{}]", conflict.index);
            invalid(
                match conflict.key {
                    Some(key) => format!("{at}.{key}"),
                    None => at,
                },
                conflict.problem,
            )
        })
    }
}

/// The server's answer to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The session runs; `clock` is the server's session clock when it replied (its capture
    /// times count from the same zero).
    Accepted {
        /// Server clock at the reply.
        clock: Duration,
    },
    /// The request was refused; why, for the client to show.
    Refused {
        /// The reason (at most [`MAX_REASON_BYTES`] bytes of it travel).
        reason: String,
    },
}

/// Bytes of an accepted reply.
pub const ACCEPTED_REPLY_BYTES: usize = 9;

impl Reply {
    /// The reply as sent.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Reply::Accepted { clock } => {
                let mut out = vec![0u8];
                out.extend_from_slice(
                    &(clock.as_nanos().min(u128::from(u64::MAX)) as u64).to_be_bytes(),
                );
                out
            }
            Reply::Refused { reason } => {
                let mut end = reason.len().min(MAX_REASON_BYTES);
                while !reason.is_char_boundary(end) {
                    end -= 1;
                }
                let mut out = vec![1u8];
                out.extend_from_slice(&(end as u16).to_be_bytes());
                out.extend_from_slice(&reason.as_bytes()[..end]);
                out
            }
        }
    }

    /// The reply in `bytes` (the whole of what the server sent before its session data; at
    /// most `3 + MAX_REASON_BYTES`).
    pub fn decode(bytes: &[u8]) -> Result<Reply, SessionError> {
        let mut r = Reader { bytes };
        let reply = match r.u8("reply")? {
            0 => Reply::Accepted {
                clock: Duration::from_nanos(r.u64("reply clock")?),
            },
            1 => {
                let len = {
                    let mut word = [0u8; 2];
                    word.copy_from_slice(r.take(2, "reply reason")?);
                    usize::from(u16::from_be_bytes(word))
                };
                if len > MAX_REASON_BYTES {
                    return Err(SessionError::TooLong {
                        field: "reply reason",
                        len,
                        max: MAX_REASON_BYTES,
                    });
                }
                Reply::Refused {
                    reason: String::from_utf8_lossy(r.take(len, "reply reason")?).into_owned(),
                }
            }
            other => return Err(invalid("reply", format!("{other}: expected 0 or 1"))),
        };
        if !r.bytes.is_empty() {
            return Err(SessionError::Trailing(r.bytes.len()));
        }
        Ok(reply)
    }
}

/// Bytes of the clock-offset message.
pub const OFFSET_BYTES: usize = 8;

/// The client's estimate of (server clock − client clock), nanoseconds, as sent.
pub fn encode_offset(offset_ns: i64) -> [u8; OFFSET_BYTES] {
    offset_ns.to_be_bytes()
}

/// The offset in an [`encode_offset`] message.
pub fn decode_offset(bytes: [u8; OFFSET_BYTES]) -> i64 {
    i64::from_be_bytes(bytes)
}

/// What the server sent of one application (zero for applications the client sends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SentSummary {
    /// Media frames captured.
    pub frames_sent: u64,
    /// Media frames cancelled or dropped at the source because they could not arrive in time.
    pub cancelled_frames: u64,
    /// Bytes handed to the transport.
    pub written_bytes: u64,
    /// Mean rate frames were encoded at, bit/s.
    pub mean_bitrate_bps: u64,
    /// When the source started (media: frame 0's capture), on the sender's session clock.
    pub started_at: Option<Duration>,
}

/// What the server received of one application (zero for applications the server sends): the
/// receiver's account of an upload, which only the server can take.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ReceivedSummary {
    /// Application bytes received in order (media: bytes of complete frames).
    pub received_bytes: u64,
    /// Media frames received completely.
    pub frames_received: u64,
    /// Media frames received later than the deadline.
    pub late_frames: u64,
    /// Media frames' one-way delays (capture on the client's clock, mapped to the server's by
    /// the session's clock offset).
    pub frame_delay_ms: DelayPercentiles,
}

/// One application's entry in the server's [`Summary`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AppAccount {
    /// What the server sent (a download).
    pub sent: SentSummary,
    /// What the server received (an upload).
    pub received: ReceivedSummary,
}

/// Bytes of one application's entry in a [`Summary`]: five counters sent, three received and
/// four delay percentiles.
const SUMMARY_ENTRY_BYTES: usize = 12 * 8;

/// The server's account of a session, one entry per application in request order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// Per application.
    pub apps: Vec<AppAccount>,
}

/// Largest summary, bytes.
pub const MAX_SUMMARY_BYTES: usize = 1 + MAX_APPS * SUMMARY_ENTRY_BYTES;

impl Summary {
    /// The summary as sent.
    pub fn encode(&self) -> Vec<u8> {
        let apps = &self.apps[..self.apps.len().min(MAX_APPS)];
        let mut out = vec![apps.len() as u8];
        for AppAccount { sent, received } in apps {
            // 0: never started; else 1 + nanoseconds.
            let started = sent.started_at.map_or(0, |t| {
                u64::try_from(t.as_nanos())
                    .unwrap_or(u64::MAX - 1)
                    .saturating_add(1)
            });
            let delay = received.frame_delay_ms;
            for v in [
                sent.frames_sent,
                sent.cancelled_frames,
                sent.written_bytes,
                sent.mean_bitrate_bps,
                started,
                received.received_bytes,
                received.frames_received,
                received.late_frames,
                delay.p50.to_bits(),
                delay.p95.to_bits(),
                delay.p99.to_bits(),
                delay.max.to_bits(),
            ] {
                out.extend_from_slice(&v.to_be_bytes());
            }
        }
        out
    }

    /// The summary in `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<Summary, SessionError> {
        let mut r = Reader { bytes };
        let count = usize::from(r.u8("summary")?);
        if count > MAX_APPS {
            return Err(SessionError::TooLong {
                field: "summary",
                len: count,
                max: MAX_APPS,
            });
        }
        let mut apps = Vec::with_capacity(count);
        for index in 0..count {
            let sent = SentSummary {
                frames_sent: r.u64("summary")?,
                cancelled_frames: r.u64("summary")?,
                written_bytes: r.u64("summary")?,
                mean_bitrate_bps: r.u64("summary")?,
                started_at: match r.u64("summary")? {
                    0 => None,
                    n => Some(Duration::from_nanos(n - 1)),
                },
            };
            let received_bytes = r.u64("summary")?;
            let frames_received = r.u64("summary")?;
            let late_frames = r.u64("summary")?;
            let mut delay = || -> Result<f64, SessionError> {
                let ms = r.f64("summary")?;
                if !(ms.is_finite() && ms >= 0.0) {
                    return Err(invalid(
                        format!("summary apps[{index}].frame_delay_ms"),
                        format!("{ms}: expected a finite delay of at least 0"),
                    ));
                }
                Ok(ms)
            };
            let frame_delay_ms = DelayPercentiles {
                p50: delay()?,
                p95: delay()?,
                p99: delay()?,
                max: delay()?,
            };
            if late_frames > frames_received {
                return Err(invalid(
                    format!("summary apps[{index}].late_frames"),
                    format!("{late_frames}: more than the {frames_received} frames received"),
                ));
            }
            apps.push(AppAccount {
                sent,
                received: ReceivedSummary {
                    received_bytes,
                    frames_received,
                    late_frames,
                    frame_delay_ms,
                },
            });
        }
        if !r.bytes.is_empty() {
            return Err(SessionError::Trailing(r.bytes.len()));
        }
        Ok(Summary { apps })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> SessionRequest {
        SessionRequest {
            scheduler: "balancer".into(),
            duration: Duration::from_secs(30),
            apps: vec![
                SessionApp {
                    sender: Sender::Server,
                    params: AppParams::Media(MediaParams {
                        bitrate_bps: 2_000_000,
                        video: VideoModel {
                            fps: 30,
                            keyframe_interval: 60,
                            keyframe_ratio: 5.0,
                            jitter: 0.2,
                        },
                        deadline: Duration::from_millis(175),
                        seed: 7,
                        adaptive: true,
                    }),
                },
                SessionApp {
                    sender: Sender::Server,
                    params: AppParams::Bulk(BulkParams {
                        rate_bps: None,
                        start: Duration::from_secs(3),
                    }),
                },
                SessionApp {
                    sender: Sender::Client,
                    params: AppParams::Bulk(BulkParams {
                        rate_bps: Some(500_000),
                        start: Duration::ZERO,
                    }),
                },
            ],
        }
    }

    #[test]
    fn request_round_trips() {
        let framed = request().encode().unwrap();
        let len = SessionRequest::body_len(framed[..4].try_into().unwrap()).unwrap();
        assert_eq!(len, framed.len() - 4);
        assert_eq!(SessionRequest::decode(&framed[4..]).unwrap(), request());
    }

    #[test]
    fn every_truncation_and_junk_is_an_error_not_a_panic() {
        let framed = request().encode().unwrap();
        let body = &framed[4..];
        for end in 0..body.len() {
            assert!(SessionRequest::decode(&body[..end]).is_err(), "{end}");
        }
        let mut longer = body.to_vec();
        longer.push(0);
        assert_eq!(
            SessionRequest::decode(&longer),
            Err(SessionError::Trailing(1))
        );
        // Every single-byte corruption decodes to a valid request or an error.
        for i in 0..body.len() {
            for v in [0u8, 1, 2, 0x7f, 0xff] {
                let mut bad = body.to_vec();
                bad[i] = v;
                let _ = SessionRequest::decode(&bad);
            }
        }
        // A deterministic stream of junk bodies.
        let mut state = 0x1234_5678u32;
        for _ in 0..2000 {
            let len = (state % 200) as usize;
            let junk: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 17;
                    state ^= state << 5;
                    state as u8
                })
                .collect();
            let _ = SessionRequest::decode(&junk);
            let _ = Reply::decode(&junk);
            let _ = Summary::decode(&junk);
        }
        assert!(SessionRequest::body_len([0, 0, 0x10, 0x01]).is_err());
    }

    #[test]
    fn out_of_range_values_name_their_field() {
        let with = |f: &dyn Fn(&mut MediaParams)| {
            let mut r = request();
            if let AppParams::Media(m) = &mut r.apps[0].params {
                f(m);
            }
            r.validate().unwrap_err().to_string()
        };
        assert!(with(&|m| m.bitrate_bps = 0).contains("apps[0].bitrate"));
        assert!(with(&|m| m.video.fps = 0).contains("apps[0].fps"));
        assert!(with(&|m| m.video.jitter = f64::NAN).contains("apps[0].jitter"));
        assert!(with(&|m| m.video.keyframe_ratio = 0.5).contains("apps[0].keyframe_ratio"));
        assert!(with(&|m| m.deadline = Duration::ZERO).contains("apps[0].deadline"));
        let mut r = request();
        r.duration = Duration::ZERO;
        assert!(r.encode().unwrap_err().to_string().contains("duration"));
        let mut r = request();
        r.apps.clear();
        assert!(r.validate().unwrap_err().to_string().contains("apps"));
        let mut framed = request().encode().unwrap();
        framed[4] = 9;
        assert!(
            SessionRequest::decode(&framed[4..])
                .unwrap_err()
                .to_string()
                .contains("version")
        );
    }

    fn perf(downloads: bool, uploads: bool) -> SessionApp {
        SessionApp {
            sender: if downloads {
                Sender::Server
            } else {
                Sender::Client
            },
            params: AppParams::Perf(PerfParams { downloads, uploads }),
        }
    }

    #[test]
    fn perf_next_to_media_and_bulk_round_trips() {
        let mut r = request();
        r.apps.pop(); // the bulk upload: a client's bidirectional streams are perf's now
        r.apps.push(perf(true, true));
        let framed = r.encode().unwrap();
        assert_eq!(SessionRequest::decode(&framed[4..]).unwrap(), r);
        r.apps[2] = perf(false, true);
        let framed = r.encode().unwrap();
        assert_eq!(SessionRequest::decode(&framed[4..]).unwrap(), r);
    }

    #[test]
    fn sessions_whose_streams_the_receiver_cannot_tell_apart_are_refused() {
        let refused = |apps: Vec<SessionApp>, field: &str, words: &str| {
            let mut r = request();
            r.apps = apps;
            let error = r.validate().unwrap_err();
            let SessionError::Invalid { field: f, problem } = &error else {
                panic!("{error:?}");
            };
            assert_eq!(f, field, "{error}");
            assert!(problem.contains(words), "{error}");
            // `encode` checks as the server's `decode` does: nothing invalid is sent.
            assert_eq!(r.encode().unwrap_err(), error);
        };
        let base = request().apps;
        let (media_down, bulk_down, bulk_up) = (base[0], base[1], base[2]);
        refused(
            vec![bulk_up, perf(true, false)],
            "apps[1]",
            "bulk upload (\"apps[0]\") next to a perf application (\"apps[1]\")",
        );
        refused(
            vec![perf(true, false), media_down, perf(true, false)],
            "apps[2].kind",
            "second perf application next to apps[0]",
        );
        refused(
            vec![media_down, bulk_down, media_down],
            "apps[2].direction",
            "second media source the same way as \"apps[0]\"",
        );
        let mut backwards = bulk_down;
        if let AppParams::Bulk(b) = &mut backwards.params {
            b.start = Duration::from_secs(1);
        }
        refused(
            vec![bulk_down, backwards],
            "apps[1].start",
            "listed earlier the same way",
        );
        refused(
            vec![perf(false, false)],
            "apps[0].flags",
            "download and/or an upload",
        );
        let mut wrong_sender = perf(true, true);
        wrong_sender.sender = Sender::Client;
        refused(
            vec![wrong_sender],
            "apps[0].sender",
            "the server if it downloads",
        );
        // Unknown perf flag bits off the wire.
        let mut r = request();
        r.apps = vec![perf(true, false)];
        let mut framed = r.encode().unwrap();
        let last = framed.len() - 1;
        framed[last] = 0x04;
        let error = SessionRequest::decode(&framed[4..])
            .unwrap_err()
            .to_string();
        assert!(error.contains("apps[0].flags: 0x04"), "{error}");
    }

    #[test]
    fn replies_and_summaries_round_trip() {
        for reply in [
            Reply::Accepted {
                clock: Duration::from_micros(1234),
            },
            Reply::Refused {
                reason: "unknown scheduler \"x\"".into(),
            },
        ] {
            assert_eq!(Reply::decode(&reply.encode()).unwrap(), reply);
        }
        assert_eq!(
            Reply::Accepted {
                clock: Duration::ZERO
            }
            .encode()
            .len(),
            ACCEPTED_REPLY_BYTES
        );
        let long = Reply::Refused {
            reason: "é".repeat(2000),
        };
        let Reply::Refused { reason } = Reply::decode(&long.encode()).unwrap() else {
            panic!("refused");
        };
        assert!(reason.len() <= MAX_REASON_BYTES);
        let summary = Summary {
            apps: vec![
                AppAccount {
                    sent: SentSummary {
                        frames_sent: 900,
                        cancelled_frames: 3,
                        written_bytes: 7_500_000,
                        mean_bitrate_bps: 2_000_000,
                        started_at: Some(Duration::ZERO),
                    },
                    received: ReceivedSummary::default(),
                },
                AppAccount {
                    sent: SentSummary::default(),
                    received: ReceivedSummary {
                        received_bytes: 3_000_000,
                        frames_received: 880,
                        late_frames: 4,
                        frame_delay_ms: DelayPercentiles {
                            p50: 301.5,
                            p95: 420.25,
                            p99: 610.0,
                            max: 702.125,
                        },
                    },
                },
            ],
        };
        let encoded = summary.encode();
        assert_eq!(Summary::decode(&encoded).unwrap(), summary);
        assert!(encoded.len() <= MAX_SUMMARY_BYTES);
        // A delay that is not a delay, or more late frames than frames, names the entry.
        let p50_at = 1 + SUMMARY_ENTRY_BYTES + 8 * 8;
        for (at, value, field) in [
            (p50_at, f64::NAN.to_bits(), "apps[1].frame_delay_ms"),
            (p50_at, (-1.0f64).to_bits(), "apps[1].frame_delay_ms"),
            (1 + SUMMARY_ENTRY_BYTES + 7 * 8, 881, "apps[1].late_frames"),
        ] {
            let mut bad = encoded.clone();
            bad[at..at + 8].copy_from_slice(&value.to_be_bytes());
            let error = Summary::decode(&bad).unwrap_err().to_string();
            assert!(error.contains(field), "{error}");
        }
        assert_eq!(decode_offset(encode_offset(-42)), -42);
    }
}
