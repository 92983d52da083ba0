//! The lab: scenario files (TOML) describing a satellite path and its flows, the runner that
//! plays them on a backend, and the metrics and reports that come out.
//!
//! Layer: cli → **lab** → {sim, emu} → {netsim, hybla}. A typical caller:
//! [`scenario::Scenario::from_file`] → [`runner::run_all`] over [`plan::RunSpec`]s →
//! [`output::write_all`] (summary.json, timing.json, timeseries.csv, plots) and
//! [`table::render`]. [`units`] parses `"10Mbit"`, `"250ms"`, `"100MB"`, `"1%"`, `"1bdp"`.

pub mod controllers;
pub mod emu_backend;
pub mod experiments;
pub mod output;
pub mod plan;
pub mod plots;
pub mod reproduce;
pub mod runner;
pub mod scenario;
pub mod summary;
pub mod sweep;
pub mod table;
pub mod timeseries;
pub mod units;
