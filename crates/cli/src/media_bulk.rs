//! `satquic media-bulk`: the balancer against issue 24's targets, over several seeds, in one
//! command (`studies::media_bulk`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context as _, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
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
    /// Seeds per case (1 to N).
    #[arg(long, default_value_t = 5)]
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
    if args.threads == Some(0) {
        bail!("--threads: must be at least 1");
    }
    if args.seeds == 0 {
        bail!("--seeds: must be at least 1");
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let cancel = cancel.clone();
        let _ = ctrlc::set_handler(move || {
            if cancel.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    }
    let bar = ProgressBar::with_draw_target(
        None,
        if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{spinner} {pos} runs done  {elapsed}  {msg}")
            .expect("valid template"),
    );
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
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
        progress: &RunCounter(bar.clone()),
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
            println!(
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
    println!(
        "{} cases, {failed} target(s) failed; table: {}",
        results.len(),
        args.out.join("table.md").display()
    );
    if args.strict && failed > 0 {
        bail!("{failed} target(s) failed (--strict)");
    }
    Ok(())
}
