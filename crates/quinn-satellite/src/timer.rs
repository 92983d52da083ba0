//! A quinn runtime whose timers fire when they are due, not at tokio's next millisecond.
//!
//! quinn's pacer (quinn-proto's token bucket) refills one burst of about 2 ms of the
//! window and asks to be woken when it has refilled 4/5 of it (1.6 ms). tokio's timer wheel
//! rounds every deadline up to its next 1 ms tick and the wake-up adds its own delay, so the
//! pacer sleeps 2–3 ms per burst and the tokens it earned beyond one burst are lost: in real
//! time a paced connection sends 55–80 % of the rate its window asks for (a Careful Resume
//! jump of 6.4 MB planned over 0.72 s at 71 Mbit/s left at 40 Mbit/s through `satquic link`),
//! which the simulator, whose timers are exact, does not show. A `timerfd` armed with the
//! exact deadline and watched by tokio's reactor wakes the connection within tens of
//! microseconds.
//!
//! Linux only (`timerfd`). Where a `timerfd` cannot be made (the process is out of file
//! descriptors), the timer falls back to tokio's own, which is slower but never wrong.
//!
//! ```no_run
//! # async fn endpoint(server_config: quinn::ServerConfig) -> std::io::Result<()> {
//! let socket = std::net::UdpSocket::bind("[::]:4433")?;
//! let endpoint = quinn::Endpoint::new(
//!     quinn::EndpointConfig::default(),
//!     Some(server_config),
//!     socket,
//!     quinn_satellite::PreciseTimerRuntime::shared(),
//! )?;
//! # let _ = endpoint;
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use tokio_timerfd::Delay;

/// quinn's tokio runtime with [`PreciseTimer`]s: sockets and tasks are tokio's.
#[derive(Debug)]
pub struct PreciseTimerRuntime {
    tokio: quinn::TokioRuntime,
}

impl PreciseTimerRuntime {
    /// The runtime, shared as quinn's endpoints take it.
    pub fn shared() -> Arc<dyn quinn::Runtime> {
        Arc::new(Self {
            tokio: quinn::TokioRuntime,
        })
    }
}

impl quinn::Runtime for PreciseTimerRuntime {
    fn new_timer(&self, deadline: Instant) -> Pin<Box<dyn quinn::AsyncTimer>> {
        match PreciseTimer::new(deadline) {
            Ok(timer) => Box::pin(timer),
            Err(error) => {
                tracing::warn!("no timerfd ({error}): this connection's timers are tokio's");
                Box::pin(tokio::time::sleep_until(deadline.into()))
            }
        }
    }

    fn spawn(&self, future: Pin<Box<dyn Future<Output = ()> + Send>>) {
        self.tokio.spawn(future);
    }

    fn wrap_udp_socket(
        &self,
        socket: std::net::UdpSocket,
    ) -> io::Result<Arc<dyn quinn::AsyncUdpSocket>> {
        self.tokio.wrap_udp_socket(socket)
    }

    fn now(&self) -> Instant {
        self.tokio.now()
    }
}

/// One connection's timer: a monotonic `timerfd` (std's `Instant` is `CLOCK_MONOTONIC` on
/// Linux), armed for the deadline whenever it moves.
pub struct PreciseTimer {
    delay: Delay,
}

impl std::fmt::Debug for PreciseTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreciseTimer")
            .field("deadline", &self.delay.deadline())
            .finish()
    }
}

impl PreciseTimer {
    /// A timer due at `deadline`. Needs a tokio runtime with I/O enabled.
    pub fn new(deadline: Instant) -> io::Result<Self> {
        Ok(Self {
            delay: Delay::new(deadline)?,
        })
    }
}

impl quinn::AsyncTimer for PreciseTimer {
    fn reset(self: Pin<&mut Self>, deadline: Instant) {
        self.get_mut().delay.reset(deadline);
    }

    fn poll(self: Pin<&mut Self>, cx: &mut Context) -> Poll<()> {
        let this = self.get_mut();
        if Instant::now() >= this.delay.deadline() {
            return Poll::Ready(());
        }
        match Pin::new(&mut this.delay).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) => Poll::Ready(()),
            // The reactor cannot watch the fd: an early wake-up is safe (quinn checks its own
            // deadlines), a missed one is not.
            Poll::Ready(Err(error)) => {
                tracing::warn!("timerfd: {error}");
                Poll::Ready(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The timer never fires before its deadline, at sub-millisecond delays too. (How late
    /// it fires is measured in real time, not here: a timed unit test would fail on a busy
    /// machine.)
    #[tokio::test]
    async fn precise_timer_fires_at_its_deadline_not_before() {
        for delay_us in [300u64, 1_600, 2_300] {
            let start = Instant::now();
            let deadline = start + Duration::from_micros(delay_us);
            let mut timer: Pin<Box<dyn quinn::AsyncTimer>> =
                Box::pin(PreciseTimer::new(deadline).unwrap());
            std::future::poll_fn(|cx| timer.as_mut().poll(cx)).await;
            assert!(
                Instant::now() >= deadline,
                "fired before its deadline ({delay_us} µs)"
            );
        }
    }

    /// A reset moves the deadline both ways: later (it does not fire at the old one) and
    /// earlier (it does not wait for the old one).
    #[tokio::test]
    async fn precise_timer_follows_a_reset_deadline() {
        let start = Instant::now();
        let mut timer: Pin<Box<dyn quinn::AsyncTimer>> =
            Box::pin(PreciseTimer::new(start + Duration::from_millis(2)).unwrap());
        let later = start + Duration::from_millis(20);
        timer.as_mut().reset(later);
        std::future::poll_fn(|cx| timer.as_mut().poll(cx)).await;
        assert!(Instant::now() >= later);

        let start = Instant::now();
        timer.as_mut().reset(start + Duration::from_secs(3600));
        let sooner = start + Duration::from_millis(3);
        timer.as_mut().reset(sooner);
        tokio::time::timeout(
            Duration::from_secs(60),
            std::future::poll_fn(|cx| timer.as_mut().poll(cx)),
        )
        .await
        .expect("the earlier deadline fired");
        assert!(Instant::now() >= sooner);
    }

    /// A deadline already past is ready at once, without arming anything.
    #[tokio::test]
    async fn precise_timer_past_deadline_is_ready() {
        let mut timer: Pin<Box<dyn quinn::AsyncTimer>> =
            Box::pin(PreciseTimer::new(Instant::now() - Duration::from_millis(1)).unwrap());
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert_eq!(timer.as_mut().poll(&mut cx), Poll::Ready(()));
    }
}
