//! The QUIC performance protocol (draft-banks-quic-performance, ALPN "perf") on quinn + tokio:
//! the same wire format as the simulated flows. The client opens a bidirectional stream and
//! sends an 8-byte big-endian count of bytes it wants back, then its upload, then FIN; the
//! server sends the requested bytes and FIN. Data is the shared pattern, verified by offset.
//!
//! [`get`] is the client; `serve` answers the requests of one connection, which the
//! real-time server ([`crate::server`]) hands over when the client asked for ALPN "perf".

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::Notify;

mod client;
mod serve;

pub use client::{ClientOptions, ClientReport, PerfRequests, RepeatReport, get};
pub(crate) use client::{Exchange, client_report, transfer};
pub use serve::{DEFAULT_HEADER_TIMEOUT, RequestCounts, RequestLimits};
pub(crate) use serve::{PerfService, PerfTally, SharedCounts, serve_perf, serve_requests};

/// Bytes per write of pattern data.
pub(crate) const WRITE_CHUNK_BYTES: usize = 32 * 1024;
/// When a perf writer may write, next to a session's scheduled applications at its end
/// ([`crate::apps::End::writing_turns`]): in each turn it writes what quinn takes at once, and a
/// write that would wait for room ends the turn. Alone on its connection (`none`) it writes
/// whenever quinn takes bytes.
#[derive(Clone, Default)]
pub(crate) struct WritingTurns {
    turns: Option<Arc<Notify>>,
    in_turn: bool,
}

impl WritingTurns {
    /// Writes whenever quinn takes bytes.
    pub(crate) fn none() -> WritingTurns {
        WritingTurns::default()
    }

    /// Writes in the turns `turns` gives (none if `None`).
    pub(crate) fn of(turns: Option<Arc<Notify>>) -> WritingTurns {
        WritingTurns {
            turns,
            in_turn: false,
        }
    }

    /// Hands quinn what it takes of `pending` (at least a byte), in a turn if there are turns.
    /// Cancel-safe, as quinn's `write_chunks`: `pending` keeps what was not taken.
    pub(crate) async fn write(
        &mut self,
        send: &mut quinn::SendStream,
        pending: &mut Bytes,
    ) -> Result<quinn::Written, quinn::WriteError> {
        let Some(turns) = &self.turns else {
            return send.write_chunks(std::slice::from_mut(pending)).await;
        };
        loop {
            if !self.in_turn {
                turns.notified().await;
                self.in_turn = true;
            }
            // A zero timeout polls the write once: what quinn takes now, or the turn is over.
            let write = send.write_chunks(std::slice::from_mut(pending));
            match tokio::time::timeout(Duration::ZERO, write).await {
                Ok(written) => return written,
                Err(_) => self.in_turn = false,
            }
        }
    }
}

/// Sampling period of the server's per-connection log and of the client's in-order bytes.
pub(crate) const LOG_INTERVAL: Duration = Duration::from_millis(100);
