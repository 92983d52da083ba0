//! The perf client: one connection, one request (two with `repeat_after`), every byte
//! checked against the pattern, arrival times of the sizes asked about.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use perfwire::{ReceivedRanges, Request, RequestError, pattern};
use serde::Serialize;

use super::{LOG_INTERVAL, WRITE_CHUNK_BYTES, WritingTurns};
use crate::endpoint::{
    EndpointError, TransportRecipe, Trust, client_config, client_endpoint, client_transport,
};
use crate::qlog::QlogDir;
use quinn_satellite::Resumption;

/// What to fetch, and from where.
pub struct ClientOptions {
    /// Server (or relay) address.
    pub server: SocketAddr,
    /// Name expected in the certificate.
    pub server_name: String,
    /// Certificate policy.
    pub trust: Trust,
    /// Transport settings (controller for the upload direction, windows, ...).
    pub transport: TransportRecipe,
    /// Where the connection's qlog file goes, if anywhere ([`crate::qlog`]).
    pub qlog: Option<QlogDir>,
    /// The UDP socket to send from, bound in advance (e.g. so that a relay knows the flow
    /// by its address); None binds a fresh one.
    pub socket: Option<std::net::UdpSocket>,
    /// Receive and send buffer of the UDP socket, bytes (see [`crate::sockbuf`]).
    pub socket_buffer_bytes: usize,
    /// The exchange.
    pub requests: PerfRequests,
}

/// The perf exchange a client runs on a connection: on a perf connection of its own
/// ([`get`]) or next to media and bulk in a session ([`crate::session`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfRequests {
    /// Bytes to download; None for unlimited (bounded by `duration`).
    pub download_bytes: Option<u64>,
    /// Bytes to upload.
    pub upload_bytes: u64,
    /// Stop after this long (required for unlimited downloads).
    pub duration: Option<Duration>,
    /// Sizes whose arrival times are reported.
    pub thresholds: Vec<u64>,
    /// Check every byte against the satquic pattern (false only for other perf servers,
    /// whose content the protocol leaves open).
    pub verify: bool,
    /// After a completed download, wait this long and download the same again on the same
    /// connection (draft-kuhn "repeat").
    pub repeat_after: Option<Duration>,
}

impl Default for PerfRequests {
    /// An unlimited download (give it a `duration`), nothing uploaded, every byte checked.
    fn default() -> Self {
        PerfRequests {
            download_bytes: None,
            upload_bytes: 0,
            duration: None,
            thresholds: Vec::new(),
            verify: true,
            repeat_after: None,
        }
    }
}

/// What the client measured.
#[derive(Debug, Clone, Serialize)]
pub struct ClientReport {
    /// Server address.
    pub server: String,
    /// Handshake duration, s.
    pub handshake_s: f64,
    /// When the (first) request was sent, since the client started connecting, s: the
    /// handshake on a perf connection, a round trip more in a session (its control stream
    /// goes first).
    pub requested_s: f64,
    /// Request → first response byte, s.
    pub time_to_first_byte_s: Option<f64>,
    /// Request → last byte (or stop), s.
    pub transfer_s: f64,
    /// Bytes received in order and verified.
    pub bytes_received: u64,
    /// Bytes uploaded.
    pub bytes_uploaded: u64,
    /// In-order goodput over the transfer, bit/s.
    pub goodput_bps: f64,
    /// Request → each size in order, s.
    pub time_to_bytes_s: BTreeMap<u64, f64>,
    /// Whether the whole requested download arrived.
    pub completed: bool,
    /// Whether every byte was checked against the pattern (false: counted only).
    pub verified: bool,
    /// Time series (t since request, bytes in order) at 100 ms, for plots.
    pub samples: Vec<(f64, u64)>,
    /// The repeated request of `repeat_after`, if any.
    pub repeats: Vec<RepeatReport>,
}

/// A later request on the same connection (draft-kuhn "repeat").
#[derive(Debug, Clone, Serialize)]
pub struct RepeatReport {
    /// When it was sent, seconds after the first request.
    pub requested_s: f64,
    /// Request → last byte (or stop), s.
    pub transfer_s: f64,
    /// Bytes received in order and verified.
    pub bytes_received: u64,
    /// Request → each size in order, s.
    pub time_to_bytes_s: BTreeMap<u64, f64>,
    /// Whether the whole requested download arrived.
    pub completed: bool,
    /// Time series (t since this request, bytes in order) at 100 ms.
    pub samples: Vec<(f64, u64)>,
}

/// One request on an open connection, as measured by the client.
pub(crate) struct Exchange {
    request_at: Instant,
    first_byte: Option<Duration>,
    transfer: Duration,
    bytes_received: u64,
    bytes_uploaded: u64,
    reached: BTreeMap<u64, f64>,
    samples: Vec<(f64, u64)>,
    completed: bool,
}

/// Sends one request on `connection` and reads the response until FIN or `deadline`; the
/// upload is written in `turns`.
async fn exchange(
    connection: &quinn::Connection,
    options: &PerfRequests,
    deadline: Option<Instant>,
    turns: &WritingTurns,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<Exchange, EndpointError> {
    let (mut send, mut recv) = connection
        .open_bi()
        .await
        .map_err(|e| EndpointError::Connection(e.to_string()))?;
    let request = options
        .download_bytes
        .map_or(Request::Unlimited, Request::Bytes);
    let request_at = Instant::now();
    send.write_chunk(Bytes::copy_from_slice(&request.header()))
        .await
        .map_err(|e| EndpointError::Connection(e.to_string()))?;
    let upload_bytes = options.upload_bytes;
    let uploaded = Arc::new(AtomicU64::new(0));
    let mut uploader = {
        let uploaded = uploaded.clone();
        let mut turns = turns.clone();
        tokio::spawn(async move {
            let mut offset = 0u64;
            'upload: while offset < upload_bytes {
                let len = (upload_bytes - offset).min(WRITE_CHUNK_BYTES as u64) as usize;
                let mut chunk = pattern::chunk(offset, len);
                while !chunk.is_empty() {
                    if turns.write(&mut send, &mut chunk).await.is_err() {
                        break 'upload;
                    }
                }
                offset += len as u64;
                uploaded.store(offset, Ordering::Relaxed);
            }
            let _ = send.finish();
            // Until the server has it all (or stopped the stream): written is not delivered,
            // and the connection must not close under the upload's tail.
            let _ = send.stopped().await;
        })
    };
    let mut ranges = ReceivedRanges::default();
    let mut first_byte = None;
    let mut reached = BTreeMap::new();
    let mut samples = Vec::new();
    let mut next_sample = LOG_INTERVAL;
    let mut completed = false;
    loop {
        let read = recv.read_chunk(usize::MAX, false);
        let chunk = match deadline {
            Some(d) => match tokio::time::timeout_at(d.into(), read).await {
                Ok(r) => r,
                Err(_) => break,
            },
            None => read.await,
        };
        let chunk = match chunk {
            Ok(Some(c)) => c,
            Ok(None) => {
                completed = true;
                break;
            }
            Err(quinn::ReadError::ConnectionLost(reason)) => {
                return Err(EndpointError::Connection(format!(
                    "connection lost: {reason}"
                )));
            }
            Err(quinn::ReadError::Reset(code)) => {
                return Err(EndpointError::Connection(format!(
                    "the server reset the response: {}",
                    RequestError::describe(code.into_inner())
                )));
            }
            Err(e) => return Err(EndpointError::Connection(e.to_string())),
        };
        if options.verify && !pattern::matches(chunk.offset, &chunk.bytes) {
            return Err(EndpointError::Corrupt {
                offset: chunk.offset,
                len: chunk.bytes.len(),
            });
        }
        first_byte.get_or_insert_with(|| request_at.elapsed());
        ranges.insert(chunk.offset, chunk.offset + chunk.bytes.len() as u64);
        let now = request_at.elapsed();
        for &t in &options.thresholds {
            if ranges.prefix() >= t {
                reached.entry(t).or_insert(now.as_secs_f64());
            }
        }
        while now >= next_sample {
            samples.push((next_sample.as_secs_f64(), ranges.prefix()));
            next_sample += LOG_INTERVAL;
        }
        progress(ranges.prefix());
    }
    let transfer = request_at.elapsed();
    // The upload's tail, within the deadline if there is one.
    let delivered = match deadline {
        Some(d) => tokio::time::timeout_at(d.into(), &mut uploader)
            .await
            .is_ok(),
        None => (&mut uploader).await.is_ok(),
    };
    if !delivered {
        uploader.abort();
    }
    let bytes_uploaded = uploaded.load(Ordering::Relaxed);
    Ok(Exchange {
        request_at,
        first_byte,
        transfer,
        bytes_received: ranges.prefix(),
        bytes_uploaded,
        reached,
        samples,
        completed: completed && options.download_bytes.is_some_and(|n| ranges.prefix() == n),
    })
}

/// Connects, requests (twice with `repeat_after`), verifies; `progress` sees the in-order byte
/// count of the current request as it grows. With a resuming transport recipe
/// ([`TransportRecipe::resuming`]) the connection resumes from what the recipe's store holds
/// for the path to the server, and leaves what it measured there when it closes (the client
/// is the data sender of its upload).
pub async fn get(
    mut options: ClientOptions,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<ClientReport, EndpointError> {
    let resume = options.transport.resume().map(|keeper| {
        let local = crate::resume::local_ip_towards(options.server);
        let taken = keeper.take("client connection", local, options.server);
        (keeper.clone(), local, taken)
    });
    let (transport, qlog) = client_transport(
        &options.transport,
        options.qlog.as_ref(),
        options.server,
        resume
            .as_ref()
            .and_then(|(_, _, taken)| taken.as_ref().map(Resumption::params)),
    )?;
    let endpoint = client_endpoint(
        options.server,
        options.socket.take(),
        options.socket_buffer_bytes,
        client_config(&options.trust, transport, perfwire::ALPN)?,
    )?;
    let started = Instant::now();
    let connected = match endpoint.connect(options.server, &options.server_name) {
        Ok(connecting) => connecting
            .await
            .map_err(|e| EndpointError::Connect(e.to_string())),
        Err(e) => Err(EndpointError::Connect(e.to_string())),
    };
    let connection = match connected {
        Ok(connection) => connection,
        Err(e) => {
            if let Some((keeper, _, Some(taken))) = resume {
                keeper.put_back("client connection", taken);
            }
            return Err(e);
        }
    };
    let handshake = started.elapsed();
    let transferred = transfer(
        &connection,
        &options.requests,
        &WritingTurns::none(),
        progress,
    )
    .await;
    connection.close(0u32.into(), b"done");
    endpoint.wait_idle().await;
    if let Some((keeper, local, taken)) = resume {
        keeper.record("client connection", &connection, local, taken);
    }
    if let Some(qlog) = qlog {
        qlog.flush()?;
    }
    let (first, repeats) = transferred?;
    Ok(client_report(
        options.server.to_string(),
        handshake,
        started,
        options.requests.verify,
        first,
        repeats,
    ))
}

/// The report of an exchange: the first request's measurements, then the repeats'.
/// `connect_started`: when the client started connecting.
pub(crate) fn client_report(
    server: String,
    handshake: Duration,
    connect_started: Instant,
    verified: bool,
    first: Exchange,
    repeats: Vec<RepeatReport>,
) -> ClientReport {
    ClientReport {
        server,
        handshake_s: handshake.as_secs_f64(),
        requested_s: first
            .request_at
            .saturating_duration_since(connect_started)
            .as_secs_f64(),
        time_to_first_byte_s: first.first_byte.map(|d| d.as_secs_f64()),
        transfer_s: first.transfer.as_secs_f64(),
        bytes_received: first.bytes_received,
        bytes_uploaded: first.bytes_uploaded,
        goodput_bps: first.bytes_received as f64 * 8.0 / first.transfer.as_secs_f64().max(1e-9),
        time_to_bytes_s: first.reached,
        completed: first.completed,
        verified,
        samples: first.samples,
        repeats,
    }
}

/// The request, and the repeated one of `repeat_after`, on an open connection; uploads are
/// written in `turns`.
pub(crate) async fn transfer(
    connection: &quinn::Connection,
    options: &PerfRequests,
    turns: &WritingTurns,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<(Exchange, Vec<RepeatReport>), EndpointError> {
    let deadline = options.duration.map(|d| Instant::now() + d);
    let first = exchange(connection, options, deadline, turns, progress).await?;
    let mut repeats = Vec::new();
    if let Some(gap) = options.repeat_after
        && first.completed
    {
        tokio::time::sleep(gap).await;
        let again = exchange(connection, options, deadline, turns, progress).await?;
        repeats.push(RepeatReport {
            requested_s: (again.request_at - first.request_at).as_secs_f64(),
            transfer_s: again.transfer.as_secs_f64(),
            bytes_received: again.bytes_received,
            time_to_bytes_s: again.reached,
            completed: again.completed,
            samples: again.samples,
        });
    }
    Ok((first, repeats))
}
