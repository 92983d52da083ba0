//! What the tests that run satquic as separate processes share: starting a command that says
//! where it listens, and killing it however the test ends.

use std::io::{BufRead, BufReader};
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
