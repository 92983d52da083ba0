//! The relay knows a flow by its client's address when the configuration names it
//! (`flow_clients`), not by which client happens to send first: on a busy machine the second
//! flow's client may send before the first's, and numbering by arrival then gives each flow the
//! other's server and access delay.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use emu::relay::{Relay, RelayConfig};
use netsim::LinkConfig;

const LINK_DELAY: Duration = Duration::from_millis(10);
const FAR_ACCESS_DELAY: Duration = Duration::from_millis(300);

fn bound() -> UdpSocket {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    socket
}

fn addresses(sockets: &[&UdpSocket]) -> Vec<SocketAddr> {
    sockets.iter().map(|s| s.local_addr().unwrap()).collect()
}

fn config(flow_upstreams: Vec<SocketAddr>, flow_clients: Vec<SocketAddr>) -> RelayConfig {
    let link = LinkConfig::new(10_000_000, LINK_DELAY);
    RelayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream: flow_upstreams[0],
        flow_upstreams,
        flow_clients,
        forward: link.clone(),
        return_link: link,
        mtu_bytes: 1500,
        access_delays: vec![Duration::ZERO, FAR_ACCESS_DELAY],
        seed: 1,
        socket_buffer_bytes: None,
    }
}

/// Sends one datagram from `client` through the relay; what `server` received and after how
/// long.
fn through(
    client: &UdpSocket,
    relay: &Relay,
    server: &UdpSocket,
    payload: &[u8],
) -> (Vec<u8>, Duration) {
    let sent = Instant::now();
    client.send_to(payload, relay.local_addr()).unwrap();
    let mut buf = [0u8; 64];
    let len = server
        .recv(&mut buf)
        .expect("the relay forwards the datagram");
    (buf[..len].to_vec(), sent.elapsed())
}

#[test]
fn named_clients_keep_their_flow_whichever_sends_first() {
    let (near_server, far_server) = (bound(), bound());
    let (near_client, far_client) = (bound(), bound());
    let relay = Relay::start(config(
        addresses(&[&near_server, &far_server]),
        addresses(&[&near_client, &far_client]),
    ))
    .unwrap();
    // The far flow's client sends first.
    let (far_payload, far_took) = through(&far_client, &relay, &far_server, b"far");
    let (near_payload, near_took) = through(&near_client, &relay, &near_server, b"near");
    assert_eq!(far_payload, b"far", "the far client reached the far server");
    assert_eq!(
        near_payload, b"near",
        "the near client reached the near server"
    );
    assert!(
        far_took >= LINK_DELAY + FAR_ACCESS_DELAY,
        "far flow took {far_took:?}, without its access delay"
    );
    assert!(
        near_took < FAR_ACCESS_DELAY,
        "near flow took {near_took:?}, the far flow's access delay"
    );
    // The relay publishes its counters every few tens of milliseconds.
    let return_delivered = |stats: &emu::relay::RelayStats| -> Vec<u64> {
        stats.flows.iter().map(|f| f[1].delivered_packets).collect()
    };
    let asked = Instant::now();
    let mut stats = relay.stats();
    while return_delivered(&stats) != [1, 1] && asked.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
        stats = relay.stats();
    }
    relay.stop();
    assert_eq!(stats.clients, 2);
    assert_eq!(
        return_delivered(&stats),
        [1, 1],
        "per flow, client to server"
    );
}

#[test]
fn unnamed_clients_are_numbered_after_the_named_ones() {
    let (named_server, other_server) = (bound(), bound());
    let (named_client, other_client) = (bound(), bound());
    let relay = Relay::start(config(
        addresses(&[&named_server, &other_server]),
        addresses(&[&named_client]),
    ))
    .unwrap();
    // A client the configuration does not name, first to send, still becomes flow 1.
    let (payload, took) = through(&other_client, &relay, &other_server, b"other");
    assert_eq!(payload, b"other");
    assert!(took >= FAR_ACCESS_DELAY, "flow 1's access delay: {took:?}");
    let (payload, _) = through(&named_client, &relay, &named_server, b"named");
    assert_eq!(payload, b"named");
    relay.stop();
}

#[test]
fn a_client_named_twice_is_refused() {
    let server = bound();
    let client = bound();
    let address = client.local_addr().unwrap();
    let error = Relay::start(config(
        vec![server.local_addr().unwrap()],
        vec![address, address],
    ))
    .err()
    .expect("two flows cannot share a client address");
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    let message = error.to_string();
    assert!(
        message.contains("flow_clients") && message.contains(&address.to_string()),
        "{message}"
    );
}
