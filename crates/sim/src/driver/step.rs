//! One step's work at one instant, in quinn-proto's documented order: the datagrams due are
//! delivered to their endpoints, due timers fire, and every end touched runs its connection
//! (endpoint and application events, the applications' work, `poll_transmit`,
//! `poll_timeout`).

use std::time::Duration;

use bytes::BytesMut;
use quinn_proto::{ConnectionError, DatagramEvent, Dir, Event};

use netsim::{Direction, IP_UDP_HEADER_BYTES};

use sched::TransportView;

use crate::app::Context;
use crate::outcome::FlowEnd;

use super::{SimError, Simulation};

impl<'a> Simulation<'a> {
    pub(super) fn deliver(&mut self, now: Duration) {
        while let Some(delivery) = self.path.poll(now) {
            self.tell_drops();
            self.datagrams += 1;
            let flow = &mut self.flows[delivery.flow];
            let (receiver, sender_address) = match delivery.direction {
                Direction::Forward => (&mut flow.client, flow.server.address),
                Direction::Return => (&mut flow.server, flow.client.address),
            };
            receiver.dirty = true;
            let event = receiver.endpoint.handle(
                self.base + now,
                sender_address,
                None,
                None,
                delivery.payload,
                &mut self.buf,
            );
            match event {
                Some(DatagramEvent::ConnectionEvent(handle, event)) => {
                    if let Some((h, connection)) = &mut receiver.connection
                        && *h == handle
                    {
                        connection.handle_event(event);
                    }
                }
                Some(DatagramEvent::NewConnection(incoming)) => {
                    if receiver.connection.is_some() {
                        receiver.endpoint.ignore(incoming);
                    } else {
                        match receiver.endpoint.accept(
                            incoming,
                            self.base + now,
                            &mut self.buf,
                            None,
                        ) {
                            Ok((handle, connection)) => {
                                receiver.connection = Some((handle, connection))
                            }
                            Err(e) => {
                                if let Some(response) = e.response {
                                    let size = response.size;
                                    let payload = BytesMut::from(&self.buf[..size]);
                                    self.path.send(
                                        now,
                                        Direction::Forward,
                                        delivery.flow,
                                        size as u32 + IP_UDP_HEADER_BYTES,
                                        payload,
                                    );
                                }
                            }
                        }
                    }
                }
                Some(DatagramEvent::Response(transmit)) => {
                    let size = transmit.size;
                    let payload = BytesMut::from(&self.buf[..size]);
                    let direction = match delivery.direction {
                        Direction::Forward => Direction::Return,
                        Direction::Return => Direction::Forward,
                    };
                    self.path.send(
                        now,
                        direction,
                        delivery.flow,
                        size as u32 + IP_UDP_HEADER_BYTES,
                        payload,
                    );
                }
                None => {}
            }
            self.buf.clear();
        }
    }

    pub(super) fn fire_timers(&mut self, now: Duration) {
        let base = self.base;
        for flow in &mut self.flows {
            for side in [&mut flow.client, &mut flow.server] {
                if side.timeout.is_some_and(|t| t <= now)
                    && let Some((_, connection)) = &mut side.connection
                {
                    connection.handle_timeout(base + now);
                    side.timeout = None;
                    side.dirty = true;
                }
            }
            if flow
                .client_apps
                .iter()
                .any(|a| a.wakeup().is_some_and(|t| t <= now))
                || flow.client.scheduler.wakeup().is_some_and(|t| t <= now)
            {
                flow.client.dirty = true;
            }
            if flow
                .server_apps
                .iter()
                .any(|a| a.wakeup().is_some_and(|t| t <= now))
                || flow.server.scheduler.wakeup().is_some_and(|t| t <= now)
            {
                flow.server.dirty = true;
            }
        }
    }

    pub(super) fn process_dirty(&mut self, now: Duration) -> Result<(), SimError> {
        for index in 0..self.flows.len() {
            // Server first: an upload completion seen there unblocks the client's exchange.
            if self.flows[index].server.dirty {
                self.process_side(index, Direction::Forward, now)?;
            }
            if self.flows[index].client.dirty {
                self.process_side(index, Direction::Return, now)?;
            }
        }
        Ok(())
    }

    /// Runs one endpoint's connection: `sends` is the direction its packets travel.
    fn process_side(
        &mut self,
        index: usize,
        sends: Direction,
        now: Duration,
    ) -> Result<(), SimError> {
        let at = self.instant(now);
        let flow_config = &self.config.flows[index];
        let flow = &mut self.flows[index];
        let (side, is_client) = match sends {
            Direction::Forward => (&mut flow.server, false),
            Direction::Return => (&mut flow.client, true),
        };
        side.dirty = false;
        let mut wake_peer = false;
        let Some((handle, connection)) = &mut side.connection else {
            return Ok(());
        };
        while let Some(event) = connection.poll_endpoint_events() {
            if let Some(reply) = side.endpoint.handle_event(*handle, event) {
                connection.handle_event(reply);
            }
        }
        while let Some(event) = connection.poll() {
            match event {
                Event::Connected => {
                    let apps = if is_client {
                        flow.connected_at.get_or_insert(now);
                        flow.connection_connected_at = Some(now);
                        &mut flow.client_apps
                    } else {
                        &mut flow.server_apps
                    };
                    for app in apps {
                        app.on_connected(now);
                    }
                }
                // Between the connections of a flow that reconnects, the closed one's end is
                // not the flow's.
                Event::ConnectionLost { reason }
                    if flow.end.is_none() && flow.reconnect_at.is_none() =>
                {
                    let end = match reason {
                        ConnectionError::LocallyClosed => FlowEnd::Completed,
                        ConnectionError::ApplicationClosed(ref close)
                            if close.error_code == 0u32.into() =>
                        {
                            FlowEnd::Completed
                        }
                        other => FlowEnd::Error {
                            reason: other.to_string(),
                        },
                    };
                    flow.end = Some((end, now));
                }
                _ => {}
            }
        }
        let apps = if is_client {
            &mut flow.client_apps
        } else {
            &mut flow.server_apps
        };
        // Streams the peer opened go to the first half that serves their direction; one
        // nobody serves is left unread (its flow control stalls only that stream).
        for dir in [Dir::Bi, Dir::Uni] {
            while let Some(id) = connection.streams().accept(dir) {
                if let Some(app) = apps.iter_mut().find(|a| a.accepts(dir)) {
                    app.adopt_stream(id, now);
                }
            }
        }
        side.scheduler.observe(&TransportView {
            now,
            cwnd_bytes: connection.congestion_state().window(),
            in_flight_bytes: side.probe.in_flight_bytes(),
            acked_bytes: side.probe.acked_bytes(),
            srtt: connection.rtt(),
            min_rtt: connection.min_rtt(),
            rtt_sample_min: side.probe.take_min_rtt_sample(),
            mtu_bytes: u64::from(connection.current_mtu()),
        });
        let mut cx = Context {
            connection,
            now,
            scheduler: side.scheduler.as_mut(),
        };
        // Applications outside the scheduler (perf) last, whatever the scenario's order
        // (`App::writes_outside_the_scheduler`): a perf download listed before 1 Mbit/s of
        // media at 4 Mbit/s took the room acknowledgements freed before the media's turn, and
        // 177 of 298 frames were cancelled; listed after it, none. The real-time backend
        // writes perf in the same order (`emu::apps::End::writing_turns`).
        for perf_pass in [false, true] {
            for (app, app_config) in apps.iter_mut().zip(&flow_config.apps) {
                if app.writes_outside_the_scheduler() != perf_pass {
                    continue;
                }
                wake_peer |= app.drive(&mut cx).map_err(|source| SimError::App {
                    flow: flow_config.name.clone(),
                    app: app_config.name.clone(),
                    source,
                })?;
            }
        }
        if is_client
            && flow.end.is_none()
            && flow.reconnect_at.is_none()
            && !flow.client_apps.is_empty()
            && flow.client_apps.iter().all(|a| a.is_finished())
        {
            connection.close(at, 0u32.into(), "done".into());
            flow.closed_at = Some(now);
            match flow_config.reconnect_after {
                Some(gap) if flow.finished.is_empty() => flow.reconnect_at = Some(now + gap),
                _ => flow.end = Some((FlowEnd::Completed, now)),
            }
        }
        let mut burst_packets = 0u64;
        while let Some(transmit) = connection.poll_transmit(at, 1, &mut self.buf) {
            burst_packets += 1;
            let size = transmit.size;
            self.path.send(
                now,
                sends,
                index,
                size as u32 + IP_UDP_HEADER_BYTES,
                BytesMut::from(&self.buf[..size]),
            );
            self.buf.clear();
        }
        // Packets handed to the path at one instant: without pacing a whole window would
        // leave at once; with it, only quinn's small burst allowance.
        side.max_burst_packets = side.max_burst_packets.max(burst_packets);
        while let Some(event) = connection.poll_endpoint_events() {
            if let Some(reply) = side.endpoint.handle_event(*handle, event) {
                connection.handle_event(reply);
                side.dirty = true;
            }
        }
        side.timeout = connection
            .poll_timeout()
            .map(|t| t.saturating_duration_since(self.base));
        if wake_peer {
            let flow = &mut self.flows[index];
            let peer = if is_client {
                &mut flow.server
            } else {
                &mut flow.client
            };
            peer.dirty = true;
        }
        Ok(())
    }
}
