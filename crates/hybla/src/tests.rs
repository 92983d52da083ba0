//! The core against the formulas of \[Caini2004\] (eq. 9) and \[Cavallotti2024\] §4.2.3.

use std::time::Duration;

use crate::core::STARTUP_GAIN_PER_ROUND;
use crate::*;

const MSS: u64 = 1000;
const MS: fn(u64) -> Duration = Duration::from_millis;

fn seed_rules(ssthresh: InitialSsthresh) -> HyblaParams {
    HyblaParams {
        initial_ssthresh: ssthresh,
        growth: Growth::Seed,
        initial_window_bytes: 10 * MSS,
        ..HyblaParams::default()
    }
}

/// A core in the given phase with ρ fixed, window `cwnd`, threshold `ssthresh`.
fn core(rho: f64, cwnd: u64, ssthresh: InitialSsthresh) -> Hybla {
    let mut params = seed_rules(ssthresh);
    params.initial_window_bytes = cwnd;
    let mut h = Hybla::new(params, MSS);
    h.set_rho_for_test(rho);
    h
}

/// Acknowledges `bytes` in one callback at t = 10 s, sent at t = 9 s (no RTT side effects
/// that move ρ: the sample sets base RTT, but ρ is recomputed, so feed a matching RTT).
fn ack(h: &mut Hybla, bytes: u64) {
    let rtt = MS(25).mul_f64(h.rho());
    let now = Duration::from_secs(100);
    h.on_ack(now, now - rtt, bytes, false);
}

// ---- slow start ------------------------------------------------------------------------------

#[test]
fn slow_start_adds_two_to_the_rho_minus_one_per_mss() {
    for rho in [1.0, 1.2, 20.0, 24.0] {
        let mut h = core(rho, 100 * MSS, InitialSsthresh::Infinite);
        let before = h.window();
        ack(&mut h, MSS);
        let expected = (2f64.powf(rho) - 1.0) * MSS as f64;
        // Whole bytes are applied, the fraction carried.
        let grown = (h.window() - before) as f64 + h.pending_increment_bytes();
        assert!(
            (grown / expected - 1.0).abs() < 1e-9,
            "ρ={rho}: grew {grown}, want {expected}"
        );
    }
}

#[test]
fn slow_start_fractions_are_carried_not_lost() {
    // ρ = 1.2: 2^1.2 − 1 = 1.2974 per byte; 1000 ACKs of 1 byte must add 1297 bytes, not 1000.
    let mut h = core(1.2, 10 * MSS, InitialSsthresh::Infinite);
    let before = h.window();
    for _ in 0..1000 {
        ack(&mut h, 1);
    }
    let expected = (2f64.powf(1.2) - 1.0) * 1000.0;
    let grown = (h.window() - before) as f64 + h.pending_increment_bytes();
    assert!((grown - expected).abs() < 1e-6, "{grown} vs {expected}");
    assert!(h.pending_increment_bytes() < 1.0);
}

#[test]
fn the_increment_crossing_ssthresh_is_split_between_ss_and_ca() {
    // ρ = 2: SS adds 3 bytes per byte. cwnd 10 000, ssthresh 13 000: 1000 bytes reach it,
    // the other 1000 are CA: ρ²·MSS·1000/13 000 = 4·1000·1000/13 000 = 307.69 bytes.
    let mut h = core(2.0, 10 * MSS, InitialSsthresh::Bytes(13 * MSS));
    ack(&mut h, 2 * MSS);
    assert_eq!(h.phase(), Phase::CongestionAvoidance);
    let expected = 13_000.0 + 4.0 * 1000.0 * 1000.0 / 13_000.0;
    assert!((h.window() as f64 - expected).abs() < 1.0, "{}", h.window());
}

#[test]
fn no_overflow_at_rho_forty_with_multi_gigabyte_windows() {
    let mut h = core(40.0, 4 << 30, InitialSsthresh::Infinite);
    for _ in 0..1000 {
        ack(&mut h, 1472);
    }
    assert!(h.window() <= MAX_WINDOW_BYTES);
    assert_eq!(h.window(), MAX_WINDOW_BYTES);
    let mut h = core(40.0, 4 << 30, InitialSsthresh::Bytes(8 << 30));
    ack(&mut h, 1472);
    // 2^40 × 1472 is far past 8 GiB: capped at ssthresh, remainder as CA.
    assert!(h.window() >= 8 << 30 && h.window() < (8 << 30) + (1 << 20));
}

// ---- congestion avoidance --------------------------------------------------------------------

#[test]
fn congestion_avoidance_adds_rho_squared_over_w_per_mss() {
    for rho in [1.0, 1.2, 20.0, 24.0] {
        let cwnd = 1_000 * MSS;
        let mut h = core(rho, cwnd, InitialSsthresh::Bytes(cwnd));
        ack(&mut h, MSS);
        let expected = rho * rho * MSS as f64 * MSS as f64 / cwnd as f64;
        let grown = (h.window() - cwnd) as f64 + h.pending_increment_bytes();
        assert!(
            (grown - expected).abs() < 1e-9,
            "ρ={rho}: grew {grown}, want {expected}"
        );
    }
}

#[test]
fn a_full_window_of_acks_adds_rho_squared_segments() {
    // One RTT of ACKs in CA adds ≈ ρ² MSS (eq. 9 integrated over W ACKs).
    let rho = 20.0;
    let cwnd = 500 * MSS;
    let mut h = core(rho, cwnd, InitialSsthresh::Bytes(cwnd));
    for _ in 0..500 {
        ack(&mut h, MSS);
    }
    // Integrating dW/dB = ρ²·MSS/W over B = W0 bytes: W1 = √(W0² + 2ρ²·MSS·W0) = 806 226 bytes,
    // +306 segments: the window grows during the round, so fewer than ρ² = 400.
    let expected = ((cwnd * cwnd) as f64 + 2.0 * rho * rho * (MSS * cwnd) as f64).sqrt();
    assert!(
        (h.window() as f64 / expected - 1.0).abs() < 1e-3,
        "{} vs {expected}",
        h.window()
    );
}

#[test]
fn ca_fractions_are_carried() {
    // ρ = 1, cwnd = 100 000: each 1000-byte ACK adds 10 bytes; each 1-byte ACK 0.01 byte.
    let mut h = core(1.0, 100 * MSS, InitialSsthresh::Bytes(100 * MSS));
    for _ in 0..1000 {
        ack(&mut h, 1);
    }
    // (The window creeps up by those 10 bytes meanwhile: 9.9995 bytes exactly by eq. 9.)
    let grown = (h.window() - 100 * MSS) as f64 + h.pending_increment_bytes();
    assert!((grown - 10.0).abs() < 1e-3, "{grown}");
}

// ---- ρ = 1 is NewReno -------------------------------------------------------------------------

#[test]
fn rtt_below_rtt0_behaves_like_newreno() {
    let mut h = Hybla::new(seed_rules(InitialSsthresh::Infinite), MSS);
    let now = Duration::from_secs(1);
    h.on_ack(now, now - MS(10), MSS, false); // RTT 10 ms < RTT0 25 ms
    assert_eq!(h.rho(), 1.0);
    // NewReno slow start: +1 byte per byte acknowledged.
    assert_eq!(h.window(), 10 * MSS + MSS);
    h.on_congestion_event(now, now - MS(5), false, MSS);
    assert_eq!(h.window(), 11 * MSS / 2);
    // NewReno congestion avoidance, [Caini2004] eq. 1: W += 1/W per MSS acknowledged, i.e.
    // MSS·bytes/W in bytes — the same rule computed independently here.
    let mut reference = h.window() as f64;
    let later = now + MS(100);
    for _ in 0..200 {
        h.on_ack(later, later - MS(10), 500, false);
        reference += MSS as f64 * 500.0 / reference.floor();
    }
    let actual = h.window() as f64 + h.pending_increment_bytes();
    assert!((actual - reference).abs() < 1.0, "{actual} vs {reference}");
}

// ---- loss ---------------------------------------------------------------------------------------

#[test]
fn halves_once_per_recovery_period() {
    let mut h = core(20.0, 1_000 * MSS, InitialSsthresh::Bytes(1_000 * MSS));
    let t = Duration::from_secs(10);
    h.on_congestion_event(t, t - MS(100), false, MSS);
    assert_eq!(h.window(), 500 * MSS);
    // More batches for packets sent before recovery started: ignored.
    h.on_congestion_event(t + MS(1), t - MS(50), false, MSS);
    h.on_congestion_event(t + MS(2), t, false, MSS);
    assert_eq!(h.window(), 500 * MSS);
    // ACKs of packets sent before recovery do not grow the window.
    h.on_ack(t + MS(3), t - MS(10), MSS, false);
    assert_eq!(h.window(), 500 * MSS);
    // A loss of a packet sent after recovery started is a new event.
    h.on_congestion_event(t + MS(600), t + MS(1), false, MSS);
    assert_eq!(h.window(), 250 * MSS);
    assert_eq!(h.ssthresh(), 250 * MSS);
}

#[test]
fn ecn_ce_reduces_like_a_loss() {
    let mut h = core(2.0, 100 * MSS, InitialSsthresh::Bytes(100 * MSS));
    let t = Duration::from_secs(1);
    h.on_congestion_event(t, t - MS(1), false, 0);
    assert_eq!(h.window(), 50 * MSS);
}

#[test]
fn persistent_congestion_resets_to_the_rho_scaled_minimum_and_slow_start() {
    let mut h = core(20.0, 1_000 * MSS, InitialSsthresh::Bytes(1_000 * MSS));
    let t = Duration::from_secs(10);
    h.on_congestion_event(t, t - MS(100), true, 100 * MSS);
    assert_eq!(h.window(), 2 * MSS * 20);
    assert_eq!(h.minimum_window(), 40 * MSS);
    assert_eq!(h.phase(), Phase::SlowStart);
    assert_eq!(h.ssthresh(), 500 * MSS);
}

#[test]
fn no_growth_while_application_limited() {
    let mut h = core(20.0, 100 * MSS, InitialSsthresh::Infinite);
    let t = Duration::from_secs(1);
    h.on_ack(t, t - MS(500), MSS, true);
    assert_eq!(h.window(), 100 * MSS);
}

// ---- ρ estimation --------------------------------------------------------------------------------

#[test]
fn first_rtt_sample_scales_initial_window_and_sets_gamma_rho_threshold() {
    let params = seed_rules(InitialSsthresh::Segments(32.0));
    let mut h = Hybla::new(params, MSS);
    assert_eq!(h.window(), 10 * MSS);
    let t = Duration::from_secs(1);
    // The sample is taken before growth: ρ = 500/25 = 20, IW → 200 segments, γρ = 640.
    h.on_ack(t, t - MS(500), 0, false);
    assert_eq!(h.rho(), 20.0);
    assert_eq!(h.window(), 200 * MSS);
    assert_eq!(h.ssthresh(), 640 * MSS);
}

#[test]
fn rho_follows_a_path_change_within_the_filter_window() {
    let mut h = Hybla::new(seed_rules(InitialSsthresh::Infinite), MSS);
    for s in 0..30 {
        let t = Duration::from_secs(s);
        h.on_ack(t, t.saturating_sub(MS(30)), 0, false);
    }
    assert!((h.rho() - 1.2).abs() < 1e-9);
    // The path lengthens to 600 ms (a handover to GEO): ρ reaches 24 within 10 s.
    for s in 30..45 {
        let t = Duration::from_secs(s);
        h.on_ack(t, t - MS(600), 0, false);
    }
    assert!((h.rho() - 24.0).abs() < 1e-9, "{}", h.rho());
    // Back to 30 ms: at once.
    let t = Duration::from_secs(46);
    h.on_ack(t, t - MS(30), 0, false);
    assert!((h.rho() - 1.2).abs() < 1e-9);
}

#[test]
fn estimated_ssthresh_is_the_measured_bdp_and_growth_waits_for_it() {
    let params = HyblaParams {
        growth: Growth::Seed,
        initial_window_bytes: 10 * MSS,
        ..HyblaParams::default()
    };
    let mut h = Hybla::new(params, MSS);
    // Ten packets sent at t = 0 over a 8 Mbit/s (1 MB/s → 1 ms per packet) path, RTT 500 ms,
    // ACKed in pairs.
    let mut windows = Vec::new();
    for pair in 0..5u64 {
        let now = MS(500) + MS(2 * pair + 2);
        h.on_ack(now, Duration::ZERO, MSS, false);
        h.on_ack(now, Duration::ZERO, MSS, false);
        h.on_end_acks(now, 0, false);
        windows.push(h.window());
    }
    // ρ = 500/25 = 20 (the first samples include 2 ms of serialization: ρ ≈ 20.08).
    // Before the estimate: no growth beyond ρ·IW.
    assert_eq!(windows[0], (10.0 * MSS as f64 * h.rho()).floor() as u64);
    // Estimate: 8 packets / 8 ms = 1 MB/s × 0.502 s ≈ 502 kB.
    let target = h.startup_target().unwrap();
    assert!((495_000..=510_000).contains(&target), "{target}");
    // Growth resumed and reached the target; ssthresh stays unset until a queue or a loss.
    assert!(h.window() >= target, "{} < {target}", h.window());
    assert_eq!(h.ssthresh(), u64::MAX);
}

/// A default core told the path's BDP, with a 10-packet initial window, whose first packet
/// (sent at 0) is acknowledged at 500 ms (ρ = 20).
fn declared_bdp_core(bdp_packets: u64) -> Hybla {
    declared_bdp_core_first_ack(bdp_packets, false)
}

/// [`declared_bdp_core`], with whether the application limited sending after the first ACK.
fn declared_bdp_core_first_ack(bdp_packets: u64, app_limited: bool) -> Hybla {
    let params = HyblaParams {
        declared_bdp_bytes: Some(bdp_packets * MSS),
        initial_window_bytes: 10 * MSS,
        ..HyblaParams::default()
    };
    let mut h = Hybla::new(params, MSS);
    h.on_ack(MS(500), Duration::ZERO, MSS, false);
    h.on_end_acks(MS(500), 0, app_limited);
    h
}

/// Up to `packets` packets sent from 600 ms, one every 2 ms (0.5 MB/s), each acknowledged
/// behind 50 ms of queue, until start-up ends.
fn queue_after_the_target(h: &mut Hybla, packets: u64) {
    for i in 0..packets {
        let sent = MS(600 + 2 * i);
        h.on_ack(sent + MS(550), sent, MSS, false);
        h.on_end_acks(sent + MS(550), 0, false);
        if h.startup_target().is_none() {
            break;
        }
    }
}

#[test]
fn a_declared_bdp_is_the_start_up_target_without_waiting() {
    let mut h = declared_bdp_core(400);
    // One ACK frame of the first flight, RTT 500 ms (ρ = 20): Hybla's slow start reaches the
    // declared BDP at once (2^20 − 1 MSS per MSS), then probes at STARTUP_GAIN_PER_ROUND.
    assert!(h.window() >= 400 * MSS, "{}", h.window());
    let w = h.window();
    h.on_ack(MS(501), MS(1), MSS, false);
    let grown = h.window() - w;
    assert_eq!(grown, ((STARTUP_GAIN_PER_ROUND - 1.0) * MSS as f64) as u64);
}

#[test]
fn start_up_ends_at_the_first_queue_of_its_own_with_the_window_at_the_pipe() {
    // Declared 400 packets: the first ACK takes the window there.
    let mut h = declared_bdp_core(400);
    assert!(h.window() >= 400 * MSS, "{}", h.window());
    // The rest of the first flight, one packet every 2 ms and no queue: 0.5 MB/s, a pipe of
    // 250 packets at the 500 ms base RTT, measured before any queue shows.
    for i in 1..=20u64 {
        h.on_ack(MS(500 + 2 * i), MS(2 * i), MSS, false);
        h.on_end_acks(MS(500 + 2 * i), 0, false);
    }
    assert!(h.startup_target().is_some(), "still in start-up");
    let before = h.window();
    // Then packets sent after the target was reached, still 2 ms apart, with 50 ms of queue.
    queue_after_the_target(&mut h, 20);
    assert!(h.startup_target().is_none(), "start-up over");
    let pipe = h.pipe_bytes().unwrap();
    assert!((249 * MSS..=251 * MSS).contains(&pipe), "pipe {pipe}");
    // W ← min(W, pipe): the overshoot drained, congestion avoidance from the pipe.
    assert!(
        before > pipe,
        "the window overshot the pipe: {before} vs {pipe}"
    );
    assert_eq!(h.window(), pipe);
    assert_eq!(h.ssthresh(), h.window());
}

#[test]
fn a_queue_at_the_first_packets_after_a_lone_first_packet_drains_to_the_pipe_they_measure() {
    // The application sent one packet first (a request), so the only delivery rate before
    // the next flight spans the idle time between the two: 4 packets in 600 ms, a 3 kB pipe.
    let mut h = declared_bdp_core_first_ack(400, true);
    let before = h.window();
    assert!(before >= 400 * MSS, "{before}");
    // Then a flight sent after the target was reached, one packet every 2 ms (0.5 MB/s: a
    // pipe of 250 packets at the 500 ms base RTT), every packet behind 50 ms of queue.
    queue_after_the_target(&mut h, 40);
    assert!(h.startup_target().is_none(), "start-up over");
    // The drain waited for a rate the flight itself measured: the window is that pipe (within
    // the two packets' rounding of a 4-packet sample), not the idle time's.
    let pipe = h.pipe_bytes().unwrap();
    assert!((245 * MSS..=251 * MSS).contains(&pipe), "pipe {pipe}");
    assert_eq!(h.window(), pipe);
    assert_eq!(h.ssthresh(), h.window());
}

/// The window start-up drained to and the window 2.5 base RTTs later, on a path of `base_ms`
/// (ρ = `base_ms` / 25 ms) with a declared BDP of 100 packets: the first flight measures 0.5 MB/s (one packet every
/// 2 ms), start-up ends at a 20 ms queue and drains to that pipe, and the path then delivers
/// 2 MB/s (what the overshoot showed a round later). With `ce_mark`, an ECN-CE mark (a
/// congestion verdict) comes a millisecond after the drain.
fn window_after_the_drain_and_its_reread(base_ms: u64, ce_mark: bool) -> (u64, u64) {
    let params = HyblaParams {
        declared_bdp_bytes: Some(100 * MSS),
        initial_window_bytes: 10 * MSS,
        ..HyblaParams::default()
    };
    let mut h = Hybla::new(params, MSS);
    h.on_ack(MS(base_ms), Duration::ZERO, MSS, false);
    h.on_end_acks(MS(base_ms), 0, false);
    for i in 1..=20u64 {
        h.on_ack(MS(base_ms + 2 * i), MS(2 * i), MSS, false);
        h.on_end_acks(MS(base_ms + 2 * i), 0, false);
    }
    let mut now = MS(base_ms + 40);
    for i in 0..200u64 {
        let sent = MS(base_ms + 40 + 2 * i);
        now = sent + MS(base_ms + 20);
        h.on_ack(now, sent, MSS, false);
        h.on_end_acks(now, 0, false);
        if h.startup_target().is_none() {
            break;
        }
    }
    assert!(h.startup_target().is_none(), "start-up over");
    let drained = h.window();
    if ce_mark {
        h.on_congestion_event(now + MS(1), now, false, 0);
    }
    let end = now + MS(base_ms * 5 / 2);
    while now < end {
        now += MS(1);
        h.on_ack(now, now - MS(base_ms), MSS, false);
        h.on_ack(now, now - MS(base_ms), MSS, false);
        h.on_end_acks(now, h.window(), false);
    }
    (drained, h.window())
}

#[test]
fn below_rho_3_start_ups_drain_is_read_again_two_base_rtts_later() {
    // 50 ms (ρ = 2): the pipe read at the first queue was the first flight's 0.5 MB/s, 25
    // packets; two base RTTs later the path shows 2 MB/s, a 100-packet pipe, and the window
    // goes there.
    let (drained, after) = window_after_the_drain_and_its_reread(50, false);
    assert!(drained <= 26 * MSS, "{drained}");
    // Growth alone (the probe above a stale pipe, doubling per round) reaches 51 kB.
    assert!(
        (95 * MSS..=110 * MSS).contains(&after),
        "{drained} → {after}"
    );
    // A congestion verdict in between cancels the re-read (this one, on packets of
    // start-up's overshoot, cuts nothing: the drain answered it): growth alone, 25 → 51 kB.
    let (drained, after) = window_after_the_drain_and_its_reread(50, true);
    assert!(after < 60 * MSS, "{drained} → {after}");
}

// ---- satquic's pipe-aware extension ------------------------------------------------------------

/// A pipe-aware core with ρ = 20 (base RTT 500 ms) that has measured a 1 MB/s bottleneck
/// (pipe = 500 kB), with the queue at `queue_ms` during the measurement.
fn measured_pipe(queue_ms: u64) -> Hybla {
    let params = HyblaParams {
        initial_ssthresh: InitialSsthresh::Bytes(100 * MSS),
        initial_window_bytes: 100 * MSS,
        ..HyblaParams::default()
    };
    let mut h = Hybla::new(params, MSS);
    // Establish the base RTT (500 ms), then a train of ACKs 1 ms apart per MSS (1 MB/s),
    // whose RTT samples carry `queue_ms` of queueing.
    // (The queue must last more than a quarter of the base RTT to count.)
    let t0 = Duration::from_secs(1);
    h.on_ack(t0 - MS(200), t0 - MS(700), 0, true);
    h.on_end_acks(t0 - MS(200), 0, false);
    for i in 1..=20u64 {
        let now = t0 + MS(i);
        h.on_ack(now, now - MS(500 + queue_ms), MSS, true);
        h.on_end_acks(now, 0, false);
    }
    h
}

#[test]
fn pipe_estimate_is_delivery_rate_times_base_rtt() {
    let h = measured_pipe(50);
    assert_eq!(h.rho(), 20.0);
    let pipe = h.pipe_bytes().unwrap();
    assert!((495_000..=505_000).contains(&pipe), "{pipe}");
}

#[test]
fn a_congestion_loss_halves_the_window_as_newreno_does() {
    // A loss at a queue of 50 ms, the highest seen: congestion, W ← β·W.
    let mut h = measured_pipe(50);
    let w = h.window();
    let now = Duration::from_millis(1030);
    h.on_congestion_event(now, now - MS(10), false, MSS);
    assert_eq!(h.window(), w / 2);
    assert_eq!(h.ssthresh(), h.window());
    assert_eq!(h.loss_tally().congestion_events, 1);
}

#[test]
fn a_random_loss_with_no_queue_keeps_the_window_and_its_growth() {
    let mut h = measured_pipe(0);
    let w = h.window();
    let now = Duration::from_millis(1030);
    h.on_congestion_event(now, now - MS(10), false, MSS);
    assert_eq!(
        h.window(),
        w,
        "no queue, 1 loss in hundreds: not congestion"
    );
    // No recovery period: a packet sent before the loss still grows the window.
    h.on_ack(now + MS(1), now - MS(500), MSS, false);
    assert!(h.window() > w || h.pending_increment_bytes() > 0.0);
}

#[test]
fn a_loss_is_taken_as_the_truth_says_where_the_caller_knows_it() {
    // The queue at the lost packet's send time was the highest seen: the classifier's verdict
    // is congestion, the truth's random (a corrupted packet) keeps the window.
    let mut h = measured_pipe(50);
    let w = h.window();
    let now = Duration::from_millis(1030);
    h.on_congestion_event_with_truth(now, now - MS(10), false, MSS, Some(LossVerdict::Random));
    assert_eq!(h.window(), w);
    assert_eq!(h.loss_tally().random_events, 1);
    // No queue: the classifier would take it as random; the truth (an overflow) halves.
    let mut h = measured_pipe(0);
    h.on_congestion_event_with_truth(now, now - MS(10), false, MSS, Some(LossVerdict::Congestion));
    assert_eq!(h.window(), w / 2);
    // At ρ = 1 Hybla is NewReno, whatever the truth: every loss is congestion.
    let mut h = Hybla::new(
        HyblaParams {
            initial_window_bytes: 100 * MSS,
            ..HyblaParams::default()
        },
        MSS,
    );
    h.set_rho_for_test(1.0);
    assert_eq!(h.params().growth, Growth::PipeAware);
    h.on_congestion_event_with_truth(now, now - MS(10), false, MSS, Some(LossVerdict::Random));
    assert_eq!(h.loss_tally().congestion_events, 1);
    assert_eq!(h.loss_tally().random_events, 0);
}

#[test]
fn heavy_loss_counts_as_congestion_even_without_a_queue() {
    // A full sample (LOSS_RATE_SAMPLE_PACKETS) delivered without a queue: 220 packets. Then
    // 20 lost: 8 % > RANDOM_LOSS_MAX_RATE.
    assert!(cut_by_a_loss_batch_after_quiet_packets(200, MS(20), 20));
}

/// `measured_pipe(0)` with `packets` more delivered without a queue over `span` from
/// 1 020 ms, then a loss batch of `lost` packets at 1 045 ms: whether the window was cut.
fn cut_by_a_loss_batch_after_quiet_packets(packets: u64, span: Duration, lost: u64) -> bool {
    let mut h = measured_pipe(0);
    let t0 = Duration::from_millis(1020);
    for i in 1..=packets {
        let now = t0 + span / packets as u32 * i as u32;
        h.on_ack(now, now - MS(500), MSS, false);
        h.on_end_acks(now, 0, false);
    }
    let w = h.window();
    let now = Duration::from_millis(1045);
    h.on_congestion_event(now, now - MS(10), false, lost * MSS);
    h.window() < w
}

/// [`cut_by_a_loss_batch_after_quiet_packets`] with 600 packets delivered in all.
fn cut_by_losses_among_600_packets(lost: u64) -> bool {
    cut_by_a_loss_batch_after_quiet_packets(580, Duration::from_micros(23_200), lost)
}

#[test]
fn more_losses_than_two_percent_random_loss_gives_are_congestion_under_the_share_bound() {
    // 26 of 626 packets (4.2 %, under the 5 % bound): at 2 % random loss (12.5 expected) that
    // many come one time in 2 500. RED's drops behind a quarter-BDP queue at 600 ms ran at
    // 4.3 % of the flow's packets.
    assert!(cut_by_losses_among_600_packets(26));
    // 18 (2.9 %) come one time in 12 at 2 %: random.
    assert!(!cut_by_losses_among_600_packets(18));
}

/// The regression: a random loss among a fresh connection's first packets read as a loss
/// rate of 5 % or more (2 of 22 here), so it counted as congestion with no queue in sight and
/// a resumed connection retreated from its jump.
#[test]
fn one_early_loss_is_not_a_loss_rate_above_random() {
    let mut h = measured_pipe(0);
    let w = h.window();
    let now = Duration::from_millis(1030);
    h.on_congestion_event(now, now - MS(10), false, 2 * MSS);
    assert_eq!(h.window(), w, "2 lost among 22 packets, no queue: random");
    assert_eq!(h.loss_tally().random_events, 1);
    // Twelve losses, more than 5 % of a full sample: a policer, even this early.
    h.on_congestion_event(now + MS(1), now - MS(9), false, 10 * MSS);
    assert!(h.window() < w, "{} vs {w}", h.window());
}

#[test]
fn every_loss_batch_is_counted_and_recorded_with_its_verdict() {
    let now = Duration::from_millis(1030);
    // No queue: random. A 50 ms queue: congestion. ECN-CE (no bytes) is not a loss batch.
    let mut random = measured_pipe(0);
    random.on_congestion_event(now, now - MS(10), false, MSS);
    let mut congested = measured_pipe(50);
    congested.on_congestion_event(now, now - MS(10), false, 2 * MSS);
    congested.on_congestion_event(now + MS(1), now - MS(5), false, 0);
    let (r, c) = (random.loss_tally(), congested.loss_tally());
    assert_eq!(
        (r.random_events, r.random_bytes, r.congestion_events),
        (1, MSS, 0)
    );
    assert_eq!(
        (c.congestion_events, c.congestion_bytes, c.random_events),
        (1, 2 * MSS, 0)
    );
    // Records are kept only on request.
    assert!(random.loss_records().is_empty());
    let mut params = random.params().clone();
    params.record_losses = true;
    let mut recorded = Hybla::new(params, MSS);
    recorded.on_congestion_event(now, now - MS(10), true, 3 * MSS);
    let [record] = recorded.loss_records() else {
        panic!("{:?}", recorded.loss_records())
    };
    assert_eq!(
        (record.sent, record.lost_bytes, record.verdict),
        (now - MS(10), 3 * MSS, LossVerdict::Congestion)
    );
    // With what the classifier saw: the window it judged at, the loss share of the sample.
    assert_eq!(
        record.seen.window_bytes,
        random.params().initial_window_bytes
    );
    assert!(record.seen.loss_share > 0.0);
}

// ---- the loss classifier and the growth around the pipe (pipe-aware) ---------------------------

/// A pipe-aware core on a 500 ms path (ρ = 20) whose capacity (1 MB/s) is declared, past
/// start-up (a fixed threshold), at window `cwnd`.
fn on_known_path(cwnd: u64) -> Hybla {
    let params = HyblaParams {
        initial_ssthresh: InitialSsthresh::Bytes(cwnd),
        initial_window_bytes: cwnd,
        declared_bdp_bytes: Some(500 * MSS),
        ..HyblaParams::default()
    };
    let mut h = Hybla::new(params, MSS);
    // ρ known: the first sample does not scale the window.
    h.set_rho_for_test(20.0);
    h
}

/// One ACK frame per millisecond from `from` to `to`, each acknowledging `bytes_per_ms`
/// sent one RTT (500 ms + `queue(t)`) earlier. Returns the time after the last frame.
fn feed(
    h: &mut Hybla,
    from: Duration,
    to: Duration,
    bytes_per_ms: u64,
    queue: impl Fn(Duration) -> Duration,
) -> Duration {
    let mut now = from;
    while now < to {
        h.on_ack(now, now - MS(500) - queue(now), bytes_per_ms, false);
        h.on_end_acks(now, 0, false);
        now += MS(1);
    }
    now
}

#[test]
fn a_loss_is_judged_by_the_queue_its_packet_met_not_by_the_queue_at_detection() {
    // 100 ms of queue for a second, then none: a packet sent in the queue (lost at the full
    // buffer) is declared a round later, when the queue has gone.
    let mut h = on_known_path(500 * MSS);
    let t = feed(&mut h, MS(1000), MS(2000), MSS, |_| Duration::ZERO);
    let t = feed(&mut h, t, MS(3000), MSS, |_| MS(100));
    let t = feed(&mut h, t, MS(4000), MSS, |_| Duration::ZERO);
    assert_eq!(h.queue_delay(), Duration::ZERO);
    // Sent at 2.5 s (its neighbours' RTT samples show 100 ms of queue): congestion.
    let w = h.window();
    h.on_congestion_event(t, MS(2500) - MS(100), false, MSS);
    assert_eq!(h.window(), w / 2, "a packet that met a full queue");
    // Sent at 3.6 s, with the queue empty: random, the window stays.
    let w = h.window();
    h.on_congestion_event(t + MS(1), MS(3600), false, MSS);
    assert_eq!(h.window(), w, "a packet that met an empty queue");
    let tally = h.loss_tally();
    assert_eq!((tally.congestion_events, tally.random_events), (1, 1));
}

#[test]
fn alone_a_loss_at_the_flows_own_queue_is_random_and_at_the_highest_queue_congestion() {
    // A queue of 4 ms (the flow's own, at its budget plus a packet) is below 3 budgets; 40 ms,
    // the highest seen, is above ¾ of it.
    let mut h = on_known_path(500 * MSS);
    let t = feed(&mut h, MS(1000), MS(1500), MSS, |_| Duration::ZERO);
    let t = feed(&mut h, t, MS(2000), MSS, |_| MS(40));
    let t = feed(&mut h, t, MS(3000), MSS, |_| MS(4));
    assert!(!h.competing());
    // Budget: 2 packets + the 1-packet burst of each ACK frame, at the declared 1 MB/s.
    assert!(h.queue_budget() >= MS(3) && h.queue_budget() < Duration::from_micros(3100));
    assert_eq!(h.congestion_threshold(), MS(30));
    h.on_congestion_event(t, MS(2500) - MS(504), false, MSS);
    assert_eq!(h.loss_tally().random_events, 1);
    h.on_congestion_event(t, MS(1800) - MS(540), false, MSS);
    assert_eq!(h.loss_tally().congestion_events, 1);
}

#[test]
fn growth_is_rho_squared_below_the_pipe_one_segment_at_a_saturated_pipe_none_on_a_full_link() {
    let grown = |h: &mut Hybla, now: Duration, queue: Duration| {
        let before = h.window() as f64 + h.pending_increment_bytes();
        h.on_ack(now, now - MS(500) - queue, MSS, false);
        h.window() as f64 + h.pending_increment_bytes() - before
    };
    let per_segment = |segments: f64, w: u64| segments * MSS as f64 * MSS as f64 / w as f64;
    // Below the declared pipe (0.97 × 500 segments), no queue: ρ² = 400 segments per RTT.
    let mut h = on_known_path(200 * MSS);
    let t = feed(&mut h, MS(1000), MS(1100), MSS / 2, |_| Duration::ZERO);
    assert!(h.window() < 485 * MSS);
    let w = h.window();
    let g = grown(&mut h, t, Duration::ZERO);
    assert!((g - per_segment(400.0, w)).abs() < 1e-6, "{g}");
    // The link full (the flow gets its capacity and a queue was seen within the rate window),
    // the queue gone with this ACK, the link still counting as full: 1 segment per RTT.
    let mut h = on_known_path(600 * MSS);
    let t = feed(&mut h, MS(1000), MS(1600), MSS, |_| Duration::ZERO);
    let t = feed(&mut h, t, MS(1900), MSS, |_| MS(3));
    let t = feed(&mut h, t, t + MS(1), MSS, |_| Duration::ZERO);
    let w = h.window();
    let g = grown(&mut h, t, Duration::ZERO);
    assert!((g - per_segment(1.0, w)).abs() < 1e-6, "{g}");
    // Not full (half the capacity), above the pipe: ρ = 20 segments per RTT, the reference
    // NewReno's pace (jitter or a longer path makes the RTT longer than the base).
    let mut h = on_known_path(600 * MSS);
    let t = feed(&mut h, MS(1000), MS(1600), MSS / 2, |_| Duration::ZERO);
    let w = h.window();
    let g = grown(&mut h, t, Duration::ZERO);
    assert!((g - per_segment(20.0, w)).abs() < 1e-6, "{g}");
    // The link full (the flow gets its capacity over the last second) and a queue of its
    // budget: no growth.
    let t = feed(&mut h, t, MS(2800), MSS, |_| MS(4));
    assert_eq!(grown(&mut h, t, MS(4)), 0.0);
}

/// One window-limited ACK of a segment with no queue on [`on_known_path`]: (growth per RTT
/// it applied, window before it).
fn quiet_ack(h: &mut Hybla, now: Duration) -> (f64, u64) {
    let window = h.window();
    let before = window as f64 + h.pending_increment_bytes();
    h.on_ack(now, now - MS(500), MSS, false);
    h.on_end_acks(now, 0, false);
    // The increment per MSS acknowledged × the window in segments.
    let grown = h.window() as f64 + h.pending_increment_bytes() - before;
    (grown * window as f64 / (MSS * MSS) as f64, window)
}

#[test]
fn above_the_pipe_without_a_queue_growth_doubles_every_round_up_to_rho_squared() {
    // A pipe declared before the path grew: the window at 600 segments over a declared 500,
    // the flow getting all it sends and no queue. Once the link no longer counts as full (no
    // queue for the rate window, 2 s), growth per RTT starts at one segment and doubles with
    // every window's worth of bytes acknowledged, never above ρ² = 400.
    let mut h = on_known_path(600 * MSS);
    let t = feed(&mut h, MS(1000), MS(1600), MSS, |_| Duration::ZERO);
    let t = feed(&mut h, t, MS(2000), MSS, |_| MS(3));
    // A random loss after the queue (its packet met none): within the rate window of the
    // queue one segment per RTT, the link counts as full. (Without the loss a round without
    // the queue would end that: `a_window_no_longer_making_its_queue_ends_the_full_link_*`.)
    let t = feed(&mut h, t, MS(2600), MSS, |_| Duration::ZERO);
    let w = h.window();
    h.on_congestion_event(t, MS(2100), false, MSS);
    assert_eq!((h.window(), h.loss_tally().random_events), (w, 1));
    let t = feed(&mut h, t, MS(3000), MSS, |_| Duration::ZERO);
    assert!((quiet_ack(&mut h, t).0 - 1.0).abs() < 1e-3);
    // The link no longer full: the probe starts at one segment (its first ACK grows the
    // window as the full link's rule did), then each ACK multiplies it by 2^(MSS / window) —
    // a doubling per window acknowledged.
    let mut now = t + MS(1);
    let (mut growth, mut window) = quiet_ack(&mut h, now);
    let mut previous_window = window;
    while growth <= 1.0 + 1e-9 && now < MS(4100) {
        previous_window = window;
        now += MS(1);
        (growth, window) = quiet_ack(&mut h, now);
    }
    let mut expected_log2 = MSS as f64 / previous_window as f64;
    assert!(
        (growth / 2f64.powf(expected_log2) - 1.0).abs() < 1e-9,
        "the probe's second ACK: {growth}"
    );
    while expected_log2 < 3.0 {
        expected_log2 += MSS as f64 / window as f64;
        now += MS(1);
        (growth, window) = quiet_ack(&mut h, now);
        let expected = 2f64.powf(expected_log2);
        assert!(
            (growth / expected - 1.0).abs() < 1e-9,
            "{expected_log2} windows in: {growth} ≠ {expected}"
        );
    }
    assert!(growth > 7.9, "three windows acknowledged: ×8, {growth}");
    // Five seconds limited by the application advance nothing: the next window-limited ACK
    // goes on where the probe was, not at ρ².
    let mut app_limited_until = now + MS(1);
    while app_limited_until < now + MS(5000) {
        h.on_ack(app_limited_until, app_limited_until - MS(500), MSS, true);
        h.on_end_acks(app_limited_until, 0, true);
        app_limited_until += MS(1);
    }
    let expected = 2f64.powf(expected_log2 + MSS as f64 / window as f64);
    let (growth, _) = quiet_ack(&mut h, app_limited_until);
    assert!(
        (growth / expected - 1.0).abs() < 1e-9,
        "after the application-limited stretch: {growth} ≠ {expected}"
    );
    let now = app_limited_until + MS(1);
    // Capped at ρ².
    let later = feed(&mut h, now, now + MS(6000), MSS, |_| Duration::ZERO);
    let (g, _) = quiet_ack(&mut h, later);
    assert!((g / 400.0 - 1.0).abs() < 1e-9, "capped at ρ²: {g}");
    // A queue of the budget ends the probe; it starts again from one segment once the link
    // no longer counts as full (a round without the queue, no loss since).
    let t = feed(&mut h, later + MS(1), later + MS(300), MSS, |_| MS(3));
    let t = feed(&mut h, t, t + MS(520), MSS, |_| Duration::ZERO);
    let (g, _) = quiet_ack(&mut h, t);
    assert!(g < 1.1, "after a queue: {g}");
}

#[test]
fn a_flow_its_application_held_probes_above_a_stale_pipe_from_rho_segments() {
    // Above the declared pipe (600 segments over 500), no queue ever: the link does not count
    // as full and the probe starts at the first window-limited ACK. Held by its application
    // until `held_until` (its ACK frames say so), then limited by its window.
    /// A flow held from 1 s to `until`; returns it and the time after its last ACK frame.
    fn held_until(until: Duration) -> (Hybla, Duration) {
        let mut h = on_known_path(600 * MSS);
        let mut now = MS(1000);
        while now < until {
            h.on_ack(now, now - MS(500), MSS, true);
            h.on_end_acks(now, 0, true);
            now += MS(1);
        }
        (h, now)
    }
    fn first_probe_step(until: Duration) -> f64 {
        let (mut h, now) = held_until(until);
        quiet_ack(&mut h, now).0
    }
    // The application held it up to 12 s, more than 10 s into the flow: from ρ = 20.
    let held = first_probe_step(MS(12_000));
    assert!((held - 20.0).abs() < 1e-6, "{held}");
    // Held only in its first 10 s (a bulk flow before its data): from one segment.
    let young = first_probe_step(MS(6_000));
    assert!((young - 1.0).abs() < 1e-6, "{young}");
    // Held up to 12 s, the probe starting 11 s later: the hold is stale, one segment.
    let (mut h, now) = held_until(MS(12_000));
    let (late, _) = quiet_ack(&mut h, now + MS(11_000));
    assert!((late - 1.0).abs() < 1e-6, "{late}");
}

#[test]
fn in_rounds_the_application_limited_a_share_below_the_capacity_is_no_competitor() {
    // As in `competing_at_half_capacity`: half the declared capacity through a standing 50 ms
    // queue for more than a round. Window-limited, that is a competitor; with every ACK frame
    // saying the application limited sending, the low rate may be the application's own, and
    // the share shows nothing.
    fn competing(app_limited: bool) -> bool {
        let mut h = on_known_path(300 * MSS);
        let mut now = MS(1000);
        while now < MS(3000) {
            let queue = if now < MS(1600) {
                Duration::ZERO
            } else {
                MS(50)
            };
            h.on_ack(now, now - MS(500) - queue, MSS / 2, app_limited);
            h.on_end_acks(now, 0, app_limited);
            now += MS(1);
        }
        h.competing()
    }
    assert!(competing(false));
    assert!(!competing(true));
}

#[test]
fn above_a_declared_capacity_the_path_outgrew_the_measured_pipe_bounds_growth() {
    // Above the declared pipe (500 segments), no queue, 200 ms into the probe. A flow
    // delivering the declared 1 MB/s grows by the probe's pace (under two segments per RTT).
    // One delivering 2 MB/s shows the declaration is stale: the pipe it measures (2 MB/s ×
    // 500 ms = 1000 segments) bounds the growth instead, so at 600 segments it grows at
    // Hybla's ρ² = 400 per RTT, and above that pipe, at 1100 segments, at ρ = 20 per RTT.
    fn growth_at(cwnd_segments: u64, bytes_per_ms: u64) -> f64 {
        let mut h = on_known_path(cwnd_segments * MSS);
        let t = feed(&mut h, MS(1000), MS(1200), bytes_per_ms, |_| Duration::ZERO);
        quiet_ack(&mut h, t).0
    }
    let at_capacity = growth_at(600, MSS);
    assert!(at_capacity < 2.0, "{at_capacity}");
    let below_the_measured_pipe = growth_at(600, 2 * MSS);
    assert!(
        (below_the_measured_pipe - 400.0).abs() < 1e-6,
        "{below_the_measured_pipe}"
    );
    let above_the_measured_pipe = growth_at(1100, 2 * MSS);
    assert!(
        (above_the_measured_pipe - 20.0).abs() < 1e-6,
        "{above_the_measured_pipe}"
    );
}

#[test]
fn a_burst_the_application_queues_does_not_make_the_link_full_a_window_limited_queue_does() {
    // Above a declared pipe (600 segments over 500), no queue for long enough that the link no
    // longer counts as full: the probe grows the window by more than a segment per RTT.
    // Then 200 ms of a 10 ms queue, longer than the filter window (125 ms) and shorter than
    // the round (500 ms): as a burst of the application's own (its ACK frames report the
    // application as the limit) the probe goes on; as the window's excess it ends.
    fn probing(window_limited_burst: bool) -> f64 {
        let mut h = on_known_path(600 * MSS);
        let mut now = feed(&mut h, MS(1000), MS(4000), MSS, |_| Duration::ZERO);
        let (before, _) = quiet_ack(&mut h, now);
        assert!(before > 2.0, "probing before the burst: {before}");
        let burst_end = now + MS(200);
        while now < burst_end {
            now += MS(1);
            h.on_ack(now, now - MS(510), MSS, !window_limited_burst);
            h.on_end_acks(now, 0, !window_limited_burst);
        }
        quiet_ack(&mut h, now + MS(1)).0
    }
    let after_app_burst = probing(false);
    assert!(after_app_burst > 2.0, "{after_app_burst}");
    // The window's excess on a full link: no growth at all while the queue shows.
    let after_excess = probing(true);
    assert!(after_excess < 1.0 + 1e-3, "{after_excess}");
}

#[test]
fn an_own_queue_that_stands_a_round_is_drained_to_the_budget() {
    // Alone at the capacity with 20 ms of queue (10 budgets) for a whole round: the window
    // becomes delivery rate × (base RTT + budget) ≈ 1 MB/s × 502 ms.
    let mut h = on_known_path(520 * MSS);
    let t = feed(&mut h, MS(1000), MS(1600), MSS, |_| Duration::ZERO);
    feed(&mut h, t, MS(2800), MSS, |_| MS(20));
    assert!(!h.competing());
    let expected = 1_000_000.0 * 0.502;
    assert!(
        (h.window() as f64 - expected).abs() < 2.0 * MSS as f64,
        "{}",
        h.window()
    );
}

#[test]
fn a_queue_the_application_makes_while_it_limits_sending_is_not_drained() {
    // The same 20 ms for a whole round, but every ACK frame reports the application, not the
    // window, as the limit (a media scheduler that keeps its own queue target), with four
    // packets less than the window in flight: the window goes down to what the application
    // used, not to the pipe (≈ 502 kB), so a keyframe that needed that room still has it.
    let mut h = on_known_path(520 * MSS);
    let mut now = feed(&mut h, MS(1000), MS(1600), MSS, |_| Duration::ZERO);
    let before = h.window();
    let used = before - 4 * MSS;
    assert!(used > 506_000, "{before}");
    while now < MS(2800) {
        h.on_ack(now, now - MS(520), MSS, true);
        h.on_end_acks(now, used, true);
        now += MS(1);
    }
    // (The same queue in window-limited rounds drains to the pipe:
    // `an_own_queue_that_stands_a_round_is_drained_to_the_budget`.)
    assert_eq!(h.window(), used);
}

#[test]
fn a_queue_that_outlives_a_drain_is_a_competitors_and_is_not_drained_again() {
    // Alone at the capacity with 20 ms of queue: drained once. The queue then stands on while
    // the flow gets 90 % of the capacity (over the 85 % that would mark competition by rate
    // alone): someone else keeps it. The flow must see that within the rounds after its drain
    // rather than drain again at each settling, shrinking to its share of somebody's queue.
    let mut h = on_known_path(520 * MSS);
    let t = feed(&mut h, MS(1000), MS(1600), MSS, |_| Duration::ZERO);
    let t = feed(&mut h, t, MS(2800), MSS, |_| MS(20));
    let drained = h.window();
    assert!(drained < 505 * MSS, "drained once: {drained}");
    feed(&mut h, t, MS(4400), 9 * MSS / 10, |_| MS(20));
    assert!(h.competing());
    assert!(h.window() >= drained, "{} < {drained}", h.window());
}

#[test]
fn a_queue_that_outlives_a_drain_the_application_bounded_is_no_competitor() {
    // As in `a_queue_the_application_makes_while_it_limits_sending_is_not_drained`: 20 ms of
    // queue for a round while the application limits sending, and the drain keeps what it had
    // in flight. So the queue (the application's own target) stands on after the drain, at
    // 90 % of the capacity (above the 85 % that marks competition by rate alone). A drain that
    // left the flight in place tested nothing: the flow is still alone. (One to the pipe that
    // the queue outlives does test it: `a_queue_that_outlives_a_drain_is_a_competitors_and_is_not_drained_again`.)
    let mut h = on_known_path(520 * MSS);
    let mut now = feed(&mut h, MS(1000), MS(1600), MSS, |_| Duration::ZERO);
    let used = h.window() - 4 * MSS;
    while now < MS(4400) {
        let bytes = if now < MS(2800) { MSS } else { 9 * MSS / 10 };
        h.on_ack(now, now - MS(520), bytes, true);
        h.on_end_acks(now, used, true);
        now += MS(1);
    }
    assert_eq!(h.window(), used, "drained to the application's flight");
    assert!(!h.competing());
}

#[test]
fn the_base_rtt_is_refreshed_half_a_window_after_the_path_was_last_seen_empty() {
    // A queue of the flow's budget that never empties: 5 s (half the 10 s base-RTT window)
    // after the path was last seen empty, the window drops to 0.99 × the pipe for a round (a
    // window below the pipe lets the queue drain while the link stays busy).
    let mut h = on_known_path(501 * MSS);
    let t = feed(&mut h, MS(1000), MS(1600), MSS, |_| Duration::ZERO);
    let mut t = feed(&mut h, t, MS(6500), MSS, |_| MS(2));
    assert!(h.window() > 495 * MSS, "{}", h.window());
    let mut smallest = h.window();
    while t < MS(7000) {
        t = feed(&mut h, t, t + MS(1), MSS, |_| MS(2));
        smallest = smallest.min(h.window());
    }
    // 0.99 × 1 MB/s × 500 ms.
    assert_eq!(smallest, 495_000, "refreshed");
    // The refill is congestion avoidance, not a slow start back into the queue.
    assert_eq!(h.phase(), Phase::CongestionAvoidance);
}

#[test]
fn a_base_rtt_that_crept_up_does_not_make_the_queue_look_empty() {
    // The path (500 ms) is seen once; then a 4 ms queue stands whatever the window does (the
    // test's ACK stream ignores it). After 10 s the base-RTT filter has forgotten 500 ms and
    // reads the queue as path; refreshes must go on, against the smallest RTT of the last
    // minute, rather than stop because the queue now looks empty.
    let mut h = on_known_path(510 * MSS);
    let t = feed(&mut h, MS(1000), MS(1600), MSS, |_| Duration::ZERO);
    let mut t = feed(&mut h, t, MS(13_000), MSS, |_| MS(4));
    assert_eq!(h.base_rtt(), Some(MS(504)), "the base RTT crept up");
    let mut smallest = u64::MAX;
    while t < MS(19_000) {
        t = feed(&mut h, t, t + MS(1), MSS, |_| MS(4));
        smallest = smallest.min(h.window());
    }
    assert_eq!(smallest, 495_000, "a refresh at 0.99 × 1 MB/s × 500 ms");
}

/// A flow on [`on_known_path`] with 300 segments that got half the declared 1 MB/s for 0.6 s
/// with no queue, then through a standing 50 ms queue until 3 s: a competitor found. Returns
/// it and the time after the last ACK frame.
fn competing_at_half_capacity() -> (Hybla, Duration) {
    let mut h = on_known_path(300 * MSS);
    let t = feed(&mut h, MS(1000), MS(1600), MSS / 2, |_| Duration::ZERO);
    let t = feed(&mut h, t, MS(3000), MSS / 2, |_| MS(50));
    assert!(h.competing());
    (h, t)
}

#[test]
fn a_standing_queue_while_the_flow_gets_less_than_its_capacity_is_competition() {
    // Half the capacity (0.5 MB/s of the declared 1 MB/s) through a 50 ms queue for more than
    // a round: somebody else's packets are in the queue. Growth is then one segment per RTT
    // (NewReno's), and a loss counts as congestion from a quarter of the highest queue.
    let (mut h, t) = competing_at_half_capacity();
    let (w, before) = (h.window(), h.window() as f64 + h.pending_increment_bytes());
    h.on_ack(t, t - MS(550), MSS, false);
    let g = h.window() as f64 + h.pending_increment_bytes() - before;
    assert!((g - MSS as f64 * MSS as f64 / w as f64).abs() < 1e-6, "{g}");
    assert_eq!(h.congestion_threshold(), MS(50) / 4);
}

/// Growth per RTT 7 s after a congestion cut at [`on_known_path`] with 300 segments: before
/// the cut the flow got `bytes_per_ms` (of the declared 1 000 per ms) through a 50 ms queue
/// for 1.4 s; after it, no queue and the same rate (the others cut too and regrow).
/// Returns the growth and the window over the window before the cut.
fn growth_7_s_after_a_cut(bytes_per_ms: u64) -> (f64, f64) {
    let mut h = on_known_path(300 * MSS);
    let t = feed(&mut h, MS(1000), MS(1600), bytes_per_ms, |_| Duration::ZERO);
    let t = feed(&mut h, t, MS(3000), bytes_per_ms, |_| MS(50));
    let before_cut = h.window();
    h.on_congestion_event(t, t - MS(550), false, MSS);
    assert_eq!(h.window(), before_cut / 2);
    let t = feed(&mut h, t, t + MS(7000), bytes_per_ms, |_| Duration::ZERO);
    let (per_rtt, window) = quiet_ack(&mut h, t);
    (per_rtt, window as f64 / before_cut as f64)
}

#[test]
fn after_a_cut_next_to_a_competitor_the_regrowth_to_the_window_it_came_from_competes() {
    // Half the capacity through a standing queue: a competitor. Its hold (5 s) has lapsed 7 s
    // after the cut, but the window (half, plus a segment per RTT) is still below the one it
    // was cut from: one segment per RTT, NewReno's, not ρ² = 400.
    let (per_rtt, window) = growth_7_s_after_a_cut(MSS / 2);
    assert!(window < 0.6, "{window}");
    assert!((per_rtt - 1.0).abs() < 1e-6, "{per_rtt}");
    // A tenth of the capacity with a queue standing is a stall, not a competitor: the hold
    // lapses and the window is back to ρ² below the pipe.
    let (per_rtt, _) = growth_7_s_after_a_cut(MSS / 10);
    assert!((per_rtt - 400.0).abs() < 1e-6, "{per_rtt}");
}

#[test]
fn the_regrowth_hold_ends_in_a_round_the_application_limited() {
    // A cut next to a credible competitor (half the capacity through a standing queue), then
    // 7 s in which the application sends less than the window: the window cannot regrow to
    // the target, and the flow is no longer held in the competing mode once the 5 s hold from
    // the detection has lapsed. Without the application's limit it still is (the test above).
    let (mut h, t) = competing_at_half_capacity();
    h.on_congestion_event(t, t - MS(550), false, MSS);
    let mut now = t;
    while now < t + MS(7000) {
        h.on_ack(now, now - MS(500), MSS / 2, true);
        h.on_end_acks(now, 0, true);
        now += MS(1);
    }
    assert!(!h.competing());
}

/// Growth per RTT 7 s after a congestion cut (ρ = 20) of a flow that found a competitor on a
/// noisy reading: 4.8 s of a queue that comes and goes within a round (30 ms for 250 ms of
/// every 600, longer than the filter window: a neighbour's sawtooth behind RED), then half
/// the declared capacity through a standing 50 ms queue; after the cut, no queue and the
/// same rate.
#[test]
fn above_rho_3_a_competitor_found_on_a_noisy_reading_holds_the_regrowth() {
    let mut h = on_known_path(300 * MSS);
    let t = feed(&mut h, MS(1000), MS(1600), MSS / 2, |_| Duration::ZERO);
    let t = feed(&mut h, t, MS(6400), MSS / 2, |now| {
        if now.as_millis() % 600 < 250 {
            MS(30)
        } else {
            Duration::ZERO
        }
    });
    let t = feed(&mut h, t, MS(7800), MSS / 2, |_| MS(50));
    assert!(h.competing());
    assert!(h.noisy_recently_for_test());
    let before_cut = h.window();
    h.on_congestion_event(t, t - MS(550), false, MSS);
    let t = feed(&mut h, t, t + MS(7000), MSS / 2, |_| Duration::ZERO);
    // At ρ = 20 the noise is the shared queue's own: 7 s after the cut, past the 5 s hold,
    // the regrowth to the window it came from still competes, one segment per RTT.
    let (per_rtt, window) = quiet_ack(&mut h, t);
    assert!(window < before_cut, "{window} {before_cut}");
    assert!((per_rtt - 1.0).abs() < 1e-6, "{per_rtt}");
}

/// Growth per RTT of a flow with `window_segments` in flight that gets half the declared
/// 1 MB/s through a standing 50 ms queue on [`on_known_path`] for 2 s (a competitor; the
/// queue keeps the window's growth at a segment per RTT until the competitor shows), after
/// 100 ms of the empty path's RTT the application limited (no growth).
fn competing_growth_with(window_segments: u64) -> f64 {
    let mut h = on_known_path(window_segments * MSS);
    let mut now = MS(1000);
    while now < MS(3000) {
        let empty = now < MS(1100);
        let queue = if empty { Duration::ZERO } else { MS(50) };
        h.on_ack(now, now - MS(500) - queue, MSS / 2, empty);
        h.on_end_acks(now, h.window(), false);
        now += MS(1);
    }
    assert!(h.competing());
    quiet_ack(&mut h, now).0
}

#[test]
fn at_a_full_link_the_flow_holding_less_than_the_others_catches_up_at_rho_per_rtt() {
    // The pipe and the queue hold 1 MB/s × 550 ms = 550 segments. Starting from 300 (357 by
    // the time the queue shows) the flow holds more than the others: NewReno's segment per
    // RTT. From 120 (about 200 then, against 350) it catches up at ρ = 20 per RTT.
    let bigger = competing_growth_with(300);
    assert!((bigger - 1.0).abs() < 1e-6, "{bigger}");
    let smaller = competing_growth_with(120);
    assert!((smaller - 20.0).abs() < 1e-6, "{smaller}");
}

/// What [`sharing_for_6_s`] saw besides the flow itself.
struct Sharing {
    /// The time after the last ACK frame.
    end: Duration,
    /// The window when the queue appeared.
    start: u64,
    /// The largest window of the run: where any yielding began.
    largest: u64,
    /// When the flow first judged the link shared, and its window then.
    competing_from: (Duration, u64),
}

/// A window-limited flow on [`on_known_path`] (ρ = 20, 300 segments) that gets
/// `bytes_per_ms` of the declared 1 MB/s through a standing 50 ms queue for 6 s, after 100 ms
/// of the empty path's RTT that the application limited.
fn sharing_for_6_s(bytes_per_ms: u64) -> (Hybla, Sharing) {
    let mut h = on_known_path(300 * MSS);
    let mut now = MS(1000);
    let mut start = None;
    let mut largest = 0;
    let mut competing_from = None;
    while now < MS(7100) {
        let empty = now < MS(1100);
        let queue = if empty { Duration::ZERO } else { MS(50) };
        h.on_ack(now, now - MS(500) - queue, bytes_per_ms, empty);
        h.on_end_acks(now, h.window(), false);
        if !empty {
            start.get_or_insert(h.window());
        }
        largest = largest.max(h.window());
        if h.competing() {
            competing_from.get_or_insert((now, h.window()));
        }
        now += MS(1);
    }
    let sharing = Sharing {
        end: now,
        start: start.expect("the queue appeared"),
        largest,
        competing_from: competing_from.expect("the flow found the link shared"),
    };
    (h, sharing)
}

#[test]
fn next_to_others_that_get_far_less_the_flow_gives_window_back() {
    // Three quarters of the capacity against the others' quarter (3×, beyond the 1.4 the
    // rule allows): an eighth of the window per round (550 ms) given back, no growth between.
    let (h, sharing) = sharing_for_6_s(MSS * 3 / 4);
    assert!(h.competing());
    let yielded = h.window() as f64 / sharing.largest as f64;
    let steps = (yielded.ln() / (7.0f64 / 8.0).ln()).round();
    assert!(
        (8.0..=10.0).contains(&steps),
        "{steps} steps in about 5 s of 550 ms rounds"
    );
    let expected = (7.0f64 / 8.0).powf(steps);
    assert!(
        (yielded - expected).abs() < 1e-3,
        "{yielded} against (7/8)^{steps} = {expected}"
    );
    // 0.55 against 0.45 is within it: a segment per RTT, NewReno's, i.e. an MSS × the bytes
    // acknowledged ÷ the window.
    let (h, sharing) = sharing_for_6_s(MSS * 55 / 100);
    assert!(h.competing());
    let (from, window_then) = sharing.competing_from;
    let acked = (sharing.end - from).as_millis() as f64 * (MSS * 55 / 100) as f64;
    let expected = MSS as f64 * acked / window_then as f64;
    let grown = (h.window() - window_then) as f64;
    assert!(
        (grown - expected).abs() < 0.05 * expected,
        "{grown} against {expected}"
    );
    assert!(
        h.window() > sharing.start,
        "{} {}",
        h.window(),
        sharing.start
    );
}

/// [`sharing_for_6_s`] at three quarters of the capacity (the flow yields), then 5 s with no
/// queue (the link no longer full, past the yield's hold of 8 base RTTs), then 3 s through a
/// standing 50 ms queue at `bytes_per_ms`. Returns the window at the end over the window
/// when the queue came back.
fn yielding_again_at(bytes_per_ms: u64) -> f64 {
    let (mut h, sharing) = sharing_for_6_s(MSS * 3 / 4);
    let (mut now, start) = (sharing.end, sharing.start);
    assert!((h.window() as f64) < 0.75 * start as f64, "it yielded");
    let mut back = None;
    let end = now + MS(8000);
    while now < end {
        let full = now >= end - MS(3000);
        let queue = if full { MS(50) } else { Duration::ZERO };
        let rate = if full { bytes_per_ms } else { MSS * 3 / 4 };
        h.on_ack(now, now - MS(500) - queue, rate, false);
        h.on_end_acks(now, h.window(), false);
        if full {
            back.get_or_insert(h.window());
        }
        now += MS(1);
    }
    assert!(h.competing());
    h.window() as f64 / back.expect("the queue came back") as f64
}

#[test]
fn others_that_took_nothing_of_a_yield_are_not_yielded_to_again() {
    // The others got a quarter of the capacity before the yield and a quarter when the link
    // is full again: they did not take what was given (a flow its application limits), and
    // the flow keeps its window. Had they got more (0.32 of it), it yields again.
    let limited = yielding_again_at(MSS * 3 / 4);
    assert!(limited >= 1.0, "{limited}");
    let took_it = yielding_again_at(MSS * 68 / 100);
    assert!(took_it < 0.9, "{took_it}");
}

#[test]
fn next_to_others_that_get_far_more_a_congestion_loss_cuts_by_cubics_beta() {
    // A quarter of the capacity against the others' three quarters: 0.7 of the window kept
    // at a congestion loss. At 0.55 against 0.45, NewReno's halving.
    for (bytes_per_ms, beta) in [(MSS / 4, 0.7), (MSS * 55 / 100, 0.5)] {
        let (mut h, sharing) = sharing_for_6_s(bytes_per_ms);
        let now = sharing.end;
        assert!(h.competing());
        let before = h.window();
        h.on_congestion_event(now, now - MS(550), false, MSS);
        let kept = h.window() as f64 / before as f64;
        assert!((kept - beta).abs() < 1e-3, "{bytes_per_ms}: {kept}");
    }
}

#[test]
fn next_to_a_credible_competitor_a_loss_at_a_queue_of_one_budget_is_congestion() {
    // Competition found (half the declared 1 MB/s through a 50 ms queue), then the queue at
    // 5 ms: above the flow's budget (2.5 ms), below a quarter of the highest queue (12.5 ms),
    // where an AQM drops at a low average. A loss of a packet that met it is congestion.
    let (mut h, t) = competing_at_half_capacity();
    let t = feed(&mut h, t, MS(3500), MSS / 2, |_| MS(5));
    assert!(h.competing());
    assert!(h.queue_budget() < MS(5) && h.congestion_threshold() > MS(5));
    h.on_congestion_event(t, MS(3300) - MS(505), false, MSS);
    assert_eq!(h.loss_tally().congestion_events, 1);
}

#[test]
fn the_time_judged_shared_counts_every_stretch_between_ack_frames_spent_competing() {
    // Competition found as above; two more seconds of the same add two seconds to the tally.
    // A flow alone at its capacity with no queue never competes and counts nothing.
    let mut h = on_known_path(300 * MSS);
    let t = feed(&mut h, MS(1000), MS(1600), MSS / 2, |_| Duration::ZERO);
    assert_eq!(h.loss_tally().shared_time, Duration::ZERO);
    let t = feed(&mut h, t, MS(3000), MSS / 2, |_| MS(50));
    assert!(h.competing());
    let found = h.loss_tally().shared_time;
    assert!(found > Duration::ZERO && found < MS(1400), "{found:?}");
    feed(&mut h, t, MS(5000), MSS / 2, |_| MS(50));
    assert!(h.competing());
    assert_eq!(h.loss_tally().shared_time - found, MS(2000));

    let mut alone = on_known_path(300 * MSS);
    feed(&mut alone, MS(1000), MS(5000), MSS, |_| Duration::ZERO);
    assert_eq!(alone.loss_tally().shared_time, Duration::ZERO);
}

#[test]
fn delivering_more_than_the_declared_capacity_voids_a_competition_found_by_the_share() {
    // Competition found as above (half the declared 1 MB/s through a 50 ms queue). Then the
    // queue goes and the flow delivers 2 MB/s for 1.2 s, within the competing hold: the share
    // of the declared capacity that found the competitor is void, and growth is Hybla's again
    // (at least ρ = 20 segments per RTT), not the competing mode's one segment, which a flow
    // still getting half the capacity keeps.
    fn growth_after(bytes_per_ms: u64) -> (bool, f64) {
        let (mut h, t) = competing_at_half_capacity();
        let t = feed(&mut h, t, MS(4200), bytes_per_ms, |_| Duration::ZERO);
        (h.competing(), quiet_ack(&mut h, t).0)
    }
    let (competing, outgrown) = growth_after(2 * MSS);
    assert!(competing && outgrown >= 20.0 - 1e-6, "{outgrown}");
    // 2 % more payload than the declared IP rate: no path that still matches the declaration
    // carries that much (its headers alone take 2–4 %).
    let (competing, just_above) = growth_after(MSS * 102 / 100);
    assert!(competing && just_above >= 20.0 - 1e-6, "{just_above}");
    let (competing, shared) = growth_after(MSS / 2);
    assert!(competing && (shared - 1.0).abs() < 1e-6, "{shared}");
}

#[test]
fn a_window_no_longer_making_its_queue_ends_the_full_link_unless_a_loss_emptied_it() {
    // At 600 segments on a path declared at 500, getting the declared capacity: 400 ms of a
    // queue, then none for 1.2 s. The same window no longer making its queue a round (500 ms)
    // later means the bottleneck got faster: the probe runs (doubling per window
    // acknowledged) instead of the full link's one segment per RTT. A clear queue (10 ms,
    // over twice the 3 ms budget) is enough whatever happened since; a queue of one budget
    // (3 ms) only if no packet was lost since, as a flow's own random losses empty its queue
    // for a moment: then the full link's rule holds for the rate window (2 s).
    fn growth_after(queue: Duration, random_loss: bool) -> f64 {
        let mut h = on_known_path(600 * MSS);
        let t = feed(&mut h, MS(1000), MS(1400), MSS, |_| Duration::ZERO);
        let t = feed(&mut h, t, MS(1800), MSS, |_| queue);
        let t = feed(&mut h, t, MS(2000), MSS, |_| Duration::ZERO);
        if random_loss {
            h.on_congestion_event(t, MS(1900), false, MSS);
            assert_eq!(h.loss_tally().random_events, 1);
        }
        let t = feed(&mut h, t, MS(3000), MSS, |_| Duration::ZERO);
        quiet_ack(&mut h, t).0
    }
    for random_loss in [false, true] {
        let after_a_clear_queue = growth_after(MS(10), random_loss);
        assert!(after_a_clear_queue > 1.5, "{after_a_clear_queue}");
    }
    let after_a_budget = growth_after(MS(3), false);
    assert!(after_a_budget > 1.5, "{after_a_budget}");
    let after_a_budget_and_a_loss = growth_after(MS(3), true);
    assert!(
        (after_a_budget_and_a_loss - 1.0).abs() < 1e-3,
        "{after_a_budget_and_a_loss}"
    );
}

/// A pipe-aware core on a path of `rtt_ms` (ρ = `rtt_ms` ÷ 25) with no declared capacity,
/// past start-up at 200 segments, whose link delivers whatever its window sends (one ACK
/// frame per ms, the window's worth per RTT), with the RTT samples `jitter(t)` above the path
/// for 3 s. Returns the window at the end.
fn window_after_3_s_on_a_link_with_room(rtt_ms: u64, jitter: impl Fn(u64) -> u64) -> u64 {
    let params = HyblaParams {
        initial_ssthresh: InitialSsthresh::Bytes(200 * MSS),
        initial_window_bytes: 200 * MSS,
        ..HyblaParams::default()
    };
    let mut h = Hybla::new(params, MSS);
    // ρ known: the first sample does not scale the window.
    h.set_rho_for_test(rtt_ms as f64 / 25.0);
    for ms in 1000..4000 {
        let now = MS(ms);
        let bytes = h.window() / rtt_ms;
        h.on_ack(now, now - MS(rtt_ms) - MS(jitter(ms)), bytes, false);
        h.on_end_acks(now, h.window(), false);
    }
    h.window()
}

/// Spikes of 20 ms for 30 ms of every 150 ms: longer than the filter window, gone within a
/// round, whatever the flow does.
fn spikes(t: u64) -> u64 {
    if t % 150 < 30 { 20 } else { 0 }
}

#[test]
fn under_jitter_a_window_whose_rate_follows_it_grows_by_a_share_of_itself_per_round() {
    // On a 40 ms path (ρ = 1.6) the queue reading is noise, and the delay rules (a queue at
    // the budget: one segment per RTT) would hold the window near where it is; the rate
    // follows the window, so it grows by ELASTIC_GAIN_PER_ROUND per round once that shows
    // (a span of 200 ms compared with one of a 10 % smaller window).
    let noisy = window_after_3_s_on_a_link_with_room(40, spikes);
    // Without the jitter the delay rules apply: below the measured pipe nothing stands in
    // the way of ρ² = 2.56 segments per RTT, at most 75 rounds × 2.56 segments more.
    let quiet = window_after_3_s_on_a_link_with_room(40, |_| 0);
    assert!(
        quiet <= 200 * MSS + (75.0 * 2.56 * MSS as f64) as u64 + MSS,
        "{quiet}"
    );
    // 1.035 per round for most of the 75 rounds (the first comparison waits for 10 % more
    // window), and never more than 1.035 per round.
    let most = (200 * MSS) as f64 * 1.035f64.powi(40);
    let at_most = (200 * MSS) as f64 * 1.035f64.powi(76);
    assert!(
        noisy as f64 > most && (noisy as f64) < at_most,
        "noisy {noisy}, quiet {quiet}, bounds {most:.0}–{at_most:.0}"
    );
}

/// A flow in congestion avoidance at 150 segments on a 40 ms path (ρ = 1.6, known).
fn lone_flow_on_a_40_ms_path() -> Hybla {
    let params = HyblaParams {
        initial_ssthresh: InitialSsthresh::Bytes(150 * MSS),
        initial_window_bytes: 150 * MSS,
        ..HyblaParams::default()
    };
    let mut h = Hybla::new(params, MSS);
    h.set_rho_for_test(1.6);
    h
}

/// The window after an ECN-CE mark at t = 4 s on a 40 ms path (ρ = 1.6) that delivers
/// 2 MB/s, whose RTT samples (one per ms) carry `jitter(ms)` on top of the base RTT, and the
/// window before the mark.
fn window_cut_on_a_full_link(jitter: impl Fn(u64) -> u64) -> (u64, u64) {
    let mut h = lone_flow_on_a_40_ms_path();
    for ms in 1000..4000 {
        let now = MS(ms);
        h.on_ack(now, now - MS(40) - MS(jitter(ms)), 2 * MSS, false);
        h.on_end_acks(now, h.window(), false);
    }
    let before = h.window();
    let now = MS(4000);
    h.on_congestion_event(now, now - MS(50), false, 0);
    (before, h.window())
}

/// Path jitter: a new draw per ms, uniform over 0–20 ms, and spikes of 50 ms for 30 ms of
/// every 300 ms (longer than the filter window, gone within a round). Mean 15 ms.
fn path_jitter(ms: u64) -> u64 {
    let draw = ms
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407)
        >> 33;
    draw % 21 + if ms % 300 < 30 { 50 } else { 0 }
}

#[test]
fn under_path_jitter_a_congestion_cut_leaves_the_window_the_link_needs() {
    // Without jitter the cut is NewReno's.
    let (before, after) = window_cut_on_a_full_link(|_| 0);
    assert_eq!(after, before / 2);
    // With it, the link needs 2 MB/s × the mean RTT, 40 + 15 ms, to stay busy: 110 kB.
    // Halving went below that; the cut stays above it, and below what the longest RTT
    // (110 ms) would need.
    let (before, after) = window_cut_on_a_full_link(path_jitter);
    assert!(before / 2 < 110 * MSS, "{before}");
    assert!(
        (110 * MSS..=220 * MSS).contains(&after) && after < before,
        "{before} → {after}"
    );
}

/// Whether two losses cut the window of a lone flow on a 40 ms path (ρ = 1.6) that delivered
/// 2 MB/s for 3 s with `jitter(ms)` on its RTT samples: 20 packets sent 1 ms apart from 4 s,
/// all acknowledged in one frame but packets `lost`, which the frame declares lost.
fn cut_by_two_losses(jitter: impl Fn(u64) -> u64, lost: [u64; 2]) -> bool {
    let mut h = lone_flow_on_a_40_ms_path();
    for ms in 1000..4000 {
        let now = MS(ms);
        h.on_ack(now, now - MS(40) - MS(jitter(ms)), 2 * MSS, false);
        h.on_end_acks(now, h.window(), false);
    }
    for i in 0..20 {
        h.on_sent(MS(4000 + i), MSS, 1);
    }
    let now = MS(4060);
    for i in (0..20).filter(|i| !lost.contains(i)) {
        h.on_ack(now, MS(4000 + i), MSS, false);
    }
    h.on_end_acks(now, h.window(), false);
    let before = h.window();
    h.on_congestion_event(now, MS(4000 + lost[1]), false, 2 * MSS);
    h.window() < before
}

#[test]
fn under_path_jitter_two_losses_in_a_row_are_congestion_two_apart_random() {
    assert!(cut_by_two_losses(path_jitter, [5, 6]));
    assert!(!cut_by_two_losses(path_jitter, [5, 15]));
    // Where the queue can be read, the queue decides: no queue, no cut.
    assert!(!cut_by_two_losses(|_| 0, [5, 6]));
}

/// The window before and after an ECN-CE mark on a 40 ms path (ρ = 1.6) with
/// [`path_jitter`]: 3 s at 2 MB/s, then 1.5 s at `share` of it through 40 ms more delay (a
/// competitor found on a noisy reading, which is doubtful below ρ = 3).
fn window_cut_next_to_a_doubtful_competitor(share: f64) -> (u64, u64) {
    let mut h = lone_flow_on_a_40_ms_path();
    for ms in 1000..5500 {
        let now = MS(ms);
        let (rate, queue) = if ms < 4000 {
            (2 * MSS, 0)
        } else {
            ((2.0 * share * MSS as f64) as u64, 40)
        };
        h.on_ack(now, now - MS(40 + queue + path_jitter(ms)), rate, false);
        h.on_end_acks(now, h.window(), false);
    }
    assert!(h.competing() && h.noisy_recently_for_test());
    let before = h.window();
    let now = MS(5500);
    h.on_congestion_event(now, now - MS(90), false, 0);
    (before, h.window())
}

#[test]
fn next_to_a_doubtful_competitor_a_flow_that_keeps_most_of_its_rate_keeps_the_jitter_floor() {
    // At 0.7 of the rate it measured the competitor is more likely the path's jitter read as
    // a queue: the cut goes no lower than the window the jitter needs (as alone, the test
    // above; here that is above the whole window, 123 kB). At 0.3 the noise is more likely
    // the neighbours' queue: NewReno's halving.
    let (before, after) = window_cut_next_to_a_doubtful_competitor(0.7);
    assert!(after >= (110 * MSS).min(before), "{before} → {after}");
    let (before, after) = window_cut_next_to_a_doubtful_competitor(0.3);
    assert_eq!(after, before / 2);
}

/// Whether a lone flow on a 40 ms path (ρ = 1.6) ever judges itself shared while it delivers
/// 2 MB/s for 3 s, then, after its own reduction (an ECN-CE mark), half that through `queue`
/// more delay for 2 s, with `jitter(ms)` on its RTT samples.
fn ever_competing_around_own_reduction(jitter: impl Fn(u64) -> u64, queue: u64) -> bool {
    let mut h = lone_flow_on_a_40_ms_path();
    let mut competing = false;
    for ms in 1000..6000 {
        let now = MS(ms);
        if ms == 4000 {
            h.on_congestion_event(now, now - MS(50), false, 0);
        }
        let (rate, queue) = if ms < 4000 {
            (2 * MSS, 0)
        } else {
            (MSS, queue)
        };
        h.on_ack(now, now - MS(40 + queue + jitter(ms)), rate, false);
        h.on_end_acks(now, h.window(), false);
        competing |= h.competing();
    }
    competing
}

/// LEO-like jitter (`leo-starlink`'s kind, twice its 4.5 ms mean): on each direction an
/// exponential draw with an 8 ms mean, drawn anew every 10 ms and held, the two directions
/// 5 ms out of phase. A round's smallest sample stays a few ms above the base RTT that the
/// rare small draws on both ways set.
fn held_exponential_jitter(ms: u64) -> u64 {
    let exponential = |slot: u64| {
        let hash = slot
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
            >> 33;
        let uniform = (hash % 1000) as f64 / 1000.0;
        (-(1.0 - uniform).ln() * 8.0) as u64
    };
    exponential(ms / 10) + exponential(1_000_000 + (ms + 5) / 10)
}

#[test]
fn under_held_jitter_the_rounds_smallest_sample_after_the_flows_own_reduction_is_no_competitor() {
    // Two budgets of the flow's own queue (the competition test's bar without noise) are
    // below what the held draws leave in a round's smallest sample; the drain's limit, two
    // allowances that cover the noise's spread, is not.
    assert!(!ever_competing_around_own_reduction(
        held_exponential_jitter,
        0
    ));
    // A queue that stands 40 ms beyond the jitter while the flow gets half its rate is a
    // competitor's, noise or not.
    assert!(ever_competing_around_own_reduction(
        held_exponential_jitter,
        40
    ));
    assert!(ever_competing_around_own_reduction(|_| 0, 40));
}

#[test]
fn the_loss_share_counts_at_least_200_packets() {
    // 30 ms rounds of 25 packets with two random losses each (a 2 % share over 200 packets
    // once enough rounds are in): the 5 % bound is not reached by one unlucky round.
    let params = HyblaParams {
        initial_ssthresh: InitialSsthresh::Bytes(25 * MSS),
        initial_window_bytes: 25 * MSS,
        ..HyblaParams::default()
    };
    let mut h = Hybla::new(params, MSS);
    let mut now = Duration::from_secs(1);
    for _ in 0..20 {
        for _ in 0..25 {
            now += Duration::from_micros(1200);
            h.on_ack(now, now - MS(30), MSS, false);
            h.on_end_acks(now, 0, false);
        }
        h.on_congestion_event(now, now - MS(30), false, MSS / 2);
    }
    // Four losses in the last round (16 %) but 2.2 % over the last 200 packets: random.
    let w = h.window();
    for _ in 0..4 {
        h.on_congestion_event(now, now - MS(30), false, MSS);
    }
    assert_eq!(h.window(), w);
    assert_eq!(h.loss_tally().congestion_events, 0);
}

/// Competing (half the declared 1 MB/s through a standing queue) while the queue grows by
/// 40 ms per second from 1.6 to 9 s: 40 kB/s of window growth at the bottleneck. The flow's
/// own window is held (application-limited ACKs), so all of it is the others'. Returns the
/// time after the last ACK.
fn next_to_a_queue_growing_40_kb_per_s(h: &mut Hybla) -> Duration {
    let t = feed(h, MS(1000), MS(1600), MSS / 2, |_| Duration::ZERO);
    let mut now = t;
    while now < MS(9000) {
        let q = MS(50) + Duration::from_secs_f64(0.040 * (now - t).as_secs_f64());
        h.on_ack(now, now - MS(500) - q, MSS / 2, true);
        h.on_end_acks(now, 0, false);
        now += MS(1);
    }
    now
}

#[test]
fn shared_growth_matches_what_the_other_flows_add_to_the_queue() {
    // The others add 40 kB/s: 40 kB/s × RTT (≈ 0.5 s + queue) / 1000 B ≈ 20+ segments per
    // RTT, where NewReno's would be 1.
    let mut h = on_known_path(300 * MSS);
    let now = next_to_a_queue_growing_40_kb_per_s(&mut h);
    assert!(h.competing());
    let (w, before) = (h.window(), h.window() as f64 + h.pending_increment_bytes());
    let q = h.queue_delay();
    h.on_ack(now, now - MS(500) - q, MSS, false);
    let segments_per_rtt =
        (h.window() as f64 + h.pending_increment_bytes() - before) * w as f64 / (MSS * MSS) as f64;
    let expected = 40_000.0 * (0.5 + q.as_secs_f64()) / MSS as f64;
    assert!(
        (segments_per_rtt - expected).abs() / expected < 0.05,
        "{segments_per_rtt} vs {expected}"
    );
}

#[test]
fn next_to_a_growing_flow_a_loss_at_an_empty_queue_is_congestion_as_for_newreno() {
    // Competing, the others' growth measured, then the queue empties for a moment (the
    // neighbour reduced): a loss of a packet that met no queue would be random alone, but the
    // neighbour halves on its own random losses, so this flow does too.
    let mut h = on_known_path(300 * MSS);
    let dip = next_to_a_queue_growing_40_kb_per_s(&mut h);
    let now = feed(&mut h, dip, dip + MS(20), MSS / 2, |_| Duration::ZERO);
    assert!(h.competing());
    let w = h.window();
    h.on_congestion_event(now, dip + MS(10) - MS(500), false, MSS);
    assert_eq!(h.loss_tally().congestion_events, 1);
    assert_eq!(h.window(), w / 2);
}

#[test]
fn shared_growth_is_the_mean_since_the_queues_trough_as_for_cubics_cycle() {
    // A Cubic-like competitor: the queue rises 80 ms per second for 2 s after its trough,
    // then stays on a plateau for 4 s. What matches it is its mean growth over the cycle so
    // far, 160 ms / 6 s ≈ 26.7 kB/s at 1 MB/s, not the last spans' (none) nor the first's (80).
    // Competition first, on a flat 50 ms queue; the rise starts from there.
    let (mut h, start) = competing_at_half_capacity();
    assert!(h.competing());
    let queue = |now: Duration| {
        let rising = (now - start).as_secs_f64().min(2.0);
        MS(50) + Duration::from_secs_f64(0.080 * rising)
    };
    let mut now = start;
    while now < start + MS(6000) {
        h.on_ack(now, now - MS(500) - queue(now), MSS / 2, true);
        h.on_end_acks(now, 0, false);
        now += MS(1);
    }
    assert!(h.competing());
    let (w, before) = (h.window(), h.window() as f64 + h.pending_increment_bytes());
    let q = h.queue_delay();
    h.on_ack(now, now - MS(500) - queue(now), MSS, false);
    let segments_per_rtt =
        (h.window() as f64 + h.pending_increment_bytes() - before) * w as f64 / (MSS * MSS) as f64;
    let expected = 160_000.0 / 6.0 * (0.5 + q.as_secs_f64()) / MSS as f64;
    assert!(
        (segments_per_rtt - expected).abs() / expected < 0.1,
        "{segments_per_rtt} vs {expected}"
    );
}

#[test]
fn at_rho_one_every_loss_is_congestion_as_for_newreno() {
    // RTT 20 ms < RTT0: ρ = 1, no random-loss tolerance even with an empty queue.
    let params = HyblaParams {
        initial_ssthresh: InitialSsthresh::Bytes(50 * MSS),
        initial_window_bytes: 50 * MSS,
        ..HyblaParams::default()
    };
    let mut h = Hybla::new(params, MSS);
    let mut now = Duration::from_secs(1);
    for _ in 0..200 {
        now += MS(1);
        h.on_ack(now, now - MS(20), MSS, false);
        h.on_end_acks(now, 0, false);
    }
    assert_eq!(h.rho(), 1.0);
    let w = h.window();
    h.on_congestion_event(now, now - MS(5), false, MSS);
    assert_eq!(h.window(), w / 2);
    assert_eq!(h.loss_tally().congestion_events, 1);
}

// ---- Careful Resume (RFC 9959) in the core -----------------------------------------------------

/// A core resuming from `saved_cwnd` bytes at a saved RTT of 500 ms, whose handshake flight
/// (two packets at 0) was acknowledged at 500 ms with nothing left in flight (ρ = 20: an
/// initial window of 100 packets became 2 000), then sent the initial window's 100 packets
/// at 600 ms: more than normally permitted, the jump (RFC 9959 §3.2). The large initial
/// window keeps half the PipeSize above Hybla's minimum window of 2ρ packets.
fn resumed_and_jumped(saved_cwnd: u64) -> Hybla {
    let params = HyblaParams {
        initial_window_bytes: 100 * MSS,
        careful_resume: Some(ResumeParams::new(SavedPath {
            saved_cwnd_bytes: saved_cwnd,
            saved_rtt: MS(500),
        })),
        ..HyblaParams::default()
    };
    let mut h = Hybla::new(params, MSS);
    h.on_sent(Duration::ZERO, MSS, 1);
    h.on_sent(Duration::ZERO, MSS, 1);
    h.on_ack(MS(500), Duration::ZERO, MSS, false);
    h.on_ack(MS(500), Duration::ZERO, MSS, false);
    h.on_end_acks(MS(500), 0, true);
    assert_eq!(h.window(), 2_000 * MSS);
    assert_eq!(h.resume_phase(), Some(ResumePhase::Reconnaissance));
    for _ in 0..100 {
        h.on_sent(MS(600), MSS, 1);
    }
    h
}

#[test]
fn a_resumed_core_jumps_to_half_the_saved_window_and_does_not_grow_unvalidated() {
    let mut h = resumed_and_jumped(10_000_000);
    assert_eq!(h.resume_phase(), Some(ResumePhase::Unvalidated));
    // jump_cwnd is half the saved window (5 MB), paced over 1.1 RTTs (RFC 9959 §4.3.2's rate
    // is the most, one RTT); quinn's pacer sends 1.25 windows per RTT, so the window is
    // 5 MB / 1.1 / 1.25 = 3.64 MB.
    assert_eq!(h.window(), 3_636_363);
    // Acknowledgments of the initial window's packets: no growth (RFC 9959 §3.3).
    for _ in 0..10 {
        h.on_sent(MS(700), MSS, 1);
    }
    h.on_ack(MS(1100), MS(600), MSS, false);
    h.on_end_acks(MS(1100), 109 * MSS, false);
    assert_eq!(h.window(), 3_636_363);
    // A packet sent after the jump acknowledged: Validating at the flight, but not below the
    // window before the jump (2 000 packets, ρ-scaled), which then grows by one byte per byte
    // acknowledged (§3.4), not by Hybla's 2^ρ − 1.
    h.on_ack(MS(1200), MS(700), MSS, false);
    h.on_end_acks(MS(1200), 108 * MSS, false);
    assert_eq!(h.resume_phase(), Some(ResumePhase::Validating));
    assert_eq!(h.window(), 2_000 * MSS);
    h.on_ack(MS(1201), MS(700), MSS, false);
    assert_eq!(h.window(), 2_001 * MSS);
}

#[test]
fn the_jump_leaves_over_its_span_then_the_window_leads_the_flight_up_to_jump_cwnd() {
    // jump_cwnd 5 MB over 1.1 RTTs: quinn paces 1.25 windows per RTT, so the window is
    // 3.64 MB (4.55 MB per RTT) while the flight is below it. From there it stays four
    // packets ahead of the flight, the pacer timing each packet, and never above jump_cwnd,
    // RFC 9959's CWND.
    let mut h = resumed_and_jumped(10_000_000);
    assert_eq!(h.window(), 3_636_363);
    let mut flight = 100 * MSS;
    let (mut at_span_rate, mut leading) = (0, 0);
    while h.resume_phase() == Some(ResumePhase::Unvalidated) {
        h.on_sent(MS(700), MSS, 1);
        flight += MSS;
        if h.resume_phase() != Some(ResumePhase::Unvalidated) {
            break;
        }
        if flight + 4 * MSS <= 3_636_363 {
            assert_eq!(h.window(), 3_636_363);
            at_span_rate += 1;
        } else {
            assert_eq!(h.window(), (flight + 4 * MSS).min(5_000_000));
            leading += 1;
        }
    }
    // 3.64 MB of 5 MB at the span's rate (less the 100 packets in flight at the jump and the
    // four of the lead), the rest led up to jump_cwnd less a packet.
    assert_eq!((at_span_rate, leading), (3_532, 1_367));
    // The flight reaches jump_cwnd, not the window before it: Validating at the flight
    // (§3.3, Completed sending all unvalidated packets).
    assert!(flight + MSS > 5_000_000 && flight <= 5_000_000, "{flight}");
    assert_eq!(h.resume_phase(), Some(ResumePhase::Validating));
    assert_eq!(h.window(), flight);
}

#[test]
fn validating_does_not_grow_while_the_jump_comes_back_slower_than_it_left() {
    // 100 unvalidated packets sent 1 ms apart; acknowledged 2 ms apart from one RTT later
    // (the path delivers half the jump's rate), and on a path as fast as the jump, 1 ms apart.
    // The queue reading (a quarter-RTT filter) has not seen the queue yet in either.
    let windows: Vec<u64> = [2, 1]
        .into_iter()
        .map(|ack_spacing_ms| {
            let mut h = resumed_and_jumped(10_000_000);
            for i in 0..100 {
                h.on_sent(MS(600 + i), MSS, 1);
            }
            for i in 0..40 {
                let sent = MS(600 + i);
                let now = MS(1_100 + ack_spacing_ms * i);
                h.on_ack(now, sent, MSS, false);
                h.on_end_acks(now, (199 - i) * MSS, false);
            }
            assert_eq!(h.resume_phase(), Some(ResumePhase::Validating));
            h.window()
        })
        .collect();
    // Entered at the window before the jump (2 000 packets). At half the rate it grows until
    // 16 packets' worth of acknowledgements after the first show the rate; at the jump's own
    // rate it grows by every one of the 38 packets acknowledged after the one entering.
    assert_eq!(windows, [2_016 * MSS, 2_038 * MSS]);
}

#[test]
fn validating_grows_no_further_than_the_saved_rate() {
    // Saved window 5 MB, jump 2.5 MB: quinn paces 1.25 windows per RTT, so Validating's
    // window stops at 5 MB / 1.25 = 4 MB. 2 600 packets sent ten per millisecond (the jump's
    // 2 500 less one, then Validating's), the first 2 000 acknowledged at the same rate one RTT
    // later on an empty path: slow start would be at 2.5 + 2 MB.
    let mut h = resumed_and_jumped(5_000_000);
    let sent_at = |i: u64| MS(600) + Duration::from_micros(100 * i);
    for i in 0..2_600 {
        h.on_sent(sent_at(i), MSS, 1);
    }
    for i in 0..2_000 {
        let now = sent_at(i) + MS(500);
        h.on_ack(now, sent_at(i), MSS, false);
        h.on_end_acks(now, (2_699 - i) * MSS, false);
    }
    assert_eq!(h.resume_phase(), Some(ResumePhase::Validating));
    assert_eq!(h.window(), 4_000_000);
}

/// [`resumed_and_jumped`], then 100 unvalidated packets sent 1 ms apart from 600 ms, each
/// acknowledged one RTT later (the 500 ms path plus `queue`): Validating at the first, Normal
/// at the last.
fn resumed_and_validated(queue: Duration) -> Hybla {
    let mut h = resumed_and_jumped(10_000_000);
    for i in 0..100 {
        h.on_sent(MS(600 + i), MSS, 1);
    }
    for i in 0..100 {
        let sent = MS(600 + i);
        let now = sent + MS(500) + queue;
        h.on_ack(now, sent, MSS, false);
        h.on_end_acks(now, (199 - i) * MSS, false);
    }
    assert_eq!(h.resume_phase(), Some(ResumePhase::Normal));
    h
}

#[test]
fn validating_grows_by_slow_start_until_a_queue_of_its_own_shows() {
    // Half of the unvalidated packets acknowledged: Validating (entered at the flight after
    // the first one) grows one byte per byte acknowledged on an empty path, and not at all
    // once the jump queues at the bottleneck (200 ms of queue over the 500 ms path).
    let windows: Vec<u64> = [Duration::ZERO, MS(200)]
        .into_iter()
        .map(|queue| {
            let mut h = resumed_and_jumped(10_000_000);
            for i in 0..100 {
                h.on_sent(MS(600 + i), MSS, 1);
            }
            for i in 0..50 {
                let sent = MS(600 + i);
                let now = sent + MS(500) + queue;
                h.on_ack(now, sent, MSS, false);
                h.on_end_acks(now, (199 - i) * MSS, false);
            }
            assert_eq!(h.resume_phase(), Some(ResumePhase::Validating));
            h.window()
        })
        .collect();
    // Entered at the window before the jump (2 000 packets; 198 in flight), then 48 packets
    // acknowledged.
    assert_eq!(windows, [2_048 * MSS, 2_000 * MSS]);
}

#[test]
fn a_validated_jump_behind_a_standing_queue_ends_start_up_at_the_window() {
    // The queue stood through the round: the jump filled the path (its capacity fell since
    // it was saved), and congestion avoidance goes on from the validated window.
    let h = resumed_and_validated(MS(200));
    assert_eq!(h.ssthresh(), h.window());
}

#[test]
fn a_validated_jump_on_an_empty_path_keeps_start_up_going() {
    // No queue: the saved window was below the capacity; start-up goes on (the estimated
    // threshold is still unknown).
    let h = resumed_and_validated(Duration::ZERO);
    assert_eq!(h.ssthresh(), u64::MAX);
}

#[test]
fn congestion_during_the_jump_is_a_safe_retreat_to_half_the_pipe() {
    let mut h = resumed_and_jumped(10_000_000);
    // ECN-CE: congestion whatever the classifier thinks. PipeSize = the 100 packets in
    // flight at the jump.
    h.on_congestion_event(MS(700), MS(600), false, 0);
    assert_eq!(h.resume_phase(), Some(ResumePhase::SafeRetreat));
    assert_eq!(h.window(), 50 * MSS);
    assert_eq!(h.ssthresh(), 50 * MSS);
    // No growth in Safe Retreat (§3.5).
    h.on_ack(MS(1100), MS(600), MSS, false);
    h.on_end_acks(MS(1100), 99 * MSS, false);
    assert_eq!(h.window(), 50 * MSS);
    let report = h.resume_report().unwrap();
    assert!(report.retreated);
    assert_eq!(report.jump_bytes, Some(5_000_000));
}

#[test]
fn persistent_congestion_during_the_jump_gets_the_controllers_own_response() {
    let mut h = resumed_and_jumped(10_000_000);
    h.on_congestion_event(MS(3000), MS(600), true, 100 * MSS);
    assert_eq!(h.resume_phase(), Some(ResumePhase::Normal));
    // Hybla's minimum window: 2 packets × ρ.
    assert_eq!(h.window(), 40 * MSS);
}

#[test]
fn a_core_without_careful_resume_never_reports_one() {
    let h = core(20.0, 100 * MSS, InitialSsthresh::Infinite);
    assert_eq!(h.resume_phase(), None);
    assert_eq!(h.resume_report(), None);
}

/// A core with the defaults and a 10-segment initial window (four of them, 40 kB, is the
/// smallest window worth saving).
fn ten_segment_start() -> Hybla {
    let params = HyblaParams {
        initial_window_bytes: 10 * MSS,
        ..HyblaParams::default()
    };
    Hybla::new(params, MSS)
}

/// A core on a 1 MB/s, 500 ms path (pipe 500 kB) acknowledging one packet per millisecond for
/// two seconds, limited by its window or (`app_limited`) by the application.
fn observed(app_limited: bool) -> Hybla {
    let mut h = ten_segment_start();
    let mut now = MS(500);
    while now < MS(2500) {
        h.on_ack(now, now - MS(500), MSS, app_limited);
        h.on_end_acks(now, 0, app_limited);
        now += MS(1);
    }
    h
}

#[test]
fn the_observation_is_the_window_limited_pipe_and_the_base_rtt() {
    // RFC 9959 §3.1: what was delivered per round trip while the window limited sending.
    let saved = observed(false).observation().expect("500 kB ≥ 4 IW");
    assert!(
        (495_000..=505_000).contains(&saved.saved_cwnd_bytes),
        "{saved:?}"
    );
    assert_eq!(saved.saved_rtt, MS(500));
    // The application limited it throughout: nothing measured the path's capacity.
    assert_eq!(observed(true).observation(), None);
}

/// The saved window is what 1 MB/s delivers in the 500 ms round trip (±1 %).
fn assert_saved_one_rtt_at_1_mb_per_s(h: &Hybla) {
    let saved = h.observation().expect("the window limited sending");
    assert!(
        (495_000..=505_000).contains(&saved.saved_cwnd_bytes),
        "{saved:?}"
    );
}

#[test]
fn the_observation_is_one_rtt_at_full_rate_including_the_acks_after_the_data_ran_out() {
    // RFC 9959 §3.1: "the volume of data acknowledged in one RTT". A short transfer on a
    // 500 ms path (1 MB/s): packets acknowledged at half the rate until 1 300 ms, then at the
    // full rate; the application runs out of data at 1 600 ms (every ACK frame from then on
    // says so), and the packets it sent until then are acknowledged, two at a time every
    // 2 ms, until 2 100 ms. A rate averaged over a second would mix the ramp in (≈ 400 kB);
    // whole rounds that no ACK frame called application-limited saw 350 kB at best. The
    // packets acknowledged after 1 600 ms were sent while the window limited sending: the
    // last RTT holds 500 kB.
    let mut h = ten_segment_start();
    let mut now = MS(500);
    while now < MS(1600) {
        if now >= MS(1300) || now.as_millis().is_multiple_of(2) {
            h.on_ack(now, now - MS(500), MSS, false);
        }
        h.on_end_acks(now, 0, false);
        now += MS(1);
    }
    while now < MS(2100) {
        h.on_ack(now, now - MS(501), MSS, true);
        h.on_ack(now, now - MS(500), MSS, true);
        h.on_end_acks(now, 0, true);
        now += MS(2);
    }
    assert_saved_one_rtt_at_1_mb_per_s(&h);
}

#[test]
fn acks_bunched_faster_than_the_packets_were_sent_do_not_raise_the_observation() {
    // 1 MB/s for a second, then the same packets' ACKs arrive twice as fast (ACK compression:
    // a burst of ACKs released at once) for 250 ms: the send span, not the ACK span, times
    // them (BBR's delivery-rate interval), and the path stays at 500 kB per RTT.
    let mut h = ten_segment_start();
    let mut now = MS(500);
    let mut sent = Duration::ZERO;
    while now < MS(1500) {
        h.on_ack(now, sent, MSS, false);
        h.on_end_acks(now, 0, false);
        now += MS(1);
        sent += MS(1);
    }
    while now < MS(1750) {
        h.on_ack(now, sent, MSS, false);
        h.on_ack(now, sent + MS(1), MSS, false);
        h.on_end_acks(now, 0, false);
        now += MS(1);
        sent += MS(2);
    }
    assert_saved_one_rtt_at_1_mb_per_s(&h);
}

#[test]
fn an_observation_below_four_initial_windows_is_not_saved() {
    // 1 packet per 20 ms at 500 ms: 25 kB per round trip < 4 × 10 kB.
    let mut h = ten_segment_start();
    let mut now = MS(500);
    while now < MS(5500) {
        h.on_ack(now, now - MS(500), MSS, false);
        h.on_end_acks(now, 0, false);
        now += MS(20);
    }
    assert_eq!(h.observation(), None);
}

#[test]
fn with_loss_by_queue_a_congestion_loss_at_a_low_standing_queue_means_the_queue_is_shared() {
    // A path that has shown 40 ms of queue (so a lone flow's buffer limit reads as 30 ms),
    // then 8 ms of queue (above two budgets of 3 ms) for a round, standing or in 200 ms
    // stretches between empty ones; twenty losses of packets sent in it. Only the loss-rate
    // classifier takes them for congestion, and only a standing queue makes that a shared one.
    let competing_after = |classifier: LossClassifier, standing: bool| {
        let params = HyblaParams {
            initial_ssthresh: InitialSsthresh::Bytes(500 * MSS),
            initial_window_bytes: 500 * MSS,
            declared_bdp_bytes: Some(500 * MSS),
            loss_classifier: classifier,
            ..HyblaParams::default()
        };
        let mut h = Hybla::new(params, MSS);
        h.set_rho_for_test(20.0);
        let t = feed(&mut h, MS(1000), MS(3000), MSS, |_| Duration::ZERO);
        let t = feed(&mut h, t, MS(3200), MSS, |_| MS(40));
        let mut now = feed(&mut h, t, MS(3700), MSS, |t| {
            if standing || (t.as_millis() / 200) % 2 == 0 {
                MS(8)
            } else {
                Duration::ZERO
            }
        });
        assert!(!h.competing());
        // Acknowledged at 3.3 s, so sent at 3.3 s − 508 ms, in the middle of an 8 ms stretch.
        let sent = MS(3300) - MS(508);
        for _ in 0..20 {
            h.on_congestion_event(now, sent, false, MSS);
            now = feed(&mut h, now, now + MS(1), MSS, |_| MS(8));
        }
        h.competing()
    };
    assert!(competing_after(LossClassifier::LossByQueue, true));
    assert!(!competing_after(LossClassifier::LossByQueue, false));
    assert!(!competing_after(LossClassifier::QueueThreshold, true));
}
