//! scenario — what an experiment is, as data: the scenario file format, its units, the
//! registry of congestion controllers and their parameters, and the built-in catalog.
//!
//! Reading a scenario needs no QUIC stack, runtime or plotting: a tool that only checks or
//! rewrites scenario files depends on this crate alone. Loading happens in
//! [`Scenario::from_toml_str`] (or [`Scenario::from_file`]), and every error names the file
//! and the field. The format is documented for users in `docs/scenario-format.md`.
//!
//! [`units`] parses `"10Mbit"`, `"250ms"`, `"100MB"`, `"1%"`, `"1bdp"`;
//! [`controllers`] validates `cc` and `cc_params`; [`builtin`] holds the scenarios compiled
//! into the binary; [`RunSpec`] names one run of a scenario (controller override and seed).

pub mod apps;
pub mod builtin;
pub mod controllers;
mod file;
mod run;
pub mod units;

pub use file::*;
pub use run::{RunSpec, run_label};
