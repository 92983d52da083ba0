//! Behaviour pinned across refactors: per-flow goodput, completion time and lost packets for
//! NewReno and Cubic on every shipped scenario, compared exactly against
//! `tests/golden/summaries.json`.
//!
//! A change that moves these numbers is a change of behaviour, not a refactor. When one is
//! intended (e.g. a new transport preset), regenerate with
//! `SATQUIC_BLESS=1 cargo test -p lab --test golden` and say why in the commit.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::repository;
use scenario::Scenario;
use serde_json::{Value, json};

const CONTROLLERS: [&str; 2] = ["newreno", "cubic"];

fn golden_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/summaries.json")
}

/// Every scenario file shipped in `scenarios/`, sorted by path.
fn shipped_scenarios() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["scenarios", "scenarios/reproduce"] {
        for entry in std::fs::read_dir(repository().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            // The media-bulk scenarios (420 s of per-frame streams) are too slow for a debug
            // build's test run; tests/media_bulk.rs pins their behaviour on a short schedule.
            let media_bulk = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("media-bulk"));
            if path.extension().is_some_and(|e| e == "toml") && !media_bulk {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The pinned figures of one scenario: controller → flows → {name, goodput, completion, lost}.
fn measure(file: &Path) -> Value {
    let scenario = Scenario::from_file(file, &[]).unwrap();
    let specs = common::per_controller(&CONTROLLERS, scenario.seed);
    let runs =
        common::run_on(&scenario, &specs, 2).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let summary = report::output::summarize(&scenario, scenario.seed, 1, &runs);
    let summary = serde_json::to_value(&summary).unwrap();
    let mut by_cc = serde_json::Map::new();
    for run in summary["runs"].as_array().unwrap() {
        let flows: Vec<Value> = run["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                json!({
                    "name": f["name"],
                    "goodput_bps": f["goodput_bps"],
                    "bytes_delivered": f["bytes_delivered"],
                    "completion_s": f["completion_s"],
                    "lost_packets": f["lost_packets"],
                })
            })
            .collect();
        by_cc.insert(run["cc"].as_str().unwrap().to_owned(), Value::Array(flows));
    }
    Value::Object(by_cc)
}

/// Equal, with floats compared to 1e-9 relative: debug and release builds may differ in the
/// last bit of a float (an integer field or a completion time in ns never does).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-9 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn shipped_scenarios_match_golden_summaries() {
    let mut measured = BTreeMap::new();
    for file in shipped_scenarios() {
        let key = file
            .strip_prefix(repository())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        measured.insert(key, measure(&file));
    }
    let measured = serde_json::to_value(&measured).unwrap();
    if std::env::var_os("SATQUIC_BLESS").is_some() {
        // Blessing compares nothing: never where the suite is the check.
        assert!(
            std::env::var_os("CI").is_none(),
            "SATQUIC_BLESS is set under CI: blessing would pass without comparing"
        );
        let text = serde_json::to_string_pretty(&measured).unwrap() + "\n";
        std::fs::write(golden_file(), text).unwrap();
        return;
    }
    let golden: Value =
        serde_json::from_str(&std::fs::read_to_string(golden_file()).unwrap()).unwrap();
    let mut differences = Vec::new();
    for (scenario, expected) in golden.as_object().unwrap() {
        match measured.get(scenario) {
            None => differences.push(format!("{scenario}: no longer shipped")),
            Some(got) if !same(got, expected) => {
                differences.push(format!("{scenario}:\n  golden {expected}\n  now    {got}"))
            }
            Some(_) => {}
        }
    }
    for scenario in measured.as_object().unwrap().keys() {
        if golden.get(scenario).is_none() {
            differences.push(format!("{scenario}: new scenario without a golden summary"));
        }
    }
    assert!(
        differences.is_empty(),
        "behaviour changed (bless with SATQUIC_BLESS=1 only if intended):\n{}",
        differences.join("\n")
    );
}
