//! Per-capacity-step results of runs whose connections carry media or bulk applications: how
//! each application fared between two changes of the forward link's rate (\[Ruehl2024\]
//! evaluates its schedulers this way, one figure per capacity schedule).
//!
//! For each step: the link's capacity and utilization (bytes serialized ÷ capacity), each
//! application's goodput, and for media its frames and the frames that missed their deadline
//! (late or never delivered: a cancelled frame is as useless to the viewer as a late one), and
//! after a capacity drop how long the media took to recover.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use netsim::LinkConfig;
use sim::apps::media::{FrameRecord, MediaReport};
use sim::{AppSample, RunOutcome};

/// The media has recovered once its goodput over this window reaches
/// [`RECOVERY_SHARE`] of what it can get (its rate, or the capacity if lower).
pub const RECOVERY_WINDOW: Duration = Duration::from_millis(500);

/// Share of the attainable media rate that counts as recovered.
pub const RECOVERY_SHARE: f64 = 0.9;

/// One stretch of constant forward capacity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Period {
    /// Start, seconds since the start of the run.
    pub start_s: f64,
    /// End, seconds.
    pub end_s: f64,
    /// Forward bottleneck rate, bit/s.
    pub capacity_bps: f64,
    /// Bytes the bottleneck serialized × 8 ÷ (capacity × length); null when the backend did
    /// not sample the link.
    pub utilization: Option<f64>,
    /// Each application, by name (`flow/app` when several flows share a name).
    pub apps: BTreeMap<String, PeriodApp>,
}

/// One application in one period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeriodApp {
    /// "media", "bulk", "perf".
    pub kind: String,
    /// Bytes received in order during the period × 8 ÷ its length, bit/s.
    pub goodput_bps: f64,
    /// Media: frames captured during the period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<u64>,
    /// Media: frames captured during the period that did not arrive by their deadline (late
    /// or never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_frames: Option<u64>,
    /// Media, in a period that starts with a capacity drop: seconds from the drop until the
    /// media's goodput over [`RECOVERY_WINDOW`] first reaches [`RECOVERY_SHARE`] of
    /// min(media rate, capacity); null if it never did within the period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_s: Option<Option<f64>>,
}

/// The forward link's constant-rate stretches within `[0, end)`: (start, end, rate).
pub fn capacity_steps(link: &LinkConfig, end: Duration) -> Vec<(Duration, Duration, u64)> {
    let mut changes: Vec<(Duration, u64)> = vec![(Duration::ZERO, link.rate_bps)];
    for step in &link.schedule {
        if let Some(rate) = step.rate_bps
            && step.at < end
        {
            if changes.last().is_some_and(|&(at, _)| at == step.at) {
                changes.pop();
            }
            if changes.last().is_none_or(|&(_, r)| r != rate) {
                changes.push((step.at, rate));
            }
        }
    }
    changes
        .iter()
        .enumerate()
        .map(|(i, &(at, rate))| {
            let until = changes.get(i + 1).map_or(end, |&(next, _)| next);
            (at, until, rate)
        })
        .filter(|&(at, until, _)| until > at)
        .collect()
}

/// Bytes `app` of `flow` had delivered at the last sample at or before `t` (0 before any).
pub fn delivered_at(samples: &[AppSample], flow: usize, app: usize, t: Duration) -> u64 {
    samples
        .iter()
        .rfind(|s| s.flow == flow && s.app == app && s.t <= t)
        .map_or(0, |s| s.delivered_bytes)
}

/// The periods of a run, or none when no flow has a media or bulk application.
pub fn periods(outcome: &RunOutcome, forward: &LinkConfig) -> Vec<Period> {
    let has_media_or_bulk = outcome
        .flows
        .iter()
        .flat_map(|f| &f.apps)
        .any(|a| a.kind == "media" || a.kind == "bulk");
    if !has_media_or_bulk {
        return Vec::new();
    }
    let end = outcome.end_time;
    let steps = capacity_steps(forward, end);
    let serialized_at = |t: Duration| {
        outcome
            .link_samples
            .iter()
            .rfind(|s| s.t <= t)
            .map_or(0, |s| s.forward_serialized_bytes)
    };
    let mut name_count: BTreeMap<&str, usize> = BTreeMap::new();
    for app in outcome.flows.iter().flat_map(|f| &f.apps) {
        *name_count.entry(&app.name).or_default() += 1;
    }
    let mut out = Vec::with_capacity(steps.len());
    for (i, &(from, to, rate_bps)) in steps.iter().enumerate() {
        let length = (to - from).as_secs_f64();
        let capacity_bps = rate_bps as f64;
        let utilization = (!outcome.link_samples.is_empty()).then(|| {
            (serialized_at(to) - serialized_at(from)) as f64 * 8.0 / (capacity_bps * length)
        });
        let drop = i > 0 && rate_bps < steps[i - 1].2;
        let mut apps = BTreeMap::new();
        for (f, flow) in outcome.flows.iter().enumerate() {
            for (a, app) in flow.apps.iter().enumerate() {
                let bytes = delivered_at(&outcome.app_samples, f, a, to)
                    - delivered_at(&outcome.app_samples, f, a, from);
                let mut entry = PeriodApp {
                    kind: app.kind.clone(),
                    goodput_bps: bytes as f64 * 8.0 / length,
                    frames: None,
                    late_frames: None,
                    recovery_s: None,
                };
                if let Some(media) = MediaReport::of(app) {
                    let (frames, late) = frames_in(&media, from, to, end);
                    entry.frames = Some(frames);
                    entry.late_frames = Some(late);
                    if drop {
                        let attainable = (media.bitrate_bps as f64).min(capacity_bps);
                        entry.recovery_s =
                            Some(recovery(&outcome.app_samples, (f, a), from, to, attainable));
                    }
                }
                let key = if name_count[app.name.as_str()] > 1 {
                    format!("{}/{}", flow.name, app.name)
                } else {
                    app.name.clone()
                };
                apps.insert(key, entry);
            }
        }
        out.push(Period {
            start_s: from.as_secs_f64(),
            end_s: to.as_secs_f64(),
            capacity_bps,
            utilization,
            apps,
        });
    }
    out
}

/// The frames of `media` a period counts: captured in `[from, to)` and not within one
/// deadline of the end of the run (they could not have arrived); and which arrived on time.
struct FrameWindow {
    from: Duration,
    to: Duration,
    horizon: Duration,
    deadline: Duration,
}

impl FrameWindow {
    fn new(media: &MediaReport, from: Duration, to: Duration, run_end: Duration) -> FrameWindow {
        let deadline = media.deadline();
        FrameWindow {
            from,
            to,
            horizon: run_end.saturating_sub(deadline),
            deadline,
        }
    }

    fn counts(&self, captured_at: Duration) -> bool {
        captured_at >= self.from && captured_at < self.to && captured_at < self.horizon
    }

    fn on_time(&self, frame: &FrameRecord) -> bool {
        frame.delay() <= self.deadline
    }
}

/// Frames captured in `[from, to)` and how many of them missed their deadline. Frames captured
/// within one deadline of the end of the run are left out: they could not have arrived.
pub fn frames_in(
    media: &MediaReport,
    from: Duration,
    to: Duration,
    run_end: Duration,
) -> (u64, u64) {
    let window = FrameWindow::new(media, from, to, run_end);
    let frames = (0..media.frames_sent)
        .filter(|&seq| window.counts(media.capture_time(seq)))
        .count() as u64;
    let on_time = media
        .frames
        .iter()
        .filter(|f| window.counts(f.captured_at) && window.on_time(f))
        .count() as u64;
    (frames, frames.saturating_sub(on_time))
}

/// Of the frames [`frames_in`] counts, those a decoder could show: on time, and so was the
/// keyframe they depend on (the last one captured before them; a frame whose keyframe is
/// late or lost shows nothing until the next keyframe, whatever its own delay). Where the
/// keyframe interval is not known, the frames on time.
pub fn decodable_in(media: &MediaReport, from: Duration, to: Duration, run_end: Duration) -> u64 {
    let window = FrameWindow::new(media, from, to, run_end);
    let on_time = media
        .frames
        .iter()
        .filter(|f| window.counts(f.captured_at) && window.on_time(f));
    let Some(interval) = std::num::NonZeroU64::new(u64::from(media.keyframe_interval)) else {
        return on_time.count() as u64;
    };
    let keyframe_of = |seq: u64| seq - seq % interval;
    let keyframes_on_time: std::collections::BTreeSet<u64> = media
        .frames
        .iter()
        .filter(|f| keyframe_of(f.seq) == f.seq && window.on_time(f))
        .map(|f| f.seq)
        .collect();
    on_time
        .filter(|f| keyframes_on_time.contains(&keyframe_of(f.seq)))
        .count() as u64
}

/// Seconds from `from` until the app's goodput over [`RECOVERY_WINDOW`] first reaches
/// [`RECOVERY_SHARE`] × `attainable_bps`; None if not before `to`.
fn recovery(
    samples: &[AppSample],
    (flow, app): (usize, usize),
    from: Duration,
    to: Duration,
    attainable_bps: f64,
) -> Option<f64> {
    let series: Vec<(Duration, u64)> = samples
        .iter()
        .filter(|s| s.flow == flow && s.app == app)
        .map(|s| (s.t, s.delivered_bytes))
        .collect();
    first_window_reaching(
        &series,
        from,
        to,
        RECOVERY_WINDOW,
        RECOVERY_SHARE * attainable_bps,
    )
    .map(|t| (t - from).as_secs_f64())
}

/// The first point `t` of a cumulative byte series (`(time, bytes so far)`, in time order)
/// within `[from, to]` at which the rate over a window of at least `window`, back to a point
/// no earlier than `from`, reaches `threshold_bps`; None if none does. The window starts at
/// `from` or later, so bytes counted before a change (a capacity step) never count after it.
/// The one definition behind the media's recovery after a drop and the ramp after a rise.
pub fn first_window_reaching(
    points: &[(Duration, u64)],
    from: Duration,
    to: Duration,
    window: Duration,
    threshold_bps: f64,
) -> Option<Duration> {
    let series: Vec<&(Duration, u64)> = points
        .iter()
        .filter(|&&(t, _)| t >= from && t <= to)
        .collect();
    let mut back = 0;
    for (i, &&(t, bytes)) in series.iter().enumerate() {
        // The newest point at least `window` before this one.
        while back + 1 < i && series[back + 1].0 + window <= t {
            back += 1;
        }
        let (t0, bytes0) = *series[back];
        let span = t - t0;
        if span < window {
            continue;
        }
        if (bytes - bytes0) as f64 * 8.0 / span.as_secs_f64() >= threshold_bps {
            return Some(t);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsim::ScheduleStep;

    fn s(secs: u64) -> Duration {
        Duration::from_secs(secs)
    }

    #[test]
    fn steps_follow_the_rate_schedule_and_skip_non_rate_changes() {
        let mut link = LinkConfig::new(2_000_000, Duration::from_millis(25));
        for (at, rate) in [(120, Some(4_000_000)), (150, None), (180, Some(600_000))] {
            link.schedule.push(ScheduleStep {
                at: s(at),
                rate_bps: rate,
                delay: rate.is_none().then_some(Duration::from_millis(30)),
                loss: None,
            });
        }
        assert_eq!(
            capacity_steps(&link, s(200)),
            vec![
                (s(0), s(120), 2_000_000),
                (s(120), s(180), 4_000_000),
                (s(180), s(200), 600_000)
            ]
        );
        // A step after the end of the run is not a period.
        assert_eq!(
            capacity_steps(&link, s(100)),
            vec![(s(0), s(100), 2_000_000)]
        );
    }

    #[test]
    fn recovery_is_the_first_full_window_at_the_attainable_rate() {
        // 100 ms samples; the app delivers nothing for 1 s after the drop at 10 s, then
        // 1 Mbit/s (12 500 B per 100 ms).
        let mut samples = Vec::new();
        let mut bytes = 0;
        for tick in 100..=150 {
            let t = Duration::from_millis(tick * 100);
            if t > s(11) {
                bytes += 12_500;
            }
            samples.push(AppSample {
                t,
                flow: 0,
                app: 0,
                delivered_bytes: bytes,
            });
        }
        // The window (t − 0.5 s, t] is all at 1 Mbit/s first at t = 11.5 s.
        assert_eq!(
            recovery(&samples, (0, 0), s(10), s(15), 1_000_000.0),
            Some(1.5)
        );
        assert_eq!(recovery(&samples, (0, 0), s(10), s(15), 2_000_000.0), None);
    }

    /// Ten frames at 10 fps from 0 s, a keyframe every 4, deadline 100 ms; each frame's delay
    /// in ms (None: never arrived).
    fn media_with_delays(delays_ms: [Option<u64>; 10], keyframe_interval: u32) -> MediaReport {
        let frames = delays_ms
            .iter()
            .enumerate()
            .filter_map(|(seq, delay)| {
                let captured_at = Duration::from_millis(100 * seq as u64);
                delay.map(|d| FrameRecord {
                    seq: seq as u64,
                    captured_at,
                    received_at: captured_at + Duration::from_millis(d),
                    bytes: 1000,
                })
            })
            .collect();
        MediaReport {
            frames_sent: 10,
            deadline_ms: 100.0,
            frames,
            fps: 10,
            keyframe_interval,
            ..MediaReport::default()
        }
    }

    #[test]
    fn a_frame_is_decodable_when_it_and_its_keyframe_are_on_time() {
        // Keyframes 0, 4 and 8. Keyframe 4 is late, so 5–7 show nothing however early they
        // come; frame 1 is late itself; keyframe 8 is lost, and 9 with it.
        let delays = [
            Some(60),
            Some(120),
            Some(50),
            Some(100),
            Some(101),
            Some(40),
            Some(40),
            Some(40),
            None,
            Some(40),
        ];
        let media = media_with_delays(delays, 4);
        let end = s(60);
        assert_eq!(
            decodable_in(&media, s(0), s(2), end),
            3,
            "frames 0, 2 and 3"
        );
        assert_eq!(frames_in(&media, s(0), s(2), end), (10, 3));
        // Within a period: frames 2 and 3 captured in [0.2 s, 0.6 s).
        let from = Duration::from_millis(200);
        let to = Duration::from_millis(600);
        assert_eq!(decodable_in(&media, from, to, end), 2);
        // Without a keyframe interval, every frame on time.
        let unknown = media_with_delays(delays, 0);
        assert_eq!(decodable_in(&unknown, s(0), s(2), end), 7);
    }
}
