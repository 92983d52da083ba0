//! What the lab integration tests share: where the shipped scenarios are, the runs to play,
//! playing them on the simulator (silently, never cancelled) and next to it in real time.

// Every test binary compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use lab::runner::{self, RunError, Silent};
use report::CompletedRun;
use report::summary::RunSummary;
use scenario::{RunSpec, Scenario};

/// The repository's root.
pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A scenario file shipped in `scenarios/` (e.g. `thesis-geo.toml`), with `overrides` as
/// `--set` gives them.
pub fn shipped(file: &str, overrides: &[&str]) -> Scenario {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::from_file(&repository().join("scenarios").join(file), &overrides).unwrap()
}

/// The run of `seed` with each flow's own controller.
pub fn spec(seed: u64) -> RunSpec {
    RunSpec {
        cc_override: None,
        seed,
    }
}

/// One run of `seed` per controller, in the order given.
pub fn per_controller(controllers: &[&str], seed: u64) -> Vec<RunSpec> {
    controllers
        .iter()
        .map(|cc| RunSpec {
            cc_override: Some((*cc).to_owned()),
            seed,
        })
        .collect()
}

/// `specs` of `scenario` on the simulator, on up to `threads` workers, without qlog, progress
/// or cancellation.
pub fn run_on(
    scenario: &Scenario,
    specs: &[RunSpec],
    threads: usize,
) -> Result<Vec<CompletedRun>, RunError> {
    runner::run_all(
        scenario,
        specs,
        None,
        threads,
        &Silent,
        &AtomicBool::new(false),
    )
}

/// `specs` of `scenario` on the simulator, on two workers.
pub fn run(scenario: &Scenario, specs: &[RunSpec]) -> Vec<CompletedRun> {
    run_on(scenario, specs, 2).unwrap()
}

/// The run of `seed` of `scenario` on the simulator.
pub fn run_seed(scenario: &Scenario, seed: u64) -> Vec<CompletedRun> {
    run(scenario, &[spec(seed)])
}

/// The summary of the run of `seed` of `scenario` on the simulator.
pub fn summary_seed(scenario: &Scenario, seed: u64) -> RunSummary {
    let runs = run_seed(scenario, seed);
    report::output::summarize(scenario, seed, 1, &runs)
        .runs
        .remove(0)
}

/// Seed 1 of `scenario` on the simulator and in real time (`--backend emu`).
pub fn sim_and_emu(scenario: &Scenario) -> (sim::RunOutcome, sim::RunOutcome) {
    let sim = run_seed(scenario, 1).remove(0).outcome;
    let emu = lab::emu_backend::run(scenario, &spec(1), &AtomicBool::new(false), &|_| {}).unwrap();
    (sim, emu)
}

/// An empty temporary directory path for `test`'s output `name` (removed if it was there,
/// not created: the writer creates it).
pub fn temp(test: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("satquic-{test}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}
