//! `satquic` — QUIC over satellite paths: run scenarios in the lab and measure the simulator.
//!
//! A thin shell: parse flags (clap), call into `lab`, print, and turn errors into messages
//! that name the flag or file at fault.

// Output goes through `console` (outln!, out!, errln!), which survives a closed pipe.
#![warn(clippy::print_stdout, clippy::print_stderr)]

#[macro_use]
mod console;
mod bench;
mod compare;
mod flags;
mod ideal;
mod link;
mod logging;
mod media_bulk;
mod netns;
mod perf;
mod progress;
mod reproduce;
mod run;
mod sweep;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// QUIC over satellite paths: real quinn-proto connections over modelled GEO/LEO links.
#[derive(Debug, Parser)]
#[command(name = "satquic", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scenario in virtual time and write summary.json, timeseries.csv and plots (an
    /// earlier run's outputs in the same --out that this run does not rewrite are removed).
    Run(run::RunArgs),
    /// Run a scenario over a grid of parameter values, controllers and seeds (sweep.csv + plot).
    Sweep(sweep::SweepArgs),
    /// Re-run the catalog's experiments and write REPORT.md next to the published numbers.
    Reproduce(reproduce::ReproduceArgs),
    /// Media and bulk on one connection: the balancer against issue 24's targets (ramp after
    /// a rise, utilization, late frames, adaptive media, a competing download) and RFC 8868's
    /// metrics, over several seeds, with Cubic and with Hybla (table.md).
    MediaBulk(media_bulk::MediaBulkArgs),
    /// QUIC perf server (draft-banks-quic-performance) on real UDP.
    Serve(perf::ServeArgs),
    /// QUIC perf client: download (and upload), verify, report goodput and times.
    Get(perf::GetArgs),
    /// Relay UDP between clients and a server through an emulated satellite path, in real time.
    Link(link::LinkArgs),
    /// IP-level mode: two network namespaces joined through the emulated path (needs root),
    /// for kernel TCP (iperf3) or any other stack; per-flow goodput at the end.
    Netns(netns::NetnsArgs),
    /// Measure the relay's accuracy (lateness vs the model, achieved vs configured rate).
    LinkBench(link::LinkBenchArgs),
    /// Measure simulation speed (simulated seconds per wall second, datagrams per second)
    /// against a crypto floor measured in the same run.
    Bench(bench::BenchArgs),
    /// Caini & Firrincieli 2004, Fig. 3–4: Hybla and NewReno's rules on an ideal 1 Gbit/s channel against the
    /// continuous model (eq. 8), for several RTTs.
    Ideal(ideal::IdealArgs),
    /// Compare two results directories (e.g. simulator vs emulator): differences and an
    /// overlaid goodput plot.
    Compare(compare::CompareArgs),
    /// List the built-in scenarios.
    Scenarios,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init();
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Bench(args) => bench::bench(args),
        Command::Link(args) => link::link(args),
        Command::Netns(args) => netns::netns(args),
        Command::Serve(args) => perf::serve(args),
        Command::Get(args) => perf::get(args),
        Command::LinkBench(args) => link::link_bench(args),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Reproduce(args) => reproduce::reproduce(args),
        Command::MediaBulk(args) => media_bulk::media_bulk(args),
        Command::Ideal(args) => ideal::ideal(args),
        Command::Compare(args) => compare::compare(args),
        Command::Scenarios => {
            for (name, _) in scenario::builtin::SCENARIOS {
                outln!("{name}");
            }
            Ok(())
        }
    };
    // A stdout closed by its reader (`| head`) is no failure; any other is, once the work is
    // done and written.
    let result = match (result, console::finish()) {
        (Ok(()), Some(error)) => Err(anyhow::Error::new(error).context("writing to stdout")),
        (result, _) => result,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            errln!("error: {}", message(&error));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, each cause once: the library errors put their source's
/// text in their own message (so that they read well alone) and also expose it as their
/// `source`, which `{:#}` would print again.
fn message(error: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// A library error's shape: its source in its message and as its source.
    #[derive(Debug)]
    struct Wrapping {
        source: std::io::Error,
    }

    impl std::fmt::Display for Wrapping {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "flow f, app file: {}", self.source)
        }
    }

    impl std::error::Error for Wrapping {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn each_cause_is_printed_once() {
        let inner = std::io::Error::other("data mismatch at offset 0");
        let error = anyhow::Error::new(Wrapping { source: inner }).context("run cubic seed 1");
        assert_eq!(
            super::message(&error),
            "run cubic seed 1: flow f, app file: data mismatch at offset 0"
        );
        // A cause that adds something is kept.
        let error = anyhow::Error::new(std::io::Error::other("refused")).context("--ca cert.pem");
        assert_eq!(super::message(&error), "--ca cert.pem: refused");
    }

    #[test]
    fn cli_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
