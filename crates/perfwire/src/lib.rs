//! perfwire — what travels on a perf connection, shared by the simulator's and the real-time
//! endpoints so both speak exactly the same protocol.
//!
//! The QUIC performance protocol (draft-banks-quic-performance, ALPN [`ALPN`]): the client
//! opens a bidirectional stream, sends an 8-byte big-endian count of the bytes it wants back
//! ([`Request`], [`REQUEST_HEADER_BYTES`]), then its upload bytes, then FIN; the server sends
//! the requested bytes back and FIN. Every payload byte is [`pattern`] at its offset, so a
//! receiver verifies data by offset even when it reads out of order, and [`ReceivedRanges`]
//! tracks what arrived.
//!
//! The media application's streams ([`media`]): one stream per frame, a 20-byte header then
//! pattern bytes; the synthetic video source's frame sizes; and the per-frame records and
//! delay percentiles its receivers report, so the simulator's and the real-time endpoints
//! send and measure the same way. A real-time client asks a server for media and bulk on one
//! connection through [`session`] (its own ALPN, next to perf's).
//!
//! No QUIC stack here: this crate is the format, not an endpoint.

pub mod media;
pub mod pattern;
mod ranges;
pub mod session;

pub use ranges::ReceivedRanges;

use serde::{Deserialize, Serialize};

/// ALPN of the QUIC performance protocol.
pub const ALPN: &[u8] = b"perf";

/// Bytes of the request header: the big-endian count of bytes the client wants back.
pub const REQUEST_HEADER_BYTES: u64 = 8;

/// How much a client asks the server to send back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// A sized transfer (a file fetch).
    Bytes(u64),
    /// Bulk data until the client closes the connection (`u64::MAX` on the wire).
    Unlimited,
}

impl Request {
    /// The header's value: the byte count, `u64::MAX` for unlimited.
    pub fn requested_bytes(self) -> u64 {
        match self {
            Request::Bytes(n) => n,
            Request::Unlimited => u64::MAX,
        }
    }

    /// The 8 header bytes the client sends first.
    pub fn header(self) -> [u8; REQUEST_HEADER_BYTES as usize] {
        self.requested_bytes().to_be_bytes()
    }

    /// The request a header announces.
    pub fn from_header(header: [u8; REQUEST_HEADER_BYTES as usize]) -> Request {
        match u64::from_be_bytes(header) {
            u64::MAX => Request::Unlimited,
            n => Request::Bytes(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        for request in [
            Request::Bytes(0),
            Request::Bytes(100_000_000),
            Request::Unlimited,
        ] {
            assert_eq!(Request::from_header(request.header()), request);
        }
        assert_eq!(Request::Bytes(258).header(), [0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(Request::Unlimited.header(), [0xff; 8]);
    }
}
