//! The catalog's experiments, each a function from the shared [`Context`] to a report
//! [`Section`].
//!
//! One module per family: `thesis` (the thesis's GEO and LEO runs), `paper` (the TCP Hybla
//! paper's figures and the latecomer poster), `completion` (completion-time objectives:
//! draft-kuhn, the SaT cases, picoquic's deadlines), `loss_matrix`; the shared helpers are
//! here.

use std::path::PathBuf;

use super::{Check, Context, Experiment, ReproduceError};
use lab::runner::{self, Job};
use report::output;
use report::summary::{self, RunSummary};
use scenario::RunSpec;
use scenario::Scenario;

mod completion;
mod loss_matrix;
mod paper;
mod thesis;

use completion::{kuhn, picoquic_sat, sat};
use loss_matrix::loss_matrix;
use paper::{paper_congestion, paper_fairness, paper_ideal, paper_linkloss, poster_latecomer};
use thesis::{thesis_geo, thesis_leo};

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

pub(super) fn mbps(bps: f64) -> String {
    format!("{:.2} Mbit/s", bps / 1e6)
}

pub(super) fn secs(v: Option<f64>) -> String {
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
pub(super) fn run_controllers(
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
    let jobs = super::jobs(ctx, scenario, &specs)?;
    let runs = runner::run_jobs(&jobs, ctx.threads, ctx.progress, ctx.cancel, &|_, _| {})?;
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

/// Runs arbitrary (scenario, controller) pairs in parallel, seed 1; results in input order.
pub(super) fn run_pairs(
    ctx: &Context,
    pairs: &[(Scenario, String)],
) -> Result<Vec<RunSummary>, ReproduceError> {
    Ok(run_pairs_over_seeds(ctx, pairs, 1)?
        .into_iter()
        .flatten()
        .collect())
}

/// Runs arbitrary (scenario, controller) pairs in parallel, each for seeds 1..=`seeds`: one
/// entry per pair, in input order, its runs in seed order.
pub(super) fn run_pairs_over_seeds(
    ctx: &Context,
    pairs: &[(Scenario, String)],
    seeds: u64,
) -> Result<Vec<Vec<RunSummary>>, ReproduceError> {
    let seeds = seeds.max(1);
    let mut jobs: Vec<Job> = Vec::new();
    for (scenario, cc) in pairs {
        let specs: Vec<RunSpec> = (1..=seeds)
            .map(|seed| RunSpec {
                cc_override: Some(cc.clone()),
                seed,
            })
            .collect();
        jobs.extend(super::jobs(ctx, scenario, &specs)?);
    }
    let runs = runner::run_jobs(&jobs, ctx.threads, ctx.progress, ctx.cancel, &|_, _| {})?;
    Ok(runs
        .chunks(seeds as usize)
        .zip(pairs)
        .map(|(runs, (scenario, _))| {
            runs.iter()
                .map(|r| summary::run_summary(scenario, &r.label, &r.outcome))
                .collect()
        })
        .collect())
}

pub(super) fn goodput(summary: &RunSummary, flow: &str) -> f64 {
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

pub(super) fn duration(ctx: &Context, quick: &str) -> Vec<String> {
    if ctx.quick {
        vec![format!("duration={quick}")]
    } else {
        Vec::new()
    }
}

// ---- thesis ---------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    /// Every catalog scenario an experiment names is built in and loads (the catalog's own
    /// test pins each one's text to its file in `scenarios/`).
    #[test]
    fn the_catalog_scenarios_the_experiments_load_are_built_in() {
        let named = ["thesis-geo", "thesis-leo", "sat", "satl", "picoquic-sat"];
        for name in completion::KUHN.iter().map(|(name, _)| *name).chain(named) {
            load_builtin(name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}
