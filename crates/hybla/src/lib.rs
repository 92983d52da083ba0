//! hybla — TCP Hybla congestion control for quinn, for satellite paths.
//!
//! Standard congestion control grows the window per RTT, so a GEO connection (RTT 500–650 ms)
//! ramps up 20–25× slower than a terrestrial one. Hybla (Caini & Firrincieli, 2004) scales the
//! growth by ρ = RTT / RTT0 so that every connection grows like a reference connection with
//! RTT0 = 25 ms: slow start adds 2^ρ − 1 segments per acknowledged segment, congestion avoidance
//! ρ²/W, and the initial and minimum windows are multiplied by ρ.
//!
//! Layer: a pure algorithm core ([`Hybla`]: bytes and `Duration`s, no quinn types) and a thin
//! quinn adapter ([`HyblaConfig`], which is both the settings and quinn's `ControllerFactory`).
//! Beyond \[Caini2004\]'s rules it estimates the initial slow-start threshold from the first flight,
//! re-estimates ρ when the path changes, and by default guards its growth against
//! self-inflicted queue overflow ([`Growth::PipeAware`]; [`Growth::Seed`] gives the plain rules).
//!
//! Enabling it in quinn is one line (`quinn::TransportConfig` is quinn-proto's
//! `TransportConfig`, re-exported; this crate depends on quinn-proto only, without a TLS
//! provider, so it adds none to your build):
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use hybla::HyblaConfig;
//!
//! let mut transport = quinn_proto::TransportConfig::default();
//! transport.congestion_controller_factory(Arc::new(HyblaConfig::default()));
//!
//! // Or with a different reference RTT and \[Caini2004\]'s plain growth rules:
//! let mut config = HyblaConfig::default();
//! config.rtt0(Duration::from_millis(50)).growth(hybla::Growth::Seed);
//! transport.congestion_controller_factory(Arc::new(config));
//! ```
//!
//! `initial_window` interacts with quinn's own setting like this: quinn asks the controller for
//! its window from the first packet on (and sizes its pacer from the controller's initial
//! window); Hybla starts at quinn's usual initial window (min(10 × MTU, max(14 720, 2 × MTU))
//! bytes for the connection's initial MTU, or [`HyblaConfig::initial_window`]) and multiplies
//! it by ρ when the first RTT sample arrives, one RTT later — the first flight is never larger
//! than a standard controller's.
//!
//! The public API is the settings and the factory ([`HyblaConfig`], [`HyblaParams`] and the
//! choices in them), the core ([`Hybla`]) for callers that drive it without quinn, and what a
//! controller reports of its losses ([`loss_report_of`]). The tuning constants and filters
//! behind the loss classifier are internal; their values are documented in the source.

mod core;
mod elastic;
mod loss_by_queue;
mod loss_runs;
mod min_filter;
mod queue;
mod quinn;
mod rate;
mod resume;
mod truth;

pub use crate::core::{
    CompetingGrowth, Growth, Hybla, HyblaParams, InitialSsthresh, LossClassifier, LossContext,
    LossRecord, LossTally, LossVerdict, MAX_WINDOW_BYTES, Phase, RANDOM_LOSS_MAX_RATE,
};
pub use crate::quinn::{
    HyblaConfig, LossReport, ResumeState, loss_report_of, resume_state_of, rfc9002_initial_window,
};
pub use crate::resume::{
    PATH_CHANGE_RTT_FACTOR, ResumeParams, ResumePhase, ResumeReport, ResumeTransition,
    ResumeTrigger, SavedPath,
};
pub use crate::truth::LossTruth;

/// The README's example, compiled and run with the doctests so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests;
