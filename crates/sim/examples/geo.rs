//! Runs a thesis-geo-like bulk download and prints the outcome (development aid).
use std::time::{Duration, Instant};

#[path = "../tests/common/mod.rs"]
mod common;

fn main() {
    let cc = std::env::args().nth(1).unwrap_or("newreno".into());
    let secs: u64 = std::env::args().nth(2).map_or(300, |s| s.parse().unwrap());
    let config = common::single_flow(
        10_000_000,
        common::ms(250),
        0.0001,
        perfwire::Request::Unlimited,
        Duration::from_secs(secs),
        &cc,
    );
    let wall = Instant::now();
    let out = sim::run(&config, &mut |_| sim::Control::Continue).unwrap();
    let wall = wall.elapsed();
    let f = &out.flows[0];
    println!(
        "{cc}: end {:?} delivered {} B goodput {:.3} Mbit/s lost {} end {:?} datagrams {} wall {:?} ratio {:.0}x",
        out.end_time,
        f.delivered_bytes,
        f.delivered_bytes as f64 * 8.0 / out.end_time.as_secs_f64() / 1e6,
        f.sender.lost_packets,
        f.end,
        out.datagrams,
        wall,
        out.end_time.as_secs_f64() / wall.as_secs_f64()
    );
}
