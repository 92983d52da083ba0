//! emu — the real-time half of satquic: the netsim path model on the wall clock as a UDP
//! relay, and a QUIC perf server and client on quinn + tokio.
//!
//! Layer: beside `sim` (virtual time), above `netsim`. One model, two clocks:
//! [`relay::Relay`] admits real datagrams into the same [`netsim::Link`]s the simulator uses.

pub mod accuracy;
pub mod ipnet;
pub mod perf;
pub mod relay;
pub mod sockbuf;
