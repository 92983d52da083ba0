//! Plays a scenario for a list of (controller, seed) runs on all cores.
//!
//! Each run is single-threaded and deterministic, so results do not depend on how many workers
//! there are or which finishes first: outputs are ordered by the run list, not completion.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sim::{Control, SimError};

use crate::plan;
use report::CompletedRun;
use scenario::FieldError;
use scenario::RunSpec;
use scenario::Scenario;

/// Why a batch of runs failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A controller name or parameter is invalid.
    #[error(transparent)]
    Controller(#[from] FieldError),
    /// A run failed.
    #[error("run {label} seed {seed}: {source}")]
    Sim {
        /// Controller label.
        label: String,
        /// Seed.
        seed: u64,
        /// The failure.
        source: SimError,
    },
    /// A real-time run failed.
    #[error("run {label} seed {seed}: {source}")]
    Emu {
        /// Controller label.
        label: String,
        /// Seed.
        seed: u64,
        /// The failure.
        source: crate::emu_backend::EmuError,
    },
    /// The user interrupted; the finished runs are kept.
    #[error("interrupted")]
    Interrupted {
        /// Runs that finished before the interruption, in run-list order.
        finished: Vec<CompletedRun>,
    },
}

/// Progress reports from the workers; implementations must be cheap and thread-safe.
pub trait Progress: Sync {
    /// Run `index` started.
    fn started(&self, index: usize, label: &str, seed: u64);
    /// Run `index` reached virtual time `t`.
    fn advanced(&self, index: usize, t: Duration);
    /// Run `index` finished.
    fn finished(&self, index: usize);
}

/// Progress that reports nothing (tests, library use).
pub struct Silent;

impl Progress for Silent {
    fn started(&self, _: usize, _: &str, _: u64) {}
    fn advanced(&self, _: usize, _: Duration) {}
    fn finished(&self, _: usize) {}
}

/// One simulation to run: a resolved config and how to label it.
pub struct Job {
    /// Controller label.
    pub label: String,
    /// The run spec it came from (controller override, seed).
    pub spec: RunSpec,
    /// The simulation.
    pub config: sim::SimConfig,
}

/// Builds the jobs of `scenario` for `specs`; controllers are resolved here, so a typo fails
/// before anything runs. `qlog_root`, if set, receives one folder per run.
pub fn jobs(
    scenario: &Scenario,
    specs: &[RunSpec],
    qlog_root: Option<&std::path::Path>,
) -> Result<Vec<Job>, RunError> {
    specs
        .iter()
        .map(|spec| {
            let label = scenario::run_label(scenario, spec);
            let qlog_dir = qlog_root.map(|root| root.join(format!("{label}-seed{}", spec.seed)));
            let config = plan::sim_config(scenario, spec, qlog_dir)?;
            Ok(Job {
                label,
                spec: spec.clone(),
                config,
            })
        })
        .collect()
}

/// Runs every spec of `scenario` with up to `threads` workers. Setting `cancel` stops all runs
/// at their next sample tick.
pub fn run_all(
    scenario: &Scenario,
    specs: &[RunSpec],
    qlog_root: Option<PathBuf>,
    threads: usize,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Vec<CompletedRun>, RunError> {
    let jobs = jobs(scenario, specs, qlog_root.as_deref())?;
    run_jobs(&jobs, threads, progress, cancel, &|_, _| {})
}

/// Runs `jobs` on up to `threads` workers. `on_done` sees each finished run as soon as it
/// finishes (in completion order, e.g. to append it to a file); the returned runs are in job
/// order whatever the thread count.
pub fn run_jobs(
    jobs: &[Job],
    threads: usize,
    progress: &dyn Progress,
    cancel: &AtomicBool,
    on_done: &(dyn Fn(usize, &CompletedRun) + Sync),
) -> Result<Vec<CompletedRun>, RunError> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<CompletedRun, RunError>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    let workers = threads.clamp(1, jobs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= jobs.len() || cancel.load(Ordering::Relaxed) {
                        break;
                    }
                    let Job {
                        label,
                        spec,
                        config,
                    } = &jobs[index];
                    if let Some(dir) = &config.qlog_dir
                        && let Err(e) = std::fs::create_dir_all(dir)
                    {
                        let source = SimError::Qlog {
                            path: dir.clone(),
                            source: e,
                        };
                        let error = RunError::Sim {
                            label: label.clone(),
                            seed: config.seed,
                            source,
                        };
                        results.lock().expect("no poisoning")[index] = Some(Err(error));
                        cancel.store(true, Ordering::Relaxed);
                        break;
                    }
                    progress.started(index, label, config.seed);
                    let wall = Instant::now();
                    let outcome = sim::run(config, &mut |t| {
                        progress.advanced(index, t);
                        if cancel.load(Ordering::Relaxed) {
                            Control::Stop
                        } else {
                            Control::Continue
                        }
                    });
                    let wall = wall.elapsed();
                    progress.finished(index);
                    let result = match outcome {
                        Ok(outcome) => {
                            let run = CompletedRun {
                                spec: spec.clone(),
                                label: label.clone(),
                                outcome,
                                wall,
                            };
                            on_done(index, &run);
                            Ok(run)
                        }
                        Err(SimError::Interrupted(_)) => continue,
                        Err(source) => {
                            cancel.store(true, Ordering::Relaxed);
                            Err(RunError::Sim {
                                label: label.clone(),
                                seed: config.seed,
                                source,
                            })
                        }
                    };
                    results.lock().expect("no poisoning")[index] = Some(result);
                }
            });
        }
    });
    let results = results.into_inner().expect("no poisoning");
    let mut finished = Vec::with_capacity(results.len());
    let mut complete = true;
    for result in results {
        match result {
            Some(Ok(run)) => finished.push(run),
            Some(Err(e)) => return Err(e),
            None => complete = false,
        }
    }
    if complete {
        Ok(finished)
    } else {
        Err(RunError::Interrupted { finished })
    }
}

/// Where runs execute. Both produce the same [`CompletedRun`]s, so every output works on
/// either.
pub trait Backend {
    /// Runs every spec of `scenario`, in spec order; an interruption keeps the finished runs
    /// ([`RunError::Interrupted`]). `qlog_root`, if set, receives one folder per run.
    fn run(
        &self,
        scenario: &Scenario,
        specs: &[RunSpec],
        qlog_root: Option<PathBuf>,
        progress: &dyn Progress,
        cancel: &AtomicBool,
    ) -> Result<Vec<CompletedRun>, RunError>;
}

/// The simulator: virtual time, runs in parallel on `threads` workers.
pub struct Simulator {
    /// Worker threads (results do not depend on it).
    pub threads: usize,
}

impl Backend for Simulator {
    fn run(
        &self,
        scenario: &Scenario,
        specs: &[RunSpec],
        qlog_root: Option<PathBuf>,
        progress: &dyn Progress,
        cancel: &AtomicBool,
    ) -> Result<Vec<CompletedRun>, RunError> {
        run_all(scenario, specs, qlog_root, self.threads, progress, cancel)
    }
}

/// The real-time emulator: UDP on loopback through the relay, one run after the other
/// (parallel runs would compete for the CPU and skew the timing). With `qlog_root`, one
/// folder per run as the simulator's (`LABEL-seedN`), one file per connection in it.
pub struct Emulator;

impl Backend for Emulator {
    fn run(
        &self,
        scenario: &Scenario,
        specs: &[RunSpec],
        qlog_root: Option<PathBuf>,
        progress: &dyn Progress,
        cancel: &AtomicBool,
    ) -> Result<Vec<CompletedRun>, RunError> {
        let mut finished = Vec::new();
        for (index, spec) in specs.iter().enumerate() {
            let label = scenario::run_label(scenario, spec);
            progress.started(index, &label, spec.seed);
            let wall = Instant::now();
            let qlog_dir = qlog_root
                .as_ref()
                .map(|root| root.join(format!("{label}-seed{}", spec.seed)));
            let result = crate::emu_backend::run_with_qlog(
                scenario,
                spec,
                qlog_dir.as_deref(),
                cancel,
                &|t| progress.advanced(index, t),
            );
            progress.finished(index);
            match result {
                Ok(outcome) => finished.push(CompletedRun {
                    spec: spec.clone(),
                    label,
                    outcome,
                    wall: wall.elapsed(),
                }),
                Err(crate::emu_backend::EmuError::Interrupted) => {
                    return Err(RunError::Interrupted { finished });
                }
                Err(source) => {
                    return Err(RunError::Emu {
                        label,
                        seed: spec.seed,
                        source,
                    });
                }
            }
        }
        Ok(finished)
    }
}
