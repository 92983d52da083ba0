//! `satquic serve`, `satquic link` and `satquic get --media --bulk` as separate processes: media
//! and bulk on one real connection through the emulated path, the frame delays measured with
//! the clock offset the client estimates (two processes share no clock).
//!
//! Real time: each test takes about 8 s.

mod common;
use common::{SATQUIC, link, serve};
use std::process::Command;

/// Starts `satquic serve` (Cubic) behind `satquic link` (4 Mbit/s, 25 ms each way), runs
/// `satquic get` through the link with `session_flags` for 6 s and returns its JSON report.
fn get_session_through_the_link(test: &str, session_flags: &[&str]) -> serde_json::Value {
    let dir = std::env::temp_dir().join(format!("satquic-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cert = dir.join("cert.pem");
    let (_server, server_address) = serve(&cert, &["--cc", "cubic"]);
    let (_link, link_address) = link(
        &server_address,
        &["--rate", "4Mbit", "--delay", "25ms", "--queue", "300ms"],
    );
    let out = Command::new(SATQUIC)
        .args([
            "get",
            &link_address,
            "--ca",
            cert.to_str().unwrap(),
            "--server-name",
            "localhost",
            "--cc",
            "cubic",
            "--scheduler",
            "balancer",
            "--duration",
            "6s",
            "--json",
        ])
        .args(session_flags)
        .output()
        .expect("binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(dir);
    // Shown if the test fails: the client's warnings (a server summary that did not arrive).
    println!("get's stderr:\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// About 6 s at 30 fps, all but those in flight at the end received, with delays on one clock:
/// at least the 25 ms propagation (less the offset estimate's error, well under a millisecond
/// here), and the balancer keeps the median near it.
fn assert_media_on_time(media: &serde_json::Value) {
    assert_eq!(media["kind"], "media");
    let sent = media["frames_sent"].as_u64().unwrap();
    let received = media["frames_received"].as_u64().unwrap();
    assert!(
        sent >= 150 && received + 10 >= sent,
        "{sent} sent, {received} received"
    );
    let p50 = media["frame_delay_ms"]["p50"].as_f64().unwrap();
    assert!((20.0..150.0).contains(&p50), "p50 {p50} ms");
}

#[test]
fn get_receives_media_and_bulk_through_the_link() {
    let report = get_session_through_the_link(
        "serve-get-down",
        &["--media", "1Mbit", "--bulk", "unlimited"],
    );
    assert_eq!(report["scheduler"], "balancer");
    let (media, bulk) = (&report["apps"][0], &report["apps"][1]);
    assert_eq!(bulk["kind"], "bulk");
    assert_eq!(
        (media["direction"].as_str(), bulk["direction"].as_str()),
        (Some("download"), Some("download"))
    );
    // The server's count of frames sent arrives in its summary.
    assert_media_on_time(media);
    assert!(report["clock_offset_ms"].as_f64().unwrap().abs() < 1000.0);
    // The bulk takes most of what is left of 4 Mbit/s.
    let bulk_bps = bulk["goodput_bps"].as_f64().unwrap();
    assert!(bulk_bps > 1.0e6, "bulk {bulk_bps} bit/s");
}

/// Uploads: the server is the receiver, so the frame delays and the bytes received are its
/// measurements, which reach the client in the server's summary.
#[test]
fn get_uploads_media_and_bulk_through_the_link_and_shows_what_the_server_received() {
    let report = get_session_through_the_link(
        "serve-get-up",
        &[
            "--upload-media",
            "1Mbit",
            "--upload-bulk",
            "unlimited",
            "--bulk",
            "500kbit",
        ],
    );
    let apps = report["apps"].as_array().unwrap();
    let directions: Vec<_> = apps
        .iter()
        .map(|a| {
            (
                a["kind"].as_str().unwrap(),
                a["direction"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        directions,
        [
            ("media", "upload"),
            ("bulk", "download"),
            ("bulk", "upload")
        ]
    );
    assert_media_on_time(&apps[0]);
    // The uploaded bulk takes most of what is left of 4 Mbit/s; the download gets its rate.
    let up_bps = apps[2]["goodput_bps"].as_f64().unwrap();
    assert!(up_bps > 1.0e6, "bulk upload {up_bps} bit/s");
    let down_bps = apps[1]["goodput_bps"].as_f64().unwrap();
    assert!(down_bps > 0.3e6, "bulk download {down_bps} bit/s");
}

/// Perf next to media on one connection: the download completes, verified, with the server's
/// account of the bytes it wrote and the upload it received.
#[test]
fn get_runs_perf_next_to_media_through_the_link() {
    let report = get_session_through_the_link(
        "serve-get-perf",
        &["--media", "1Mbit", "--download", "1MB", "--upload", "200kB"],
    );
    let (media, perf) = (&report["apps"][0], &report["apps"][1]);
    // The media runs next to it; perf is not scheduled (it fills the window and the link's
    // queue as an uncooperative transfer does), so some frames are cancelled while it runs.
    let sent = media["frames_sent"].as_u64().unwrap();
    let received = media["frames_received"].as_u64().unwrap();
    assert!(
        sent >= 150 && received * 10 >= sent * 8,
        "{sent} sent, {received} received"
    );
    assert_eq!(
        (perf["kind"].as_str(), perf["direction"].as_str()),
        (Some("perf"), Some("download"))
    );
    assert_eq!(perf["completed"], true, "{perf}");
    assert_eq!(perf["verified"], true, "{perf}");
    assert_eq!(perf["bytes_received"], 1_000_000);
    assert_eq!(perf["bytes_uploaded"], 200_000);
    assert_eq!(perf["server_written_bytes"], 1_000_000);
    assert_eq!(perf["server_received_bytes"], 200_000);
}
