//! The bulk application's receiving half in real time: one bidirectional stream the peer
//! opens, read in order into an [`appcore::bulk::PatternReader`]. The sending half is
//! [`appcore::bulk::BulkSender`] itself.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use appcore::bulk::PatternReader;
use quinn::VarInt;

use super::Shared;

/// Error code with which a receiver stops a bulk stream whose bytes are not the pattern.
const BAD_DATA: u32 = 0x4244; // "BD"

/// The receiving halves: each bidirectional stream the peer opens goes to the next of `apps`
/// (application indices) without one; further streams are refused.
pub(super) async fn receive(connection: quinn::Connection, apps: Vec<usize>, shared: Arc<Shared>) {
    let mut readers = tokio::task::JoinSet::new();
    let mut next = apps.into_iter();
    loop {
        tokio::select! {
            stream = connection.accept_bi() => match stream {
                Ok((send, recv)) => {
                    // The reverse half stays silent (finished when dropped).
                    match next.next() {
                        Some(index) => {
                            readers.spawn(read_bulk(send, recv, index, shared.clone()));
                        }
                        None => {
                            let mut recv = recv;
                            let _ = recv.stop(VarInt::from_u32(BAD_DATA));
                            shared.fail("the peer opened more bulk streams than the session has".into());
                        }
                    }
                }
                Err(_) => break,
            },
            Some(_) = readers.join_next(), if !readers.is_empty() => {}
        }
    }
    while readers.join_next().await.is_some() {}
}

async fn read_bulk(
    _send: quinn::SendStream,
    mut recv: quinn::RecvStream,
    index: usize,
    shared: Arc<Shared>,
) {
    let mut reader = PatternReader::default();
    while let Ok(Some(chunk)) = recv.read_chunk(usize::MAX, true).await {
        if let Err(mismatch) = reader.on_data(chunk.offset, &chunk.bytes) {
            let _ = recv.stop(VarInt::from_u32(BAD_DATA));
            shared.fail(format!("bulk stream {}: {mismatch}", recv.id()));
            return;
        }
        shared.received[index].store(reader.received_bytes(), Ordering::Relaxed);
    }
}
