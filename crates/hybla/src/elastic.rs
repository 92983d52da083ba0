//! Whether more window still buys more delivery rate: the link's answer to the flow's own
//! growth, read from the delivery rate and the window over spans of several rounds.
//!
//! Where jitter makes every delay reading noise (a LEO path whose scheduler holds each delay
//! for 10 ms), the queue cannot say whether the link is full. The rate can: below the
//! bottleneck's capacity a window that grows by a tenth delivers about a tenth more; on a
//! full link it only lengthens the queue and the rate stays where it was. BBR asks the same
//! question of its pacing gain to find the bottleneck's rate (\[BBRv3\]: a round at 1.25 × the
//! estimate that delivers no more ends the probe).

use std::time::Duration;

/// A span covers at least this many base RTTs ...
pub(crate) const SPAN_ROUNDS: u32 = 4;

/// ... and at least this long: jitter held for 10 ms swings the rate of a 40 ms round by a
/// third, and of 200 ms by a few percent.
pub(crate) const MIN_SPAN: Duration = Duration::from_millis(200);

/// The window must have grown by this share since the last span compared before the two are
/// compared: a smaller step is lost in the rate's noise.
pub(crate) const MIN_WINDOW_GROWTH: f64 = 0.1;

/// The link has room when the rate grew by at least this share of the window's relative
/// growth (1: every byte of window more was delivered per RTT; 0: none was). At a full link
/// shared with another flow the share is 1 − the flow's own share of the link. On
/// `leo-starlink` 0.5 / 0.6 / 0.75 gave 84.3 / 83.9 / 82.2 Mbit/s (seeds 1–4, growth 0.025
/// per round) and 62.8 / 64.5 / 64.4 % of the ceiling in the 30 ms, 10 ms jitter cell.
pub(crate) const MIN_ELASTICITY: f64 = 0.6;

/// One span's delivery rate and mean window.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    rate_bytes_per_s: f64,
    window_bytes: f64,
}

/// The measurement: spans of window-limited sending, each compared with the last one the
/// window had clearly grown from.
#[derive(Debug, Clone, Default)]
pub(crate) struct ElasticWindow {
    /// Start of the current span, its delivered bytes, and the sum and count of the window
    /// samples taken in it.
    open: Option<(Duration, u64, f64, u32)>,
    /// The span the next one is compared with.
    anchor: Option<Span>,
    /// The last comparison's answer.
    elastic: bool,
}

impl ElasticWindow {
    /// The window was reduced: what it reached before says nothing about the smaller one.
    pub(crate) fn restart(&mut self) {
        self.open = None;
        self.anchor = None;
        self.elastic = false;
    }

    /// One ACK frame at `now`: `delivered_bytes` newly acknowledged, the window after it.
    /// `clean` is false where the span says nothing about the window's reach (the application
    /// limited sending): the span is discarded.
    pub(crate) fn on_frame(
        &mut self,
        now: Duration,
        base_rtt: Duration,
        delivered_bytes: u64,
        window_bytes: u64,
        clean: bool,
    ) {
        if !clean {
            self.open = None;
            return;
        }
        let (start, bytes, sum, count) = self.open.get_or_insert((now, 0, 0.0, 0));
        *bytes += delivered_bytes;
        *sum += window_bytes as f64;
        *count += 1;
        let length = now.saturating_sub(*start);
        if length < MIN_SPAN.max(base_rtt * SPAN_ROUNDS) {
            return;
        }
        let span = Span {
            rate_bytes_per_s: *bytes as f64 / length.as_secs_f64(),
            window_bytes: *sum / f64::from(*count),
        };
        self.open = None;
        self.close(span);
    }

    fn close(&mut self, span: Span) {
        let Some(anchor) = self.anchor else {
            self.anchor = Some(span);
            return;
        };
        if span.window_bytes < anchor.window_bytes {
            // The window fell without a reduction the caller saw: compare from here.
            self.anchor = Some(span);
            return;
        }
        let window_growth = span.window_bytes / anchor.window_bytes - 1.0;
        if window_growth < MIN_WINDOW_GROWTH {
            return;
        }
        let rate_growth = span.rate_bytes_per_s / anchor.rate_bytes_per_s.max(1.0) - 1.0;
        let followed = rate_growth >= MIN_ELASTICITY * window_growth;
        // One comparison decides: waiting for a second to agree (against the rate's noise)
        // cost leo-starlink 4–8 Mbit/s, and keeping the answer through one that disagreed
        // took more queue drops on the 30 ms jitter paths.
        self.elastic = followed;
        self.anchor = Some(span);
    }

    /// Whether the last comparison found the rate following the window.
    pub(crate) fn elastic(&self) -> bool {
        self.elastic
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Duration = Duration::from_millis(40);

    /// Feeds one span of 200 ms at `rate` with a constant `window`, one frame per 10 ms.
    fn span(e: &mut ElasticWindow, t: &mut Duration, rate_bytes_per_s: f64, window: u64) {
        let step = Duration::from_millis(10);
        let per_frame = (rate_bytes_per_s * step.as_secs_f64()) as u64;
        for _ in 0..=20 {
            e.on_frame(*t, BASE, per_frame, window, true);
            *t += step;
        }
    }

    #[test]
    fn a_window_that_grows_with_the_rate_is_elastic_and_one_that_only_queues_is_not() {
        let mut e = ElasticWindow::default();
        let mut t = Duration::ZERO;
        span(&mut e, &mut t, 5e6, 200_000);
        assert!(!e.elastic());
        // 20 % more window, 20 % more rate: below the capacity.
        span(&mut e, &mut t, 6e6, 240_000);
        assert!(e.elastic());
        // 20 % more window, 5 % more rate: the link is full (5 < 0.6 × 20).
        span(&mut e, &mut t, 6.3e6, 288_000);
        assert!(!e.elastic());
    }

    #[test]
    fn small_window_steps_are_not_compared_until_they_add_up() {
        let mut e = ElasticWindow::default();
        let mut t = Duration::ZERO;
        span(&mut e, &mut t, 5e6, 200_000);
        // 5 % more window each span: compared with the anchor only once 10 % is reached.
        span(&mut e, &mut t, 5.25e6, 210_000);
        assert!(!e.elastic());
        span(&mut e, &mut t, 5.5e6, 220_000);
        assert!(e.elastic(), "10 % more window and 10 % more rate");
    }

    #[test]
    fn a_reduction_starts_the_comparison_over() {
        let mut e = ElasticWindow::default();
        let mut t = Duration::ZERO;
        span(&mut e, &mut t, 5e6, 200_000);
        span(&mut e, &mut t, 6e6, 240_000);
        assert!(e.elastic());
        e.restart();
        assert!(!e.elastic(), "a reduction ends the answer");
        // The first span after it is the new anchor, whatever the old one was: 250 kB is
        // within a tenth of the old anchor's 240 kB, so only a forgotten anchor lets the next
        // span, a tenth more window for a tenth more rate, be compared with it.
        span(&mut e, &mut t, 3e6, 250_000);
        assert!(!e.elastic());
        span(&mut e, &mut t, 3.3e6, 275_000);
        assert!(e.elastic(), "compared with the span after the reduction");
    }

    #[test]
    fn an_application_limited_frame_discards_the_span_it_falls_in() {
        let mut e = ElasticWindow::default();
        let mut t = Duration::ZERO;
        // Half a span at a rate the window never had on its own (a burst the application
        // released), then a frame the application limited.
        let step = Duration::from_millis(10);
        for _ in 0..10 {
            e.on_frame(t, BASE, 200_000, 120_000, true);
            t += step;
        }
        e.on_frame(t, BASE, 10_000, 120_000, false);
        // Kept, those bytes would make the next span's rate 3.3 MB/s an anchor of about
        // 13 MB/s, and the rate that follows the window would read as a full link.
        span(&mut e, &mut t, 3e6, 120_000);
        span(&mut e, &mut t, 3.6e6, 144_000);
        assert!(e.elastic());
    }
}
