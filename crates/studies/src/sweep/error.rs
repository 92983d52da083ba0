//! Why a sweep could not run, and the one way its file errors are built.

use std::path::{Path, PathBuf};

use chart::PlotError;
use lab::runner::RunError;
use scenario::ScenarioError;

/// Why a sweep could not run.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A `--grid` argument is malformed.
    #[error("--grid {arg:?}: {problem}")]
    Grid {
        /// The argument.
        arg: String,
        /// What is wrong.
        problem: String,
    },
    /// A grid point makes the scenario invalid.
    #[error("grid point {point}")]
    Scenario {
        /// The point, as key=value pairs.
        point: String,
        /// The scenario error.
        source: ScenarioError,
    },
    /// Running failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The results file.
    #[error("{path}: {problem}")]
    Results {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A plot failed.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// A `--shard K/N` argument is malformed.
    #[error("--shard {arg:?}: {problem}")]
    Shard {
        /// The argument.
        arg: String,
        /// What is wrong.
        problem: String,
    },
    /// Shards cannot be merged (missing, duplicated, unfinished, or of different sweeps).
    #[error("sweep merge: {0}")]
    Merge(String),
}

pub(crate) fn results_error(path: &Path, problem: impl ToString) -> SweepError {
    SweepError::Results {
        path: path.to_owned(),
        problem: problem.to_string(),
    }
}
