//! `satquic serve`, `satquic link` and `satquic get --media --bulk` as separate processes: media
//! and bulk on one real connection through the emulated path, the frame delays measured with
//! the clock offset the client estimates (two processes share no clock).
//!
//! Real time: this test takes about 8 s.

mod common;
use common::{SATQUIC, link, serve};
use std::process::Command;

#[test]
fn get_receives_media_and_bulk_through_the_link() {
    let dir = std::env::temp_dir().join(format!("satquic-serve-get-{}", std::process::id()));
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
            "--media",
            "1Mbit",
            "--bulk",
            "unlimited",
            "--scheduler",
            "balancer",
            "--duration",
            "6s",
            "--json",
        ])
        .output()
        .expect("binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["scheduler"], "balancer");
    let (media, bulk) = (&report["apps"][0], &report["apps"][1]);
    assert_eq!(
        (media["kind"].as_str(), bulk["kind"].as_str()),
        (Some("media"), Some("bulk"))
    );
    // About 6 s at 30 fps; the server's count arrives in its summary.
    let sent = media["frames_sent"].as_u64().unwrap();
    let received = media["frames_received"].as_u64().unwrap();
    assert!(
        sent >= 150 && received + 10 >= sent,
        "{sent} sent, {received} received"
    );
    // The delays are on one clock: at least the 25 ms propagation (less the offset estimate's
    // error, well under a millisecond here), and the balancer keeps the median near it.
    let p50 = media["frame_delay_ms"]["p50"].as_f64().unwrap();
    assert!((20.0..150.0).contains(&p50), "p50 {p50} ms");
    assert!(report["clock_offset_ms"].as_f64().unwrap().abs() < 1000.0);
    // The bulk takes most of what is left of 4 Mbit/s.
    let bulk_bps = bulk["goodput_bps"].as_f64().unwrap();
    assert!(bulk_bps > 1.0e6, "bulk {bulk_bps} bit/s");
    let _ = std::fs::remove_dir_all(dir);
}
