//! probe — a transparent wrapper around any quinn congestion controller that exposes what quinn
//! does not: bytes in flight, bytes acknowledged (what the path delivered, which quinn's
//! statistics do not count), the RTT of each packet acknowledged (quinn shows only its smoothed
//! RTT, which lags a queue that empties for a moment by several round trips), and the moment
//! acknowledgements arrive.
//!
//! Layer: on quinn-proto only, so the simulator (`sim`, quinn-proto driven in virtual time) and
//! the real-time endpoints (`emu`, quinn + tokio) share it without depending on each other.
//!
//! Wrap the controller factory in a [`ProbedFactory`]: with [`ProbedFactory::new`] every
//! controller it builds reports into one [`ProbeReadings`] (one connection per factory, as in
//! the simulator); with [`ProbedFactory::per_connection`] each controller gets its own (a
//! server with many connections), found again from the connection with [`readings_of`] on a
//! copy of its controller (quinn's `Connection::congestion_state`).

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use quinn_proto::RttEstimator;
use quinn_proto::congestion::{Controller, ControllerFactory, ControllerMetrics};

/// Called after each ACK frame the connection processed (inside quinn's connection state: it
/// must be quick and must not call back into the connection, e.g. wake a task).
pub type AckHook = Box<dyn Fn() + Send + Sync>;

/// Values the probe saw, readable from outside the connection.
pub struct ProbeReadings {
    /// Bytes in flight as of the last ACK frame, plus bytes sent since, minus bytes declared
    /// lost since.
    in_flight_bytes: AtomicU64,
    /// Bytes of the packets acknowledged since the controller was built (as quinn counts them
    /// for the controller: UDP payloads).
    acked_bytes: AtomicU64,
    /// Smallest RTT sample (acknowledged − sent, ACK delay included) since the last
    /// [`ProbeReadings::take_min_rtt_sample`], nanoseconds; `u64::MAX` for none.
    min_rtt_sample_nanos: AtomicU64,
    /// Run after every ACK frame, once set.
    on_ack: OnceLock<AckHook>,
}

impl Default for ProbeReadings {
    fn default() -> Self {
        Self {
            in_flight_bytes: AtomicU64::new(0),
            acked_bytes: AtomicU64::new(0),
            min_rtt_sample_nanos: AtomicU64::new(u64::MAX),
            on_ack: OnceLock::new(),
        }
    }
}

impl std::fmt::Debug for ProbeReadings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeReadings")
            .field("in_flight_bytes", &self.in_flight_bytes())
            .field("acked_bytes", &self.acked_bytes())
            .field("on_ack", &self.on_ack.get().is_some())
            .finish()
    }
}

impl ProbeReadings {
    /// Current estimate of bytes in flight.
    pub fn in_flight_bytes(&self) -> u64 {
        self.in_flight_bytes.load(Ordering::Relaxed)
    }

    /// Bytes the peer acknowledged so far: its increase over an interval is what the path
    /// delivered in it, whatever the queue did to the RTT meanwhile.
    pub fn acked_bytes(&self) -> u64 {
        self.acked_bytes.load(Ordering::Relaxed)
    }

    /// The smallest RTT sample of the packets acknowledged since the previous call (`None` if
    /// none was), and starts a new interval: whether a queue emptied even briefly, which a
    /// smoothed RTT does not show. One reader per connection.
    pub fn take_min_rtt_sample(&self) -> Option<Duration> {
        let nanos = self.min_rtt_sample_nanos.swap(u64::MAX, Ordering::Relaxed);
        (nanos != u64::MAX).then(|| Duration::from_nanos(nanos))
    }

    fn record_rtt_sample(&self, sample: Duration) {
        let nanos = u64::try_from(sample.as_nanos()).unwrap_or(u64::MAX - 1);
        self.min_rtt_sample_nanos
            .fetch_min(nanos, Ordering::Relaxed);
    }

    /// Runs `hook` after every ACK frame from now on: lets a real-time sender wake when room
    /// opens in the window instead of polling for it. Only the first hook set is kept; returns
    /// whether this one was.
    pub fn set_ack_hook(&self, hook: AckHook) -> bool {
        self.on_ack.set(hook).is_ok()
    }
}

/// Factory that builds the inner controller and wraps it.
pub struct ProbedFactory {
    inner: Arc<dyn ControllerFactory + Send + Sync>,
    /// `None`: fresh readings for every controller built.
    readings: Option<Arc<ProbeReadings>>,
}

impl ProbedFactory {
    /// Wraps `inner`; `readings` receives the samples of every controller built (use one
    /// factory per connection).
    pub fn new(
        inner: Arc<dyn ControllerFactory + Send + Sync>,
        readings: Arc<ProbeReadings>,
    ) -> Self {
        Self {
            inner,
            readings: Some(readings),
        }
    }

    /// Wraps `inner`; each controller built (each connection) reports into readings of its
    /// own, found with [`readings_of`].
    pub fn per_connection(inner: Arc<dyn ControllerFactory + Send + Sync>) -> Self {
        Self {
            inner,
            readings: None,
        }
    }
}

impl ControllerFactory for ProbedFactory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        Box::new(Probed {
            inner: self.inner.clone().build(now, current_mtu),
            readings: self.readings.clone().unwrap_or_default(),
        })
    }
}

/// The readings of a probed controller, e.g. a copy from quinn's
/// `Connection::congestion_state()`; `None` if it is not wrapped by a [`ProbedFactory`].
pub fn readings_of(controller: Box<dyn Controller>) -> Option<Arc<ProbeReadings>> {
    controller
        .into_any()
        .downcast::<Probed>()
        .ok()
        .map(|probed| probed.readings.clone())
}

/// The controller a [`ProbedFactory`] wrapped, e.g. to ask it for reports of its own (from a
/// copy of the connection's controller); `None` if `controller` is not wrapped.
pub fn inner_of(controller: Box<dyn Controller>) -> Option<Box<dyn Controller>> {
    controller
        .into_any()
        .downcast::<Probed>()
        .ok()
        .map(|probed| probed.inner)
}

/// The wrapper: forwards every call, counting bytes in flight on the way.
struct Probed {
    inner: Box<dyn Controller>,
    readings: Arc<ProbeReadings>,
}

impl Controller for Probed {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        self.readings
            .in_flight_bytes
            .fetch_add(bytes, Ordering::Relaxed);
        self.inner.on_sent(now, bytes, last_packet_number);
    }

    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        self.readings
            .record_rtt_sample(now.saturating_duration_since(sent));
        self.readings
            .acked_bytes
            .fetch_add(bytes, Ordering::Relaxed);
        self.inner.on_ack(now, sent, bytes, app_limited, rtt);
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        in_flight: u64,
        app_limited: bool,
        largest_packet_num_acked: Option<u64>,
    ) {
        self.readings
            .in_flight_bytes
            .store(in_flight, Ordering::Relaxed);
        self.inner
            .on_end_acks(now, in_flight, app_limited, largest_packet_num_acked);
        if let Some(hook) = self.readings.on_ack.get() {
            hook();
        }
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        lost_bytes: u64,
    ) {
        let readings = &self.readings.in_flight_bytes;
        let _ = readings.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            Some(v.saturating_sub(lost_bytes))
        });
        self.inner
            .on_congestion_event(now, sent, is_persistent_congestion, lost_bytes);
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.inner.on_mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        self.inner.window()
    }

    fn metrics(&self) -> ControllerMetrics {
        self.inner.metrics()
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(Probed {
            inner: self.inner.clone_box(),
            readings: self.readings.clone(),
        })
    }

    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }

    /// The wrapper itself (not the inner controller), so [`readings_of`] finds the readings.
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn per_connection_readings_are_found_from_a_copy_of_the_controller() {
        let factory = Arc::new(ProbedFactory::per_connection(Arc::new(
            quinn_proto::congestion::NewRenoConfig::default(),
        )));
        let now = Instant::now();
        let mut first = factory.clone().build(now, 1200);
        let second = factory.build(now, 1200);
        first.on_sent(now, 1000, 1);
        let readings = readings_of(first.clone_box()).expect("probed");
        assert_eq!(readings.in_flight_bytes(), 1000);
        assert_eq!(readings_of(second).unwrap().in_flight_bytes(), 0);
        let acks = Arc::new(AtomicUsize::new(0));
        let counter = acks.clone();
        assert!(readings.set_ack_hook(Box::new(move || {
            counter.fetch_add(1, Ordering::Relaxed);
        })));
        first.on_end_acks(now, 0, false, Some(1));
        assert_eq!(
            (readings.in_flight_bytes(), acks.load(Ordering::Relaxed)),
            (0, 1)
        );
        let inner = inner_of(first.clone_box()).expect("probed");
        assert_eq!(inner.window(), first.window());
        assert!(
            inner_of(inner).is_none(),
            "the inner controller is not wrapped"
        );
        let plain = quinn_proto::congestion::NewRenoConfig::default();
        assert_eq!(readings.take_min_rtt_sample(), None);
        assert!(readings_of(Arc::new(plain).build(now, 1200)).is_none());
    }

    #[test]
    fn the_smallest_rtt_sample_since_the_last_reading_is_taken_once() {
        let readings = ProbeReadings::default();
        let ms = Duration::from_millis;
        for sample in [130, 80, 150] {
            readings.record_rtt_sample(ms(sample));
        }
        assert_eq!(readings.take_min_rtt_sample(), Some(ms(80)));
        assert_eq!(readings.take_min_rtt_sample(), None);
        readings.record_rtt_sample(ms(300));
        assert_eq!(readings.take_min_rtt_sample(), Some(ms(300)));
    }
}
