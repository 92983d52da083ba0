//! Which byte ranges of a stream have arrived, and how long the in-order prefix is.
//!
//! Unordered reads hand out chunks in any order; goodput counts only the contiguous prefix
//! (what an application reading in order would have), so we track both.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent received ranges beyond the contiguous prefix.
#[derive(Debug, Default, Clone)]
pub struct ReceivedRanges {
    prefix: u64,
    /// start → end (exclusive), all starting after `prefix`.
    beyond: BTreeMap<u64, u64>,
    total: u64,
}

impl ReceivedRanges {
    /// Bytes received contiguously from offset 0.
    pub fn prefix(&self) -> u64 {
        self.prefix
    }

    /// Distinct bytes received anywhere.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether the ranges beyond the prefix are empty.
    pub fn is_contiguous(&self) -> bool {
        self.beyond.is_empty()
    }

    /// Records `[start, end)`; returns how many of its bytes are new.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if end <= self.prefix {
            return 0;
        }
        let start = start.max(self.prefix);
        if start == self.prefix && self.beyond.is_empty() {
            self.prefix = end;
            self.total += end - start;
            return end - start;
        }
        // Merge with every overlapping or adjacent range.
        let (mut new_start, mut new_end) = (start, end);
        let mut covered = 0;
        let overlapping: Vec<(u64, u64)> = self
            .beyond
            .range(..=end)
            .rev()
            .take_while(|&(_, &e)| e >= start)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in overlapping {
            self.beyond.remove(&s);
            covered += e.min(end).saturating_sub(s.max(start));
            new_start = new_start.min(s);
            new_end = new_end.max(e);
        }
        let added = (end - start) - covered;
        self.total += added;
        if new_start <= self.prefix {
            self.prefix = new_end;
        } else {
            self.beyond.insert(new_start, new_end);
        }
        added
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_chunks_extend_the_prefix() {
        let mut r = ReceivedRanges::default();
        assert_eq!(r.insert(0, 100), 100);
        assert_eq!(r.insert(100, 250), 150);
        assert_eq!((r.prefix(), r.total()), (250, 250));
    }

    #[test]
    fn a_hole_holds_the_prefix_until_filled() {
        let mut r = ReceivedRanges::default();
        r.insert(0, 100);
        r.insert(200, 300);
        r.insert(400, 500);
        assert_eq!((r.prefix(), r.total()), (100, 300));
        r.insert(100, 200);
        assert_eq!(r.prefix(), 300);
        assert_eq!(r.insert(300, 400), 100);
        assert_eq!((r.prefix(), r.total()), (500, 500));
        assert!(r.is_contiguous());
    }

    #[test]
    fn duplicates_and_overlaps_count_once() {
        let mut r = ReceivedRanges::default();
        r.insert(100, 200);
        assert_eq!(r.insert(150, 250), 50);
        assert_eq!(r.insert(100, 250), 0);
        assert_eq!(r.insert(50, 300), 100);
        assert_eq!(r.insert(0, 50), 50);
        assert_eq!((r.prefix(), r.total()), (300, 300));
    }
}
