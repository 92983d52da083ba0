//! What a connection resumes from: the previous connection's measurement of the path, the
//! settings of one resumption, and the RFC's thresholds for both.

use std::time::Duration;

/// A current RTT more than this many times the saved RTT means the path changed (RFC 9959
/// §4.2.1: "a current RTT that is more than ten times the saved_rtt is indicative of a path
/// change").
pub const PATH_CHANGE_RTT_FACTOR: u32 = 10;

/// Observations below this many initial windows are not worth saving (RFC 9959 §3.1: the
/// sender "can choose to not save the CC parameters" below four times the IW).
pub const MIN_SAVED_WINDOW_IWS: u64 = 4;

/// The previous connection's measurement of a path (RFC 9959 §3.1's CC parameters,
/// `saved_cwnd` and `saved_rtt`): what the next connection to the same Remote Endpoint may
/// resume from. The Remote Endpoint and the Lifetime are the store's business
/// (`quinn-satellite`'s `ResumeStore`); the controller checks the RTT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SavedPath {
    /// Bytes the connection had acknowledged per round trip while the window limited it.
    pub saved_cwnd_bytes: u64,
    /// The smallest RTT seen while that was measured.
    pub saved_rtt: Duration,
}

/// One resumption's settings: the saved parameters and the RFC's two configurable values.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ResumeParams {
    /// What the previous connection measured.
    pub saved: SavedPath,
    /// §3.3: max_jump, the largest jump_cwnd, bytes (default: no limit beyond half the saved
    /// window).
    pub max_jump_bytes: u64,
    /// §3.5: Beta, the share of the validated pipe that becomes ssthresh after a Safe
    /// Retreat (0.5 to 1; default 0.5).
    pub beta: f64,
}

impl ResumeParams {
    /// Resume from `saved` with the RFC's defaults.
    pub fn new(saved: SavedPath) -> Self {
        Self {
            saved,
            max_jump_bytes: crate::MAX_WINDOW_BYTES,
            beta: 0.5,
        }
    }
}
