//! The bytes every transfer carries, so receivers can verify data by offset instead of just
//! counting it — out-of-order reads included.
//!
//! Byte `i` of a transfer is `TABLE[i mod PERIOD]`. The period is prime, so no packet or
//! chunk size aligns with it and a misplaced chunk is caught. The table is stored twice in a row,
//! so any run of up to `PERIOD` bytes is one contiguous slice (compared with `memcmp`).

use std::sync::OnceLock;

use bytes::Bytes;

/// Length of the repeating pattern, bytes (the largest prime below 2¹⁶).
pub const PERIOD: usize = 65_521;

fn table() -> &'static Bytes {
    static TABLE: OnceLock<Bytes> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut state: u32 = 0x2545_f491;
        let once: Vec<u8> = (0..PERIOD)
            .map(|_| {
                // xorshift32
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state >> 24) as u8
            })
            .collect();
        let mut twice = once.clone();
        twice.extend_from_slice(&once);
        Bytes::from(twice)
    })
}

/// Pattern bytes for `[offset, offset + len)`, with `len <= PERIOD`; shares the table, no copy.
pub fn chunk(offset: u64, len: usize) -> Bytes {
    debug_assert!(len <= PERIOD);
    let start = (offset % PERIOD as u64) as usize;
    table().slice(start..start + len)
}

/// Whether `data` is exactly the pattern starting at `offset`.
pub fn matches(offset: u64, data: &[u8]) -> bool {
    let mut offset = offset;
    data.chunks(PERIOD).all(|piece| {
        let start = (offset % PERIOD as u64) as usize;
        offset += piece.len() as u64;
        table()[start..start + piece.len()] == *piece
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_wrap_around_the_period() {
        let whole: Vec<u8> = (0..3 * PERIOD as u64)
            .step_by(1000)
            .flat_map(|o| chunk(o, 1000).to_vec())
            .collect();
        assert!(matches(0, &whole));
        assert!(matches(PERIOD as u64 - 10, &chunk(PERIOD as u64 - 10, 100)));
    }

    #[test]
    fn a_misplaced_or_corrupted_chunk_is_detected() {
        let data = chunk(5000, 1200);
        assert!(matches(5000, &data));
        assert!(!matches(5001, &data));
        assert!(!matches(5000 + PERIOD as u64 * 2 + 1200, &data));
        let mut corrupted = data.to_vec();
        corrupted[600] ^= 1;
        assert!(!matches(5000, &corrupted));
    }
}
