//! studies — experiments made of many runs: parameter sweeps (`sweep.csv` and its plot), the
//! reproduction suite (REPORT.md against published numbers), and the ideal-channel
//! experiment comparing Hybla's and NewReno's rules with the continuous model.
//!
//! Layer: the top of the library, above `lab` (which plays runs) and `report` (which
//! summarizes them). A new study is a module here with a CLI subcommand.

pub mod ideal;
pub mod media_bulk;
pub mod reproduce;
pub mod sweep;
