//! Careful Resume (RFC 9959) on the real-time endpoints: a [`ResumeKeeper`] holds a
//! [`quinn_satellite::ResumeStore`] (and the file it is kept in, if any) for a server or a
//! client. A [`crate::endpoint::TransportRecipe`] made with
//! [`TransportRecipe::resuming`](crate::endpoint::TransportRecipe::resuming) carries one; the
//! server ([`crate::server`]) then takes the saved parameters of each connection's path when
//! it accepts it and records what the connection measured when it closes, and so does the
//! perf client ([`crate::perf::get`]) for its one connection (the data sender of an upload).
//!
//! Every step is logged (`tracing`, target `emu::resume`, info level): what a connection
//! resumed from, and at its close its phases, its jump, whether it retreated and what was
//! saved for the next one.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use quinn_satellite::{LoadReport, Recorded, ResumeStore, ResumeStoreError, Resumption};

/// A Careful Resume store for an endpoint's connections, and the file it is kept in.
#[derive(Debug)]
pub struct ResumeKeeper {
    store: ResumeStore,
    file: Option<PathBuf>,
}

impl ResumeKeeper {
    /// `store` for this endpoint; with `file`, [`ResumeKeeper::save`] writes it there (and
    /// every recorded connection saves it). Nothing is read: see [`ResumeKeeper::load`].
    pub fn new(store: ResumeStore, file: Option<PathBuf>) -> ResumeKeeper {
        ResumeKeeper { store, file }
    }

    /// Adds the entries of the keeper's file (none without one, or while it does not exist);
    /// what was ignored is logged by the store and reported.
    pub fn load(&self) -> Result<LoadReport, ResumeStoreError> {
        match &self.file {
            Some(file) => self.store.load(file, SystemTime::now()),
            None => Ok(LoadReport::default()),
        }
    }

    /// Writes the store to its file; how many entries (`None` without a file).
    pub fn save(&self) -> Result<Option<usize>, ResumeStoreError> {
        self.file
            .as_ref()
            .map(|file| self.store.save(file, SystemTime::now()))
            .transpose()
    }

    /// The store.
    pub fn store(&self) -> &ResumeStore {
        &self.store
    }

    /// The file it is kept in, if any.
    pub fn file(&self) -> Option<&std::path::Path> {
        self.file.as_deref()
    }

    /// The saved parameters for a new connection `label` from `local` to `remote`, taken out
    /// of the store (logged either way).
    pub(crate) fn take(
        &self,
        label: &str,
        local: IpAddr,
        remote: SocketAddr,
    ) -> Option<Resumption> {
        let now = SystemTime::now();
        let taken = self.store.take(local, remote.ip(), now);
        match &taken {
            Some(taken) => tracing::info!(
                "{label} ({remote}): Careful Resume from saved_cwnd {}, saved_rtt {} (observed {} ago for {})",
                bytes(taken.saved().saved_cwnd_bytes),
                millis(taken.saved().saved_rtt),
                seconds(now.duration_since(taken.observed_at()).unwrap_or_default()),
                taken.key(),
            ),
            None => tracing::info!(
                "{label} ({remote}): no saved path for {}, normal start",
                self.store.key(local, remote.ip())
            ),
        }
        taken
    }

    /// Parameters a connection took but that never became a connection (a failed
    /// handshake) go back.
    pub(crate) fn put_back(&self, label: &str, taken: Resumption) {
        let key = taken.key();
        if self.store.put_back(taken, SystemTime::now()) {
            tracing::info!("{label}: no connection; the saved path for {key} goes back");
        }
    }

    /// Records what the closed `connection` (`label`, from `local`) measured: its
    /// controller's Careful Resume state, read from the probe around it; saves the file if
    /// there is one. Logs the connection's resumption and what was saved.
    pub(crate) fn record(
        &self,
        label: &str,
        connection: &quinn::Connection,
        local: IpAddr,
        taken: Option<Resumption>,
    ) -> Recorded {
        let now = SystemTime::now();
        let remote = connection.remote_address();
        let state = probe::inner_of(connection.congestion_state()).and_then(hybla::resume_state_of);
        let Some(state) = state else {
            // Not Hybla (a recipe resumes only when its controller does), or not probed.
            if let Some(taken) = taken {
                self.put_back(label, taken);
            }
            return Recorded::Nothing;
        };
        let resumption = match &state.report {
            None => "did not resume".to_owned(),
            Some(report) => {
                let phases: Vec<String> = report
                    .transitions
                    .iter()
                    .map(|t| {
                        format!(
                            "{:?} at {:.2} s ({:?})",
                            t.to,
                            t.at.as_secs_f64(),
                            t.trigger
                        )
                    })
                    .collect();
                format!(
                    "Careful Resume Reconnaissance → {}; jump {}, pipe {}, retreated: {}",
                    if phases.is_empty() {
                        "(no change)".to_owned()
                    } else {
                        phases.join(" → ")
                    },
                    report.jump_bytes.map_or("none".to_owned(), bytes),
                    bytes(report.pipe_bytes),
                    if report.retreated { "yes" } else { "no" },
                )
            }
        };
        let recorded = self.store.record(local, remote.ip(), taken, &state, now);
        let kept = match recorded {
            Recorded::Observed(saved) => format!(
                "saved for the next connection: cwnd {}, rtt {}",
                bytes(saved.saved_cwnd_bytes),
                millis(saved.saved_rtt)
            ),
            Recorded::PutBack(_) => "nothing measured; the unused saved path goes back".into(),
            Recorded::Nothing => {
                "nothing saved (no observation: under 4 initial windows, or never window-limited)"
                    .into()
            }
        };
        tracing::info!("{label} ({remote}) closed: {resumption}; {kept}");
        if let Err(e) = self.save() {
            tracing::warn!("Careful Resume store not saved: {e}");
        }
        recorded
    }
}

/// The address a socket sending to `peer` uses (the route's source), so that a client keys
/// its store by the same local address before connecting and after; the unspecified address
/// when the system has no route.
pub(crate) fn local_ip_towards(peer: SocketAddr) -> IpAddr {
    let any: SocketAddr = if peer.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    // A connected UDP socket sends nothing; it only asks the kernel for the route.
    std::net::UdpSocket::bind(any)
        .and_then(|socket| {
            socket.connect(peer)?;
            socket.local_addr()
        })
        .map_or(any.ip(), |local| local.ip())
}

fn bytes(n: u64) -> String {
    format!("{:.2} MB", n as f64 / 1e6)
}

fn millis(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1e3)
}

fn seconds(d: Duration) -> String {
    format!("{:.0} s", d.as_secs_f64())
}
