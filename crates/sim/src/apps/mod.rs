//! The applications the simulator ships; see [`crate::app`] for how to add one.

pub mod bulk;
pub mod media;
pub mod perf;
