//! `table.md`: the targets per case (mean over seeds / worst seed, pass or fail), the time to
//! fill each rise of capacity, RFC 8868's metrics, and what each case is.

use std::fmt::Write;

use super::CaseResult;
use super::targets::{Aggregate, RAMP_BOUND_FIXED, RAMP_BOUND_RTTS, Target};

/// A value of `target` as the table shows it.
fn value(target: Target, v: f64) -> String {
    if v.is_infinite() {
        "never".to_owned()
    } else if target.is_share() {
        format!("{:.1} %", v * 100.0)
    } else {
        format!("{v:.1}")
    }
}

/// One target's cell: mean / worst seed, and the verdict.
fn cell(aggregate: Option<&Aggregate>) -> String {
    match aggregate {
        None => "—".to_owned(),
        Some(a) => format!(
            "{} / {} {}",
            value(a.target, a.mean),
            value(a.target, a.worst),
            if a.pass { "✓" } else { "**✗**" }
        ),
    }
}

/// Mean and range of `values`, with `digits` decimals.
fn spread(values: &[f64], digits: usize) -> String {
    if values.is_empty() {
        return "—".to_owned();
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{mean:.digits$} [{min:.digits$}–{max:.digits$}]")
}

/// The ramp bound of a case, seconds.
fn ramp_bound_s(result: &CaseResult) -> f64 {
    (RAMP_BOUND_FIXED + result.facts().base_rtt * RAMP_BOUND_RTTS).as_secs_f64()
}

fn targets_table(md: &mut String, results: &[CaseResult]) {
    let _ = write!(md, "| case |");
    for t in Target::ALL {
        let _ = write!(md, " {} |", t.heading());
    }
    let _ = write!(md, "\n|---|");
    for _ in Target::ALL {
        let _ = write!(md, "---|");
    }
    md.push('\n');
    for r in results {
        let _ = write!(md, "| {} |", r.id);
        for t in Target::ALL {
            let aggregate = r.targets.iter().find(|a| a.target == t);
            let mut text = cell(aggregate);
            if t == Target::Ramp && aggregate.is_some() {
                let _ = write!(text, " (≤ {:.1})", ramp_bound_s(r));
            }
            let _ = write!(md, " {text} |");
        }
        md.push('\n');
    }
}

fn ramps_table(md: &mut String, results: &[CaseResult]) {
    let _ = writeln!(
        md,
        "| case | bound s | each rise: at s, from → to Mbit/s: mean / worst seed s |\n|---|---|---|"
    );
    for r in results {
        // Where the target applies only: next to a competitor the link's rate is not ours.
        if !r.targets.iter().any(|a| a.target == Target::Ramp) {
            continue;
        }
        let Some(first) = r.runs.first() else {
            continue;
        };
        let mut rises = Vec::new();
        for (i, p) in first.periods.iter().enumerate() {
            if p.ramp_s.is_none() || i == 0 {
                continue;
            }
            let before = first.periods[i - 1].capacity_bps;
            let times: Vec<f64> = r
                .runs
                .iter()
                .filter_map(|run| run.periods.get(i))
                .filter_map(|p| p.ramp_s)
                .map(|t| t.unwrap_or(f64::INFINITY))
                .collect();
            let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
            let worst = times.iter().copied().fold(0.0, f64::max);
            let show = |v: f64| {
                if v.is_infinite() {
                    "never".to_owned()
                } else {
                    format!("{v:.1}")
                }
            };
            rises.push(format!(
                "{:.0}: {:.1} → {:.1}: {} / {}",
                p.start_s,
                before / 1e6,
                p.capacity_bps / 1e6,
                show(mean),
                show(worst)
            ));
        }
        if rises.is_empty() {
            continue;
        }
        let _ = writeln!(
            md,
            "| {} | {:.1} | {} |",
            r.id,
            ramp_bound_s(r),
            rises.join("; ")
        );
    }
}

fn rfc8868_table(md: &mut String, results: &[CaseResult]) {
    let _ = writeln!(
        md,
        "| case | media sent Mbit/s | media goodput Mbit/s | media goodput, 10th percentile of 200 ms windows, Mbit/s | bulk goodput Mbit/s | frame delay p50 ms | p95 ms | p99 ms | late frames % | frames decodable (on time, with their keyframe) % | packets lost % | utilization % | Jain index | our controller judged the link shared, % of the run |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for r in results {
        let col = |f: &dyn Fn(&report::evaluation::Rfc8868) -> Option<f64>, scale: f64, digits| {
            let values: Vec<f64> = r
                .runs
                .iter()
                .filter_map(|run| f(&run.rfc8868))
                .map(|v| v * scale)
                .collect();
            spread(&values, digits)
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.id,
            col(&|m| m.media_sent_bps, 1e-6, 2),
            col(&|m| Some(m.media_goodput_bps), 1e-6, 2),
            col(&|m| Some(m.media_goodput_low_bps), 1e-6, 2),
            col(&|m| Some(m.bulk_goodput_bps), 1e-6, 2),
            col(&|m| Some(m.frame_delay_ms.p50), 1.0, 0),
            col(&|m| Some(m.frame_delay_ms.p95), 1.0, 0),
            col(&|m| Some(m.frame_delay_ms.p99), 1.0, 0),
            col(&|m| Some(m.late_share), 100.0, 1),
            col(&|m| Some(m.decodable_share), 100.0, 1),
            col(&|m| Some(m.loss_share), 100.0, 2),
            col(&|m| Some(m.utilization), 100.0, 1),
            spread(&r.jain_index, 3),
            spread(
                &r.competing_share
                    .iter()
                    .map(|share| share * 100.0)
                    .collect::<Vec<_>>(),
                1
            ),
        );
    }
}

/// The whole `table.md`.
pub fn markdown(results: &[CaseResult], command: &str) -> String {
    let mut md = String::new();
    let seeds = results.first().map_or(0, |r| r.seeds.len());
    let _ = writeln!(
        md,
        "# Media and bulk on every path: the balancer against issue 24's targets\n\n\
         Produced by `{command}` (satquic {}), in the simulator, seeds 1–{seeds} of every case. \
         A target's cell: mean over the seeds / the worst seed; ✓ when every seed meets it, \
         **✗** when one does not; — where it does not apply (no such period, media that does \
         not adapt, no competitor).\n",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(md, "## Targets\n");
    for t in Target::ALL {
        let _ = writeln!(md, "- **{}**: {}.", t.heading(), t.criterion());
    }
    md.push('\n');
    targets_table(&mut md, results);
    let _ = writeln!(
        md,
        "\n## Each rise of capacity\n\nSeconds until the bottleneck carried 90 % of the new capacity over 500 ms, mean over the seeds / worst seed (never: not within the period).\n"
    );
    ramps_table(&mut md, results);
    let _ = writeln!(
        md,
        "\n## RFC 8868's metrics\n\nMean over the seeds [lowest–highest]. Media and bulk are ours (all media flows together); media sent is what the media handed to the transport; delays are the frames' one-way delays (capture → last byte) of the frames that arrived; packets lost are our senders' over what they sent; utilization is the bottleneck's over the run (all flows); Jain's index over all flows' goodput. Last column: the share of our connection's run in which its controller judged the bottleneck shared (Hybla's competing mode, in which it grows at a neighbour's pace; — for Cubic, which does not say): where no competitor runs, every second of it is a false verdict.\n"
    );
    rfc8868_table(&mut md, results);
    let _ = writeln!(
        md,
        "\n## Cases\n\n| case | scenario | overrides | what | figure, in the output directory |\n|---|---|---|---|---|"
    );
    for r in results {
        let _ = writeln!(
            md,
            "| {} | `{}` | `{}` | {} | `{}` (seed {}) |",
            r.id,
            r.scenario,
            r.overrides.join(" "),
            r.what,
            r.figure.display(),
            r.figure_seed
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_show_mean_worst_and_verdict() {
        let a = Aggregate {
            target: Target::LateFrames,
            values: vec![Some(0.004), Some(0.02)],
            mean: 0.012,
            worst: 0.02,
            worst_seed: 2,
            pass: false,
        };
        assert_eq!(cell(Some(&a)), "1.2 % / 2.0 % **✗**");
        let r = Aggregate {
            target: Target::Ramp,
            values: vec![Some(1.0), Some(f64::INFINITY)],
            mean: f64::INFINITY,
            worst: f64::INFINITY,
            worst_seed: 2,
            pass: false,
        };
        assert_eq!(cell(Some(&r)), "never / never **✗**");
        assert_eq!(cell(None), "—");
        assert_eq!(spread(&[1.0, 2.0, 4.5], 1), "2.5 [1.0–4.5]");
    }
}
