//! The fairness matrix: how our controller shares a bottleneck with NewReno and with Cubic
//! across RTT, buffer depth, queue discipline and random loss, next to NewReno against NewReno
//! in the same cells (what a fair pair does there), and how it took the queue's drops.

use std::fmt::Write;
use std::path::PathBuf;

use chart::{Colour, LineStyle, Series, StyledChart, StyledSeries};
use lab::runner::{self, Job};
use report::summary;
use scenario::{RunSpec, Scenario};
use sim::losses::MatchedLosses;

use super::experiments::{check, load, set};
use super::{Context, ReproduceError, Section, seeds_text};

const FAIRNESS_MATRIX: &str = include_str!("../../../../scenarios/reproduce/fairness-matrix.toml");

/// Equal-RTT paths: RTT (ms), rate, run length (s). The rate keeps each BDP between 40 and
/// 500 packets; runs at long RTT last longer so that NewReno's sawtooth repeats.
const PATHS: [(u64, &str, u64); 3] = [
    (10, "50Mbit", 60),
    (100, "20Mbit", 120),
    (600, "10Mbit", 300),
];
const BUFFERS_BDP: [f64; 3] = [0.25, 1.0, 4.0];
const LOSSES_PERCENT: [f64; 2] = [0.0, 0.1];
/// (ours, other): the two pairs measured and the calibrations (each opponent against its own
/// kind: what a fair pair does in the cell, and what the opponent keeps next to itself).
const PAIRS: [(&str, &str); 4] = [
    ("hybla", "newreno"),
    ("hybla", "cubic"),
    ("newreno", "newreno"),
    ("cubic", "cubic"),
];
/// The share ratio a friendly flow keeps at equal RTT.
const EQUAL_RTT_BAND: (f64, f64) = (0.67, 1.5);
/// ... and at very different RTTs ([Caini2004] §6's claim for Hybla).
const MIXED_RTT_BAND: (f64, f64) = (0.5, 2.0);
/// Share of the queue's drops a classifier must take as congestion.
const ACCURACY_TARGET: f64 = 0.9;
/// Harm ([Ware2019]): the opponent should keep at least this share of what it gets next to a
/// flow of its own kind in the same cell (1 would be "no more harm than itself"; the slack is
/// run-to-run noise of one seed).
const KEPT_TARGET: f64 = 0.8;

/// One measured cell: the path, the pair, and what each flow got.
#[derive(Debug, Clone)]
struct Cell {
    rtt_ms: u64,
    buffer: String,
    red: bool,
    loss_percent: f64,
    pair: (&'static str, &'static str),
    /// Goodput over the second half of the run, bit/s, one entry per seed: (ours, other).
    goodput_bps: Vec<(f64, f64)>,
    /// How our flow took its losses against the path's record, pooled over the seeds.
    matched: MatchedLosses,
    /// Share of our flow's time in which it judged the bottleneck shared (Hybla's competing
    /// mode), mean over the seeds; `None` for a controller that does not say.
    shared_share: Option<f64>,
}

impl Cell {
    /// Our goodput over the other's: over several seeds their geometric mean, the mean a
    /// ratio has (2 and 0.5 average to 1).
    fn ratio(&self) -> f64 {
        match self.goodput_bps.len() {
            1 => self.seed_ratios().next().unwrap_or(f64::NAN),
            n => (self.seed_ratios().map(|r| r.max(1e-9).ln()).sum::<f64>() / n as f64).exp(),
        }
    }

    /// Each seed's goodput over the other's.
    fn seed_ratios(&self) -> impl Iterator<Item = f64> + '_ {
        self.goodput_bps
            .iter()
            .map(|&(ours, other)| ours / other.max(1.0))
    }

    /// The lowest and highest seed's ratio.
    fn ratio_range(&self) -> (f64, f64) {
        self.seed_ratios()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                (lo.min(r), hi.max(r))
            })
    }

    /// Each flow's goodput, mean over the seeds, bit/s: (ours, other).
    fn mean_goodput_bps(&self) -> (f64, f64) {
        let n = self.goodput_bps.len().max(1) as f64;
        let (ours, other) = self
            .goodput_bps
            .iter()
            .fold((0.0, 0.0), |(a, b), &(o, x)| (a + o, b + x));
        (ours / n, other / n)
    }

    /// The ratio as the report prints it: with the seeds' range when there are several.
    fn ratio_text(&self) -> String {
        match self.goodput_bps.len() {
            1 => format!("{:.2}", self.ratio()),
            _ => {
                let (lo, hi) = self.ratio_range();
                format!("{:.2} [{lo:.2}–{hi:.2}]", self.ratio())
            }
        }
    }

    fn label(&self) -> String {
        let aqm = if self.red { "RED" } else { "drop-tail" };
        let loss = if self.loss_percent > 0.0 {
            format!(", {} % loss", self.loss_percent)
        } else {
            String::new()
        };
        format!("{} ms, {} {aqm}{loss}", self.rtt_ms, self.buffer)
    }
}

/// RED thresholds for a buffer of `limit_packets`: max at half the buffer, min at a third of
/// max (Floyd's rule of thumb max = 3·min, and a buffer of at least twice max).
fn red_thresholds(limit_packets: f64) -> (f64, f64) {
    let max = (limit_packets / 2.0).max(3.0);
    (max / 3.0, max)
}

/// The scenario of one equal-RTT cell.
fn equal_rtt_scenario(
    (rtt_ms, rate, duration_s): (u64, &str, u64),
    buffer_bdp: f64,
    red: bool,
    loss_percent: f64,
    (ours, other): (&str, &str),
) -> Result<Scenario, ReproduceError> {
    let one_way = format!("{}ms", rtt_ms as f64 / 2.0);
    let loss = format!("{loss_percent}%");
    let mut overrides = vec![
        ("duration", format!("{duration_s}s")),
        ("path.forward.rate", rate.into()),
        ("path.return.rate", rate.into()),
        ("path.forward.delay", one_way.clone()),
        ("path.return.delay", one_way),
        ("path.forward.queue", format!("{buffer_bdp}bdp")),
        ("path.forward.loss", loss.clone()),
        ("path.return.loss", loss),
        ("flow.0.cc", ours.into()),
        ("flow.1.cc", other.into()),
    ];
    if red {
        let rate_bps = scenario::units::parse_rate(rate).expect("a valid rate");
        let bdp = netsim::bdp_bytes(rate_bps, std::time::Duration::from_millis(rtt_ms));
        let (min, max) = red_thresholds(bdp as f64 * buffer_bdp / 1500.0);
        overrides.push(("path.forward.aqm", "red".into()));
        overrides.push((
            "path.forward.red",
            format!("{{ min = {min:.2}, max = {max:.2} }}"),
        ));
    }
    load(FAIRNESS_MATRIX, "fairness-matrix", &set(&overrides))
}

/// The scenario of a mixed-RTT cell: ours at 600 ms, the other at 25 ms, 10 Mbit/s.
fn mixed_rtt_scenario(buffer: &str, ours: &str) -> Result<Scenario, ReproduceError> {
    load(
        FAIRNESS_MATRIX,
        "fairness-matrix",
        &set(&[
            ("duration", "300s".into()),
            ("path.forward.rate", "10Mbit".into()),
            ("path.return.rate", "10Mbit".into()),
            ("path.forward.delay", "12.5ms".into()),
            ("path.return.delay", "12.5ms".into()),
            ("path.forward.queue", buffer.into()),
            ("flow.0.cc", ours.into()),
            ("flow.0.access_delay", "287.5ms".into()),
            ("flow.1.cc", "newreno".into()),
        ]),
    )
}

/// Runs every scenario as written (no controller override), seeds 1..=`ctx.seeds`: the runs
/// of one scenario are consecutive, in seed order.
fn run_scenarios(
    ctx: &Context,
    scenarios: &[Scenario],
) -> Result<Vec<report::CompletedRun>, ReproduceError> {
    let specs: Vec<RunSpec> = (1..=ctx.seeds.max(1))
        .map(|seed| RunSpec {
            cc_override: None,
            seed,
        })
        .collect();
    let mut jobs: Vec<Job> = Vec::new();
    for scenario in scenarios {
        jobs.extend(super::jobs(ctx, scenario, &specs)?);
    }
    Ok(runner::run_jobs(
        &jobs,
        ctx.threads,
        ctx.progress,
        ctx.cancel,
        &|_, _| {},
    )?)
}

/// Each flow's goodput over the second half of the run, bit/s.
fn second_half_goodput_bps(run: &report::CompletedRun, flows: usize) -> Vec<f64> {
    let end = run.outcome.end_time;
    let half = end / 2;
    (0..flows)
        .map(|flow| {
            let at = |t| {
                run.outcome
                    .samples
                    .iter()
                    .rev()
                    .find(|s| s.flow == flow && s.t <= t)
                    .map_or(0, |s| s.delivered_bytes)
            };
            (at(end) - at(half)) as f64 * 8.0 / (end - half).as_secs_f64()
        })
        .collect()
}

fn percent(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{:.0} %", 100.0 * v))
}

fn in_band(ratio: f64, (lo, hi): (f64, f64)) -> bool {
    (lo..=hi).contains(&ratio)
}

pub(super) fn fairness_matrix(ctx: &Context) -> Result<Section, ReproduceError> {
    // Equal-RTT cells, every pair.
    let mut keys = Vec::new();
    let mut scenarios = Vec::new();
    for path in PATHS {
        for buffer in BUFFERS_BDP {
            for red in [false, true] {
                for loss in LOSSES_PERCENT {
                    for pair in PAIRS {
                        keys.push((path.0, buffer, red, loss, pair));
                        scenarios.push(equal_rtt_scenario(path, buffer, red, loss, pair)?);
                    }
                }
            }
        }
    }
    const MIXED_BUFFERS: [(&str, &str); 2] = [
        ("shallow (1 BDP at 25 ms, 31 kB)", "1bdp"),
        ("deep (1 BDP at 600 ms, 750 kB)", "600ms"),
    ];
    let mixed_start = scenarios.len();
    for (_, buffer) in MIXED_BUFFERS {
        for ours in ["hybla", "newreno"] {
            scenarios.push(mixed_rtt_scenario(buffer, ours)?);
        }
    }
    let runs = run_scenarios(ctx, &scenarios)?;
    // The runs of scenario i are runs[i * seeds..(i + 1) * seeds].
    let seeds = runs.len() / scenarios.len();
    let runs_of = |i: usize| &runs[i * seeds..(i + 1) * seeds];
    // Scenario i's seeds as one cell (its path fields filled by the caller).
    let pooled = |i: usize, rtt_ms, buffer: String, red, loss_percent, pair| {
        let mut goodput_bps = Vec::new();
        let mut matched = Vec::new();
        let mut shared = Vec::new();
        for run in runs_of(i) {
            let goodput = second_half_goodput_bps(run, 2);
            goodput_bps.push((goodput[0], goodput[1]));
            let summary = summary::run_summary(&scenarios[i], &run.label, &run.outcome);
            let ours = &summary.flows[0];
            matched.extend(ours.losses.matched);
            shared.extend(ours.shared_share(summary.end_s));
        }
        Cell {
            rtt_ms,
            buffer,
            red,
            loss_percent,
            pair,
            goodput_bps,
            matched: MatchedLosses::pooled(matched),
            shared_share: (!shared.is_empty())
                .then(|| shared.iter().sum::<f64>() / shared.len() as f64),
        }
    };
    let cells: Vec<Cell> = keys
        .iter()
        .enumerate()
        .map(|(i, &(rtt_ms, buffer, red, loss_percent, pair))| {
            pooled(i, rtt_ms, format!("{buffer} BDP"), red, loss_percent, pair)
        })
        .collect();

    let dir = ctx.out.join("fairness-matrix");
    std::fs::create_dir_all(&dir).map_err(|source| ReproduceError::Io {
        path: dir.clone(),
        source,
    })?;
    let calibration = |c: &Cell| {
        cells
            .iter()
            .find(|k| {
                k.pair == ("newreno", "newreno")
                    && (k.rtt_ms, &k.buffer, k.red, k.loss_percent)
                        == (c.rtt_ms, &c.buffer, c.red, c.loss_percent)
            })
            .map_or(f64::NAN, Cell::ratio)
    };
    // What the opponent gets next to its own kind: the mean of the two flows of that pair.
    let own_kind_bps = |c: &Cell| {
        cells
            .iter()
            .find(|k| {
                k.pair == (c.pair.1, c.pair.1)
                    && (k.rtt_ms, &k.buffer, k.red, k.loss_percent)
                        == (c.rtt_ms, &c.buffer, c.red, c.loss_percent)
            })
            .map_or(f64::NAN, |k| {
                let (a, b) = k.mean_goodput_bps();
                (a + b) / 2.0
            })
    };
    let kept = |c: &Cell| c.mean_goodput_bps().1 / own_kind_bps(c).max(1.0);
    let mut harmed = Vec::new();
    let friendly = |c: &Cell| {
        let r = c.ratio();
        let reference = calibration(c);
        in_band(r, EQUAL_RTT_BAND) || (r.ln().abs() <= reference.ln().abs() + 1e-9)
    };

    let mut measured = String::from(
        "Each cell: our goodput / the other flow's over the second half of the run, with each flow's goodput in Mbit/s; NewReno/NewReno is the calibration: what two identical fair flows get in that cell. *Kept*: the other flow's goodput next to ours over its mean goodput next to a flow of its own kind in the same cell (harm in the sense of [Ware2019]: 100 % = we take no more from it than its own kind does). Then the share of our queue drops (overflow and RED) we took as congestion, and of our random losses taken as random; last, the share of its run in which hybla judged the bottleneck shared (its competing mode: NewReno's manners).\n",
    );
    let mut unfriendly = Vec::new();
    let mut worst_accuracy: (f64, String) = (f64::INFINITY, String::new());
    let mut figures = Vec::new();
    for other in ["newreno", "cubic"] {
        let _ = write!(
            measured,
            "\n**hybla against {other}**\n\n| RTT, buffer, queue | loss | hybla / {other} | Mbit/s | NewReno / NewReno | {other} kept | queue drops taken as congestion | random losses taken as random | hybla competing |\n|---|---|---|---|---|---|---|---|---|\n"
        );
        for c in cells.iter().filter(|c| c.pair == ("hybla", other)) {
            let m = c.matched;
            let ok = friendly(c);
            if !ok {
                unfriendly.push(format!("{other}: {} ({:.2})", c.label(), c.ratio()));
            }
            if kept(c) < KEPT_TARGET {
                harmed.push(format!("{other}: {} ({:.0} %)", c.label(), 100.0 * kept(c)));
            }
            let queue_drops = m.queue_drops_as_congestion + m.queue_drops_as_random;
            if let Some(a) = m.queue_drop_accuracy
                && a < worst_accuracy.0
            {
                worst_accuracy = (a, format!("against {other}: {}", c.label()));
            }
            let aqm = if c.red { "RED" } else { "drop-tail" };
            let (ours_bps, other_bps) = c.mean_goodput_bps();
            let _ = writeln!(
                measured,
                "| {} ms, {}, {aqm} | {} % | {}{} | {:.2} / {:.2} | {:.2} | {:.0} % | {} of {queue_drops} | {} | {} |",
                c.rtt_ms,
                c.buffer,
                c.loss_percent,
                if ok { "" } else { "**✗** " },
                c.ratio_text(),
                ours_bps / 1e6,
                other_bps / 1e6,
                calibration(c),
                100.0 * kept(c),
                percent(m.queue_drop_accuracy),
                percent(m.random_loss_accuracy),
                percent(c.shared_share),
            );
        }
        figures.push(ratio_figure(&dir, &cells, other, ctx.seeds)?);
    }

    let _ = write!(
        measured,
        "\n**Mixed RTT: the first flow at 600 ms (287.5 ms access delay each way) against NewReno at 25 ms, 10 Mbit/s, 300 s**\n\n| buffer | first flow | first / NewReno at 25 ms | Mbit/s | queue drops taken as congestion |\n|---|---|---|---|---|\n"
    );
    let mut mixed_ok = true;
    let mut mixed_measured = Vec::new();
    for (k, (label, _)) in MIXED_BUFFERS.iter().enumerate() {
        for (j, &ours) in ["hybla", "newreno"].iter().enumerate() {
            let index = mixed_start + 2 * k + j;
            let cell = pooled(index, 600, label.to_string(), false, 0.0, (ours, "newreno"));
            let ratio = cell.ratio();
            let goodput = cell.mean_goodput_bps();
            let accuracy = cell.matched.queue_drop_accuracy;
            if ours == "hybla" {
                mixed_ok &= in_band(ratio, MIXED_RTT_BAND);
                mixed_measured.push(format!("{label}: {ratio:.2}"));
                if let Some(a) = accuracy
                    && a < worst_accuracy.0
                {
                    worst_accuracy = (a, format!("mixed RTT, {label}"));
                }
            }
            let _ = writeln!(
                measured,
                "| {label} | {ours} | {} | {:.2} / {:.2} | {} |",
                cell.ratio_text(),
                goodput.0 / 1e6,
                goodput.1 / 1e6,
                percent(accuracy)
            );
        }
    }

    let checks = vec![
        check(
            "Friendly: hybla / other within [0.67, 1.5], or no further from 1 than NewReno / NewReno, in every equal-RTT cell",
            if unfriendly.is_empty() {
                "every cell".to_string()
            } else {
                format!(
                    "{} cells outside: {}",
                    unfriendly.len(),
                    unfriendly.join("; ")
                )
            },
            unfriendly.is_empty(),
        ),
        check(
            "No more harm than its own kind ([Ware2019]): in every equal-RTT cell the other flow keeps ≥ 80 % of what it gets next to a flow of its own kind",
            if harmed.is_empty() {
                "every cell".to_string()
            } else {
                format!("{} cells below: {}", harmed.len(), harmed.join("; "))
            },
            harmed.is_empty(),
        ),
        check(
            "Mixed RTT: hybla at 600 ms / NewReno at 25 ms within [0.5, 2] in both buffers",
            mixed_measured.join(", "),
            mixed_ok,
        ),
        check(
            "Accurate: ≥ 90 % of hybla's queue drops (overflow and RED) taken as congestion in every cell",
            if worst_accuracy.1.is_empty() {
                "no queue drops".to_string()
            } else {
                format!(
                    "worst {:.0} % ({})",
                    100.0 * worst_accuracy.0,
                    worst_accuracy.1
                )
            },
            worst_accuracy.0 >= ACCURACY_TARGET,
        ),
    ];
    Ok(Section {
        id: "fairness-matrix".into(),
        title: "Fairness matrix: sharing a bottleneck with NewReno and Cubic".into(),
        scenario: format!("Two unlimited downloads from t = 0 on one bottleneck, {}. Equal RTTs of 10 / 100 / 600 ms at 50 / 20 / 10 Mbit/s (60 / 120 / 300 s), forward buffers of 0.25 / 1 / 4 BDP, drop-tail or RED (max threshold at half the buffer, min at a third of max, max_p 10 %), no loss or 0.1 % random loss both ways; hybla against NewReno, against Cubic, NewReno against NewReno and Cubic against Cubic. Mixed RTT: the first flow with 287.5 ms of access delay each way (RTT 600 ms) against NewReno at 25 ms, 10 Mbit/s, 300 s, through a buffer of 1 BDP at 25 ms or 1 BDP at 600 ms. Shares are goodputs over the second half of the run{}.", seeds_text(ctx.seeds), seeds_note(ctx.seeds)),
        published: "Targets set for satquic's Hybla: at equal RTT our share over the other's within [0.67, 1.5] or no further from 1 than NewReno against NewReno; at 600 ms against NewReno at 25 ms within [0.5, 2] ([Caini2004] §6: Hybla at long RTT gets about the share of a wired NewReno); ≥ 90 % of queue drops taken as congestion.".into(),
        measured,
        checks,
        notes: String::new(),
        figures,
    })
}

/// How a multi-seed matrix reads: nothing for one seed.
fn seeds_note(seeds: u64) -> &'static str {
    if seeds > 1 {
        "; each cell's share is the geometric mean of its seeds' shares, with the lowest and highest seed's in brackets, each flow's Mbit/s and what the neighbour kept are means over the seeds, and the loss verdicts are pooled"
    } else {
        ""
    }
}

/// Our share over the other flow's per cell, with NewReno/NewReno's in the same cells and the
/// friendly band: one figure per opponent.
fn ratio_figure(
    dir: &std::path::Path,
    cells: &[Cell],
    other: &str,
    seeds: u64,
) -> Result<PathBuf, ReproduceError> {
    let ours: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.pair == ("hybla", other))
        .collect();
    let reference: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.pair == ("newreno", "newreno"))
        .collect();
    let points = |list: &[&Cell]| -> Vec<(f64, f64)> {
        list.iter()
            .enumerate()
            .map(|(i, c)| ((i + 1) as f64, c.ratio().log2()))
            .collect()
    };
    let n = ours.len() as f64;
    // The friendly band as one closed outline: one legend entry.
    let (lo, hi) = (EQUAL_RTT_BAND.0.log2(), EQUAL_RTT_BAND.1.log2());
    let band = StyledSeries {
        series: Series {
            label: "friendly band 0.67–1.5".into(),
            points: vec![(1.0, hi), (n, hi), (n, lo), (1.0, lo), (1.0, hi)],
        },
        style: LineStyle::reference(Colour::Grey),
    };
    let mut lines = vec![
        StyledSeries {
            series: Series {
                label: format!("hybla / {other}"),
                points: points(&ours),
            },
            style: LineStyle::data(0),
        },
        StyledSeries {
            series: Series {
                label: "newreno / newreno (calibration)".into(),
                points: points(&reference),
            },
            style: LineStyle::data(1),
        },
        band,
    ];
    if other != "newreno" {
        let own_kind: Vec<&Cell> = cells.iter().filter(|c| c.pair == (other, other)).collect();
        lines.insert(
            2,
            StyledSeries {
                series: Series {
                    label: format!("{other} / {other}"),
                    points: points(&own_kind),
                },
                style: LineStyle::data(2),
            },
        );
    }
    let stem = dir.join(format!("ratio-vs-{other}"));
    let title = format!("Share ratio against {other} per cell (log2; 0 = equal shares)");
    let mut subtitle = "cells 1–12: RTT 10 ms, 13–24: 100 ms, 25–36: 600 ms; within each: buffer 0.25/1/4 BDP × drop-tail/RED × loss 0/0.1 %".to_string();
    if seeds > 1 {
        subtitle.push_str(&format!("; geometric mean of seeds 1–{seeds}"));
    }
    chart::styled_line_chart(
        &stem,
        &StyledChart {
            title: &title,
            subtitle: &subtitle,
            x_label: "cell",
            y_label: "log2(first flow / second flow)",
            legend_title: "",
            lines: &lines,
        },
    )?;
    Ok(PathBuf::from("fairness-matrix").join(format!("ratio-vs-{other}.png")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(goodput_bps: Vec<(f64, f64)>) -> Cell {
        Cell {
            rtt_ms: 600,
            buffer: "1 BDP".into(),
            red: false,
            loss_percent: 0.0,
            pair: ("hybla", "newreno"),
            goodput_bps,
            matched: MatchedLosses::default(),
            shared_share: None,
        }
    }

    #[test]
    fn one_seed_prints_its_ratio_as_before() {
        let one = cell(vec![(3e6, 2e6)]);
        assert_eq!(one.ratio(), 1.5);
        assert_eq!(one.ratio_text(), "1.50");
    }

    #[test]
    fn seeds_average_their_ratios_geometrically_and_show_the_range() {
        // Twice and half the other's share: on average equal shares, not 1.25.
        let two = cell(vec![(2e6, 1e6), (1e6, 2e6)]);
        assert!((two.ratio() - 1.0).abs() < 1e-12, "{}", two.ratio());
        assert_eq!(two.ratio_text(), "1.00 [0.50–2.00]");
        assert_eq!(two.mean_goodput_bps(), (1.5e6, 1.5e6));
    }

    #[test]
    fn the_scenario_text_names_the_seeds() {
        assert_eq!(seeds_text(1), "seed 1");
        assert_eq!(seeds_text(5), "seeds 1–5");
        assert!(seeds_note(1).is_empty());
        assert!(seeds_note(5).contains("geometric mean"));
    }
}
