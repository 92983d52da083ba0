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
//! `params` holds what a resumption starts from, `report` what it tells its caller.

use std::time::Duration;

mod params;
mod report;

pub use params::{MIN_SAVED_WINDOW_IWS, PATH_CHANGE_RTT_FACTOR, ResumeParams, SavedPath};
pub use report::{ResumePhase, ResumeReport, ResumeTransition, ResumeTrigger};

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

/// Acknowledgements of the jump, at least this many packets' worth, before their rate is
/// compared with the rate the jump left at: fewer is ACK-timing noise.
const DISPERSION_MIN_PACKETS: u64 = 16;

/// The jump's acknowledgements arriving at under this share of its send rate say the path is
/// slower than the jump. Jitter and ACK thinning move the rate by less; a capacity that fell
/// to a quarter of the saved one gives a half.
const DISPERSION_SHARE: f64 = 0.8;

/// The jump is congestion when, besides arriving slower than it left
/// ([`CarefulResume::jump_outran_path`]), its packets come back with an RTT above the
/// Reconnaissance minimum by more than this fraction of it (numerator, denominator): the
/// queue the jump built holds half a base RTT. Jitter moves the acknowledgements' rate by a
/// quarter on a LEO path (a 176 kB jump at 24 Mbit/s came back at 18 Mbit/s over 28 ms
/// through an 80 Mbit/s bottleneck) but its RTT by a tenth; a jump twice the new BDP
/// (capacity at a quarter) queues about 0.9 of a base RTT when the Unvalidated Phase ends.
const RETREAT_QUEUE_RTT_FRACTION: (u32, u32) = (1, 2);

/// How long, as a fraction of the base RTT (numerator, denominator), that queue must stand in
/// every ACK frame's smallest sample of the jump's packets: a peer thinning its ACKs holds the
/// last few for its ACK delay (25 ms, half a LEO RTT), which raises single frames, not a
/// quarter RTT of them.
const RETREAT_QUEUE_STANDS_RTT_FRACTION: (u32, u32) = (1, 4);

/// Packets over time, as sent or acknowledged: enough for their average rate.
#[derive(Debug, Clone, Copy)]
struct Train {
    first_at: Duration,
    last_at: Duration,
    /// Bytes after the first instant: the first instant's packets start the clock.
    bytes_after_first: u64,
}

impl Train {
    fn add(train: &mut Option<Train>, now: Duration, bytes: u64) {
        match train {
            None => {
                *train = Some(Train {
                    first_at: now,
                    last_at: now,
                    bytes_after_first: 0,
                })
            }
            Some(train) if now > train.first_at => {
                train.last_at = now;
                train.bytes_after_first += bytes;
            }
            Some(_) => {}
        }
    }

    fn rate_bytes_per_s(&self) -> Option<f64> {
        let span = self.last_at.checked_sub(self.first_at)?;
        (!span.is_zero()).then(|| self.bytes_after_first as f64 / span.as_secs_f64())
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
    /// The jump's packets as sent: the first and last send times and the bytes sent after
    /// the first instant (the rate they left at).
    jump_sent: Option<Train>,
    /// The jump's packets as acknowledged in the Validating Phase: the first and last ACK
    /// times and the bytes acknowledged after the first instant (the rate the path delivered
    /// them at).
    jump_acked: Option<Train>,
    /// The smallest RTT sample of the jump's packets in the current ACK frame (Validating).
    frame_jump_rtt: Option<Duration>,
    /// Since when every ACK frame's smallest sample of the jump's packets showed a queue of
    /// more than [`RETREAT_QUEUE_RTT_FRACTION`] of the base RTT.
    jump_queue_since: Option<Duration>,
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
            jump_sent: None,
            jump_acked: None,
            frame_jump_rtt: None,
            jump_queue_since: None,
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
                Train::add(&mut self.jump_sent, now, bytes);
                // §3.3 (Completed sending all unvalidated packets): flight_size = CWND, or
                // less than one packet of it left. CWND is jump_cwnd: the controller's window
                // in this phase only paces it (see `unvalidated_flight`).
                if self.cwnd_limited(self.jump_bytes.unwrap_or(cwnd_bytes)) {
                    return Some(
                        self.leave_unvalidated(now, ResumeTrigger::LastUnvalidatedPacketSent),
                    );
                }
                self.rtt_exceeded(now)
            }
            _ => None,
        }
    }

    /// In the Unvalidated Phase: jump_cwnd and the flight, from which the controller sets
    /// the window quinn paces by.
    pub fn unvalidated_flight(&self) -> Option<(u64, u64)> {
        match (self.phase, self.jump_bytes) {
            (ResumePhase::Unvalidated, Some(jump)) => Some((jump, self.flight_bytes)),
            _ => None,
        }
    }

    /// Whether the path delivers the jump slower than it left: its acknowledgements, over at
    /// least [`DISPERSION_MIN_PACKETS`], arrive at under [`DISPERSION_SHARE`] of the rate its
    /// packets were sent at. A bottleneck slower than the jump spaces them out at its own rate
    /// (packet-train dispersion): the path's capacity fell since the saved window was
    /// measured, and the jump is already queueing there. The queue reading shows it too, but
    /// only after its filter's quarter RTT, in which slow start adds what a quarter RTT
    /// acknowledges (1.5 MB into a full buffer after a fall to a quarter: 885 drops).
    pub fn jump_outran_path(&self) -> bool {
        let (Some(sent), Some(acked)) = (self.jump_sent, self.jump_acked) else {
            return false;
        };
        if acked.bytes_after_first < DISPERSION_MIN_PACKETS * self.mss_bytes {
            return false;
        }
        match (sent.rate_bytes_per_s(), acked.rate_bytes_per_s()) {
            (Some(sent_rate), Some(acked_rate)) => acked_rate < DISPERSION_SHARE * sent_rate,
            _ => false,
        }
    }

    /// Whether the jump's acknowledgements say it is congestion (§3.4): they arrive slower
    /// than it left ([`Self::jump_outran_path`]), and for [`RETREAT_QUEUE_STANDS_RTT_FRACTION`]
    /// of the base RTT every ACK frame's smallest RTT sample of its packets (frames without
    /// one do not count) stood more than [`RETREAT_QUEUE_RTT_FRACTION`] of the base RTT above
    /// it. The path cannot carry the resumed rate, the queue the jump built holds the
    /// difference, and the window kept at the flight (ACK-clocked) would hold that queue until
    /// the jump is validated. Called at the end of each ACK frame.
    fn jump_congested_path(&mut self, now: Duration) -> bool {
        let (Some(frame_rtt), Some(base_rtt)) = (self.frame_jump_rtt.take(), self.recon_min_rtt)
        else {
            return false;
        };
        let (queue_num, queue_den) = RETREAT_QUEUE_RTT_FRACTION;
        if frame_rtt <= base_rtt + base_rtt * queue_num / queue_den {
            self.jump_queue_since = None;
            return false;
        }
        let since = *self.jump_queue_since.get_or_insert(now);
        let (stand_num, stand_den) = RETREAT_QUEUE_STANDS_RTT_FRACTION;
        now.saturating_sub(since) >= base_rtt * stand_num / stand_den && self.jump_outran_path()
    }

    /// The saved window this connection resumed from (RFC 9959 §3.1's saved_cwnd), bytes.
    pub fn saved_cwnd_bytes(&self) -> u64 {
        self.settings.saved.saved_cwnd_bytes
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
                if self.phase == ResumePhase::Validating && self.unvalidated_bytes(sent, bytes) > 0
                {
                    Train::add(&mut self.jump_acked, now, bytes);
                    if let Some(sample) = sample {
                        self.frame_jump_rtt =
                            Some(self.frame_jump_rtt.map_or(sample, |m| m.min(sample)));
                    }
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
        let jump_congested = self.phase == ResumePhase::Validating && self.jump_congested_path(now);
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
            // §3.4 (Detected congestion): the jump queues at a path slower than it
            // (`jump_congested_path`). Checked before validation: an ACK that reaches the end
            // of the jump and shows the congestion does not validate it.
            ResumePhase::Validating if jump_congested => {
                Some(self.retreat(now, ResumeTrigger::JumpOutranPath))
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
mod tests;
