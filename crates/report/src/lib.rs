//! report — what a run produced, in the forms people read: `summary.json` (a [`Summary`] that
//! serializes and reads back), `timeseries.csv`, `timing.json`, the terminal table and the
//! figures.
//!
//! Layer: above `sim` (its [`sim::RunOutcome`] is the input) and `scenario`; it draws with
//! `chart` and knows nothing about how runs are executed. A new output format is a module
//! here, called from [`output::write_all`].

pub mod compare;
pub mod evaluation;
pub mod ipflows;
pub mod loss_batches;
pub mod media;
pub mod output;
pub mod periods;
mod run;
pub mod summary;
pub mod table;
pub mod timeseries;

pub use run::CompletedRun;
pub use summary::Summary;
