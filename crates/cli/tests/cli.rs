//! The binary as a user meets it: bad input gets a message naming the file, field or flag.

mod common;

use common::SATQUIC;
use std::path::PathBuf;
use std::process::{Command, Output};

fn satquic(args: &[&str]) -> Output {
    Command::new(SATQUIC)
        .args(args)
        .output()
        .expect("binary runs")
}

fn scenario_file(name: &str, body: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static WRITES: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("satquic-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    // Tests run in parallel and several write the same file: each writes its own copy and
    // renames it into place, so that none reads a half-written one.
    let staged = dir.join(format!("{name}.{}", WRITES.fetch_add(1, Ordering::Relaxed)));
    std::fs::write(&staged, body).unwrap();
    std::fs::rename(&staged, &path).unwrap();
    path
}

const VALID: &str = r#"
name = "t"
duration = "2s"
[path.forward]
rate = "10Mbit"
delay = "10ms"
[path.return]
rate = "10Mbit"
delay = "10ms"
[[flow]]
name = "f"
cc = "newreno"
download = "100KB"
"#;

fn fails_mentioning(args: &[&str], needles: &[&str]) {
    let out = satquic(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{args:?}: stderr lacks {needle:?}:\n{stderr}"
        );
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn invalid_scenarios_name_file_field_and_problem() {
    let cases = [
        (
            "unknown-key.toml",
            VALID.replace(
                "delay = \"10ms\"\n[path.return]",
                "delay = \"10ms\"\nrat = \"1Mbit\"\n[path.return]",
            ),
            "rat",
        ),
        (
            "wrong-unit.toml",
            VALID.replacen("\"10Mbit\"", "\"10MB/s\"", 1),
            "path.forward.rate",
        ),
        (
            "loss.toml",
            VALID.replacen("delay = \"10ms\"", "delay = \"10ms\"\nloss = \"150%\"", 1),
            "path.forward.loss",
        ),
        (
            "zero-rate.toml",
            VALID.replacen("\"10Mbit\"", "\"0Mbit\"", 1),
            "path.forward.rate",
        ),
        (
            "negative-delay.toml",
            VALID.replacen("\"10ms\"", "\"-10ms\"", 1),
            "path.forward.delay",
        ),
        (
            "no-flows.toml",
            VALID.split("[[flow]]").next().unwrap().to_owned(),
            "flow",
        ),
    ];
    for (name, body, field) in cases {
        let path = scenario_file(name, &body);
        let path = path.to_str().unwrap();
        fails_mentioning(&["run", path, "--quiet"], &[name, field]);
    }
}

#[test]
fn bad_flags_are_named() {
    let path = scenario_file("valid.toml", VALID);
    let path = path.to_str().unwrap();
    fails_mentioning(
        &["run", path, "--cc", "vegas", "--quiet"],
        &["--cc", "vegas"],
    );
    fails_mentioning(
        &["run", path, "--set", "path.forward.rate=fast", "--quiet"],
        &["path.forward.rate"],
    );
    fails_mentioning(
        &["run", path, "--set", "nonsense", "--quiet"],
        &["key=value"],
    );
    fails_mentioning(
        &["run", "no-such-scenario", "--quiet"],
        &["no-such-scenario", "built-in"],
    );
    fails_mentioning(&["run", path, "--seeds", "0"], &["--seeds"]);
    fails_mentioning(
        &["reproduce", "fairness-matrix", "--seeds", "0"],
        &["--seeds", "0"],
    );
}

#[test]
fn bad_media_and_bulk_flags_of_get_are_named() {
    // Checked before connecting: nothing listens on port 9.
    let get = |flags: &[&str], needles: &[&str]| {
        let mut args = vec!["get", "127.0.0.1:9", "--insecure"];
        args.extend_from_slice(flags);
        fails_mentioning(&args, needles);
    };
    get(
        &[
            "--media",
            "1Mbit",
            "--scheduler",
            "fastest",
            "--duration",
            "2s",
        ],
        &["--scheduler", "fastest", "balancer"],
    );
    get(
        &["--media", "0Mbit", "--duration", "2s"],
        &["--media", "greater than zero"],
    );
    get(
        &["--bulk", "0kbit", "--duration", "2s"],
        &["--bulk", "greater than zero"],
    );
    get(
        &["--media", "1Mbit", "--fps", "0", "--duration", "2s"],
        &["--fps"],
    );
    get(
        &[
            "--media",
            "1Mbit",
            "--deadline",
            "-10ms",
            "--duration",
            "2s",
        ],
        &["--deadline", "negative"],
    );
    get(&["--media", "1Mbit"], &["--duration"]);
    get(&["--media", "1Mbit", "--duration", "0s"], &["--duration"]);
    get(&["--fps", "20"], &["--fps", "--media/--bulk"]);
    get(
        &["--upload-media", "fast", "--duration", "2s"],
        &["--upload-media", "fast"],
    );
    get(
        &["--upload-bulk", "0bit", "--duration", "2s"],
        &["--upload-bulk", "greater than zero"],
    );
    get(&["--upload-media", "1Mbit"], &["--duration"]);
    get(
        &[
            "--upload-bulk",
            "1Mbit",
            "--upload",
            "1MB",
            "--duration",
            "2s",
        ],
        &["--upload-bulk", "--download/--upload (perf)", "cannot tell"],
    );
    get(
        &["--bulk", "1Mbit", "--download", "0B", "--duration", "2s"],
        &["--download 0B", "--upload"],
    );
}

#[test]
fn a_valid_scenario_runs_and_writes_its_outputs() {
    let path = scenario_file("ok.toml", VALID);
    let out_dir = std::env::temp_dir().join(format!("satquic-cli-out-{}", std::process::id()));
    let out = satquic(&[
        "run",
        path.to_str().unwrap(),
        "--cc",
        "newreno,cubic",
        "--out",
        out_dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert_succeeded(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("newreno") && stdout.contains("cubic") && stdout.contains("completed"),
        "{stdout}"
    );
    for file in [
        "summary.json",
        "timing.json",
        "timeseries.csv",
        "cwnd.png",
        "cwnd.svg",
        "goodput.png",
        "goodput.svg",
    ] {
        assert!(out_dir.join(file).exists(), "{file} missing");
    }
    let _ = std::fs::remove_dir_all(out_dir);
}

#[test]
fn a_folder_named_like_the_default_scenario_does_not_hide_it() {
    // Running the README's main job twice from a directory that holds a `thesis-geo` folder
    // (say, earlier results) must still find the built-in.
    let dir = std::env::temp_dir().join(format!("satquic-cli-cwd-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("thesis-geo")).unwrap();
    let out = Command::new(SATQUIC)
        .current_dir(&dir)
        .args([
            "run",
            "--cc",
            "newreno",
            "--set",
            "duration=2s",
            "--out",
            "results",
            "--quiet",
        ])
        .output()
        .expect("binary runs");
    assert_succeeded(&out);
    assert!(dir.join("results").join("summary.json").exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sweep_check_counts_the_runs_and_names_a_bad_grid_key_without_running() {
    let out_dir = std::env::temp_dir().join(format!("satquic-cli-check-{}", std::process::id()));
    let out_arg = out_dir.to_str().unwrap();
    let grid = |key: &str| {
        satquic(&[
            "sweep",
            "thesis-geo",
            "--grid",
            key,
            "--cc",
            "newreno,hybla",
            "--seeds",
            "3",
            "--shard",
            "2/4",
            "--out",
            out_arg,
            "--check",
        ])
    };
    let good = grid("path.forward.delay=50ms,250ms");
    assert_succeeded(&good);
    // 2 points x 2 controllers x 3 seeds = 12 runs; shard 2 of 4 takes positions 1, 5, 9.
    assert_eq!(
        String::from_utf8_lossy(&good.stdout).trim(),
        "sweep checked: 12 runs, 3 in shard 2/4"
    );
    assert!(!out_dir.exists(), "--check wrote {}", out_dir.display());
    fails_mentioning(
        &[
            "sweep",
            "thesis-geo",
            "--grid",
            "path.forward.delai=50ms",
            "--check",
        ],
        &["path.forward.delai", "unknown field"],
    );
    fails_mentioning(
        &[
            "sweep",
            "thesis-geo",
            "--grid",
            "path.forward.delay=50ms",
            "--cc",
            "renoo",
            "--check",
        ],
        &["--cc", "renoo"],
    );
}

#[test]
fn sweep_shards_merge_to_the_unsharded_bytes_and_bad_shards_are_named() {
    let root = std::env::temp_dir().join(format!("satquic-cli-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = |name: &str| root.join(name).to_str().unwrap().to_owned();
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            "thesis-geo",
            "--grid",
            "path.forward.delay=50ms,250ms",
            "--cc",
            "newreno,hybla",
            "--set",
            "duration=5s",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        let out = satquic(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    sweep(&["--out", &dir("whole")]);
    for k in 1..=3 {
        sweep(&[
            "--shard",
            &format!("{k}/3"),
            "--out",
            &dir(&format!("s{k}")),
        ]);
    }
    let merged = satquic(&[
        "sweep",
        "merge",
        &dir("s1"),
        &dir("s2"),
        &dir("s3"),
        "--out",
        &dir("merged"),
    ]);
    assert_succeeded(&merged);
    for file in ["sweep.csv", "goodput_bps.svg", "goodput_bps.png"] {
        let (a, b) = (
            root.join("whole").join(file),
            root.join("merged").join(file),
        );
        assert!(
            std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
            "{file}: merged differs from unsharded"
        );
    }

    for (bad, needle) in [
        ("0/3", "between 1 and N"),
        ("4/3", "between 1 and N"),
        ("3", "K/N"),
    ] {
        fails_mentioning(
            &["sweep", "thesis-geo", "--grid", "seed=1", "--shard", bad],
            &["--shard", bad, needle],
        );
    }
    fails_mentioning(
        &[
            "sweep",
            "merge",
            &dir("s1"),
            &dir("s3"),
            "--out",
            &dir("m2"),
        ],
        &["shard 2/3 missing"],
    );
    fails_mentioning(
        &["sweep", "merge", &dir("whole"), "--out", &dir("m2")],
        &["no shard-K-of-N.json"],
    );
    fails_mentioning(
        &[
            "sweep",
            "merge",
            &dir("s1"),
            &dir("s2"),
            &dir("s3"),
            "--out",
            &dir("m3"),
            "--flow",
            "nosuch",
        ],
        &["--flow \"nosuch\"", "no such flow", "flows: bulk"],
    );
    // The merged folder is the unsharded sweep's: rerunning that sweep into it resumes.
    sweep(&["--out", &dir("merged")]);
    fails_mentioning(&["sweep", "merge", "--out", &dir("m2")], &["<DIR>"]);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn bad_resume_flags_are_named() {
    let dir = std::env::temp_dir().join(format!("satquic-cli-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("store.txt");
    let file = file.to_str().unwrap();
    let dir = dir.to_str().unwrap();
    // Checked before connecting or listening (nothing listens on port 9).
    fails_mentioning(
        &[
            "get",
            "127.0.0.1:9",
            "--insecure",
            "--cc",
            "newreno",
            "--resume-store",
            file,
        ],
        &["--resume-store", "newreno", "hybla"],
    );
    fails_mentioning(
        &[
            "get",
            "127.0.0.1:9",
            "--insecure",
            "--media",
            "1Mbit",
            "--duration",
            "2s",
            "--resume-store",
            file,
        ],
        &["--resume-store", "--media/--bulk"],
    );
    // A directory is no store file: it can be neither read nor replaced.
    fails_mentioning(
        &["get", "127.0.0.1:9", "--insecure", "--resume-store", dir],
        &["--resume-store", dir],
    );
    fails_mentioning(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--cc",
            "cubic",
            "--resume-store",
            file,
        ],
        &["--resume-store", "cubic"],
    );
    fails_mentioning(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--resume-store",
            file,
            "--no-resume",
        ],
        &["--resume-store", "--no-resume"],
    );
    fails_mentioning(
        &["serve", "--listen", "127.0.0.1:0", "--resume-store", dir],
        &["--resume-store", dir],
    );
}

#[test]
fn a_corrupt_resume_store_is_ignored_with_a_warning_and_replaced() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = std::env::temp_dir().join(format!("satquic-cli-corrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("store.txt");
    std::fs::write(&file, "not a store\n1 2 3\n").unwrap();
    let mut server = Command::new(SATQUIC)
        .args(["serve", "--listen", "127.0.0.1:0", "--cert-out"])
        .arg(dir.join("cert.pem"))
        .arg("--resume-store")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let mut before_start = Vec::new();
    for line in BufReader::new(server.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.starts_with("perf server on ") {
            before_start.push(line);
            break;
        }
        before_start.push(line);
    }
    let _ = server.kill();
    let _ = server.wait();
    let text = before_start.join("\n");
    assert!(
        text.contains("warning: Careful Resume store")
            && text.contains("not a store")
            && text.contains("the whole file is ignored"),
        "{text}"
    );
    assert!(
        text.contains("0 saved path(s) loaded, 1 line(s) ignored"),
        "{text}"
    );
    assert!(
        text.contains("Careful Resume from saved paths in"),
        "{text}"
    );
    // Replaced by a valid (empty) store at start.
    let now = std::fs::read_to_string(&file).unwrap();
    assert!(now.starts_with("satquic-resume-store 1\n"), "{now}");
}

#[test]
fn bad_ack_thinning_flags_are_named() {
    fails_mentioning(
        &["serve", "--ack-thinning", "65"],
        &["--ack-thinning", "65"],
    );
    fails_mentioning(
        &["get", "127.0.0.1:9", "--insecure", "--ack-thinning", "many"],
        &["--ack-thinning"],
    );
    // The preset sizes the thinning from the path: both at once is a contradiction.
    fails_mentioning(
        &[
            "serve",
            "--ack-thinning",
            "9",
            "--path",
            "250Mbit/3Mbit/650ms",
        ],
        &["--ack-thinning", "--path"],
    );
}

/// A fresh directory for one test's files.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("satquic-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// As [`fails_mentioning`], for a command that would run until stopped if the flag were
/// accepted (a server, a relay, a transfer that cannot move): it must fail within 60 s.
fn fails_promptly_mentioning(args: &[&str], needles: &[&str]) {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut child = Command::new(SATQUIC)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} was accepted: still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{args:?} should fail");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{args:?}: stderr lacks {needle:?}:\n{stderr}"
        );
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Sorted names of the entries of `dir`.
fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn seed_counts_past_the_shared_bound_are_refused_by_every_command_that_takes_them() {
    // Each once panicked (capacity overflow) or died allocating its seed list.
    for args in [
        &[
            "media-bulk",
            "--seeds",
            "18446744073709551615",
            "thesis/cubic",
        ][..],
        &["media-bulk", "--seeds", "99999999999"],
        &[
            "reproduce",
            "--quick",
            "--seeds",
            "99999999999",
            "loss-matrix",
        ],
        &["run", "--seeds", "10001"],
        &[
            "sweep",
            "thesis-geo",
            "--grid",
            "seed=1",
            "--seeds",
            "10001",
        ],
    ] {
        fails_mentioning(args, &["--seeds", "1..=10000"]);
    }
}

#[test]
fn a_seed_range_past_the_largest_seed_is_refused_rather_than_wrapping_to_seed_zero() {
    let path = scenario_file("valid.toml", VALID);
    let path = path.to_str().unwrap();
    let out = temp_dir("seed-range").join("results");
    let out = out.to_str().unwrap();
    let max = u64::MAX.to_string();
    fails_mentioning(
        &[
            "run", path, "--seed", &max, "--seeds", "2", "--out", out, "--quiet",
        ],
        &["--seed", "--seeds 2", "largest seed"],
    );
    fails_mentioning(
        &[
            "sweep",
            path,
            "--grid",
            "duration=2s",
            "--seed",
            &max,
            "--seeds",
            "2",
            "--check",
        ],
        &["--seed", "--seeds 2", "largest seed"],
    );
    // The largest seed itself is fine.
    let last = satquic(&["run", path, "--seed", &max, "--out", out, "--quiet"]);
    assert_succeeded(&last);
}

#[test]
fn a_controller_named_twice_is_refused() {
    // Its runs would share a label: one table row and one qlog folder for two runs.
    let path = scenario_file("valid.toml", VALID);
    let path = path.to_str().unwrap();
    let out = temp_dir("twice");
    fails_mentioning(
        &[
            "run",
            path,
            "--cc",
            "newreno, cubic,newreno",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ],
        &["--cc", "\"newreno\"", "twice"],
    );
    let _ = std::fs::remove_dir_all(out);
    fails_mentioning(
        &[
            "sweep",
            path,
            "--grid",
            "duration=2s",
            "--cc",
            "cubic,cubic",
            "--check",
        ],
        &["--cc", "\"cubic\"", "twice"],
    );
}

#[test]
fn an_unwritable_results_directory_fails_every_command_before_it_runs() {
    let dir = temp_dir("unwritable");
    // A directory cannot be made under a file, even by root.
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = file.join("results");
    let out = out.to_str().unwrap();
    let path = scenario_file("valid.toml", VALID);
    let path = path.to_str().unwrap();
    for args in [
        &["run", path, "--out", out, "--quiet"][..],
        &[
            "sweep",
            path,
            "--grid",
            "duration=2s,3s",
            "--out",
            out,
            "--quiet",
        ],
        &["media-bulk", "thesis/cubic", "--seeds", "1", "--out", out],
        &["reproduce", "--quick", "paper-ideal", "--out", out],
        &["ideal", "--rtt", "25ms", "--horizon", "1s", "--out", out],
    ] {
        fails_mentioning(args, &["--out", out, "cannot create the results directory"]);
    }
    assert!(!file.join("results").exists());
    let _ = std::fs::remove_dir_all(dir);
}

/// A small media and bulk scenario: its runs write apps.csv, frames.csv and media figures.
const MEDIA: &str = r#"
name = "m"
duration = "2s"
[path.forward]
rate = "4Mbit"
delay = "25ms"
[path.return]
rate = "4Mbit"
delay = "25ms"
[[flow]]
name = "call"
cc = "cubic"
[[flow.app]]
kind = "media"
name = "media"
bitrate = "1Mbit"
[[flow.app]]
kind = "bulk"
name = "bulk"
rate = "1Mbit"
start = "1s"
"#;

#[test]
fn a_run_removes_the_outputs_an_earlier_run_left_in_its_folder_and_nothing_else() {
    let dir = temp_dir("stale");
    let out = dir.join("results");
    let out_arg = out.to_str().unwrap();
    let media = scenario_file("media.toml", MEDIA);
    let first = satquic(&[
        "run",
        media.to_str().unwrap(),
        "--cc",
        "cubic,hybla",
        "--qlog",
        "--out",
        out_arg,
        "--quiet",
    ]);
    assert_succeeded(&first);
    for file in ["apps.csv", "frames.csv", "media-cubic-seed1.png", "qlog"] {
        assert!(
            out.join(file).exists(),
            "{file} missing after the media run"
        );
    }
    std::fs::write(out.join("notes.md"), "mine").unwrap();
    std::fs::write(out.join("qlog").join("README"), "mine too").unwrap();

    let plain = scenario_file("valid.toml", VALID);
    let second = satquic(&["run", plain.to_str().unwrap(), "--out", out_arg, "--quiet"]);
    assert_succeeded(&second);
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(
        stdout.contains("removed an earlier run's outputs") && stdout.contains("frames.csv"),
        "{stdout}"
    );
    // Exactly the second run's outputs, and the files satquic does not own.
    assert_eq!(
        listing(&out),
        [
            "cwnd.png",
            "cwnd.svg",
            "goodput-inorder.png",
            "goodput-inorder.svg",
            "goodput.png",
            "goodput.svg",
            "notes.md",
            "qlog",
            "summary.json",
            "timeseries.csv",
            "timing.json",
        ]
    );
    assert_eq!(listing(&out.join("qlog")), ["README"]);
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"scenario\": \"t\""), "{summary}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_sweep_resumes_only_itself_and_refuses_to_mix_in_another_configuration() {
    let dir = temp_dir("sweep-id");
    let out = dir.join("sweep");
    let out_arg = out.to_str().unwrap();
    let path = scenario_file("valid.toml", VALID);
    let path = path.to_str().unwrap();
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "sweep", path, "--grid", "seed=1,2", "--out", out_arg, "--quiet",
        ];
        args.extend_from_slice(extra);
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    let args = sweep(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let first = satquic(&args);
    assert_succeeded(&first);
    let rows = std::fs::read(out.join("sweep.csv")).unwrap();
    // The same sweep again: every run is already there.
    let again = satquic(&args);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("2 runs (2 already in"),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
    for other in [
        &["--set", "duration=3s"][..],
        &["--cc", "cubic"],
        &["--seeds", "2"],
    ] {
        let args = sweep(other);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails_mentioning(
            &args,
            &["sweep.csv", "holds another sweep", "to start over, remove"],
        );
    }
    assert_eq!(std::fs::read(out.join("sweep.csv")).unwrap(), rows);
    // A sweep.csv that does not say which sweep wrote it is not resumed either.
    std::fs::remove_file(out.join("sweep.json")).unwrap();
    fails_mentioning(&args, &["sweep.csv", "sweep.json", "to start over, remove"]);
    let _ = std::fs::remove_dir_all(dir);
}

/// `satquic sweep VALID --check` with `extra` flags.
fn sweep_check(extra: &[&str]) -> Output {
    let path = scenario_file("valid.toml", VALID);
    let mut args = vec!["sweep", path.to_str().unwrap(), "--check"];
    args.extend_from_slice(extra);
    satquic(&args)
}

/// As [`fails_mentioning`] for `satquic sweep VALID --check` with `extra` flags.
fn sweep_check_fails_mentioning(extra: &[&str], needles: &[&str]) {
    let path = scenario_file("valid.toml", VALID);
    let mut args = vec!["sweep", path.to_str().unwrap(), "--check"];
    args.extend_from_slice(extra);
    fails_mentioning(&args, needles);
}

fn succeeds(out: &Output) -> String {
    assert_succeeded(out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn sweep_refuses_cc_next_to_a_grid_over_a_flows_controller() {
    // --cc replaces every flow's controller: rows labelled cubic and hybla would run newreno.
    sweep_check_fails_mentioning(
        &["--grid", "flow.cc=cubic,hybla", "--cc", "newreno"],
        &["--cc newreno", "--grid flow.cc=cubic,hybla"],
    );
    sweep_check_fails_mentioning(
        &["--grid", "flow.0.cc=cubic,hybla", "--cc", "newreno"],
        &["--cc newreno", "flow.0.cc"],
    );
    // --cc next to a grid over something else stays.
    succeeds(&sweep_check(&["--grid", "duration=2s,3s", "--cc", "cubic"]));
}

#[test]
fn sweep_refuses_a_set_that_a_grid_key_writes_over() {
    sweep_check_fails_mentioning(
        &["--grid", "duration=2s,3s", "--set", "duration=5s"],
        &["--set duration=5s", "--grid duration", "same key"],
    );
    sweep_check_fails_mentioning(
        &["--grid", "flow.cc=cubic,hybla", "--set", "flow.0.cc=bbr"],
        &["--set flow.0.cc=bbr", "--grid flow.cc"],
    );
    // A --set the grid writes over only in part still counts: all flows, then flow 0 swept.
    succeeds(&sweep_check(&[
        "--grid",
        "flow.0.cc=cubic,hybla",
        "--set",
        "flow.cc=bbr",
    ]));
}

#[test]
fn sweep_refuses_an_unknown_flow_when_planning() {
    // It passed --check and plotted "no data" after every run.
    sweep_check_fails_mentioning(
        &["--grid", "duration=2s,3s", "--flow", "nosuch"],
        &["--flow \"nosuch\"", "no such flow", "flows: f"],
    );
    succeeds(&sweep_check(&["--grid", "duration=2s,3s", "--flow", "f"]));
}

#[test]
fn grid_values_may_hold_commas_inside_a_toml_table_and_the_message_says_so_otherwise() {
    let tables = succeeds(&sweep_check(&[
        "--grid",
        r#"path.forward.loss={ model = "bernoulli", p = "1%" },{ model = "bernoulli", p = "2%" }"#,
    ]));
    assert_eq!(tables.trim(), "sweep checked: 2 runs");
    sweep_check_fails_mentioning(
        &["--grid", r#"path.forward.loss={ model = "bernoulli""#],
        &["--grid", "commas only inside a whole TOML inline table"],
    );
}

#[test]
fn an_empty_media_bulk_case_name_is_refused_rather_than_running_every_case() {
    let out = temp_dir("empty-case");
    let out = out.to_str().unwrap();
    fails_mentioning(
        &["media-bulk", "", "--out", out],
        &["CASES", "empty case name"],
    );
    fails_mentioning(
        &["media-bulk", "geo/cubic", " ", "--out", out],
        &["CASES", "empty case name"],
    );
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn windows_and_socket_buffers_too_small_for_one_packet_are_refused() {
    // get would wait forever, serve and link would start.
    fails_promptly_mentioning(
        &["get", "127.0.0.1:9", "--insecure", "--window", "0B"],
        &["--window", "0B", "one full-size packet"],
    );
    fails_promptly_mentioning(
        &["serve", "--listen", "127.0.0.1:0", "--window", "1KB"],
        &["--window", "1KB", "one full-size packet"],
    );
    for size in ["0B", "1KB"] {
        fails_promptly_mentioning(
            &[
                "link",
                "--listen",
                "127.0.0.1:0",
                "--to",
                "127.0.0.1:9",
                "--socket-buffer",
                size,
            ],
            &["--socket-buffer", size, "one full-size packet"],
        );
    }
}

#[test]
fn a_closed_stdout_ends_the_command_quietly_with_its_results_written() {
    use std::process::Stdio;
    let dir = temp_dir("pipe");
    let out = dir.join("results");
    let path = scenario_file("valid.toml", VALID);
    // As `satquic run … | head -0`: the reader is gone before the first line.
    let mut child = Command::new(SATQUIC)
        .args(["run", path.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    drop(child.stdout.take());
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.join("summary.json").exists());
    let _ = std::fs::remove_dir_all(dir);
}

/// A scenario file whose forward path takes an hour, longer than the 2 s run, so its flow
/// never connects; its buffers are stated in bytes (one BDP over an hour's RTT is more than a
/// scenario may state).
fn never_connecting_scenario(name: &str) -> PathBuf {
    scenario_file(
        name,
        &VALID
            .replacen("delay = \"10ms\"", "delay = \"1h\"\nqueue = \"100kB\"", 1)
            .replacen("delay = \"10ms\"", "delay = \"10ms\"\nqueue = \"100kB\"", 1),
    )
}

#[test]
fn a_flow_that_never_connected_is_named_in_a_warning() {
    let late = never_connecting_scenario("never.toml");
    let dir = temp_dir("never");
    let out = satquic(&[
        "run",
        late.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: newreno seed 1: flow \"f\" never connected"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_sweep_names_the_rows_of_flows_that_never_connected() {
    let late = never_connecting_scenario("never-sweep.toml");
    let dir = temp_dir("never-sweep");
    let out = satquic(&[
        "sweep",
        late.to_str().unwrap(),
        "--grid",
        "path.forward.queue=100kB,200kB",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_succeeded(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for queue in ["100kB", "200kB"] {
        assert!(
            stderr.contains(&format!(
                "warning: path.forward.queue={queue} newreno seed 1: flow \"f\" never connected"
            )),
            "{stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Asserts that a command succeeded, showing its stderr if not.
#[track_caller]
fn assert_succeeded(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
