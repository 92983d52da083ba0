//! `satquic reproduce`: the catalog's experiments next to their published numbers.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use scenario::controllers::{ControllerSpec, HyblaSpec};
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
    /// A Hybla parameter (KEY=VALUE, as in a scenario's `cc_params`) for every Hybla flow of
    /// the experiments, over its own; repeatable. E.g. `classifier=truth`: each loss taken as
    /// the simulator's record says it was, the bound of any loss classifier.
    #[arg(long = "hybla-param", value_name = "KEY=VALUE")]
    pub hybla_params: Vec<String>,
}

/// Runs the command.
pub fn reproduce(args: ReproduceArgs) -> anyhow::Result<()> {
    let threads = crate::progress::threads(args.threads)?;
    crate::flags::results_dir("--out", &args.out)?;
    let cancel = crate::progress::cancel_on_ctrl_c();
    let counter = RunCounter::on_stderr();
    let bar = counter.0.clone();
    let hybla = hybla_params(&args.hybla_params)?;
    let ctx = Context {
        out: &args.out,
        quick: args.quick,
        threads,
        seeds: args.seeds,
        hybla: &hybla,
        progress: &counter,
        cancel: &cancel,
    };
    let sections = reproduce::run(&args.experiments, &ctx)?;
    bar.finish_and_clear();
    let command = std::iter::once("satquic reproduce".to_owned())
        .chain(args.experiments.iter().cloned())
        .chain(args.quick.then(|| "--quick".to_owned()))
        .chain((args.seeds > 1).then(|| format!("--seeds {}", args.seeds)))
        .chain(
            args.hybla_params
                .iter()
                .map(|p| format!("--hybla-param {p}")),
        )
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

/// `--hybla-param KEY=VALUE` flags as Hybla parameters, read as `cc_params` in a scenario
/// file; errors name `--hybla-param.KEY`.
fn hybla_params(params: &[String]) -> anyhow::Result<HyblaSpec> {
    match ControllerSpec::from_flags("hybla", params) {
        Ok(ControllerSpec::Hybla(spec)) => Ok(spec),
        Ok(other) => unreachable!("hybla parsed as {other:?}"),
        Err(e) => Err(scenario::FieldError {
            field: e.field.replace("--cc-param", "--hybla-param"),
            problem: e.problem,
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scenario::controllers::HyblaClassifier;

    #[test]
    fn hybla_params_are_read_as_cc_params_and_errors_name_the_flag() {
        let spec = hybla_params(&["classifier=truth".to_owned()]).unwrap();
        assert_eq!(spec.classifier, Some(HyblaClassifier::Truth));
        assert_eq!(hybla_params(&[]).unwrap(), HyblaSpec::default());
        let err = hybla_params(&["classifier=spike".to_owned()]).unwrap_err();
        assert!(
            err.to_string().starts_with("--hybla-param.classifier: "),
            "{err}"
        );
        let err = hybla_params(&["classifier".to_owned()]).unwrap_err();
        assert!(err.to_string().contains("--hybla-param"), "{err}");
    }
}
