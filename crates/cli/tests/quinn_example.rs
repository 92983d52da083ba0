//! The quinn-satellite example (`geo_transfer`, a plain quinn client) against `satquic serve`
//! through `satquic link` on an emulated GEO path, once with the preset and once with quinn's
//! defaults: the library's promise, measured the way its users would measure it.
//!
//! Real time: about 20 s (a 10 MB upload at 20 Mbit/s and RTT 600 ms, twice).

mod common;
use common::{SATQUIC, link, serve};
use std::path::PathBuf;
use std::process::Command;

/// The example's binary, next to the satquic binary's profile directory (`cargo test
/// --workspace` builds every example); built on demand when only this package's tests run.
fn example_binary() -> PathBuf {
    let profile_dir = PathBuf::from(SATQUIC)
        .parent()
        .expect("the binary is in a profile directory")
        .to_owned();
    let example = profile_dir.join("examples").join("geo_transfer");
    if !example.exists() {
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let mut build = Command::new(env!("CARGO"));
        build.args([
            "build",
            "-p",
            "quinn-satellite",
            "--example",
            "geo_transfer",
        ]);
        if release {
            build.arg("--release");
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "building the example failed");
    }
    example
}

/// Runs the example and returns its JSON report.
fn transfer(example: &PathBuf, link: &str, cert: &str, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(example)
        .args([
            link,
            "--ca",
            cert,
            "--upload",
            "10MB",
            "--forward",
            "20Mbit",
            "--return",
            "20Mbit",
            "--rtt",
            "600ms",
            "--loss",
            "0.0001",
        ])
        .args(extra)
        .output()
        .expect("the example runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON line")
}

#[test]
fn the_preset_finishes_a_geo_upload_sooner_than_quinns_defaults() {
    let example = example_binary();
    let dir = std::env::temp_dir().join(format!("satquic-quinn-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cert = dir.join("cert.pem");
    let (_server, server_address) = serve(&cert, &[]);
    // GEO: 20 Mbit/s each way, 300 ms each way, one BDP of buffer, 0.01 % random loss.
    let (_link, link_address) = link(
        &server_address,
        &["--rate", "20Mbit", "--delay", "300ms", "--loss", "0.01%"],
    );
    let cert = cert.to_str().unwrap();
    let preset = transfer(&example, &link_address, cert, &[]);
    let defaults = transfer(&example, &link_address, cert, &["--quinn-defaults"]);
    eprintln!("{preset}\n{defaults}");
    assert_eq!(preset["transport"], "quinn-satellite");
    assert_eq!(defaults["transport"], "quinn-defaults");
    let preset_s = preset["completion_s"].as_f64().unwrap();
    let defaults_s = defaults["completion_s"].as_f64().unwrap();
    // 10 MB at 20 Mbit/s is 4 s of serialization after a 0.6 s handshake: nobody beats 4.6 s.
    assert!(preset_s > 4.6, "preset {preset_s} s beats the link");
    assert!(
        preset_s < defaults_s,
        "preset {preset_s} s, quinn defaults {defaults_s} s"
    );
    let _ = std::fs::remove_dir_all(dir);
}
