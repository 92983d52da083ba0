//! The server's side of perf: every bidirectional stream of a connection is a request,
//! answered with pattern bytes while its upload is drained; malformed or abandoned requests
//! are refused with a [`RequestError`] code and counted ([`RequestCounts`]).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use perfwire::{REQUEST_HEADER_BYTES, Request, RequestError, pattern};
use quinn::VarInt;
use tokio::sync::Notify;

use super::{WRITE_CHUNK_BYTES, WritingTurns};

/// How long a perf request stream may take to deliver its 8-byte size header before the server
/// gives the stream back ([`RequestError::HeaderTimeout`]). A client that opens streams and
/// never writes them would otherwise hold them (and their share of the connection's stream
/// limit) for as long as it keeps the connection alive.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Limits the perf server applies to each request stream, next to the transport's own
/// (stream count: `max_concurrent_bidi_streams`, buffered bytes: the receive windows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLimits {
    /// Longest wait for a stream's complete size header, from the moment the server sees the
    /// stream.
    pub header_timeout: Duration,
}

impl Default for RequestLimits {
    fn default() -> Self {
        RequestLimits {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
        }
    }
}

/// What the perf server did with request streams so far, over all connections
/// ([`crate::server::Server::requests`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestCounts {
    /// Streams being handled right now (header, upload or response under way): bounded by the
    /// connections' stream limits, and back to 0 when every request has ended.
    pub open_streams: u64,
    /// Responses sent in full (FIN) or ended by the client (STOP_SENDING, connection closed).
    pub ended: u64,
    /// Streams refused or abandoned, by reason (each also logged on stderr and sent to the
    /// client as the stream's error code).
    pub refused: BTreeMap<RequestError, u64>,
}

pub(crate) type SharedCounts = Arc<std::sync::Mutex<RequestCounts>>;

/// Where a connection's perf requests are counted: the server's counts over all connections
/// and the server's connection number in its log lines.
#[derive(Clone)]
pub(crate) struct PerfService {
    /// The server's connection number.
    pub id: u64,
    /// Per-stream limits.
    pub limits: RequestLimits,
    /// The server's counts.
    pub counts: SharedCounts,
    /// In a session whose end also runs scheduled applications, when responses may be
    /// written ([`WritingTurns`]); `None`: whenever quinn takes bytes.
    pub turns: Option<Arc<Notify>>,
}

/// Bytes of one connection's perf requests: what the server's account of a session reports
/// for its perf application.
#[derive(Debug, Default)]
pub(crate) struct PerfTally {
    /// Response bytes handed to quinn.
    pub written_bytes: AtomicU64,
    /// Upload bytes received in order, all requests.
    pub uploaded_bytes: AtomicU64,
}

/// The perf protocol: every bidirectional stream is a request; a unidirectional stream is
/// refused ([`RequestError::UnidirectionalStream`]), so its data is neither read nor kept.
pub(crate) async fn serve_perf(connection: quinn::Connection, service: PerfService) {
    let uni = {
        let (connection, service) = (connection.clone(), service.clone());
        tokio::spawn(async move {
            while let Ok(mut recv) = connection.accept_uni().await {
                let error = RequestError::UnidirectionalStream;
                let stream = recv.id();
                let _ = recv.stop(VarInt::from_u64(error.code()).expect("small code"));
                refuse(&service.counts, service.id, stream, error, "stopped it");
            }
        })
    };
    serve_requests(connection, service, Arc::new(PerfTally::default())).await;
    uni.abort();
}

/// Answers every bidirectional stream the client opens from now on as a perf request, until
/// the connection ends: a perf connection's whole protocol, or a session's perf application
/// (after its control stream), `tally` counting the bytes.
pub(crate) async fn serve_requests(
    connection: quinn::Connection,
    service: PerfService,
    tally: Arc<PerfTally>,
) {
    while let Ok((send, recv)) = connection.accept_bi().await {
        tokio::spawn(serve_stream(send, recv, service.clone(), tally.clone()));
    }
}

/// Counts and logs a refused or abandoned request stream.
fn refuse(
    counts: &SharedCounts,
    connection: u64,
    stream: quinn::StreamId,
    error: RequestError,
    action: &str,
) {
    *counts
        .lock()
        .expect("no poisoning")
        .refused
        .entry(error)
        .or_default() += 1;
    eprintln!(
        "perf server: connection {connection}, stream {stream}: {error}; {action} with error code {:#x}",
        error.code()
    );
}

/// Keeps [`RequestCounts::open_streams`] right however a stream's handler ends.
struct OpenStream(SharedCounts);

impl OpenStream {
    fn new(counts: SharedCounts) -> OpenStream {
        counts.lock().expect("no poisoning").open_streams += 1;
        OpenStream(counts)
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.lock().expect("no poisoning").open_streams -= 1;
    }
}

/// How reading a request's size header ended, if not with the header.
enum HeaderFault {
    /// The request is malformed or abandoned: refuse it with this error.
    Refused(RequestError),
    /// The connection is gone; there is nobody to tell.
    Gone,
}

/// Reads the 8-byte size header within `timeout`.
async fn read_header(
    recv: &mut quinn::RecvStream,
    timeout: Duration,
) -> Result<[u8; REQUEST_HEADER_BYTES as usize], HeaderFault> {
    let mut header = [0u8; REQUEST_HEADER_BYTES as usize];
    let deadline = tokio::time::Instant::now() + timeout;
    let mut filled = 0;
    while filled < header.len() {
        // `read` is cancel-safe: a timeout loses no bytes.
        match tokio::time::timeout_at(deadline, recv.read(&mut header[filled..])).await {
            Err(_) => return Err(HeaderFault::Refused(RequestError::HeaderTimeout)),
            Ok(Ok(Some(n))) => filled += n,
            Ok(Ok(None)) => return Err(HeaderFault::Refused(RequestError::TruncatedHeader)),
            Ok(Err(quinn::ReadError::Reset(_))) => {
                return Err(HeaderFault::Refused(RequestError::RequestReset));
            }
            Ok(Err(_)) => return Err(HeaderFault::Gone),
        }
    }
    Ok(header)
}

/// Reads the upload after the header until FIN: bytes received and whether they were the
/// satquic pattern; `Err` when the client reset the stream. A peer whose upload is not the
/// pattern (another perf implementation) is still drained and answered.
async fn drain_upload(
    mut recv: quinn::RecvStream,
    tally: Arc<PerfTally>,
) -> Result<(u64, bool), RequestError> {
    let (mut received, mut ours) = (0u64, true);
    loop {
        match recv.read_chunk(usize::MAX, true).await {
            Ok(Some(chunk)) => {
                ours = ours && pattern::matches(chunk.offset - REQUEST_HEADER_BYTES, &chunk.bytes);
                received = chunk.offset - REQUEST_HEADER_BYTES + chunk.bytes.len() as u64;
                tally
                    .uploaded_bytes
                    .fetch_add(chunk.bytes.len() as u64, Ordering::Relaxed);
            }
            Ok(None) => return Ok((received, ours)),
            Err(quinn::ReadError::Reset(_)) => return Err(RequestError::RequestReset),
            // The connection is gone; the response's writes fail too.
            Err(_) => return Ok((received, ours)),
        }
    }
}

/// One request: the size header (within `limits.header_timeout`), then the response while the
/// upload is drained. A malformed or abandoned request is refused: RESET_STREAM and
/// STOP_SENDING with its [`RequestError`] code, a log line, a count. Memory per stream is
/// constant: the response is generated chunk by chunk and quinn buffers at most the send
/// window, whatever size was asked for.
async fn serve_stream(
    mut send: quinn::SendStream,
    mut recv: quinn::RecvStream,
    service: PerfService,
    tally: Arc<PerfTally>,
) {
    let PerfService {
        id: connection,
        limits,
        counts,
        turns,
    } = service;
    let _open = OpenStream::new(counts.clone());
    let stream = send.id();
    let refuse_with = |send: &mut quinn::SendStream, error: RequestError| {
        let _ = send.reset(VarInt::from_u64(error.code()).expect("small code"));
        refuse(&counts, connection, stream, error, "reset the response");
    };
    let header = match read_header(&mut recv, limits.header_timeout).await {
        Ok(header) => header,
        Err(HeaderFault::Refused(error)) => {
            let _ = recv.stop(VarInt::from_u64(error.code()).expect("small code"));
            refuse_with(&mut send, error);
            return;
        }
        Err(HeaderFault::Gone) => return,
    };
    let requested = Request::from_header(header).requested_bytes();
    let mut upload = tokio::spawn(drain_upload(recv, tally.clone()));
    let mut upload_done = false;
    let mut offset = 0u64;
    let mut pending = Bytes::new();
    // quinn-proto 0.11 reports a writer blocked on *connection* flow control as Blocked before
    // it looks at STOP_SENDING, so a stopped stream whose client stopped reading would wait
    // for credit that never comes: the stop is watched on its own.
    let mut stopped = std::pin::pin!(send.stopped());
    let mut turns = WritingTurns::of(turns);
    while offset < requested || !pending.is_empty() {
        if pending.is_empty() {
            let len = (requested - offset).min(WRITE_CHUNK_BYTES as u64) as usize;
            pending = pattern::chunk(offset, len);
            offset += len as u64;
        }
        tokio::select! {
            // A reset upload abandons the response at once, even while it waits for flow
            // control; `write_chunks` is cancel-safe, so `pending` keeps what is not yet sent.
            joined = &mut upload, if !upload_done => {
                upload_done = true;
                if let Ok(Err(error)) = joined {
                    refuse_with(&mut send, error);
                    return;
                }
            }
            _ = &mut stopped => {
                // STOP_SENDING (or the connection closed): the client ended it.
                counts.lock().expect("no poisoning").ended += 1;
                upload.abort();
                return;
            }
            written = turns.write(&mut send, &mut pending) => {
                if let Ok(written) = &written {
                    tally
                        .written_bytes
                        .fetch_add(written.bytes as u64, Ordering::Relaxed);
                }
                if written.is_err() {
                    // STOP_SENDING or the connection closed: the client ended it.
                    counts.lock().expect("no poisoning").ended += 1;
                    upload.abort();
                    return;
                }
            }
        }
    }
    let _ = send.finish();
    if !upload_done && let Ok(Err(error)) = upload.await {
        refuse_with(&mut send, error);
        return;
    }
    let _ = send.stopped().await;
    counts.lock().expect("no poisoning").ended += 1;
}
