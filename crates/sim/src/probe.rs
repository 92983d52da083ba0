//! A transparent wrapper around any quinn congestion controller that lets the simulator sample
//! what quinn does not expose: bytes in flight.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use quinn_proto::RttEstimator;
use quinn_proto::congestion::{Controller, ControllerFactory, ControllerMetrics};

/// Values the probe saw, readable from outside the connection.
#[derive(Debug, Default)]
pub struct ProbeReadings {
    /// Bytes in flight as of the last ACK frame, plus bytes sent since, minus bytes declared
    /// lost since.
    in_flight_bytes: AtomicU64,
}

impl ProbeReadings {
    /// Current estimate of bytes in flight.
    pub fn in_flight_bytes(&self) -> u64 {
        self.in_flight_bytes.load(Ordering::Relaxed)
    }
}

/// Factory that builds the inner controller and wraps it.
pub struct ProbedFactory {
    inner: Arc<dyn ControllerFactory + Send + Sync>,
    readings: Arc<ProbeReadings>,
}

impl ProbedFactory {
    /// Wraps `inner`; `readings` receives the samples.
    pub fn new(
        inner: Arc<dyn ControllerFactory + Send + Sync>,
        readings: Arc<ProbeReadings>,
    ) -> Self {
        Self { inner, readings }
    }
}

impl ControllerFactory for ProbedFactory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        Box::new(Probed {
            inner: self.inner.clone().build(now, current_mtu),
            readings: self.readings.clone(),
        })
    }
}

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

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self.inner.into_any()
    }
}
