//! `timeseries.csv`: the per-flow samples of every run in long format, one row per
//! (run, flow, sample time), plus the 1-second sliding rates the plots show: in-order goodput
//! (what the application could read) and the delivery rate (what reached the receiver, in any
//! order).

use std::io::Write;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use sim::{RunOutcome, Sample};

/// Window of the sliding goodput average (the thesis plots use 1 s).
pub const GOODPUT_WINDOW: Duration = Duration::from_secs(1);

/// One CSV row; also what [`read_csv`] gives back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// Run index in summary.json's `runs`.
    pub run: usize,
    /// Controller label of the run.
    pub cc: String,
    /// Seed of the run.
    pub seed: u64,
    /// Flow name.
    pub flow: String,
    /// Sample time, seconds.
    pub t_s: f64,
    /// Bytes delivered in order so far.
    pub delivered_bytes: u64,
    /// Goodput over the last second (or since the first sample), bit/s.
    pub goodput_bps: f64,
    /// Congestion window, bytes.
    pub cwnd_bytes: u64,
    /// Bytes in flight, bytes.
    pub in_flight_bytes: u64,
    /// Smoothed RTT, ms.
    pub srtt_ms: f64,
    /// Minimum RTT, ms.
    pub min_rtt_ms: f64,
    /// Packets declared lost so far.
    pub lost_packets: u64,
    /// Forward bottleneck buffer, bytes.
    pub queue_forward_bytes: u64,
    /// Return bottleneck buffer, bytes.
    pub queue_return_bytes: u64,
    /// IP bytes of the flow's packets that reached its data receiver so far, in any order
    /// (after the older columns so readers of earlier files keep working; 0 when absent).
    #[serde(default)]
    pub received_ip_bytes: u64,
    /// Delivery rate: `received_ip_bytes` over the last second (or since the first sample),
    /// bit/s of IP packets.
    #[serde(default)]
    pub delivery_rate_bps: f64,
    /// Mean forward buffer since the previous sample, bytes (`queue_forward_bytes` is its
    /// value at the tick, which periodic traffic can alias; 0 when absent).
    #[serde(default)]
    pub queue_forward_mean_bytes: u64,
    /// Mean return buffer since the previous sample, bytes.
    #[serde(default)]
    pub queue_return_mean_bytes: u64,
}

/// Sliding-window goodput for each sample of one flow (samples in time order).
pub fn sliding_goodput_bps(samples: &[&Sample], window: Duration) -> Vec<f64> {
    let points: Vec<(Duration, u64)> = samples.iter().map(|s| (s.t, s.delivered_bytes)).collect();
    sliding_rate_bps(&points, window)
}

/// Sliding-window delivery rate for each sample of one flow (samples in time order): IP
/// bytes that reached the receiver, in any order, per second. Smooth where in-order goodput
/// stalls for a round trip after a loss and then releases the held-back bytes at once.
pub fn sliding_delivery_rate_bps(samples: &[&Sample], window: Duration) -> Vec<f64> {
    let points: Vec<(Duration, u64)> = samples.iter().map(|s| (s.t, s.received_ip_bytes)).collect();
    sliding_rate_bps(&points, window)
}

/// The rate of a cumulative byte count over a sliding `window`, at each of its points
/// `(time, bytes so far)` (in time order): bytes since the newest point at least `window`
/// older, or since time zero while there is none. The one definition of "throughput over a
/// window" for flows (goodput) and applications alike.
pub fn sliding_rate_bps(points: &[(Duration, u64)], window: Duration) -> Vec<f64> {
    let mut out = Vec::with_capacity(points.len());
    let mut back = 0;
    for (i, &(t, bytes)) in points.iter().enumerate() {
        // Advance `back` to the newest point at least `window` older than this one, if any.
        while back + 1 < i && points[back + 1].0 + window <= t {
            back += 1;
        }
        let (t0, bytes0) = if points[back].0 + window <= t {
            points[back]
        } else {
            (Duration::ZERO, 0)
        };
        let span = (t - t0).as_secs_f64();
        out.push(if span > 0.0 {
            (bytes - bytes0) as f64 * 8.0 / span
        } else {
            0.0
        });
    }
    out
}

/// The samples of one flow, in time order.
pub fn flow_samples(outcome: &RunOutcome, flow: usize) -> Vec<&Sample> {
    outcome.samples.iter().filter(|s| s.flow == flow).collect()
}

/// Writes all runs as CSV. `runs` pairs each outcome with its controller label.
pub fn write_csv<W: Write>(writer: W, runs: &[(&str, &RunOutcome)]) -> Result<(), csv::Error> {
    let mut csv = csv::Writer::from_writer(writer);
    for (run, (cc, outcome)) in runs.iter().enumerate() {
        for (flow_index, flow) in outcome.flows.iter().enumerate() {
            let samples = flow_samples(outcome, flow_index);
            let goodputs = sliding_goodput_bps(&samples, GOODPUT_WINDOW);
            let deliveries = sliding_delivery_rate_bps(&samples, GOODPUT_WINDOW);
            for ((s, goodput_bps), delivery_rate_bps) in
                samples.iter().zip(goodputs).zip(deliveries)
            {
                csv.serialize(Row {
                    run,
                    cc: cc.to_string(),
                    seed: outcome.seed,
                    flow: flow.name.clone(),
                    t_s: s.t.as_secs_f64(),
                    delivered_bytes: s.delivered_bytes,
                    goodput_bps,
                    cwnd_bytes: s.cwnd_bytes,
                    in_flight_bytes: s.in_flight_bytes,
                    srtt_ms: s.srtt.as_secs_f64() * 1e3,
                    min_rtt_ms: s.min_rtt.as_secs_f64() * 1e3,
                    lost_packets: s.lost_packets,
                    queue_forward_bytes: s.queue_forward_bytes,
                    queue_return_bytes: s.queue_return_bytes,
                    received_ip_bytes: s.received_ip_bytes,
                    delivery_rate_bps,
                    queue_forward_mean_bytes: s.queue_forward_mean_bytes,
                    queue_return_mean_bytes: s.queue_return_mean_bytes,
                })?;
            }
        }
    }
    csv.flush()?;
    Ok(())
}

/// Reads a timeseries.csv written by [`write_csv`].
pub fn read_csv<R: std::io::Read>(reader: R) -> Result<Vec<Row>, csv::Error> {
    csv::Reader::from_reader(reader).deserialize().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_ms: u64, bytes: u64) -> Sample {
        Sample {
            t: Duration::from_millis(t_ms),
            delivered_bytes: bytes,
            ..Sample::default()
        }
    }

    #[test]
    fn sliding_goodput_uses_the_last_second() {
        // 125 000 bytes per 100 ms = 10 Mbit/s, then nothing after 1 s.
        let samples: Vec<Sample> = (1..=20)
            .map(|i| sample(i * 100, 125_000 * i.min(10)))
            .collect();
        let refs: Vec<&Sample> = samples.iter().collect();
        let g = sliding_goodput_bps(&refs, GOODPUT_WINDOW);
        assert!((g[0] - 10e6).abs() < 1.0); // since t = 0
        assert!((g[9] - 10e6).abs() < 1.0); // 0 → 1 s
        assert!((g[14] - 5e6).abs() < 1.0); // 0.5 → 1.5 s: half a second of data
        assert!(g[19].abs() < 1.0); // 1 → 2 s: nothing
    }

    fn received(t_ms: u64, in_order: u64, ip: u64) -> Sample {
        Sample {
            received_ip_bytes: ip,
            ..sample(t_ms, in_order)
        }
    }

    #[test]
    fn delivery_rate_is_smooth_where_in_order_goodput_bursts() {
        // A flow receiving 1500-byte packets at exactly 12 Mbit/s (100 per 100 ms) for 3 s.
        // One packet is lost at 0.95 s; until its retransmission arrives at 1.45 s the
        // application can read nothing, then it reads everything held back at once.
        let per_tick: u64 = 100 * 1500;
        let samples: Vec<Sample> = (1..=30u64)
            .map(|i| {
                let ip = per_tick * i;
                let in_order = match i {
                    10..=14 => per_tick * 9 + 50 * 1500, // stalled at the hole
                    _ => ip,
                };
                received(i * 100, in_order, ip)
            })
            .collect();
        let refs: Vec<&Sample> = samples.iter().collect();
        let delivery = sliding_delivery_rate_bps(&refs, GOODPUT_WINDOW);
        let goodput = sliding_goodput_bps(&refs, GOODPUT_WINDOW);
        // Every byte arrives at the link's pace, so every window sees 12 Mbit/s.
        for (i, rate) in delivery.iter().enumerate() {
            assert!(
                (rate - 12e6).abs() < 1e-3,
                "delivery rate at sample {i}: {rate}"
            );
        }
        // In order: 1.4 s looks back to 0.4 s: (9.5 - 4) × 150 kB = 825 kB in 1 s.
        assert_eq!(goodput[13], 825_000.0 * 8.0);
        // 1.5 s: the hole is filled; 1.5 − 0.5 s holds 10 ticks: 12 Mbit/s again…
        assert_eq!(goodput[14], 12e6);
        // …and 2.3 s (1.3 → 2.3 s) also counts the 3.5 ticks that were held back at 1.3 s:
        // 16.2 Mbit/s from a 12 Mbit/s link.
        assert_eq!(
            goodput[22],
            (per_tick * 23 - (per_tick * 9 + 75_000)) as f64 * 8.0
        );
        assert!(goodput[22] > 12e6 * 1.3);
    }

    #[test]
    fn reads_files_written_before_the_delivery_columns() {
        let old = "run,cc,seed,flow,t_s,delivered_bytes,goodput_bps,cwnd_bytes,in_flight_bytes,\
                   srtt_ms,min_rtt_ms,lost_packets,queue_forward_bytes,queue_return_bytes\n\
                   0,hybla,1,bulk,0.1,1000,80000.0,0,0,0.0,0.0,0,0,0\n";
        let rows = read_csv(old.as_bytes()).unwrap();
        assert_eq!(rows[0].delivered_bytes, 1000);
        assert_eq!(rows[0].received_ip_bytes, 0);
        assert_eq!(rows[0].delivery_rate_bps, 0.0);
        assert_eq!(rows[0].queue_forward_mean_bytes, 0);
    }
}
