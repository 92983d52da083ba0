//! Parameter sweeps: the cartesian product of scenario overrides × controllers × seeds, run in
//! parallel, written to `sweep.csv` (one row per run and flow, every swept parameter a column)
//! and plotted as a metric against the first swept parameter with error bars over seeds.
//!
//! Rows are appended as runs finish, so an interrupted sweep keeps what it finished; a rerun
//! of the same sweep into the same directory skips those runs. `sweep.json` next to sweep.csv
//! records which sweep wrote it (the shards' sweep id), and a different sweep (another
//! scenario, override, grid, controller list, seed list or build) is refused rather than
//! mixed into it. When the sweep completes the file is rewritten in
//! canonical order (point, controller, seed, flow), so its bytes do not depend on the number of
//! worker threads or on interruptions.
//!
//! A sweep too large for one machine runs as N shards ([`Shard`], `--shard K/N`, K from 1):
//! shard K takes the runs whose position in the canonical order is K − 1 modulo N (round
//! robin, so every shard gets a similar mix of cheap and expensive grid points) and writes
//! `shard-K-of-N.csv` next to a manifest `shard-K-of-N.json` naming the sweep (a digest of
//! every run's resolved scenario, controller and seed) and its full run list. [`merge`](fn@merge) checks
//! that the shards belong to one sweep, that each of 1..=N is there exactly once and finished,
//! and that every run is present, then writes the same canonical sweep.csv as an unsharded run.
//!
//! Inside: `grid` (axes, points, the runs of a plan), `results` (sweep.csv: columns, rows,
//! resume, canonical order), `shard` (slices and their manifests), `run`, `merge`, `plot`.

mod error;
mod grid;
mod merge;
mod plot;
mod results;
mod run;
mod shard;

pub use error::SweepError;
pub use grid::{Axis, SweepPlan, check, parse_grid, points};
pub use merge::{MergeOutcome, merge};
pub use plot::{numeric, plot};
pub use results::{
    METRIC_COLUMNS, NUMERIC_METRICS, RunKey, SweepMetrics, SweepRow, not_connected_rows,
};
pub use run::{SWEEP_ID_FILE, SweepOutcome, run, run_shard};
pub use shard::{AxisRecord, Shard, ShardManifest};
