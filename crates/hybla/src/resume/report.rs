//! What Careful Resume tells its caller: the RFC's phases, why each one ended, every phase
//! change, and how one connection's resumption went.

use std::time::Duration;

use super::params::SavedPath;

/// The phases of RFC 9959 §3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResumePhase {
    /// §3.2: normal congestion control from the initial window while the path is confirmed.
    Reconnaissance,
    /// §3.3: the window jumped to `jump_cwnd`; its packets are not yet acknowledged.
    Unvalidated,
    /// §3.4: the jump's packets are in flight; congestion now means Safe Retreat.
    Validating,
    /// §3.5: congestion during the jump; the window is at most half the validated pipe.
    SafeRetreat,
    /// §3.7: Careful Resume is over; the controller's own rules apply.
    Normal,
}

impl ResumePhase {
    /// The phase's name in the Careful Resume qlog draft (`"safe_retreat"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ResumePhase::Reconnaissance => "reconnaissance",
            ResumePhase::Unvalidated => "unvalidated",
            ResumePhase::Validating => "validating",
            ResumePhase::SafeRetreat => "safe_retreat",
            ResumePhase::Normal => "normal",
        }
    }
}

/// Why a phase ended: the trigger names of the Careful Resume qlog draft
/// (draft-ietf-tsvwg-careful-resume-qlog), plus the three exits the RFC gives no name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResumeTrigger {
    /// §3.2 (Path confirmed): the initial data was acknowledged without congestion, the RTT
    /// passed the check, and more was sent than normally permitted (the standard initial
    /// window's worth in flight, or the window full).
    CwndLimited,
    /// Congestion (a loss the controller took as congestion).
    PacketLoss,
    /// Congestion (ECN-CE).
    EcnCe,
    /// Congestion shown by the jump's acknowledgements: they come back slower than the jump
    /// left, and with an RTT that stood half a base RTT above the minimum for a quarter RTT,
    /// so the path is slower than the jump and its queue holds the difference (RFC 9959
    /// §4.2.1 leaves delay-based congestion signals to the design).
    JumpOutranPath,
    /// Persistent congestion (§3.6).
    PersistentCongestion,
    /// §3.2 (Minimum RTT too small): the minimum RTT in Reconnaissance was at most half the
    /// saved RTT.
    RttNotValidated,
    /// §3.2 / §3.3 (Path change): an RTT sample above ten saved RTTs (§4.2.1).
    PathChanged,
    /// The jump would not raise the window (it already is at least half the saved window).
    JumpNotLarger,
    /// §3.3: the flight reached the jump window.
    LastUnvalidatedPacketSent,
    /// §3.3: a packet sent in the Unvalidated Phase was acknowledged.
    FirstUnvalidatedPacketAcknowledged,
    /// §3.3: one RTT passed in the Unvalidated Phase.
    RttExceeded,
    /// §3.3 (Check flight_size): the sender did not use the jump; the window is the pipe.
    RateLimited,
    /// §3.4: the last packet of the Unvalidated Phase was acknowledged.
    LastUnvalidatedPacketAcknowledged,
    /// §3.5: Safe Retreat ends (the last unvalidated packet was acknowledged).
    ExitRecovery,
}

impl ResumeTrigger {
    /// The trigger's name as the Careful Resume qlog draft writes it (`"packet_loss"`, ...;
    /// the three the draft has no name for: `"jump_not_larger"`, `"persistent_congestion"`,
    /// `"jump_outran_path"`).
    pub fn name(self) -> &'static str {
        match self {
            ResumeTrigger::CwndLimited => "cwnd_limited",
            ResumeTrigger::PacketLoss => "packet_loss",
            ResumeTrigger::EcnCe => "ecn_ce",
            ResumeTrigger::JumpOutranPath => "jump_outran_path",
            ResumeTrigger::PersistentCongestion => "persistent_congestion",
            ResumeTrigger::RttNotValidated => "rtt_not_validated",
            ResumeTrigger::PathChanged => "path_changed",
            ResumeTrigger::JumpNotLarger => "jump_not_larger",
            ResumeTrigger::LastUnvalidatedPacketSent => "last_unvalidated_packet_sent",
            ResumeTrigger::FirstUnvalidatedPacketAcknowledged => {
                "first_unvalidated_packet_acknowledged"
            }
            ResumeTrigger::RttExceeded => "rtt_exceeded",
            ResumeTrigger::RateLimited => "rate_limited",
            ResumeTrigger::LastUnvalidatedPacketAcknowledged => {
                "last_unvalidated_packet_acknowledged"
            }
            ResumeTrigger::ExitRecovery => "exit_recovery",
        }
    }
}

/// One phase change, at a time since the controller's epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResumeTransition {
    /// When it happened, since the controller's epoch.
    pub at: Duration,
    /// The phase left.
    pub from: ResumePhase,
    /// The phase entered.
    pub to: ResumePhase,
    /// Why.
    pub trigger: ResumeTrigger,
}

/// How one connection's Careful Resume went, for logs and the lab's summary.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResumeReport {
    /// What it resumed from.
    pub saved: SavedPath,
    /// The phase it ended in (or is in).
    pub phase: ResumePhase,
    /// Every phase change, in order.
    pub transitions: Vec<ResumeTransition>,
    /// jump_cwnd, bytes, if the window jumped.
    pub jump_bytes: Option<u64>,
    /// PipeSize at the end, bytes: what the jump's acknowledgments validated.
    pub pipe_bytes: u64,
    /// Whether it went through Safe Retreat.
    pub retreated: bool,
}
