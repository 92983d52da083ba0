//! lab — plays scenarios: [`plan`] turns a scenario and a [`scenario::RunSpec`] into a
//! concrete run (controllers built, the satellite transport preset applied, apps attached),
//! and [`runner`] executes runs on the simulator (virtual time, all cores); [`emu_backend`]
//! plays a scenario in real time through the emulator.
//!
//! Layer: cli, studies → **lab** → {sim, emu, hybla}; it reads `scenario` and produces
//! `report`'s [`report::CompletedRun`]s.

pub mod controllers;
pub mod emu_backend;
pub mod plan;
pub mod runner;
