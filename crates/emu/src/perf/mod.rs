//! The QUIC performance protocol (draft-banks-quic-performance, ALPN "perf") on quinn + tokio:
//! the same wire format as the simulated flows. The client opens a bidirectional stream and
//! sends an 8-byte big-endian count of bytes it wants back, then its upload, then FIN; the
//! server sends the requested bytes and FIN. Data is the shared pattern, verified by offset.
//!
//! [`get`] is the client; `serve` answers the requests of one connection, which the
//! real-time server ([`crate::server`]) hands over when the client asked for ALPN "perf".

use std::time::Duration;

mod client;
mod serve;

pub use client::{ClientOptions, ClientReport, PerfRequests, RepeatReport, get};
pub(crate) use client::{Exchange, client_report, transfer};
pub use serve::{DEFAULT_HEADER_TIMEOUT, RequestCounts, RequestLimits};
pub(crate) use serve::{PerfService, PerfTally, SharedCounts, serve_perf, serve_requests};

/// Bytes per write of pattern data.
pub(crate) const WRITE_CHUNK_BYTES: usize = 32 * 1024;
/// Sampling period of the server's per-connection log and of the client's in-order bytes.
pub(crate) const LOG_INTERVAL: Duration = Duration::from_millis(100);
