//! The Remote Endpoint (RFC 9959 §2.2) as the store keys it: the local and the remote IP
//! address, each optionally reduced to a prefix.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// How many leading bits of an address identify its end of a path, per address family.
///
/// RFC 9959 §2.2 identifies the sending interface by "a globally assigned address/prefix" and
/// the destination by its address, and notes the trade-off: more detail tells paths apart
/// better but makes saved parameters reusable less often. A prefix shorter than the full
/// address lets the hosts of one site (an IPv4 /24, an IPv6 /64 — one subnet, usually behind
/// one access link, hence one bottleneck) or one host's rotating IPv6 privacy addresses share
/// what a connection learned; it also lets them share a wrong guess, which Careful Resume's
/// Safe Retreat then has to correct.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PrefixLengths {
    /// Leading bits kept of an IPv4 address, 0..=32.
    pub ipv4: u8,
    /// Leading bits kept of an IPv6 address, 0..=128.
    pub ipv6: u8,
}

impl PrefixLengths {
    /// Whole addresses (/32 and /128): one host is one endpoint.
    pub const FULL: PrefixLengths = PrefixLengths {
        ipv4: 32,
        ipv6: 128,
    };

    /// `ipv4` and `ipv6` leading bits ([`ResumeStore::new`](super::ResumeStore::new) refuses
    /// lengths beyond the address).
    pub const fn new(ipv4: u8, ipv6: u8) -> PrefixLengths {
        PrefixLengths { ipv4, ipv6 }
    }

    /// The prefix length for `address`'s family.
    pub fn for_address(&self, address: IpAddr) -> u8 {
        match address {
            IpAddr::V4(_) => self.ipv4,
            IpAddr::V6(_) => self.ipv6,
        }
    }

    /// Lengths within the address sizes, or the one that is not; `field` names the setting.
    pub(crate) fn check(&self, field: &'static str) -> Result<(), super::ResumeStoreError> {
        if self.ipv4 > 32 {
            return Err(super::ResumeStoreError::Config {
                field,
                problem: format!("IPv4 prefix /{} is longer than 32 bits", self.ipv4),
            });
        }
        if self.ipv6 > 128 {
            return Err(super::ResumeStoreError::Config {
                field,
                problem: format!("IPv6 prefix /{} is longer than 128 bits", self.ipv6),
            });
        }
        Ok(())
    }
}

impl Default for PrefixLengths {
    fn default() -> Self {
        PrefixLengths::FULL
    }
}

/// One end of a path as the store sees it: an address with the bits beyond its prefix cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prefix {
    address: IpAddr,
    length: u8,
}

impl Prefix {
    /// `address` reduced to `lengths` for its family. An IPv4-mapped IPv6 address
    /// (`::ffff:a.b.c.d`, what a dual-stack socket reports for an IPv4 peer) is the IPv4
    /// address it maps: the same peer is one endpoint whichever socket it reached.
    pub fn new(address: IpAddr, lengths: PrefixLengths) -> Prefix {
        let address = address.to_canonical();
        let length = lengths.for_address(address);
        Prefix {
            address: mask(address, length),
            length,
        }
    }

    /// The address, bits beyond the prefix cleared.
    pub fn address(&self) -> IpAddr {
        self.address
    }

    /// The prefix length, bits.
    pub fn length(&self) -> u8 {
        self.length
    }

    /// The prefix `address/length` exactly as written: `None` unless `address` is in its
    /// canonical form (IPv4 as IPv4), `length` fits the family and no bit beyond it is set.
    pub(crate) fn exact(address: IpAddr, length: u8) -> Option<Prefix> {
        let max = if address.is_ipv4() { 32 } else { 128 };
        (address.to_canonical() == address && length <= max && mask(address, length) == address)
            .then_some(Prefix { address, length })
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.address, self.length)
    }
}

/// `address` with every bit beyond the first `length` cleared.
fn mask(address: IpAddr, length: u8) -> IpAddr {
    match address {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let kept = if length == 0 {
                0
            } else {
                bits & (u32::MAX << (32 - u32::from(length.min(32))))
            };
            IpAddr::V4(Ipv4Addr::from(kept))
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let kept = if length == 0 {
                0
            } else {
                bits & (u128::MAX << (128 - u32::from(length.min(128))))
            };
            IpAddr::V6(Ipv6Addr::from(kept))
        }
    }
}

/// RFC 9959 §2.2's Remote Endpoint as a store key (the RFC's `saved_remote_endpoint` when it
/// is saved): the local interface's and the peer's prefix. Ports are not part of it: a client
/// takes a new port for every connection, and the path does not depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PathKey {
    /// This end.
    pub local: Prefix,
    /// The peer.
    pub remote: Prefix,
}

impl fmt::Display for PathKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} → {}", self.local, self.remote)
    }
}
