//! Seeded randomness: one master seed, independent streams per link and purpose.

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// SplitMix64 finalizer: spreads a (seed, stream) pair over the whole 64-bit space so that
/// neighbouring seeds give unrelated streams.
pub fn derive_seed(master: u64, stream: u64) -> u64 {
    let mut z = master ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A deterministic uniform source for loss and AQM decisions.
#[derive(Debug, Clone)]
pub struct Uniform(Pcg64Mcg);

impl Uniform {
    /// A stream derived from `master` and a stream label.
    pub fn new(master: u64, stream: u64) -> Self {
        Self(Pcg64Mcg::seed_from_u64(derive_seed(master, stream)))
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn next_f64(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p` (exactly never for 0, always for 1).
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && (p >= 1.0 || self.next_f64() < p)
    }
}
