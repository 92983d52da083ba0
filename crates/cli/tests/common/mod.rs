//! What the tests that run satquic as separate processes share: the binary, starting a command
//! that says where it listens (a server, a link), and killing it however the test ends.

// Every test binary compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The binary under test.
pub const SATQUIC: &str = env!("CARGO_BIN_EXE_satquic");

/// Kills the child when the test ends, however it ends.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `satquic args…` and returns it with the address it prints on stderr after `marker`
/// (stderr is drained afterwards, so the child never blocks on a full pipe).
pub fn start(args: &[&str], marker: &str) -> (Running, String) {
    let mut child = Command::new(SATQUIC)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let address = loop {
        let line = lines
            .next()
            .expect("the process says where it listens")
            .unwrap();
        if let Some(rest) = line.split(marker).nth(1) {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (Running(child), address)
}

/// Starts `satquic serve` on 127.0.0.1 (a free port), writing its self-signed certificate to
/// `cert`, with `flags` besides; returns it with its address.
pub fn serve(cert: &Path, flags: &[&str]) -> (Running, String) {
    let cert = cert.to_str().unwrap();
    let listen = ["serve", "--listen", "127.0.0.1:0", "--cert-out", cert];
    start(&[&listen[..], flags].concat(), "perf server on ")
}

/// Starts `satquic link` on 127.0.0.1 (a free port) in front of the server at `to`, the path
/// given by `flags` (`--rate`, `--delay`, ...); returns it with its address.
pub fn link(to: &str, flags: &[&str]) -> (Running, String) {
    let listen = ["link", "--listen", "127.0.0.1:0", "--to", to];
    start(&[&listen[..], flags].concat(), "relaying ")
}
