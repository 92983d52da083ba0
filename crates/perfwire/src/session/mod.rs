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
use crate::media::VideoModel;
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

mod summary;
pub use summary::{AppAccount, MAX_SUMMARY_BYTES, ReceivedSummary, SentSummary, Summary};

#[cfg(test)]
mod tests;
