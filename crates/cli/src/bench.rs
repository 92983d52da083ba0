//! `satquic bench`: simulation speed, with a baseline measured in the same process.
//!
//! The baseline is the crypto floor: sealing and opening the same number of datagrams of the
//! same size with AES-128-GCM (what every real QUIC packet costs at least once per side). The
//! ratio says how much of the simulator's time is QUIC and model logic rather than crypto.

use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use lab::plan;
use ring::aead::{AES_128_GCM, Aad, LessSafeKey, Nonce, UnboundKey};
use scenario::RunSpec;

use crate::run::load_scenario;

/// Flags of `satquic bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Scenarios to time (files or built-in names).
    #[arg(long, value_delimiter = ',', default_values_t = ["thesis-geo".to_string(), "kuhn-large".to_string()])]
    pub scenario: Vec<String>,
    /// Controllers to time.
    #[arg(long, value_delimiter = ',', default_values_t = ["newreno".to_string(), "cubic".to_string()])]
    pub cc: Vec<String>,
    /// Repetitions per case; the median is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// Seals and opens `datagrams` packets of `size` bytes with AES-128-GCM.
fn crypto_floor(datagrams: u64, size: usize) -> Duration {
    let key = LessSafeKey::new(UnboundKey::new(&AES_128_GCM, &[7u8; 16]).expect("16-byte key"));
    let mut buf = vec![0u8; size];
    let start = Instant::now();
    for n in 0..datagrams {
        let mut nonce = [0u8; 12];
        nonce[4..].copy_from_slice(&n.to_be_bytes());
        let tag = key
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut buf)
            .expect("seal");
        buf.extend_from_slice(tag.as_ref());
        key.open_in_place(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut buf)
            .expect("open");
        buf.truncate(size);
    }
    std::hint::black_box(&buf);
    start.elapsed()
}

/// Runs the benchmark and prints one line per case.
pub fn bench(args: BenchArgs) -> anyhow::Result<()> {
    outln!(
        "{:<14} {:<8} {:>8} {:>9} {:>10} {:>12} {:>11} {:>9}",
        "scenario",
        "cc",
        "sim s",
        "wall s",
        "sim/wall",
        "datagrams/s",
        "crypto s",
        "x crypto"
    );
    for name in &args.scenario {
        let scenario = load_scenario(name, &[])?;
        for cc in &args.cc {
            let spec = RunSpec {
                cc_override: Some(cc.clone()),
                seed: scenario.seed,
            };
            let config = plan::sim_config(&scenario, &spec, None)?;
            let mut walls = Vec::new();
            let mut last = None;
            for _ in 0..args.repeat {
                let start = Instant::now();
                let outcome = sim::run(&config, &mut |_| sim::Control::Continue)
                    .with_context(|| format!("{name} with {cc}"))?;
                walls.push(start.elapsed());
                last = Some(outcome);
            }
            let outcome = last.expect("at least one repetition");
            let wall = median(walls);
            let size = (scenario.mtu_bytes - netsim::IP_UDP_HEADER_BYTES) as usize;
            let floor = median(
                (0..args.repeat)
                    .map(|_| crypto_floor(outcome.datagrams, size))
                    .collect(),
            );
            let simulated = outcome.end_time.as_secs_f64();
            outln!(
                "{:<14} {:<8} {:>8.1} {:>9.3} {:>9.0}x {:>12.0} {:>11.3} {:>8.1}x",
                scenario.name,
                cc,
                simulated,
                wall.as_secs_f64(),
                simulated / wall.as_secs_f64(),
                outcome.datagrams as f64 / wall.as_secs_f64(),
                floor.as_secs_f64(),
                wall.as_secs_f64() / floor.as_secs_f64(),
            );
        }
    }
    Ok(())
}
