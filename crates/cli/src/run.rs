//! `satquic run`: play a scenario for one or more controllers and seeds.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use lab::runner::{self, RunError};
use report::output;
use scenario::RunSpec;
use scenario::Scenario;

use crate::progress::Bars;
use scenario::builtin;

mod outputs;

/// Flags of `satquic run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario file, or the name of a built-in scenario (see `satquic scenarios`).
    #[arg(default_value = builtin::DEFAULT)]
    pub scenario: String,
    /// Run once per controller, overriding every flow's `cc` (comma-separated: newreno,cubic,bbr;
    /// each once).
    #[arg(long, value_delimiter = ',')]
    pub cc: Vec<String>,
    /// First seed (default: the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of seeds per controller (1 to 10000): seed, seed+1, ... (the last at most
    /// 2^64 - 1).
    #[arg(long, default_value_t = 1, value_parser = crate::flags::seeds())]
    pub seeds: u64,
    /// Results directory (default: out/SCENARIO), created (and checked writable) before the
    /// runs start. It holds one run's outputs: once this run's results are written, the files
    /// an earlier run wrote there that this one did not rewrite (summary.json, timing.json,
    /// timeseries.csv, apps.csv, frames.csv, the goodput, goodput-inorder, cwnd and media
    /// figures, qlog/LABEL-seedN/*.qlog|sqlog) are removed and listed. Other files are never
    /// touched; a run interrupted before any run finished removes nothing.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Override a scenario value, e.g. --set path.forward.rate=20Mbit --set flow.0.cc=cubic.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Write qlog files (one per connection) for every flow, under DIR/qlog/LABEL-seedN/ (both
    /// backends).
    #[arg(long)]
    pub qlog: bool,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
    /// Where to run: the simulator (virtual time) or real UDP sockets through the link
    /// emulator on loopback (real time: a 300 s scenario takes 300 s).
    #[arg(long, value_enum, default_value_t = Backend::Sim)]
    pub backend: Backend,
}

/// Execution backend of `satquic run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// Virtual time (crate sim).
    Sim,
    /// Real time over UDP on loopback (crate emu).
    Emu,
}

/// A scenario's TOML text and where it came from (for error messages).
pub fn scenario_source(name_or_path: &str) -> anyhow::Result<(String, String)> {
    let path = PathBuf::from(name_or_path);
    // A directory named like a built-in (say ./thesis-geo holding earlier results) is not a
    // scenario file: the built-in is meant.
    if path.is_file() || (path.exists() && builtin::get(name_or_path).is_none()) {
        let text = scenario::read_text(&path)?;
        return Ok((text, path.display().to_string()));
    }
    match builtin::get(name_or_path) {
        Some(text) => Ok((text.to_owned(), format!("built-in scenario {name_or_path}"))),
        None => bail!(
            "scenario {name_or_path:?}: no such file, and not a built-in scenario (built-ins: {})",
            builtin::SCENARIOS
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Loads a scenario from a file, or from the built-ins when no such file exists.
pub fn load_scenario(name_or_path: &str, overrides: &[String]) -> anyhow::Result<Scenario> {
    let (text, origin) = scenario_source(name_or_path)?;
    Ok(Scenario::from_toml_str(&text, &origin, overrides)?)
}

/// Runs the command.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let mut scenario = load_scenario(&args.scenario, &args.overrides)?;
    if args.qlog {
        for flow in &mut scenario.flows {
            flow.qlog = true;
        }
    }
    let threads = crate::progress::threads(args.threads)?;
    let first_seed = args.seed.unwrap_or(scenario.seed);
    let seeds = crate::flags::seed_range(first_seed, args.seeds)?;
    let controllers = crate::flags::controllers(&args.cc)?;
    let specs: Vec<RunSpec> = controllers
        .iter()
        .flat_map(|cc| {
            seeds.clone().map(move |seed| RunSpec {
                cc_override: cc.clone(),
                seed,
            })
        })
        .collect();
    // A controller typo is named before the results directory is made.
    for spec in &specs {
        for flow in &scenario.flows {
            lab::plan::flow_controller(flow, spec)?;
        }
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(&scenario.name));
    crate::flags::results_dir("--out", &out)?;
    let earlier = outputs::Earlier::find(&out);
    let wants_qlog = scenario.flows.iter().any(|f| f.qlog);
    let qlog_root = wants_qlog.then(|| out.join(outputs::QLOG_DIR));

    let cancel = crate::progress::cancel_on_ctrl_c();
    let labels: Vec<(String, u64)> = specs
        .iter()
        .map(|s| (scenario::run_label(&scenario, s), s.seed))
        .collect();
    let visible = !args.quiet && std::io::stderr().is_terminal();
    let bars = Bars::new(&labels, scenario.duration, visible);
    let backend: Box<dyn runner::Backend> = match args.backend {
        Backend::Emu => Box::new(runner::Emulator),
        Backend::Sim => Box::new(runner::Simulator { threads }),
    };
    let (runs, interrupted) = match backend.run(&scenario, &specs, qlog_root, &bars, &cancel) {
        Ok(runs) => (runs, false),
        Err(RunError::Interrupted { finished }) => (finished, true),
        Err(e) => return Err(e).context(format!("scenario {}", scenario.name)),
    };
    drop(bars);
    if runs.is_empty() {
        bail!("interrupted before any run finished; nothing written");
    }
    let written = output::write_all(&out, &scenario, first_seed, args.seeds, &runs)
        .with_context(|| format!("writing results to {}", out.display()))?;
    let rewritten_qlogs = match args.backend {
        Backend::Sim => outputs::simulator_qlogs(&out, &scenario, &labels),
        // The emulator's qlog files are named by their start time: never the same twice.
        Backend::Emu => Vec::new(),
    };
    let removed = earlier.remove_stale(&written, &rewritten_qlogs);
    let summary = output::summarize(&scenario, first_seed, args.seeds, &runs);
    let speed: Vec<Option<f64>> = output::timing(&runs)
        .runs
        .iter()
        .map(|t| Some(t.speedup))
        .collect();
    outln!("{}", report::table::render(&summary, &speed));
    warn_unfaithful(&summary);
    warn_not_connected(&summary);
    outln!("wrote {}:", out.display());
    for path in written {
        outln!("  {}", path.display());
    }
    if !removed.is_empty() {
        outln!("removed an earlier run's outputs that this run did not rewrite:");
        for path in removed {
            outln!("  {}", path.display());
        }
    }
    if interrupted {
        bail!(
            "interrupted: {} of {} runs finished and were written",
            runs.len(),
            specs.len()
        );
    }
    Ok(())
}

/// Tells on stderr which flows never connected: no handshake completed before the run ended
/// (a path delay or an outage longer than the run, a flow starting too late). Their rows say
/// `not_connected` and measure nothing.
fn warn_not_connected(summary: &report::summary::Summary) {
    for run in &summary.runs {
        for flow in run
            .flows
            .iter()
            .filter(|f| f.state == report::summary::NOT_CONNECTED)
        {
            errln!(
                "warning: {} seed {}: flow {:?} never connected (no handshake completed in \
                 the run's {:.1} s); its results measure nothing",
                run.cc,
                run.seed,
                flow.name,
                run.end_s
            );
        }
    }
}

/// 99th-percentile lateness of the emulator's deliveries beyond which a real-time run is
/// flagged: the relay's own p99 at saturation on an idle two-core machine is 3–4 ms
/// (reports/emu, `satquic link-bench`), and under one QUIC flow about 0.2 ms.
const UNFAITHFUL_LATENESS_P99_US: u64 = 5_000;

/// Tells on stderr which real-time runs the machine could not play faithfully: deliveries late
/// against the model (every RTT the run measured is inflated) or datagrams lost outside it.
fn warn_unfaithful(summary: &report::summary::Summary) {
    for run in &summary.runs {
        if let Some(late) = run
            .emulator_lateness
            .filter(|l| l.p99_us > UNFAITHFUL_LATENESS_P99_US)
        {
            errln!(
                "warning: {} seed {}: 1 % of the emulator's deliveries were more than {:.1} ms \
                 late against the model (max {:.1} ms); the machine was too busy for this run \
                 to be faithful, and its RTTs are inflated",
                run.cc,
                run.seed,
                late.p99_us as f64 / 1e3,
                late.max_us as f64 / 1e3
            );
        }
        let drops = run.emulator_drops;
        let lost = drops.kernel + drops.overload + drops.send_errors;
        if lost > 0 {
            errln!(
                "warning: {} seed {}: the emulator lost {lost} datagrams outside the model \
                 (kernel socket drops {}, hand-off overload {}, send errors {})",
                run.cc,
                run.seed,
                drops.kernel,
                drops.overload,
                drops.send_errors
            );
        }
    }
}
