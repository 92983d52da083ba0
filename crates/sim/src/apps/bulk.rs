//! The bulk application in the simulator: one long stream of offered load — unlimited or at a
//! fixed rate — sharing its connection with other applications (media, in \[Ruehl2024\]'s
//! experiments).
//!
//! The sender is [`appcore::bulk::BulkSender`] (shared with the real-time endpoints) on
//! quinn-proto's connection: one bidirectional stream of [`perfwire::pattern`] bytes, written
//! as the flow's scheduler allows. The receiver reads in any order and verifies every byte by
//! offset.

use perfwire::Sender;
use std::time::Duration;

use perfwire::session::{AppParams, BulkParams};
use quinn_proto::{Dir, StreamId};

use super::Sending;
use super::perf::VerifyingReader;
use crate::app::{App, AppError, AppSpec, Context};

/// [`AppSpec::kind`] of the bulk application.
pub const KIND: &str = "bulk";

/// What the bulk application offers ([`BulkParams`], as the session protocol carries them to
/// the real-time endpoints; its start counts from the start of the run, and the source waits
/// for the handshake if that is later) and the end that sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkSpec {
    /// Offered load and start.
    pub params: BulkParams,
    /// The end that sends.
    pub sender: Sender,
}

impl AppSpec for BulkSpec {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn data_sender(&self) -> Sender {
        self.sender
    }

    fn build(&self) -> (Box<dyn App>, Box<dyn App>) {
        let params = self.params;
        let sender: Box<dyn App> = Box::new(Sending::new(
            appcore::sending_half(AppParams::Bulk(params)).expect("bulk has a sending half"),
            move |sent| {
                let mut report = serde_json::Map::new();
                report.insert("written_bytes".into(), sent.written_bytes.into());
                report.insert(
                    "offered_bps".into(),
                    params.rate_bps.map_or(serde_json::Value::Null, Into::into),
                );
                report
            },
        ));
        let receiver: Box<dyn App> = Box::new(BulkReceiver::default());
        match self.sender {
            Sender::Server => (receiver, sender),
            Sender::Client => (sender, receiver),
        }
    }
}

/// The receiving half: reads the one bulk stream, verifies it.
#[derive(Debug, Default)]
struct BulkReceiver {
    stream: Option<StreamId>,
    reader: VerifyingReader,
}

impl App for BulkReceiver {
    fn accepts(&self, dir: Dir) -> bool {
        dir == Dir::Bi && self.stream.is_none()
    }

    fn adopt_stream(&mut self, id: StreamId, _now: Duration) {
        self.stream = Some(id);
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Result<bool, AppError> {
        if let Some(id) = self.stream {
            self.reader.read(cx.connection, id)?;
        }
        Ok(false)
    }

    fn received_bytes(&self) -> u64 {
        self.reader.prefix()
    }
}
