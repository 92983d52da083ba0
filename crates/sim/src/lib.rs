//! sim — real quinn-proto endpoints over a modelled satellite path, in virtual time.
//!
//! Layer: above `netsim` (the path model), below `lab` (scenarios and reports). Every flow is a
//! real QUIC connection — quinn-proto 0.11 state machines, TLS 1.3 via rustls, AES-GCM packet
//! protection — whose datagrams cross a [`netsim::Path`]. Nothing is mocked; only time is
//! virtual: the loop jumps to the next event, so a 300 s GEO transfer takes well under a second.
//!
//! Call [`run`] with a [`SimConfig`]; get a [`RunOutcome`] with per-flow results and a time
//! series. The same config and seed give the same outcome, bit for bit
//! (see `determinism` for what that takes).

pub mod app;
pub mod apps;
mod determinism;
mod driver;
pub mod losses;
mod outcome;
pub mod tls;
mod transport;

pub use app::{App, AppError, AppOutcome, AppSpec, Context};
pub use determinism::{CID_LEN, FrozenClock, SeededCidGenerator, seed_bytes};
pub use driver::{Control, FlowApp, FlowConfig, ResumedController, SimConfig, SimError, run};
pub use losses::{LossAccounting, PathLossTruth};
pub use outcome::{
    AppSample, ConnectionOutcome, EmulatorDrops, EmulatorLateness, FlowEnd, FlowOutcome,
    LinkSample, ResumeOutcome, ResumeTransitionOutcome, RunOutcome, Sample, SavedPathOutcome,
    SenderStats,
};
pub use probe::{ProbeReadings, ProbedFactory};
pub use quinn_satellite::settings::{
    ACK_BUDGET_SHARE, ACK_PACKET_WIRE_BYTES, ACK_STALL_WORKAROUND_INITIAL_RTT,
    ACK_STALL_WORKAROUND_MAX_ACK_DELAY, MAX_ACK_ELICITING_THRESHOLD, MIN_ACKS_PER_BDP,
    QUINN_DEFAULT_INITIAL_RTT, TransportSettings, ack_threshold,
};
pub use transport::{run_transport, satellite_preset};

/// QUIC bytes per full-size packet that are not stream payload, for the goodput ceiling: short
/// header (1 flags byte + [`CID_LEN`] + 2-byte packet number), AEAD tag (16), STREAM frame
/// header (1 type + 1 stream id + 4 offset; the last frame omits its length).
pub const QUIC_PACKET_OVERHEAD_BYTES: u32 = 1 + CID_LEN as u32 + 2 + 16 + 1 + 1 + 4;

/// Application payload one full-size packet carries on a path with this MTU.
pub fn payload_bytes_per_packet(mtu_bytes: u32) -> u32 {
    mtu_bytes - netsim::IP_UDP_HEADER_BYTES - QUIC_PACKET_OVERHEAD_BYTES
}
