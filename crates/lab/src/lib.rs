//! lab — plays scenarios: [`plan`] turns a scenario and a [`scenario::RunSpec`] into a
//! concrete run (controllers built, the satellite transport preset applied, apps attached),
//! and [`runner`] executes runs behind one [`Backend`](runner::Backend): the
//! [`Simulator`](runner::Simulator) (virtual time, all cores) or the
//! [`Emulator`](runner::Emulator) (real time through the relay, [`emu_backend`]).
//!
//! Layer: cli, studies → **lab** → {sim, emu, hybla}; it reads `scenario` and produces
//! `report`'s [`report::CompletedRun`]s.

pub mod controllers;
pub mod emu_backend;
pub mod plan;
pub mod runner;
