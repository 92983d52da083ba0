//! scenario — what an experiment is, as data: the scenario file format, its units, the
//! registry of congestion controllers and their parameters, and the built-in catalog.
//!
//! Reading a scenario needs no QUIC stack, runtime or plotting: a tool that only checks or
//! rewrites scenario files depends on this crate alone. Loading happens in
//! [`Scenario::from_toml_str`] (or [`Scenario::from_file`]), and every error names the file
//! and the field. The format is documented for users in `docs/scenario-format.md`.
//!
//! [`units`] parses `"10Mbit"`, `"250ms"`, `"100MB"`, `"1%"`, `"1bdp"`;
//! [`controllers`] validates `cc` and `cc_params`; [`apps`] reads the `[[flow.app]]` tables;
//! [`builtin`] holds the scenarios compiled into the binary; [`RunSpec`] names one run of a
//! scenario (controller override and seed).
//!
//! Inside, one module per step of loading (`load` runs them in order): `overrides` writes
//! `--set` assignments into the TOML tree, `raw` is the file as serde reads it (with `values`,
//! the fields that take more than one form), `raw::validate` checks it as a whole into the
//! `model` ([`Scenario`]); every check reports a [`FieldError`], which `error` turns into a
//! [`ScenarioError`] naming the file.

pub mod apps;
pub mod builtin;
pub mod controllers;
mod error;
mod load;
mod model;
mod overrides;
mod raw;
mod run;
pub mod units;
mod values;

pub use apps::Download;
pub use error::{FieldError, ScenarioError};
pub use load::read_text;
pub use model::{
    DEFAULT_SAMPLE_INTERVAL, DEFAULT_SEED, DEFAULT_TIME_TO_BYTES, FlowSpec, MAX_FLOWS,
    MAX_MTU_BYTES, MAX_NAME_BYTES, MAX_QUEUE_BYTES, MAX_TIME_SERIES_ROWS, MIN_MTU_BYTES,
    MIN_SAMPLE_INTERVAL, Scenario, TransportSpec,
};
pub use run::{RunSpec, run_label};
