//! quinn's connection as [`appcore`]'s sending halves use it ([`SendStreams`]): each stream
//! operation is polled once and answers at once, as quinn-proto's calls do in the simulator.

use std::future::Future;
use std::task::Poll;

use appcore::{SendStreams, WriteOutcome};
use bytes::Bytes;
use perfwire::media::FRAME_EXPIRED;
use quinn::VarInt;

/// quinn's connection as [`appcore`]'s sending halves use it: every operation is polled once
/// ([`now_or_never`]) and answers at once.
pub(super) struct QuinnStreams<'a>(pub(super) &'a quinn::Connection);

/// A stream a sending half writes on.
pub(super) struct OpenStream {
    send: quinn::SendStream,
    /// The receive half of a bidirectional stream, kept open: dropping it would send
    /// STOP_SENDING.
    _recv: Option<quinn::RecvStream>,
    /// A frame stream (reset, not finished, if dropped before it is complete).
    frame: bool,
    /// Finished or reset.
    ended: bool,
}

impl Drop for OpenStream {
    /// A frame not completely written when the sender stops is cancelled: quinn would finish
    /// the stream on drop, and a frame cut short is not a frame.
    fn drop(&mut self) {
        if self.frame && !self.ended {
            let _ = self.send.reset(VarInt::from_u32(FRAME_EXPIRED));
        }
    }
}

impl SendStreams for QuinnStreams<'_> {
    type Stream = OpenStream;

    fn open_uni(&mut self, priority: i32) -> Option<OpenStream> {
        let Some(Ok(send)) = now_or_never(self.0.open_uni()) else {
            return None;
        };
        let _ = send.set_priority(priority);
        Some(OpenStream {
            send,
            _recv: None,
            frame: true,
            ended: false,
        })
    }

    fn open_bi(&mut self, priority: i32) -> Option<OpenStream> {
        let Some(Ok((send, recv))) = now_or_never(self.0.open_bi()) else {
            return None;
        };
        let _ = send.set_priority(priority);
        Some(OpenStream {
            send,
            _recv: Some(recv),
            frame: false,
            ended: false,
        })
    }

    fn write(&mut self, stream: &mut OpenStream, chunk: &mut Bytes) -> WriteOutcome {
        match now_or_never(stream.send.write_chunks(std::slice::from_mut(chunk))) {
            Some(Ok(written)) => WriteOutcome::Written(written.bytes as u64),
            None => WriteOutcome::Blocked,
            Some(Err(_)) => WriteOutcome::Closed,
        }
    }

    fn finish(&mut self, stream: &mut OpenStream) {
        let _ = stream.send.finish();
        stream.ended = true;
    }

    fn reset(&mut self, stream: &mut OpenStream, error_code: u32) -> bool {
        let reset = stream.send.reset(VarInt::from_u32(error_code)).is_ok();
        stream.ended |= reset;
        reset
    }

    fn set_priority(&mut self, stream: &mut OpenStream, priority: i32) {
        // A stream quinn already forgot has nothing left to send.
        let _ = stream.send.set_priority(priority);
    }

    fn is_acknowledged(&mut self, stream: &OpenStream) -> bool {
        // quinn forgets a finished stream once the peer acknowledged all of it (what
        // `SendStream::stopped` reports as `Ok(None)`).
        stream.send.priority().is_err()
    }

    fn set_send_window(&mut self, bytes: u64) {
        self.0.set_send_window(bytes);
    }
}

/// Polls `future` once: its output if ready now, `None` if it would wait (it is then dropped;
/// quinn's writes and stream opens are cancel-safe: nothing happened). The sender does not
/// need quinn's wake-up for a blocked write: room opens when an ACK arrives, which wakes it
/// through the probe, and it steps every [`MAX_STEP_GAP`](super::MAX_STEP_GAP) anyway.
fn now_or_never<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}
