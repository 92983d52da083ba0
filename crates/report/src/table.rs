//! The human-readable results table the CLI prints.

use std::fmt::Write;

use crate::summary::Summary;

fn opt_s(v: Option<f64>) -> String {
    v.map_or("-".into(), |s| format!("{s:.2}"))
}

/// Renders the per-flow and per-run tables; `speed` holds (run index, simulated/wall ratio).
pub fn render(summary: &Summary, speed: &[Option<f64>]) -> String {
    let mut out = String::new();
    let ceiling = summary.path.goodput_ceiling_bps / 1e6;
    let _ = writeln!(
        out,
        "{} — forward {:.3} Mbit/s, RTT {:.0} ms, goodput ceiling {:.3} Mbit/s ({} B payload per {} B packet)",
        summary.scenario,
        summary.path.forward.rate_bps as f64 / 1e6,
        summary.path.base_rtt_ms,
        ceiling,
        summary.path.payload_bytes_per_packet,
        summary.path.mtu_bytes,
    );
    let thresholds: Vec<String> = summary
        .runs
        .first()
        .and_then(|r| r.flows.first())
        .map(|f| f.time_to_bytes.labels().map(str::to_owned).collect())
        .unwrap_or_default();
    let mut header = format!(
        "{:<10} {:>6} {:<12} {:>10} {:>7} {:>9}",
        "cc", "seed", "flow", "Mbit/s", "eff %", "done s"
    );
    for t in &thresholds {
        let _ = write!(header, " {:>9}", format!("t({t})"));
    }
    let _ = write!(header, " {:>8} {:>8}  state", "lost", "drops");
    let _ = writeln!(out, "{header}");
    for run in &summary.runs {
        for flow in &run.flows {
            let mut line = format!(
                "{:<10} {:>6} {:<12} {:>10.3} {:>7.1} {:>9}",
                run.cc,
                run.seed,
                flow.name,
                flow.goodput_bps / 1e6,
                flow.efficiency * 100.0,
                opt_s(flow.completion_s),
            );
            for t in &thresholds {
                let _ = write!(line, " {:>9}", opt_s(flow.time_to_bytes.get(t)));
            }
            let state = match &flow.error {
                Some(e) => format!("error: {e}"),
                None => flow.state.clone(),
            };
            let _ = write!(
                line,
                " {:>8} {:>8}  {}",
                flow.lost_packets, flow.forward_queue_drops, state
            );
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<10} {:>6} {:>8} {:>12} {:>10} {:>14}",
        "cc", "seed", "Jain", "utilization", "end s", "sim/wall"
    );
    for (index, run) in summary.runs.iter().enumerate() {
        let ratio = speed
            .get(index)
            .copied()
            .flatten()
            .map_or("-".into(), |r| format!("{r:.0}x"));
        let _ = writeln!(
            out,
            "{:<10} {:>6} {:>8.3} {:>11.1}% {:>10.1} {:>14}",
            run.cc,
            run.seed,
            run.jain_index,
            run.link_utilization * 100.0,
            run.end_s,
            ratio
        );
    }
    if summary.seeds > 1 {
        let _ = writeln!(out);
        let _ = writeln!(out, "mean ± stdev over {} seeds:", summary.seeds);
        for a in &summary.aggregates {
            let completion = match (a.completion_s_mean, a.completion_s_stdev) {
                (Some(m), Some(s)) => format!(
                    "done {m:.2} ± {s:.2} s ({}/{} runs)",
                    a.completed_runs, a.runs
                ),
                _ => "never completed".into(),
            };
            let _ = writeln!(
                out,
                "  {:<10} {:<12} {:>8.3} ± {:.3} Mbit/s, {completion}",
                a.cc,
                a.flow,
                a.goodput_bps_mean / 1e6,
                a.goodput_bps_stdev / 1e6
            );
        }
    }
    out
}
