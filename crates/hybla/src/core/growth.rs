//! ρ and the window's growth: \[Caini2004\] eq. 9 with byte counting (slow start, congestion
//! avoidance, the fractions carried), start-up towards the estimated pipe, and the pipe-aware
//! rules (below the pipe, at a full link, at a shared bottleneck).

use crate::resume::ResumePhase;

use super::params::{
    APPLICATION_LIMIT_MEMORY, CompetingGrowth, ELASTIC_GAIN_PER_ROUND, Growth, IP_UDP_HEADER_BYTES,
    InitialSsthresh, MAX_WINDOW_BYTES, NOISE_RULES_MAX_RHO, OUTGROWN_RATE_SHARE,
    PROBE_GAIN_PER_ROUND, SHORT_RATE_SHARE, STARTUP_GAIN_PER_ROUND,
};
use super::{Hybla, Phase, QUINN_PACER_GAIN};

impl Hybla {
    pub(super) fn update_rho(&mut self) {
        let Some(base) = self.base_rtt.get() else {
            return;
        };
        // ρ = RTT / RTT0 (eq. 5), never below 1 (§3.1: fast connections keep standard rules).
        let rho = (base.as_secs_f64() / self.params.rtt0.as_secs_f64()).max(1.0);
        let first = !self.rho_known;
        self.rho = rho;
        self.rho_known = true;
        if first {
            // Initial window and threshold scale with ρ ([Caini2004] §3.1).
            if !self.loss_seen {
                let scaled = (self.params.initial_window_bytes as f64 * rho) as u64;
                self.cwnd_bytes = self.cwnd_bytes.max(scaled).min(MAX_WINDOW_BYTES);
            }
            if let InitialSsthresh::Segments(g) = self.params.initial_ssthresh {
                self.ssthresh_bytes = (g * rho * self.mss_bytes as f64) as u64;
            }
        }
        self.cwnd_bytes = self.cwnd_bytes.max(self.minimum_window());
    }

    fn apply(&mut self, increment_bytes: f64) {
        // Whole bytes now, the fraction carried ([Cavallotti2024] §4.2.3).
        let total = increment_bytes + self.carry_bytes;
        let whole = total.floor();
        self.carry_bytes = total - whole;
        let whole = whole.min(MAX_WINDOW_BYTES as f64) as u64;
        self.cwnd_bytes = self.cwnd_bytes.saturating_add(whole).min(MAX_WINDOW_BYTES);
    }

    /// Congestion-avoidance increment for `bytes` acknowledged: W += ρ²/W per MSS (eq. 9),
    /// i.e. ρ²·MSS·bytes/cwnd in bytes; with `PipeAware`, nothing while a queue of the flow's
    /// own stands, and the [`CompetingGrowth`] rule while the bottleneck is shared.
    ///
    /// With `PipeAware`, under noise the delay cannot say whether the link is full, the rate
    /// can: while more window delivers more ([`Self::grows_elastically`]), the window grows by
    /// at least [`ELASTIC_GAIN_PER_ROUND`] of itself per round, whatever the rules above say.
    /// Also against the competing rule: on a noisy path the share that found a competitor is
    /// read against a capacity the path may no longer have (a LEO handover), and next to a
    /// real competitor the rule stops by itself.
    fn ca_increment(&mut self, rho: f64, bytes: f64) -> f64 {
        let by_rule = self.rule_increment(rho, bytes);
        if self.params.growth == Growth::PipeAware && self.grows_elastically() {
            by_rule.max(ELASTIC_GAIN_PER_ROUND * bytes)
        } else {
            by_rule
        }
    }

    /// [`Self::ca_increment`] by the delay-based rules alone.
    fn rule_increment(&mut self, rho: f64, bytes: f64) -> f64 {
        let queue = self.queue_at_budget();
        let pipe = self.growth_pipe_bytes();
        let above_pipe_quietly = self.params.growth == Growth::PipeAware
            && !self.competing()
            && !self.saturated()
            && !queue
            && pipe.is_some_and(|p| self.cwnd_bytes >= p);
        if !above_pipe_quietly {
            self.probe_segments_per_rtt = None;
        }
        let per_rtt_segments = match self.params.growth {
            Growth::Seed => rho * rho,
            // Competing, unless the flow delivers more than the declared capacity: the share
            // of it that found the competitor is void, and the pipe it measures says how far
            // it may grow (after media-bulk-geo's overload, a verdict from the stale
            // declaration held the rise from 1.8 to 5.4 Mbit/s at a segment per round).
            Growth::PipeAware if self.competing() && !self.outgrown() => {
                if self.yielding() {
                    return 0.0;
                }
                self.competing_segments_per_rtt()
            }
            // A queue of the flow's own on a full link: more window only lengthens it.
            Growth::PipeAware if self.saturated() && queue => 0.0,
            // Full, or a queue reading on a link that is not full (jitter, a path longer than
            // the base RTT remembers): one segment per RTT. The queue shows a round late, so
            // the flow overshoots by a segment, not by ρ² (a whole BDP at ρ = 24).
            Growth::PipeAware if self.saturated() || queue => 1.0,
            // Below the pipe at Hybla's speed, but not past it in one go.
            Growth::PipeAware if pipe.is_some_and(|p| self.cwnd_bytes < p) => {
                let room = pipe.map_or(0, |p| p - self.cwnd_bytes) as f64;
                let increment = rho * rho * self.mss_bytes as f64 * bytes / self.cwnd_bytes as f64;
                return increment.min(room);
            }
            // Above the pipe, no queue, and clearly short of the capacity (jitter or ACK
            // thinning make the RTT longer than the base), or clearly beyond it (a declared
            // capacity the path has outgrown: no link delivers more than it carries): the
            // reference NewReno's queue-filling pace, ρ per RTT; nearly full, one segment.
            // And a probe that doubles every round the queue stays away: the pipe was
            // measured or declared before the path grew.
            Growth::PipeAware if pipe.is_some() => {
                let floor = if self
                    .rate_share()
                    .is_some_and(|share| !(SHORT_RATE_SHARE..=OUTGROWN_RATE_SHARE).contains(&share))
                {
                    rho
                } else {
                    1.0
                };
                floor.max(self.probe_segments_per_rtt(rho, bytes))
            }
            Growth::PipeAware => rho * rho,
        };
        per_rtt_segments * self.mss_bytes as f64 * bytes / self.cwnd_bytes as f64
    }

    /// Whether the window grows by [`ELASTIC_GAIN_PER_ROUND`]: ρ is below
    /// [`NOISE_RULES_MAX_RHO`], the queue reading was [noisy
    /// recently](Self::noisy_recently) and the last comparison of rate and window (the
    /// crate's `elastic` module) found the rate following the window. The noise is held for
    /// a while (`leo-starlink`, seeds 1–4: worst recovery after a reconfiguration 6.1–7.9 s
    /// without the hold, 3.0–4.8 s with it). Next to another flow at a full link the flow's rate
    /// follows its window only by the other's share (d ln rate ÷ d ln window = 1 − own
    /// share), so the rule stops by itself below [`MIN_ELASTICITY`]'s complement, 40 % of
    /// the link.
    ///
    /// [`MIN_ELASTICITY`]: crate::elastic::MIN_ELASTICITY
    fn grows_elastically(&self) -> bool {
        self.rho < NOISE_RULES_MAX_RHO && self.noisy_recently() && self.elastic.elastic()
    }

    /// The probe's growth above the pipe for `bytes` acknowledged: one segment per RTT when it
    /// starts (ρ for a flow [its application held](Self::application_held_the_flow)), times
    /// [`PROBE_GAIN_PER_ROUND`] per window of bytes acknowledged since (a round of the flow's
    /// own sending: app-limited stretches and reductions do not advance it), at most ρ²
    /// (Hybla's own pace).
    fn probe_segments_per_rtt(&mut self, rho: f64, bytes: f64) -> f64 {
        let start = if self.application_held_the_flow() {
            rho
        } else {
            1.0
        };
        let current = self.probe_segments_per_rtt.unwrap_or(start).min(rho * rho);
        let rounds = bytes / self.cwnd_bytes.max(1) as f64;
        self.probe_segments_per_rtt =
            Some((current * PROBE_GAIN_PER_ROUND.powf(rounds)).min(rho * rho));
        current
    }

    /// Whether the application, not the window, limited sending within the last
    /// [`APPLICATION_LIMIT_MEMORY`], the flow being older than that: its pipe is what the
    /// application used, not what the path carries, and the path is likelier to have room. A
    /// media connection behind a scheduler is held so all the time, and its window then sits
    /// at its own demand: after media-bulk-geo's rise from 2 to 4 Mbit/s a probe from one
    /// segment per round left the keyframe 0.9 s later a window short of room (late frames
    /// 0.33–1.39 % per seed in that period). From ρ segments, the reference NewReno's
    /// queue-filling pace, it is 0.06–0.33 %. A bulk flow whose window limits it is never so
    /// held once it runs, and keeps the one-segment start that issue 21's fairness matrix
    /// needs (starting at ρ for every flow harmed NewReno in five more cells).
    fn application_held_the_flow(&self) -> bool {
        let (Some(limited), Some(first)) = (self.application_limited_at, self.first_ack_frame_at)
        else {
            return false;
        };
        limited >= first + APPLICATION_LIMIT_MEMORY
            && self.now.saturating_sub(limited) <= APPLICATION_LIMIT_MEMORY
    }

    /// The pipe that bounds Hybla's ρ² growth: the declared capacity × base RTT, less the
    /// share of a packet that is IP/UDP headers (the declaration counts IP bytes, the window
    /// UDP payload); else the measured pipe ([`Self::pipe_bytes`]: a burst of the pacer
    /// crosses the bottleneck back to back and measures it, but jitter's bunched deliveries
    /// and thinned ACKs blur the measurement). Once the flow delivers more than the declared
    /// capacity over a whole round ([`OUTGROWN_RATE_SHARE`]), the path has outgrown
    /// the declaration (a capacity schedule, a better beam) and the measured pipe counts
    /// where it is larger: within a second of media-bulk-geo's rise from 2 to 6 Mbit/s the
    /// pacer's bursts read 382–441 kB against the declared 147 kB and the new 432 kB.
    fn growth_pipe_bytes(&self) -> Option<u64> {
        let declared = self
            .params
            .declared_bdp_bytes
            .zip(self.base_rtt.get())
            .zip(self.capacity_bytes_per_s())
            .map(|((_, base), capacity)| {
                let payload_share =
                    self.mss_bytes as f64 / (self.mss_bytes + IP_UDP_HEADER_BYTES) as f64;
                (payload_share * capacity * base.as_secs_f64()) as u64
            });
        match declared {
            Some(declared) if self.outgrown() => Some(declared.max(self.pipe_bytes().unwrap_or(0))),
            Some(declared) => Some(declared),
            None => self.pipe_bytes(),
        }
    }

    /// Whether the flow delivered more than the declared capacity over the last round (at
    /// least a second), which its payload cannot on a path that still matches the declaration;
    /// never without a declaration.
    fn outgrown(&self) -> bool {
        self.params.declared_bdp_bytes.is_some()
            && self
                .rate_share()
                .is_some_and(|share| share > OUTGROWN_RATE_SHARE)
    }

    /// Segments per RTT while the bottleneck is shared.
    fn competing_segments_per_rtt(&self) -> f64 {
        match self.params.competing_growth {
            CompetingGrowth::Matched => {
                let rtt = self.base_rtt.get().unwrap_or(self.params.rtt0) + self.queue.delay();
                let matched =
                    self.others_growth_bytes_per_s * rtt.as_secs_f64() / self.mss_bytes as f64;
                // The smaller flow catches up at ρ per RTT (a NewReno at RTT0 filling a queue,
                // seen from this RTT): matched growth keeps the shares where they are, and
                // Cubic regrows mostly while the link is not full, where its growth does not
                // show in the queue. Next to Cubic at 600 ms behind a quarter-BDP RED queue,
                // matched growth alone left Hybla 1.10 Mbit/s against Cubic's 6.25.
                let catch_up = if self.others_hold_more { self.rho } else { 1.0 };
                matched.max(catch_up).clamp(1.0, self.rho * self.rho)
            }
            CompetingGrowth::Reno => 1.0,
            CompetingGrowth::Rho => self.rho,
            CompetingGrowth::QueueRho => {
                let base = self.base_rtt.get().unwrap_or(self.params.rtt0);
                let queue = self.queue.delay();
                let rho = ((base + queue).as_secs_f64() / (self.params.rtt0 + queue).as_secs_f64())
                    .max(1.0);
                rho * rho
            }
        }
    }

    /// Start-up under [`InitialSsthresh::Estimate`]: Hybla's slow start up to the target (the
    /// declared or measured BDP), then [`STARTUP_GAIN_PER_ROUND`] per round until a queue
    /// shows. Without a target no growth: at ρ = 20 one slow-start ACK would add 2²⁰
    /// segments (\[Cavallotti2024\] §5.3).
    fn grow_in_startup(&mut self, rho: f64, bytes: u64) {
        let Some(target) = self.startup_target_bytes else {
            return;
        };
        let hybla_per_byte = 2f64.powf(rho) - 1.0;
        let probe_per_byte = (STARTUP_GAIN_PER_ROUND - 1.0).min(hybla_per_byte);
        let mut bytes = bytes as f64;
        if self.cwnd_bytes < target {
            // W += 2^ρ − 1 per MSS acknowledged, up to the target; the rest probes.
            let room = (target - self.cwnd_bytes) as f64 - self.carry_bytes;
            let hybla_bytes = (room.max(0.0) / hybla_per_byte).min(bytes);
            self.apply(hybla_bytes * hybla_per_byte);
            bytes -= hybla_bytes;
            if self.cwnd_bytes < target {
                return;
            }
        }
        if self.reached_target_at.is_none() {
            self.reached_target_at = Some(self.now);
        }
        self.apply(bytes * probe_per_byte);
    }

    pub(super) fn grow(&mut self, bytes: u64) {
        match self.resume_phase() {
            // RFC 9959 §3.3 and §3.5: the window does not grow in these phases.
            Some(ResumePhase::Unvalidated | ResumePhase::SafeRetreat) => return,
            // §3.4 (Updating CWND): slow start, one byte per byte acknowledged, whatever ρ:
            // Hybla's 2^ρ − 1 would double the jump before it is validated. And none while a
            // queue of twice the flow's budget shows (Hybla's start-up ends at one budget;
            // here growth only holds): the jump already fills the path, and doubling it
            // would overflow a buffer that held the jump. Nor while the jump's
            // acknowledgements come back slower than it left: the path is slower than the
            // jump, which already queues there (`jump_outran_path`). Nor above the saved
            // rate: quinn paces 1.25 windows per RTT, so the window stays at most the saved
            // one ÷ 1.25 until the jump is validated. The last of the jump left faster than
            // its span's rate (`pace_jump`), and slow start sends two bytes per byte acknowledged:
            // uncapped, that was 1.25× the saved rate for a fifth of an RTT, and through
            // 25-packet buffers in real time (20 Mbit/s, 600 ms, 1 % loss), of six resumed
            // connections one retreated and another dropped 466 packets.
            Some(ResumePhase::Validating) => {
                let resume = self.resume.as_ref();
                let outran = resume.is_some_and(|resume| resume.jump_outran_path());
                let ceiling = resume.map_or(u64::MAX, |resume| {
                    resume.saved_cwnd_bytes() * QUINN_PACER_GAIN.1 / QUINN_PACER_GAIN.0
                });
                if self.queue.delay() < 2 * self.queue.budget() && !outran {
                    self.apply(bytes.min(ceiling.saturating_sub(self.cwnd_bytes)) as f64);
                }
                return;
            }
            _ => {}
        }
        let rho = self.rho;
        if self.phase() == Phase::CongestionAvoidance {
            let increment = self.ca_increment(rho, bytes as f64);
            self.apply(increment);
            return;
        }
        if self.estimating_ssthresh {
            self.grow_in_startup(rho, bytes);
            return;
        }
        // Slow start: W += 2^ρ − 1 per MSS acknowledged (eq. 9), in bytes.
        let per_byte = 2f64.powf(rho) - 1.0;
        let increment = per_byte * bytes as f64;
        let room = (self.ssthresh_bytes - self.cwnd_bytes) as f64;
        if increment + self.carry_bytes < room {
            self.apply(increment);
            return;
        }
        // The increment crosses ssthresh: the bytes that reach it count as slow start, the
        // rest as congestion avoidance ([Cavallotti2024] §4.2.3).
        let ss_bytes = ((room - self.carry_bytes).max(0.0) / per_byte).min(bytes as f64);
        let ca_bytes = (bytes as f64 - ss_bytes).max(0.0);
        self.cwnd_bytes = self.ssthresh_bytes;
        self.carry_bytes = 0.0;
        let increment = self.ca_increment(rho, ca_bytes);
        self.apply(increment);
    }
}
