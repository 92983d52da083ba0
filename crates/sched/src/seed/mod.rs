//! `seed-balancer`: the StreamBalancer of \[Ruehl2024\] (M. Rühl, "Balancing real-time media
//! and bulk data on one QUIC connection", master's thesis, TU Munich, 2024), reproduced as a
//! pure algorithm so that our own balancer has a faithful baseline to beat.
//!
//! # Where the numbers come from
//!
//! The thesis (chapters 4 and 5) describes the design; its public code (GitHub
//! `haxkor/quic-go`, directory `streamtypebalancer/` plus `framer.go`) fixes the parameters.
//! Where the two disagree this module follows the code and says what the text has. References
//! of the form `streamtypebalancer.go:228` are to that repository's `HEAD` (commit `85417342`).
//!
//! # The algorithm
//!
//! Bytes are counted per class when the framer packs them (`framer.go:211`): prioritised
//! streams ("media", the code's `bidi_info`) and the rest ("bulk", `reststreams`). Every
//! 100 ms (`streamtypebalancer.go:222`) `UpdateUnirate` recomputes the growth factor `gf` of
//! the bulk class's byte budget `allowedbytes` (per sliding 1-s window), starting from 1.2:
//!
//! 1. **RateStatus** = slope(400 ms) / slope(5 s) of least-squares lines through (time in ms,
//!    cumulative media bytes) (`rate_status_factor`): `< 0.9` → `gf ×= rs²`; `> 1` →
//!    `gf ×= min(rs, 1.5)`; otherwise (or NaN) unchanged.
//! 2. **CurrentToMaximum** = media bytes of the last 2 s / the "median" of the twenty largest
//!    such values polled every 500 ms, shrunk 5 % per poll (`TopList`): `< 0.5` → `gf = −1`
//!    (the multiplication then clamps the budget to its 10-byte floor); `< 1` → `gf ×= x²`.
//! 3. **RTTStatus** = the slope of the RTT over the last 400 ms, normalised by a
//!    1 %-per-update decaying maximum of |slope| and shaped by `(x³ + x/3)/(4/3)`
//!    (`SlopeScorer`): `> 0.8` → `gf ×= 0.7`.
//! 4. bulk sent in the last 1 s `< ⌊0.9 · allowed⌋` → `gf = min(0.99, gf)`; then
//!    `gf = min(1.5, gf)`.
//! 5. growth stages around `lastmax` ([`Stage`]) pick the multiplier: `gf` (INCREASING,
//!    DECREASING), `0.95` (DECREASING_GENTLY), `(gf + 10)/11` (INCREASING_SLOWLY); the budget
//!    becomes `max(10, ⌊allowed · multiplier⌋)`.
//!
//! The framer packs prioritised streams first and skips a bulk stream while the bulk bytes of
//! the last second exceed `allowedbytes` (`CanSendUniFrame`, `framer.go:173`).
//!
//! # Mapping onto our lab
//!
//! - Packed bytes are what the applications write ([`Scheduler::on_written`]); the send-window
//!   emulation ([`Scheduler::send_window`]) keeps writes just in time, as the framer would.
//! - quic-go feeds the RTT monitor the *latest* RTT sample on every change
//!   (`streamtypebalancer.go:329`); quinn exposes only the smoothed RTT, so a sample is taken
//!   whenever the observed `srtt` changes. The EWMA delays and flattens the slope a little.
//! - quic-go's three goroutines (updates every 100 ms, throughput polls every 500 ms, sample
//!   intake) run here as deterministic events at `t0 + k·100 ms` and `t0 + j·500 ms` (`t0` = the
//!   first [`Scheduler::observe`]; a poll runs before an update due at the same instant, as the
//!   update loop drifts later in Go); a long gap between observations is caught up event by
//!   event, each event seeing the writes stamped before its own time (writes at `t` follow
//!   `observe(t)`) and the RTT samples taken at or before it.
//!
//! # Where the thesis text differs (the code is followed)
//!
//! - RateStatus over 400 ms / 5 s, not 1 s / 5 s (§5.4.1); the steady band's ends are neutral
//!   (Figure 5.1 leaves `= 0.9` and `= 1` open).
//! - Throughput list: 20 entries, polled every 500 ms over 2 s, shrunk 5 % per poll, with the
//!   insertion and "median" quirks of `TopList` (§4.5.1, §5.4.3: ten largest, every 100 ms,
//!   1 % per step); CurrentToMaximum below 0.5 collapses the budget (not in Figure 5.2).
//! - RTTStatus is the shaped, normalised 400-ms RTT slope, penalised when `> 0.8` (§5.5
//!   describes it as the latest RTT against the maximum, "at least 80 %").
//! - Underused budget: `gf = min(0.99, gf)`, not "set to 0.99" (§5.5.1).
//! - `lastmax` on a new limit is the bulk bytes actually sent in the last second, not the
//!   budget (§5.5.2); a downward change needs `gf < 0.9`; DECREASING_GENTLY is left for
//!   DECREASING only when `gf < 0` (a throughput collapse), staying gentle for `0 ≤ gf ≤ 0.5`
//!   too (the text: "a very low growth factor").

use std::collections::VecDeque;
use std::time::Duration;

use crate::{Class, Scheduler, SendWindows, TransportView};

mod allowance;
mod config;
mod monitors;

pub use config::{SeedBalancerConfig, Stage};

use allowance::{Allowance, Signals};
use monitors::{ByteLog, Edge, SlopeScorer, TopList, window_slopes};

/// The StreamBalancer of \[Ruehl2024\]: strict priority for media plus a bulk byte budget per
/// sliding second that grows while media flows steadily and shrinks when it falters.
#[derive(Debug, Clone)]
pub struct SeedBalancer {
    cfg: SeedBalancerConfig,
    /// Time of the first observation (`None` before it).
    start: Option<Duration>,
    next_update: Duration,
    next_poll: Duration,
    updates_run: u64,
    media: ByteLog,
    bulk: ByteLog,
    /// (time, RTT in ns) samples, oldest first.
    rtt_samples: VecDeque<(Duration, f64)>,
    last_rtt: Duration,
    rtt_scorer: SlopeScorer,
    throughput_top: TopList,
    allowance: Allowance,
    /// Inputs of the last update (for tests and diagnostics).
    last_signals: Option<Signals>,
    last_view: Option<TransportView>,
}

impl Default for SeedBalancer {
    fn default() -> Self {
        Self::new(SeedBalancerConfig::default())
    }
}

impl SeedBalancer {
    /// A balancer with the given parameters.
    ///
    /// # Panics
    /// If either period is zero or a window list is empty (the monitors need at least one).
    pub fn new(cfg: SeedBalancerConfig) -> Self {
        assert!(
            !cfg.update_interval.is_zero(),
            "update interval must be positive"
        );
        assert!(
            !cfg.throughput_poll_interval.is_zero(),
            "poll interval must be positive"
        );
        assert!(
            !cfg.rate_windows.is_empty() && !cfg.rtt_windows.is_empty(),
            "windows needed"
        );
        Self {
            allowance: Allowance::new(&cfg),
            throughput_top: TopList::new(cfg.throughput_top_len),
            start: None,
            next_update: Duration::ZERO,
            next_poll: Duration::ZERO,
            updates_run: 0,
            media: ByteLog::default(),
            bulk: ByteLog::default(),
            rtt_samples: VecDeque::new(),
            last_rtt: Duration::ZERO,
            rtt_scorer: SlopeScorer::default(),
            last_signals: None,
            last_view: None,
            cfg,
        }
    }

    /// The parameters in use.
    pub fn config(&self) -> &SeedBalancerConfig {
        &self.cfg
    }

    /// The bulk budget (`allowedbytes`), bytes per sliding
    /// [`bulk_window`](SeedBalancerConfig::bulk_window).
    pub fn allowed_bytes(&self) -> u64 {
        self.allowance.allowed_bytes
    }

    /// The growth factor of the last update (the base factor, 1.2, before the first).
    pub fn growth_factor(&self) -> f64 {
        self.allowance.growth
    }

    /// The growth stage.
    pub fn stage(&self) -> Stage {
        self.allowance.stage
    }

    /// The remembered limit (`lastmax`), bytes per bulk window.
    pub fn lastmax_bytes(&self) -> u64 {
        self.allowance.lastmax_bytes
    }

    /// How many periodic updates have run.
    pub fn updates_run(&self) -> u64 {
        self.updates_run
    }

    /// The earliest pending periodic event, `None` before the first observation.
    fn next_event(&self) -> Option<Duration> {
        self.start.map(|_| self.next_update.min(self.next_poll))
    }

    /// Oldest time a future query may reach back to, minus `window`: queries run at `now` or
    /// at pending events, never earlier.
    fn horizon(&self, now: Duration, window: Duration) -> Duration {
        self.next_event()
            .map_or(now, |t| t.min(now))
            .saturating_sub(window)
    }

    /// Runs the throughput polls and updates due at or before `now`, in time order (a poll
    /// first when both fall due at once).
    fn run_due(&mut self, now: Duration) {
        loop {
            if self.next_poll <= self.next_update {
                if self.next_poll > now {
                    break;
                }
                self.poll(self.next_poll);
                self.next_poll += self.cfg.throughput_poll_interval;
            } else {
                if self.next_update > now {
                    break;
                }
                self.update(self.next_update);
                self.next_update += self.cfg.update_interval;
            }
        }
    }

    /// Media bytes of the throughput window (`getBitrateWithin`), pruning the media samples to
    /// twice that window as the Go code does (`ratemonitor.go:86`).
    fn media_throughput(&mut self, at: Duration) -> u64 {
        let window = self.cfg.throughput_window;
        self.media.drop_before(at.saturating_sub(window * 2));
        self.media.bytes_within(at, window, Edge::Before)
    }

    /// `recordBitrates` (`ratemonitor.go:99`).
    fn poll(&mut self, at: Duration) {
        let bytes = self.media_throughput(at);
        self.throughput_top.add(bytes);
        self.throughput_top.shrink(self.cfg.throughput_decay);
    }

    /// `UpdateUnirate` (`streamtypebalancer.go:227`) at time `at`.
    fn update(&mut self, at: Duration) {
        // RateStatus: media rate monitor regressions (ratemonitor.go:143, :202).
        self.media
            .drop_before(at.saturating_sub(self.cfg.rate_windows[0]));
        let slopes = window_slopes(
            &self.media.points(at, Edge::Before),
            at,
            &self.cfg.rate_windows,
        );
        let rate_status = slopes[slopes.len() - 1] / slopes[0];

        // CurrentToMaximum (streamclassinfo.go:37).
        let current = self.media_throughput(at);
        let current_to_max = current as f64 / self.throughput_top.median() as f64;

        // RTTStatus (rttmonitor.go:73, :108).
        let horizon = at.saturating_sub(self.cfg.rtt_windows[0]);
        while self.rtt_samples.front().is_some_and(|&(t, _)| t < horizon) {
            self.rtt_samples.pop_front();
        }
        let rtt_points: Vec<(Duration, f64)> = self
            .rtt_samples
            .iter()
            .take_while(|&&(t, _)| t <= at)
            .copied()
            .collect();
        let rtt_slopes = window_slopes(&rtt_points, at, &self.cfg.rtt_windows);
        let rtt_status = self
            .rtt_scorer
            .score(rtt_slopes[rtt_slopes.len() - 1], self.cfg.slope_decay);

        let window = self.cfg.bulk_window;
        self.bulk.drop_before(at.saturating_sub(window));
        let bulk_sent_bytes = self.bulk.bytes_within(at, window, Edge::Before);

        let signals = Signals {
            rate_status,
            current_to_max,
            rtt_status,
            bulk_sent_bytes,
        };
        self.allowance.update(&self.cfg, &signals);
        self.last_signals = Some(signals);
        self.updates_run += 1;
    }
}

impl Scheduler for SeedBalancer {
    fn name(&self) -> &'static str {
        "seed-balancer"
    }

    fn observe(&mut self, view: &TransportView) {
        if self.start.is_none() {
            self.start = Some(view.now);
            self.next_update = view.now + self.cfg.update_interval;
            self.next_poll = view.now + self.cfg.throughput_poll_interval;
        }
        // quic-go records the latest RTT whenever it changes; we only have the smoothed one.
        if view.srtt != self.last_rtt {
            self.last_rtt = view.srtt;
            self.rtt_samples
                .push_back((view.now, view.srtt.as_nanos() as f64));
        }
        self.last_view = Some(*view);
        self.run_due(view.now);
    }

    /// The framer serves prioritised streams first (`framer.go:134`).
    fn priority(&self, class: Class) -> i32 {
        match class {
            Class::Media => 1,
            Class::Bulk => 0,
        }
    }

    fn on_written(&mut self, now: Duration, class: Class, bytes: u64) {
        match class {
            Class::Media => {
                self.media.record(now, bytes);
                let longest = self.cfg.rate_windows[0].max(self.cfg.throughput_window * 2);
                let horizon = self.horizon(now, longest);
                self.media.drop_before(horizon);
            }
            Class::Bulk => {
                self.bulk.record(now, bytes);
                let horizon = self.horizon(now, self.cfg.bulk_window);
                self.bulk.drop_before(horizon);
            }
        }
    }

    /// `CanSendUniFrame` (`streamtypebalancer.go:339`) as a byte count: the budget minus the
    /// bulk bytes of the last window. quic-go lets a whole frame through while the count is
    /// at most the budget (overshooting by up to one packet); here bulk gets exactly the rest.
    fn bulk_allowance(&mut self, now: Duration) -> u64 {
        let window = self.cfg.bulk_window;
        let horizon = self.horizon(now, window);
        self.bulk.drop_before(horizon);
        self.allowance
            .allowed_bytes
            .saturating_sub(self.bulk.bytes_within(now, window, Edge::Through))
    }

    /// Data waits in its stream until the framer packs it into a packet the congestion
    /// controller admits; emulated by letting each class write only up to a little beyond
    /// the congestion window, media a little further than bulk.
    fn send_window(&self) -> Option<SendWindows> {
        self.last_view.map(|v| SendWindows {
            media_bytes: v
                .cwnd_bytes
                .saturating_add(self.cfg.media_headroom_mtus.saturating_mul(v.mtu_bytes)),
            bulk_bytes: v
                .cwnd_bytes
                .saturating_add(self.cfg.bulk_headroom_mtus.saturating_mul(v.mtu_bytes)),
        })
    }

    fn frame_expiry(&self) -> Option<Duration> {
        None
    }

    fn media_target_bps(&self) -> Option<u64> {
        None
    }

    fn wakeup(&self) -> Option<Duration> {
        self.next_event()
    }
}

#[cfg(test)]
mod tests;
