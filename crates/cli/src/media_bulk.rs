//! `satquic media-bulk`: the balancer against issue 24's targets, over several seeds, in one
//! command (`studies::media_bulk`).

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use studies::media_bulk::{self, Options};

use crate::progress::RunCounter;

/// Flags of `satquic media-bulk`.
#[derive(Debug, Args)]
pub struct MediaBulkArgs {
    /// Cases to run, by id or prefix (default: all), e.g. `geo-3x-up` or `rmcat-5.1/hybla`.
    /// Setups: thesis, geo, geo-3x-up, thesis-adaptive, geo-adaptive, competing, rmcat-5.1,
    /// rmcat-5.2; controllers: cubic, hybla.
    pub cases: Vec<String>,
    /// Output directory (table.md, evaluation.json, each case's worst seed's outputs).
    #[arg(long, default_value = "out/media-bulk-targets")]
    pub out: PathBuf,
    /// Seeds per case: seeds 1 to N (N at most 10000).
    #[arg(long, default_value_t = 5, value_parser = crate::flags::seeds())]
    pub seeds: u64,
    /// Exit with an error if any target fails.
    #[arg(long)]
    pub strict: bool,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Runs the command.
pub fn media_bulk(args: MediaBulkArgs) -> anyhow::Result<()> {
    let threads = crate::progress::threads(args.threads)?;
    if args.cases.iter().any(|c| c.trim().is_empty()) {
        bail!(
            "CASES: an empty case name selects nothing; name a case or a prefix (e.g. geo, \
             rmcat-5.1/hybla), or give none to run all"
        );
    }
    crate::flags::results_dir("--out", &args.out)?;
    let cancel = crate::progress::cancel_on_ctrl_c();
    let counter = RunCounter::on_stderr();
    let bar = counter.0.clone();
    let command = std::iter::once("satquic media-bulk".to_owned())
        .chain(args.cases.iter().cloned())
        .chain(
            (args.seeds != 5)
                .then(|| ["--seeds".to_owned(), args.seeds.to_string()])
                .into_iter()
                .flatten(),
        )
        .chain(["--out".to_owned(), args.out.display().to_string()])
        .collect::<Vec<_>>()
        .join(" ");
    let options = Options {
        out: &args.out,
        cases: &args.cases,
        seeds: args.seeds,
        threads,
        progress: &counter,
        cancel: &cancel,
    };
    let results = media_bulk::run(&options, &command)?;
    bar.finish_and_clear();
    let mut failed = 0;
    for result in &results {
        for target in &result.targets {
            if !target.pass {
                failed += 1;
            }
            outln!(
                "{:<5} {:<22} {} — mean {:.3}, worst {:.3} (seed {})",
                if target.pass { "PASS" } else { "FAIL" },
                result.id,
                target.target.heading(),
                target.mean,
                target.worst,
                target.worst_seed
            );
        }
    }
    outln!(
        "{} cases, {failed} target(s) failed; table: {}",
        results.len(),
        args.out.join("table.md").display()
    );
    if args.strict && failed > 0 {
        bail!("{failed} target(s) failed (--strict)");
    }
    Ok(())
}
