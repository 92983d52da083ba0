use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

fn view(now: Duration, srtt: Duration) -> TransportView {
    TransportView {
        now,
        cwnd_bytes: 50_000,
        in_flight_bytes: 0,
        acked_bytes: 0,
        srtt,
        min_rtt: srtt,
        rtt_sample_min: None,
        mtu_bytes: 1200,
    }
}

#[test]
fn throughput_polls_every_500ms_into_the_top_list() {
    let mut b = SeedBalancer::default();
    b.observe(&view(Duration::ZERO, Duration::ZERO));
    // 1000 media bytes at 50, 150, ... ms, observed every 100 ms.
    for k in 0..10u64 {
        b.observe(&view(ms(100 * k), Duration::ZERO));
        b.on_written(ms(100 * k + 50), Class::Media, 1000);
    }
    b.observe(&view(ms(1000), Duration::ZERO));
    // 0.5 s: 5 writes → 5000 · 0.95 = 4750; 1.0 s: 4750 · 0.95 = 4512.5 → 4512, and 10
    // writes → 10000 · 0.95 = 9500.
    assert_eq!(b.throughput_top.values, [4512, 9500]);
    assert_eq!(b.throughput_top.median(), 9500);
    // The update at 1.0 s (after the poll): 10000 / 9500.
    let s = b.last_signals.expect("updated");
    assert!(close(s.current_to_max, 10000.0 / 9500.0));
}

#[test]
fn throughput_queries_cut_the_long_rate_window_to_4_1_s() {
    let mut b = SeedBalancer::default();
    for step in 0..=800u64 {
        let now = ms(10 * step);
        b.observe(&view(now, ms(100)));
        if step == 799 {
            // Last pruned by the update at 7.9 s to 7.9 − 2 · 2 s: the 5-s regression at
            // 8.0 s will see 3.9 … 7.99 s only.
            assert_eq!(b.media.samples.front().map(|s| s.0), Some(ms(3_900)));
        }
        b.on_written(now, Class::Media, 1_000);
    }
    assert_eq!(b.media.samples.front().map(|s| s.0), Some(ms(4_000)));
    // A steady rate: both regression lines have the same slope.
    let s = b.last_signals.expect("updated");
    assert!(close(s.rate_status, 1.0));
}

#[test]
fn initial_state_and_idle_updates() {
    let mut b = SeedBalancer::default();
    assert_eq!((b.allowed_bytes(), b.lastmax_bytes()), (40, 1));
    assert_eq!(b.stage(), Stage::IncreasingSlowly);
    assert_eq!(b.growth_factor(), 1.2);
    assert_eq!(b.wakeup(), None);
    assert_eq!(b.send_window(), None);
    b.observe(&view(Duration::ZERO, Duration::ZERO));
    b.observe(&view(ms(100), Duration::ZERO));
    // No data: no regression (NaN), no throughput (0/0), bulk idle → min(0.99, 1.2);
    // INCREASING_SLOWLY stays: ⌊40 · 10.99 / 11⌋ = ⌊39.96⌋.
    assert_eq!(b.growth_factor(), 0.99);
    assert_eq!(
        (b.stage(), b.allowed_bytes()),
        (Stage::IncreasingSlowly, 39)
    );
}

#[test]
fn updates_run_exactly_every_100ms() {
    let mut b = SeedBalancer::default();
    let t0 = ms(1_000);
    b.observe(&view(t0, Duration::ZERO));
    assert_eq!((b.updates_run(), b.wakeup()), (0, Some(ms(1_100))));
    b.observe(&view(ms(1_099), Duration::ZERO));
    assert_eq!(b.updates_run(), 0);
    b.observe(&view(ms(1_100), Duration::ZERO));
    assert_eq!((b.updates_run(), b.wakeup()), (1, Some(ms(1_200))));
    // A gap: updates at 1.2 … 2.3 s catch up, polls at 1.5 and 2.0 s.
    b.observe(&view(ms(2_350), Duration::ZERO));
    assert_eq!((b.updates_run(), b.wakeup()), (13, Some(ms(2_400))));
    assert_eq!(b.throughput_top.values.len(), 2);
    // Idle updates shrink 40 by one byte each (⌊a · 10.99/11⌋ = a − 1 for small a).
    assert_eq!(b.allowed_bytes(), 40 - 13);
}

/// 4 s of 10-ms steps: media at 2 Mbit/s, then ragged and lower from 2 s; 3000 bulk bytes
/// per step; the srtt 100 ms, 166 ms at the end. `observe` runs at the first and last
/// step and at every `every`-th (`None`: only those two), before the step's writes.
fn scripted(every: Option<u64>) -> SeedBalancer {
    let mut b = SeedBalancer::default();
    for step in 0..=400u64 {
        let now = ms(10 * step);
        let srtt = if step == 400 { ms(166) } else { ms(100) };
        if step == 0 || step == 400 || every.is_some_and(|n| step % n == 0) {
            b.observe(&view(now, srtt));
        }
        let media = if step < 200 {
            2_500
        } else {
            900 + (step % 7) * 100
        };
        b.on_written(now, Class::Media, media);
        b.on_written(now, Class::Bulk, 3_000);
    }
    b
}

#[test]
fn catch_up_after_a_gap_is_deterministic() {
    // Observed every step, every 100 ms, or only at 0 and 4 s: the same 40 updates at
    // 0.1, 0.2, … 4.0 s on the same inputs, so exactly the same state.
    let dense = scripted(Some(1));
    let on_time = scripted(Some(10));
    let gap = scripted(None);
    assert_eq!(dense.updates_run(), 40);
    for b in [&on_time, &gap] {
        assert_eq!(b.updates_run(), dense.updates_run());
        assert_eq!(b.allowed_bytes(), dense.allowed_bytes());
        assert_eq!(b.lastmax_bytes(), dense.lastmax_bytes());
        assert_eq!(b.stage(), dense.stage());
        assert_eq!(b.growth_factor().to_bits(), dense.growth_factor().to_bits());
        assert_eq!(b.last_signals, dense.last_signals);
        assert_eq!(b.throughput_top.values, dense.throughput_top.values);
        assert_eq!(b.wakeup(), Some(ms(4_100)));
    }
    // The budget did move (the comparison is not between idle balancers).
    assert_ne!(
        dense.allowed_bytes(),
        SeedBalancerConfig::default().initial_allowed_bytes
    );
}

#[test]
fn bulk_allowance_over_a_sliding_second() {
    let mut b = SeedBalancer::default();
    b.observe(&view(Duration::ZERO, Duration::ZERO));
    b.allowance.allowed_bytes = 10_000;
    b.on_written(ms(200), Class::Bulk, 3_000);
    assert_eq!(b.bulk_allowance(ms(500)), 7_000);
    b.on_written(ms(700), Class::Bulk, 4_000);
    assert_eq!(b.bulk_allowance(ms(900)), 3_000);
    assert_eq!(b.bulk_allowance(ms(1_199)), 3_000);
    // Exactly one second after the write it no longer counts.
    assert_eq!(b.bulk_allowance(ms(1_200)), 6_000);
    assert_eq!(b.bulk_allowance(ms(1_699)), 6_000);
    assert_eq!(b.bulk_allowance(ms(1_700)), 10_000);
    b.on_written(ms(1_800), Class::Bulk, 12_000);
    assert_eq!(b.bulk_allowance(ms(1_800)), 0);
    // Media never counts against the budget.
    b.on_written(ms(2_900), Class::Media, 50_000);
    assert_eq!(b.bulk_allowance(ms(2_900)), 10_000);
}

#[test]
fn priorities_and_send_windows() {
    let mut b = SeedBalancer::default();
    assert_eq!(b.name(), "seed-balancer");
    assert!(b.priority(Class::Media) > b.priority(Class::Bulk));
    b.observe(&view(Duration::ZERO, ms(50)));
    let w = b.send_window().expect("observed");
    assert_eq!(
        (w.media_bytes, w.bulk_bytes),
        (50_000 + 4 * 1200, 50_000 + 2 * 1200)
    );
    assert_eq!((b.frame_expiry(), b.media_target_bps()), (None, None));
}

/// A synthetic bottleneck: each 10-ms step bulk takes what the budget and the capacity
/// allow, media (2 Mbit/s offered) gets the rest, and the RTT grows with the excess
/// demand queued in a 60-kB buffer. Returns (time s, budget bytes) per step.
fn run_link(secs: u64, capacity_bps: impl Fn(Duration) -> f64) -> Vec<(f64, u64)> {
    let mut b = SeedBalancer::default();
    let dt = ms(10);
    let base_rtt = ms(50);
    let media_offered = 2e6 / 8.0 * dt.as_secs_f64();
    let mut backlog = 0.0f64;
    let mut out = Vec::new();
    let mut now = Duration::ZERO;
    while now < Duration::from_secs(secs) {
        let c = capacity_bps(now);
        let cap = c / 8.0 * dt.as_secs_f64();
        let rtt = base_rtt + Duration::from_secs_f64(backlog * 8.0 / c);
        b.observe(&view(now, rtt));
        let bulk = (b.bulk_allowance(now) as f64).min(cap).floor();
        let media = media_offered.min(cap - bulk).floor();
        b.on_written(now, Class::Media, media as u64);
        b.on_written(now, Class::Bulk, bulk as u64);
        backlog = (backlog + media_offered + bulk - cap).clamp(0.0, 60_000.0);
        out.push((now.as_secs_f64(), b.allowed_bytes()));
        now += dt;
    }
    out
}

#[test]
fn budget_grows_into_spare_capacity_and_falls_when_it_goes() {
    // 4 Mbit/s (2 spare), 1 Mbit/s from 25 s (none spare), 4 Mbit/s again from 45 s.
    let secs = |s: u64| Duration::from_secs(s);
    let series = run_link(70, |t| {
        if t < secs(25) || t >= secs(45) {
            4e6
        } else {
            1e6
        }
    });
    let mean = |from: f64, to: f64| {
        let v: Vec<f64> = series
            .iter()
            .filter(|(t, _)| (from..to).contains(t))
            .map(|&(_, a)| a as f64)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let max = |from: f64, to: f64| {
        series
            .iter()
            .filter(|(t, _)| (from..to).contains(t))
            .map(|p| p.1)
            .max()
            .unwrap()
    };
    // Spare 2 Mbit/s = 250 kB per second: from 40 bytes the budget grows towards it.
    assert!(max(0.0, 5.0) > 50_000, "grew to {}", max(0.0, 5.0));
    let before = mean(10.0, 25.0);
    assert!(before > 120_000.0, "mean budget before the drop {before}");
    // Within five seconds of the drop the budget is cut by more than half, and it stays
    // far below its earlier level while media cannot even get its own rate through.
    assert!(max(30.0, 45.0) < max(10.0, 25.0) / 2);
    let during = mean(30.0, 45.0);
    assert!(
        during < before / 3.0,
        "mean budget during the drop {during}"
    );
    // Capacity back: it grows again.
    let after = mean(50.0, 70.0);
    assert!(after > 3.0 * during, "mean budget after {after}");
}
