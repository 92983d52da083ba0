//! Careful Resume (RFC 9959, "Careful Resume: Convergence of Congestion Control from Retained
//! State", Kuhn et al. 2026): a connection starts from the capacity a previous connection on
//! the same path measured, safely.
//!
//! The phases are the RFC's (§3): Reconnaissance (normal congestion control from the initial
//! window while the path is confirmed), Unvalidated (the window jumps to at most half the saved
//! one, paced), Validating (the jump's packets are acknowledged), Safe Retreat (congestion
//! during the jump: the window drops to half of what was validated) and Normal. This module is
//! the state machine alone, on bytes and `Duration`s since the controller's epoch; the Hybla
//! core feeds it every send, acknowledgment and congestion verdict, and applies the window it
//! asks for. Where the RFC leaves a choice, the comment at the rule says which one this is.

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
/// (draft-ietf-tsvwg-careful-resume-qlog), plus the two exits the RFC gives no name.
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
    /// the two the draft has no name for: `"jump_not_larger"`, `"persistent_congestion"`).
    pub fn name(self) -> &'static str {
        match self {
            ResumeTrigger::CwndLimited => "cwnd_limited",
            ResumeTrigger::PacketLoss => "packet_loss",
            ResumeTrigger::EcnCe => "ecn_ce",
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

/// What the state machine asks of the controller's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResumeCommand {
    /// §3.3 (Setting the jump_cwnd): CWND = jump_cwnd.
    Jump(u64),
    /// §3.3 (Check flight_size): leaving the Unvalidated Phase, CWND = this.
    SetWindow(u64),
    /// §3.5 (Re-initializing CWND): CWND = this (at most PipeSize / 2).
    Retreat(u64),
    /// §3.4: the jump was validated; Careful Resume ends and the controller's own rules
    /// continue from the window it reached.
    Validated,
    /// §3.5: leaving Safe Retreat, ssthresh = PipeSize × Beta.
    ExitRetreat {
        /// The new slow-start threshold, bytes.
        ssthresh_bytes: u64,
    },
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

/// The RFC 9959 state machine of one connection.
#[derive(Debug, Clone)]
pub(crate) struct CarefulResume {
    settings: ResumeParams,
    /// The initial window (before Hybla's ρ scaling), bytes: what Reconnaissance sends first.
    iw_bytes: u64,
    mss_bytes: u64,
    phase: ResumePhase,
    phase_since: Duration,
    /// Bytes sent so far (Reconnaissance's initial data).
    sent_bytes: u64,
    /// Send time at which the initial window's worth had been sent.
    iw_sent_at: Option<Duration>,
    /// Bytes acknowledged so far.
    acked_bytes: u64,
    /// An acknowledged packet was sent at or after `iw_sent_at`.
    iw_covered: bool,
    /// §3.2: all the initial data was acknowledged without congestion.
    initial_data_acknowledged: bool,
    /// §3.2: the smallest RTT sample of the Reconnaissance Phase.
    recon_min_rtt: Option<Duration>,
    /// The latest RTT sample (the RFC's current RTT).
    current_rtt: Option<Duration>,
    /// flight_size: quinn's bytes in flight at the last ACK frame plus what was sent since.
    flight_bytes: u64,
    /// §3.3: PipeSize.
    pipe_bytes: u64,
    /// §3.3: jump_cwnd, once jumped.
    jump_bytes: Option<u64>,
    /// The window when it jumped: the controller's own initial window (Hybla's is ρ-scaled),
    /// below which no exit of the Unvalidated Phase sets it (§3.3: "CWND is not reduced below
    /// IW" in the absence of congestion).
    window_before_jump_bytes: u64,
    /// When the window jumped: acknowledgments of packets sent from then on count into the
    /// PipeSize (the flight before it is already in; RFC 9959 Appendix B.4 counts 29 + 34).
    jumped_at: Option<Duration>,
    /// Send time of the latest packet of the Unvalidated Phase.
    last_unvalidated_sent: Option<Duration>,
    first_unvalidated_acked: bool,
    last_unvalidated_acked: bool,
    retreated: bool,
    transitions: Vec<ResumeTransition>,
}

impl CarefulResume {
    pub fn new(settings: ResumeParams, iw_bytes: u64, mss_bytes: u64) -> Self {
        Self {
            settings,
            iw_bytes,
            mss_bytes: mss_bytes.max(1),
            phase: ResumePhase::Reconnaissance,
            phase_since: Duration::ZERO,
            sent_bytes: 0,
            iw_sent_at: None,
            acked_bytes: 0,
            iw_covered: false,
            initial_data_acknowledged: false,
            recon_min_rtt: None,
            current_rtt: None,
            flight_bytes: 0,
            pipe_bytes: 0,
            jump_bytes: None,
            window_before_jump_bytes: 0,
            jumped_at: None,
            last_unvalidated_sent: None,
            first_unvalidated_acked: false,
            last_unvalidated_acked: false,
            retreated: false,
            transitions: Vec::new(),
        }
    }

    pub fn phase(&self) -> ResumePhase {
        self.phase
    }

    /// Whether Careful Resume, not the controller's own rules, sets the window now: from the
    /// jump until Normal. (In Validating the window grows by slow start's one byte per byte
    /// acknowledged, §3.4, held while a queue of the flow's own shows, and by nothing else.)
    pub fn owns_window(&self) -> bool {
        matches!(
            self.phase,
            ResumePhase::Unvalidated | ResumePhase::Validating | ResumePhase::SafeRetreat
        )
    }

    fn enter(&mut self, now: Duration, to: ResumePhase, trigger: ResumeTrigger) {
        self.transitions.push(ResumeTransition {
            at: now,
            from: self.phase,
            to,
            trigger,
        });
        self.phase = to;
        self.phase_since = now;
    }

    /// Datagrams of `bytes` were sent at `now`; `cwnd_bytes` is the window they were sent
    /// under.
    pub fn on_sent(&mut self, now: Duration, bytes: u64, cwnd_bytes: u64) -> Option<ResumeCommand> {
        self.sent_bytes += bytes;
        self.flight_bytes += bytes;
        if self.iw_sent_at.is_none() && self.sent_bytes >= self.iw_bytes {
            self.iw_sent_at = Some(now);
        }
        match self.phase {
            // §3.2 (Path confirmed): the transition "MAY be deferred to the time at which more
            // data is sent than would have normally been permitted": see
            // `sent_more_than_permitted`.
            ResumePhase::Reconnaissance if self.sent_more_than_permitted(cwnd_bytes) => {
                self.try_jump(now, cwnd_bytes)
            }
            ResumePhase::Unvalidated => {
                self.last_unvalidated_sent = Some(now);
                // §3.3 (Completed sending all unvalidated packets): flight_size = CWND, or
                // less than one packet of it left.
                if self.cwnd_limited(cwnd_bytes) {
                    return Some(
                        self.leave_unvalidated(now, ResumeTrigger::LastUnvalidatedPacketSent),
                    );
                }
                self.rtt_exceeded(now)
            }
            _ => None,
        }
    }

    fn cwnd_limited(&self, cwnd_bytes: u64) -> bool {
        self.flight_bytes + self.mss_bytes > cwnd_bytes
    }

    /// §3.2: whether the sender has more data than "would have normally been permitted",
    /// the moment to jump. Normally permitted is the standard initial window (RFC 9002), or
    /// the window if smaller: Hybla's ρ-scaled first window is itself a step beyond it and,
    /// paced, takes most of an RTT to fill — waiting for it delays the jump by that long
    /// (measured through the relay at 650 ms: the jump at 1.19 s instead of 0.66 s). A
    /// flight past the standard initial window shows as well as a full window that the
    /// application has more to send; one that then stops sending leaves the Unvalidated
    /// Phase as rate-limited (§3.3), at its window from before the jump.
    fn sent_more_than_permitted(&self, cwnd_bytes: u64) -> bool {
        self.cwnd_limited(cwnd_bytes.min(self.iw_bytes))
    }

    /// One packet of `bytes`, sent at `sent`, acknowledged at `now`.
    pub fn on_ack(&mut self, now: Duration, sent: Duration, bytes: u64) {
        self.flight_bytes = self.flight_bytes.saturating_sub(bytes);
        self.acked_bytes += bytes;
        let sample = now.checked_sub(sent);
        if let Some(sample) = sample {
            self.current_rtt = Some(sample);
        }
        match self.phase {
            ResumePhase::Reconnaissance => {
                if let Some(sample) = sample {
                    self.recon_min_rtt = Some(self.recon_min_rtt.map_or(sample, |m| m.min(sample)));
                }
                if self.iw_sent_at.is_some_and(|mark| sent >= mark) {
                    self.iw_covered = true;
                }
            }
            ResumePhase::Unvalidated => {
                // §3.3 (Tracking PipeSize).
                self.pipe_bytes += self.unvalidated_bytes(sent, bytes);
                // §3.3 (Receiving acknowledgement for an unvalidated packet): sent after
                // the jump (see `unvalidated_bytes` for the packets sent at its instant).
                if self.jumped_at.is_some_and(|t| sent > t) {
                    self.first_unvalidated_acked = true;
                }
            }
            ResumePhase::Validating | ResumePhase::SafeRetreat => {
                // §3.4 / §3.5 (Tracking PipeSize).
                self.pipe_bytes += self.unvalidated_bytes(sent, bytes);
                // "the last packet number (or higher) that was sent in the Unvalidated
                // Phase": quinn gives the controller send times, not packet numbers, and a
                // later send time is a higher packet number.
                if self.last_unvalidated_sent.is_none_or(|last| sent >= last) {
                    self.last_unvalidated_acked = true;
                }
            }
            ResumePhase::Normal => {}
        }
    }

    /// The bytes of an acknowledged packet that count into the PipeSize: those sent after the
    /// jump. quinn tells the controller a packet's send time, not its number, and a burst
    /// shares one instant (always so in virtual time): a packet sent at the jump's instant
    /// counts as sent before it. Its bytes are then missing from the PipeSize, which errs
    /// towards the smaller window; counting them would count the flight at the jump twice.
    fn unvalidated_bytes(&self, sent: Duration, bytes: u64) -> u64 {
        if self.jumped_at.is_some_and(|t| sent > t) {
            bytes
        } else {
            0
        }
    }

    /// The end of an ACK frame: quinn's bytes in flight, and whether the application (not
    /// the window) limited sending before it.
    pub fn on_end_acks(
        &mut self,
        now: Duration,
        in_flight_bytes: u64,
        app_limited: bool,
        cwnd_bytes: u64,
    ) -> Option<ResumeCommand> {
        self.flight_bytes = in_flight_bytes;
        // §3.2 / §3.3 (Path change): an RTT sample far beyond the saved RTT.
        let path_changed = self
            .current_rtt
            .is_some_and(|rtt| rtt > self.settings.saved.saved_rtt * PATH_CHANGE_RTT_FACTOR);
        match self.phase {
            ResumePhase::Reconnaissance => {
                if path_changed {
                    self.enter(now, ResumePhase::Normal, ResumeTrigger::PathChanged);
                    return None;
                }
                // §3.2 (Path confirmed): "an ACK that acknowledges all the initial data
                // (usually the IW)". For a server, the initial data is its handshake flight,
                // and its acknowledgment proves that the client receives at this address
                // (§7). Two packets' worth may stay unacknowledged: quinn's first flight ends
                // with small 1-RTT packets that a peer thinning its ACKs (the satellite preset
                // asks it to) acknowledges only with the next data, an RTT later, and an
                // endpoint asking for thinning sends a spurious PTO probe or two of its
                // handshake (the quinn-proto stall workaround in quinn-satellite) whose copies
                // are never acknowledged (through the relay at 650 ms: 1 899 bytes left, the
                // jump an RTT late). Were they lost, their loss would be congestion in the
                // Unvalidated Phase, which is Safe Retreat.
                // With data flowing from the start (a client uploading), an initial window's
                // worth must be acknowledged, the ACK reaching past it.
                let acked_all_but_two_packets =
                    self.acked_bytes > 0 && in_flight_bytes <= 2 * self.mss_bytes;
                if acked_all_but_two_packets
                    || (self.acked_bytes >= self.iw_bytes && self.iw_covered)
                {
                    self.initial_data_acknowledged = true;
                }
                if !app_limited && self.sent_more_than_permitted(cwnd_bytes) {
                    return self.try_jump(now, cwnd_bytes);
                }
                None
            }
            ResumePhase::Unvalidated => {
                if path_changed {
                    return Some(self.retreat(now, ResumeTrigger::PathChanged));
                }
                if self.first_unvalidated_acked {
                    return Some(self.leave_unvalidated(
                        now,
                        ResumeTrigger::FirstUnvalidatedPacketAcknowledged,
                    ));
                }
                self.rtt_exceeded(now)
            }
            ResumePhase::Validating if self.last_unvalidated_acked => {
                // §3.4 (Receiving acknowledgement of the unvalidated packets).
                self.enter(
                    now,
                    ResumePhase::Normal,
                    ResumeTrigger::LastUnvalidatedPacketAcknowledged,
                );
                Some(ResumeCommand::Validated)
            }
            ResumePhase::SafeRetreat if self.last_unvalidated_acked => {
                // §3.5: ssthresh ≤ PipeSize × Beta on leaving.
                self.enter(now, ResumePhase::Normal, ResumeTrigger::ExitRecovery);
                let ssthresh_bytes = (self.pipe_bytes as f64 * self.settings.beta) as u64;
                Some(ResumeCommand::ExitRetreat {
                    ssthresh_bytes: ssthresh_bytes.max(2 * self.mss_bytes),
                })
            }
            _ => None,
        }
    }

    /// §3.2: more was sent than normally permitted; jump if the path is confirmed and the RTT
    /// check passes.
    fn try_jump(&mut self, now: Duration, cwnd_bytes: u64) -> Option<ResumeCommand> {
        if !self.initial_data_acknowledged {
            return None;
        }
        let saved = self.settings.saved;
        // §3.2 (Minimum RTT too small) and §4.2.1: a minimum RTT of at most half the saved
        // one would pace the jump faster than the rate that was observed.
        if self
            .recon_min_rtt
            .is_some_and(|rtt| rtt <= saved.saved_rtt / 2)
        {
            self.enter(now, ResumePhase::Normal, ResumeTrigger::RttNotValidated);
            return None;
        }
        // §3.3 (Setting the jump_cwnd): at most half the saved window, at most max_jump.
        let jump = (saved.saved_cwnd_bytes / 2).min(self.settings.max_jump_bytes);
        if jump <= cwnd_bytes {
            self.enter(now, ResumePhase::Normal, ResumeTrigger::JumpNotLarger);
            return None;
        }
        // §3.3 (Initialising PipeSize): the flight before the jump.
        self.pipe_bytes = self.flight_bytes;
        self.window_before_jump_bytes = cwnd_bytes;
        self.jump_bytes = Some(jump);
        self.jumped_at = Some(now);
        self.enter(now, ResumePhase::Unvalidated, ResumeTrigger::CwndLimited);
        Some(ResumeCommand::Jump(jump))
    }

    /// §3.3 (Limiting time in the Unvalidated Phase): more than one current RTT.
    fn rtt_exceeded(&mut self, now: Duration) -> Option<ResumeCommand> {
        let rtt = self.current_rtt?;
        (now > self.phase_since + rtt)
            .then(|| self.leave_unvalidated(now, ResumeTrigger::RttExceeded))
    }

    /// §3.3 (Check flight_size): on any exit event, a sender that did not use the jump goes
    /// back to normal congestion control at the pipe; otherwise the window is the flight and
    /// the jump is validated.
    fn leave_unvalidated(&mut self, now: Duration, trigger: ResumeTrigger) -> ResumeCommand {
        let flight = self.flight_bytes;
        // "In the absence of detected congestion, CWND is not reduced below IW": nor below
        // the window the controller had before the jump (Hybla's ρ-scaled initial window,
        // which a jump at the standard IW's flight precedes).
        let floor = self.iw_bytes.max(self.window_before_jump_bytes);
        if flight < self.iw_bytes || flight <= self.pipe_bytes {
            self.enter(now, ResumePhase::Normal, ResumeTrigger::RateLimited);
            return ResumeCommand::SetWindow(self.pipe_bytes.max(floor));
        }
        self.enter(now, ResumePhase::Validating, trigger);
        ResumeCommand::SetWindow(flight.max(floor))
    }

    /// Congestion, as the controller took it: `ecn` for ECN-CE, `persistent` for RFC 9002's
    /// persistent congestion. Random losses (the controller's verdict) are not congestion and
    /// are not passed here.
    pub fn on_congestion(
        &mut self,
        now: Duration,
        ecn: bool,
        persistent: bool,
    ) -> Option<ResumeCommand> {
        let trigger = if ecn {
            ResumeTrigger::EcnCe
        } else {
            ResumeTrigger::PacketLoss
        };
        if persistent && self.phase != ResumePhase::Normal {
            // §3.6: persistent congestion ends Careful Resume; the controller's own
            // response applies.
            self.enter(
                now,
                ResumePhase::Normal,
                ResumeTrigger::PersistentCongestion,
            );
            return None;
        }
        match self.phase {
            // §3.2 (Detected congestion): stop, normal congestion control reacts.
            ResumePhase::Reconnaissance => {
                self.enter(now, ResumePhase::Normal, trigger);
                None
            }
            // §3.3 / §3.4 (Detected congestion).
            ResumePhase::Unvalidated | ResumePhase::Validating => Some(self.retreat(now, trigger)),
            // §3.5 (Maintaining CWND): the retreat already answered the jump's losses.
            ResumePhase::SafeRetreat | ResumePhase::Normal => None,
        }
    }

    /// §3.5: Safe Retreat. The saved parameters are forgotten (the store handed them to this
    /// connection alone, and `retreated` keeps the connection from saving them back), and the
    /// window drops to half the validated pipe (QUIC's minimum window of two packets at
    /// least, RFC 9002 §7.2).
    fn retreat(&mut self, now: Duration, trigger: ResumeTrigger) -> ResumeCommand {
        if self.phase == ResumePhase::Unvalidated && self.last_unvalidated_sent.is_none() {
            self.last_unvalidated_sent = Some(now);
        }
        self.retreated = true;
        self.enter(now, ResumePhase::SafeRetreat, trigger);
        ResumeCommand::Retreat((self.pipe_bytes / 2).max(2 * self.mss_bytes))
    }
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

impl CarefulResume {
    pub fn report(&self) -> ResumeReport {
        ResumeReport {
            saved: self.settings.saved,
            phase: self.phase,
            transitions: self.transitions.clone(),
            jump_bytes: self.jump_bytes,
            pipe_bytes: self.pipe_bytes,
            retreated: self.retreated,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1_200;
    const IW: u64 = 10 * MSS;
    const MS: fn(u64) -> Duration = Duration::from_millis;
    const SAVED_RTT: Duration = Duration::from_millis(600);

    fn resume(saved_cwnd_bytes: u64) -> CarefulResume {
        CarefulResume::new(
            ResumeParams::new(SavedPath {
                saved_cwnd_bytes,
                saved_rtt: SAVED_RTT,
            }),
            IW,
            MSS,
        )
    }

    /// Sends `packets` full packets at `at` under window `cwnd`; the last command, if any.
    fn send(
        cr: &mut CarefulResume,
        at: Duration,
        packets: u64,
        cwnd: u64,
    ) -> Option<ResumeCommand> {
        let mut last = None;
        for _ in 0..packets {
            if let Some(command) = cr.on_sent(at, MSS, cwnd) {
                last = Some(command);
            }
        }
        last
    }

    /// Acknowledges `packets` packets sent at `sent`, at `now`, in one ACK frame that leaves
    /// `in_flight` bytes in flight.
    fn ack(
        cr: &mut CarefulResume,
        now: Duration,
        sent: Duration,
        packets: u64,
        in_flight: u64,
        cwnd: u64,
    ) -> Option<ResumeCommand> {
        for _ in 0..packets {
            cr.on_ack(now, sent, MSS);
        }
        cr.on_end_acks(now, in_flight, false, cwnd)
    }

    fn triggers(cr: &CarefulResume) -> Vec<(ResumePhase, ResumeTrigger)> {
        cr.report()
            .transitions
            .iter()
            .map(|t| (t.to, t.trigger))
            .collect()
    }

    /// A server's start: its handshake flight (two packets at t = 0) acknowledged after one
    /// saved RTT, nothing left in flight: the path is confirmed.
    fn confirmed(saved_cwnd_bytes: u64) -> CarefulResume {
        let mut cr = resume(saved_cwnd_bytes);
        assert_eq!(send(&mut cr, MS(0), 2, IW), None);
        assert_eq!(ack(&mut cr, SAVED_RTT, MS(0), 2, 0, IW), None);
        assert_eq!(cr.phase(), ResumePhase::Reconnaissance);
        cr
    }

    /// [`confirmed`], then the initial window filled at 700 ms: the jump.
    fn jumped(saved_cwnd_bytes: u64) -> CarefulResume {
        let mut cr = confirmed(saved_cwnd_bytes);
        let command = send(&mut cr, MS(700), IW / MSS, IW);
        assert_eq!(command, Some(ResumeCommand::Jump(saved_cwnd_bytes / 2)));
        assert_eq!(cr.phase(), ResumePhase::Unvalidated);
        cr
    }

    // ---- Reconnaissance (§3.2) ---------------------------------------------------------------

    #[test]
    fn no_jump_before_the_initial_data_is_acknowledged() {
        // §3.2 and §7: a full window is not enough; the peer has not yet proved that it
        // receives at this address.
        let mut cr = resume(10_000_000);
        assert_eq!(send(&mut cr, MS(0), IW / MSS, IW), None);
        assert_eq!(cr.phase(), ResumePhase::Reconnaissance);
        // Part of it acknowledged, the rest still in flight: not yet.
        assert_eq!(ack(&mut cr, SAVED_RTT, MS(0), 4, IW - 4 * MSS, IW), None);
        assert_eq!(cr.phase(), ResumePhase::Reconnaissance);
        assert_eq!(cr.report().jump_bytes, None);
    }

    #[test]
    fn two_straggling_packets_of_the_handshake_flight_do_not_hold_the_confirmation() {
        // A server's first flight: four packets; the ACK of two leaves two packets' worth
        // in flight (acknowledged with the next data, or probes never acknowledged):
        // confirmed.
        let mut cr = resume(10_000_000);
        send(&mut cr, MS(0), 4, IW);
        ack(&mut cr, SAVED_RTT, MS(0), 2, 2 * MSS, IW);
        assert!(cr.initial_data_acknowledged);
        // Three packets' worth still in flight: not yet.
        let mut cr = resume(10_000_000);
        send(&mut cr, MS(0), 4, IW);
        ack(&mut cr, SAVED_RTT, MS(0), 1, 3 * MSS, IW);
        assert!(!cr.initial_data_acknowledged);
        // Nothing acknowledged yet (an ACK frame of nothing new): not yet.
        let mut cr = resume(10_000_000);
        send(&mut cr, MS(0), 1, IW);
        cr.on_end_acks(SAVED_RTT, MSS, true, IW);
        assert!(!cr.initial_data_acknowledged);
    }

    #[test]
    fn the_jump_waits_until_the_window_limits_sending() {
        // §3.2: the transition may be deferred until more would be sent than the window
        // allows; a confirmed path with an idle sender does not jump.
        let mut cr = confirmed(10_000_000);
        assert_eq!(send(&mut cr, MS(700), 3, IW), None);
        assert_eq!(cr.phase(), ResumePhase::Reconnaissance);
    }

    #[test]
    fn a_paced_scaled_window_jumps_once_past_the_standard_initial_window() {
        // Hybla's first window is ρ × IW (here 26×), paced over an RTT: the jump comes when
        // the flight passes the standard IW, not when the scaled window is full.
        let mut cr = confirmed(10_000_000);
        let scaled_cwnd = 26 * IW;
        assert_eq!(send(&mut cr, MS(700), IW / MSS - 1, scaled_cwnd), None);
        assert_eq!(cr.phase(), ResumePhase::Reconnaissance);
        assert_eq!(
            send(&mut cr, MS(700), 1, scaled_cwnd),
            Some(ResumeCommand::Jump(5_000_000))
        );
        assert_eq!(cr.report().pipe_bytes, IW);
        // The application stops: a rate-limited exit an RTT later goes back to the window
        // before the jump, not to the standard IW (§3.3: not reduced below IW).
        ack(&mut cr, MS(1300), MS(700), IW / MSS, 0, scaled_cwnd);
        assert_eq!(
            cr.on_end_acks(MS(1500), 0, true, scaled_cwnd),
            Some(ResumeCommand::SetWindow(scaled_cwnd))
        );
        assert_eq!(cr.phase(), ResumePhase::Normal);
    }

    #[test]
    fn the_jump_is_half_the_saved_window_at_most_max_jump() {
        // §3.3 (Setting the jump_cwnd).
        let cr = jumped(10_000_000);
        assert_eq!(cr.report().jump_bytes, Some(5_000_000));
        assert_eq!(
            triggers(&cr),
            [(ResumePhase::Unvalidated, ResumeTrigger::CwndLimited)]
        );

        let mut params = ResumeParams::new(SavedPath {
            saved_cwnd_bytes: 10_000_000,
            saved_rtt: SAVED_RTT,
        });
        params.max_jump_bytes = 1_000_000;
        let mut cr = CarefulResume::new(params, IW, MSS);
        send(&mut cr, MS(0), 2, IW);
        ack(&mut cr, SAVED_RTT, MS(0), 2, 0, IW);
        assert_eq!(
            send(&mut cr, MS(700), IW / MSS, IW),
            Some(ResumeCommand::Jump(1_000_000))
        );
    }

    #[test]
    fn the_pipe_starts_at_the_flight_of_the_jump() {
        // §3.3 (Initialising PipeSize): the flight when the window jumps.
        let cr = jumped(10_000_000);
        assert_eq!(cr.report().pipe_bytes, IW);
    }

    #[test]
    fn a_confirmation_with_data_in_flight_needs_an_ack_past_the_initial_window() {
        // A client's start (no idle moment): the initial window sent at 0, more at 100 ms;
        // an ACK of a full IW that reaches the packet that completed it confirms the path.
        let mut cr = resume(10_000_000);
        send(&mut cr, MS(0), IW / MSS - 1, IW);
        send(&mut cr, MS(100), 4, IW);
        // IW − 1 packets acknowledged (not the last of the IW): not yet.
        assert_eq!(
            ack(&mut cr, MS(600), MS(0), IW / MSS - 1, 4 * MSS, IW),
            None
        );
        assert!(!cr.initial_data_acknowledged);
        cr.on_ack(MS(700), MS(100), MSS);
        cr.on_end_acks(MS(700), 3 * MSS, true, IW);
        assert!(cr.initial_data_acknowledged);
    }

    #[test]
    fn congestion_in_reconnaissance_ends_careful_resume() {
        // §3.2 (Detected congestion): normal congestion control responds.
        let mut cr = resume(10_000_000);
        send(&mut cr, MS(0), IW / MSS, IW);
        assert_eq!(cr.on_congestion(MS(650), false, false), None);
        assert_eq!(cr.phase(), ResumePhase::Normal);
        assert_eq!(
            triggers(&cr),
            [(ResumePhase::Normal, ResumeTrigger::PacketLoss)]
        );
        // Never jumps afterwards.
        ack(&mut cr, MS(700), MS(0), IW / MSS, 0, IW);
        assert_eq!(send(&mut cr, MS(800), IW / MSS, IW), None);
        assert!(!cr.report().retreated);
    }

    #[test]
    fn ecn_ce_in_reconnaissance_is_congestion_too() {
        let mut cr = resume(10_000_000);
        send(&mut cr, MS(0), 2, IW);
        cr.on_congestion(MS(600), true, false);
        assert_eq!(triggers(&cr), [(ResumePhase::Normal, ResumeTrigger::EcnCe)]);
    }

    #[test]
    fn a_minimum_rtt_of_half_the_saved_one_is_not_the_same_path() {
        // §3.2 (Minimum RTT too small): 300 ms ≤ 600 ms / 2.
        let mut cr = resume(10_000_000);
        send(&mut cr, MS(0), 2, IW);
        ack(&mut cr, MS(300), MS(0), 2, 0, IW);
        assert_eq!(send(&mut cr, MS(400), IW / MSS, IW), None);
        assert_eq!(
            triggers(&cr),
            [(ResumePhase::Normal, ResumeTrigger::RttNotValidated)]
        );
        // Just above half is the same path.
        let mut cr = resume(10_000_000);
        send(&mut cr, MS(0), 2, IW);
        ack(&mut cr, MS(301), MS(0), 2, 0, IW);
        assert!(matches!(
            send(&mut cr, MS(400), IW / MSS, IW),
            Some(ResumeCommand::Jump(_))
        ));
    }

    #[test]
    fn an_rtt_above_ten_saved_rtts_is_a_path_change() {
        // §3.2 (Path change) with §4.2.1's factor of ten: 6.001 s against 600 ms.
        let mut cr = resume(10_000_000);
        send(&mut cr, MS(0), 2, IW);
        assert_eq!(ack(&mut cr, MS(6_001), MS(0), 2, 0, IW), None);
        assert_eq!(
            triggers(&cr),
            [(ResumePhase::Normal, ResumeTrigger::PathChanged)]
        );
        // Exactly ten times is not above it.
        let mut cr = resume(10_000_000);
        send(&mut cr, MS(0), 2, IW);
        ack(&mut cr, MS(6_000), MS(0), 2, 0, IW);
        assert_eq!(cr.phase(), ResumePhase::Reconnaissance);
    }

    #[test]
    fn no_jump_when_half_the_saved_window_is_not_more_than_the_window() {
        // Saved 20 000 B: half is 10 000 < the 12 000 B window.
        let mut cr = confirmed(20_000);
        assert_eq!(send(&mut cr, MS(700), IW / MSS, IW), None);
        assert_eq!(
            triggers(&cr),
            [(ResumePhase::Normal, ResumeTrigger::JumpNotLarger)]
        );
    }

    // ---- Unvalidated (§3.3) ------------------------------------------------------------------

    #[test]
    fn unvalidated_ends_when_the_flight_fills_the_jump() {
        // §3.3 (Completed sending all unvalidated packets): CWND = flight_size, Validating.
        let mut cr = jumped(2_400_000); // jump 1 200 000 B = 1 000 packets
        let command = send(&mut cr, MS(710), 1_000 - IW / MSS, 1_200_000);
        assert_eq!(command, Some(ResumeCommand::SetWindow(1_200_000)));
        assert_eq!(cr.phase(), ResumePhase::Validating);
        assert_eq!(
            triggers(&cr).last(),
            Some(&(
                ResumePhase::Validating,
                ResumeTrigger::LastUnvalidatedPacketSent
            ))
        );
    }

    #[test]
    fn unvalidated_ends_when_a_packet_sent_after_the_jump_is_acknowledged() {
        // §3.3 (Receiving acknowledgement for an unvalidated packet). Packets of the initial
        // window (sent before the jump) do not end it; one sent after it does.
        let mut cr = jumped(10_000_000);
        send(&mut cr, MS(710), 100, 5_000_000);
        let before = ack(
            &mut cr,
            MS(1_300),
            MS(700),
            5,
            100 * MSS + 5 * MSS,
            5_000_000,
        );
        assert_eq!(before, None);
        assert_eq!(cr.phase(), ResumePhase::Unvalidated);
        let flight = 100 * MSS;
        let command = ack(&mut cr, MS(1_310), MS(710), 5, flight, 5_000_000);
        assert_eq!(command, Some(ResumeCommand::SetWindow(flight)));
        assert_eq!(cr.phase(), ResumePhase::Validating);
        assert_eq!(
            triggers(&cr).last(),
            Some(&(
                ResumePhase::Validating,
                ResumeTrigger::FirstUnvalidatedPacketAcknowledged
            ))
        );
    }

    #[test]
    fn unvalidated_lasts_at_most_one_rtt() {
        // §3.3 (Limiting time in the Unvalidated Phase): the current RTT is 600 ms, the jump
        // was at 700 ms; a send at 1 301 ms is past it.
        let mut cr = jumped(10_000_000);
        assert_eq!(send(&mut cr, MS(1_300), 100, 5_000_000), None);
        let command = send(&mut cr, MS(1_301), 1, 5_000_000);
        assert_eq!(command, Some(ResumeCommand::SetWindow(IW + 101 * MSS)));
        assert_eq!(
            triggers(&cr).last(),
            Some(&(ResumePhase::Validating, ResumeTrigger::RttExceeded))
        );
    }

    #[test]
    fn a_sender_that_did_not_use_the_jump_returns_to_normal_at_the_pipe() {
        // §3.3 (Check flight_size): flight ≤ PipeSize, so CWND = PipeSize (not below IW) and
        // Careful Resume ends. The jump's window was never filled: the application sent only
        // three more packets, and an RTT later the flight is what it was at the jump.
        let mut cr = jumped(10_000_000);
        send(&mut cr, MS(710), 3, 5_000_000);
        // The IW's packets are acknowledged (PipeSize does not count them again: they are in
        // its initial value) and leave the three in flight.
        ack(&mut cr, MS(1_300), MS(700), IW / MSS, 3 * MSS, 5_000_000);
        let command = send(&mut cr, MS(1_400), 0, 5_000_000).or_else(|| cr.rtt_exceeded(MS(1_400)));
        assert_eq!(command, Some(ResumeCommand::SetWindow(IW)));
        assert_eq!(cr.phase(), ResumePhase::Normal);
        assert_eq!(
            triggers(&cr).last(),
            Some(&(ResumePhase::Normal, ResumeTrigger::RateLimited))
        );
    }

    #[test]
    fn a_path_change_during_the_jump_is_a_safe_retreat() {
        // §3.3 (Path change): an RTT sample above ten saved RTTs.
        let mut cr = jumped(10_000_000);
        send(&mut cr, MS(710), 100, 5_000_000);
        let command = ack(&mut cr, MS(7_000), MS(700), 1, IW + 99 * MSS, 5_000_000);
        assert_eq!(command, Some(ResumeCommand::Retreat(IW / 2)));
        assert_eq!(cr.phase(), ResumePhase::SafeRetreat);
        assert!(cr.report().retreated);
    }

    // ---- Validating (§3.4) -------------------------------------------------------------------

    /// Jumped to 1 000 packets and sent them all by 710 ms: Validating.
    fn validating() -> CarefulResume {
        let mut cr = jumped(2_400_000);
        send(&mut cr, MS(710), 1_000 - IW / MSS, 1_200_000);
        assert_eq!(cr.phase(), ResumePhase::Validating);
        cr
    }

    #[test]
    fn validating_ends_when_the_last_unvalidated_packet_is_acknowledged() {
        // §3.4: PipeSize grows with each acknowledgment; the last packet sent in the
        // Unvalidated Phase acknowledged → Normal.
        let mut cr = validating();
        ack(&mut cr, MS(1_300), MS(700), IW / MSS, 990 * MSS, 1_200_000);
        assert_eq!(
            ack(&mut cr, MS(1_305), MS(705), 500, 490 * MSS, 1_200_000),
            None
        );
        assert_eq!(cr.phase(), ResumePhase::Validating);
        assert_eq!(
            ack(&mut cr, MS(1_310), MS(710), 490, 0, 1_200_000),
            Some(ResumeCommand::Validated)
        );
        assert_eq!(cr.phase(), ResumePhase::Normal);
        assert_eq!(
            triggers(&cr).last(),
            Some(&(
                ResumePhase::Normal,
                ResumeTrigger::LastUnvalidatedPacketAcknowledged
            ))
        );
        // The pipe: the IW in flight at the jump plus the 990 packets sent after it.
        assert_eq!(cr.report().pipe_bytes, IW + 990 * MSS);
        assert!(!cr.report().retreated);
    }

    // ---- Safe Retreat (§3.5) -----------------------------------------------------------------

    #[test]
    fn congestion_while_validating_retreats_to_half_the_pipe_and_exits_at_beta_times_it() {
        let mut cr = validating();
        // 200 of the jump's packets acknowledged: PipeSize = IW + 200 packets.
        ack(&mut cr, MS(1_305), MS(705), 200, 790 * MSS, 1_200_000);
        let pipe = IW + 200 * MSS;
        let command = cr.on_congestion(MS(1_306), false, false);
        assert_eq!(command, Some(ResumeCommand::Retreat(pipe / 2)));
        assert_eq!(cr.phase(), ResumePhase::SafeRetreat);
        // More losses of the jump change nothing (§3.5: the retreat answered them).
        assert_eq!(cr.on_congestion(MS(1_307), false, false), None);
        // PipeSize keeps counting; the last unvalidated packet acknowledged ends it with
        // ssthresh = PipeSize × Beta (0.5).
        let command = ack(&mut cr, MS(1_320), MS(710), 300, 0, pipe / 2);
        let pipe = pipe + 300 * MSS;
        assert_eq!(
            command,
            Some(ResumeCommand::ExitRetreat {
                ssthresh_bytes: pipe / 2
            })
        );
        assert_eq!(
            triggers(&cr)[2..],
            [
                (ResumePhase::SafeRetreat, ResumeTrigger::PacketLoss),
                (ResumePhase::Normal, ResumeTrigger::ExitRecovery)
            ]
        );
        assert!(cr.report().retreated);
    }

    #[test]
    fn congestion_while_unvalidated_retreats_too() {
        let mut cr = jumped(10_000_000);
        send(&mut cr, MS(710), 100, 5_000_000);
        let command = cr.on_congestion(MS(800), true, false);
        assert_eq!(command, Some(ResumeCommand::Retreat(IW / 2)));
        assert_eq!(
            triggers(&cr).last(),
            Some(&(ResumePhase::SafeRetreat, ResumeTrigger::EcnCe))
        );
    }

    #[test]
    fn the_retreat_window_is_never_below_two_packets() {
        // A path so changed that nothing of the jump was validated.
        let mut params = ResumeParams::new(SavedPath {
            saved_cwnd_bytes: 10_000_000,
            saved_rtt: SAVED_RTT,
        });
        params.beta = 0.5;
        let mut cr = CarefulResume::new(params, IW, MSS);
        send(&mut cr, MS(0), 1, IW);
        ack(&mut cr, SAVED_RTT, MS(0), 1, 0, IW);
        // The flight at the jump is one packet.
        send(&mut cr, MS(700), 1, MSS);
        assert_eq!(cr.report().pipe_bytes, MSS);
        assert_eq!(
            cr.on_congestion(MS(800), false, false),
            Some(ResumeCommand::Retreat(2 * MSS))
        );
    }

    // ---- persistent congestion (§3.6), Normal -------------------------------------------------

    #[test]
    fn persistent_congestion_ends_careful_resume_in_any_phase() {
        for mut cr in [resume(10_000_000), jumped(10_000_000), validating()] {
            assert_eq!(cr.on_congestion(MS(5_000), false, true), None);
            assert_eq!(cr.phase(), ResumePhase::Normal);
            assert_eq!(
                triggers(&cr).last(),
                Some(&(ResumePhase::Normal, ResumeTrigger::PersistentCongestion))
            );
        }
    }

    #[test]
    fn once_normal_nothing_more_happens() {
        let mut cr = validating();
        ack(&mut cr, MS(1_310), MS(710), 1_000, 0, 1_200_000);
        assert_eq!(cr.phase(), ResumePhase::Normal);
        let count = cr.report().transitions.len();
        assert_eq!(cr.on_congestion(MS(2_000), false, false), None);
        assert_eq!(send(&mut cr, MS(2_000), 2_000, 1_200_000), None);
        assert_eq!(ack(&mut cr, MS(9_000), MS(2_000), 10, 0, 1_200_000), None);
        assert_eq!(cr.report().transitions.len(), count);
        assert!(!cr.owns_window());
    }
}
