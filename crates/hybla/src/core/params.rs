//! The settings of one Hybla instance ([`HyblaParams`] and the choices in it) and the
//! constants behind its rules, each with the reason for its value.

use std::time::Duration;

use crate::resume::ResumeParams;

/// Window growth per round in start-up once the window has reached the path estimate (the
/// declared or dispersion-measured BDP) without a queue showing: NewReno's doubling. A paced
/// flight measures nothing beyond its own rate, so this is how start-up keeps probing; a
/// doubling overshoots by at most ≈ 0.44 BDP before the queue signal returns, one RTT later.
pub const STARTUP_GAIN_PER_ROUND: f64 = 2.0;

/// Above this share of lost bytes in a round, losses count as congestion even with no queue
/// in sight (a policer drops without queueing). BBRv2 uses 2 %; random loss on satellite
/// links reaches 1–2 %, so the bar sits higher.
pub const RANDOM_LOSS_MAX_RATE: f64 = 0.05;

/// The most random loss a satellite link is taken to show ([`RANDOM_LOSS_MAX_RATE`]'s 1–2 %):
/// where the loss sample holds more losses than this rate would give but for one time in
/// [`RANDOM_LOSS_COUNT_SIGNIFICANCE`]⁻¹, they are congestion, though their share is under
/// the 5 % bound. Over a 600 ms round at 10 Mbit/s (about 600 packets) that is 26 losses or
/// more (4.3 %); over the 200-packet sample of a 30 ms path, 12 or more (6 %, where the share
/// bound fires first). A RED queue in front of Hybla and Cubic at 600 ms (quarter-BDP,
/// 0.1 % random loss) dropped 4.3 % of Hybla's packets: under the share bound, and 41 % of
/// the drops were taken as congestion; Cubic kept 32 % of what it gets next to its own kind.
pub const RANDOM_LOSS_EXPECTED_MAX_RATE: f64 = 0.02;

/// See [`RANDOM_LOSS_EXPECTED_MAX_RATE`]: low, because every loss batch is tested.
pub const RANDOM_LOSS_COUNT_SIGNIFICANCE: f64 = 0.001;

/// Where the queue reading is the path's noise, a loss batch with at least this many packets
/// lost in a row (counted across batches, and through the packets after it already missing)
/// is congestion: two random losses at rate p fall together with probability p.
pub const CONGESTION_LOSSES_IN_A_ROW: u64 = 2;

/// The loss share is measured over at least this many packets' worth of bytes: with 2 %
/// random loss, 200 packets hold 4 losses on average and more than 10 (5 %) one time in 300.
pub const LOSS_RATE_SAMPLE_PACKETS: u64 = 200;

/// ... and over at most this many rounds.
pub const LOSS_RATE_ROUNDS: usize = 16;

/// The flow shares the bottleneck when, with a queue standing, it gets less than this share
/// of the capacity it has measured: someone else's packets are in the queue.
pub const COMPETITION_RATE_SHARE: f64 = 0.85;

/// When the base RTT needs refreshing, the window drops for a round to this share of the pipe
/// of the smallest recent RTT: the flow's own queue drains (a window at or below the pipe holds
/// no queue) while the link stays busy, and the samples see the path.
pub const BASE_REFRESH_FRACTION: f64 = 0.99;

/// The reference for an empty path: the smallest RTT of this long. Longer than the base-RTT
/// window, so that a base RTT that crept up is caught; a path that got longer for good (a LEO
/// handover to a farther satellite) only costs one refresh per half base-RTT window.
pub const PATH_RTT_WINDOW: Duration = Duration::from_secs(60);

/// The other flows' growth is measured over spans at least this long (and two base RTTs).
pub const GROWTH_SPAN: Duration = Duration::from_secs(2);

/// The delivery rate the flow compares with the capacity (saturation, competition, the drain
/// and refresh targets) spans at least a round and at least this long.
pub const MIN_RATE_SPAN: Duration = Duration::from_millis(1000);

/// What the flow saves for the next connection (RFC 9959 §3.1, `saved_cwnd`) is the largest
/// window-limited delivery of a round trip within this long before the connection ends: the
/// path as it was lately, not at a capacity it had before a handover.
pub const OBSERVATION_WINDOW: Duration = Duration::from_secs(10);

/// IPv4 + UDP header bytes: a declared BDP counts IP bytes, the window counts UDP payload.
pub const IP_UDP_HEADER_BYTES: u64 = 28;

/// Above the pipe, with no queue, a flow getting less than this share of the capacity is
/// clearly short of it (jitter or thinned ACKs lengthen its RTT): it probes at ρ per RTT.
pub const SHORT_RATE_SHARE: f64 = 0.9;

/// A flow delivering more than this share of the declared capacity shows that the path has
/// outgrown the declaration (a capacity schedule, a better beam): the pipe its pacer's bursts
/// measure bounds ρ² growth where it is larger than the declared one, and above that pipe
/// with no queue it grows at ρ per RTT, as one clearly short of the capacity does, instead of
/// one segment. After media-bulk-geo's rise from 2 to 4 Mbit/s the window of a Hybla flow
/// whose scenario declared the first 2 Mbit/s crept at one segment per round until its probe
/// took over (90 % of the new capacity after 8.4 s; 6.0 s at ρ, five seeds). The declared
/// rate itself: a flow's payload rate stays 2–4 % under the declared IP rate on a path that
/// still matches it (IP/UDP/QUIC headers), so more than that is no measurement noise. At
/// 1.05 × the declaration, a competitor found in an overload period from the stale
/// declaration held media-bulk-geo's next rise (1 → 3 Mbit/s) at a segment per round for
/// 3.7 s while the flow delivered 1.00–1.04 × (geo/hybla ramp 4.2 / 6.1 s over five seeds,
/// 3.7 / 4.6 s now).
pub const OUTGROWN_RATE_SHARE: f64 = 1.0;

/// Above the pipe with no queue in sight, the window's growth per RTT starts at one segment
/// (ρ for a flow its application held: see `APPLICATION_LIMIT_MEMORY`) and is multiplied by
/// this every base RTT, up to Hybla's ρ² (eq. 9): where the link is full a queue shows
/// within a round or two and growth falls back to a segment; where capacity grew (a pipe
/// declared or measured before a rise), the window reaches the new pipe in log₂ of the gap's
/// segments rounds, not one round per segment (at RTT 600 ms, 2 → 4 Mbit/s is 100 segments:
/// 60 s at one per RTT, about 5 s doubling). BBR raises its inflight bound the same way in
/// ProbeBW_UP (1, 2, 4, … packets per round; \[BBRv3\]).
pub const PROBE_GAIN_PER_ROUND: f64 = 2.0;

/// How recently the application must have limited sending for the probe above the pipe to
/// start at ρ segments per RTT instead of one (`Hybla::application_held_the_flow`), and how
/// old the flow must be before such a limit counts: before its first data every flow waits on
/// its application.
pub const APPLICATION_LIMIT_MEMORY: Duration = Duration::from_secs(10);

/// Where the queue reading is noise and more window delivers more (the crate's `elastic`
/// module), the window grows by this share of itself per round: doubled in 20 rounds (0.8 s
/// at a LEO RTT of 40 ms), and at most 1.035⁸ ≈ 1.3 × the pipe by the time two spans of four
/// rounds have shown that it no longer pays. Measured on `leo-starlink` (seeds 1–4, declared
/// / estimated BDP, Mbit/s) and the loss matrix's 10 ms jitter cell at 10 Mbit/s, 30 ms,
/// 0.5 % (the same seeds, ceiling): without the rule 75.6 / 54.8 and 64.9 %; at 0.025
/// 85.2 / 74.9 and 64.3 %; at 0.035 84.0 / 78.0 and 65.4 %; at 0.05 (no hold) 84.0 / 77.8
/// and 63.0 %, with twice the queue drops.
pub const ELASTIC_GAIN_PER_ROUND: f64 = 0.035;

/// The rules for a noisy queue reading (the elastic growth, the jitter floor under a
/// congestion cut) apply only below this ρ (RTT 75 ms at RTT0 = 25 ms). Near ρ = 1
/// Hybla's rules are NewReno's, a segment per RTT, and a LEO path's capacity steps by
/// 50–90 Mbit/s; at larger ρ the rules already regrow at ρ² ≥ 9 segments per RTT below the
/// pipe and probe up to ρ² above it. And there the noise the rule needs is mostly RED's and
/// random loss's, not the path's: on paper-linkloss at 100 ms (RED, 1 % loss, no jitter) the
/// reading was noisy 91 % of the time, and without this bound the rule cost that case 7.38 →
/// 6.71 Mbit/s and the fairness matrix a cell out of the band and one harmed (Cubic at
/// 100 ms, 0.25 BDP). `leo-starlink` (ρ 1.2–2) is the same with and without it.
pub const NOISE_RULES_MAX_RHO: f64 = 3.0;

/// A standing queue beyond this many of the flow's own allowances is window excess, which the
/// flow drains at once; under path jitter a congestion cut leaves the window no lower than
/// the capacity × (base RTT + this many allowances), the most the drain accepts (see
/// `Hybla::jitter_pipe_bytes`). Measured on the loss matrix's 30 ms jitter cells (seeds 1–4,
/// mean ceiling at 0.1 / 0.5 % loss, 10/10 Mbit/s, and the queue drops per sent packet):
/// without the floor 71.5 / 66.9 % and 1.1 / 0.9 %; at one allowance 75.5 / 71.9 % and
/// 1.3 / 1.2 %; at 1.5, 79.2 / 76.7 % and 1.6 / 1.5 %; at 2, 82.2 / 80.2 % and 2.2 / 1.8 %;
/// at 2.5 and 3 no more throughput (81.2 / 79.7 %, 81.6 / 79.7 %) for 2.8 and 4.2–4.5 % of
/// the packets dropped.
pub const DRAIN_ALLOWANCES: u32 = 2;

/// Next to a doubtful competitor (found on a noisy reading below ρ = 3), the jitter floor of a
/// congestion cut stays while the flow gets at least this share of the capacity it measured
/// (`Hybla::jitter_pipe_bytes`). Alone on the loss matrix's 30 ms paths with 10 ms of mean
/// jitter the verdicts came at shares of 0.50–0.79; paper-fairness's short flows, three
/// among six on a RED queue, found theirs at 0.20–0.26.
pub const JITTER_FLOOR_MIN_SHARE: f64 = 0.5;

/// How long the rules for a noisy queue reading outlast its last noisy reading (see
/// `Hybla::noisy_recently`).
pub const NOISE_HOLD: Duration = Duration::from_secs(10);

/// The link is full when the flow gets at least this share of the capacity.
pub const SATURATION_RATE_SHARE: f64 = 0.95;

/// How long the flow keeps behaving as one of several after the last sign of competition, at
/// least: a competitor's sawtooth empties a shallow queue for a few RTTs after each of its
/// losses, and regrowing at Hybla's speed into that gap would take the competitor's share;
/// and after each of its own reductions the flow needs two rounds to see the competitor
/// again, in which an alone flow's drain would cut its window to its current share (at
/// 600 ms against Cubic, a hold of 4 RTTs left Hybla a quarter of the link).
pub const COMPETITION_HOLD: Duration = Duration::from_secs(5);

/// ... and at least this many base RTTs.
pub const COMPETITION_HOLD_RTTS: u32 = 8;

/// A competitor found while the flow got less than this share of the capacity is no
/// competitor but a stall (the delivery rate after a burst of losses, near 0) and does not
/// hold the regrowth after a cut at the competing pace (`Hybla::hold_competition_through_regrowth`),
/// nor makes a loss at a queue of one budget congestion (`Hybla::classify`).
/// Nor is one found on a noisy reading where the noise rules apply (below
/// [`NOISE_RULES_MAX_RHO`]: `Hybla::noise_discredits_competition`), or within
/// [`CREDIBLE_AFTER_STARTUP_RTTS`] of start-up's end, while the rate still ramps: alone on the loss matrix's 20/2 Mbit/s, 250 ms path at
/// 0.5 % loss, both made the flow compete (shares 0.56 at 1.3 s, 0.0002 at 36 s), and holding
/// the regrowth behind them cost 97 → 68 % of the ceiling; on the 30 ms paths with 10 ms of
/// jitter, 83 → 79 %.
pub const CREDIBLE_COMPETITION_MIN_SHARE: f64 = 0.2;

/// See [`CREDIBLE_COMPETITION_MIN_SHARE`]: base RTTs after start-up's end.
pub const CREDIBLE_AFTER_STARTUP_RTTS: u32 = 4;

/// The window limits sending when the flight after an ACK frame is at least this share of it
/// (quinn stops a datagram or two short of the window).
pub const WINDOW_LIMITED_FLIGHT_SHARE: f64 = 0.9;

/// Upper bound of the window, bytes: far beyond any path (2⁴⁸ B = 256 TiB), low enough that
/// no later arithmetic overflows even at ρ = 40 and beyond.
pub const MAX_WINDOW_BYTES: u64 = 1 << 48;

/// How the initial slow-start threshold is chosen. More ways may come (`#[non_exhaustive]`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum InitialSsthresh {
    /// Estimate the path's bandwidth-delay product from the first flight (\[Caini2004\] §3.3.1);
    /// slow-start growth waits for the estimate (at most one round, then plain slow start).
    Estimate,
    /// A fixed number of bytes (the thesis's INITIAL_SSTHRESH, e.g. 750 KB).
    Bytes(u64),
    /// γ segments, multiplied by ρ once ρ is known (\[Caini2004\] eq. 6: the threshold is ρ·γ).
    Segments(f64),
    /// No threshold: slow start until the first loss (NewReno's default).
    Infinite,
}

/// How a flow that shares its bottleneck grows its window each RTT. More rules may come
/// (`#[non_exhaustive]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompetingGrowth {
    /// As fast as the other flows grow: their window growth, measured from how fast the shared
    /// queue fills beyond what this flow adds to it, and at least one segment per RTT. Two
    /// flows that add the same bytes per second to a shared queue and halve on the same
    /// losses converge to the same window, whatever algorithm the other runs (a NewReno at
    /// 600 ms adds a segment per 600 ms, a Cubic tens).
    Matched,
    /// One segment per RTT: NewReno's additive increase.
    Reno,
    /// ρ segments per RTT: a NewReno at RTT0 filling a queue, seen from our RTT.
    Rho,
    /// ρ_q² segments per RTT with ρ_q = (base RTT + queue) / (RTT0 + queue): \[Caini2004\]'s
    /// rule with the RTTs the two flows actually have when the queue they share holds q.
    QueueRho,
}

/// Which growth rules apply. More may come (`#[non_exhaustive]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Growth {
    /// \[Caini2004\] eq. 9 exactly: +(2^ρ − 1) per MSS in slow start, +ρ²/W per MSS in
    /// congestion avoidance.
    Seed,
    /// satquic's extension: \[Caini2004\]'s growth where the path has room, a loss classifier
    /// that keeps random loss apart from congestion, and NewReno's manners where the queue is
    /// shared.
    ///
    /// Growth: ρ² per RTT (eq. 9) while no queue stands at the bottleneck (the window is below
    /// the pipe). Above the pipe with no queue, a probe from one segment per RTT (ρ for a flow
    /// its application held lately) that doubles each round up to ρ²: the path may have grown
    /// since the pipe was declared or measured.
    /// With a queue of its own and nobody else's (the flow gets about the capacity it
    /// measured), the window holds: past the pipe, more window only lengthens the queue,
    /// and a flow that keeps the queue short sees its random losses at an empty queue. With
    /// somebody else's packets in the queue (the flow gets clearly less than the capacity) the
    /// flow competes: it grows by the `competing` rule of [`CompetingGrowth`] per RTT, whether
    /// the queue stands or a competitor's loss just emptied it.
    ///
    /// Losses (the crate's `queue` module has the rule): congestion when the queue at the lost packet's
    /// send time was in the upper part of what this path's queue has been seen to hold, or the
    /// loss share of the last two rounds exceeds [`RANDOM_LOSS_MAX_RATE`]; random otherwise. A
    /// random loss keeps the window and opens no recovery period (at 1 % loss a 600 ms window
    /// of hundreds of packets has losses every round; halving per round would collapse it to
    /// the Mathis bound). A congestion loss halves the window, once per recovery period, as
    /// NewReno does: where the flow is alone, Hybla's ρ² regrowth refills the pipe within a few
    /// RTTs, and where it is not, the same decrease as its neighbours' keeps the shares fair.
    PipeAware,
}

/// How a loss is classified ([`Growth::PipeAware`] only). More may come (`#[non_exhaustive]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LossClassifier {
    /// Congestion when the queue at the lost packet's send time was in the upper part of what
    /// this path's queue has held, or the loss share exceeds [`RANDOM_LOSS_MAX_RATE`].
    QueueThreshold,
    /// The same, and congestion too where the flow's own record shows packets sent at this
    /// queue or a fuller one lost at least twice as often as those sent at an emptier one
    /// (the crate's `loss_by_queue` module, after \[Liu2003\]); such a loss below a lone flow's
    /// threshold, at a queue that stood the whole round, also starts the competing mode.
    /// Fairer on RED bottlenecks (neighbours harmed in 12 cells of 72 instead of 16), but
    /// 10 points lower with 10 ms of jitter on 30 ms paths: not the default
    /// (reports/hybla-friendliness §7).
    LossByQueue,
}

/// Settings of one Hybla instance. Start from [`HyblaParams::default`] (or
/// [`HyblaConfig::params`](crate::HyblaConfig::params)) and change fields: new settings come
/// with defaults that keep today's behaviour, so the struct is `#[non_exhaustive]`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HyblaParams {
    /// Reference RTT whose growth rate Hybla reproduces (\[Caini2004\] §7.1: 25 ms).
    pub rtt0: Duration,
    /// Window before ρ is known, bytes; multiplied by ρ at the first RTT sample.
    pub initial_window_bytes: u64,
    /// Smallest window in packets before the ρ scaling (RFC 9002: 2).
    pub minimum_window_packets: u64,
    /// Multiplicative decrease on congestion (0.5 halves).
    pub loss_reduction_factor: f64,
    /// Initial slow-start threshold.
    pub initial_ssthresh: InitialSsthresh,
    /// Growth rules.
    pub growth: Growth,
    /// Window of the minimum-RTT filter: how long after a path change ρ follows a longer path.
    pub base_rtt_window: Duration,
    /// Window of the delivery-rate maximum behind the pipe estimate: how long a rate drop
    /// (a capacity schedule step, a new competitor) takes to show.
    pub rate_window: Duration,
    /// Bandwidth-delay product of the path as declared by whoever configured it (bytes), if
    /// known: the start-up target under [`InitialSsthresh::Estimate`], as the thesis's fixed
    /// INITIAL_SSTHRESH is, without waiting for a measurement. Needed where the measurement
    /// cannot work: with ACK thinning, one ACK covers a whole 10-packet pacing burst, so
    /// ACK spacing no longer shows the bottleneck's dispersion.
    pub declared_bdp_bytes: Option<u64>,
    /// Keep a [`LossRecord`](crate::LossRecord) of every loss batch (an instrument: the lab matches them
    /// against the path's ground truth). Off by default: the log grows with every loss.
    pub record_losses: bool,
    /// How the window grows while the bottleneck is shared ([`Growth::PipeAware`]).
    pub competing_growth: CompetingGrowth,
    /// How a loss is classified ([`Growth::PipeAware`]).
    pub loss_classifier: LossClassifier,
    /// Resume from a previous connection's measurement of the path (RFC 9959 Careful Resume;
    /// see the `resume` module). `None`: every connection starts from scratch.
    pub careful_resume: Option<ResumeParams>,
}

impl Default for HyblaParams {
    fn default() -> Self {
        Self {
            rtt0: Duration::from_millis(25),
            initial_window_bytes: 14_720,
            minimum_window_packets: 2,
            loss_reduction_factor: 0.5,
            initial_ssthresh: InitialSsthresh::Estimate,
            growth: Growth::PipeAware,
            base_rtt_window: Duration::from_secs(10),
            rate_window: Duration::from_secs(2),
            declared_bdp_bytes: None,
            record_losses: false,
            competing_growth: CompetingGrowth::Matched,
            loss_classifier: LossClassifier::QueueThreshold,
            careful_resume: None,
        }
    }
}

/// A flow that gets more than this × what the others get at a shared, full link gives window
/// back (`Hybla::yield_to_the_others`): inside issue 21's band of share ratios, [0.67, 1.5].
pub const YIELD_RATE_RATIO: f64 = 1.4;

/// The others' least share of the capacity that the flow yields to: less is a lone flow's
/// shortfall, or a neighbour too small to read.
pub const YIELD_MIN_OTHERS_SHARE: f64 = 0.1;

/// Share of the window given back per loop round while yielding.
pub const YIELD_STEP: f64 = 0.125;
/// How much more the others must get at the next episode of yielding than at the last step of
/// the one before for the flow to yield again (`Hybla::yield_to_the_others`).
pub const YIELD_OTHERS_MIN_GROWTH: f64 = 0.05;

/// Below this ρ the flow does not yield: near ρ = 1 its rules are NewReno's, whose shares
/// converge by themselves, and there a LEO path's capacity steps by 50–90 Mbit/s, so a share
/// of the capacity the last 10 s showed reads a reconfiguration as a neighbour (at ρ ≥ 2 a
/// lone flow on `leo-starlink` yielded after one, and took 4.2 s to recover instead of 1.8).
pub const YIELD_MIN_RHO: f64 = NOISE_RULES_MAX_RHO;

/// The multiplicative decrease of a flow whose neighbours get more than [`YIELD_RATE_RATIO`]
/// × its rate at a shared, full link (`Hybla::far_smaller`): Cubic's β (RFC 9438 §4.6).
/// Halving, it stayed behind Cubic at 600 ms, which cuts by 0.3 and regrows in seconds
/// whatever the RTT: 0.52–0.63 of Cubic's share over seeds 1–3 (4-BDP and quarter-BDP
/// drop-tail, quarter-BDP RED). With the smaller cut the shares converge from both sides;
/// the larger side is the yield (`Hybla::yield_to_the_others`). Read from the flights
/// instead of the rates, a latecomer's crept base RTT made the first flow cut by 0.7 too
/// (poster-latecomer, 4 BDP: 0.87 → 0.47).
pub const SMALLER_FLOW_REDUCTION: f64 = 0.7;
