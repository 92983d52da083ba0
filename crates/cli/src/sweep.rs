//! `satquic sweep`: a scenario over a grid of parameter values, controllers and seeds.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::bail;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lab::runner::Progress;
use scenario::Scenario;
use studies::sweep::{self, SweepPlan};

use crate::run::scenario_source;

/// Flags of `satquic sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Scenario file or built-in name.
    pub scenario: String,
    /// A swept parameter: KEY=V1,V2,... (scenario keys as for --set); repeat for a grid.
    #[arg(long = "grid", value_name = "KEY=V1,V2,...", required = true)]
    pub grid: Vec<String>,
    /// Controllers (comma-separated), each overriding every flow's cc.
    #[arg(long, value_delimiter = ',')]
    pub cc: Vec<String>,
    /// First seed (default: the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Seeds per point and controller.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub seeds: u64,
    /// Fixed overrides applied to every point.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Results directory (default: out/<scenario>-sweep); rerunning into it resumes.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Metric to plot against the first swept parameter.
    #[arg(long, default_value = "goodput_bps")]
    pub metric: String,
    /// Flow whose metric is plotted (default: the first).
    #[arg(long)]
    pub flow: Option<String>,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Counts finished runs.
struct RunCounter(ProgressBar);

impl Progress for RunCounter {
    fn started(&self, _: usize, _: &str, _: u64) {}
    fn advanced(&self, _: usize, _: Duration) {}
    fn finished(&self, _: usize) {
        self.0.inc(1);
    }
}

/// Runs the command.
pub fn sweep(args: SweepArgs) -> anyhow::Result<()> {
    if args.threads == Some(0) {
        bail!("--threads: must be at least 1");
    }
    if !studies::sweep::METRIC_COLUMNS[4..].contains(&args.metric.as_str()) {
        bail!(
            "--metric {:?}: choose one of {}",
            args.metric,
            studies::sweep::METRIC_COLUMNS[4..].join(", ")
        );
    }
    let axes = sweep::parse_grid(&args.grid)?;
    let (text, origin) = scenario_source(&args.scenario)?;
    let base: Scenario = Scenario::from_toml_str(&text, &origin, &args.overrides)?;
    let load = |extra: &[String]| {
        let all: Vec<String> = args.overrides.iter().chain(extra).cloned().collect();
        Scenario::from_toml_str(&text, &origin, &all)
    };
    let first_seed = args.seed.unwrap_or(base.seed);
    let plan = SweepPlan {
        load: &load,
        axes: axes.clone(),
        controllers: if args.cc.is_empty() {
            vec![None]
        } else {
            args.cc.iter().map(|c| Some(c.trim().to_owned())).collect()
        },
        seeds: (first_seed..first_seed + args.seeds).collect(),
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-sweep", base.name)));
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let cancel = cancel.clone();
        let _ = ctrlc::set_handler(move || {
            if cancel.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    }
    let runs = sweep::points(&axes).len() * plan.controllers.len() * plan.seeds.len();
    let bar = ProgressBar::with_draw_target(
        Some(runs as u64),
        if !args.quiet && std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(
            "sweep [{bar:40.cyan/blue}] {pos}/{len} runs  {elapsed} (eta {eta})",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let outcome = sweep::run(&plan, &out, threads, &RunCounter(bar.clone()), &cancel)?;
    bar.finish_and_clear();
    println!(
        "{} runs ({} already in {}), {} rows in {}",
        outcome.total_runs,
        outcome.skipped_runs,
        out.display(),
        if outcome.complete { "all" } else { "partial" },
        outcome.csv.display()
    );
    if !outcome.complete {
        bail!(
            "interrupted: the finished runs are in {}; rerun the same command to resume",
            outcome.csv.display()
        );
    }
    let plots = sweep::plot(
        &outcome.csv,
        &axes,
        &args.metric,
        args.flow.as_deref(),
        &out.join(&args.metric),
    )?;
    for p in plots {
        println!("  {}", p.display());
    }
    Ok(())
}
