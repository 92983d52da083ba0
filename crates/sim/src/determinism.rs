//! Everything that makes a quinn-proto run reproducible from one seed: endpoint rng seeds,
//! connection-id generation, HMAC and token keys, and the clock the server stamps tokens with.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use quinn_proto::{ConnectionId, ConnectionIdGenerator, TimeSource};
use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Length of the connection IDs our endpoints issue (quinn's default is 8 too).
pub const CID_LEN: usize = 8;

/// A 32-byte seed for `stream` derived from the run seed.
pub fn seed_bytes(seed: u64, stream: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let word = netsim::derive_seed(seed, stream.wrapping_mul(8).wrapping_add(i as u64));
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    out
}

/// Issues connection IDs from a seeded PCG stream instead of the thread rng.
#[derive(Debug)]
pub struct SeededCidGenerator {
    rng: Pcg64Mcg,
}

impl SeededCidGenerator {
    /// Generator for one endpoint.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: Pcg64Mcg::seed_from_u64(seed),
        }
    }
}

impl ConnectionIdGenerator for SeededCidGenerator {
    fn generate_cid(&mut self) -> ConnectionId {
        let bytes = self.rng.next_u64().to_le_bytes();
        ConnectionId::new(&bytes[..CID_LEN])
    }

    fn cid_len(&self) -> usize {
        CID_LEN
    }

    fn cid_lifetime(&self) -> Option<Duration> {
        None
    }
}

/// A wall clock frozen at a fixed date, so address-validation tokens never depend on when the
/// simulation runs.
#[derive(Debug)]
pub struct FrozenClock;

impl TimeSource for FrozenClock {
    fn now(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000)
    }
}

/// HMAC key for stateless resets, derived from the seed.
pub fn reset_key(seed: u64, stream: u64) -> Arc<ring::hmac::Key> {
    Arc::new(ring::hmac::Key::new(
        ring::hmac::HMAC_SHA256,
        &seed_bytes(seed, stream),
    ))
}

/// Key for retry and address-validation tokens, derived from the seed.
pub fn token_key(seed: u64, stream: u64) -> Arc<ring::hkdf::Prk> {
    Arc::new(ring::hkdf::Prk::new_less_safe(
        ring::hkdf::HKDF_SHA256,
        &seed_bytes(seed, stream),
    ))
}
