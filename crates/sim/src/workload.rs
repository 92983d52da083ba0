//! The applications at both ends of a flow, speaking the QUIC performance protocol
//! (draft-banks-quic-performance, ALPN "perf"): the client opens a bidirectional stream, sends
//! an 8-byte big-endian count of bytes it wants back, then its upload bytes, then FIN; the
//! server sends the requested bytes back and FIN. "Unlimited" asks for `u64::MAX`.
//!
//! Both sides keep their send buffers full (write until quinn says `Blocked`) so a sender is
//! never falsely application-limited, read without forcing order, and verify every byte
//! against [`crate::pattern`] by its offset.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use quinn_proto::{Connection, Dir, ReadError, ReadableError, StreamId, VarInt, WriteError};
use serde::Serialize;

use crate::pattern;
use crate::ranges::ReceivedRanges;

/// Bytes of the request header.
pub const REQUEST_HEADER_BYTES: u64 = 8;

/// Largest chunk handed to quinn per write (well below the pattern period).
const WRITE_CHUNK_BYTES: usize = 32 * 1024;

/// How much a flow downloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Download {
    /// A sized transfer (a file fetch).
    Bytes(u64),
    /// Bulk data until the run (or the flow's stop time) ends.
    Unlimited,
}

/// What one flow's client asks for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Workload {
    /// Bytes the server sends back.
    pub download: Option<Download>,
    /// Bytes the client sends after the header.
    pub upload_bytes: Option<u64>,
    /// A second identical request this long after the first completes (Kuhn "repeat").
    pub repeat_after: Option<Duration>,
    /// Close the connection at this time (since run start) if still transferring.
    pub stop_at: Option<Duration>,
}

impl Workload {
    fn requested_bytes(&self) -> u64 {
        match self.download {
            None => 0,
            Some(Download::Bytes(n)) => n,
            Some(Download::Unlimited) => u64::MAX,
        }
    }
}

/// Data a receiver got that is not what was sent: a bug in the stack or the simulator, never
/// acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("data mismatch on stream {stream} at offset {offset} ({len} bytes)")]
pub struct Corruption {
    /// Stream id.
    pub stream: u64,
    /// Offset of the bad chunk in the transfer.
    pub offset: u64,
    /// Its length.
    pub len: usize,
}

/// Progress of one request/response exchange, as the client sees it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Exchange {
    /// When the request stream was opened (run time).
    pub requested_at: Duration,
    /// When the last response byte was read, for sized downloads.
    pub completed_at: Option<Duration>,
    /// When the server had received the whole upload, if any.
    pub upload_completed_at: Option<Duration>,
    /// First time the in-order prefix reached each threshold (bytes → run time).
    pub reached: BTreeMap<u64, Duration>,
}

/// Feeds one direction of a stream from the pattern.
#[derive(Debug)]
struct PatternWriter {
    offset: u64,
    total: u64,
    finished: bool,
}

impl PatternWriter {
    fn new(total: u64) -> Self {
        Self {
            offset: 0,
            total,
            finished: false,
        }
    }

    /// Writes until the stream is full or everything is written; finishes the stream at the end.
    fn pump(&mut self, conn: &mut Connection, id: StreamId) {
        let mut stream = conn.send_stream(id);
        while self.offset < self.total {
            let len = (self.total - self.offset).min(WRITE_CHUNK_BYTES as u64) as usize;
            let mut chunks = [pattern::chunk(self.offset, len)];
            match stream.write_chunks(&mut chunks) {
                Ok(written) => self.offset += written.bytes as u64,
                Err(WriteError::Blocked) => return,
                Err(_) => {
                    // Stopped or closed: nothing more to send.
                    self.finished = true;
                    return;
                }
            }
        }
        if !self.finished {
            self.finished = true;
            let _ = stream.finish();
        }
    }
}

/// Reads one direction of a stream in any order and verifies it.
#[derive(Debug, Default)]
struct VerifyingReader {
    ranges: ReceivedRanges,
    /// Stream offset at which pattern data starts (8 on the server: after the header).
    data_start: u64,
    header: [u8; 8],
    header_received: u64,
    fin: bool,
}

impl VerifyingReader {
    fn with_header() -> Self {
        Self {
            data_start: REQUEST_HEADER_BYTES,
            ..Self::default()
        }
    }

    /// Pattern bytes received contiguously.
    fn prefix(&self) -> u64 {
        self.ranges.prefix()
    }

    fn requested(&self) -> Option<u64> {
        (self.header_received == REQUEST_HEADER_BYTES).then(|| u64::from_be_bytes(self.header))
    }

    /// Drains what quinn has and verifies it.
    fn read(&mut self, conn: &mut Connection, id: StreamId) -> Result<(), Corruption> {
        let mut stream = conn.recv_stream(id);
        let mut chunks = match stream.read(false) {
            Ok(chunks) => chunks,
            Err(ReadableError::ClosedStream) | Err(ReadableError::IllegalOrderedRead) => {
                return Ok(());
            }
        };
        let mut result = Ok(());
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    if let Err(e) = self.accept(id, chunk.offset, &chunk.bytes) {
                        result = Err(e);
                        break;
                    }
                }
                Ok(None) => {
                    self.fin = true;
                    break;
                }
                Err(ReadError::Blocked) => break,
                Err(ReadError::Reset(_)) => break,
            }
        }
        let _ = chunks.finalize();
        result
    }

    fn accept(&mut self, id: StreamId, offset: u64, bytes: &Bytes) -> Result<(), Corruption> {
        let end = offset + bytes.len() as u64;
        let mut data_offset = offset;
        let mut data: &[u8] = bytes;
        if offset < self.data_start {
            let header_end = end.min(self.data_start);
            let len = (header_end - offset) as usize;
            self.header[offset as usize..header_end as usize].copy_from_slice(&data[..len]);
            self.header_received += len as u64; // header chunks never repeat in unordered mode
            data = &data[len..];
            data_offset = header_end;
        }
        if data.is_empty() {
            return Ok(());
        }
        let pattern_offset = data_offset - self.data_start;
        if !pattern::matches(pattern_offset, data) {
            return Err(Corruption {
                stream: u64::from(VarInt::from(id)),
                offset: pattern_offset,
                len: data.len(),
            });
        }
        self.ranges
            .insert(pattern_offset, pattern_offset + data.len() as u64);
        Ok(())
    }
}

/// The client application of one flow.
#[derive(Debug)]
pub struct ClientApp {
    workload: Workload,
    thresholds: Vec<u64>,
    /// The open request: its stream, the upload writer and the response reader.
    active: Option<(StreamId, PatternWriter, VerifyingReader)>,
    /// Finished and in-progress exchanges, in order.
    pub exchanges: Vec<Exchange>,
    next_request_at: Option<Duration>,
    requests_left: u32,
    /// In-order download bytes of finished exchanges.
    finished_bytes: u64,
}

impl ClientApp {
    /// A client that will request `workload` once connected; `thresholds` are the transfer
    /// sizes whose arrival times are recorded.
    pub fn new(workload: Workload, thresholds: Vec<u64>) -> Self {
        let requests_left = if workload.repeat_after.is_some() {
            2
        } else {
            1
        };
        Self {
            workload,
            thresholds,
            active: None,
            exchanges: Vec::new(),
            next_request_at: None,
            requests_left,
            finished_bytes: 0,
        }
    }

    /// Time at which the client wants to act without any network event (a request).
    pub fn wakeup(&self) -> Option<Duration> {
        self.next_request_at
    }

    /// Whether every request has completed.
    pub fn is_done(&self) -> bool {
        self.requests_left == 0 && self.active.is_none() && self.next_request_at.is_none()
    }

    /// Download bytes received in order, over all exchanges.
    pub fn downloaded_bytes(&self) -> u64 {
        self.finished_bytes + self.active.as_ref().map_or(0, |(_, _, r)| r.prefix())
    }

    /// Called once the handshake completed: the first request goes out now.
    pub fn on_connected(&mut self, now: Duration) {
        self.next_request_at = Some(now);
    }

    /// Records that the server has the whole upload of exchange `index` (seen server-side).
    pub fn note_upload_complete(&mut self, index: usize, at: Duration) {
        if let Some(exchange) = self.exchanges.get_mut(index) {
            exchange.upload_completed_at.get_or_insert(at);
        }
    }

    /// Reacts to new data and sends what it can.
    pub fn drive(&mut self, conn: &mut Connection, now: Duration) -> Result<(), Corruption> {
        if self.active.is_none() && self.next_request_at.is_some_and(|t| t <= now) {
            self.next_request_at = None;
            self.open_request(conn, now);
        }
        let Some((id, writer, reader)) = &mut self.active else {
            return Ok(());
        };
        let id = *id;
        if !writer.finished {
            writer.pump(conn, id);
        }
        reader.read(conn, id)?;
        let exchange = self.exchanges.last_mut().expect("an exchange is active");
        let prefix = reader.prefix();
        for &threshold in &self.thresholds {
            if prefix >= threshold {
                exchange.reached.entry(threshold).or_insert(now);
            }
        }
        let upload_done = self.workload.upload_bytes.is_none_or(|n| n == 0)
            || exchange.upload_completed_at.is_some();
        // FIN read in unordered mode means every byte up to the final offset has arrived.
        if reader.fin && writer.finished && upload_done {
            exchange.completed_at = Some(now);
            self.finished_bytes += prefix;
            self.active = None;
            if self.requests_left > 0
                && let Some(gap) = self.workload.repeat_after
            {
                self.next_request_at = Some(now + gap);
            }
        }
        Ok(())
    }

    fn open_request(&mut self, conn: &mut Connection, now: Duration) {
        let Some(id) = conn.streams().open(Dir::Bi) else {
            return;
        };
        self.requests_left -= 1;
        let header = Bytes::copy_from_slice(&self.workload.requested_bytes().to_be_bytes());
        // The stream is new and empty: the 8-byte header always fits.
        let _ = conn.send_stream(id).write_chunks(&mut [header]);
        let mut writer = PatternWriter::new(self.workload.upload_bytes.unwrap_or(0));
        writer.pump(conn, id);
        self.exchanges.push(Exchange {
            requested_at: now,
            ..Exchange::default()
        });
        self.active = Some((id, writer, VerifyingReader::default()));
    }
}

/// One request the server is answering.
#[derive(Debug)]
struct ServerStream {
    reader: VerifyingReader,
    writer: Option<PatternWriter>,
    upload_done_reported: bool,
}

/// The server application of one flow: answers every request stream.
#[derive(Debug, Default)]
pub struct ServerApp {
    streams: BTreeMap<StreamId, ServerStream>,
    /// Upload bytes received in order, over all requests.
    pub upload_bytes_received: u64,
    /// Completed uploads, by request index, with the time the last byte arrived.
    pub uploads_completed: Vec<(usize, Duration)>,
    requests_seen: usize,
}

impl ServerApp {
    /// Accepts new streams, reads uploads, and keeps responses flowing.
    pub fn drive(&mut self, conn: &mut Connection, now: Duration) -> Result<(), Corruption> {
        while let Some(id) = conn.streams().accept(Dir::Bi) {
            self.streams.insert(
                id,
                ServerStream {
                    reader: VerifyingReader::with_header(),
                    writer: None,
                    upload_done_reported: false,
                },
            );
        }
        let mut finished = Vec::new();
        for (&id, stream) in &mut self.streams {
            let before = stream.reader.prefix();
            stream.reader.read(conn, id)?;
            self.upload_bytes_received += stream.reader.prefix() - before;
            if stream.writer.is_none()
                && let Some(requested) = stream.reader.requested()
            {
                stream.writer = Some(PatternWriter::new(requested));
                self.requests_seen += 1;
            }
            if stream.reader.fin
                && !stream.upload_done_reported
                && stream.reader.ranges.is_contiguous()
            {
                stream.upload_done_reported = true;
                if stream.reader.prefix() > 0 {
                    self.uploads_completed.push((self.requests_seen - 1, now));
                }
            }
            if let Some(writer) = &mut stream.writer {
                if !writer.finished {
                    writer.pump(conn, id);
                }
                if writer.finished && stream.upload_done_reported {
                    finished.push(id);
                }
            }
        }
        for id in finished {
            self.streams.remove(&id);
        }
        Ok(())
    }
}
