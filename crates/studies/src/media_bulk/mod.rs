//! The media/bulk evaluation (issue 24): the balancer on every path, with Cubic and with our
//! controller, over several seeds, against stated targets — how fast the connection fills a
//! rise of capacity, utilization and late frames where capacity is plentiful, adaptive media
//! in overload, the share next to a competing Cubic download — and RFC 8868's metrics, for
//! the shipped media-bulk scenarios, `media-bulk-geo` with every rise 3×, and the RMCAT cases
//! of RFC 8867 §5.1 and §5.2 (`cases`).
//!
//! Each case's runs are evaluated by [`report::evaluation`] (the one computation of the
//! metrics); [`targets`] holds the thresholds and the mean / worst-seed aggregation; `render`
//! writes `table.md`. Outputs in the chosen directory: `table.md`, `evaluation.json` (every
//! run's evaluation), and for each case its worst seed's usual run outputs (`media.png`
//! among them) in `<setup>-<controller>/`.

mod cases;
mod render;
pub mod targets;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use lab::runner::{self, Progress, RunError};
use report::evaluation::{self, Evaluation};
use report::output::OutputError;
use scenario::{RunSpec, ScenarioError};
use serde::Serialize;

pub use cases::{CONTROLLERS, Case, SETUPS, Setup};
pub use targets::{Aggregate, CaseFacts, Target};

/// Why the evaluation could not run.
#[derive(Debug, thiserror::Error)]
pub enum MediaBulkError {
    /// A case's scenario or overrides are invalid (a bug).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A case names a scenario that is not built in (a bug).
    #[error("{0:?} is not in the built-in catalog")]
    NotBuiltIn(&'static str),
    /// No case starts with this name.
    #[error("unknown case {0:?}; known: {1}")]
    UnknownCase(String, String),
    /// A run failed or was interrupted.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A run carried no media or bulk (a bug in a case).
    #[error("{0}: the run carries no media or bulk to evaluate")]
    NothingToEvaluate(String),
    /// Writing a run's outputs failed.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// Writing the table or the evaluations failed.
    #[error("{path}: {source}")]
    Io {
        /// File.
        path: PathBuf,
        /// Error.
        source: std::io::Error,
    },
}

/// What the evaluation is asked to do.
pub struct Options<'a> {
    /// Output directory.
    pub out: &'a Path,
    /// Case-id prefixes to run (all when empty), e.g. `geo` or `rmcat-5.1/hybla`.
    pub cases: &'a [String],
    /// Seeds 1..=seeds of every case.
    pub seeds: u64,
    /// Worker threads.
    pub threads: usize,
    /// Progress of the runs.
    pub progress: &'a dyn Progress,
    /// Stops everything.
    pub cancel: &'a AtomicBool,
}

/// One case, evaluated over its seeds.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// `<setup>/<controller>`.
    pub id: String,
    /// The built-in scenario.
    pub scenario: &'static str,
    /// Its overrides (the controller's included).
    pub overrides: Vec<String>,
    /// What the case is.
    pub what: &'static str,
    /// The path's base RTT, ms.
    pub base_rtt_ms: f64,
    /// Whether the media adapts.
    pub adaptive: bool,
    /// Seeds, in order.
    pub seeds: Vec<u64>,
    /// Each seed's evaluation, in seed order.
    pub runs: Vec<Evaluation>,
    /// Each seed's Jain index over the flows' goodputs (1 for one flow).
    pub jain_index: Vec<f64>,
    /// Each seed's share of our connection's run in which its controller judged the
    /// bottleneck shared (Hybla's competing mode); empty for a controller that does not say.
    /// Where no competitor runs, every second of it is a false verdict: the flow then grows
    /// at a neighbour's pace after a rise.
    pub competing_share: Vec<f64>,
    /// Each target that applies to the case.
    pub targets: Vec<Aggregate>,
    /// The seed whose outputs (`media.png`) are written: the worst seed of the most failing
    /// targets.
    pub figure_seed: u64,
    /// Its media figure, relative to the output directory.
    pub figure: PathBuf,
}

impl CaseResult {
    /// The facts the targets need.
    pub fn facts(&self) -> CaseFacts {
        CaseFacts {
            base_rtt: std::time::Duration::from_secs_f64(self.base_rtt_ms / 1e3),
            adaptive: self.adaptive,
        }
    }

    /// Whether every target that applies passes.
    pub fn pass(&self) -> bool {
        self.targets.iter().all(|a| a.pass)
    }
}

/// The seed whose figure the case shows: the worst seed of the most failing targets (of the
/// most targets when none fails), the earliest of equals.
fn figure_seed(seeds: &[u64], targets: &[Aggregate]) -> u64 {
    let failing: Vec<&Aggregate> = targets.iter().filter(|a| !a.pass).collect();
    let considered: Vec<&Aggregate> = if failing.is_empty() {
        targets.iter().collect()
    } else {
        failing
    };
    let count = |seed: u64| considered.iter().filter(|a| a.worst_seed == seed).count();
    seeds
        .iter()
        .copied()
        .fold((seeds[0], count(seeds[0])), |best, seed| {
            let n = count(seed);
            if n > best.1 { (seed, n) } else { best }
        })
        .0
}

/// Runs and evaluates one case over its seeds, writing its figure seed's outputs.
fn run_case(case: &Case, options: &Options) -> Result<CaseResult, MediaBulkError> {
    let scenario = case.scenario()?;
    let seeds: Vec<u64> = (1..=options.seeds.max(1)).collect();
    let specs: Vec<RunSpec> = seeds
        .iter()
        .map(|&seed| RunSpec {
            cc_override: None,
            seed,
        })
        .collect();
    let runs = runner::run_all(
        &scenario,
        &specs,
        None,
        options.threads,
        options.progress,
        options.cancel,
    )?;
    let mut evaluations = Vec::with_capacity(runs.len());
    let mut jain_index = Vec::with_capacity(runs.len());
    let mut competing_share = Vec::with_capacity(runs.len());
    for run in &runs {
        let evaluation = evaluation::evaluate(&run.outcome, &scenario.forward)
            .ok_or_else(|| MediaBulkError::NothingToEvaluate(case.id.clone()))?;
        evaluations.push(evaluation);
        let summary = report::summary::run_summary(&scenario, &run.label, &run.outcome);
        jain_index.push(summary.jain_index);
        // Our connection is the scenario's first flow (the competing download comes after it).
        if let Some(share) = summary
            .flows
            .first()
            .and_then(|ours| ours.shared_share(summary.end_s))
        {
            competing_share.push(share);
        }
    }
    let adaptive = scenario
        .flows
        .iter()
        .flat_map(|f| &f.apps)
        .any(|a| matches!(&a.kind, scenario::apps::AppKind::Media(m) if m.adaptive));
    let facts = CaseFacts {
        base_rtt: scenario.path_config().base_rtt(),
        adaptive,
    };
    let seeded: Vec<(u64, &Evaluation)> = seeds.iter().copied().zip(&evaluations).collect();
    let targets: Vec<Aggregate> = Target::ALL
        .iter()
        .filter_map(|&t| targets::aggregate(t, &seeded, &facts))
        .collect();
    let figure_seed = figure_seed(&seeds, &targets);
    let dir = case.id.replace('/', "-");
    let index = seeds
        .iter()
        .position(|&s| s == figure_seed)
        .expect("the figure seed is one of the seeds");
    report::output::write_all(
        &options.out.join(&dir),
        &scenario,
        figure_seed,
        1,
        &runs[index..=index],
    )?;
    Ok(CaseResult {
        id: case.id.clone(),
        scenario: case.setup.scenario,
        overrides: case.overrides(),
        what: case.setup.what,
        base_rtt_ms: facts.base_rtt.as_secs_f64() * 1e3,
        adaptive,
        seeds,
        runs: evaluations,
        jain_index,
        competing_share,
        targets,
        figure_seed,
        figure: PathBuf::from(dir).join("media.png"),
    })
}

/// Runs the selected cases, one after the other (each on all threads), and writes
/// `table.md` and `evaluation.json` into the output directory. `command` is how the table
/// says it was produced.
pub fn run(options: &Options, command: &str) -> Result<Vec<CaseResult>, MediaBulkError> {
    let cases = cases::selected(options.cases)?;
    std::fs::create_dir_all(options.out).map_err(|source| MediaBulkError::Io {
        path: options.out.to_owned(),
        source,
    })?;
    let mut results = Vec::with_capacity(cases.len());
    for case in &cases {
        results.push(run_case(case, options)?);
    }
    let write = |name: &str, text: String| {
        let path = options.out.join(name);
        std::fs::write(&path, text).map_err(|source| MediaBulkError::Io { path, source })
    };
    write("table.md", render::markdown(&results, command))?;
    let json = serde_json::to_string_pretty(&results).expect("evaluations serialize") + "\n";
    write("evaluation.json", json)?;
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aggregate(target: Target, worst_seed: u64, pass: bool) -> Aggregate {
        Aggregate {
            target,
            values: Vec::new(),
            mean: 0.0,
            worst: 0.0,
            worst_seed,
            pass,
        }
    }

    #[test]
    fn the_figure_shows_the_seed_worst_on_most_failing_targets() {
        let targets = [
            aggregate(Target::Ramp, 2, false),
            aggregate(Target::Utilization, 3, true),
            aggregate(Target::LateFrames, 4, false),
            aggregate(Target::AdaptiveLate, 4, false),
        ];
        assert_eq!(figure_seed(&[1, 2, 3, 4, 5], &targets), 4);
        // Passing targets count only when none fails; ties go to the earliest seed.
        let passing = [
            aggregate(Target::Ramp, 5, true),
            aggregate(Target::Utilization, 3, true),
        ];
        assert_eq!(figure_seed(&[1, 2, 3, 4, 5], &passing), 3);
    }
}
