//! The perf application: the QUIC performance protocol ([`perfwire`]) on one bidirectional
//! stream per request — a file download, an upload, a repeated fetch, or unlimited bulk data.
//!
//! Both sides keep their send buffers full (write until quinn says `Blocked`) so a sender is
//! never falsely application-limited, read without forcing order, and verify every byte
//! against [`perfwire::pattern`] by its offset.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use perfwire::{REQUEST_HEADER_BYTES, ReceivedRanges, Request, Sender, pattern};
use quinn_proto::{Connection, Dir, ReadError, ReadableError, StreamId, VarInt, WriteError};
use serde::{Deserialize, Serialize};

use crate::app::{App, AppError, AppOutcome, AppSpec, Context};

/// Largest chunk handed to quinn per write (well below the pattern period).
const WRITE_CHUNK_BYTES: usize = 32 * 1024;

/// What a perf client asks for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PerfSpec {
    /// Bytes the server sends back, if any.
    pub download: Option<Request>,
    /// Bytes the client sends after the header, if any.
    pub upload_bytes: Option<u64>,
    /// A second identical request this long after the first completes (draft-kuhn "repeat").
    pub repeat_after: Option<Duration>,
    /// Transfer sizes whose arrival times are recorded (e.g. 2 MB, 10 MB).
    pub time_to_bytes: Vec<u64>,
}

impl AppSpec for PerfSpec {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn data_sender(&self) -> Sender {
        if self.download.is_some() {
            Sender::Server
        } else {
            Sender::Client
        }
    }

    fn build(&self) -> (Box<dyn App>, Box<dyn App>) {
        let uploads = Rc::new(RefCell::new(Vec::new()));
        (
            Box::new(PerfClient::new(self.clone(), uploads.clone())),
            Box::new(PerfServer::new(uploads)),
        )
    }
}

/// [`AppSpec::kind`] of the perf application.
pub const KIND: &str = "perf";

/// Progress of one request/response exchange, as the client sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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

/// The perf application's measurements, as its [`AppOutcome::report`] carries them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PerfReport {
    /// Request/response exchanges, in order (two with a repeat).
    pub exchanges: Vec<Exchange>,
    /// Download bytes the client received in order, all exchanges.
    pub downloaded_bytes: u64,
    /// Upload bytes the server received in order, all exchanges.
    pub uploaded_bytes: u64,
}

impl PerfReport {
    /// The report of `app`, if it is a perf application.
    pub fn of(app: &AppOutcome) -> Option<PerfReport> {
        if app.kind != KIND {
            return None;
        }
        serde_json::from_value(serde_json::Value::Object(app.report.clone())).ok()
    }

    /// The outcome of a perf application measured elsewhere (the real-time endpoints), in the
    /// shape the simulator gives it. `received_bytes` counts the data direction's bytes.
    pub fn into_outcome(self, name: &str, received_bytes: u64) -> AppOutcome {
        let busy_periods = self
            .exchanges
            .iter()
            .map(|e| (e.requested_at, e.completed_at))
            .collect();
        let report = match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => unreachable!("a struct serializes to an object"),
        };
        AppOutcome {
            name: name.to_owned(),
            kind: KIND.to_owned(),
            received_bytes,
            busy_periods,
            report,
        }
    }
}

/// Uploads the server has received completely: (request index, time of the last byte). The
/// measurement harness shares it between the halves so the client's exchange records it.
type UploadLog = Rc<RefCell<Vec<(usize, Duration)>>>;

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
pub(crate) struct VerifyingReader {
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
    pub(crate) fn prefix(&self) -> u64 {
        self.ranges.prefix()
    }

    fn request(&self) -> Option<Request> {
        (self.header_received == REQUEST_HEADER_BYTES).then(|| Request::from_header(self.header))
    }

    /// Drains what quinn has and verifies it.
    pub(crate) fn read(&mut self, conn: &mut Connection, id: StreamId) -> Result<(), AppError> {
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

    fn accept(&mut self, id: StreamId, offset: u64, bytes: &Bytes) -> Result<(), AppError> {
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
            return Err(AppError::Corruption {
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

/// The client half: sends requests (and uploads), reads and verifies responses.
#[derive(Debug)]
struct PerfClient {
    spec: PerfSpec,
    /// The open request: its stream, the upload writer and the response reader.
    active: Option<(StreamId, PatternWriter, VerifyingReader)>,
    /// Finished and in-progress exchanges, in order.
    exchanges: Vec<Exchange>,
    next_request_at: Option<Duration>,
    requests_left: u32,
    /// In-order download bytes of finished exchanges.
    finished_bytes: u64,
    uploads: UploadLog,
    uploads_noted: usize,
}

impl PerfClient {
    fn new(spec: PerfSpec, uploads: UploadLog) -> Self {
        let requests_left = if spec.repeat_after.is_some() { 2 } else { 1 };
        Self {
            spec,
            active: None,
            exchanges: Vec::new(),
            next_request_at: None,
            requests_left,
            finished_bytes: 0,
            uploads,
            uploads_noted: 0,
        }
    }

    fn downloaded_bytes(&self) -> u64 {
        self.finished_bytes + self.active.as_ref().map_or(0, |(_, _, r)| r.prefix())
    }

    fn open_request(&mut self, conn: &mut Connection, now: Duration) {
        let Some(id) = conn.streams().open(Dir::Bi) else {
            return;
        };
        self.requests_left -= 1;
        let request = self.spec.download.unwrap_or(Request::Bytes(0));
        let header = Bytes::copy_from_slice(&request.header());
        // The stream is new and empty: the 8-byte header always fits.
        let _ = conn.send_stream(id).write_chunks(&mut [header]);
        let mut writer = PatternWriter::new(self.spec.upload_bytes.unwrap_or(0));
        writer.pump(conn, id);
        self.exchanges.push(Exchange {
            requested_at: now,
            ..Exchange::default()
        });
        self.active = Some((id, writer, VerifyingReader::default()));
    }
}

impl App for PerfClient {
    fn writes_outside_the_scheduler(&self) -> bool {
        true
    }

    fn on_connected(&mut self, now: Duration) {
        self.next_request_at = Some(now);
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Result<bool, AppError> {
        let (conn, now) = (&mut *cx.connection, cx.now);
        // Uploads the server has fully received complete on the client's books.
        for &(index, at) in &self.uploads.borrow()[self.uploads_noted..] {
            if let Some(exchange) = self.exchanges.get_mut(index) {
                exchange.upload_completed_at.get_or_insert(at);
            }
        }
        self.uploads_noted = self.uploads.borrow().len();
        if self.active.is_none() && self.next_request_at.is_some_and(|t| t <= now) {
            self.next_request_at = None;
            self.open_request(conn, now);
        }
        let Some((id, writer, reader)) = &mut self.active else {
            return Ok(false);
        };
        let id = *id;
        if !writer.finished {
            writer.pump(conn, id);
        }
        reader.read(conn, id)?;
        let exchange = self.exchanges.last_mut().expect("an exchange is active");
        let prefix = reader.prefix();
        for &threshold in &self.spec.time_to_bytes {
            if prefix >= threshold {
                exchange.reached.entry(threshold).or_insert(now);
            }
        }
        let upload_done =
            self.spec.upload_bytes.is_none_or(|n| n == 0) || exchange.upload_completed_at.is_some();
        // FIN read in unordered mode means every byte up to the final offset has arrived.
        if reader.fin && writer.finished && upload_done {
            exchange.completed_at = Some(now);
            self.finished_bytes += prefix;
            self.active = None;
            if self.requests_left > 0
                && let Some(gap) = self.spec.repeat_after
            {
                self.next_request_at = Some(now + gap);
            }
        }
        Ok(false)
    }

    fn wakeup(&self) -> Option<Duration> {
        self.next_request_at
    }

    fn is_finished(&self) -> bool {
        self.requests_left == 0 && self.active.is_none() && self.next_request_at.is_none()
    }

    fn received_bytes(&self) -> u64 {
        self.downloaded_bytes()
    }

    fn busy_periods(&self) -> Vec<(Duration, Option<Duration>)> {
        self.exchanges
            .iter()
            .map(|e| (e.requested_at, e.completed_at))
            .collect()
    }

    fn report(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut report = serde_json::Map::new();
        report.insert("exchanges".into(), serde_json::json!(self.exchanges));
        report.insert("downloaded_bytes".into(), self.downloaded_bytes().into());
        report
    }
}

/// One request the server is answering.
#[derive(Debug)]
struct ServerStream {
    reader: VerifyingReader,
    writer: Option<PatternWriter>,
    upload_done_reported: bool,
}

/// The server half: answers every request stream.
#[derive(Debug)]
struct PerfServer {
    streams: BTreeMap<StreamId, ServerStream>,
    /// Upload bytes received in order, over all requests.
    upload_bytes_received: u64,
    uploads: UploadLog,
    requests_seen: usize,
}

impl PerfServer {
    fn new(uploads: UploadLog) -> Self {
        Self {
            streams: BTreeMap::new(),
            upload_bytes_received: 0,
            uploads,
            requests_seen: 0,
        }
    }
}

impl App for PerfServer {
    fn writes_outside_the_scheduler(&self) -> bool {
        true
    }

    fn accepts(&self, dir: Dir) -> bool {
        dir == Dir::Bi
    }

    fn adopt_stream(&mut self, id: StreamId, _now: Duration) {
        self.streams.insert(
            id,
            ServerStream {
                reader: VerifyingReader::with_header(),
                writer: None,
                upload_done_reported: false,
            },
        );
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Result<bool, AppError> {
        let (conn, now) = (&mut *cx.connection, cx.now);
        let mut finished = Vec::new();
        let mut upload_completed = false;
        for (&id, stream) in &mut self.streams {
            let before = stream.reader.prefix();
            stream.reader.read(conn, id)?;
            self.upload_bytes_received += stream.reader.prefix() - before;
            if stream.writer.is_none()
                && let Some(request) = stream.reader.request()
            {
                stream.writer = Some(PatternWriter::new(request.requested_bytes()));
                self.requests_seen += 1;
            }
            if stream.reader.fin
                && !stream.upload_done_reported
                && stream.reader.ranges.is_contiguous()
            {
                stream.upload_done_reported = true;
                if stream.reader.prefix() > 0 {
                    self.uploads
                        .borrow_mut()
                        .push((self.requests_seen - 1, now));
                    upload_completed = true;
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
        Ok(upload_completed)
    }

    fn received_bytes(&self) -> u64 {
        self.upload_bytes_received
    }

    fn report(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut report = serde_json::Map::new();
        report.insert("uploaded_bytes".into(), self.upload_bytes_received.into());
        report
    }
}
