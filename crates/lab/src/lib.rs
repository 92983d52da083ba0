//! lab — plays scenarios: [`plan`] turns a scenario and a [`scenario::RunSpec`] into a
//! concrete run (controllers built, the satellite transport preset applied, apps attached),
//! and [`runner`] executes runs on a [`Backend`](runner::Backend): the simulator (virtual
//! time, all cores) or the real-time emulator ([`emu_backend`]).
//!
//! Layer: cli, studies → **lab** → {sim, emu, hybla}; it reads `scenario` and produces
//! `report`'s [`report::CompletedRun`]s.

pub mod controllers;
pub mod emu_backend;
pub mod plan;
pub mod runner;
