//! One qlog file per QUIC connection for the real-time endpoints (`satquic serve --qlog`,
//! `get --qlog`, `run --backend emu --qlog`), written by quinn-proto's own qlog support.
//!
//! quinn-proto attaches a qlog stream through the connection's `TransportConfig`, which a
//! quinn server otherwise shares between all its connections: one stream for all of them
//! would interleave them in one file. So the server builds a fresh `TransportConfig` per
//! accepted connection (from a [`crate::endpoint::TransportRecipe`]) with a stream of its own,
//! and accepts with it (`Incoming::accept_with`); a client does the same for its connection.
//!
//! Format: quinn-proto's JSON-SEQ (RFC 7464; the qlog `.sqlog` form): every record is the byte
//! 0x1E, one JSON object, and `\n` — first the qlog header (`qlog_format: "JSON-SEQ"`, the
//! trace), then one event per record (`transport:packet_sent`, `transport:packet_received`,
//! `recovery:metrics_updated`, `recovery:packet_lost`). Event times are milliseconds since
//! the connection started (or since the run's start for `run --backend emu`).
//!
//! Writing: records are buffered in memory and written whole, so the file on disk never ends
//! in half a record, whatever moment it is read or the process dies. Each connection's file is
//! flushed when the connection closes ([`ConnectionQlog::flush`]) and closed when quinn drops
//! the connection's state; [`QlogDir::flush_all`] flushes every file still open (a server
//! stopping on Ctrl-C).
//!
//! File names say which connection a file holds:
//! `[PREFIX-]ROLE-SEQ-UTCTIME-PEER[-ODCID].sqlog`, e.g.
//! `server-0001-20250301T101502.118Z-127.0.0.1_40211-5bd6c2a3e0f1a799.sqlog`: the role
//! (`server`, `client`), the connection's number on that side of this process, its start
//! (UTC, ms), the peer's address (`:` as `_`), and on the server the client's original
//! destination connection ID — the `group_id` of every event in the client's file.

use std::fs::File;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Instant, SystemTime};

use quinn::{ConnectionId, Side, TransportConfig};

/// Bytes of whole records kept in memory before they are written out.
const BUFFER_BYTES: usize = 64 * 1024;

/// Why qlog output could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum QlogError {
    /// The directory cannot be created or written.
    #[error("qlog directory {path}: {error}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// What failed (in the message, not a separate cause: printed once).
        error: io::Error,
    },
    /// A connection's file cannot be created.
    #[error("qlog file {path}: {error}")]
    File {
        /// The file.
        path: PathBuf,
        /// What failed (in the message).
        error: io::Error,
    },
}

/// A directory receiving one qlog file per connection. Clones share the set of open files
/// and, unless [`prefixed`](QlogDir::prefixed) anew, the connection counters.
#[derive(Clone)]
pub struct QlogDir {
    path: PathBuf,
    prefix: String,
    epoch: Option<Instant>,
    /// Connections so far per role, [client, server]: the files' numbers.
    counters: Arc<[AtomicU64; 2]>,
    /// Every file written so far, with its writer while it is open.
    files: Arc<Mutex<Vec<OpenedFile>>>,
}

/// A file [`QlogDir::attach`] created, and its writer while quinn keeps it.
type OpenedFile = (PathBuf, Weak<Mutex<RecordWriter>>);

impl std::fmt::Debug for QlogDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QlogDir")
            .field("path", &self.path)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl QlogDir {
    /// Creates `path` if needed and checks that a file can be written in it, so a bad
    /// directory is reported when the command starts, not at the first connection.
    pub fn create(path: impl Into<PathBuf>) -> Result<QlogDir, QlogError> {
        let path = path.into();
        let dir_error = |error| QlogError::Dir {
            path: path.clone(),
            error,
        };
        std::fs::create_dir_all(&path).map_err(dir_error)?;
        let probe = path.join(format!(".satquic-qlog-probe-{}", std::process::id()));
        File::create(&probe).map_err(dir_error)?;
        std::fs::remove_file(&probe).map_err(dir_error)?;
        Ok(QlogDir {
            path,
            prefix: String::new(),
            epoch: None,
            counters: Arc::default(),
            files: Arc::default(),
        })
    }

    /// File names start with `prefix-` (e.g. the flow's name in a run), numbered from 1 again.
    pub fn prefixed(mut self, prefix: &str) -> QlogDir {
        self.counters = Arc::default();
        self.prefix = if prefix.is_empty() {
            String::new()
        } else {
            format!("{prefix}-")
        };
        self
    }

    /// Event times count from `epoch` (e.g. a run's time zero) instead of each connection's
    /// start.
    pub fn with_epoch(mut self, epoch: Instant) -> QlogDir {
        self.epoch = Some(epoch);
        self
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every file created so far, in creation order.
    pub fn files(&self) -> Vec<PathBuf> {
        let files = self.files.lock().expect("no poisoning");
        files.iter().map(|(path, _)| path.clone()).collect()
    }

    /// Opens the file of a new connection to or from `peer` and attaches its qlog stream to
    /// `transport` (which must be this connection's own). `odcid`: the client's original
    /// destination connection ID, where known (a server's incoming connection).
    pub fn attach(
        &self,
        transport: &mut TransportConfig,
        side: Side,
        peer: SocketAddr,
        odcid: Option<&ConnectionId>,
    ) -> Result<ConnectionQlog, QlogError> {
        let (role, counter) = match side {
            Side::Client => ("client", &self.counters[0]),
            Side::Server => ("server", &self.counters[1]),
        };
        let seq = counter.fetch_add(1, Ordering::Relaxed) + 1;
        let started = utc_timestamp(SystemTime::now());
        let peer_label: String = peer
            .to_string()
            .chars()
            .map(|c| if c == ':' { '_' } else { c })
            .filter(|c| !matches!(c, '[' | ']'))
            .collect();
        let mut name = format!("{}{role}-{seq:04}-{started}-{peer_label}", self.prefix);
        if let Some(cid) = odcid {
            name.push_str(&format!("-{cid}"));
        }
        let (path, file) = create_new(&self.path, &name)?;
        let writer = Arc::new(Mutex::new(RecordWriter {
            file: Some(file),
            buffer: Vec::with_capacity(BUFFER_BYTES),
            error: None,
        }));
        let mut config = quinn::QlogConfig::default();
        config
            .writer(Box::new(SharedWriter(writer.clone())))
            .title(Some(format!("satquic {role} {peer}")))
            .description(Some(format!(
                "{role} connection {seq} with {peer}, started {started}"
            )))
            .start_time(self.epoch.unwrap_or_else(Instant::now));
        transport.qlog_stream(config.into_stream());
        self.files
            .lock()
            .expect("no poisoning")
            .push((path.clone(), Arc::downgrade(&writer)));
        Ok(ConnectionQlog { path, writer })
    }

    /// Writes out what every open file of this directory has buffered (a stopping process);
    /// the first error, naming its file.
    pub fn flush_all(&self) -> Result<(), QlogError> {
        let files = self.files.lock().expect("no poisoning");
        let mut first_error = None;
        for (path, writer) in files.iter() {
            if let Some(writer) = writer.upgrade()
                && let Err(error) = writer.lock().expect("no poisoning").flush()
            {
                first_error.get_or_insert(QlogError::File {
                    path: path.clone(),
                    error,
                });
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// Creates `dir/name.sqlog`, or `dir/name-2.sqlog`, … if that exists (two processes starting
/// connections with the same peer in the same millisecond): never overwrites a file.
fn create_new(dir: &Path, name: &str) -> Result<(PathBuf, File), QlogError> {
    let mut attempt = 1;
    loop {
        let path = if attempt == 1 {
            dir.join(format!("{name}.sqlog"))
        } else {
            dir.join(format!("{name}-{attempt}.sqlog"))
        };
        match File::create_new(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(error) => return Err(QlogError::File { path, error }),
        }
    }
}

/// One connection's qlog file.
pub struct ConnectionQlog {
    path: PathBuf,
    writer: Arc<Mutex<RecordWriter>>,
}

impl ConnectionQlog {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes out every record so far (call when the connection has closed; the file itself
    /// is closed when quinn drops the connection).
    pub fn flush(&self) -> Result<(), QlogError> {
        self.writer
            .lock()
            .expect("no poisoning")
            .flush()
            .map_err(|error| QlogError::File {
                path: self.path.clone(),
                error,
            })
    }
}

/// A file written in whole records: bytes up to the last `\n` (the end of a JSON-SEQ record;
/// JSON text holds no raw newline) go out once [`BUFFER_BYTES`] have gathered, and everything
/// on flush or drop.
struct RecordWriter {
    file: Option<File>,
    buffer: Vec<u8>,
    /// The first write error, reported by the next flush (quinn-proto only logs them).
    error: Option<io::Error>,
}

impl RecordWriter {
    fn write_out(&mut self, len: usize) -> io::Result<()> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        let Some(file) = &mut self.file else {
            self.buffer.clear();
            return Ok(());
        };
        let result = file.write_all(&self.buffer[..len]);
        self.buffer.drain(..len);
        if let Err(error) = result {
            // Stop writing: a file with a gap would not parse.
            self.file = None;
            self.buffer.clear();
            return Err(error);
        }
        Ok(())
    }
}

impl Write for RecordWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.file.is_none() {
            // Closed after a write error: the rest is dropped.
            return Ok(bytes.len());
        }
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= BUFFER_BYTES
            && let Some(end) = self.buffer.iter().rposition(|&b| b == b'\n')
            && let Err(error) = self.write_out(end + 1)
        {
            self.error.get_or_insert(error);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_out(self.buffer.len())?;
        match &mut self.file {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for RecordWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// The handle quinn-proto's qlog streamer writes through; [`ConnectionQlog`] and
/// [`QlogDir::flush_all`] reach the same writer.
struct SharedWriter(Arc<Mutex<RecordWriter>>);

impl Write for SharedWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("no poisoning").write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.lock().expect("no poisoning").flush()
    }
}

/// `time` as `YYYYMMDDTHHMMSS.mmmZ` (UTC), sortable and free of `:` for file names.
fn utc_timestamp(time: SystemTime) -> String {
    let since_epoch = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = since_epoch.as_secs();
    let (days, of_day) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_date(days);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}.{:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        since_epoch.subsec_millis()
    )
}

/// The Gregorian date `days` after 1970-01-01: counted in 400-year eras of 146 097 days from
/// 0000-03-01, so that the leap day falls at the end of each year of the count.
fn civil_date(days: u64) -> (u64, u64, u64) {
    // Days since 0000-03-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    // Years into the era: one day fewer every 4 years, one more every 100, one fewer every 400.
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months from March, of 153 days per 5 months.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        let at = |s: u64, ms: u64| {
            utc_timestamp(SystemTime::UNIX_EPOCH + Duration::from_millis(s * 1000 + ms))
        };
        assert_eq!(at(0, 0), "19700101T000000.000Z");
        // 2000-02-29 (a leap day of a century year divisible by 400) 12:34:56.789
        assert_eq!(at(951_827_696, 789), "20000229T123456.789Z");
        // 2024-12-31 23:59:59 and the next second.
        assert_eq!(at(1_735_689_599, 0), "20241231T235959.000Z");
        assert_eq!(at(1_735_689_600, 0), "20250101T000000.000Z");
        // 2100-03-01 (2100 is not a leap year).
        assert_eq!(at(4_107_542_400, 0), "21000301T000000.000Z");
    }

    #[test]
    fn records_reach_the_file_whole() {
        let dir = std::env::temp_dir().join(format!("satquic-qlog-unit-{}", std::process::id()));
        let path = dir.join("x.sqlog");
        std::fs::create_dir_all(&dir).unwrap();
        let mut writer = RecordWriter {
            file: Some(File::create(&path).unwrap()),
            buffer: Vec::new(),
            error: None,
        };
        let record = format!("\u{1e}{{\"pad\":\"{}\"}}\n", "x".repeat(1000));
        let mut written = 0;
        while written < 2 * BUFFER_BYTES {
            // In pieces, as serde_json writes: the file must only ever hold whole records.
            for piece in record.as_bytes().chunks(7) {
                writer.write_all(piece).unwrap();
                let on_disk = std::fs::read(&path).unwrap();
                assert!(on_disk.is_empty() || on_disk.ends_with(b"\n"));
                assert_eq!(on_disk.len() % record.len(), 0);
            }
            written += record.len();
        }
        assert!(!std::fs::read(&path).unwrap().is_empty(), "written out");
        drop(writer);
        assert_eq!(std::fs::read(&path).unwrap().len(), written);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_unwritable_directory_is_named() {
        let file = std::env::temp_dir().join(format!("satquic-qlog-file-{}", std::process::id()));
        std::fs::write(&file, b"not a directory").unwrap();
        let error = QlogDir::create(file.join("sub")).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("qlog directory {}", file.join("sub").display())),
            "{error}"
        );
        let _ = std::fs::remove_file(file);
    }
}
