//! Sweeps: results independent of the worker count; an interrupted sweep resumes; shards
//! merged equal the unsharded sweep byte for byte, and bad merges are refused.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use lab::runner::Silent;
use scenario::{Scenario, ScenarioError};
use studies::sweep::{self, Shard, SweepPlan};

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

/// The same as [`load`] with 0.5 % loss instead of 1 %: the same runs of another sweep.
fn load_other(extra: &[String]) -> Result<Scenario, ScenarioError> {
    let mut overrides = vec!["path.forward.loss=0.5%".to_owned()];
    overrides.extend_from_slice(extra);
    load(&overrides)
}

/// 2 delays × 2 controllers × 1 seed: four runs, so three shards get 2, 1 and 1.
fn small_plan(
    load: &'static dyn Fn(&[String]) -> Result<Scenario, ScenarioError>,
) -> SweepPlan<'static> {
    SweepPlan {
        load,
        axes: sweep::parse_grid(&["path.forward.delay=50ms,250ms".to_owned()]).unwrap(),
        controllers: vec![Some("newreno".into()), Some("hybla".into())],
        seeds: vec![1],
    }
}

fn shard(text: &str) -> Shard {
    text.parse().unwrap()
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
    // The sweep as if interrupted after its 250 ms runs (appended first, out of canonical
    // order): its sweep.json, and only their rows.
    sweep::run(&plan("50ms,250ms"), &partial, 2, &Silent, &never).unwrap();
    let csv = partial.join("sweep.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, line)| *i == 0 || line.starts_with("250ms,"))
        .map(|(_, line)| line)
        .collect();
    assert_eq!(kept.len(), 1 + 4, "{text}");
    std::fs::write(&csv, kept.join("\n") + "\n").unwrap();
    // Another sweep (one delay only) is not mixed into it.
    let other = sweep::run(&plan("250ms"), &partial, 2, &Silent, &never).unwrap_err();
    assert!(other.to_string().contains("holds another sweep"), "{other}");
    // The same sweep resumes: the four finished runs are skipped.
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

#[test]
fn three_shards_merged_equal_the_unsharded_sweep_byte_for_byte() {
    let (whole, shards, merged) = (dir("whole"), dir("shards"), dir("merged"));
    let never = AtomicBool::new(false);
    let plan = small_plan(&load);
    let unsharded = sweep::run(&plan, &whole, 2, &Silent, &never).unwrap();
    assert_eq!(unsharded.total_runs, 4);
    // Shards 1 and 3 into one directory, shard 2 into its own: merge takes either layout.
    let shard_dirs = [shards.join("a"), shards.join("b"), shards.join("a")];
    let mut sizes = Vec::new();
    for (k, d) in (1..=3).zip(&shard_dirs) {
        let outcome =
            sweep::run_shard(&plan, shard(&format!("{k}/3")), d, 1, &Silent, &never).unwrap();
        assert!(outcome.complete);
        assert!(outcome.csv.ends_with(format!("shard-{k}-of-3.csv")));
        sizes.push(outcome.total_runs);
    }
    assert_eq!(sizes, [2, 1, 1], "round robin over the four runs");

    let outcome = sweep::merge(&shard_dirs[..2], &merged).unwrap();
    assert_eq!((outcome.shards, outcome.runs), (3, 4));
    let (a, b) = (
        std::fs::read(&unsharded.csv).unwrap(),
        std::fs::read(&outcome.csv).unwrap(),
    );
    assert!(
        a == b,
        "merged sweep.csv differs from the unsharded one:\n{}\n---\n{}",
        String::from_utf8_lossy(&a),
        String::from_utf8_lossy(&b)
    );
    // The plot is drawn from sweep.csv alone, so it is identical too (SVG and PNG).
    let plot_a = sweep::plot(
        &unsharded.csv,
        &plan.axes,
        "goodput_bps",
        None,
        &whole.join("goodput_bps"),
    )
    .unwrap();
    let plot_b = sweep::plot(
        &outcome.csv,
        &outcome.axes,
        "goodput_bps",
        None,
        &merged.join("goodput_bps"),
    )
    .unwrap();
    for (x, y) in plot_a.iter().zip(&plot_b) {
        assert!(
            std::fs::read(x).unwrap() == std::fs::read(y).unwrap(),
            "{} and {} differ",
            x.display(),
            y.display()
        );
    }

    // Missing: shard 2 of 3 left out.
    let err = sweep::merge(&shard_dirs[..1], &merged)
        .unwrap_err()
        .to_string();
    assert!(err.contains("shard 2/3 missing"), "{err}");
    // Duplicated: a copy of shard 2 in another directory.
    let copy = shards.join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for ext in ["csv", "json"] {
        let name = format!("shard-2-of-3.{ext}");
        std::fs::copy(shard_dirs[1].join(&name), copy.join(&name)).unwrap();
    }
    let err = sweep::merge(
        &[shard_dirs[0].clone(), shard_dirs[1].clone(), copy.clone()],
        &merged,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("shard 2/3 is given twice"), "{err}");
    // The same directory named twice is read once.
    sweep::merge(
        &[
            shard_dirs[0].clone(),
            shard_dirs[1].clone(),
            shard_dirs[1].clone(),
        ],
        &merged,
    )
    .unwrap();
    // Another sweep: the same runs at a different loss rate, its shard 2 of 3.
    let other = shards.join("other");
    sweep::run_shard(
        &small_plan(&load_other),
        shard("2/3"),
        &other,
        1,
        &Silent,
        &never,
    )
    .unwrap();
    let err = sweep::merge(&[shard_dirs[0].clone(), other.clone()], &merged)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("different sweeps") && err.contains("different scenario or --set"),
        "{err}"
    );
    // Resuming a shard into a directory that holds the same shard of another sweep.
    let err = sweep::run_shard(
        &small_plan(&load_other),
        shard("2/3"),
        &shard_dirs[1],
        1,
        &Silent,
        &never,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("written by another sweep"), "{err}");
    // A different split of the same sweep.
    let halves = shards.join("halves");
    let stopped = AtomicBool::new(true);
    let interrupted = sweep::run_shard(&plan, shard("1/2"), &halves, 1, &Silent, &stopped).unwrap();
    assert!(!interrupted.complete);
    let err = sweep::merge(&[shard_dirs[0].clone(), halves.clone()], &merged)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("one of 3 shards") && err.contains("one of 2"),
        "{err}"
    );
    // An unfinished shard (interrupted before any run), next to a finished 2/2.
    std::fs::create_dir_all(halves.join("two")).unwrap();
    sweep::run_shard(&plan, shard("2/2"), &halves.join("two"), 1, &Silent, &never).unwrap();
    let err = sweep::merge(&[halves.clone(), halves.join("two")], &merged)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unfinished shard") && err.contains("shard-1-of-2.json"),
        "{err}"
    );
    // A directory without shards.
    let err = sweep::merge(std::slice::from_ref(&whole), &merged)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no shard-K-of-N.json"), "{err}");
    for d in [whole, shards, merged] {
        let _ = std::fs::remove_dir_all(d);
    }
}
