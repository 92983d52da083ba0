//! What a finished run hands to the writers: its spec, label, outcome and wall-clock time
//! (its own module, so that the writers of each output use it without using each other).

use std::time::Duration;

use sim::RunOutcome;

/// A finished run.
#[derive(Debug)]
pub struct CompletedRun {
    /// What was run.
    pub spec: scenario::RunSpec,
    /// Controller label.
    pub label: String,
    /// What happened.
    pub outcome: RunOutcome,
    /// Wall-clock time the run took (for timing.json only).
    pub wall: Duration,
}
