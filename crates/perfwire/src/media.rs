//! The media application's shared facts, for the simulator's endpoints and the real-time ones
//! alike: what a frame stream carries ([`FrameHeader`], then [`crate::pattern`] bytes), the
//! synthetic video source that decides frame sizes and capture times ([`VideoModel`]), the
//! error code of a cancelled frame ([`FRAME_EXPIRED`]), and what a receiver measures
//! ([`FrameRecord`], [`DelayPercentiles`]).
//!
//! One QUIC unidirectional stream per frame: the 20-byte header, then `size − 20` pattern
//! bytes (pattern offset 0 at the first payload byte), then FIN.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Bytes of the frame header: sequence number (8), capture time in ns (8), frame size (4), all
/// big-endian.
pub const FRAME_HEADER_BYTES: u64 = 20;

/// Error code of a frame stream reset because the frame cannot arrive in time.
pub const FRAME_EXPIRED: u32 = 0x4c41; // "LA": late

/// The header at the start of every frame stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Sequence number (0 for the first frame).
    pub seq: u64,
    /// Capture time, since the sender's epoch (the start of the run in the simulator; see the
    /// real-time endpoints for how the receiver maps it to its own clock).
    pub captured_at: Duration,
    /// Size of the whole frame, header included, bytes.
    pub size_bytes: u32,
}

impl FrameHeader {
    /// The 20 bytes on the wire. Capture times beyond `u64::MAX` ns (584 years) saturate.
    pub fn encode(&self) -> [u8; FRAME_HEADER_BYTES as usize] {
        let mut out = [0u8; FRAME_HEADER_BYTES as usize];
        out[0..8].copy_from_slice(&self.seq.to_be_bytes());
        let nanos = u64::try_from(self.captured_at.as_nanos()).unwrap_or(u64::MAX);
        out[8..16].copy_from_slice(&nanos.to_be_bytes());
        out[16..20].copy_from_slice(&self.size_bytes.to_be_bytes());
        out
    }

    /// The header those 20 bytes describe (any 20 bytes are a header; whether it is
    /// plausible — a size of at least the header — is the receiver's check).
    pub fn decode(bytes: &[u8; FRAME_HEADER_BYTES as usize]) -> FrameHeader {
        let word = |range: std::ops::Range<usize>| {
            let mut word = [0u8; 8];
            word[8 - range.len()..].copy_from_slice(&bytes[range]);
            u64::from_be_bytes(word)
        };
        FrameHeader {
            seq: word(0..8),
            captured_at: Duration::from_nanos(word(8..16)),
            size_bytes: word(16..20) as u32,
        }
    }
}

/// A synthetic video source in the spirit of RFC 8593: a keyframe every `keyframe_interval`
/// frames, `keyframe_ratio` times the size of a P-frame, each size scaled by a uniform jitter
/// of ±`jitter`, the P-frame size chosen so the mean rate is the target bitrate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VideoModel {
    /// Frames per second.
    pub fps: u32,
    /// A keyframe every this many frames (the first frame is one).
    pub keyframe_interval: u32,
    /// Keyframe size / P-frame size.
    pub keyframe_ratio: f64,
    /// Each frame's size is scaled by a uniform factor in [1 − jitter, 1 + jitter].
    pub jitter: f64,
}

/// A media source's value out of range: the key as a scenario table writes it (`bitrate`,
/// `fps`, `keyframe_interval`, `keyframe_ratio`, `jitter`, `deadline`) and what is wrong, for
/// the caller to place (a table's path, a flag, a session request's application).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct MediaValueError {
    /// The key.
    pub field: &'static str,
    /// What is wrong with its value.
    pub problem: String,
}

fn out_of_range(field: &'static str, problem: impl Into<String>) -> MediaValueError {
    MediaValueError {
        field,
        problem: problem.into(),
    }
}

/// Frames per second a media source may have.
pub const FPS_RANGE: std::ops::RangeInclusive<u32> = 1..=240;

/// Keyframe size / P-frame size a media source may have.
pub const KEYFRAME_RATIO_RANGE: std::ops::RangeInclusive<f64> = 1.0..=100.0;

/// Longest deadline a media source may have.
pub const MAX_DEADLINE: Duration = Duration::from_secs(24 * 3600);

/// The limits every media source is held to, wherever its parameters come from (a scenario
/// file, `satquic get`'s flags, a session request off the network): a source at `bitrate_bps`
/// with frames from `video`.
pub fn check_source(bitrate_bps: u64, video: &VideoModel) -> Result<(), MediaValueError> {
    if bitrate_bps == 0 {
        return Err(out_of_range("bitrate", "must be greater than zero"));
    }
    let fps = video.fps;
    if !FPS_RANGE.contains(&fps) {
        return Err(out_of_range("fps", format!("{fps}: expected 1 to 240")));
    }
    if video.keyframe_interval == 0 {
        return Err(out_of_range(
            "keyframe_interval",
            "must be at least 1 frame",
        ));
    }
    let ratio = video.keyframe_ratio;
    if !(ratio.is_finite() && KEYFRAME_RATIO_RANGE.contains(&ratio)) {
        return Err(out_of_range(
            "keyframe_ratio",
            format!("{ratio}: expected 1 to 100"),
        ));
    }
    let jitter = video.jitter;
    if !(jitter.is_finite() && (0.0..1.0).contains(&jitter)) {
        return Err(out_of_range(
            "jitter",
            format!("{jitter}: expected at least 0 and below 1"),
        ));
    }
    Ok(())
}

/// The limits of a media deadline (the same for every source).
pub fn check_deadline(deadline: Duration) -> Result<(), MediaValueError> {
    if deadline.is_zero() || deadline > MAX_DEADLINE {
        return Err(out_of_range(
            "deadline",
            "must be greater than zero and at most 24 h",
        ));
    }
    Ok(())
}

impl VideoModel {
    /// The size of frame `seq` when the encoder runs at `bitrate_bps`, bytes (at least a header
    /// and one payload byte); `unit` is the frame's uniform random draw in [0, 1) (one draw per
    /// frame, so two sources with the same random stream make the same frames).
    pub fn frame_bytes(&self, seq: u64, bitrate_bps: u64, unit: f64) -> u64 {
        let interval = f64::from(self.keyframe_interval.max(1));
        let mean = bitrate_bps as f64 / 8.0 / f64::from(self.fps.max(1));
        let p_frame = mean * interval / (interval - 1.0 + self.keyframe_ratio);
        let base = if self.position_in_interval(seq).0 == 0 {
            p_frame * self.keyframe_ratio
        } else {
            p_frame
        };
        let factor = 1.0 + self.jitter * (2.0 * unit - 1.0);
        ((base * factor).round() as u64).clamp(FRAME_HEADER_BYTES + 1, u64::from(u32::MAX))
    }

    /// Where frame `seq` is in its group of pictures: (frames since the group's keyframe, 0
    /// for the keyframe itself; frames in a group).
    pub fn position_in_interval(&self, seq: u64) -> (u64, u64) {
        let interval = u64::from(self.keyframe_interval.max(1));
        (seq % interval, interval)
    }

    /// When frame `seq` is captured, after frame 0.
    pub fn capture_offset(&self, seq: u64) -> Duration {
        capture_offset(self.fps, seq)
    }
}

/// When frame `seq` of a source at `fps` is captured, after frame 0: the one schedule the
/// source, the periods' frame counts and `frames.csv` share.
pub fn capture_offset(fps: u32, seq: u64) -> Duration {
    Duration::from_secs_f64(seq as f64 / f64::from(fps.max(1)))
}

/// One delivered frame.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FrameRecord {
    /// Sequence number.
    pub seq: u64,
    /// Capture time, since the start of the run.
    pub captured_at: Duration,
    /// Last byte received, since the start of the run.
    pub received_at: Duration,
    /// Frame size, bytes.
    pub bytes: u64,
}

impl FrameRecord {
    /// One-way delay: capture → last byte.
    pub fn delay(&self) -> Duration {
        self.received_at.saturating_sub(self.captured_at)
    }
}

/// The receiver's verdict on its frames: how late they were (the percentiles of their delays)
/// and how many missed `deadline`. One computation for the simulator's media report and both
/// ends of a real-time session.
pub fn frame_delays(frames: &[FrameRecord], deadline: Duration) -> (DelayPercentiles, u64) {
    let delays_ms: Vec<f64> = frames
        .iter()
        .map(|f| f.delay().as_secs_f64() * 1e3)
        .collect();
    let late = frames.iter().filter(|f| f.delay() > deadline).count() as u64;
    (DelayPercentiles::of(&delays_ms), late)
}

/// Frame delay percentiles, milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DelayPercentiles {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl DelayPercentiles {
    /// Nearest-rank percentiles of `delays_ms` (all zero when empty).
    pub fn of(delays_ms: &[f64]) -> DelayPercentiles {
        if delays_ms.is_empty() {
            return DelayPercentiles::default();
        }
        let mut sorted = delays_ms.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank =
            |p: f64| sorted[((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
        DelayPercentiles {
            p50: rank(0.50),
            p95: rank(0.95),
            p99: rank(0.99),
            max: sorted[sorted.len() - 1],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_names_its_key() {
        let video = VideoModel {
            fps: 30,
            keyframe_interval: 60,
            keyframe_ratio: 5.0,
            jitter: 0.2,
        };
        assert_eq!(check_source(2_000_000, &video), Ok(()));
        let field =
            |bitrate_bps, video: VideoModel| check_source(bitrate_bps, &video).unwrap_err().field;
        assert_eq!(field(0, video), "bitrate");
        for (fps, ok) in [(0, false), (1, true), (240, true), (241, false)] {
            assert_eq!(
                check_source(1, &VideoModel { fps, ..video }).is_ok(),
                ok,
                "{fps}"
            );
        }
        assert_eq!(
            field(
                1,
                VideoModel {
                    keyframe_interval: 0,
                    ..video
                }
            ),
            "keyframe_interval"
        );
        for ratio in [0.99, 100.01, f64::NAN, f64::INFINITY] {
            assert_eq!(
                field(
                    1,
                    VideoModel {
                        keyframe_ratio: ratio,
                        ..video
                    }
                ),
                "keyframe_ratio"
            );
        }
        for jitter in [-0.01, 1.0, f64::NAN] {
            assert_eq!(field(1, VideoModel { jitter, ..video }), "jitter");
        }
        assert!(check_deadline(Duration::from_millis(1)).is_ok());
        assert!(check_deadline(MAX_DEADLINE).is_ok());
        for deadline in [Duration::ZERO, MAX_DEADLINE + Duration::from_nanos(1)] {
            assert_eq!(check_deadline(deadline).unwrap_err().field, "deadline");
        }
    }

    #[test]
    fn header_round_trips_and_is_big_endian() {
        let header = FrameHeader {
            seq: 258,
            captured_at: Duration::from_nanos(0x0102_0304_0506_0708),
            size_bytes: 0x0a0b_0c0d,
        };
        let bytes = header.encode();
        assert_eq!(&bytes[0..8], &[0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(&bytes[8..16], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&bytes[16..20], &[0x0a, 0x0b, 0x0c, 0x0d]);
        assert_eq!(FrameHeader::decode(&bytes), header);
        // Any 20 bytes decode (the receiver judges plausibility).
        let junk = FrameHeader::decode(&[0xff; 20]);
        assert_eq!(junk.size_bytes, u32::MAX);
    }

    #[test]
    fn frame_sizes_average_to_the_bitrate() {
        let model = VideoModel {
            fps: 30,
            keyframe_interval: 60,
            keyframe_ratio: 5.0,
            jitter: 0.0,
        };
        let total: u64 = (0..600)
            .map(|seq| model.frame_bytes(seq, 2_000_000, 0.5))
            .sum();
        // 600 frames at 30 fps = 20 s at 2 Mbit/s = 5 MB.
        assert!((total as f64 - 5e6).abs() < 5e6 * 0.001, "{total}");
        let key = model.frame_bytes(0, 2_000_000, 0.5) as f64;
        let p = model.frame_bytes(1, 2_000_000, 0.5) as f64;
        assert!((key / p - 5.0).abs() < 0.01);
        // Tiny rates still give a header and a byte.
        assert_eq!(model.frame_bytes(1, 1, 0.0), FRAME_HEADER_BYTES + 1);
        assert_eq!(model.capture_offset(45), Duration::from_millis(1500));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let delays: Vec<f64> = (1..=100).map(f64::from).collect();
        let p = DelayPercentiles::of(&delays);
        assert_eq!((p.p50, p.p95, p.p99, p.max), (50.0, 95.0, 99.0, 100.0));
        assert_eq!(DelayPercentiles::of(&[]), DelayPercentiles::default());
    }
}
