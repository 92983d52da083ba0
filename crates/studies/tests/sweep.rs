//! Sweeps: results independent of the worker count; an interrupted sweep resumes.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use lab::runner::Silent;
use scenario::{Scenario, ScenarioError};
use studies::sweep::{self, SweepPlan};

fn load(extra: &[String]) -> Result<Scenario, ScenarioError> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/thesis-geo.toml");
    let mut overrides = vec!["duration=8s".to_owned(), "path.forward.loss=1%".to_owned()];
    overrides.extend_from_slice(extra);
    Scenario::from_file(&file, &overrides)
}

fn plan(axis_values: &str) -> SweepPlan<'static> {
    SweepPlan {
        load: &load,
        axes: sweep::parse_grid(&[format!("path.forward.delay={axis_values}")]).unwrap(),
        controllers: vec![Some("newreno".into()), Some("hybla".into())],
        seeds: vec![1, 2],
    }
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("satquic-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn one_and_two_workers_give_identical_sweep_csv() {
    let (a, b) = (dir("t1"), dir("t2"));
    let never = AtomicBool::new(false);
    let one = sweep::run(&plan("50ms,250ms"), &a, 1, &Silent, &never).unwrap();
    let two = sweep::run(&plan("50ms,250ms"), &b, 2, &Silent, &never).unwrap();
    assert_eq!(
        (one.total_runs, one.skipped_runs, one.complete),
        (8, 0, true)
    );
    let (csv_a, csv_b) = (
        std::fs::read(&one.csv).unwrap(),
        std::fs::read(&two.csv).unwrap(),
    );
    assert!(csv_a == csv_b, "sweep.csv differs between 1 and 2 workers");
    assert_eq!(String::from_utf8(csv_a).unwrap().lines().count(), 1 + 8);
    for d in [a, b] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_rerun_skips_finished_runs_and_ends_in_canonical_order() {
    let (partial, fresh) = (dir("partial"), dir("fresh"));
    let never = AtomicBool::new(false);
    // First only one delay value (as if interrupted), then the full grid into the same
    // directory: the four finished runs are skipped.
    sweep::run(&plan("250ms"), &partial, 2, &Silent, &never).unwrap();
    let resumed = sweep::run(&plan("50ms,250ms"), &partial, 2, &Silent, &never).unwrap();
    assert_eq!((resumed.total_runs, resumed.skipped_runs), (8, 4));
    let direct = sweep::run(&plan("50ms,250ms"), &fresh, 2, &Silent, &never).unwrap();
    assert_eq!(
        std::fs::read(&resumed.csv).unwrap(),
        std::fs::read(&direct.csv).unwrap(),
        "a resumed sweep ends byte-identical to an uninterrupted one"
    );
    for d in [partial, fresh] {
        let _ = std::fs::remove_dir_all(d);
    }
}
