//! `satquic sweep`: a scenario over a grid of parameter values, controllers and seeds.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lab::runner::Progress;
use scenario::Scenario;
use studies::sweep::{self, SweepPlan};

use crate::run::scenario_source;

/// Flags of `satquic sweep`: either a sweep (`SCENARIO --grid ...`, optionally one
/// `--shard K/N` of it) or `merge` of shards.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    disable_help_subcommand = true
)]
pub struct SweepArgs {
    /// Combine shards: `satquic sweep merge DIR... --out DIR`.
    #[command(subcommand)]
    pub command: Option<SweepCommand>,
    /// Scenario file or built-in name (a file named `merge` needs a path: ./merge).
    #[arg(required = true)]
    pub scenario: Option<String>,
    /// A swept parameter: KEY=V1,V2,... (scenario keys as for --set); repeat for a grid. A
    /// value holding commas must be a whole TOML inline table, array or quoted string, e.g.
    /// path.forward.loss={ model = "bernoulli", p = "1%" },{ model = "bernoulli", p = "2%" }.
    #[arg(long = "grid", value_name = "KEY=V1,V2,...", required = true)]
    pub grid: Vec<String>,
    /// Controllers (comma-separated, each once), each overriding every flow's cc (so not
    /// next to a --grid over flow.cc or flow.N.cc).
    #[arg(long, value_delimiter = ',')]
    pub cc: Vec<String>,
    /// First seed (default: the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Seeds per point and controller.
    #[arg(long, default_value_t = 1, value_parser = crate::flags::seeds())]
    pub seeds: u64,
    /// Fixed overrides applied to every point (not of a key a --grid sweeps).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Results directory (default: out/SCENARIO-sweep). Rerunning the same sweep into it
    /// resumes; a different one (scenario, --set, --grid, --cc, --seed, --seeds, satquic
    /// version) is refused: sweep.json records which sweep wrote sweep.csv.
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
    /// Run only the K-th of N slices (K from 1, as Slurm's --array=1-N): every N-th run of
    /// the sweep's order starting at the K-th. Writes shard-K-of-N.csv and .json into --out
    /// for `satquic sweep merge`; no plot.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<sweep::Shard>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Check the sweep (scenario, every grid point, controllers, metric) and print how many
    /// runs it has, without running them or writing anything.
    #[arg(long)]
    pub check: bool,
}

/// Subcommands of `satquic sweep`.
#[derive(Debug, Subcommand)]
pub enum SweepCommand {
    /// Combine the shards of one sweep (`--shard 1/N` … `N/N`) into the canonical sweep.csv
    /// and its plot, byte-identical to an unsharded run's.
    Merge(MergeArgs),
}

/// Flags of `satquic sweep merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Directories holding shard-K-of-N.json and .csv files (one may hold all shards).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Where to write sweep.csv and the plot.
    #[arg(long, required = true)]
    pub out: PathBuf,
    /// Metric to plot against the first swept parameter.
    #[arg(long, default_value = "goodput_bps")]
    pub metric: String,
    /// Flow whose metric is plotted (default: the first).
    #[arg(long)]
    pub flow: Option<String>,
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

/// `--shard K/N`; clap names the flag itself, so only the problem is returned.
fn parse_shard(arg: &str) -> Result<sweep::Shard, String> {
    arg.parse().map_err(|e| match e {
        sweep::SweepError::Shard { problem, .. } => problem,
        other => other.to_string(),
    })
}

fn check_metric(metric: &str) -> anyhow::Result<()> {
    if !sweep::NUMERIC_METRICS.contains(&metric) {
        bail!(
            "--metric {metric:?}: choose one of {}",
            sweep::NUMERIC_METRICS.join(", ")
        );
    }
    Ok(())
}

/// An override key's parts, trimmed: `flow. 0.cc` → flow, 0, cc.
fn key_parts(key: &str) -> Vec<&str> {
    key.split('.').map(str::trim).collect()
}

fn is_index(part: &str) -> bool {
    !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit())
}

/// Whether the override key `grid`, applied after `set`, writes over everything `set` wrote:
/// the same key, a table that holds it (`path.forward.loss` over `path.forward.loss.p`), or
/// every element of an array where `set` names one (`flow.cc` over `flow.0.cc`).
fn replaces(grid: &[&str], set: &[&str]) -> bool {
    let mut rest = set.iter();
    grid.iter().all(|part| {
        loop {
            match rest.next() {
                Some(s) if s == part => break true,
                // A name applies to every element, the one --set picked among them.
                Some(s) if is_index(s) && !is_index(part) => continue,
                _ => break false,
            }
        }
    })
}

/// Whether `key` sets a flow's controller (`flow.cc`, `flow.N.cc`).
fn is_flow_controller(key: &str) -> bool {
    matches!(
        key_parts(key).as_slice(),
        ["flow", "cc"] | ["flow", _, "cc"]
    )
}

/// Refuses flags the grid would silently override: `--cc` (which replaces every flow's
/// controller) next to a grid over a flow's `cc`, and a `--set` whose key a `--grid` sweeps.
fn check_grid_against_flags(
    axes: &[sweep::Axis],
    overrides: &[String],
    cc: &[String],
) -> anyhow::Result<()> {
    for axis in axes {
        if !cc.is_empty() && is_flow_controller(&axis.key) {
            bail!(
                "--cc {}: it replaces every flow's controller, so the runs of --grid {}={} \
                 would run --cc's controllers whatever their grid value; sweep controllers \
                 with --cc alone, or drop --cc to sweep {}",
                cc.join(","),
                axis.key,
                axis.values.join(","),
                axis.key
            );
        }
        let grid = key_parts(&axis.key);
        for set in overrides {
            let Some((key, _)) = set.split_once('=') else {
                continue;
            };
            if replaces(&grid, &key_parts(key)) {
                bail!(
                    "--set {set}: --grid {} sweeps {}, and its values would replace this \
                     --set in every run; drop one of them",
                    axis.key,
                    if key_parts(key) == grid {
                        "the same key".to_owned()
                    } else {
                        format!("{} (which covers {})", axis.key, key.trim())
                    }
                );
            }
        }
    }
    Ok(())
}

/// `--flow NAME` must name a flow of the scenario at every grid point (a point whose
/// scenario does not load is left to the sweep's own check, which names its error).
fn check_flow(
    flow: &str,
    axes: &[sweep::Axis],
    load: &dyn Fn(&[String]) -> Result<Scenario, scenario::ScenarioError>,
) -> anyhow::Result<()> {
    // The scenario itself first, then each point (a grid may rename flows).
    let points = std::iter::once(Vec::new()).chain(sweep::points(axes));
    for point in points {
        let overrides: Vec<String> = point.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let Ok(scenario) = load(&overrides) else {
            continue;
        };
        if !scenario.flows.iter().any(|f| f.name == flow) {
            let names: Vec<&str> = scenario.flows.iter().map(|f| f.name.as_str()).collect();
            bail!(
                "--flow {flow:?}: the scenario has no such flow{} (flows: {})",
                if point.is_empty() {
                    String::new()
                } else {
                    format!(" at grid point {}", overrides.join(" "))
                },
                names.join(", ")
            );
        }
    }
    Ok(())
}

/// Runs the command.
pub fn sweep(args: SweepArgs) -> anyhow::Result<()> {
    if let Some(SweepCommand::Merge(merge_args)) = args.command {
        return merge(merge_args);
    }
    let threads = crate::progress::threads(args.threads)?;
    check_metric(&args.metric)?;
    let axes = sweep::parse_grid(&args.grid)?;
    let scenario = args
        .scenario
        .as_deref()
        .expect("clap requires SCENARIO without a subcommand");
    let (text, origin) = scenario_source(scenario)?;
    let base: Scenario = Scenario::from_toml_str(&text, &origin, &args.overrides)?;
    let load = |extra: &[String]| {
        let all: Vec<String> = args.overrides.iter().chain(extra).cloned().collect();
        Scenario::from_toml_str(&text, &origin, &all)
    };
    let first_seed = args.seed.unwrap_or(base.seed);
    let controllers = crate::flags::controllers(&args.cc)?;
    check_grid_against_flags(&axes, &args.overrides, &args.cc)?;
    if let Some(flow) = &args.flow {
        check_flow(flow, &axes, &load)?;
    }
    let plan = SweepPlan {
        load: &load,
        axes: axes.clone(),
        controllers,
        seeds: crate::flags::seed_range(first_seed, args.seeds)?.collect(),
    };
    if args.check {
        let runs = sweep::check(&plan)?;
        let in_shard = match args.shard {
            Some(shard) => format!(
                ", {} in shard {}/{}",
                (0..runs).filter(|&i| shard.takes(i)).count(),
                shard.index,
                shard.count
            ),
            None => String::new(),
        };
        outln!("sweep checked: {runs} runs{in_shard}");
        return Ok(());
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-sweep", base.name)));
    crate::flags::results_dir("--out", &out)?;
    let cancel = crate::progress::cancel_on_ctrl_c();
    let all_runs = sweep::points(&axes).len() * plan.controllers.len() * plan.seeds.len();
    let runs = match args.shard {
        Some(shard) => (0..all_runs).filter(|&i| shard.takes(i)).count(),
        None => all_runs,
    };
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
    let counter = RunCounter(bar.clone());
    let outcome = match args.shard {
        Some(shard) => sweep::run_shard(&plan, shard, &out, threads, &counter, &cancel)?,
        None => sweep::run(&plan, &out, threads, &counter, &cancel)?,
    };
    bar.finish_and_clear();
    outln!(
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
    warn_not_connected(&outcome.csv, &axes)?;
    if let Some(shard) = args.shard {
        outln!(
            "shard {shard} done ({runs} of the sweep's {all_runs} runs); when all {} shards are, combine them: satquic sweep merge DIR... --out DIR",
            shard.count
        );
        return Ok(());
    }
    let plots = sweep::plot(
        &outcome.csv,
        &axes,
        &args.metric,
        args.flow.as_deref(),
        &out.join(&args.metric),
    )?;
    for p in plots {
        outln!("  {}", p.display());
    }
    Ok(())
}

/// `satquic sweep merge`.
fn merge(args: MergeArgs) -> anyhow::Result<()> {
    check_metric(&args.metric)?;
    let outcome = sweep::merge(&args.dirs, &args.out)?;
    warn_not_connected(&outcome.csv, &outcome.axes)?;
    outln!(
        "{} shards, {} runs, {} rows in {}",
        outcome.shards,
        outcome.runs,
        outcome.rows,
        outcome.csv.display()
    );
    let plots = sweep::plot(
        &outcome.csv,
        &outcome.axes,
        &args.metric,
        args.flow.as_deref(),
        &args.out.join(&args.metric),
    )?;
    for p in plots {
        outln!("  {}", p.display());
    }
    Ok(())
}

/// Tells on stderr which rows of the results file are of flows that never connected (no
/// handshake completed in the run), as `satquic run` does: their zeros measure nothing, and
/// the plot and any mean over seeds count them.
fn warn_not_connected(csv: &std::path::Path, axes: &[sweep::Axis]) -> anyhow::Result<()> {
    let rows = sweep::not_connected_rows(csv, axes)?;
    for row in &rows {
        let point: Vec<String> = axes
            .iter()
            .zip(&row.values)
            .map(|(axis, value)| format!("{}={value}", axis.key))
            .collect();
        errln!(
            "warning: {} {} seed {}: flow {:?} never connected (no handshake completed in the \
             run); its row in {} measures nothing",
            point.join(" "),
            row.metrics.cc,
            row.metrics.seed,
            row.metrics.flow,
            csv.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_key_replaces_the_set_keys_it_covers_whole() {
        let covers = |grid: &str, set: &str| replaces(&key_parts(grid), &key_parts(set));
        assert!(covers("duration", "duration"));
        assert!(covers("flow. 0.cc", "flow.0.cc"));
        // A table holds its keys; a name applies to every element.
        assert!(covers("path.forward.loss", "path.forward.loss.p"));
        assert!(covers("flow.cc", "flow.0.cc"));
        // Partly: the --set still counts somewhere.
        assert!(!covers("flow.0.cc", "flow.cc"));
        assert!(!covers("flow.1.cc", "flow.0.cc"));
        assert!(!covers("path.forward.loss.p", "path.forward.loss"));
        assert!(!covers("path.forward.rate", "path.return.rate"));
        assert!(is_flow_controller("flow.cc") && is_flow_controller("flow.2.cc"));
        assert!(!is_flow_controller("flow.cc_params.rtt0") && !is_flow_controller("cc"));
    }
}
