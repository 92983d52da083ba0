//! Careful Resume on real quinn connections through the emulated path: the server keeps one
//! store for all its connections, so the second download from the same client takes what
//! the first one saved, jumps, and leaves a fresh observation; the client keeps its own for
//! uploads. Every step shows in the log lines the endpoints write.
//!
//! Real time: this test takes about 10 s.

mod common;

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use emu::endpoint::{self, TransportRecipe};
use emu::perf::{self, ClientOptions};
use emu::relay::Relay;
use emu::resume::ResumeKeeper;
use emu::server::Server;
use hybla::HyblaConfig;
use netsim::{LinkConfig, QueueLimit};
use quinn_satellite::{ResumeStore, ResumeStoreConfig};
use tracing::field::{Field, Visit};
use tracing::{Event, Metadata, Subscriber, span};

/// Every event's message (and fields) at info level or above, from every thread.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write as _;
        let _ = write!(self.0, "{}={value:?} ", field.name());
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event() && *metadata.level() <= tracing::Level::INFO
    }
    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }
    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        self.0.lock().expect("no poisoning").push(message.0);
    }
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

impl Capture {
    fn lines_with(&self, needle: &str) -> Vec<String> {
        self.0
            .lock()
            .expect("no poisoning")
            .iter()
            .filter(|l| l.contains(needle))
            .cloned()
            .collect()
    }
}

/// Hybla resuming from `keeper`'s store, large windows.
fn resuming_hybla(keeper: Arc<ResumeKeeper>) -> TransportRecipe {
    TransportRecipe::resuming(
        |resume| {
            let mut hybla = HyblaConfig::default();
            if let Some(resume) = resume {
                hybla.careful_resume(resume);
            }
            endpoint::transport(Arc::new(hybla), 16 << 20)
        },
        keeper,
    )
}

fn keeper(file: Option<std::path::PathBuf>) -> Arc<ResumeKeeper> {
    let store = ResumeStore::new(ResumeStoreConfig::default()).expect("default settings");
    Arc::new(ResumeKeeper::new(store, file))
}

const LOCALHOST: &str = "127.0.0.1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_connection_on_a_path_resumes_from_the_first() {
    let log = Capture::default();
    tracing::subscriber::set_global_default(log.clone()).expect("the only subscriber");
    let dir = std::env::temp_dir().join(format!("emu-careful-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let server_file = dir.join("server-store.txt");

    let server_keeper = keeper(Some(server_file.clone()));
    let (server, roots) = common::loopback_server(resuming_hybla(server_keeper.clone()));
    let server = Server::start(server).unwrap();
    // 40 Mbit/s each way, RTT 100 ms (BDP 500 kB), one BDP of buffer.
    let link = LinkConfig {
        queue: QueueLimit::Bytes(500_000),
        ..LinkConfig::new(40_000_000, Duration::from_millis(50))
    };
    let relay = Relay::start(common::relay_config(
        server.local_addr().unwrap(),
        link.clone(),
        link,
    ))
    .unwrap();
    let options = |transport: TransportRecipe, download: u64, upload: u64| ClientOptions {
        requests: emu::perf::PerfRequests {
            download_bytes: Some(download),
            upload_bytes: upload,
            duration: Some(Duration::from_secs(30)),
            ..Default::default()
        },
        ..common::client_options(relay.local_addr(), &roots, transport)
    };
    let plain_client = || endpoint::transport_recipe(Arc::new(HyblaConfig::default()), 16 << 20);
    let localhost: IpAddr = LOCALHOST.parse().unwrap();

    // Two downloads in a row: the server sends.
    for round in 1..=2 {
        let report = perf::get(options(plain_client(), 8_000_000, 0), &|_| {})
            .await
            .expect("download");
        assert!(report.completed, "download {round}");
        // The server records when it sees the connection closed.
        wait_for(|| log.lines_with(&format!("connection {round} (")).len() == 2).await;
        wait_for(|| server_keeper.store().len() == 1).await;
    }
    let first = log.lines_with("connection 1 (");
    let second = log.lines_with("connection 2 (");
    assert!(
        first[0].contains("no saved path for 127.0.0.1/32 → 127.0.0.1/32"),
        "{first:?}"
    );
    assert!(
        first[1].contains("did not resume; saved for the next connection"),
        "{first:?}"
    );
    assert!(
        second[0].contains("Careful Resume from saved_cwnd"),
        "{second:?}"
    );
    assert!(
        second[1].contains("closed: Careful Resume Reconnaissance → Unvalidated at")
            && second[1].contains("retreated: no")
            && second[1].contains("saved for the next connection"),
        "{second:?}"
    );
    // What is there now is the second connection's observation, and it is on disk.
    let entry = server_keeper
        .store()
        .take(localhost, localhost, SystemTime::now())
        .expect("a fresh observation");
    assert!(entry.observed_at().elapsed().unwrap() < Duration::from_secs(5));
    let on_disk = ResumeStore::new(ResumeStoreConfig::default()).unwrap();
    let report = on_disk.load(&server_file, SystemTime::now()).unwrap();
    assert_eq!((report.loaded, report.ignored.len()), (1, 0));
    let saved = on_disk
        .take(localhost, localhost, SystemTime::now())
        .unwrap();
    // The file keeps whole microseconds.
    assert_eq!(
        saved.saved().saved_cwnd_bytes,
        entry.saved().saved_cwnd_bytes
    );
    assert_eq!(
        saved.saved().saved_rtt.as_micros(),
        entry.saved().saved_rtt.as_micros()
    );
    assert!(server_keeper.store().put_back(entry, SystemTime::now()));

    // Two uploads in a row with a client store: the client sends, and resumes the second
    // time. The server's controller, receiving, leaves its saved path untouched.
    let client_keeper = keeper(None);
    for round in 1..=2 {
        let report = perf::get(
            options(resuming_hybla(client_keeper.clone()), 1_000, 8_000_000),
            &|_| {},
        )
        .await
        .expect("upload");
        assert_eq!(report.bytes_uploaded, 8_000_000, "upload {round}");
    }
    let client = log.lines_with("client connection (");
    assert_eq!(client.len(), 4, "{client:?}");
    assert!(client[0].contains("no saved path"), "{client:?}");
    assert!(
        client[1].contains("saved for the next connection"),
        "{client:?}"
    );
    assert!(
        client[2].contains("Careful Resume from saved_cwnd"),
        "{client:?}"
    );
    assert!(
        client[3].contains("Reconnaissance → Unvalidated at"),
        "{client:?}"
    );
    assert_eq!(client_keeper.store().len(), 1);
    for round in 3..=4 {
        wait_for(|| log.lines_with(&format!("connection {round} (")).len() == 2).await;
        let lines = log.lines_with(&format!("connection {round} ("));
        assert!(
            lines[0].contains("Careful Resume from saved_cwnd")
                && lines[1].contains("the unused saved path goes back"),
            "{lines:?}"
        );
    }
    assert_eq!(server_keeper.store().len(), 1);

    relay.stop();
    server.stop().await;
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

/// Waits (at most 10 s) until `done`.
async fn wait_for(done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "timed out");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
