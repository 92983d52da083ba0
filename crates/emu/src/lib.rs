//! emu — the real-time half of satquic: the netsim path model on the wall clock as a UDP
//! relay, and a QUIC perf server and client on quinn + tokio.
//!
//! Layer: beside `sim` (virtual time), above `netsim`. One model, two clocks:
//! [`relay::Relay`] (UDP) and [`ipnet::Netns`] (IP packets through TUN devices) admit real
//! traffic into the same [`netsim::Path`] the simulator uses, through one wall-clock loop,
//! [`pump`].

pub mod accuracy;
pub mod apps;
pub mod endpoint;
pub mod ipnet;
pub mod perf;
pub mod pump;
pub mod qlog;
pub mod relay;
pub mod resume;
pub mod server;
pub mod session;
pub mod sockbuf;
