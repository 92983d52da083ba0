//! The reproduction suite: every experiment of the the scenario catalog, re-run and set side by
//! side with what the seed (or draft) published, each with a stated PASS/FAIL criterion, written
//! to one `REPORT.md` with its figures.
//!
//! Honesty rules: a criterion is stated before the measurement, the published figure is quoted
//! as published, and a disagreement is reported with its likely reason — scenarios are never
//! tuned until they pass.

mod experiments;
mod fairness;

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crate::ideal::IdealError;
use chart::PlotError;
use lab::runner::{self, Job, Progress, RunError};
use report::output::OutputError;
use scenario::ScenarioError;
use scenario::controllers::{ControllerSpec, HyblaSpec};
use scenario::{RunSpec, Scenario};

pub use experiments::EXPERIMENTS;

/// One checked claim.
#[derive(Debug, Clone)]
pub struct Check {
    /// What must hold, stated before measuring.
    pub criterion: String,
    /// What was measured, in the criterion's terms.
    pub measured: String,
    /// Whether it holds.
    pub pass: bool,
}

/// One experiment's part of the report.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// Experiment id (`thesis-geo`, `paper-congestion`, ...).
    pub id: String,
    /// Title.
    pub title: String,
    /// The scenario in words, with parameters we had to choose.
    pub scenario: String,
    /// What the source published.
    pub published: String,
    /// Markdown table(s) of what we measured.
    pub measured: String,
    /// The checks.
    pub checks: Vec<Check>,
    /// Where we disagree and why, or other remarks.
    pub notes: String,
    /// Figures, relative to the report directory.
    pub figures: Vec<PathBuf>,
}

/// Why an experiment could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReproduceError {
    /// A built-in scenario is invalid (a bug).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A run failed or was interrupted.
    #[error(transparent)]
    Run(#[from] RunError),
    /// Writing results failed.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A plot failed.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// The ideal-channel experiment failed.
    #[error(transparent)]
    Ideal(#[from] IdealError),
    /// The report could not be written.
    #[error("{path}: {source}")]
    Io {
        /// File.
        path: PathBuf,
        /// Error.
        source: std::io::Error,
    },
    /// No such experiment.
    #[error("unknown experiment {0:?}; known: {1}")]
    Unknown(String, String),
}

/// What every experiment gets.
pub struct Context<'a> {
    /// Report directory; each experiment writes under `out/<id>/`.
    pub out: &'a Path,
    /// Shortened runs for CI (qualitative checks only).
    pub quick: bool,
    /// Worker threads.
    pub threads: usize,
    /// Seeds 1..=`seeds` for the fairness matrix, whose two-flow cells one seed can decide by
    /// chance, and the loss matrix, whose jitter cells vary by a few points between seeds; the
    /// other experiments run seed 1. At least 1.
    pub seeds: u64,
    /// Parameters every Hybla flow of every experiment runs with, over its own (e.g.
    /// `classifier = "truth"`, to measure what the rules give with a perfect classifier);
    /// the default changes nothing.
    pub hybla: &'a HyblaSpec,
    /// Progress of the runs.
    pub progress: &'a dyn Progress,
    /// Stops everything.
    pub cancel: &'a AtomicBool,
}

/// An experiment: id, whether it runs in `--quick` mode, and the function that runs it.
pub type Experiment = (
    &'static str,
    bool,
    fn(&Context) -> Result<Section, ReproduceError>,
);

/// Runs the experiments named in `ids` (all when empty), in catalog order.
pub fn run(ids: &[String], ctx: &Context) -> Result<Vec<Section>, ReproduceError> {
    let known: Vec<&str> = EXPERIMENTS.iter().map(|(id, _, _)| *id).collect();
    for id in ids {
        if !known.contains(&id.as_str()) {
            return Err(ReproduceError::Unknown(id.clone(), known.join(", ")));
        }
    }
    let mut sections = Vec::new();
    for (id, in_quick, experiment) in EXPERIMENTS {
        let selected = if ids.is_empty() {
            *in_quick || !ctx.quick
        } else {
            ids.iter().any(|i| i == id)
        };
        if selected {
            sections.push(experiment(ctx)?);
        }
    }
    Ok(sections)
}

/// The jobs of `scenario` for `specs`, each Hybla flow with the study's parameters
/// ([`Context::hybla`]) over its own: every experiment's runs are built here.
fn jobs(ctx: &Context, scenario: &Scenario, specs: &[RunSpec]) -> Result<Vec<Job>, RunError> {
    if *ctx.hybla == HyblaSpec::default() {
        return runner::jobs(scenario, specs, None);
    }
    let mut jobs = Vec::with_capacity(specs.len());
    for spec in specs {
        let mut scenario = scenario.clone();
        for flow in &mut scenario.flows {
            // `--cc hybla` would replace a flow's controller with Hybla's defaults: the
            // parameters go onto those.
            let own = match (&spec.cc_override, &flow.controller) {
                (Some(cc), controller) if cc != controller.name() => {
                    ControllerSpec::named(cc, "--cc")?
                }
                (_, controller) => controller.clone(),
            };
            if let ControllerSpec::Hybla(own) = own {
                flow.controller = ControllerSpec::Hybla(own.overlaid(ctx.hybla));
            }
        }
        jobs.extend(runner::jobs(&scenario, std::slice::from_ref(spec), None)?);
    }
    Ok(jobs)
}

/// The PASS/FAIL overview: (experiment, criterion, measured, pass).
pub fn verdicts(sections: &[Section]) -> Vec<(String, String, String, bool)> {
    sections
        .iter()
        .flat_map(|s| {
            s.checks.iter().map(|c| {
                (
                    s.id.clone(),
                    c.criterion.clone(),
                    c.measured.clone(),
                    c.pass,
                )
            })
        })
        .collect()
}

/// REPORT.md text.
pub fn render(sections: &[Section], command: &str, quick: bool) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# satquic reproduction report\n");
    let _ = writeln!(
        md,
        "Produced by `{command}` (satquic {}){}. Every number below comes from that run; \
         figures are next to this file.\n",
        env!("CARGO_PKG_VERSION"),
        if quick {
            " in **quick** mode: shortened runs, qualitative checks only"
        } else {
            ""
        }
    );
    let _ = writeln!(
        md,
        "## Summary\n\n| experiment | criterion | measured | result |\n|---|---|---|---|"
    );
    for (id, criterion, measured, pass) in verdicts(sections) {
        let _ = writeln!(
            md,
            "| [{id}](#{id}) | {criterion} | {measured} | {} |",
            if pass { "PASS" } else { "**FAIL**" }
        );
    }
    for s in sections {
        let _ = writeln!(md, "\n<a id=\"{}\"></a>\n## {} — {}\n", s.id, s.id, s.title);
        let _ = writeln!(md, "**Scenario.** {}\n", s.scenario);
        let _ = writeln!(md, "**Published.** {}\n", s.published);
        let _ = writeln!(md, "**Measured.**\n\n{}\n", s.measured.trim_end());
        let _ = writeln!(md, "**Checks.**\n");
        for c in &s.checks {
            let _ = writeln!(
                md,
                "- {} — {}: {}",
                if c.pass { "PASS" } else { "**FAIL**" },
                c.criterion,
                c.measured
            );
        }
        if !s.notes.trim().is_empty() {
            let _ = writeln!(md, "\n**Notes.** {}", s.notes.trim());
        }
        for f in &s.figures {
            let _ = writeln!(md, "\n![{}]({})", f.display(), f.display());
        }
    }
    md
}

/// Writes REPORT.md into `out`.
pub fn write_report(
    out: &Path,
    sections: &[Section],
    command: &str,
    quick: bool,
) -> Result<PathBuf, ReproduceError> {
    let path = out.join("REPORT.md");
    std::fs::write(&path, render(sections, command, quick)).map_err(|source| {
        ReproduceError::Io {
            path: path.clone(),
            source,
        }
    })?;
    Ok(path)
}

/// "seed 1", or the seeds a multi-seed matrix ran (`Context::seeds`).
fn seeds_text(seeds: u64) -> String {
    match seeds {
        0 | 1 => "seed 1".into(),
        n => format!("seeds 1–{n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_lists_every_check_in_the_summary_and_its_section() {
        let section = Section {
            id: "x".into(),
            title: "An experiment".into(),
            scenario: "a path".into(),
            published: "42".into(),
            measured: "| a |\n|---|\n| 41 |".into(),
            checks: vec![
                Check {
                    criterion: "close to 42".into(),
                    measured: "41".into(),
                    pass: true,
                },
                Check {
                    criterion: "exactly 42".into(),
                    measured: "41".into(),
                    pass: false,
                },
            ],
            notes: "one off".into(),
            figures: vec![PathBuf::from("x/fig.png")],
        };
        let md = render(&[section], "satquic reproduce x", false);
        assert!(md.contains("| [x](#x) | close to 42 | 41 | PASS |"), "{md}");
        assert!(
            md.contains("| [x](#x) | exactly 42 | 41 | **FAIL** |"),
            "{md}"
        );
        assert!(md.contains("## x — An experiment"));
        assert!(md.contains("![x/fig.png](x/fig.png)"));
        assert!(md.contains("Produced by `satquic reproduce x`"));
        assert!(!md.contains("quick"));
    }

    #[test]
    fn unknown_experiments_are_named() {
        let ctx = Context {
            out: Path::new("/nonexistent"),
            quick: true,
            threads: 1,
            seeds: 1,
            hybla: &HyblaSpec::default(),
            progress: &lab::runner::Silent,
            cancel: &AtomicBool::new(false),
        };
        let err = run(&["thesis-moon".into()], &ctx).unwrap_err().to_string();
        assert!(
            err.contains("thesis-moon") && err.contains("thesis-geo"),
            "{err}"
        );
    }
}
