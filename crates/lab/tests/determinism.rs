//! Same scenario + seed → byte-identical summary.json and timeseries.csv; another seed → not.

mod common;

use std::path::{Path, PathBuf};

fn run_into(dir: &Path, seed: u64, threads: usize) -> (Vec<u8>, Vec<u8>) {
    let scenario = common::shipped("thesis-geo.toml", &["duration=20s"]);
    let specs = common::per_controller(&["newreno", "cubic"], seed);
    let runs = common::run_on(&scenario, &specs, threads).unwrap();
    report::output::write_all(dir, &scenario, seed, 1, &runs).unwrap();
    (
        std::fs::read(dir.join("summary.json")).unwrap(),
        std::fs::read(dir.join("timeseries.csv")).unwrap(),
    )
}

fn temp(name: &str) -> PathBuf {
    common::temp("determinism", name)
}

#[test]
fn same_seed_gives_byte_identical_summary_and_timeseries() {
    let (a_summary, a_csv) = run_into(&temp("a"), 1, 1);
    let (b_summary, b_csv) = run_into(&temp("b"), 1, 2);
    assert!(
        a_summary == b_summary,
        "summary.json differs between identical runs"
    );
    assert!(
        a_csv == b_csv,
        "timeseries.csv differs between identical runs"
    );
    let (c_summary, _) = run_into(&temp("c"), 2, 2);
    assert!(
        a_summary != c_summary,
        "a different seed must change the results"
    );
    let text = String::from_utf8(a_summary).unwrap();
    for key in [
        "\"scenario\"",
        "\"seed\"",
        "\"runs\"",
        "\"jain_index\"",
        "\"link_utilization\"",
        "\"goodput_bps\"",
        "\"time_to_bytes\"",
        "\"completion_s\"",
        "\"lost_packets\"",
    ] {
        assert!(text.contains(key), "summary.json lacks {key}");
    }
    // summary.json reads back into the same Summary, byte for byte.
    let read_back: report::Summary = serde_json::from_str(&text).unwrap();
    assert_eq!(
        serde_json::to_string_pretty(&read_back).unwrap() + "\n",
        text,
        "summary.json does not round-trip through report::Summary"
    );
    // timeseries.csv reads back into rows that write the same file again.
    let rows = report::timeseries::read_csv(a_csv.as_slice()).unwrap();
    assert!(!rows.is_empty());
    let mut rewritten = csv::Writer::from_writer(Vec::new());
    for row in &rows {
        rewritten.serialize(row).unwrap();
    }
    assert!(
        rewritten.into_inner().unwrap() == a_csv,
        "timeseries.csv does not round-trip"
    );
    for dir in ["a", "b", "c"] {
        let _ = std::fs::remove_dir_all(temp(dir));
    }
}
