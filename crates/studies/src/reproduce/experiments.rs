//! The catalog's experiments, each a function from the shared [`Context`] to a report
//! [`Section`].

use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

use super::{Check, Context, Experiment, ReproduceError, Section};
use crate::ideal;
use chart::{Colour, LineStyle, Series, StyledChart, StyledSeries};
use lab::runner::{self, Job};
use report::output;
use report::summary::{self, RunSummary};
use scenario::RunSpec;
use scenario::Scenario;
use scenario::controllers::{ControllerSpec, HyblaGrowth, HyblaSpec};

/// Every experiment, in report order: (id, runs in `--quick` mode, function).
pub const EXPERIMENTS: &[Experiment] = &[
    ("thesis-geo", true, thesis_geo),
    ("thesis-leo", true, thesis_leo),
    ("paper-ideal", true, paper_ideal),
    ("paper-congestion", true, paper_congestion),
    ("paper-linkloss", true, paper_linkloss),
    ("paper-fairness", true, paper_fairness),
    ("poster-latecomer", true, poster_latecomer),
    ("kuhn", true, kuhn),
    ("sat", true, sat),
    // Completion times against another stack's deadlines: not a qualitative claim.
    ("picoquic-sat", false, picoquic_sat),
    // 142 runs of 120 s: the full suite only.
    ("loss-matrix", false, loss_matrix),
    // 112 runs of 60-300 s: the full suite only.
    ("fairness-matrix", false, super::fairness::fairness_matrix),
];

// The scenarios of the built-in catalog are loaded from it (`load_builtin`); only the
// reproduction's own scenarios, which the catalog does not ship, are embedded here.
const PAPER_CONGESTION: &str =
    include_str!("../../../../scenarios/reproduce/paper-congestion.toml");
const PAPER_LINKLOSS: &str = include_str!("../../../../scenarios/reproduce/paper-linkloss.toml");
const PAPER_FAIRNESS: &str = include_str!("../../../../scenarios/reproduce/paper-fairness.toml");
const POSTER_LATECOMER: &str =
    include_str!("../../../../scenarios/reproduce/poster-latecomer.toml");
/// The draft-kuhn cases of the catalog with their objectives: seconds to the first 2, 10 and
/// 100 MB (`None`: no objective).
const KUHN: &[(&str, [Option<f64>; 3])] = &[
    ("kuhn-small", [Some(3.0), Some(10.0), Some(85.0)]),
    ("kuhn-medium", [Some(3.0), Some(5.0), Some(20.0)]),
    ("kuhn-congested", [Some(3.0), Some(5.0), Some(20.0)]),
    ("kuhn-variable", [None, None, None]),
    ("kuhn-large", [Some(3.0), Some(5.0), Some(8.0)]),
    ("kuhn-lossy", [Some(3.0), Some(6.0), Some(10.0)]),
];
const LOSS_MATRIX: &str = include_str!("../../../../scenarios/reproduce/loss-matrix.toml");

// ---- helpers ------------------------------------------------------------------------------------

pub(super) fn load(
    text: &str,
    origin: &str,
    overrides: &[String],
) -> Result<Scenario, ReproduceError> {
    Ok(Scenario::from_toml_str(text, origin, overrides)?)
}

/// Loads `name` from the built-in catalog ([`scenario::builtin`]), named by it in errors.
pub(super) fn load_builtin(name: &str, overrides: &[String]) -> Result<Scenario, ReproduceError> {
    let text = scenario::builtin::get(name)
        .unwrap_or_else(|| panic!("{name:?} is not in the built-in catalog"));
    load(text, name, overrides)
}

pub(super) fn set(pairs: &[(&str, String)]) -> Vec<String> {
    pairs.iter().map(|(k, v)| format!("{k}={v}")).collect()
}

fn mbps(bps: f64) -> String {
    format!("{:.2} Mbit/s", bps / 1e6)
}

fn secs(v: Option<f64>) -> String {
    v.map_or("—".into(), |s| format!("{s:.2} s"))
}

pub(super) fn check(
    criterion: impl Into<String>,
    measured: impl Into<String>,
    pass: bool,
) -> Check {
    Check {
        criterion: criterion.into(),
        measured: measured.into(),
        pass,
    }
}

/// Runs `scenario` once per controller (seed 1), writes its outputs under `out/<dir>/`, and
/// returns the runs and their figures (relative paths).
fn run_controllers(
    ctx: &Context,
    dir: &str,
    scenario: &Scenario,
    controllers: &[&str],
) -> Result<(Vec<RunSummary>, Vec<PathBuf>), ReproduceError> {
    let specs: Vec<RunSpec> = controllers
        .iter()
        .map(|cc| RunSpec {
            cc_override: Some(cc.to_string()),
            seed: 1,
        })
        .collect();
    let runs = runner::run_all(
        scenario,
        &specs,
        None,
        ctx.threads,
        ctx.progress,
        ctx.cancel,
    )?;
    output::write_all(&ctx.out.join(dir), scenario, 1, 1, &runs)?;
    let summaries = runs
        .iter()
        .map(|r| summary::run_summary(scenario, &r.label, &r.outcome))
        .collect();
    let figures = vec![
        PathBuf::from(dir).join("cwnd.png"),
        PathBuf::from(dir).join("goodput.png"),
    ];
    Ok((summaries, figures))
}

/// Runs arbitrary (scenario, controller) pairs in parallel; results in input order.
fn run_pairs(
    ctx: &Context,
    pairs: &[(Scenario, String)],
) -> Result<Vec<RunSummary>, ReproduceError> {
    let mut jobs: Vec<Job> = Vec::new();
    for (scenario, cc) in pairs {
        let spec = RunSpec {
            cc_override: Some(cc.clone()),
            seed: 1,
        };
        jobs.extend(runner::jobs(scenario, &[spec], None)?);
    }
    let runs = runner::run_jobs(&jobs, ctx.threads, ctx.progress, ctx.cancel, &|_, _| {})?;
    Ok(runs
        .iter()
        .zip(pairs)
        .map(|(r, (scenario, _))| summary::run_summary(scenario, &r.label, &r.outcome))
        .collect())
}

fn goodput(summary: &RunSummary, flow: &str) -> f64 {
    summary
        .flows
        .iter()
        .filter(|f| f.name == flow || f.name.starts_with(&format!("{flow}-")))
        .map(|f| f.goodput_bps)
        .sum::<f64>()
        / summary
            .flows
            .iter()
            .filter(|f| f.name == flow || f.name.starts_with(&format!("{flow}-")))
            .count()
            .max(1) as f64
}

fn duration(ctx: &Context, quick: &str) -> Vec<String> {
    if ctx.quick {
        vec![format!("duration={quick}")]
    } else {
        Vec::new()
    }
}

// ---- thesis ---------------------------------------------------------------------------------------

fn thesis_geo(ctx: &Context) -> Result<Section, ReproduceError> {
    let scenario = load_builtin("thesis-geo", &duration(ctx, "60s"))?;
    let (s, figures) =
        run_controllers(ctx, "thesis-geo", &scenario, &["hybla", "newreno", "cubic"])?;
    let mut measured = String::from(
        "| controller | goodput | lost packets | link utilization |\n|---|---|---|---|\n",
    );
    for r in &s {
        let f = &r.flows[0];
        let _ = writeln!(
            measured,
            "| {} | {} | {} | {:.1} % |",
            r.cc,
            mbps(f.goodput_bps),
            f.lost_packets,
            r.link_utilization * 100.0
        );
    }
    let (hybla, newreno) = (s[0].flows[0].goodput_bps, s[1].flows[0].goodput_bps);
    Ok(Section {
        id: "thesis-geo".into(),
        title: "QUIC Hybla on a GEO link ([Cavallotti2024] §5.3, Fig. 5.2–5.5)".into(),
        scenario: format!(
            "10 Mbit/s both ways, RTT 500 ms, PER 0.01 % both ways, 1-BDP drop-tail buffer (the thesis does not state it), one bulk flow, {} s. Hybla: RTT0 25 ms, our defaults (estimated initial ssthresh instead of the thesis's 750 KB, pipe-aware growth).",
            scenario.duration.as_secs()
        ),
        published: "Hybla ≈ 8.9 Mbit/s average, NewReno ≈ 3.7 Mbit/s (picoquic, Virtualbricks testbed, 300 s).".into(),
        measured,
        checks: vec![
            check("Hybla average ≥ 8.9 Mbit/s (the thesis's Hybla)", mbps(hybla), hybla >= 8.9e6),
            check("Hybla ≥ 2 × NewReno (thesis: 8.9 / 3.7 = 2.4×)", format!("{:.1}×", hybla / newreno), hybla >= 2.0 * newreno),
        ],
        notes: "Our NewReno averages less than the thesis's 3.7 Mbit/s: its slow start overshoots a 1-BDP buffer (about 800 drops) and congestion avoidance at 500 ms then regrows by one packet per RTT; the thesis's buffer and picoquic's recovery details are not published.".into(),
        figures,
    })
}

fn thesis_leo(ctx: &Context) -> Result<Section, ReproduceError> {
    let scenario = load_builtin("thesis-leo", &duration(ctx, "30s"))?;
    let (s, figures) = run_controllers(ctx, "thesis-leo", &scenario, &["hybla", "newreno"])?;
    let mut measured = String::from("| controller | goodput | lost packets |\n|---|---|---|\n");
    for r in &s {
        let _ = writeln!(
            measured,
            "| {} | {} | {} |",
            r.cc,
            mbps(r.flows[0].goodput_bps),
            r.flows[0].lost_packets
        );
    }
    let ratio = s[0].flows[0].goodput_bps / s[1].flows[0].goodput_bps;
    Ok(Section {
        id: "thesis-leo".into(),
        title: "LEO-like RTT: Hybla ≈ NewReno ([Cavallotti2024] §5.3)".into(),
        scenario: format!(
            "As thesis-geo with RTT 30 ms (ρ = 1.2), {} s.",
            scenario.duration.as_secs()
        ),
        published: "\"Hybla's performance is more modest – closer to that of NewReno\" (ρ ≈ 1.2)."
            .into(),
        measured,
        checks: vec![check(
            "Hybla within ±10 % of NewReno",
            format!("ratio {ratio:.3}"),
            (ratio - 1.0).abs() <= 0.10,
        )],
        notes: String::new(),
        figures,
    })
}

// ---- paper: ideal channel -----------------------------------------------------------------------------

fn paper_ideal(ctx: &Context) -> Result<Section, ReproduceError> {
    let ms = Duration::from_millis;
    let (rtts, horizon) = if ctx.quick {
        (vec![ms(25), ms(600)], Duration::from_secs(10))
    } else {
        (
            vec![ms(25), ms(100), ms(300), ms(600)],
            Duration::from_secs(30),
        )
    };
    let curves = ideal::run(&rtts, horizon, ctx.threads, ctx.progress, ctx.cancel)?;
    let dir = ctx.out.join("paper-ideal");
    std::fs::create_dir_all(&dir).map_err(|source| ReproduceError::Io {
        path: dir.clone(),
        source,
    })?;
    ideal::plot(&dir.join("ideal"), &curves, horizon)?;
    let h = horizon.as_secs_f64();
    let marks: Vec<f64> = [5.0, 10.0, h].into_iter().filter(|&t| t <= h).collect();
    let mut measured = String::from("| rules | RTT | ");
    for t in &marks {
        let _ = write!(measured, "dev. at {t} s | ");
    }
    measured.push_str("segments at end |\n|---|---|");
    for _ in &marks {
        measured.push_str("---|");
    }
    measured.push_str("---|\n");
    for (cc, rtt_ms, row) in ideal::deviations(&curves, &marks) {
        let _ = write!(measured, "| {cc} | {rtt_ms:.0} ms | ");
        for d in row {
            let _ = write!(
                measured,
                "{} | ",
                d.map_or("—".into(), |d| format!("{:+.1} %", d * 100.0))
            );
        }
        let end = curves
            .iter()
            .find(|c| c.cc == cc && (c.rtt.as_secs_f64() * 1e3 - rtt_ms).abs() < 1e-9)
            .and_then(|c| c.simulated_at(h))
            .unwrap_or(0.0);
        let _ = writeln!(measured, "{end:.0} |");
    }
    let at = |cc: &str, rtt: Duration| {
        curves
            .iter()
            .find(|c| c.cc == cc && c.rtt == rtt)
            .and_then(|c| c.simulated_at(h))
            .unwrap_or(0.0)
    };
    let (short, long) = (rtts[0], *rtts.last().expect("RTTs"));
    // Full runs compare with the model at 30 s; quick runs (10 s) check only the qualitative
    // claim, with bounds stated for that horizon (the start-up lag weighs more at 10 s).
    let (max_deviation, min_ratio) = if ctx.quick {
        (0.25, 0.75)
    } else {
        (0.15, 0.85)
    };
    let worst = curves
        .iter()
        .filter(|c| c.cc == "hybla")
        .filter_map(|c| c.deviation_at(h))
        .fold(0.0f64, |m, d| m.max(d.abs()));
    let hybla_ratio = at("hybla", long) / at("hybla", short);
    let newreno_ratio = at("newreno-rules", long) / at("newreno-rules", short);
    Ok(Section {
        id: "paper-ideal".into(),
        title: "Transmitted data on an ideal channel vs eq. 8 ([Caini2004] §3.4, Fig. 3–4)".into(),
        scenario: format!(
            "1 Gbit/s both ways, no loss, 2 GB buffers, one bulk flow, RTT {:?}, {h} s of transmission. Hybla with [Caini2004]'s rules, RTT0 25 ms, initial ssthresh γ·ρ with γ = 32 (Fig. 1–3), initial window 2 segments; \"NewReno rules\" = the same controller with ρ forced to 1 (RTT0 = 10 s), i.e. eq. 1 with the same γ. Model: eq. 8 (Hybla, independent of RTT) and eq. 4 (NewReno, RTT-dependent), in segments.",
            rtts
        ),
        published: "Simulated transmitted data follows eq. 8, with small start-up steps that vanish over time (Fig. 4); Hybla's curves for 25–600 ms coincide, NewReno's fall with the RTT (Fig. 3).".into(),
        measured,
        checks: vec![
            check(
                format!("Hybla within ±{:.0} % of eq. 8 at {h} s for every RTT", max_deviation * 100.0),
                format!("worst {:.1} %", worst * 100.0),
                worst <= max_deviation,
            ),
            check(
                format!(
                    "Hybla nearly RTT-independent: data at {} ms ≥ {:.0} % of data at {} ms",
                    long.as_millis(),
                    min_ratio * 100.0,
                    short.as_millis()
                ),
                format!("{:.1} %", hybla_ratio * 100.0),
                hybla_ratio >= min_ratio,
            ),
            check(
                format!("NewReno RTT-dependent: data at {} ms ≤ 5 % of data at {} ms", long.as_millis(), short.as_millis()),
                format!("{:.2} %", newreno_ratio * 100.0),
                newreno_ratio <= 0.05,
            ),
        ],
        notes: "The early deficit of Hybla at long RTT is the ACK clock: the continuous model reaches ρ·γ within 125 ms, but the first ACK (and the first ρ estimate) arrives one RTT after the first transmission.".into(),
        figures: vec![
            PathBuf::from("paper-ideal/ideal.png"),
            PathBuf::from("paper-ideal/ideal-newreno.png"),
        ],
    })
}

// ---- paper: RTT sweeps --------------------------------------------------------------------------------

fn rtt_grid(ctx: &Context) -> Vec<u64> {
    if ctx.quick {
        vec![25, 600]
    } else {
        vec![25, 100, 200, 300, 400, 500, 600]
    }
}

/// Per controller, the run at each RTT (ms) of the grid.
type RttSweep = Vec<(String, Vec<(u64, RunSummary)>)>;

/// Satellite-flow goodput vs RTT for each controller: (cc, [(rtt ms, summary)]).
/// Label of Hybla run with \[Caini2004\]'s plain growth rules (`cc_params.growth = "seed"`).
const HYBLA_SEED: &str = "hybla-seed";

fn rtt_sweep(
    ctx: &Context,
    text: &str,
    origin: &str,
    controllers: &[&str],
    quick_duration: &str,
) -> Result<RttSweep, ReproduceError> {
    let rtts = rtt_grid(ctx);
    let mut scenarios = Vec::new();
    for cc in controllers {
        for &rtt in &rtts {
            let access = (rtt as f64 - 25.0) / 2.0;
            let mut overrides = set(&[("flow.0.access_delay", format!("{access}ms"))]);
            overrides.extend(duration(ctx, quick_duration));
            // Only the satellite flow's controller changes; the wired flows stay NewReno.
            let mut scenario = load(text, origin, &overrides)?;
            // "hybla-seed": Hybla with the paper's growth rules, for the published figures.
            scenario.flows[0].controller = if *cc == HYBLA_SEED {
                ControllerSpec::Hybla(HyblaSpec {
                    growth: Some(HyblaGrowth::Seed),
                    ..HyblaSpec::default()
                })
            } else {
                ControllerSpec::named(cc, "controllers").map_err(lab::runner::RunError::from)?
            };
            scenarios.push(scenario);
        }
    }
    let mut jobs = Vec::new();
    for scenario in &scenarios {
        let own = RunSpec {
            cc_override: None,
            seed: 1,
        };
        jobs.extend(runner::jobs(scenario, &[own], None)?);
    }
    let runs = runner::run_jobs(&jobs, ctx.threads, ctx.progress, ctx.cancel, &|_, _| {})?;
    let summaries: Vec<RunSummary> = runs
        .iter()
        .zip(&scenarios)
        .map(|(r, scenario)| summary::run_summary(scenario, &r.label, &r.outcome))
        .collect();
    let mut out = Vec::new();
    let mut it = summaries.into_iter();
    for cc in controllers {
        let row: Vec<(u64, RunSummary)> = rtts
            .iter()
            .map(|&r| (r, it.next().expect("one per point")))
            .collect();
        out.push((cc.to_string(), row));
    }
    Ok(out)
}

fn rtt_plot(
    ctx: &Context,
    id: &str,
    title: &str,
    sweep: &[(String, Vec<(u64, RunSummary)>)],
    reference: Option<(&str, f64)>,
) -> Result<PathBuf, ReproduceError> {
    let controllers: Vec<&str> = sweep.iter().map(|(cc, _)| cc.as_str()).collect();
    let mut lines: Vec<StyledSeries> = sweep
        .iter()
        .zip(output::line_colours(&controllers))
        .map(|((cc, row), colour)| StyledSeries {
            series: Series {
                label: format!("{cc} (satellite flow)"),
                points: row
                    .iter()
                    .map(|(rtt, s)| (*rtt as f64, s.flows[0].goodput_bps / 1e6))
                    .collect(),
            },
            style: LineStyle::data(colour),
        })
        .collect();
    if let Some((label, value)) = reference {
        let (lo, hi) = (25.0, *rtt_grid(ctx).last().expect("RTTs") as f64);
        lines.push(StyledSeries {
            series: Series {
                label: label.into(),
                points: vec![(lo, value / 1e6), (hi, value / 1e6)],
            },
            style: LineStyle::reference(Colour::Black),
        });
    }
    let dir = ctx.out.join(id);
    std::fs::create_dir_all(&dir).map_err(|source| ReproduceError::Io {
        path: dir.clone(),
        source,
    })?;
    chart::styled_line_chart(
        &dir.join("goodput-vs-rtt"),
        &StyledChart {
            title,
            subtitle: "",
            x_label: "RTT of the satellite flow (ms)",
            y_label: "goodput (Mbit/s)",
            legend_title: "",
            lines: &lines,
        },
    )?;
    Ok(PathBuf::from(id).join("goodput-vs-rtt.png"))
}

fn sweep_table(sweep: &[(String, Vec<(u64, RunSummary)>)]) -> String {
    let mut t = String::from("| RTT |");
    for (cc, _) in sweep {
        let _ = write!(t, " {cc} |");
    }
    t.push_str("\n|---|");
    for _ in sweep {
        t.push_str("---|");
    }
    t.push('\n');
    for (i, (rtt, _)) in sweep[0].1.iter().enumerate() {
        let _ = write!(t, "| {rtt} ms |");
        for (_, row) in sweep {
            let _ = write!(t, " {} |", mbps(row[i].1.flows[0].goodput_bps));
        }
        t.push('\n');
    }
    t
}

fn paper_congestion(ctx: &Context) -> Result<Section, ReproduceError> {
    let sweep = rtt_sweep(
        ctx,
        PAPER_CONGESTION,
        "paper-congestion",
        &["newreno", "cubic", "hybla"],
        "60s",
    )?;
    let flows = sweep[0].1[0].1.flows.len() as f64;
    let fair = 10e6 * f64::from(sim::payload_bytes_per_packet(1500)) / 1500.0 / flows;
    let figure = rtt_plot(
        ctx,
        "paper-congestion",
        "Satellite flow vs 5 wired NewReno flows (RED, 10 Mbit/s)",
        &sweep,
        Some(("fair share (ceiling / 6)", fair)),
    )?;
    let last = |cc: &str| {
        sweep
            .iter()
            .find(|(c, _)| c == cc)
            .map(|(_, row)| row.last().expect("points").1.flows[0].goodput_bps)
            .unwrap_or(0.0)
    };
    let (hybla, newreno) = (last("hybla"), last("newreno"));
    Ok(Section {
        id: "paper-congestion".into(),
        title: "Satellite-flow goodput vs RTT under congestion ([Caini2004] §5.1, Fig. 6)".into(),
        scenario: format!(
            "One satellite flow (NewReno, Cubic or Hybla; RTT {:?} ms via its access delay) and 5 wired NewReno flows (RTT 25 ms) through a RED bottleneck (qlen 50, min_th 5, max_th 15 packets, max_p 10 %). **Bottleneck rate 10 Mbit/s: our choice**, the paper does not give it. {} s per point, seed 1.",
            rtt_grid(ctx),
            if ctx.quick { 60 } else { 600 }
        ),
        published: "Hybla keeps about the fair share at any RTT; NewReno, SACK and Vegas starve as the RTT grows (Fig. 6).".into(),
        measured: format!("Satellite-flow goodput; fair share of the 9.59 Mbit/s ceiling among 6 flows = {}.\n\n{}", mbps(fair), sweep_table(&sweep)),
        checks: vec![
            check(format!("Hybla at the longest RTT ≥ 50 % of the fair share ({})", mbps(fair)), mbps(hybla), hybla >= 0.5 * fair),
            check("NewReno at the longest RTT ≤ 50 % of Hybla's", format!("{} vs {}", mbps(newreno), mbps(hybla)), newreno <= 0.5 * hybla),
        ],
        notes: "At RTT = RTT0 (25 ms) Hybla takes slightly more than a NewReno flow (and more than the fair share): with ρ = 1 its growth equals NewReno's, but satquic's extension keeps the window at the measured pipe after a rare loss instead of halving it. [Caini2004]'s Hybla would equal NewReno there.".into(),
        figures: vec![figure],
    })
}

fn paper_linkloss(ctx: &Context) -> Result<Section, ReproduceError> {
    let sweep = rtt_sweep(
        ctx,
        PAPER_LINKLOSS,
        "paper-linkloss",
        &["newreno", "cubic", HYBLA_SEED, "hybla"],
        "60s",
    )?;
    let figure = rtt_plot(
        ctx,
        "paper-linkloss",
        "One flow, 10 Mbit/s, 1 % PER both ways",
        &sweep,
        None,
    )?;
    let by = |cc: &str| {
        sweep
            .iter()
            .find(|(c, _)| c == cc)
            .map(|(_, r)| r.clone())
            .unwrap_or_default()
    };
    let (seed_rules, newreno, ours) = (by(HYBLA_SEED), by("newreno"), by("hybla"));
    let ratios: Vec<(u64, f64)> = seed_rules
        .iter()
        .zip(&newreno)
        .filter(|((rtt, _), _)| *rtt > 300)
        .map(|((rtt, h), (_, n))| (*rtt, h.flows[0].goodput_bps / n.flows[0].goodput_bps))
        .collect();
    let min_ratio = ratios.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let seed_long = seed_rules
        .last()
        .map_or(0.0, |(_, s)| s.flows[0].goodput_bps);
    let ours_vs_seed = ours
        .iter()
        .zip(&seed_rules)
        .map(|((_, o), (_, s))| o.flows[0].goodput_bps / s.flows[0].goodput_bps)
        .fold(f64::INFINITY, f64::min);
    Ok(Section {
        id: "paper-linkloss".into(),
        title: "Goodput vs RTT with 1 % link loss ([Caini2004] §5.2, Fig. 7)".into(),
        scenario: format!(
            "One flow, 10 Mbit/s bottleneck with RED (qlen 50, min 5, max 15), uniform PER 1 % in both directions, RTT {:?} ms, {} s per point. `hybla-seed` is Hybla with the paper's growth rules (`cc_params.growth = \"seed\"`), the algorithm Fig. 7 measured; `hybla` is satquic's default (loss-tolerant) Hybla.",
            rtt_grid(ctx),
            if ctx.quick { 60 } else { 600 }
        ),
        published:
            "For RTT > 300 ms Hybla's goodput is at least 10× NewReno's, about 2–3 Mbit/s (Fig. 7)."
                .into(),
        measured: format!(
            "{}\nHybla (seed rules) / NewReno for RTT > 300 ms: {}",
            sweep_table(&sweep),
            ratios
                .iter()
                .map(|(r, x)| format!("{r} ms: {x:.1}×"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        checks: vec![
            check(
                "Hybla (seed rules) ≥ 10 × NewReno for every RTT > 300 ms",
                format!("min {min_ratio:.1}×"),
                min_ratio >= 10.0,
            ),
            check(
                "Hybla (seed rules) at the longest RTT between 1.5 and 4 Mbit/s (published ≈ 2–3)",
                mbps(seed_long),
                (1.5e6..=4e6).contains(&seed_long),
            ),
            check(
                "satquic's Hybla ≥ the seed rules at every RTT",
                format!("min ratio {ours_vs_seed:.2}"),
                ours_vs_seed >= 1.0,
            ),
        ],
        notes: "satquic's Hybla keeps its window on losses that arrive with no queue at the bottleneck and a loss share under 5 % (random loss), so it is not bound by the paper's halving-per-loss curve; the seed-rules row is the like-for-like reproduction.".into(),
        figures: vec![figure],
    })
}

// ---- paper: fairness ------------------------------------------------------------------------------------

fn shares_chart(
    ctx: &Context,
    id: &str,
    name: &str,
    title: &str,
    s: &RunSummary,
) -> Result<PathBuf, ReproduceError> {
    let dir = ctx.out.join(id);
    std::fs::create_dir_all(&dir).map_err(|source| ReproduceError::Io {
        path: dir.clone(),
        source,
    })?;
    let bars: Vec<(String, f64)> = s
        .flows
        .iter()
        .map(|f| (f.name.clone(), f.goodput_bps / 1e6))
        .collect();
    chart::bar_chart(&dir.join(name), title, "goodput (Mbit/s)", &bars)?;
    Ok(PathBuf::from(id).join(format!("{name}.png")))
}

fn paper_fairness(ctx: &Context) -> Result<Section, ReproduceError> {
    let d = duration(ctx, "60s");
    let newreno = load(PAPER_FAIRNESS, "paper-fairness", &d)?;
    let mut overrides = d.clone();
    overrides.push("flow.cc=hybla".into());
    let hybla = load(PAPER_FAIRNESS, "paper-fairness", &overrides)?;
    let s = run_pairs(ctx, &[(newreno, "newreno".into()), (hybla, "hybla".into())])?;
    let figures = vec![
        shares_chart(
            ctx,
            "paper-fairness",
            "shares-newreno",
            "NewReno: 3 flows at 300 ms + 3 at 25 ms",
            &s[0],
        )?,
        shares_chart(
            ctx,
            "paper-fairness",
            "shares-hybla",
            "Hybla: 3 flows at 300 ms + 3 at 25 ms",
            &s[1],
        )?,
    ];
    let ratio = |r: &RunSummary| goodput(r, "long") / goodput(r, "short");
    let mut measured = String::from(
        "| controller | mean long-flow goodput | mean short-flow goodput | long / short | Jain (6 flows) |\n|---|---|---|---|---|\n",
    );
    for r in &s {
        let _ = writeln!(
            measured,
            "| {} | {} | {} | {:.2} | {:.3} |",
            r.cc,
            mbps(goodput(r, "long")),
            mbps(goodput(r, "short")),
            ratio(r),
            r.jain_index
        );
    }
    Ok(Section {
        id: "paper-fairness".into(),
        title: "RTT fairness: 3 long + 3 short flows ([Caini2004] §6, Fig. 9–11)".into(),
        scenario: format!(
            "3 flows at RTT 300 ms and 3 at 25 ms (all NewReno, then all Hybla with RTT0 25 ms) share a RED bottleneck (qlen 50, min 5, max 15). **10 Mbit/s: our choice.** {} s.",
            if ctx.quick { 60 } else { 600 }
        ),
        published: "NewReno: the long-RTT flows get a small fraction of the short ones' goodput; Hybla: roughly equal shares; packet spacing reduces the residual unfairness (Fig. 9–11).".into(),
        measured,
        checks: vec![
            check("NewReno: long / short < 0.5", format!("{:.2}", ratio(&s[0])), ratio(&s[0]) < 0.5),
            check("Hybla: long / short between 0.5 and 2", format!("{:.2}", ratio(&s[1])), (0.5..=2.0).contains(&ratio(&s[1]))),
        ],
        notes: "The paper's \"without packet spacing\" variant cannot be run: quinn always paces (≈ 1.25 · cwnd / srtt with a small burst allowance) and a controller cannot switch it off, so every Hybla result here is \"with spacing\".".into(),
        figures,
    })
}

fn poster_latecomer(ctx: &Context) -> Result<Section, ReproduceError> {
    let mut pairs = Vec::new();
    for queue in ["2bdp", "4bdp"] {
        let mut overrides = set(&[
            ("path.forward.queue", queue.to_string()),
            ("path.return.queue", queue.to_string()),
        ]);
        overrides.extend(duration(ctx, "30s"));
        pairs.push((
            load(POSTER_LATECOMER, "poster-latecomer", &overrides)?,
            "hybla".to_string(),
        ));
    }
    let s = run_pairs(ctx, &pairs)?;
    let ratio = |r: &RunSummary| goodput(r, "late") / goodput(r, "early");
    let figures = vec![
        shares_chart(
            ctx,
            "poster-latecomer",
            "shares-2bdp",
            "2 early + 2 late Hybla flows, 2-BDP buffer",
            &s[0],
        )?,
        shares_chart(
            ctx,
            "poster-latecomer",
            "shares-4bdp",
            "2 early + 2 late Hybla flows, 4-BDP buffer",
            &s[1],
        )?,
    ];
    let mut measured = String::from(
        "| buffer | early flows (mean) | late flows (mean) | late : early |\n|---|---|---|---|\n",
    );
    for (q, r) in ["2 BDP", "4 BDP"].iter().zip(&s) {
        let _ = writeln!(
            measured,
            "| {q} | {} | {} | {:.2} : 1 |",
            mbps(goodput(r, "early")),
            mbps(goodput(r, "late")),
            ratio(r)
        );
    }
    Ok(Section {
        id: "poster-latecomer".into(),
        title: "Hybla vs Hybla with late starters ([Gersey-poster])".into(),
        scenario: format!(
            "50 Mbit/s both ways, RTT 32 ms, drop-tail buffer of 2 and of 4 BDP, 2 Hybla flows from 0 s and 2 more from 10 s, {} s; goodput of each flow over its own transfer time.",
            if ctx.quick { 30 } else { 60 }
        ),
        published: "Late flows got 4× (2 BDP) and 15× (4 BDP) the early flows' throughput: the late flows' RTT includes the standing queue, so their ρ is larger.".into(),
        measured,
        checks: vec![
            check("2 BDP: late : early between 0.5 and 2 (our aim ≈ 1:1)", format!("{:.2}", ratio(&s[0])), (0.5..=2.0).contains(&ratio(&s[0]))),
            check("4 BDP: late : early between 0.5 and 2 (our aim ≈ 1:1)", format!("{:.2}", ratio(&s[1])), (0.5..=2.0).contains(&ratio(&s[1]))),
        ],
        notes: "At RTT 32 ms ρ is 1.28 for an empty queue; a late flow that measures its base RTT with a standing queue of 1–4 BDP would see ρ up to 6.4. The windowed-minimum base RTT and the pipe-aware growth are what we expect to keep the ratio near 1; where they do not, the check fails and the ratio is reported as measured.".into(),
        figures,
    })
}

// ---- Kuhn, sat, picoquic --------------------------------------------------------------------------------

fn kuhn(ctx: &Context) -> Result<Section, ReproduceError> {
    let controllers: &[&str] = if ctx.quick {
        &["newreno", "hybla"]
    } else {
        &["newreno", "cubic", "bbr", "hybla"]
    };
    let cases: Vec<_> = KUHN
        .iter()
        .filter(|(id, _)| !ctx.quick || *id == "kuhn-medium" || *id == "kuhn-large")
        .collect();
    let mut pairs = Vec::new();
    for (id, _) in &cases {
        for cc in controllers {
            pairs.push((load_builtin(id, &[])?, cc.to_string()));
        }
    }
    let s = run_pairs(ctx, &pairs)?;
    let mut measured = String::new();
    let mut hybla_startup_ok = true;
    let mut hybla_startup = Vec::new();
    for (i, (id, objectives)) in cases.iter().enumerate() {
        let _ = writeln!(
            measured,
            "\n**{id}** — objectives 2 MB / 10 MB / 100 MB: {}\n\n| controller | download | t(2 MB) | t(10 MB) | t(100 MB) |\n|---|---|---|---|---|",
            objectives
                .iter()
                .map(|o| o.map_or("—".into(), |v| format!("{v} s")))
                .collect::<Vec<_>>()
                .join(" / ")
        );
        for (j, cc) in controllers.iter().enumerate() {
            let r = &s[i * controllers.len() + j];
            for (n, exchange) in r.flows[0].exchanges.iter().enumerate() {
                let cell = |label: &str, objective: Option<f64>| {
                    let t = exchange.time_to_bytes.get(label);
                    match (t, objective) {
                        (Some(t), Some(o)) => {
                            format!("{t:.2} s {}", if t <= o { "PASS" } else { "FAIL" })
                        }
                        (Some(t), None) => format!("{t:.2} s"),
                        (None, Some(_)) => "not reached FAIL".into(),
                        (None, None) => "—".into(),
                    }
                };
                let _ = writeln!(
                    measured,
                    "| {cc} | {} | {} | {} | {} |",
                    if n == 0 { "first" } else { "after 10 s idle" },
                    cell("2MB", objectives[0]),
                    cell("10MB", objectives[1]),
                    cell("100MB", objectives[2])
                );
                if *cc == "hybla" && n == 0 {
                    for (label, objective) in [
                        ("2MB", objectives[0]),
                        ("10MB", objectives[1]),
                        ("100MB", objectives[2]),
                    ] {
                        if objective.is_none() {
                            continue;
                        }
                        let t = exchange.time_to_bytes.get(label);
                        hybla_startup.push(format!("{id} {label}: {}", secs(t)));
                        hybla_startup_ok &= matches!((t, objective), (Some(t), Some(o)) if t <= o);
                    }
                }
            }
        }
    }
    Ok(Section {
        id: "kuhn".into(),
        title: "draft-kuhn-quic-4-sat objectives ([Kuhn-slides])".into(),
        scenario: "The six draft-kuhn cases (the scenario catalog), RTT 650 ms, 1-BDP buffers, download 100 MB (medium and large: again after 10 s idle); times from request to the first 2 / 10 / 100 MB in order. Transport: satquic's satellite preset (windows from the BDP; ACK thinning from the return-link budget: k = 64 on 250/3 and 50/0.5, 5 on 50/10 and 10/2, with the quinn-proto stall workaround).".into(),
        published: "Objectives (time to 2 / 10 / 100 MB): small 3/10/85 s, medium and congested 3/5/20 s, large 3/5/8 s, lossy 3/6/10 s; variable has none. [Kuhn-slides] reports that only picoquic client + server met them.".into(),
        measured,
        checks: vec![check(
            "Hybla meets every objective (2 / 10 / 100 MB) of every case that has one",
            hybla_startup.join(", "),
            hybla_startup_ok,
        )],
        notes: "Hybla's start-up target is the path's BDP as the scenario declares it (the thesis's INITIAL_SSTHRESH is the same fact, fixed); NewReno, Cubic and BBR get no such hint. With thinned ACKs NewReno and Cubic overshoot slow start into hundreds of losses and stay bound by their per-RTT growth; at 1 % loss (kuhn-lossy) they crawl at the Mathis bound, while Hybla keeps its window on losses that come with no queue. In quick mode only kuhn-medium and kuhn-large run.".into(),
        figures: Vec::new(),
    })
}

fn sat(ctx: &Context) -> Result<Section, ReproduceError> {
    let controllers: &[&str] = if ctx.quick {
        &["newreno", "hybla"]
    } else {
        &["newreno", "cubic", "bbr", "hybla"]
    };
    let mut pairs = Vec::new();
    for id in ["sat", "satl"] {
        for cc in controllers {
            pairs.push((load_builtin(id, &[])?, cc.to_string()));
        }
    }
    let s = run_pairs(ctx, &pairs)?;
    let mut measured = String::from(
        "| scenario | controller | goodput | efficiency (goodput / 20 Mbit/s) | completion |\n|---|---|---|---|---|\n",
    );
    let n = controllers.len();
    for (i, r) in s.iter().enumerate() {
        let id = if i < n { "sat" } else { "satl" };
        let f = &r.flows[0];
        let _ = writeln!(
            measured,
            "| {id} | {} | {} | {:.1} % | {} |",
            r.cc,
            mbps(f.goodput_bps),
            f.goodput_bps / 20e6 * 100.0,
            secs(f.completion_s)
        );
    }
    let eff = |i: usize| s[i].flows[0].goodput_bps / 20e6;
    let h = n - 1;
    Ok(Section {
        id: "sat".into(),
        title: "QUIC interop runner, satellite edition: sat and satl".into(),
        scenario: "20/2 Mbit/s, RTT 600 ms, 25-packet buffers, download 10 MiB; satl adds 1 % loss both ways.".into(),
        published: "The interop runner reports goodput as a fraction of 20 Mbit/s per implementation pair; no single published figure for quinn.".into(),
        measured,
        checks: vec![
            check("sat: Hybla efficiency ≥ NewReno's", format!("{:.1} % vs {:.1} %", eff(h) * 100.0, eff(0) * 100.0), eff(h) >= eff(0)),
            check("satl: Hybla efficiency ≥ NewReno's", format!("{:.1} % vs {:.1} %", eff(n + h) * 100.0, eff(n) * 100.0), eff(n + h) >= eff(n)),
        ],
        notes: String::new(),
        figures: Vec::new(),
    })
}

fn picoquic_sat(ctx: &Context) -> Result<Section, ReproduceError> {
    // (label, overrides, controllers, picoquic deadline per controller)
    // (path, overrides, controllers with picoquic's deadline)
    type Case<'a> = (&'a str, Vec<String>, Vec<(&'a str, Option<f64>)>);
    let cases: Vec<Case> = vec![
        (
            "250/3 Mbit/s",
            vec![],
            vec![
                ("bbr", Some(5.5)),
                ("cubic", Some(6.5)),
                ("hybla", Some(5.5)),
            ],
        ),
        (
            "250/3 Mbit/s, loss 1/64",
            set(&[
                ("path.forward.loss", "1.5625%".into()),
                ("path.return.loss", "1.5625%".into()),
            ]),
            vec![("bbr", Some(8.0)), ("hybla", Some(8.0))],
        ),
        (
            "50/10 Mbit/s",
            set(&[
                ("path.forward.rate", "50Mbit".into()),
                ("path.return.rate", "10Mbit".into()),
                ("path.forward.queue", "3.75MB".into()),
                ("path.return.queue", "750KB".into()),
            ]),
            vec![("bbr", Some(18.2)), ("hybla", Some(18.2))],
        ),
        (
            "10/2 Mbit/s",
            set(&[
                ("path.forward.rate", "10Mbit".into()),
                ("path.return.rate", "2Mbit".into()),
                ("path.forward.queue", "750KB".into()),
                ("path.return.queue", "150KB".into()),
                ("duration", "200s".into()),
            ]),
            vec![("bbr", Some(81.5)), ("hybla", Some(81.5))],
        ),
    ];
    let cases: Vec<_> = if ctx.quick {
        cases.into_iter().take(1).collect()
    } else {
        cases
    };
    let mut pairs = Vec::new();
    for (_, overrides, controllers) in &cases {
        for (cc, _) in controllers {
            pairs.push((load_builtin("picoquic-sat", overrides)?, cc.to_string()));
        }
    }
    let s = run_pairs(ctx, &pairs)?;
    let mut measured = String::from(
        "| path | controller | our completion (100 MB) | picoquic deadline | |\n|---|---|---|---|---|\n",
    );
    let mut i = 0;
    let mut hybla_results = Vec::new();
    let mut hybla_ok = true;
    for (label, _, controllers) in &cases {
        for (cc, deadline) in controllers {
            let t = s[i].flows[0].completion_s;
            i += 1;
            let verdict = match (t, deadline) {
                (Some(t), Some(d)) if t <= *d => "within",
                (_, Some(_)) => "over",
                _ => "",
            };
            let _ = writeln!(
                measured,
                "| {label} | {cc} | {} | {} | {verdict} |",
                secs(t),
                deadline.map_or("—".into(), |d| format!("{d} s"))
            );
            if *cc == "hybla" {
                // A deadline below what the modelled link can physically carry (100 MB at our
                // goodput ceiling after IP/UDP/QUIC overhead, plus the request's RTT) is
                // replaced by that floor + 2 %: picoquic's simulator charges fewer header
                // bytes to the link than our IP-level model does.
                let path = summary::path_summary(&pairs[i - 1].0);
                let floor = 100e6 * 8.0 / path.goodput_ceiling_bps + path.base_rtt_ms / 1e3;
                let effective = deadline.map(|d| d.max(floor * 1.02));
                hybla_results.push(format!(
                    "{label}: {} (limit {})",
                    secs(t),
                    effective.map_or("—".into(), |d| format!("{d:.1} s"))
                ));
                hybla_ok &= matches!((t, effective), (Some(t), Some(d)) if t <= d);
            }
        }
    }
    Ok(Section {
        id: "picoquic-sat".into(),
        title: "Our completion times next to picoquic's satellite test deadlines".into(),
        scenario: "picoquic's satellite tests: 100 MB download, RTT 600 ms, buffers of 600 ms of the link rate; 250/3, 250/3 with 1/64 loss, 50/10 and 10/2 Mbit/s.".into(),
        published: "picoquic test deadlines: 250/3 BBR 5.5 s, BBR with 1/64 loss 8.0 s, Cubic 6.5 s; 50/10 18.2 s; 10/2 81.5 s.".into(),
        measured,
        checks: vec![check("Hybla within picoquic's deadline on every path (or within 2 % of the modelled link's physical minimum where the deadline lies below it)", hybla_results.join(", "), hybla_ok)],
        notes: "picoquic's deadlines come from its own stack and simulator. The 10/2 Mbit/s deadline (81.5 s, 9.82 Mbit/s of payload) lies below what our IP-level link model can carry: 1500-byte packets hold 1439 bytes of stream payload after IPv4/UDP (28 B) and QUIC (33 B) overhead, so 100 MB needs at least 83.4 s plus the request's RTT at 10 Mbit/s; picoquic's simulator charges fewer header bytes to the link. That case is checked against our floor + 2 %. Hybla's start-up target on these paths is the declared path BDP (the scenario states the link), and ACK thinning (k = 64 on 250/3) with the quinn-proto stall workaround keeps the 3 Mbit/s return link from capping the ACK clock.".into(),
        figures: Vec::new(),
    })
}

// ---- loss matrix -------------------------------------------------------------------------------

/// Mathis et al. (1997): the most a loss-based Reno flow gets at packet loss rate p,
/// MSS / RTT · sqrt(3 / (2p)), in bits per second of payload.
fn mathis_bound_bps(payload_bytes: f64, rtt_s: f64, loss: f64) -> f64 {
    payload_bytes * 8.0 / rtt_s * (1.5 / loss).sqrt()
}

fn loss_matrix(ctx: &Context) -> Result<Section, ReproduceError> {
    const LOSSES: [f64; 5] = [0.0, 0.1, 0.5, 1.0, 2.0];
    const RTTS_MS: [u64; 3] = [30, 250, 600];
    const LINKS: [(&str, &str, &str); 2] = [
        ("10/10 Mbit/s", "10Mbit", "10Mbit"),
        ("20/2 Mbit/s", "20Mbit", "2Mbit"),
    ];
    // Every registered controller, in the figures' order (hybla first).
    let controllers = output::controllers_in_figure_order();
    /// Loss rates of the jitter cells (the targets' 0.1–1 %).
    const JITTER_LOSSES: [f64; 3] = [0.1, 0.5, 1.0];
    /// 10 ms of mean jitter on both links, a new draw per packet, order kept.
    const JITTER: &str = r#"{ distribution = "exponential", mean = "10ms" }"#;
    let cell_overrides = |forward: &str, back: &str, rtt: u64, loss: &str| {
        let one_way = format!("{}ms", rtt as f64 / 2.0);
        set(&[
            ("path.forward.rate", forward.into()),
            ("path.return.rate", back.into()),
            ("path.forward.delay", one_way.clone()),
            ("path.return.delay", one_way),
            ("path.forward.loss", loss.into()),
            ("path.return.loss", loss.into()),
        ])
    };
    let mut pairs = Vec::new();
    for (_, forward, back) in LINKS {
        for rtt in RTTS_MS {
            for loss in LOSSES {
                let scenario = load(
                    LOSS_MATRIX,
                    "loss-matrix",
                    &cell_overrides(forward, back, rtt, &format!("{loss}%")),
                )?;
                for cc in &controllers {
                    pairs.push((scenario.clone(), cc.to_string()));
                }
            }
        }
    }
    // Bursty loss: Gilbert-Elliott, 10 Mbit/s, 600 ms.
    let mut bursty = load(
        LOSS_MATRIX,
        "loss-matrix",
        &cell_overrides("10Mbit", "10Mbit", 600, "0%"),
    )?;
    let ge = netsim::LossModel::GilbertElliott {
        p_good_to_bad: 0.018,
        p_bad_to_good: 0.645,
        loss_in_bad: 1.0,
        loss_in_good: 0.0,
    };
    bursty.forward.loss = ge;
    bursty.return_link.loss = ge;
    let bursty_start = pairs.len();
    for cc in &controllers {
        pairs.push((bursty.clone(), cc.to_string()));
    }
    // Jitter: hybla alone, the same paths with 10 ms of mean jitter both ways.
    let jitter_start = pairs.len();
    for (_, forward, back) in LINKS {
        for rtt in RTTS_MS {
            for loss in JITTER_LOSSES {
                let mut overrides = cell_overrides(forward, back, rtt, &format!("{loss}%"));
                overrides.extend(set(&[
                    ("path.forward.jitter", JITTER.into()),
                    ("path.return.jitter", JITTER.into()),
                ]));
                let scenario = load(LOSS_MATRIX, "loss-matrix", &overrides)?;
                pairs.push((scenario, "hybla".to_string()));
            }
        }
    }
    let s = run_pairs(ctx, &pairs)?;
    let payload = f64::from(sim::payload_bytes_per_packet(1500));
    let drops_per_1000 = |r: &RunSummary| {
        let f = &r.flows[0];
        1000.0 * f.forward_queue_drops as f64 / f.sent_packets.max(1) as f64
    };
    let mut measured = String::from(
        "Each cell: ceiling fraction (goodput / most the link carries) · queue-overflow drops per 1000 sent packets. Last column: how hybla took its losses — random losses taken as random, and queue drops taken as congestion (with their number).\n",
    );
    // The worst share of random losses taken as random, and of queue drops taken as
    // congestion, over the hybla cells (plain; the jitter cells are checked apart).
    let mut worst_random: (f64, String) = (f64::INFINITY, String::new());
    let mut worst_queue: (f64, String) = (f64::INFINITY, String::new());
    let accuracy = |f: &summary::FlowSummary| {
        let m = f.losses.matched.unwrap_or_default();
        let pct = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{:.0} %", 100.0 * v));
        (
            m,
            format!(
                "{} · {} of {}",
                pct(m.random_loss_accuracy),
                pct(m.queue_drop_accuracy),
                m.queue_drops_as_congestion + m.queue_drops_as_random
            ),
        )
    };
    let mut figures = Vec::new();
    let mut checks = Vec::new();
    let mut worst_drops: (f64, String) = (0.0, String::new());
    let mut low_loss_worst: (f64, String) = (f64::INFINITY, String::new());
    let mut geo_1pct = f64::NAN;
    let mut i = 0;
    let dir = ctx.out.join("loss-matrix");
    std::fs::create_dir_all(&dir).map_err(|source| ReproduceError::Io {
        path: dir.clone(),
        source,
    })?;
    for (link, _, _) in LINKS {
        for rtt in RTTS_MS {
            let _ = write!(
                measured,
                "\n**{link}, RTT {rtt} ms**\n\n| loss | {} | Mathis bound | hybla: random as random · queue drops as congestion |\n|---|---|---|---|---|---|---|\n",
                controllers.join(" | ")
            );
            let mut series: Vec<Series> = controllers
                .iter()
                .map(|cc| Series {
                    label: cc.to_string(),
                    points: Vec::new(),
                })
                .collect();
            let mut mathis = Series {
                label: "Mathis bound (Reno)".into(),
                points: Vec::new(),
            };
            for loss in LOSSES {
                let _ = write!(measured, "| {loss} % |");
                let mut ceiling = f64::NAN;
                let mut hybla_accuracy = String::new();
                for (k, cc) in controllers.iter().enumerate() {
                    let r = &s[i];
                    i += 1;
                    let f = &r.flows[0];
                    ceiling = f.goodput_bps / f.ceiling_fraction.max(1e-12);
                    let drops = drops_per_1000(r);
                    let _ = write!(
                        measured,
                        " {:.0} % · {:.1} |",
                        100.0 * f.ceiling_fraction,
                        drops
                    );
                    series[k].points.push((loss, 100.0 * f.ceiling_fraction));
                    let cell = format!("{link} {rtt} ms {loss} %");
                    if *cc == "hybla" {
                        let (m, text) = accuracy(f);
                        hybla_accuracy = text;
                        if let Some(a) = m.random_loss_accuracy
                            && a < worst_random.0
                        {
                            worst_random = (a, cell.clone());
                        }
                        if let Some(a) = m.queue_drop_accuracy
                            && a < worst_queue.0
                        {
                            worst_queue = (a, cell.clone());
                        }
                        if drops > worst_drops.0 || worst_drops.1.is_empty() {
                            worst_drops = (drops, cell.clone());
                        }
                        if (0.1..=0.5).contains(&loss) && f.ceiling_fraction < low_loss_worst.0 {
                            low_loss_worst = (f.ceiling_fraction, cell.clone());
                        }
                        if link.starts_with("10/10") && rtt == 600 && loss == 1.0 {
                            geo_1pct = f.ceiling_fraction;
                        }
                    }
                }
                let bound = if loss > 0.0 {
                    let b = mathis_bound_bps(payload, rtt as f64 / 1e3, loss / 100.0) / ceiling;
                    mathis.points.push((loss, 100.0 * b.min(1.0)));
                    format!("{:.0} %", 100.0 * b.min(9.99))
                } else {
                    "—".into()
                };
                let _ = writeln!(measured, " {bound} | {hybla_accuracy} |");
            }
            let colours = output::line_colours(&controllers);
            let mut lines: Vec<StyledSeries> = series
                .into_iter()
                .zip(colours)
                .map(|(series, colour)| StyledSeries {
                    series,
                    style: LineStyle::data(colour),
                })
                .collect();
            lines.push(StyledSeries {
                series: mathis,
                style: LineStyle::reference(Colour::Black),
            });
            let stem = format!(
                "ceiling-vs-loss-{}-{rtt}ms",
                if link.starts_with("10/10") {
                    "10-10"
                } else {
                    "20-2"
                }
            );
            let title =
                format!("{link}, RTT {rtt} ms, 1-BDP drop-tail: share of the link vs random loss");
            chart::styled_line_chart(
                &dir.join(&stem),
                &StyledChart {
                    title: &title,
                    subtitle: "",
                    x_label: "random loss, both directions (%)",
                    y_label: "goodput / goodput ceiling (%)",
                    legend_title: "",
                    lines: &lines,
                },
            )?;
            figures.push(PathBuf::from("loss-matrix").join(format!("{stem}.png")));
        }
    }
    let _ = write!(
        measured,
        "\n**Bursty loss (Gilbert-Elliott p = 1.8 %, r = 64.5 %: 2.7 % loss in bursts of 1.55), 10/10 Mbit/s, RTT 600 ms**\n\n| {} |\n|---|---|---|---|\n|",
        controllers.join(" | ")
    );
    for (k, _) in controllers.iter().enumerate() {
        let r = &s[bursty_start + k];
        let _ = write!(
            measured,
            " {:.0} % · {:.1} |",
            100.0 * r.flows[0].ceiling_fraction,
            drops_per_1000(r)
        );
        if k == 0 && drops_per_1000(r) > worst_drops.0 {
            worst_drops = (drops_per_1000(r), "Gilbert-Elliott".into());
        }
    }
    measured.push('\n');
    let _ = write!(
        measured,
        "\n**hybla with 10 ms of mean jitter both ways** (exponential, a new draw per packet, order kept). Each cell: ceiling fraction · random losses taken as random · queue drops taken as congestion.\n\n| path | {} |\n|---|---|---|---|\n",
        JITTER_LOSSES.map(|l| format!("{l} %")).join(" | ")
    );
    let mut jitter_worst: (f64, String) = (f64::INFINITY, String::new());
    let mut jitter_worst_random: (f64, String) = (f64::INFINITY, String::new());
    let mut j = jitter_start;
    for (link, _, _) in LINKS {
        for rtt in RTTS_MS {
            let _ = write!(measured, "| {link}, RTT {rtt} ms |");
            for loss in JITTER_LOSSES {
                let f = &s[j].flows[0];
                j += 1;
                let (m, text) = accuracy(f);
                let _ = write!(measured, " {:.0} % · {text} |", 100.0 * f.ceiling_fraction);
                let cell = format!("{link} {rtt} ms {loss} %");
                let in_target = loss <= 0.5 || (link.starts_with("10/10") && rtt == 600);
                if in_target && f.ceiling_fraction < jitter_worst.0 {
                    jitter_worst = (f.ceiling_fraction, cell.clone());
                }
                if let Some(a) = m.random_loss_accuracy
                    && a < jitter_worst_random.0
                {
                    jitter_worst_random = (a, cell);
                }
            }
            measured.push('\n');
        }
    }
    checks.push(check(
        "Hybla ≥ 85 % of the ceiling at 1 % loss, 10 Mbit/s, RTT 600 ms",
        format!("{:.1} %", 100.0 * geo_1pct),
        geo_1pct >= 0.85,
    ));
    checks.push(check(
        "Hybla ≥ 85 % of the ceiling at 0.1–0.5 % loss in every cell",
        format!(
            "worst {:.1} % ({})",
            100.0 * low_loss_worst.0,
            low_loss_worst.1
        ),
        low_loss_worst.0 >= 0.85,
    ));
    checks.push(check(
        "Hybla's queue-overflow drops ≤ 1 % of sent packets in every cell",
        format!("worst {:.1} per 1000 ({})", worst_drops.0, worst_drops.1),
        worst_drops.0 <= 10.0,
    ));
    checks.push(check(
        "With 10 ms of mean jitter: Hybla ≥ 80 % of the ceiling at 1 % loss (10 Mbit/s, 600 ms) and in every 0.1–0.5 % cell",
        format!("worst {:.1} % ({})", 100.0 * jitter_worst.0, jitter_worst.1),
        jitter_worst.0 >= 0.80,
    ));
    let worst = |w: &(f64, String)| {
        if w.1.is_empty() {
            "none to classify".to_string()
        } else {
            format!("worst {:.0} % ({})", 100.0 * w.0, w.1)
        }
    };
    checks.push(check(
        "Hybla takes ≥ 90 % of its random losses as random in every cell",
        worst(&worst_random),
        worst_random.0 >= 0.9,
    ));
    checks.push(check(
        "Hybla takes ≥ 90 % of its queue drops as congestion in every cell that has them",
        worst(&worst_queue),
        worst_queue.0 >= 0.9,
    ));
    checks.push(check(
        "With 10 ms of mean jitter: Hybla takes ≥ 90 % of its random losses as random in every cell",
        worst(&jitter_worst_random),
        jitter_worst_random.0 >= 0.9,
    ));
    Ok(Section {
        id: "loss-matrix".into(),
        title: "Random loss: share of the link and self-inflicted drops".into(),
        scenario: "One unlimited download for 120 s (seed 1) per cell: Bernoulli loss 0 / 0.1 / 0.5 / 1 / 2 % in both directions × RTT 30 / 250 / 600 ms × 10/10 and 20/2 Mbit/s, drop-tail buffers of 1 BDP; a Gilbert-Elliott bursty case; and hybla again at 0.1 / 0.5 / 1 % with 10 ms of mean jitter (exponential, per packet, order kept) on both links. Goodput counts from the request, so start-up is included. How hybla took each loss is matched packet by packet against the path's record of why it was lost.".into(),
        published: "Targets set for satquic's Hybla: ≥ 85 % of the ceiling at 1 % loss on 10 Mbit/s at 600 ms and at 0.1–0.5 % everywhere, ≥ 80 % with 10 ms of mean jitter; ≥ 90 % of random losses taken as random and ≥ 90 % of queue drops as congestion; queue-overflow drops ≤ 1 % of sent packets. The Mathis bound MSS/RTT·sqrt(3/(2p)) is what a loss-halving Reno flow can reach.".into(),
        measured,
        checks,
        notes: String::new(),
        figures,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every catalog scenario an experiment names is built in and loads (the catalog's own
    /// test pins each one's text to its file in `scenarios/`).
    #[test]
    fn the_catalog_scenarios_the_experiments_load_are_built_in() {
        let named = ["thesis-geo", "thesis-leo", "sat", "satl", "picoquic-sat"];
        for name in KUHN.iter().map(|(name, _)| *name).chain(named) {
            load_builtin(name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}
