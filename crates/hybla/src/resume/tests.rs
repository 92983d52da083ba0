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
fn send(cr: &mut CarefulResume, at: Duration, packets: u64, cwnd: u64) -> Option<ResumeCommand> {
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

/// Jumped to 1 000 packets at 700 ms and paced the rest out, ten packets every 6 ms until
/// 1 294 ms: Validating.
fn paced_jump() -> CarefulResume {
    let mut cr = jumped(2_400_000);
    for frame in 1..=99 {
        send(&mut cr, MS(700 + 6 * frame), 10, 1_200_000);
    }
    assert_eq!(cr.phase(), ResumePhase::Validating);
    cr
}

/// Acknowledges [`paced_jump`]'s packets ten per ACK frame, frame `frame` (sent at
/// 700 + 6 × frame ms) at `ack_at(frame)` ms; the first command and the frame it came at.
fn ack_paced_jump(
    cr: &mut CarefulResume,
    ack_at: impl Fn(u64) -> u64,
) -> Option<(u64, ResumeCommand)> {
    for frame in 1..=99 {
        let in_flight = (99 - frame) * 10 * MSS;
        let command = ack(
            cr,
            MS(ack_at(frame)),
            MS(700 + 6 * frame),
            10,
            in_flight,
            1_200_000,
        );
        if let Some(command) = command {
            return Some((frame, command));
        }
    }
    None
}

/// [`paced_jump`] acknowledged at half its rate (frame j, ten packets sent at 700 + 6 j ms,
/// at 1 300 + 12 j ms: RTT 600 + 6 j ms) through frame 74, every other frame also
/// acknowledging one packet sent at `extra(now)` ms if given; the frame of the Safe Retreat
/// on the jump's queue, if one came.
fn retreat_at_half_rate(extra: Option<fn(u64) -> u64>) -> Option<u64> {
    let mut cr = paced_jump();
    for frame in 1..=74u64 {
        let now = 1_300 + 12 * frame;
        for _ in 0..10 {
            cr.on_ack(MS(now), MS(700 + 6 * frame), MSS);
        }
        if let Some(extra) = extra.filter(|_| frame % 2 == 0) {
            cr.on_ack(MS(now), MS(extra(now)), MSS);
        }
        let in_flight = (99 - frame) * 10 * MSS;
        if let Some(command) = cr.on_end_acks(MS(now), in_flight, false, 1_200_000) {
            assert_eq!(
                triggers(&cr).last(),
                Some(&(ResumePhase::SafeRetreat, ResumeTrigger::JumpOutranPath))
            );
            assert!(cr.report().retreated);
            // Half the pipe validated by then: the IW in flight at the jump and the frames'.
            if extra.is_none() {
                assert_eq!(command, ResumeCommand::Retreat((IW + 10 * frame * MSS) / 2));
            }
            return Some(frame);
        }
    }
    assert_eq!(cr.phase(), ResumePhase::Validating);
    None
}

#[test]
fn a_jump_queued_behind_a_slower_path_for_a_quarter_rtt_is_a_safe_retreat() {
    // The queue stands more than half the base RTT (900 ms) from frame 51 (906 ms, at
    // 1 912 ms) and has stood a quarter RTT (150 ms) at frame 64 (at 2 068 ms): congestion.
    assert_eq!(retreat_at_half_rate(None), Some(64));
}

#[test]
fn a_queue_in_single_ack_frames_is_not_congestion() {
    // The same path, but every other ACK frame also acknowledges a packet of the jump that
    // came back 895 ms after it left (no queue beyond half the base RTT): its smallest sample
    // shows no queue, and the standing count starts over at each such frame.
    assert_eq!(retreat_at_half_rate(Some(|now| now - 895)), None);
}

#[test]
fn a_jump_a_slower_path_queues_under_half_a_base_rtt_is_validated() {
    // The path carries three quarters of the jump's rate (ACKs every 8 ms): the acknowledgements
    // are dispersed, but the last of the jump comes back with 198 ms of queue, under 300.
    let mut cr = paced_jump();
    let (frame, command) = ack_paced_jump(&mut cr, |j| 1_300 + 8 * j).expect("an exit");
    assert_eq!((frame, command), (99, ResumeCommand::Validated));
    assert!(!cr.report().retreated);
}

#[test]
fn a_longer_rtt_whose_acks_keep_the_jumps_pace_is_not_congestion() {
    // The path's delay rose by 400 ms (beyond half the base RTT) after the Reconnaissance, but
    // it carries the jump at the rate it left: no dispersion, no queue of the jump's own.
    let mut cr = paced_jump();
    let (frame, command) = ack_paced_jump(&mut cr, |j| 1_700 + 6 * j).expect("an exit");
    assert_eq!((frame, command), (99, ResumeCommand::Validated));
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
