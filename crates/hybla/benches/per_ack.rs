//! Per-ACK cost of the Hybla core (target: well under 50 ns). Each iteration sends a packet
//! too and acknowledges the one sent an RTT before it, so the send log that counts losses in
//! a row holds a window of packets, as in a connection.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use hybla::{Growth, Hybla, HyblaParams, InitialSsthresh};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("hybla");
    for (name, growth, ssthresh) in [
        ("ca_seed", Growth::Seed, 1_000_000u64),
        ("ca_pipe_aware", Growth::PipeAware, 1_000_000),
        ("slow_start_seed", Growth::Seed, u64::MAX / 4),
    ] {
        let mut params = HyblaParams::default();
        params.growth = growth;
        params.initial_ssthresh = InitialSsthresh::Bytes(ssthresh);
        params.initial_window_bytes = 600_000;
        let mut h = Hybla::new(params, 1472);
        let mut now = Duration::from_secs(1);
        // 416 sends of 1.2 ms: the acknowledged packet is one the log holds.
        let rtt = Duration::from_micros(499_200);
        group.bench_function(name, |b| {
            b.iter(|| {
                now += Duration::from_micros(1200);
                h.on_sent(now, 1472, 1);
                h.on_ack(black_box(now), now - rtt, black_box(1472), false);
                if h.window() > 1 << 40 {
                    h.on_congestion_event(now, now, true, 0);
                }
                black_box(h.window())
            })
        });
    }
    // One ACK per frame, as on an un-thinned return link: the per-frame work (the queue
    // reading, competition, the drain and base-RTT checks, the delivery rate) runs every
    // time. RTTs vary by up to 20 ms so the queue monitor's windows move; the seed rules in
    // the same loop are the baseline.
    for (name, growth) in [
        ("frame_seed", Growth::Seed),
        ("frame_pipe_aware", Growth::PipeAware),
    ] {
        let mut params = HyblaParams::default();
        params.growth = growth;
        params.initial_ssthresh = InitialSsthresh::Bytes(1_000_000);
        params.initial_window_bytes = 600_000;
        params.declared_bdp_bytes = Some(625_000);
        let mut h = Hybla::new(params, 1472);
        let mut now = Duration::from_secs(1);
        let mut noise: u64 = 1;
        group.bench_function(name, |b| {
            b.iter(|| {
                now += Duration::from_micros(1200);
                noise = noise
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                // Multiples of the send spacing, so the packets acknowledged were sent.
                let rtt = Duration::from_micros(1200 * (416 + (noise >> 33) % 17));
                h.on_sent(now, 1472, 1);
                h.on_ack(black_box(now), now - rtt, black_box(1472), false);
                h.on_end_acks(now, 0, false);
                if h.window() > 1 << 40 {
                    h.on_congestion_event(now, now, true, 0);
                }
                black_box(h.window())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
