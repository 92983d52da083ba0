//! Plain-data descriptions of links and paths, as a scenario file states them.
//!
//! Nothing here holds state; [`crate::Link`] and [`crate::Path`] are built from these.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Bytes added to every QUIC datagram on the wire: IPv4 (20) + UDP (8) headers.
///
/// Link rates apply to IP packets, so a 1472-byte QUIC datagram occupies 1500 bytes of link
/// time — as it would on a real satellite terminal.
pub const IP_UDP_HEADER_BYTES: u32 = 28;

/// Default path MTU in bytes (IP packet size), as on Ethernet-attached satellite terminals.
pub const DEFAULT_MTU_BYTES: u32 = 1500;

/// Smallest path MTU: QUIC requires 1200-byte UDP payloads (RFC 9000 §14), plus the
/// [`IP_UDP_HEADER_BYTES`] in front of them.
pub const MIN_MTU_BYTES: u32 = 1200 + IP_UDP_HEADER_BYTES;

/// Largest path MTU: the largest IPv4 packet. IPv4's 16-bit total length counts the header, so
/// no IPv4 packet exceeds 65 535 bytes and a UDP payload in one is at most 65 507 bytes.
pub const MAX_MTU_BYTES: u32 = 65_535;

/// How large the bottleneck buffer is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueLimit {
    /// At most this many bytes of IP packets may wait (including the one being serialized).
    Bytes(u64),
    /// At most this many packets may wait (including the one being serialized).
    Packets(u64),
    /// A multiple of the path's bandwidth-delay product: initial rate of this link times the
    /// two-way propagation delay of the bottleneck (forward + return delay, no access delay).
    BdpMultiple(f64),
    /// This long of the link's initial rate: rate × time / 8 bytes (a buffer stated in time,
    /// e.g. picoquic's 600 ms buffers or "300 ms of queue").
    Time(Duration),
}

impl QueueLimit {
    /// The byte limit on a link of `rate_bps` whose bottleneck round trip is `base_rtt`:
    /// `None` when the limit counts packets. A BDP multiple rounds to the nearest byte. The
    /// one place this conversion happens: the link, the transport preset and the reports
    /// all call it.
    pub fn limit_bytes(self, rate_bps: u64, base_rtt: Duration) -> Option<u64> {
        match self {
            QueueLimit::Bytes(bytes) => Some(bytes),
            QueueLimit::Packets(_) => None,
            QueueLimit::Time(time) => {
                Some((rate_bps as f64 * time.as_secs_f64() / 8.0).round() as u64)
            }
            QueueLimit::BdpMultiple(multiple) => {
                Some((crate::bdp_bytes(rate_bps, base_rtt) as f64 * multiple).round() as u64)
            }
        }
    }
}

/// Random Early Detection parameters (Floyd & Jacobson 1993; \[Caini2004\] §4 uses min 5, max 15
/// packets, queue 50 packets).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RedConfig {
    /// Average queue (packets) below which nothing is dropped early.
    pub min_threshold_packets: f64,
    /// Average queue (packets) at and above which every arrival is dropped.
    pub max_threshold_packets: f64,
    /// Drop probability reached as the average approaches the max threshold.
    pub max_probability: f64,
    /// EWMA weight of the average queue estimate (0.002 in the RED paper and ns-2).
    pub weight: f64,
}

impl Default for RedConfig {
    fn default() -> Self {
        Self {
            min_threshold_packets: 5.0,
            max_threshold_packets: 15.0,
            max_probability: 0.1,
            weight: 0.002,
        }
    }
}

/// The queue discipline of a link's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Aqm {
    /// Drop an arrival only when the buffer is full.
    #[default]
    DropTail,
    /// Drop early with a probability growing with the average queue; the buffer limit still
    /// applies as a hard limit.
    Red(RedConfig),
}

/// Random (non-congestion) loss applied to packets that made it through the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "model")]
pub enum LossModel {
    /// Every packet is delivered.
    #[default]
    None,
    /// Each packet is lost independently with this probability (0..=1).
    Bernoulli {
        /// Loss probability per packet.
        probability: f64,
    },
    /// Two-state Markov chain (Gilbert-Elliott), one transition per packet. Stationary loss
    /// rate = (r·loss_in_good + p·loss_in_bad) / (p + r); with loss_in_bad = 1 and
    /// loss_in_good = 0 the mean loss burst is 1/r packets.
    GilbertElliott {
        /// Probability of moving from the good to the bad state (p).
        p_good_to_bad: f64,
        /// Probability of moving from the bad to the good state (r).
        p_bad_to_good: f64,
        /// Loss probability while in the good state (usually 0).
        loss_in_good: f64,
        /// Loss probability while in the bad state (usually 1).
        loss_in_bad: f64,
    },
}

impl LossModel {
    /// The long-run fraction of packets this model loses.
    pub fn stationary_loss_rate(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { probability } => probability,
            LossModel::GilbertElliott {
                p_good_to_bad: p,
                p_bad_to_good: r,
                loss_in_good,
                loss_in_bad,
            } => {
                if p + r == 0.0 {
                    loss_in_good
                } else {
                    (r * loss_in_good + p * loss_in_bad) / (p + r)
                }
            }
        }
    }
}

/// The distribution of the extra delay each packet gets on top of the propagation delay.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum JitterDistribution {
    /// No extra delay.
    #[default]
    None,
    /// Uniform between `min` and `max`.
    Uniform {
        /// Smallest extra delay.
        min: Duration,
        /// Largest extra delay.
        max: Duration,
    },
    /// Exponential with this mean. For two independent draws X, Y, E|X − Y| equals the mean,
    /// so the mean is also the mean difference between successive sparse RTT probes (the
    /// "jitter" that ping-based studies report) when only one direction jitters.
    Exponential {
        /// Mean extra delay.
        mean: Duration,
    },
    /// Normal with this mean and standard deviation; draws below zero count as zero (the
    /// mean of what is applied is then slightly above `mean`).
    Normal {
        /// Mean of the untruncated distribution.
        mean: Duration,
        /// Standard deviation of the untruncated distribution.
        stddev: Duration,
    },
}

/// Per-packet delay variation of a link: each packet's propagation delay is the link's
/// `delay` plus an independent draw from `distribution`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Jitter {
    /// What each packet's extra delay is drawn from.
    pub distribution: JitterDistribution,
    /// Whether a packet may overtake the one before it. `false` (the default, as on a real
    /// link, which is one FIFO pipe): a packet whose draw would make it arrive before its
    /// predecessor arrives right after it instead, so closely spaced packets see more than
    /// the distribution's mean (each waits behind the slowest recent packet). `true`: each
    /// packet keeps its own draw and packets arrive out of order (netem's default).
    pub reorder: bool,
    /// How long one draw holds: packets that leave within one interval (aligned to whole
    /// multiples since the start of the run) share a draw, as packets of one MAC frame or one
    /// scheduling period share its delay. `None`: a new draw for every packet. Jitter measured
    /// with sparse probes says nothing of how fast the delay changes; per-packet draws make a
    /// dense flow's packets queue behind the slowest recent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
}

impl Jitter {
    /// Whether any jitter applies.
    pub fn is_none(&self) -> bool {
        self.distribution == JitterDistribution::None
    }
}

/// A change of a link's properties at a point in time (e.g. a rate drop from 50 to 10 Mbit/s
/// at 5 s, or a LEO handover changing the propagation delay). Unset fields keep their value.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ScheduleStep {
    /// Time since the start of the run at which the change happens.
    pub at: Duration,
    /// New serialization rate in bits per second.
    pub rate_bps: Option<u64>,
    /// New one-way propagation delay.
    pub delay: Option<Duration>,
    /// New random loss model.
    pub loss: Option<LossModel>,
}

/// One direction of the bottleneck.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkConfig {
    /// Serialization rate of IP packets, bits per second.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Buffer size.
    pub queue: QueueLimit,
    /// Queue discipline.
    pub aqm: Aqm,
    /// Random loss model.
    pub loss: LossModel,
    /// Per-packet delay variation added to `delay`.
    #[serde(default, skip_serializing_if = "Jitter::is_none")]
    pub jitter: Jitter,
    /// Slotted delivery: packets leave the link only at whole multiples of this interval since
    /// the start of the run (a MAC frame, a DVB-RCS2 superframe, netem's `slot`); every packet
    /// whose serialization ended within a slot leaves at its end. `None`: as soon as serialized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<Duration>,
    /// Changes over time, sorted by `at`.
    pub schedule: Vec<ScheduleStep>,
}

impl LinkConfig {
    /// Every rate the link has over the run: the initial one, then each scheduled step's, in
    /// schedule order. Transport windows, socket buffers and figure captions are sized from
    /// its extremes.
    pub fn scheduled_rates_bps(&self) -> impl Iterator<Item = u64> + '_ {
        std::iter::once(self.rate_bps).chain(self.schedule.iter().filter_map(|s| s.rate_bps))
    }

    /// The highest rate the link is scheduled to have.
    pub fn peak_rate_bps(&self) -> u64 {
        self.scheduled_rates_bps().max().unwrap_or(self.rate_bps)
    }

    /// Bits the link can carry between `from` and `to`: the integral of its scheduled rate.
    /// The denominator of utilization and efficiency when the rate changes over time.
    pub fn capacity_bits(&self, from: Duration, to: Duration) -> f64 {
        let mut steps = vec![(Duration::ZERO, self.rate_bps)];
        steps.extend(
            self.schedule
                .iter()
                .filter_map(|s| Some((s.at, s.rate_bps?))),
        );
        let mut bits = 0.0;
        for (i, &(start, rate)) in steps.iter().enumerate() {
            let end = steps.get(i + 1).map_or(Duration::MAX, |s| s.0);
            let (a, b) = (start.max(from), end.min(to));
            if b > a {
                bits += rate as f64 * (b - a).as_secs_f64();
            }
        }
        bits
    }

    /// A drop-tail, loss-free link with a one-BDP buffer.
    pub fn new(rate_bps: u64, delay: Duration) -> Self {
        Self {
            rate_bps,
            delay,
            queue: QueueLimit::BdpMultiple(1.0),
            aqm: Aqm::DropTail,
            loss: LossModel::None,
            jitter: Jitter::default(),
            slot: None,
            schedule: Vec::new(),
        }
    }
}

/// A dumbbell: every flow crosses the same bottleneck in both directions, plus a private,
/// unlimited-rate access segment with its own one-way delay (added in each direction), so flows
/// can have different RTTs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathConfig {
    /// Server → client (download) direction.
    pub forward: LinkConfig,
    /// Client → server (upload, ACK) direction.
    pub return_link: LinkConfig,
    /// Largest IP packet the path carries, bytes; larger packets are dropped and counted.
    pub mtu_bytes: u32,
    /// Extra one-way delay of each flow's access segment, indexed by flow.
    pub access_delays: Vec<Duration>,
}

impl PathConfig {
    /// Two-way propagation delay of the bottleneck alone (the base RTT of a flow without access
    /// delay); the reference for `QueueLimit::BdpMultiple`.
    pub fn base_rtt(&self) -> Duration {
        self.forward.delay + self.return_link.delay
    }

    /// Base RTT of one flow: bottleneck propagation plus its access delay both ways.
    pub fn flow_base_rtt(&self, flow: usize) -> Duration {
        self.base_rtt() + 2 * self.access_delays.get(flow).copied().unwrap_or_default()
    }
}

impl LinkConfig {
    fn validate_jitter(&self, field: &str) -> Result<(), ConfigError> {
        let invalid = |problem: String| ConfigError::Invalid {
            field: field.to_owned(),
            problem,
        };
        if self.jitter.interval == Some(Duration::ZERO) {
            return Err(ConfigError::Invalid {
                field: format!("{field}.interval"),
                problem: "must be greater than zero (leave it out for a new draw per packet)"
                    .into(),
            });
        }
        match self.jitter.distribution {
            JitterDistribution::Uniform { min, max } if min > max => Err(invalid(format!(
                "uniform jitter needs min ({min:?}) <= max ({max:?})"
            ))),
            JitterDistribution::Normal { stddev, .. } if stddev.is_zero() => Err(invalid(
                "normal jitter needs a standard deviation greater than zero (for a constant \
                 extra delay, add it to delay)"
                    .into(),
            )),
            // A jitter that varies nothing is a mistake the same way: say what to write.
            JitterDistribution::Uniform { min, max } if min == max => Err(invalid(format!(
                "uniform jitter needs min ({min:?}) < max ({max:?}) (for a constant extra \
                 delay, add it to delay; for none, leave jitter out)"
            ))),
            JitterDistribution::Exponential { mean } if mean.is_zero() => Err(invalid(
                "exponential jitter needs a mean greater than zero (for no jitter, leave \
                 jitter out)"
                    .into(),
            )),
            _ => Ok(()),
        }
    }
}

/// Why a link or path configuration cannot be simulated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A rate is zero; serialization time would be infinite.
    #[error("{field}: rate must be greater than zero")]
    ZeroRate {
        /// Which field.
        field: String,
    },
    /// A probability is outside 0..=1.
    #[error("{field}: probability {value} is outside 0..=100%")]
    Probability {
        /// Which field.
        field: String,
        /// The offending value.
        value: f64,
    },
    /// The buffer cannot hold even one packet of the path MTU.
    #[error("{field}: buffer of {limit_bytes} bytes cannot hold one {mtu_bytes}-byte packet")]
    QueueTooSmall {
        /// Which field.
        field: String,
        /// Resolved limit in bytes.
        limit_bytes: u64,
        /// Path MTU.
        mtu_bytes: u32,
    },
    /// A queue limit or RED parameter makes no sense.
    #[error("{field}: {problem}")]
    Invalid {
        /// Which field.
        field: String,
        /// What is wrong.
        problem: String,
    },
}

fn check_probability(field: &str, value: f64) -> Result<(), ConfigError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(ConfigError::Probability {
            field: field.to_owned(),
            value,
        })
    }
}

impl LossModel {
    /// Checks every probability; `field` names the model in errors.
    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        match *self {
            LossModel::None => Ok(()),
            LossModel::Bernoulli { probability } => check_probability(field, probability),
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => {
                check_probability(&format!("{field}.p"), p_good_to_bad)?;
                check_probability(&format!("{field}.r"), p_bad_to_good)?;
                check_probability(&format!("{field}.loss_in_good"), loss_in_good)?;
                check_probability(&format!("{field}.loss_in_bad"), loss_in_bad)
            }
        }
    }
}

impl LinkConfig {
    /// Checks rates, probabilities, RED thresholds (finite, 0 ≤ min < max), jitter (one that
    /// varies the delay), and schedule order (strictly increasing times); `field` names the
    /// link.
    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        if self.rate_bps == 0 {
            return Err(ConfigError::ZeroRate {
                field: format!("{field}.rate"),
            });
        }
        self.loss.validate(&format!("{field}.loss"))?;
        match self.queue {
            QueueLimit::Bytes(0) | QueueLimit::Packets(0) | QueueLimit::Time(Duration::ZERO) => {
                return Err(ConfigError::Invalid {
                    field: format!("{field}.queue"),
                    problem: "queue limit must be greater than zero".into(),
                });
            }
            QueueLimit::BdpMultiple(m) if !(m.is_finite() && m > 0.0) => {
                return Err(ConfigError::Invalid {
                    field: format!("{field}.queue"),
                    problem: format!("BDP multiple must be positive, got {m}"),
                });
            }
            _ => {}
        }
        if let Aqm::Red(red) = self.aqm {
            let field = format!("{field}.red");
            for (key, value) in [
                ("min", red.min_threshold_packets),
                ("max", red.max_threshold_packets),
            ] {
                if !value.is_finite() {
                    return Err(ConfigError::Invalid {
                        field: format!("{field}.{key}"),
                        problem: format!(
                            "threshold must be a finite number of packets, got {value}"
                        ),
                    });
                }
            }
            if !(red.min_threshold_packets >= 0.0
                && red.max_threshold_packets > red.min_threshold_packets)
            {
                return Err(ConfigError::Invalid {
                    field,
                    problem: format!(
                        "need 0 <= min ({}) < max ({}) threshold",
                        red.min_threshold_packets, red.max_threshold_packets
                    ),
                });
            }
            check_probability(&format!("{field}.max_p"), red.max_probability)?;
            if !(red.weight > 0.0 && red.weight <= 1.0) {
                return Err(ConfigError::Invalid {
                    field: format!("{field}.weight"),
                    problem: format!("EWMA weight must be in (0, 1], got {}", red.weight),
                });
            }
        }
        self.validate_jitter(&format!("{field}.jitter"))?;
        if self.slot == Some(Duration::ZERO) {
            return Err(ConfigError::Invalid {
                field: format!("{field}.slot"),
                problem: "slot interval must be greater than zero".into(),
            });
        }
        let mut previous = Duration::ZERO;
        for (i, step) in self.schedule.iter().enumerate() {
            let field = format!("{field}.schedule[{i}]");
            // Two steps at one time would leave which one holds to the order they are listed in.
            if i > 0 && step.at <= previous {
                return Err(ConfigError::Invalid {
                    field: format!("{field}.at"),
                    problem: format!(
                        "schedule steps must be in strictly increasing time order ({:?} is not \
                         after the previous step's {previous:?}; merge steps at one time into one)",
                        step.at
                    ),
                });
            }
            previous = step.at;
            if step.rate_bps == Some(0) {
                return Err(ConfigError::ZeroRate {
                    field: format!("{field}.rate"),
                });
            }
            if let Some(loss) = step.loss {
                loss.validate(&format!("{field}.loss"))?;
            }
        }
        Ok(())
    }
}
