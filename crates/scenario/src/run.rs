//! One run of a scenario: which controller override and which seed.

use crate::Scenario;

/// One run to perform: a scenario played with a controller override and a seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSpec {
    /// Replaces every flow's `cc` (the CLI's `--cc`), if set.
    pub cc_override: Option<String>,
    /// Seed of this run.
    pub seed: u64,
}

/// The label of a run: the override, or the flows' controllers joined with "+".
pub fn run_label(scenario: &Scenario, spec: &RunSpec) -> String {
    match &spec.cc_override {
        Some(cc) => cc.clone(),
        None => {
            let mut names: Vec<&str> = scenario.flows.iter().map(|f| f.controller.name()).collect();
            names.dedup();
            names.join("+")
        }
    }
}
