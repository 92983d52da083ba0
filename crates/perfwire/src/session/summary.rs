//! The server's account of a session (step 5 of the protocol): per application what it sent
//! and what it received, so that an upload's measurements, which only the receiving server can
//! take, reach the client.

use std::time::Duration;

use super::{MAX_APPS, Reader, SessionError, invalid};
use crate::media::DelayPercentiles;

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
pub(super) const SUMMARY_ENTRY_BYTES: usize = 12 * 8;

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
