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
pub mod routing;
pub mod session;

pub use ranges::ReceivedRanges;

use serde::{Deserialize, Serialize};

/// ALPN of the QUIC performance protocol.
pub const ALPN: &[u8] = b"perf";

/// Bytes of the request header: the big-endian count of bytes the client wants back.
pub const REQUEST_HEADER_BYTES: u64 = 8;

/// Which end of a connection sends an application's data: the one answer to "upload or
/// download?" for scenario files, the simulator's applications, session requests and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sender {
    /// The end that connects (an upload).
    Client,
    /// The end that accepts (a download).
    Server,
}

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

/// Why a perf server refused or abandoned a request stream. Its [`code`](Self::code) is the
/// application error code of the server's RESET_STREAM (and STOP_SENDING) on that stream, so a
/// client can name the problem ([`RequestError::from_code`]). The draft defines no codes; these
/// are satquic's, chosen away from 0 (which quinn uses when a stream is merely dropped).
///
/// A request for an absurd size is not an error: any 8-byte count is a valid request, the
/// server's memory does not depend on it (data is generated per chunk and flow control bounds
/// what is buffered), and the client ends an over-long response by STOP_SENDING or by closing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, thiserror::Error)]
pub enum RequestError {
    /// The client finished the stream before the 8-byte size header was complete.
    #[error("truncated request: the stream ended before the 8-byte size header was complete")]
    TruncatedHeader,
    /// The size header did not arrive in time (a stream opened and never, or only partly,
    /// written); the server gives the stream back instead of holding it.
    #[error("request header timeout: the 8-byte size header did not arrive in time")]
    HeaderTimeout,
    /// The client reset its request stream (RESET_STREAM) in the header or the upload; the
    /// server abandons the response.
    #[error("request reset: the client reset the request stream, so the response was abandoned")]
    RequestReset,
    /// The client opened a unidirectional stream; perf requests are bidirectional streams.
    #[error("unexpected unidirectional stream: perf requests are bidirectional streams")]
    UnidirectionalStream,
}

impl RequestError {
    /// Every error, in code order.
    pub const ALL: [RequestError; 4] = [
        RequestError::TruncatedHeader,
        RequestError::HeaderTimeout,
        RequestError::RequestReset,
        RequestError::UnidirectionalStream,
    ];

    /// The application error code on the wire.
    pub fn code(self) -> u64 {
        match self {
            RequestError::TruncatedHeader => 0x5051,
            RequestError::HeaderTimeout => 0x5052,
            RequestError::RequestReset => 0x5053,
            RequestError::UnidirectionalStream => 0x5054,
        }
    }

    /// The error a code stands for, if it is one of these.
    pub fn from_code(code: u64) -> Option<RequestError> {
        RequestError::ALL.into_iter().find(|e| e.code() == code)
    }

    /// A stream error code as a client reports it: the problem if the code is known, else the
    /// bare number.
    pub fn describe(code: u64) -> String {
        match RequestError::from_code(code) {
            Some(e) => format!("{e} (error code {code:#x})"),
            None => format!("error code {code:#x}"),
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

    #[test]
    fn request_error_codes_round_trip_and_are_distinct() {
        for e in RequestError::ALL {
            assert_eq!(RequestError::from_code(e.code()), Some(e));
            assert!(RequestError::describe(e.code()).starts_with(&e.to_string()));
        }
        assert_eq!(RequestError::from_code(0), None);
        assert_eq!(RequestError::describe(7), "error code 0x7");
    }
}
