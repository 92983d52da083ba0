//! qlog in real time: `satquic serve --qlog`, `get --qlog` and `run --backend emu --qlog` write
//! one file per connection, and every record of every file parses as JSON (quinn-proto's
//! JSON-SEQ: 0x1E, one JSON object, `\n`), with packet and recovery metrics events in each.
//!
//! Real time: this test takes about 10 s (two downloads, a 2 s media session, a 3 s run).

mod common;
use common::SATQUIC;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Two downloads sharing a 20 Mbit/s, 40 ms path for 3 s (two connections, one per flow).
const SCENARIO: &str = r#"
name = "qlog-two"
duration = "3s"

[path.forward]
rate = "20Mbit"
delay = "20ms"
queue = "1bdp"

[path.return]
rate = "20Mbit"
delay = "20ms"
queue = "1bdp"

[[flow]]
name = "near"
cc = "cubic"
download = "unlimited"

[[flow]]
name = "far"
cc = "newreno"
download = "2MB"
start = "500ms"
"#;

/// What one qlog file holds: its header and its events (JSON objects), every record parsed.
struct Qlog {
    header: serde_json::Value,
    events: Vec<serde_json::Value>,
}

impl Qlog {
    /// Reads `path` record by record: each record is 0x1E, JSON text, `\n` (RFC 7464), and
    /// every one must parse.
    fn read(path: &Path) -> Qlog {
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(
            bytes.first(),
            Some(&0x1e),
            "{}: starts with RS",
            path.display()
        );
        let mut records = Vec::new();
        for (index, record) in bytes.split(|&b| b == 0x1e).skip(1).enumerate() {
            let text = std::str::from_utf8(record)
                .unwrap_or_else(|e| panic!("{} record {index}: {e}", path.display()));
            assert!(
                text.ends_with('\n'),
                "{} record {index} is cut short: {text:?}",
                path.display()
            );
            let value: serde_json::Value = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("{} record {index}: {e}: {text:?}", path.display()));
            records.push(value);
        }
        let header = records.remove(0);
        assert_eq!(header["qlog_format"], "JSON-SEQ", "{}", path.display());
        Qlog {
            header,
            events: records,
        }
    }

    /// Events per name.
    fn counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for event in &self.events {
            let name = event["name"].as_str().expect("every event is named");
            assert!(event["time"].is_number(), "{event}");
            *counts.entry(name.to_owned()).or_insert(0) += 1;
        }
        counts
    }

    /// Checks the events every connection's file must hold: packets both ways and recovery
    /// metrics with the congestion window, smoothed RTT and bytes in flight.
    fn check(&self, what: &str) {
        let counts = self.counts();
        for name in [
            "transport:packet_sent",
            "transport:packet_received",
            "recovery:metrics_updated",
        ] {
            assert!(
                counts.get(name).copied().unwrap_or(0) > 0,
                "{what}: no {name} in {counts:?}"
            );
        }
        for field in ["congestion_window", "smoothed_rtt", "bytes_in_flight"] {
            assert!(
                self.events.iter().any(
                    |e| e["name"] == "recovery:metrics_updated" && e["data"][field].is_number()
                ),
                "{what}: no metrics_updated with {field}"
            );
        }
    }
}

/// The files in `dir`, sorted by name.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

fn name(path: &Path) -> &str {
    path.file_name().unwrap().to_str().unwrap()
}

/// Runs `satquic args…` to completion; its stdout, or a panic with its stderr.
fn satquic(args: &[&str]) -> String {
    let out = Command::new(SATQUIC)
        .args(args)
        .output()
        .expect("binary runs");
    assert!(
        out.status.success(),
        "satquic {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn serve_get_and_run_backend_emu_write_one_parseable_qlog_per_connection() {
    let dir = std::env::temp_dir().join(format!("satquic-qlog-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cert = dir.join("cert.pem");
    let (server_dir, client_dir) = (dir.join("server"), dir.join("client"));

    // serve + two gets (a perf download and a media/bulk session): two connections.
    let (mut serve, server) = common::serve(
        &cert,
        &["--cc", "cubic", "--qlog", server_dir.to_str().unwrap()],
    );
    let common = [
        server.as_str(),
        "--ca",
        cert.to_str().unwrap(),
        "--server-name",
        "localhost",
        "--qlog",
        client_dir.to_str().unwrap(),
    ];
    satquic(&[&["get"], &common[..], &["--download", "3MB"]].concat());
    satquic(
        &[
            &["get"],
            &common[..],
            &["--media", "1Mbit", "--bulk", "1Mbit", "--duration", "2s"],
        ]
        .concat(),
    );
    // Ctrl-C: the server flushes its files and exits.
    let pid = serve.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let waited = Instant::now();
    let status = loop {
        if let Some(status) = serve.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(10),
            "serve ignores Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "serve after Ctrl-C: {status}");

    let server_files = files(&server_dir);
    let client_files = files(&client_dir);
    assert_eq!(server_files.len(), 2, "{server_files:?}");
    assert_eq!(client_files.len(), 2, "{client_files:?}");
    for (i, path) in server_files.iter().enumerate() {
        assert!(
            name(path).starts_with(&format!("server-{:04}-", i + 1)),
            "{path:?}"
        );
    }
    let peer = server.replace(':', "_");
    // The server's file names end in the client's original destination connection ID, the
    // group_id of the client's first events: each client file pairs with one server file.
    for path in &client_files {
        assert!(name(path).starts_with("client-0001-"), "{path:?}");
        assert!(name(path).ends_with(&format!("-{peer}.sqlog")), "{path:?}");
        let qlog = Qlog::read(path);
        qlog.check(name(path));
        let odcid = qlog.events[0]["group_id"].as_str().unwrap().to_owned();
        let paired: Vec<_> = server_files
            .iter()
            .filter(|s| name(s).ends_with(&format!("-{odcid}.sqlog")))
            .collect();
        assert_eq!(paired.len(), 1, "{odcid} in {server_files:?}");
    }
    for path in &server_files {
        let qlog = Qlog::read(path);
        qlog.check(name(path));
        assert!(
            qlog.header["title"]
                .as_str()
                .unwrap()
                .starts_with("satquic server"),
            "{}",
            qlog.header
        );
    }
    // One file, in numbers (printed with --nocapture).
    let sample = Qlog::read(&server_files[0]);
    eprintln!("{}: {:?}", name(&server_files[0]), sample.counts());

    // run --backend emu --qlog: per flow one server and one client file, in the run's folder.
    let scenario = dir.join("qlog-two.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let out = dir.join("run");
    satquic(&[
        "run",
        scenario.to_str().unwrap(),
        "--backend",
        "emu",
        "--qlog",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let runs = files(&out.join("qlog"));
    assert_eq!(runs.len(), 1, "one folder per run: {runs:?}");
    let run_files = files(&runs[0]);
    let names: Vec<&str> = run_files.iter().map(|p| name(p)).collect();
    assert_eq!(names.len(), 4, "{names:?}");
    for flow in ["near", "far"] {
        for role in ["server", "client"] {
            let prefix = format!("{flow}-{role}-0001-");
            assert_eq!(
                names.iter().filter(|n| n.starts_with(&prefix)).count(),
                1,
                "{prefix} in {names:?}"
            );
        }
    }
    for path in &run_files {
        Qlog::read(path).check(name(path));
    }
    // The real-time run says how late the emulator delivered against the model.
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let lateness = &summary["runs"][0]["emulator_lateness"];
    assert!(
        lateness["deliveries"].as_u64().unwrap() > 100
            && lateness["p50_us"].as_u64().unwrap() <= lateness["p99_us"].as_u64().unwrap()
            && lateness["p99_us"].as_u64().unwrap() <= lateness["max_us"].as_u64().unwrap(),
        "{lateness}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_unwritable_qlog_directory_is_named_with_the_flag() {
    let dir = std::env::temp_dir().join(format!("satquic-qlog-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let bad = file.join("qlog");
    for args in [
        vec!["serve", "--listen", "127.0.0.1:0", "--qlog"],
        vec![
            "get",
            "127.0.0.1:9",
            "--insecure",
            "--download",
            "1MB",
            "--qlog",
        ],
    ] {
        let out = Command::new(SATQUIC)
            .args(&args)
            .arg(&bad)
            .output()
            .expect("binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            stderr.contains("--qlog") && stderr.contains(bad.to_str().unwrap()),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
