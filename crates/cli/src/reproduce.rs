//! `satquic reproduce`: the catalog's experiments next to their published numbers.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use studies::reproduce::{self, Context};

use crate::progress::RunCounter;

/// Flags of `satquic reproduce`.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// Experiments to run (default: all): thesis-geo, thesis-leo, paper-ideal,
    /// paper-congestion, paper-linkloss, paper-fairness, poster-latecomer, kuhn, sat,
    /// picoquic-sat, loss-matrix, fairness-matrix.
    pub experiments: Vec<String>,
    /// Report directory (REPORT.md and figures).
    #[arg(long, default_value = "out/reproduce")]
    pub out: PathBuf,
    /// Shortened runs that check the qualitative claims in seconds (for CI).
    #[arg(long)]
    pub quick: bool,
    /// Exit with an error if any check fails.
    #[arg(long)]
    pub strict: bool,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seeds per cell of the fairness and loss matrices (1..=N): fairness shares as geometric
    /// means over the seeds with their range, ceiling fractions as means, loss verdicts
    /// pooled. The other experiments run seed 1. At most 10000.
    #[arg(long, default_value_t = 1, value_parser = crate::flags::seeds())]
    pub seeds: u64,
}

/// Runs the command.
pub fn reproduce(args: ReproduceArgs) -> anyhow::Result<()> {
    let threads = crate::progress::threads(args.threads)?;
    crate::flags::results_dir("--out", &args.out)?;
    let cancel = crate::progress::cancel_on_ctrl_c();
    let counter = RunCounter::on_stderr();
    let bar = counter.0.clone();
    let ctx = Context {
        out: &args.out,
        quick: args.quick,
        threads,
        seeds: args.seeds,
        progress: &counter,
        cancel: &cancel,
    };
    let sections = reproduce::run(&args.experiments, &ctx)?;
    bar.finish_and_clear();
    let command = std::iter::once("satquic reproduce".to_owned())
        .chain(args.experiments.iter().cloned())
        .chain(args.quick.then(|| "--quick".to_owned()))
        .chain((args.seeds > 1).then(|| format!("--seeds {}", args.seeds)))
        .chain(["--out".to_owned(), args.out.display().to_string()])
        .collect::<Vec<_>>()
        .join(" ");
    let report = reproduce::write_report(&args.out, &sections, &command, args.quick)?;
    let verdicts = reproduce::verdicts(&sections);
    for (id, criterion, measured, pass) in &verdicts {
        outln!(
            "{:<5} {id:<17} {criterion} — {measured}",
            if *pass { "PASS" } else { "FAIL" }
        );
    }
    let failed = verdicts.iter().filter(|v| !v.3).count();
    outln!(
        "{} checks, {} failed; report: {}",
        verdicts.len(),
        failed,
        report.display()
    );
    if args.strict && failed > 0 {
        bail!("{failed} check(s) failed (--strict)");
    }
    Ok(())
}
