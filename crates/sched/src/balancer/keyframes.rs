//! When the media's next keyframe is due, learned from the frame sizes alone.
//!
//! A keyframe is several times a predicted frame and comes at a fixed interval (the encoder's
//! group of pictures: every 2 s in the lab's source, in most real-time encoders every 1–10 s).
//! At 1.5× the media rate a 2 Mbit/s source's keyframe takes 105 ms to serialize against
//! 150 ms of slack, so any bulk queue in front of it makes it late; the balancer empties that
//! queue just before the keyframe is due instead of keeping a lower target all the time.

use std::collections::VecDeque;
use std::time::Duration;

/// A frame is a keyframe when it is at least this many times the mean of the frames of the
/// last second before it (the lab's keyframes are 5× a predicted frame, ±20 %).
pub(super) const KEYFRAME_SIZE_FACTOR: f64 = 2.5;

/// The largest frame an adaptive source is told to encode is never below this many times the
/// mean of the last second's frames, a fifth above [`KEYFRAME_SIZE_FACTOR`]: a keyframe held
/// at the limit is still told from the predicted frames around it (their size spread, and the
/// bytes a held keyframe leaves them).
pub(super) const KEYFRAME_VISIBLE_FACTOR: f64 = 3.0;

/// Keyframe intervals outside this range are not a group of pictures (a scene cut, a source
/// that changed its settings): no prediction.
const INTERVAL_RANGE: (Duration, Duration) = (Duration::from_millis(300), Duration::from_secs(10));

/// Two intervals in a row must agree within this share for the next to be predicted.
const INTERVAL_TOLERANCE: f64 = 0.1;

/// Frames the size mean is taken over.
const SIZE_WINDOW: Duration = Duration::from_secs(1);

/// The frames of `frames` ((capture time, bytes)) captured within [`SIZE_WINDOW`] before
/// `now`: how many, and their mean size (0 for none). The keyframe test compares with it, and
/// the frame limit stays above it (`KEYFRAME_VISIBLE_FACTOR`).
pub(super) fn recent_frames_mean(
    now: Duration,
    frames: impl IntoIterator<Item = (Duration, u64)>,
) -> (u64, f64) {
    let (count, sum) = frames
        .into_iter()
        .filter(|&(t, _)| t + SIZE_WINDOW > now)
        .fold((0u64, 0u64), |(n, total), (_, b)| (n + 1, total + b));
    (count, sum as f64 / count.max(1) as f64)
}

/// The keyframes seen. The frames before each come from the caller, which keeps them anyway.
#[derive(Debug, Clone, Default)]
pub(super) struct KeyframeClock {
    /// Capture times of the last three keyframes, oldest first.
    keyframes: VecDeque<Duration>,
}

impl KeyframeClock {
    /// A frame of `bytes` captured at `now`, after the frames `earlier` ((capture time,
    /// bytes), oldest first; those older than [`SIZE_WINDOW`] are not counted); whether it is
    /// a keyframe.
    pub(super) fn on_frame(
        &mut self,
        now: Duration,
        bytes: u64,
        earlier: impl IntoIterator<Item = (Duration, u64)>,
    ) -> bool {
        let (count, mean) = recent_frames_mean(now, earlier);
        let keyframe = count >= 3 && bytes as f64 >= KEYFRAME_SIZE_FACTOR * mean;
        if keyframe {
            if self.keyframes.len() == 3 {
                self.keyframes.pop_front();
            }
            self.keyframes.push_back(now);
        }
        keyframe
    }

    /// When the next keyframe is due and the interval it was predicted from: the last one
    /// plus the interval, if the last two intervals agree (or only one is known) and it is a
    /// plausible group of pictures.
    pub(super) fn next_due(&self) -> Option<(Duration, Duration)> {
        let n = self.keyframes.len();
        if n < 2 {
            return None;
        }
        let (last, before) = (self.keyframes[n - 1], self.keyframes[n - 2]);
        let interval = last - before;
        if interval < INTERVAL_RANGE.0 || interval > INTERVAL_RANGE.1 {
            return None;
        }
        if n == 3 {
            let previous = (before - self.keyframes[0]).as_secs_f64();
            if (interval.as_secs_f64() - previous).abs() > INTERVAL_TOLERANCE * previous {
                return None;
            }
        }
        Some((last + interval, interval))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// `clock` told of a frame of `bytes` at `now` after the frames in `history`, which it
    /// then joins.
    fn frame(
        clock: &mut KeyframeClock,
        history: &mut Vec<(Duration, u64)>,
        now: Duration,
        bytes: u64,
    ) -> bool {
        let keyframe = clock.on_frame(now, bytes, history.iter().copied());
        history.push((now, bytes));
        keyframe
    }

    /// 30 frames per second, 8 kB, a 40 kB keyframe every 60 frames from frame 0.
    fn fed(clock: &mut KeyframeClock, frames: u64) -> Vec<bool> {
        let mut history = Vec::new();
        (0..frames)
            .map(|i| {
                let bytes = if i % 60 == 0 { 40_000 } else { 8_000 };
                frame(
                    clock,
                    &mut history,
                    Duration::from_micros(i * 33_333),
                    bytes,
                )
            })
            .collect()
    }

    #[test]
    fn keyframes_are_found_by_size_and_the_next_is_due_an_interval_later() {
        let mut clock = KeyframeClock::default();
        let found = fed(&mut clock, 121);
        // Frame 0 has no frames before it to compare with; 60 and 120 are found.
        let keyframes: Vec<usize> = (0..found.len()).filter(|&i| found[i]).collect();
        assert_eq!(keyframes, vec![60, 120]);
        assert_eq!(
            clock.next_due(),
            Some((
                Duration::from_micros(180 * 33_333),
                Duration::from_micros(60 * 33_333)
            ))
        );
    }

    #[test]
    fn one_keyframe_or_irregular_ones_predict_nothing() {
        let mut clock = KeyframeClock::default();
        fed(&mut clock, 61);
        assert_eq!(clock.next_due(), None);
        // Keyframes at 2 s, 4 s and 4.5 s: the intervals disagree.
        let mut clock = KeyframeClock::default();
        let mut history = Vec::new();
        for t in (1_000..4_600).step_by(33) {
            let key = t == 2_023 || t == 4_003 || t == 4_498;
            frame(
                &mut clock,
                &mut history,
                MS(t),
                if key { 40_000 } else { 8_000 },
            );
        }
        assert_eq!(clock.keyframes.len(), 3);
        assert_eq!(clock.next_due(), None);
    }
}
