use super::*;

const MTU: u64 = 1200;

/// The parameters the arithmetic below is worked out for.
fn config() -> BalancerConfig {
    BalancerConfig {
        target: Duration::from_millis(25),
        max_growth_per_round: 2.0,
        min_window_packets: 4,
        ..BalancerConfig::default()
    }
}

fn view(now_ms: u64, cwnd: u64, in_flight: u64, srtt_ms: u64, min_rtt_ms: u64) -> TransportView {
    TransportView {
        now: Duration::from_millis(now_ms),
        cwnd_bytes: cwnd,
        in_flight_bytes: in_flight,
        acked_bytes: 0,
        srtt: Duration::from_millis(srtt_ms),
        min_rtt: Duration::from_millis(min_rtt_ms),
        rtt_sample_min: None,
        mtu_bytes: MTU,
    }
}

/// A balancer whose last round ended saturated: 7 500 B in flight over 100 ms (600 kbit/s
/// delivered) with a 50 ms minimum RTT, so 50 ms of queue, more than half the target.
fn saturated_at_600_kbit() -> Balancer {
    let mut b = Balancer::new(config());
    b.observe(&view(0, 1_000_000, 7_500, 100, 50));
    b.observe(&view(100, 1_000_000, 7_500, 100, 50));
    b
}

/// `view` with the smallest RTT sample acknowledged since the last one.
fn sampled(view: TransportView, sample_ms: u64) -> TransportView {
    TransportView {
        rtt_sample_min: Some(Duration::from_millis(sample_ms)),
        ..view
    }
}

#[test]
fn a_queue_above_target_is_drained_to_target_in_one_round() {
    let mut b = Balancer::new(config());
    // 100 kB in flight, min RTT 50 ms, srtt 150 ms: 100 ms of queue at 100 kB / 150 ms.
    b.observe(&view(0, 200_000, 100_000, 150, 50));
    assert_eq!(b.window_bytes(), 200_000);
    b.observe(&view(150, 200_000, 100_000, 150, 50));
    // cap = min(cap, used) × (50 + 25) / (50 + 100) = 100 000 × 0.5
    assert_eq!(b.window_bytes(), 50_000);
    assert_eq!(b.wakeup(), Some(Duration::from_millis(300)));
}

#[test]
fn no_queue_grows_the_cap_by_the_factor_or_one_target_of_rate_up_to_the_controller_window() {
    let mut b = Balancer::new(config());
    b.observe(&view(0, 40_000, 40_000, 50, 50));
    b.observe(&view(50, 40_000, 40_000, 50, 50));
    // Growth is capped by cwnd + 2 packets.
    assert_eq!(b.window_bytes(), 40_000 + 2 * MTU);
    // 40 kB over 50 ms is 800 kB/s: one 25 ms target's worth is 20 kB, less than ×2.
    let mut b = Balancer::new(config());
    b.observe(&view(0, 1_000_000, 40_000, 50, 50));
    b.window_bytes = 40_000;
    b.observe(&view(50, 1_000_000, 40_000, 50, 50));
    assert_eq!(b.window_bytes(), 60_000);
    // A short RTT: 10 kB over 10 ms is 1 MB/s, + 25 kB per round; ×2 is less.
    let mut b = Balancer::new(config());
    b.observe(&view(0, 1_000_000, 10_000, 10, 10));
    b.window_bytes = 10_000;
    b.observe(&view(10, 1_000_000, 10_000, 10, 10));
    assert_eq!(b.window_bytes(), 20_000);
    // GEO: 300 kB over 600 ms is 500 kB/s; a round adds 12.5 kB (25 ms of queue), not
    // 300 kB (600 ms of it).
    let mut b = Balancer::new(config());
    b.observe(&view(0, 1_000_000, 300_000, 600, 600));
    b.window_bytes = 300_000;
    b.observe(&view(600, 1_000_000, 300_000, 600, 600));
    assert_eq!(b.window_bytes(), 312_500);
}

/// GEO as above, window-limited, after one round at an empty path (the smoothed RTT and the
/// samples at the minimum), which added one target of rate: 300 kB → 312.5 kB.
fn geo_after_one_empty_round() -> Balancer {
    let mut b = Balancer::new(config());
    b.observe(&sampled(view(0, 1_000_000, 300_000, 600, 600), 600));
    b.window_bytes = 300_000;
    b.observe(&sampled(view(600, 1_000_000, 300_000, 600, 600), 600));
    assert_eq!(b.window_bytes(), 312_500);
    b
}

#[test]
fn each_round_the_path_stays_empty_grows_twice_as_much_as_the_one_before() {
    // Round 2, empty too, adds two targets.
    let mut b = geo_after_one_empty_round();
    b.observe(&sampled(view(1_200, 1_000_000, 312_500, 600, 600), 600));
    // 312.5 kB / 0.6 s × 25 ms × 2 = 26 041.67 B.
    assert_eq!(b.window_bytes(), 312_500 + 26_041);
    // A sample with a quarter target of queue (6.25 ms) ends the run: one target again.
    b.observe(&sampled(view(1_800, 1_000_000, 338_541, 600, 600), 607));
    assert_eq!(b.window_bytes(), 338_541 + 338_541 * 25 / 600);
}

#[test]
fn a_round_whose_samples_mostly_show_a_queue_is_not_empty_whatever_its_last_sample_says() {
    let mut b = geo_after_one_empty_round();
    // Round 2: the smoothed RTT and the last sample at the minimum, but three of its four
    // samples 10 ms above it (more than the quarter target, 6.25 ms): not empty, so one
    // target again, not two.
    for now_ms in [800, 950, 1_100] {
        b.observe(&sampled(view(now_ms, 1_000_000, 312_500, 600, 600), 610));
    }
    b.observe(&sampled(view(1_200, 1_000_000, 312_500, 600, 600), 600));
    assert_eq!(b.window_bytes(), 312_500 + 312_500 * 25 / 600);
    // Round 3 at the minimum throughout is the first of a new run: one target.
    b.observe(&sampled(view(1_800, 1_000_000, 325_520, 600, 600), 600));
    assert_eq!(b.window_bytes(), 325_520 + 325_520 * 25 / 600);
}

#[test]
fn two_caps_behind_the_same_queue_converge_by_the_fairness_increment() {
    // Two connections share a queue of 40 ms over a 100 ms minimum RTT (target 25 ms, so a
    // mild excess: at most two targets), one with 60 kB out, the other with 15 kB. Little's
    // law alone scales both by 125 / 140 and keeps the ratio at 4; the increment,
    // 0.5 × √(rate × 0.1 s × 1 200 B), is twice as large for a rate four times as large.
    let after_one_round = |in_flight: u64| {
        let mut b = Balancer::new(config());
        b.observe(&view(0, 1_000_000, in_flight, 140, 100));
        b.observe(&view(140, 1_000_000, in_flight, 140, 100));
        b.window_bytes()
    };
    let scaled = |in_flight: f64| in_flight * 125.0 / 140.0;
    let increment = |in_flight: f64| 0.5 * (in_flight / 0.14 * 0.1 * 1_200.0).sqrt();
    let large = after_one_round(60_000);
    let small = after_one_round(15_000);
    assert_eq!(large, (scaled(60_000.0) + increment(60_000.0)) as u64);
    assert_eq!(small, (scaled(15_000.0) + increment(15_000.0)) as u64);
    assert!((large as f64 / small as f64) < 3.8);
    // A larger excess (a drop's backlog, an overload) gets Little's law alone.
    let mut b = Balancer::new(config());
    b.observe(&view(0, 1_000_000, 60_000, 160, 100));
    b.observe(&view(160, 1_000_000, 60_000, 160, 100));
    assert_eq!(b.window_bytes(), 60_000 * 125 / 160);
}

#[test]
fn at_a_low_rate_one_packet_of_serialization_above_the_minimum_still_counts_as_empty() {
    // A 40 ms target: its quarter is 10 ms. 48 kB over 640 ms is 75 kB/s, 600 kbit/s, so a
    // 1 200-byte packet is 16 ms; the tolerance is 1.5 packets, 24 ms.
    let config = BalancerConfig {
        target: Duration::from_millis(40),
        ..config()
    };
    let geo = |now_ms, in_flight| sampled(view(now_ms, 1_000_000, in_flight, 640, 624), 640);
    let mut b = Balancer::new(config.clone());
    b.observe(&geo(0, 48_000));
    b.window_bytes = 48_000;
    // Samples and the smoothed RTT 16 ms above the minimum: the queue is under half the
    // target (growth ×2 at most) and the round counts as empty, so round 1 adds one target
    // of rate, round 2 two.
    b.observe(&geo(640, 48_000));
    assert_eq!(b.window_bytes(), 48_000 + 3_000);
    b.observe(&geo(1_280, 51_000));
    // 51 000 B / 0.64 s × 40 ms × 2 = 6 375 B.
    assert_eq!(b.window_bytes(), 51_000 + 6_375);
    // At 6 Mbit/s the same 16 ms is a queue of ten packets: a quarter target decides, and
    // the run ends (one target again).
    let fast = |now_ms, in_flight| sampled(view(now_ms, 10_000_000, in_flight, 640, 624), 640);
    let mut b = Balancer::new(config);
    b.observe(&fast(0, 480_000));
    b.window_bytes = 480_000;
    b.observe(&fast(640, 480_000));
    assert_eq!(b.window_bytes(), 480_000 + 30_000);
    b.observe(&fast(1_280, 510_000));
    assert_eq!(b.window_bytes(), 510_000 + 31_875);
}

/// A balancer that saw 8 kB frames 30 times a second and a 40 kB keyframe every 60 frames
/// (found at frames 60 and 120), frames 0 to 179: the next keyframe is due at frame 180
/// (5 999.94 ms), returned with it.
fn with_keyframe_due(config: BalancerConfig) -> (Balancer, Duration) {
    let mut b = Balancer::new(config);
    let capture = |i: u64| Duration::from_micros(i * 33_333);
    for i in 0..=179u64 {
        b.on_frame(capture(i), if i % 60 == 0 { 40_000 } else { 8_000 });
    }
    (b, capture(180))
}

#[test]
fn the_bulk_pauses_from_the_queue_delay_before_a_keyframe_is_due_until_it_comes() {
    let (mut b, due) = with_keyframe_due(config());
    // 40 ms of queue (srtt 90, minimum 50): the pause starts 40 + 25 / 4 ms before it is due.
    let lead = Duration::from_micros(46_250);
    let at = |t: Duration| TransportView {
        now: t,
        ..view(0, 1_000_000, 20_000, 90, 50)
    };
    b.observe(&at(due - lead - Duration::from_millis(2)));
    let open = b.send_window().unwrap();
    assert!(open.bulk_bytes > 0, "before the pause");
    assert_eq!(b.wakeup(), Some(due - lead), "a wakeup at the pause");
    b.observe(&at(due - lead));
    let w = b.send_window().unwrap();
    assert_eq!(w.bulk_bytes, 0, "paused");
    assert_eq!(w.media_bytes, open.media_bytes, "the media keeps its room");
    // Woken again by the end of the round or, at the latest, the pause's give-up time.
    let next = b.wakeup().unwrap();
    assert!(
        next > due - lead && next <= due + Duration::from_millis(100),
        "{next:?}"
    );
    // The keyframe comes: the pause ends (the next is due two seconds later).
    b.on_frame(due, 40_000);
    b.observe(&at(due + Duration::from_millis(1)));
    assert_eq!(b.send_window().unwrap().bulk_bytes, b.window_bytes());
    // One that never comes ends the pause 100 ms after it was due.
    let (mut late, _) = with_keyframe_due(config());
    late.observe(&at(due + Duration::from_millis(99)));
    assert_eq!(late.send_window().unwrap().bulk_bytes, 0);
    late.observe(&at(due + Duration::from_millis(101)));
    assert!(late.send_window().unwrap().bulk_bytes > 0);
    // A queue of a second (a backlog) leads by two targets and a quarter, not by a second.
    let (mut backlog, _) = with_keyframe_due(config());
    let deep = |t: Duration| TransportView {
        now: t,
        ..view(0, 1_000_000, 20_000, 1_050, 50)
    };
    backlog.observe(&deep(
        due - Duration::from_micros(56_250) - Duration::from_millis(1),
    ));
    assert!(backlog.send_window().unwrap().bulk_bytes > 0);
    backlog.observe(&deep(due - Duration::from_micros(56_250)));
    assert_eq!(backlog.send_window().unwrap().bulk_bytes, 0);
    // Off by configuration: no pause.
    let (mut off, _) = with_keyframe_due(BalancerConfig {
        keyframe_gap: false,
        ..config()
    });
    off.observe(&at(due - Duration::from_millis(10)));
    assert!(off.send_window().unwrap().bulk_bytes > 0);
}

#[test]
fn a_cap_below_the_media_pipe_grows_from_that_pipe() {
    let mut b = Balancer::new(config());
    // A GEO path after an overload: about 2 Mbit/s of media over a 600 ms minimum RTT
    // is a pipe of about 150 kB; the bulk's cap is at the floor.
    for i in 0..=48u64 {
        b.on_frame(Duration::from_millis(i * 33), 8_333);
    }
    b.observe(&view(990, 1_000_000, 150_000, 600, 600));
    b.window_bytes = 4 * MTU;
    b.observe(&view(1_590, 1_000_000, 150_000, 600, 600));
    // Media demand at 1 590 ms: the 31 frames captured after 590 ms, 258 323 B/s,
    // × 0.6 s = 154 993 B; + one target of the delivery rate: 150 kB / 0.6 s × 25 ms.
    assert_eq!(b.window_bytes(), 154_993 + 6_250);
}

#[test]
fn a_standing_queue_the_smoothed_rtt_no_longer_shows_starts_no_drain() {
    let config = config();
    let (mut b, mut now) = behind_a_standing_queue();
    // Every round's smallest sample showed the queue, but by the last round's end the
    // smoothed RTT is back near the minimum: the queue is emptying by itself.
    for _ in 1..config.competition_rounds {
        now += 350;
        b.observe(&sampled(view(now, 100_000, 30_000, 350, 50), 350));
    }
    now += 350;
    b.observe(&sampled(view(now, 100_000, 30_000, 60, 50), 350));
    assert!(matches!(b.mode, Mode::Delay));
}

#[test]
fn a_standing_queue_shrinking_round_by_round_starts_no_drain() {
    let config = config();
    let (mut b, mut now) = behind_a_standing_queue();
    // A capacity drop's backlog: every round's smallest sample shows more than two
    // targets of queue, 20 ms less each round (more than a quarter target).
    for round in 1..=config.competition_rounds + 2 {
        now += 350;
        let sample = 350 - 20 * u64::from(round);
        b.observe(&sampled(view(now, 100_000, 30_000, 350, 50), sample));
        assert!(matches!(b.mode, Mode::Delay), "round {round}");
    }
}

#[test]
fn between_half_and_full_target_growth_follows_littles_law() {
    let mut b = Balancer::new(config());
    b.observe(&view(0, 1_000_000, 50_000, 70, 50));
    b.window_bytes = 50_000;
    // 20 ms of queue (≥ target / 2 = 12.5 ms): × (50 + 25) / (50 + 20).
    b.observe(&view(70, 1_000_000, 50_000, 70, 50));
    assert_eq!(b.window_bytes(), (50_000.0 * 75.0 / 70.0) as u64);
}

#[test]
fn an_unused_cap_does_not_grow() {
    let mut b = Balancer::new(config());
    b.observe(&view(0, 1_000_000, 10_000, 50, 50));
    b.window_bytes = 100_000;
    b.observe(&view(50, 1_000_000, 10_000, 50, 50));
    assert_eq!(b.window_bytes(), 100_000);
}

/// A balancer that has just started a drain: `competition_rounds` rounds of 350 ms whose
/// every RTT sample showed 300 ms of queue over a 50 ms minimum, 30 kB in flight. Returns
/// it and the time now, ms.
/// A balancer whose first round starts with 300 ms of queue over a 50 ms minimum RTT,
/// and the time of that observation.
fn behind_a_standing_queue() -> (Balancer, u64) {
    let mut b = Balancer::new(config());
    let now = 0;
    b.observe(&sampled(view(now, 100_000, 30_000, 350, 50), 350));
    b.window_bytes = 20_000;
    (b, now)
}

fn draining() -> (Balancer, u64) {
    let config = config();
    let (mut b, mut now) = behind_a_standing_queue();
    for round in 1..=config.competition_rounds {
        assert!(matches!(b.mode, Mode::Delay), "round {round}");
        now += 350;
        b.observe(&sampled(view(now, 100_000, 30_000, 350, 50), 350));
    }
    (b, now)
}

/// A drain begun at `started` (ms), settled 300 ms later: our bytes in flight are down to the
/// floor. Returns (when it settled, the floor).
fn settle(b: &mut Balancer, started: u64) -> (u64, u64) {
    let floor = config().min_window_packets * MTU;
    let settled = started + 300;
    b.observe(&view(settled, 100_000, floor, 350, 50));
    (settled, floor)
}

#[test]
fn a_standing_queue_starts_a_drain_that_holds_both_classes_below_the_pipe() {
    let (mut b, now) = draining();
    let floor = config().min_window_packets * MTU;
    // 30 kB over 350 ms delivered, × 50 ms / 2 = 2 143 B: less than the floor.
    assert_eq!(b.drain_window_bytes(&b.view.unwrap()), floor);
    assert!(matches!(
        b.mode,
        Mode::Draining {
            settled_at: None,
            ..
        }
    ));
    let w = b.send_window().unwrap();
    assert_eq!((w.media_bytes, w.bulk_bytes), (floor, floor));
    // Until what we sent is delivered, a frame would only wait behind the floor.
    assert!(!b.admit_frame(Duration::ZERO, 5_000, Duration::from_millis(175)));
    // Once it is, the next frame is the drain's probe.
    b.observe(&view(now + 300, 100_000, floor, 350, 50));
    assert!(b.admit_frame(Duration::ZERO, 5_000, Duration::from_millis(175)));
    // On a GEO path at 1 Mbit/s, half the pipe: 125 kB/s × 600 ms / 2.
    b.last_rate_bps = Some(1e6);
    let geo = view(now + 300, 1_000_000, 0, 700, 600);
    assert_eq!(b.drain_window_bytes(&geo), 37_500);
    // A queue that shows in one round only is a capacity drop's backlog, not a drain.
    let mut b = Balancer::new(config());
    b.observe(&sampled(view(0, 100_000, 30_000, 350, 50), 350));
    for now in [350, 700, 1_050, 1_400] {
        let sample = if now == 700 { 60 } else { 350 };
        b.observe(&sampled(view(now, 100_000, 30_000, 350, 50), sample));
    }
    assert!(matches!(b.mode, Mode::Delay));
}

#[test]
fn a_queue_that_empties_while_we_drain_was_ours() {
    let (mut b, now) = draining();
    let before = match b.mode {
        Mode::Draining {
            resume_window_bytes,
            ..
        } => resume_window_bytes,
        _ => unreachable!("draining"),
    };
    let (settled, floor) = settle(&mut b, now);
    // 200 ms after settling, a 340 ms sample is of a packet sent before: no verdict.
    b.observe(&sampled(view(settled + 200, 100_000, floor, 350, 50), 340));
    assert!(matches!(b.mode, Mode::Draining { .. }));
    // A packet sent after settling is back in 60 ms: 10 ms of queue, ours.
    b.observe(&sampled(view(settled + 260, 100_000, floor, 350, 50), 60));
    assert!(matches!(b.mode, Mode::Delay));
    assert_eq!(b.window_bytes(), before, "the cap from before the drain");
    // And no new drain within the drain interval, however the queue looks.
    let mut t = settled + 260;
    for _ in 0..20 {
        t += 350;
        b.observe(&sampled(view(t, 100_000, 30_000, 350, 50), 350));
        assert!(matches!(b.mode, Mode::Delay), "{t}");
    }
}

#[test]
fn a_queue_that_stays_while_we_drain_is_a_competitors_and_the_controller_governs() {
    let (mut b, now) = draining();
    let (settled, floor) = settle(&mut b, now);
    // Sent after settling (330 ms ago at most), back with 280 ms of queue: confirmed over
    // one more round (350 ms), as half a pipe of our own could still stand in front of it.
    b.observe(&sampled(view(settled + 330, 100_000, floor, 350, 50), 330));
    assert!(matches!(
        b.mode,
        Mode::Draining {
            confirming: Some(_),
            ..
        }
    ));
    assert_eq!(b.wakeup(), Some(Duration::from_millis(settled + 330 + 350)));
    // 325 ms at 500 ms is a packet sent before the first sample came: no evidence.
    b.observe(&sampled(view(settled + 500, 100_000, floor, 350, 50), 325));
    // One sent after it, back with 275 ms of queue (not shrinking by an eighth of it): the
    // queue stayed, and the round's end is the verdict.
    b.observe(&sampled(view(settled + 660, 100_000, floor, 350, 50), 325));
    assert!(matches!(b.mode, Mode::Draining { .. }));
    b.observe(&view(settled + 680, 100_000, floor, 350, 50));
    assert!(b.competing());
    let settled = settled + 350;
    // The bulk may have two of the controller's windows (+ 2 packets) unacknowledged, so the
    // transport never runs dry while the window has room (the controller would not grow on
    // those acknowledgements), media one frame more.
    b.on_frame(Duration::from_millis(settled + 330), 8_000);
    let w = b.send_window().unwrap();
    assert_eq!(w.bulk_bytes, 2 * 100_000 + 2 * MTU);
    assert_eq!(w.media_bytes, w.bulk_bytes + 8_000 + 2 * MTU);
    // The media's dissatisfaction does not halve the bulk while competing: yielding
    // would hand the competitor our share.
    b.on_written(Duration::from_millis(settled + 330), Class::Media, 50_000);
    b.observe(&view(settled + 700, 100_000, 90_000, 350, 50));
    b.observe(&view(settled + 1_100, 100_000, 90_000, 350, 50));
    assert_eq!(b.send_window().unwrap().bulk_bytes, 2 * 100_000 + 2 * MTU);
    // After the drain interval, a drain checks whether the competitor is still there.
    let mut t = settled + 1_100;
    while t < settled + 330 + 10_000 {
        t += 350;
        b.observe(&view(t, 100_000, 90_000, 350, 50));
    }
    assert!(matches!(b.mode, Mode::Draining { .. }));
}

#[test]
fn a_drain_that_never_settles_leaves_the_queue_ours() {
    let (mut b, now) = draining();
    // 3 × 350 ms + 1 s later, still 30 kB in flight: inconclusive.
    b.observe(&view(now + 2_049, 100_000, 30_000, 350, 50));
    assert!(matches!(b.mode, Mode::Draining { .. }));
    assert_eq!(b.wakeup(), Some(Duration::from_millis(now + 2_050)));
    b.observe(&view(now + 2_050, 100_000, 30_000, 350, 50));
    assert!(matches!(b.mode, Mode::Delay));
}

#[test]
fn a_queue_that_shrinks_in_the_confirming_round_was_not_a_loss_based_flows() {
    // Two of our own connections after a capacity drop: the other's queue (and the rest of
    // ours) stands in front of the first packets after settling, then shrinks.
    let (mut b, now) = draining();
    let (settled, floor) = settle(&mut b, now);
    b.observe(&sampled(view(settled + 330, 100_000, floor, 350, 50), 330));
    assert!(matches!(b.mode, Mode::Draining { .. }));
    // 330 → 300 ms: less than an eighth of the 280 ms queue (35 ms) is not shrinking …
    b.observe(&sampled(view(settled + 400, 100_000, floor, 350, 50), 300));
    assert!(matches!(b.mode, Mode::Draining { .. }));
    // … 330 → 200 ms is: the queue is no loss-based flow's, the delay mode resumes.
    b.observe(&sampled(view(settled + 450, 100_000, floor, 350, 50), 200));
    assert!(matches!(b.mode, Mode::Delay));
}

#[test]
fn a_first_drain_takes_two_targets_for_ours_a_recheck_one() {
    let floor = config().min_window_packets * MTU;
    // 40 ms of queue after settling (1.6 targets): another delay-based flow at its target, as
    // far as a first drain can tell: ours.
    let (mut b, now) = draining();
    b.observe(&view(now + 300, 100_000, floor, 350, 50));
    b.observe(&sampled(view(now + 390, 100_000, floor, 350, 50), 90));
    assert!(matches!(b.mode, Mode::Delay));
    // The same in a recheck, with a competitor found before: its queue dipped after a loss.
    let (mut b, settled) = rechecking();
    b.observe(&sampled(view(settled + 90, 100_000, floor, 350, 50), 90));
    assert!(b.competing());
    // At exactly one target, a recheck finds the queue gone.
    let (mut b, settled) = rechecking();
    b.observe(&sampled(view(settled + 75, 100_000, floor, 350, 50), 75));
    assert!(matches!(b.mode, Mode::Delay));
}

#[test]
fn a_drain_within_a_minute_of_finding_a_competitor_is_a_recheck() {
    let config = config();
    for (found_s_ago, recheck) in [(30, true), (61, false)] {
        let (mut b, mut now) = behind_a_standing_queue();
        now += 100_000;
        b.competitor_found_at = Some(Duration::from_millis(now - found_s_ago * 1_000));
        b.round_end = Some(Duration::from_millis(now));
        for _ in 0..=config.competition_rounds {
            b.observe(&sampled(view(now, 100_000, 30_000, 350, 50), 350));
            now += 350;
        }
        assert!(
            matches!(b.mode, Mode::Draining { recheck: r, .. } if r == recheck),
            "{found_s_ago} s: {:?}",
            b.mode
        );
    }
}

#[test]
fn a_confirming_round_without_a_packet_of_its_own_finds_no_competitor() {
    let (mut b, now) = draining();
    let (settled, floor) = settle(&mut b, now);
    b.observe(&sampled(view(settled + 330, 100_000, floor, 350, 50), 330));
    // The round ends (350 ms later) with no sample of a packet sent in it: no verdict, and
    // the next wake-up is when the drain gives up, not the round's end, now past.
    b.observe(&view(settled + 700, 100_000, floor, 350, 50));
    assert!(matches!(b.mode, Mode::Draining { .. }));
    let Mode::Draining { give_up_at, .. } = b.mode else {
        unreachable!("draining")
    };
    assert!(b.wakeup().unwrap() > Duration::from_millis(settled + 700));
    b.observe(&view(
        give_up_at.as_millis() as u64,
        100_000,
        floor,
        350,
        50,
    ));
    assert!(matches!(b.mode, Mode::Delay));
}

/// A balancer whose competing mode's time to check came: a drain that is a recheck, settled;
/// and when it settled.
fn rechecking() -> (Balancer, u64) {
    let (mut b, now) = draining();
    let floor = config().min_window_packets * MTU;
    b.mode = Mode::Competing {
        until: Duration::from_millis(now),
    };
    b.round_end = Some(Duration::from_millis(now));
    b.observe(&view(now + 10, 100_000, 30_000, 350, 50));
    assert!(matches!(b.mode, Mode::Draining { recheck: true, .. }));
    b.observe(&view(now + 300, 100_000, floor, 350, 50));
    (b, now + 300)
}

#[test]
fn a_recheck_while_competing_decides_on_its_first_sample() {
    let (mut b, settled) = rechecking();
    let floor = config().min_window_packets * MTU;
    b.observe(&sampled(view(settled + 330, 100_000, floor, 350, 50), 330));
    assert!(b.competing());
}

#[test]
fn each_recheck_that_finds_the_competitor_again_doubles_the_interval_up_to_four_times() {
    let floor = config().min_window_packets * MTU;
    let (mut b, mut now) = draining();
    b.mode = Mode::Competing {
        until: Duration::from_millis(now),
    };
    // A recheck from `now` whose first sample after settling shows `sample_ms` of RTT; the
    // time the competing mode then lasts, if it is one.
    let recheck = |b: &mut Balancer, now: u64, sample_ms: u64| {
        b.round_end = Some(Duration::from_millis(now));
        b.observe(&view(now + 10, 100_000, 30_000, 350, 50));
        assert!(matches!(b.mode, Mode::Draining { recheck: true, .. }));
        b.observe(&view(now + 300, 100_000, floor, 350, 50));
        b.observe(&sampled(
            view(now + 630, 100_000, floor, 350, 50),
            sample_ms,
        ));
        match b.mode {
            Mode::Competing { until } => Some(until - Duration::from_millis(now + 630)),
            _ => None,
        }
    };
    let interval = config().drain_interval;
    for expected in [2, 4, 4] {
        let lasts = recheck(&mut b, now, 330).expect("still competing");
        assert_eq!(lasts, interval * expected);
        now += 630 + lasts.as_millis() as u64;
    }
    // The competitor gone, the count starts over: the next recheck that finds one doubles
    // one interval, not four.
    assert_eq!(recheck(&mut b, now, 60), None);
    b.mode = Mode::Competing {
        until: Duration::from_millis(now + 1_000),
    };
    assert_eq!(recheck(&mut b, now + 1_000, 330), Some(interval * 2));
}

#[test]
fn next_to_a_competitor_late_frames_go_while_the_media_has_less_than_half_our_rate() {
    let deadline = Duration::from_millis(175);
    let delivering_600_kbit = |mode: Mode| {
        let mut b = Balancer::new(config());
        b.observe(&view(0, 1_000_000, 7_500, 100, 50));
        // 75 kB acknowledged over the second: 600 kbit/s; 50 ms of queue.
        b.observe(&TransportView {
            acked_bytes: 75_000,
            ..view(1_000, 1_000_000, 7_500, 100, 50)
        });
        b.mode = mode;
        // No probe frame due.
        b.last_admitted = Some(Duration::from_millis(1_000));
        b
    };
    // A keyframe that takes 500 ms at 600 kbit/s: late whatever happens.
    let keyframe = 37_500;
    let mut alone = delivering_600_kbit(Mode::Delay);
    assert!(!alone.admit_frame(Duration::ZERO, keyframe, deadline));
    let mut b = delivering_600_kbit(Mode::Competing {
        until: Duration::from_secs(100),
    });
    assert!(b.admit_frame(Duration::ZERO, keyframe, deadline));
    // Written, it is 300 kbit/s over the last second: half of what we deliver, no more.
    b.on_written(Duration::from_millis(1_000), Class::Media, keyframe);
    assert!(!b.admit_frame(Duration::ZERO, keyframe, deadline));
}

#[test]
fn media_may_buffer_its_largest_recent_frame_beyond_the_bulk_cap() {
    let mut b = Balancer::new(config());
    for i in 0..30 {
        b.on_frame(
            Duration::from_millis(i * 33),
            if i == 0 { 40_000 } else { 8_000 },
        );
    }
    b.observe(&view(990, 100_000, 0, 100, 50));
    let w = b.send_window().unwrap();
    assert_eq!(w.bulk_bytes, 100_000);
    // The largest frame of the last second (40 000) + 2 MTU.
    assert_eq!(w.media_bytes, 100_000 + 40_000 + 2 * MTU);
    // A second later the frames have left the demand window (no queue: the cap stays).
    b.observe(&view(2_000, 100_000, 0, 50, 50));
    assert_eq!(b.send_window().unwrap().media_bytes, 100_000 + 2 * MTU);
}

#[test]
fn a_frame_that_cannot_arrive_in_time_is_not_started() {
    let mut b = Balancer::new(config());
    let deadline = Duration::from_millis(175);
    // Nothing measured yet: everything is admitted.
    assert!(b.admit_frame(Duration::from_millis(100), 40_000, deadline));
    // 7 500 B in flight over 100 ms of RTT: 600 kbit/s delivered, 50 ms of queue.
    b.observe(&view(0, 1_000_000, 7_500, 100, 50));
    b.observe(&view(100, 1_000_000, 7_500, 100, 50));
    assert_eq!(b.last_rate_bps, Some(600_000.0));
    b.last_admitted = Some(Duration::from_millis(100));
    // 7 500 B take 100 ms at 600 kbit/s; + 50 ms of queue + 25 ms = 175 ms: admitted
    // only when just captured.
    assert!(b.admit_frame(Duration::ZERO, 7_500, deadline));
    assert!(!b.admit_frame(Duration::from_millis(1), 7_500, deadline));
    // A keyframe five times as large never fits at this rate...
    assert!(!b.admit_frame(Duration::ZERO, 37_500, deadline));
    // ...but one frame per round goes anyway, to keep measuring the rate.
    b.observe(&view(200, 1_000_000, 7_500, 100, 50));
    assert!(b.admit_frame(Duration::ZERO, 37_500, deadline));
}

/// A second of a path that delivers 500 kbit/s (625 B acknowledged every 10 ms) behind 50 ms
/// of queue (RTT samples of 100 ms over a 50 ms minimum), with 7 500 B in flight over a 100 ms
/// smoothed RTT (in flight ÷ RTT: 600 kbit/s), while the media captures a frame of
/// `frame_bytes` every 33 ms. The last frame was admitted just now (no probe is due).
fn busy_at_500_kbit(frame_bytes: u64) -> Balancer {
    let mut b = Balancer::new(config());
    for step in 0..=100u64 {
        let now = step * 10;
        // The frames captured since the last step (one every 33 ms).
        for frame in (now.saturating_sub(9)..=now).filter(|t| t % 33 == 0) {
            b.on_frame(Duration::from_millis(frame), frame_bytes);
        }
        let mut v = sampled(view(now, 1_000_000, 7_500, 100, 50), 100);
        v.acked_bytes = step * 625;
        b.observe(&v);
    }
    b.last_admitted = Some(Duration::from_millis(1_000));
    b
}

#[test]
fn in_overload_a_frame_is_forecast_at_the_rate_the_bottleneck_serves() {
    let deadline = Duration::from_millis(175);
    // Media that asks for 960 kbit/s (4 000 B frames) where 500 kbit/s arrive: the path is
    // overloaded, and in flight ÷ RTT (600 kbit/s) is what was sent, not what is served. At
    // 500 kbit/s a 6 000 B frame waits 70 ms behind the queue, takes 96 ms and 25 ms more to
    // arrive: 191 ms, late. (At 600 kbit/s it would read 50 + 80 + 25 = 155 ms.)
    let mut overloaded = busy_at_500_kbit(4_000);
    assert_eq!(overloaded.last_rate_bps, Some(600_000.0));
    assert_eq!(overloaded.recent_busy_rate_bps(), Some(500_000.0));
    assert!(!overloaded.admit_frame(Duration::ZERO, 6_000, deadline));
    // Media that asks for less than the path delivers: the forecast keeps the round's rate
    // (next to other flows of ours the busy rate is only a share, and read low it refused
    // frames that would have arrived: rmcat-5.2).
    let mut fitting = busy_at_500_kbit(1_000);
    assert!(fitting.admit_frame(Duration::ZERO, 6_000, deadline));
    // Frames whose median (8 333 B: 133 ms at 500 kbit/s) takes more than half the 150 ms the
    // deadline leaves beyond half the minimum RTT: only an empty queue gets them there in
    // time, and refusing every other one idles the link. The round's rate keeps it busy.
    let mut large_frames = busy_at_500_kbit(8_333);
    assert!(large_frames.admit_frame(Duration::ZERO, 6_000, deadline));
}

#[test]
fn media_keeps_its_own_pipe_and_the_bulk_yields_while_media_is_short() {
    let mut b = Balancer::new(config());
    // A GEO path: 2 Mbit/s of media (250 kB/s) over a 600 ms minimum RTT.
    for i in 0..30u64 {
        b.on_frame(Duration::from_millis(i * 33), 8_333);
        b.on_written(Duration::from_millis(i * 33), Class::Media, 8_333);
    }
    b.observe(&view(990, 1_000_000, 0, 600, 600));
    b.window_bytes = 10_000;
    let w = b.send_window().unwrap();
    // Bulk: its cap. Media: its pipe 249 990 B/s × 0.6 s × 1.25 + one frame + 2 MTU.
    assert_eq!(w.bulk_bytes, 10_000);
    assert_eq!(w.media_bytes, 187_492 + 8_333 + 2 * MTU);
    // Nothing acknowledged a round later: the media is short, the bulk halves.
    b.observe(&view(1_590, 1_000_000, 10_000, 600, 600));
    assert_eq!(b.window_bytes(), 5_000);
    b.observe(&view(2_190, 1_000_000, 10_000, 600, 600));
    assert_eq!(b.window_bytes(), 4 * MTU);
}

#[test]
fn frames_refused_at_the_source_are_no_demand_that_holds_the_bulk_back() {
    let mut b = Balancer::new(config());
    b.observe(&view(0, 1_000_000, 10_000, 100, 50));
    b.window_bytes = 10_000;
    // A second of frames captured, none written (all refused): the media is not short.
    for i in 0..30u64 {
        b.on_frame(Duration::from_millis(i * 33), 8_333);
    }
    b.observe(&view(1_000, 1_000_000, 10_000, 100, 50));
    assert!(b.media_satisfied());
}

#[test]
fn on_a_saturated_path_media_may_have_only_what_it_delivers_in_flight() {
    let mut b = saturated_at_600_kbit();
    for i in 0..30u64 {
        b.on_frame(Duration::from_millis(100 + i * 33), 8_333);
        b.on_written(Duration::from_millis(100 + i * 33), Class::Media, 8_333);
    }
    b.observe(&view(1_100, 1_000_000, 7_500, 100, 50));
    assert!(!b.media_satisfied());
    // 75 000 B/s × (50 + 25) ms = 5 625 B, but never below the bulk's cap. Each of the two
    // rounds scaled that cap by Little's law (× 75 / 100) and added the fairness increment,
    // 0.5 × √(75 000 B/s × 0.1 s × 1 200 B) = 1 500 B: 7 500 → 7 125 → 6 843.
    assert_eq!(b.send_window().unwrap().media_bytes, 6_843);
    // Served again, and the path still saturated: what it delivers plus the largest
    // frame, so a keyframe goes whole (and not its own pipe of 2 Mbit/s × 50 ms × 1.25 +
    // a frame: 650 ms of queue at this rate).
    b.on_acked(Duration::from_millis(1_150), Class::Media, 250_000);
    assert_eq!(b.send_window().unwrap().media_bytes, 5_625 + 8_333);
}

#[test]
fn a_queue_the_latest_sample_shows_empty_no_longer_refuses_or_holds_media() {
    let mut b = saturated_at_600_kbit();
    let deadline = Duration::from_millis(175);
    for i in 0..30u64 {
        b.on_frame(Duration::from_millis(100 + i * 33), 8_333);
    }
    b.observe(&sampled(view(1_100, 1_000_000, 7_500, 100, 50), 100));
    b.last_admitted = Some(Duration::from_millis(1_100));
    assert!(!b.admit_frame(Duration::from_millis(61), 3_000, deadline));
    assert_eq!(b.send_window().unwrap().media_bytes, 5_625 + 8_333);
    // Capacity rose mid-round: the latest packet came back without a queue. The round's
    // rate no longer says what a frame gets, and the media has its own pipe again.
    b.observe(&sampled(view(1_120, 1_000_000, 7_500, 100, 50), 55));
    assert!(b.admit_frame(Duration::from_millis(61), 3_000, deadline));
    // Its pipe: the 29 frames captured in the last second × 50 ms × 1.25.
    let pipe = (29.0 * 8_333.0 * 0.05 * MEDIA_PIPE_HEADROOM) as u64;
    assert_eq!(
        b.send_window().unwrap().media_bytes,
        b.window_bytes().max(pipe) + 8_333 + 2 * MTU
    );
}

#[test]
fn a_small_queue_in_the_latest_sample_takes_the_rate_from_what_is_in_flight_now() {
    let deadline = Duration::from_millis(175);
    let saturated_by_the_last_round = |sample_ms| {
        let mut b = saturated_at_600_kbit();
        // Now twice as much is out.
        b.observe(&sampled(view(120, 1_000_000, 15_000, 100, 50), sample_ms));
        b.last_admitted = Some(Duration::from_millis(120));
        b
    };
    // The latest sample shows 20 ms of queue: still saturated (more than half the 25 ms
    // target), but no more than the target, so the rate is 15 000 B / 70 ms =
    // 1.71 Mbit/s: 20 ms of queue + 14 ms + 25 ms + 61 ms of age = 120 ms.
    let mut b = saturated_by_the_last_round(70);
    assert!(b.admit_frame(Duration::from_millis(61), 3_000, deadline));
    // 50 ms of queue in the latest sample: the round's 600 kbit/s stands, and 15 000 B
    // in flight is 150 ms of queue.
    let mut b = saturated_by_the_last_round(100);
    assert!(!b.admit_frame(Duration::from_millis(61), 3_000, deadline));
}

#[test]
fn on_a_saturated_path_media_may_still_have_what_the_bulk_may() {
    let mut b = saturated_at_600_kbit();
    b.window_bytes = 20_000;
    // The delivery cap (75 000 B/s × 75 ms = 5 625 B) is below the bulk's cap: the
    // media, which goes first, gets the bulk's.
    let w = b.send_window().unwrap();
    assert_eq!(w.bulk_bytes, 20_000);
    assert_eq!(w.media_bytes, 20_000);
}

#[test]
fn frames_see_the_whole_queue_ahead_of_them_measured_now() {
    let mut b = saturated_at_600_kbit();
    let deadline = Duration::from_millis(175);
    b.observe(&view(1_100, 1_000_000, 7_500, 100, 50));
    // 7 500 B in flight at 600 kbit/s is 100 ms, 50 ms of it queue (whether bulk or
    // media: bytes already sent are ahead at the bottleneck): 3 000 B (40 ms) + 50 + 25 =
    // 115 ms, admitted up to 60 ms old.
    b.last_admitted = Some(Duration::from_millis(1_100));
    assert!(b.admit_frame(Duration::from_millis(60), 3_000, deadline));
    assert!(!b.admit_frame(Duration::from_millis(61), 3_000, deadline));
    // With nothing in flight, the queue ahead is empty.
    b.observe(&view(1_100, 1_000_000, 0, 100, 50));
    assert!(b.admit_frame(Duration::from_millis(110), 3_000, deadline));
    assert!(b.frames_just_in_time());
}

#[test]
fn late_frames_are_cancelled_half_a_minimum_rtt_before_their_deadline() {
    let mut b = Balancer::new(config());
    b.observe(&view(0, 100_000, 0, 600, 600));
    assert_eq!(b.frame_expiry(), Some(Duration::from_millis(300)));
    let b = Balancer::new(BalancerConfig {
        cancel_late_frames: false,
        ..config()
    });
    assert_eq!(b.frame_expiry(), None);
}

fn acked(v: TransportView, bytes: u64) -> TransportView {
    TransportView {
        acked_bytes: bytes,
        ..v
    }
}

/// 75 kB in flight over 1 s of RTT with 950 ms of queue (saturated), and 75 kB acknowledged
/// in the last second (whatever was written or sent meanwhile): 600 kbit/s delivered.
fn saturated_delivering_600_kbit(b: &mut Balancer) {
    b.observe(&acked(view(0, 1_000_000, 75_000, 1_000, 50), 500_000));
    b.observe(&acked(view(1_000, 1_000_000, 75_000, 1_000, 50), 700_000));
    b.observe(&acked(view(2_000, 1_000_000, 75_000, 1_000, 50), 775_000));
}

#[test]
fn the_media_target_is_a_share_of_what_the_path_delivered_when_saturated() {
    let mut b = Balancer::new(config());
    saturated_delivering_600_kbit(&mut b);
    // 600 kbit/s × the share.
    assert_eq!(
        b.media_target_bps(),
        Some((600_000.0 * config().media_rate_share) as u64)
    );
}

#[test]
fn an_adaptive_sources_frames_fit_the_deadline_behind_the_target_queue_while_saturated() {
    let mut b = Balancer::new(config());
    // With no round measured, no limit.
    assert_eq!(b.media_frame_limit_bytes(Duration::from_millis(175)), None);
    // Saturated at 600 kbit/s with a 50 ms minimum RTT.
    saturated_delivering_600_kbit(&mut b);
    // 175 ms − 25 ms (half the minimum RTT) − 25 ms (the target's queue) = 125 ms at
    // 600 kbit/s (the media's target ÷ its share): 9 375 B.
    let limit = b
        .media_frame_limit_bytes(Duration::from_millis(175))
        .unwrap();
    assert!(limit.abs_diff(9_375) <= 1, "{limit}");
    // A deadline that half the RTT and the target's queue use up sets none.
    assert_eq!(b.media_frame_limit_bytes(Duration::from_millis(45)), None);
    // The queue gone (the latest RTT sample at the minimum): the path has room, no limit.
    b.observe(&sampled(
        acked(view(2_010, 1_000_000, 75_000, 1_000, 50), 775_000),
        50,
    ));
    assert_eq!(b.media_frame_limit_bytes(Duration::from_millis(175)), None);
}

/// A second at 600 kbit/s with a queue (RTT samples 50 ms above the minimum) whose
/// acknowledgements stop at `busy_until_ms`, then idle until 1 000 ms, when a round ends
/// saturated (smoothed RTT 100 ms against a 50 ms minimum).
fn busy_then_idle(busy_until_ms: u64) -> Balancer {
    let mut b = Balancer::new(config());
    for t in (0..=1_000).step_by(10) {
        let acked = t.min(busy_until_ms) / 10 * 750;
        let v = TransportView {
            acked_bytes: acked,
            ..view(t, 1_000_000, 7_500, 100, 50)
        };
        b.observe(&if t <= busy_until_ms {
            sampled(v, 100)
        } else {
            v
        });
    }
    b
}

#[test]
fn the_media_target_is_a_share_of_the_bottlenecks_busy_rate_not_of_its_idle_time() {
    // 71 250 B acknowledged over the second: 570 kbit/s delivered, 600 kbit/s while busy.
    let b = busy_then_idle(950);
    let target = b.media_target_bps().unwrap() as f64;
    assert!(
        (target - 600_000.0 * config().media_rate_share).abs() <= 1.0,
        "{target}"
    );
}

#[test]
fn the_busy_rate_lifts_the_media_target_at_most_a_tenth_above_what_was_delivered() {
    // 60 000 B over the second: 480 kbit/s delivered; 600 kbit/s while busy is more than
    // 1.1 × that, so the target is the share × 528 kbit/s.
    let b = busy_then_idle(800);
    let target = b.media_target_bps().unwrap() as f64;
    assert!(
        (target - 480_000.0 * 1.1 * config().media_rate_share).abs() <= 1.0,
        "{target}"
    );
}

#[test]
fn the_media_target_climbs_by_its_rate_per_second_not_to_what_is_in_flight() {
    let mut b = Balancer::new(config());
    b.observe(&view(0, 1_000_000, 75_000, 1_000, 50));
    b.observe(&TransportView {
        acked_bytes: 75_000,
        ..view(1_000, 1_000_000, 75_000, 1_000, 50)
    });
    // 600 kbit/s delivered, × the share.
    let saturated = (600_000.0 * config().media_rate_share) as u64;
    assert_eq!(b.media_target_bps(), Some(saturated));
    // No queue (srtt = min RTT) but a burst in flight: 100 kB over 50 ms would read 16 Mbit/s.
    // The target climbs by 10 %/s × 50 ms = 0.5 % per round instead.
    b.observe(&view(2_000, 1_000_000, 100_000, 50, 50));
    assert_eq!(
        b.media_target_bps(),
        Some((saturated as f64 * 1.005) as u64)
    );
}

#[test]
fn the_pause_before_a_keyframe_leads_by_the_queue_over_what_the_media_leaves_spare() {
    // 32 P-frames in the last second before the pause: 2.05 Mbit/s of media.
    let (mut b, due) = with_keyframe_due(config());
    // 4 Mbit/s acknowledged, 40 ms of queue (srtt 90, minimum 50).
    let at = |t: Duration| TransportView {
        now: t,
        acked_bytes: (t.as_secs_f64() * 500_000.0) as u64,
        ..view(0, 1_000_000, 20_000, 90, 50)
    };
    b.observe(&at(due - Duration::from_millis(1_500)));
    // The media leaves 1 − 2.048 / 4 = 48.8 % of the rate to drain the queue with: the
    // pause leads by 40 ms / 0.488 + 25 / 4 ms = 88.2 ms, not 46.25 ms.
    b.observe(&at(due - Duration::from_millis(100)));
    assert!(b.send_window().unwrap().bulk_bytes > 0, "before the pause");
    b.observe(&at(due - Duration::from_millis(80)));
    assert_eq!(b.send_window().unwrap().bulk_bytes, 0, "paused");
}

/// A GEO balancer (minimum RTT 600 ms, no queue; the shipped growth step, ×1.25 a round;
/// the controller's window `cwnd`) whose first round delivered `in_flight` bytes over 610 ms,
/// with a cap of 2.5 kB less, and whose second round sees `packets` acknowledged two at a time
/// at `train_bps` from 300 ms into it; the balancer at that round's end (1.22 s).
fn after_a_train(in_flight: u64, packets: u64, train_bps: f64, cwnd: u64) -> Balancer {
    let at = |micros: u64, acked: u64| TransportView {
        now: Duration::from_micros(micros),
        acked_bytes: acked,
        ..view(0, cwnd, in_flight, 610, 600)
    };
    let mut b = Balancer::new(BalancerConfig {
        max_growth_per_round: 1.25,
        ..config()
    });
    b.observe(&at(0, 0));
    b.observe(&at(610_000, 0));
    b.window_bytes = in_flight - 2_500;
    let gap_micros = (2.0 * MTU as f64 * 8.0 / train_bps * 1e6) as u64;
    let mut acked = 0;
    for i in 1..=packets / 2 {
        acked += 2 * MTU;
        b.observe(&at(910_000 + i * gap_micros, acked));
    }
    b.observe(&at(1_220_000, acked));
    b
}

/// The cap after [`after_a_train`] with a controller's window of 1 MB.
fn cap_after_a_train_at(in_flight: u64, packets: u64, train_bps: f64) -> u64 {
    after_a_train(in_flight, packets, train_bps, 1_000_000).window_bytes()
}

/// [`cap_after_a_train_at`] on a path delivering 2 Mbit/s (152.5 kB in flight, a cap of 150 kB).
fn cap_after_a_train(packets: u64, train_bps: f64) -> u64 {
    cap_after_a_train_at(152_500, packets, train_bps)
}

#[test]
fn a_train_of_acknowledgements_faster_than_we_deliver_takes_the_cap_to_most_of_its_pipe() {
    // 30 packets back at 4 Mbit/s: the cap goes to 0.8 × 500 kB/s × 600 ms = 240 kB …
    let cap = cap_after_a_train(30, 4e6);
    assert!((239_000..=241_000).contains(&cap), "{cap}");
    // … where growth by the rules of an empty round gives 150 kB + one target of the
    // delivery rate (250 kB/s × 25 ms).
    let grown = 150_000 + 6_250;
    // A train at the rate we deliver says nothing new.
    assert_eq!(cap_after_a_train(30, 2.05e6), grown);
    // Nor one too short to tell a rate from one acknowledgement more or less.
    assert_eq!(cap_after_a_train(20, 4e6), grown);
}

#[test]
fn on_a_slow_path_a_train_of_eight_packets_is_read() {
    // 600 kbit/s delivered (45.75 kB over 610 ms): a train is 120 ms of that, 9 kB, eight
    // packets at the least. Eight back at 1 Mbit/s after the first acknowledgement (ten in
    // all) take the cap to 0.8 × 125 kB/s × 600 ms.
    let cap = cap_after_a_train_at(45_750, 10, 1e6);
    assert!((59_500..=60_500).contains(&cap), "{cap}");
    // Fewer are the reading's spread: the cap grows by the rules of an empty round.
    // From the cap (45 750 − 2 500 B) by one target of the delivery rate, 75 kB/s × 25 ms.
    assert_eq!(cap_after_a_train_at(45_750, 8, 1e6), 43_250 + 1_875);
    // At 2 Mbit/s a train is 24 packets: ten say nothing there.
    assert_eq!(cap_after_a_train(10, 4e6), cap_after_a_train(10, 2.05e6));
}

#[test]
fn a_jump_is_released_to_the_bulk_over_half_a_round_where_the_pacer_would_burst_it() {
    // 30 packets back at 4 Mbit/s take the cap from 150 to 240 kB, where its step alone gave
    // 156.25 kB (see above).
    let bulk_at = |b: &mut Balancer, micros: u64| {
        b.observe(&TransportView {
            now: Duration::from_micros(micros),
            ..b.view.unwrap()
        });
        b.send_window().unwrap().bulk_bytes
    };
    // A 1 MB window is paced at 1.25 × 1 MB / 610 ms, 16.4 Mbit/s, over 1.5 × the train's
    // 4 Mbit/s: the bulk gets the jump over half a round (305 ms).
    let mut b = after_a_train(152_500, 30, 4e6, 1_000_000);
    let cap = b.window_bytes();
    assert!((239_000..=241_000).contains(&cap), "{cap}");
    let start = bulk_at(&mut b, 1_220_000);
    assert!((156_000..=156_500).contains(&start), "{start}");
    let halfway = bulk_at(&mut b, 1_220_000 + 152_500);
    let expected = 156_250 + (cap - 156_250) / 2;
    assert!(
        halfway.abs_diff(expected) <= 1_000,
        "{halfway} against {expected}"
    );
    assert_eq!(bulk_at(&mut b, 1_220_000 + 305_000), cap);
    // A 250 kB window is paced at 4.1 Mbit/s, the train's rate: the jump goes at once.
    let mut b = after_a_train(152_500, 30, 4e6, 250_000);
    let cap = b.window_bytes();
    assert!((239_000..=241_000).contains(&cap), "{cap}");
    assert_eq!(bulk_at(&mut b, 1_220_000), cap);
}

#[test]
fn a_train_somewhat_faster_than_we_deliver_lets_the_cap_grow_by_its_step_up_to_its_pipe() {
    // 2.25 Mbit/s against the 2 Mbit/s delivered: too close to jump (1.15×), but room. The cap
    // grows by its step (×1.25 from 150 kB) up to the train's whole pipe, 281.25 kB/s ×
    // 600 ms = 168.75 kB, where one target of the delivery rate gives 156.25 kB.
    let cap = cap_after_a_train(30, 2.25e6);
    assert!((168_000..=169_500).contains(&cap), "{cap}");
    // Within 5 % of the delivery rate the train is the reading's spread: one target.
    assert_eq!(cap_after_a_train(30, 2.05e6), 150_000 + 6_250);
}

/// The pause before a keyframe when `acked_bps` are acknowledged with 40 ms of queue behind
/// the P-frames of `with_keyframe_due`: whether the bulk may write
/// `before_due` ahead of the keyframe.
fn bulk_writes_before_keyframe(acked_bps: f64, before_due: Duration) -> bool {
    let (mut b, due) = with_keyframe_due(config());
    let at = |t: Duration| TransportView {
        now: t,
        acked_bytes: (t.as_secs_f64() * acked_bps / 8.0) as u64,
        ..view(0, 1_000_000, 20_000, 90, 50)
    };
    b.observe(&at(due - Duration::from_millis(1_500)));
    b.observe(&at(due - before_due));
    b.send_window().unwrap().bulk_bytes > 0
}

#[test]
fn the_pause_before_a_keyframe_drains_the_queue_at_the_little_spare_adaptive_media_leaves() {
    // 2.8 Mbit/s: the media's P-frames counted 400–420 ms before the keyframe (41–42 of
    // 8 000 B, those captured from a second earlier on: 2.62–2.69 Mbit/s) leave 4–6 %
    // spare, taken as 10 %: the pause leads by 40 ms / 0.1 + 25 / 4 ms = 406.25 ms.
    assert!(bulk_writes_before_keyframe(
        2_800_000.0,
        Duration::from_millis(420)
    ));
    assert!(!bulk_writes_before_keyframe(
        2_800_000.0,
        Duration::from_millis(400)
    ));
}

#[test]
fn media_above_the_path_rate_pauses_the_bulk_only_as_long_as_a_quarter_spare_would() {
    // 1.5 Mbit/s: the media offers more than the path delivers, and no pause drains that
    // queue; 40 ms / 0.25 + 6.25 ms = 166.25 ms.
    assert!(bulk_writes_before_keyframe(
        1_500_000.0,
        Duration::from_millis(180)
    ));
    assert!(!bulk_writes_before_keyframe(
        1_500_000.0,
        Duration::from_millis(160)
    ));
}

/// A GEO balancer (minimum RTT 600 ms, smoothed 700 ms) acknowledging 4 Mbit/s behind
/// 100 ms of queue for a second, then 600 kbit/s with the latest RTT samples at
/// `sample_after_ms`; 350 ms after the drop, before the round in which the drop shows ends
/// (at 1 400 ms).
fn after_a_drop(sample_after_ms: u64) -> Balancer {
    after_a_drop_until(sample_after_ms, 1_350)
}

/// [`after_a_drop`] observed until `until_ms`.
fn after_a_drop_until(sample_after_ms: u64, until_ms: u64) -> Balancer {
    let mut b = Balancer::new(config());
    let mut acked = 0;
    for t in (0..=until_ms).step_by(10) {
        let (per_10_ms, sample) = if t <= 1_000 {
            (5_000, 700)
        } else {
            (750, sample_after_ms)
        };
        if t > 0 {
            acked += per_10_ms;
        }
        b.observe(&sampled(
            TransportView {
                acked_bytes: acked,
                ..view(t, 1_000_000, 350_000, 700, 600)
            },
            sample,
        ));
    }
    b
}

fn media_target_after_a_drop(sample_after_ms: u64) -> u64 {
    after_a_drop(sample_after_ms).media_target_bps().unwrap()
}

#[test]
fn the_bulks_cap_follows_a_capacity_drop_before_the_round_ends() {
    // The newest busy stretches read 600 kbit/s behind 300 ms of queue: the cap goes to that
    // rate's pipe plus the target, 600 kbit/s × 625 ms = 46 875 B, at once.
    assert_eq!(after_a_drop(900).window_bytes(), 46_875);
    // Without the backlog that says the capacity dropped, the round decides: Little's law at
    // its end, 350 kB in flight × 625 / 700 ms.
    assert_eq!(after_a_drop(640).window_bytes(), 312_500);
    // The round's end (1 400 ms) scales it by Little's law for the queue the old capacity
    // built, 625 / 700 ms: 41 852 B; the next readings set it from there, not above.
    assert_eq!(after_a_drop_until(900, 1_450).window_bytes(), 41_852);
}

#[test]
fn after_a_capacity_drop_a_frame_is_forecast_at_the_rate_left_not_the_rounds() {
    let deadline = Duration::from_millis(450);
    // 350 kB in flight: at the round's 4 Mbit/s 100 ms of queue, and a 2 000 B frame arrives
    // after 100 + 4 + 300 = 404 ms. The newest busy stretches serve 600 kbit/s behind 300 ms
    // of queue: the capacity dropped, and there the frame waits seconds.
    let mut dropped = after_a_drop(900);
    assert_eq!(dropped.mode, Mode::Delay);
    assert!((dropped.last_rate_bps.unwrap() - 4_000_000.0).abs() < 1.0);
    dropped.last_admitted = Some(Duration::from_millis(1_350));
    assert!(!dropped.admit_frame(Duration::ZERO, 2_000, deadline));
    // Next to a competitor found within the last minute its queue, not a drop, makes our
    // stretches slow: the round's rate stands.
    let mut shared = after_a_drop(900);
    shared.competitor_found_at = Some(Duration::from_millis(1_000));
    shared.last_admitted = Some(Duration::from_millis(1_350));
    assert!(shared.admit_frame(Duration::ZERO, 2_000, deadline));
    // Without the backlog that says the capacity dropped, the round's rate stands.
    let mut slower = after_a_drop(640);
    slower.last_admitted = Some(Duration::from_millis(1_350));
    assert!(slower.admit_frame(Duration::ZERO, 2_000, deadline));
}

#[test]
fn a_stretch_longer_than_the_queue_at_its_end_is_not_a_busy_one() {
    // 500 kbit/s behind 50 ms of queue for a second, then a pause of 200 ms, and a packet
    // acknowledged behind 50 ms of queue again: it arrived after the link had idled, and
    // 625 B over 200 ms (25 kbit/s) is not what the link serves.
    let mut b = busy_at_500_kbit(1_000);
    let mut v = sampled(view(1_200, 1_000_000, 7_500, 100, 50), 100);
    v.acked_bytes = 101 * 625;
    b.observe(&v);
    assert_eq!(b.recent_busy_rate_bps(), Some(500_000.0));
    // Behind 250 ms of queue the same packet was waiting when the pause began: the link
    // served only 625 B in those 200 ms, and with the 100 ms before them the newest 300 ms
    // read (625 + 10 × 625) B / 0.3 s = 183 kbit/s.
    let mut b = busy_at_500_kbit(1_000);
    let mut v = sampled(view(1_200, 1_000_000, 7_500, 100, 50), 300);
    v.acked_bytes = 101 * 625;
    b.observe(&v);
    let slow = b.recent_busy_rate_bps().unwrap();
    assert!((slow - 183_333.3).abs() < 1.0, "{slow}");
}

#[test]
fn the_frame_limit_keeps_a_keyframe_the_balancer_can_recognise() {
    let mut b = Balancer::new(config());
    saturated_delivering_600_kbit(&mut b);
    // Frames of 2 000 B over the last second; a deadline that leaves 10 ms of slack behind
    // the target (750 B at 600 kbit/s): the limit is three mean frames, so a keyframe at it
    // is still 2.5 times the frames before it.
    for i in 0..30 {
        b.on_frame(Duration::from_millis(1_010 + 33 * i), 2_000);
    }
    assert_eq!(
        b.media_frame_limit_bytes(Duration::from_millis(60)),
        Some(6_000)
    );
}

#[test]
fn the_media_target_follows_a_capacity_drop_before_the_round_ends() {
    // 300 ms of queue: the newest 300 ms of busy stretches read 600 kbit/s, under 0.8 × the
    // 4 Mbit/s the target was taken from.
    let target = media_target_after_a_drop(900) as f64;
    assert!(
        (target - 600_000.0 * config().media_rate_share).abs() <= 1.0,
        "{target}"
    );
}

#[test]
fn a_slower_stretch_without_a_backlog_is_no_capacity_drop() {
    // 40 ms of queue, less than the two targets (50 ms) the balancer itself may leave: the
    // target stays the share of 4 Mbit/s until the round ends.
    let target = media_target_after_a_drop(640) as f64;
    assert!(
        (target - 4_000_000.0 * config().media_rate_share).abs() <= 1.0,
        "{target}"
    );
}

#[test]
fn an_empty_round_above_half_the_target_grows_by_the_full_step_not_littles_law() {
    // 48 kB over 646 ms, 594 kbit/s, so a 1 200-byte packet is 16.2 ms and the empty-path
    // tolerance 1.5 packets, 24.2 ms. The readings 22 ms above the minimum: over half the
    // 40 ms target (Little's law would grow by 664 / 646, 2.8 %) but within the tolerance, so
    // the round is empty and grows by one target of rate.
    let config = BalancerConfig {
        target: Duration::from_millis(40),
        ..config()
    };
    let geo = |now_ms, in_flight| sampled(view(now_ms, 1_000_000, in_flight, 646, 624), 646);
    let mut b = Balancer::new(config);
    b.observe(&geo(0, 48_000));
    b.window_bytes = 48_000;
    b.observe(&geo(646, 48_000));
    let one_target = 48_000.0 / 0.646 * 0.040;
    let grown = b.window_bytes() as f64;
    assert!((grown - (48_000.0 + one_target)).abs() <= 1.0, "{grown}");
}

#[test]
fn the_delivered_rate_counts_from_the_first_acknowledgement_not_from_before_the_handshake() {
    // Nothing acknowledged for 300 ms (handshake, first round trip), then 750 B every 10 ms:
    // 600 kbit/s. Counted from the first observation it read 15 000 B over 500 ms, 240 kbit/s,
    // and the simulator, which observes from the first packet, cut the media of RFC 8867
    // §5.2 to less than the real-time backend, which observes from the session's start.
    let mut b = Balancer::new(config());
    for t in (0..=500u64).step_by(10) {
        b.observe(&TransportView {
            acked_bytes: t.saturating_sub(300) / 10 * 750,
            ..view(t, 1_000_000, 7_500, 100, 50)
        });
    }
    let delivered_bps = b.delivered_bps(&TransportView {
        acked_bytes: 15_000,
        ..view(500, 1_000_000, 7_500, 100, 50)
    });
    assert!((delivered_bps - 600_000.0).abs() < 1.0, "{delivered_bps}");
}
