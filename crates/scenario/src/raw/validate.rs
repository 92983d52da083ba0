//! Checks of a scenario as a whole, once serde has read it: durations against the run length,
//! the MTU, every buffer against one full-size packet and 1 GiB, names as path components,
//! the number of flows and time-series rows, flow names after `count` expansion,
//! applications, schedulers, transport settings, and links through
//! [`netsim::LinkConfig::validate`]. What passes becomes the model ([`Scenario`]).

use std::collections::BTreeMap;
use std::time::Duration;

use netsim::{
    Aqm, DEFAULT_MTU_BYTES, IP_UDP_HEADER_BYTES, Jitter, JitterDistribution, LinkConfig, LossModel,
    QueueLimit, RedConfig, ScheduleStep,
};
use sched::SchedulerSpec;

use super::{RawAqm, RawFlow, RawJitter, RawLink, RawRed, RawScenario, RawTransport};
use crate::apps::{AppConfig, AppKind, Download, perf_config};
use crate::controllers::{ControllerSpec, HyblaSpec, HyblaSsthresh};
use crate::error::FieldError;
use crate::model::{
    DEFAULT_SAMPLE_INTERVAL, DEFAULT_TIME_TO_BYTES, FlowSpec, MAX_FLOWS, MAX_MTU_BYTES,
    MAX_NAME_BYTES, MAX_QUEUE_BYTES, MAX_TIME_SERIES_ROWS, MIN_MTU_BYTES, MIN_SAMPLE_INTERVAL,
    Scenario, TransportSpec,
};
use crate::values::{Setting, merge};

/// Largest `max_ack_delay` a QUIC endpoint may announce: values of 2^14 ms or more are invalid
/// (RFC 9000 §18.2).
const MAX_ACK_DELAY_LIMIT: Duration = Duration::from_millis(1 << 14);

impl RawJitter {
    /// Each distribution takes exactly its own keys: a key of another one is a mistake (a
    /// `mean` on a uniform distribution would silently not be the mean).
    fn into_jitter(self, at: &str) -> Result<Jitter, FieldError> {
        let keys: &[&str] = match self.distribution.as_str() {
            "exponential" => &["mean"],
            "uniform" => &["min", "max"],
            "normal" => &["mean", "stddev"],
            other => {
                return Err(FieldError::new(
                    format!("{at}.distribution"),
                    format!(
                        "unknown distribution {other:?}; expected \"exponential\" (mean), \
                         \"uniform\" (min, max) or \"normal\" (mean, stddev)"
                    ),
                ));
            }
        };
        let given = [
            ("mean", self.mean),
            ("stddev", self.stddev),
            ("min", self.min),
            ("max", self.max),
        ];
        for (key, value) in given {
            let problem_text = match (keys.contains(&key), value.is_some()) {
                (true, false) => format!("required for distribution = {:?}", self.distribution),
                (false, true) => format!(
                    "not a parameter of distribution = {:?} (it takes {})",
                    self.distribution,
                    keys.join(", ")
                ),
                _ => continue,
            };
            return Err(FieldError::new(format!("{at}.{key}"), problem_text));
        }
        let value = |v: Option<Duration>| v.expect("checked above");
        let distribution = match self.distribution.as_str() {
            "exponential" => JitterDistribution::Exponential {
                mean: value(self.mean),
            },
            "uniform" => JitterDistribution::Uniform {
                min: value(self.min),
                max: value(self.max),
            },
            _ => JitterDistribution::Normal {
                mean: value(self.mean),
                stddev: value(self.stddev),
            },
        };
        Ok(Jitter {
            distribution,
            reorder: self.reorder,
            interval: self.interval,
        })
    }
}

impl RawTransport {
    fn validate(&self, at: &str) -> Result<(), FieldError> {
        let windows = [
            ("stream_receive_window", self.stream_receive_window),
            ("receive_window", self.receive_window),
            ("send_window", self.send_window),
        ];
        for (key, value) in windows {
            if let Some(Setting::Value(0)) = value {
                return Err(FieldError::new(
                    format!("{at}.{key}"),
                    "window must be greater than zero",
                ));
            }
        }
        if let Some(Setting::Value(Duration::ZERO)) = self.initial_rtt {
            return Err(FieldError::new(
                format!("{at}.initial_rtt"),
                "must be greater than zero",
            ));
        }
        if let Some(Setting::Value(delay)) = self.max_ack_delay
            && delay >= MAX_ACK_DELAY_LIMIT
        {
            return Err(FieldError::new(
                format!("{at}.max_ack_delay"),
                "must be below 16384ms (RFC 9000 §18.2)",
            ));
        }
        Ok(())
    }

    fn merged_over(self, global: RawTransport) -> TransportSpec {
        TransportSpec {
            initial_rtt: merge(self.initial_rtt, global.initial_rtt),
            stream_receive_window_bytes: merge(
                self.stream_receive_window,
                global.stream_receive_window,
            ),
            receive_window_bytes: merge(self.receive_window, global.receive_window),
            send_window_bytes: merge(self.send_window, global.send_window),
            ack_eliciting_threshold: merge(
                self.ack_eliciting_threshold,
                global.ack_eliciting_threshold,
            ),
            max_ack_delay: merge(self.max_ack_delay, global.max_ack_delay),
        }
    }
}

impl RawLink {
    /// Converts and checks one direction; `at` is `path.forward` or `path.return`.
    fn into_config(self, at: &str, run: Duration) -> Result<LinkConfig, FieldError> {
        let aqm = match (self.aqm, self.red) {
            (Some(RawAqm::Red), red) => {
                let defaults = RedConfig::default();
                let red = red.unwrap_or(RawRed {
                    min: None,
                    max: None,
                    max_p: None,
                    weight: None,
                });
                Aqm::Red(RedConfig {
                    min_threshold_packets: red.min.unwrap_or(defaults.min_threshold_packets),
                    max_threshold_packets: red.max.unwrap_or(defaults.max_threshold_packets),
                    max_probability: red.max_p.unwrap_or(defaults.max_probability),
                    weight: red.weight.unwrap_or(defaults.weight),
                })
            }
            (_, Some(_)) => {
                return Err(FieldError::new(
                    format!("{at}.red"),
                    r#"RED parameters are only allowed with aqm = "red""#,
                ));
            }
            (_, None) => Aqm::DropTail,
        };
        let mut schedule = Vec::with_capacity(self.schedule.len());
        for (i, step) in self.schedule.into_iter().enumerate() {
            let field = format!("{at}.schedule[{i}]");
            if step.rate.is_none() && step.delay.is_none() && step.loss.is_none() {
                return Err(FieldError::new(
                    field,
                    "a schedule step must change at least one of rate, delay, loss",
                ));
            }
            if step.at >= run {
                return Err(FieldError::new(
                    format!("{field}.at"),
                    format!(
                        "{:?} is not before the end of the run (duration = {run:?})",
                        step.at
                    ),
                ));
            }
            schedule.push(ScheduleStep {
                at: step.at,
                rate_bps: step.rate,
                delay: step.delay,
                loss: step.loss.map(|l| l.0),
            });
        }
        let jitter = match self.jitter {
            Some(raw) => raw.into_jitter(&format!("{at}.jitter"))?,
            None => Jitter::default(),
        };
        let config = LinkConfig {
            rate_bps: self.rate,
            delay: self.delay,
            queue: self.queue.unwrap_or(QueueLimit::BdpMultiple(1.0)),
            aqm,
            loss: self.loss.map_or(LossModel::None, |l| l.0),
            jitter,
            slot: self.slot,
            schedule,
        };
        config.validate(at)?;
        Ok(config)
    }
}

/// A link's buffer in bytes, a packet limit counted at `mtu_bytes` per packet, a BDP multiple
/// and a time resolved as netsim does (initial rate × bottleneck two-way delay): computed
/// without overflow or a saturating cast, `None` where it exceeds u64.
fn queue_capacity_bytes(
    queue: QueueLimit,
    rate_bps: u64,
    base_rtt: Duration,
    mtu_bytes: u32,
) -> Option<u64> {
    match queue {
        QueueLimit::Bytes(bytes) => Some(bytes),
        QueueLimit::Packets(packets) => packets.checked_mul(u64::from(mtu_bytes)),
        QueueLimit::Time(time) => {
            // rate < 2^64 and time ≤ MAX_DURATION: the product fits in u128.
            let bits_nanos = u128::from(rate_bps).checked_mul(time.as_nanos())?;
            u64::try_from((bits_nanos + 4_000_000_000) / 8_000_000_000).ok()
        }
        QueueLimit::BdpMultiple(multiple) => {
            let bdp = u128::from(rate_bps).checked_mul(base_rtt.as_nanos())? / 8_000_000_000;
            let bytes = (bdp as f64 * multiple).round();
            // u64::MAX as f64 is 2^64: below it every f64 converts exactly.
            (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
        }
    }
}

/// Where a link's byte limit comes from, for messages: a change to the rate, a delay or the
/// MTU can make a buffer that was fine too small or too large.
fn queue_origin(link: &LinkConfig, base_rtt: Duration, mtu_bytes: u32) -> String {
    match link.queue {
        QueueLimit::BdpMultiple(m) => format!(
            " ({m}bdp at rate {} bit/s over the base RTT {base_rtt:?}, the forward + return delay)",
            link.rate_bps
        ),
        QueueLimit::Time(t) => format!(" ({t:?} at rate {} bit/s)", link.rate_bps),
        QueueLimit::Packets(p) => format!(" ({p} packets of up to {mtu_bytes} bytes, the mtu)"),
        QueueLimit::Bytes(_) => String::new(),
    }
}

/// Checks a link's buffer: at most [`MAX_QUEUE_BYTES`], at least one full-size packet, and
/// above RED's `min` threshold (in packets) where RED is on.
fn check_queue(
    link: &LinkConfig,
    at: &str,
    base_rtt: Duration,
    mtu_bytes: u32,
) -> Result<(), FieldError> {
    let field = format!("{at}.queue");
    let capacity = queue_capacity_bytes(link.queue, link.rate_bps, base_rtt, mtu_bytes);
    let Some(capacity) = capacity.filter(|&bytes| bytes <= MAX_QUEUE_BYTES) else {
        let size = capacity.map_or("more than 2^64 bytes".to_owned(), |b| format!("{b} bytes"));
        let packets = match link.queue {
            QueueLimit::Packets(_) => format!(
                "; at mtu {mtu_bytes} that is {} packets",
                MAX_QUEUE_BYTES / u64::from(mtu_bytes)
            ),
            _ => String::new(),
        };
        return Err(FieldError::new(
            field,
            format!(
                "buffer of {size}{} is larger than 1 GiB ({MAX_QUEUE_BYTES} bytes), the most a \
                 scenario may state{packets}",
                queue_origin(link, base_rtt, mtu_bytes)
            ),
        ));
    };
    // Within 1 GiB: the link's own resolution (f64, exact here) gives the same number.
    if let Some(limit_bytes) = link.queue.limit_bytes(link.rate_bps, base_rtt)
        && limit_bytes < u64::from(mtu_bytes)
    {
        return Err(FieldError::new(
            field,
            format!(
                "buffer of {limit_bytes} bytes{} cannot hold one {mtu_bytes}-byte packet (mtu)",
                queue_origin(link, base_rtt, mtu_bytes)
            ),
        ));
    }
    if let Aqm::Red(red) = link.aqm {
        // RED drops early by the average queue in packets; the hard limit drops every arrival
        // beyond it first, so an average that cannot reach `min` never drops anything early.
        let (limit_packets, what) = match link.queue {
            QueueLimit::Packets(p) => (p, format!("{p} packets")),
            _ => {
                let full = capacity / u64::from(mtu_bytes);
                (
                    full,
                    format!(
                        "{full} full-size packets ({capacity} bytes{} / mtu {mtu_bytes})",
                        queue_origin(link, base_rtt, mtu_bytes)
                    ),
                )
            }
        };
        if red.min_threshold_packets >= limit_packets as f64 {
            return Err(FieldError::new(
                format!("{at}.red.min"),
                format!(
                    "threshold of {} packets is not below the queue limit ({what}): the queue \
                     is full before RED's average reaches min, so RED would never drop early; \
                     min must be below the queue limit in packets",
                    red.min_threshold_packets
                ),
            ));
        }
    }
    Ok(())
}

/// Checks a name used as one path component (`out/NAME`, `NAME-server.qlog`): not empty, not
/// hidden, no separator, no control character, at most [`MAX_NAME_BYTES`].
fn check_name(field: &str, name: &str) -> Result<(), FieldError> {
    let problem = if name.trim().is_empty() {
        "must not be empty".to_owned()
    } else if let Some(c) = name.chars().find(|c| matches!(c, '/' | '\\')) {
        format!(
            "{name:?} contains {c:?}; names become file and directory names, so they must be \
             one path component"
        )
    } else if let Some(c) = name.chars().find(|c| c.is_control()) {
        format!(
            "{name:?} contains the control character U+{:04X}; names become file names",
            u32::from(c)
        )
    } else if name.starts_with('.') {
        format!(
            "{name:?} starts with \".\"; names become file and directory names, and \".\", \"..\" \
             and hidden names are not allowed"
        )
    } else if name.len() > MAX_NAME_BYTES {
        format!(
            "is {} bytes long; names become file names, at most {MAX_NAME_BYTES} bytes",
            name.len()
        )
    } else {
        return Ok(());
    };
    Err(FieldError::new(field, problem))
}

impl RawScenario {
    pub(crate) fn validate(self) -> Result<Scenario, FieldError> {
        check_name("name", &self.name)?;
        let duration = self.duration;
        if duration.is_zero() {
            return Err(FieldError::new("duration", "must be greater than zero"));
        }
        let sample_interval = self.sample_interval.unwrap_or(DEFAULT_SAMPLE_INTERVAL);
        if sample_interval.is_zero() {
            return Err(FieldError::new(
                "sample_interval",
                "must be greater than zero",
            ));
        }
        if sample_interval < MIN_SAMPLE_INTERVAL {
            return Err(FieldError::new(
                "sample_interval",
                format!(
                    "{sample_interval:?} is shorter than {MIN_SAMPLE_INTERVAL:?}, the finest \
                     time series a run keeps"
                ),
            ));
        }
        if sample_interval > duration {
            return Err(FieldError::new(
                "sample_interval",
                format!("{sample_interval:?} is longer than the run (duration = {duration:?})"),
            ));
        }
        let mtu_bytes = self.mtu.unwrap_or(DEFAULT_MTU_BYTES);
        if !(MIN_MTU_BYTES..=MAX_MTU_BYTES).contains(&mtu_bytes) {
            return Err(FieldError::new(
                "mtu",
                format!(
                    "{mtu_bytes} is outside {MIN_MTU_BYTES}..={MAX_MTU_BYTES} bytes \
                     (QUIC needs 1200-byte datagrams plus 28 bytes of IPv4/UDP headers)"
                ),
            ));
        }
        let time_to_bytes: Vec<u64> = match self.time_to_bytes {
            Some(sizes) => sizes.into_iter().map(|s| s.0).collect(),
            None => DEFAULT_TIME_TO_BYTES.to_vec(),
        };
        if let Some(i) = time_to_bytes.iter().position(|&b| b == 0) {
            return Err(FieldError::new(
                format!("time_to_bytes[{i}]"),
                "must be greater than zero",
            ));
        }

        let forward = self.path.forward.into_config("path.forward", duration)?;
        let return_link = self.path.return_link.into_config("path.return", duration)?;
        let base_rtt = forward.delay + return_link.delay;
        check_queue(&forward, "path.forward", base_rtt, mtu_bytes)?;
        check_queue(&return_link, "path.return", base_rtt, mtu_bytes)?;

        self.transport.validate("transport")?;
        if self.flow.is_empty() {
            return Err(FieldError::new(
                "flow",
                "no flows: add at least one [[flow]]",
            ));
        }
        let mut flows = Vec::new();
        let mut names: BTreeMap<String, usize> = BTreeMap::new();
        for (i, raw) in self.flow.into_iter().enumerate() {
            let at = format!("flow[{i}]");
            let template = raw.into_spec(&at, duration, mtu_bytes, self.transport)?;
            let count = template.1;
            // Checked before any copy is made: `count = 10000000` must not allocate.
            if count as usize > MAX_FLOWS - flows.len() {
                let total = flows.len() as u64 + u64::from(count);
                return Err(FieldError::new(
                    if count > 1 { format!("{at}.count") } else { at },
                    format!(
                        "{total} flows after count expansion; a scenario may have at most \
                         {MAX_FLOWS}"
                    ),
                ));
            }
            for k in 1..=count {
                let mut spec = template.0.clone();
                if count > 1 {
                    spec.name = format!("{}-{k}", spec.name);
                }
                if let Some(first) = names.insert(spec.name.clone(), i) {
                    return Err(FieldError::new(
                        format!("{at}.name"),
                        format!(
                            "flow name {:?} is already used by flow[{first}] \
                             (names must be unique after count expansion)",
                            spec.name
                        ),
                    ));
                }
                flows.push(spec);
            }
        }
        let samples = (duration.as_nanos() / sample_interval.as_nanos()) as u64;
        let rows = samples.saturating_mul(flows.len() as u64);
        if rows > MAX_TIME_SERIES_ROWS {
            return Err(FieldError::new(
                "sample_interval",
                format!(
                    "{} flow(s) (after count expansion) × {samples} samples (duration = \
                     {duration:?} / sample_interval = {sample_interval:?}) are {rows} time-series \
                     rows, more than the {MAX_TIME_SERIES_ROWS} a run keeps in memory; raise \
                     sample_interval or shorten duration",
                    flows.len()
                ),
            ));
        }

        Ok(Scenario {
            name: self.name,
            description: self.description,
            duration,
            seed: self.seed,
            sample_interval,
            mtu_bytes,
            time_to_bytes,
            forward,
            return_link,
            flows,
        })
    }
}

impl RawFlow {
    /// Checks one `[[flow]]` entry; returns the spec to copy and how many copies.
    fn into_spec(
        self,
        at: &str,
        run: Duration,
        mtu_bytes: u32,
        global: RawTransport,
    ) -> Result<(FlowSpec, u32), FieldError> {
        check_name(&format!("{at}.name"), &self.name)?;
        let controller = ControllerSpec::parse(&self.cc, &self.cc_params, &format!("{at}.cc"))?;
        check_windows_hold_two_packets(&controller, at, mtu_bytes)?;
        if self.count == 0 {
            return Err(FieldError::new(format!("{at}.count"), "must be at least 1"));
        }
        let start = self.start.unwrap_or_default();
        if start >= run {
            return Err(FieldError::new(
                format!("{at}.start"),
                format!("{start:?} is not before the end of the run (duration = {run:?})"),
            ));
        }
        let shorthand =
            self.download.is_some() || self.upload.is_some() || self.repeat_after.is_some();
        let apps = if self.app.is_empty() {
            if !shorthand {
                return Err(FieldError::new(
                    at,
                    "a flow needs a download and/or an upload (or [[flow.app]] tables)",
                ));
            }
            vec![AppConfig {
                name: "perf".to_owned(),
                kind: AppKind::Perf(perf_config(
                    at,
                    self.download.map(|d| d.0),
                    self.upload,
                    self.repeat_after,
                )?),
            }]
        } else {
            if shorthand {
                return Err(FieldError::new(
                    at,
                    "give either download/upload/repeat_after on the flow or [[flow.app]] tables, not both",
                ));
            }
            let mut apps: Vec<AppConfig> = Vec::new();
            for (i, raw) in self.app.into_iter().enumerate() {
                let app_at = format!("{at}.app[{i}]");
                let app = raw.into_config(&app_at)?;
                if apps.iter().any(|a| a.name == app.name) {
                    return Err(FieldError::new(
                        format!("{app_at}.name"),
                        format!("{:?} is already used by another app of this flow", app.name),
                    ));
                }
                apps.push(app);
            }
            apps
        };
        if let Some(stop) = self.stop {
            let unlimited = apps.iter().all(|app| match &app.kind {
                AppKind::Perf(perf) => perf.download == Some(Download::Unlimited),
                AppKind::Media(_) | AppKind::Bulk(_) => true,
            });
            if !unlimited {
                return Err(FieldError::new(
                    format!("{at}.stop"),
                    "only applies to download = \"unlimited\"",
                ));
            }
            if stop <= start {
                return Err(FieldError::new(
                    format!("{at}.stop"),
                    format!("{stop:?} is not after the flow's start ({start:?})"),
                ));
            }
        }
        for (i, app) in apps.iter().enumerate() {
            if let AppKind::Bulk(bulk) = &app.kind
                && bulk.start >= run
            {
                return Err(FieldError::new(
                    format!("{at}.app[{i}].start"),
                    format!(
                        "{:?} is not before the end of the run (duration = {run:?})",
                        bulk.start
                    ),
                ));
            }
        }
        check_stream_routing(at, &apps)?;
        if let Some(gap) = self.reconnect_after {
            check_reconnect(at, gap, &apps)?;
        }
        if controller.careful_resume() && self.reconnect_after.is_none() {
            return Err(FieldError::new(
                format!("{at}.cc_params.careful_resume"),
                "resumes a flow's second connection from its first; set reconnect_after",
            ));
        }
        let scheduler = match self.scheduler.as_deref() {
            None => SchedulerSpec::default(),
            Some(name) => name.parse().map_err(|e: sched::UnknownScheduler| {
                FieldError::new(format!("{at}.scheduler"), e.to_string())
            })?,
        };
        let scheduled = apps
            .iter()
            .any(|app| matches!(app.kind, AppKind::Media(_) | AppKind::Bulk(_)));
        if !scheduled && scheduler != SchedulerSpec::default() {
            return Err(FieldError::new(
                format!("{at}.scheduler"),
                format!(
                    "{:?} shares a flow between its media and bulk applications, and this flow \
                     has none (a perf application is not scheduled); leave scheduler out or add \
                     [[flow.app]] tables of kind \"media\" or \"bulk\"",
                    self.scheduler.as_deref().unwrap_or_default()
                ),
            ));
        }
        self.transport.validate(&format!("{at}.transport"))?;
        let spec = FlowSpec {
            name: self.name,
            controller,
            start,
            access_delay: self.access_delay.unwrap_or_default(),
            apps,
            stop: self.stop,
            reconnect_after: self.reconnect_after,
            qlog: self.qlog,
            transport: self.transport.merged_over(global),
            scheduler,
        };
        Ok((spec, self.count))
    }
}

/// A controller's `initial_window` and byte `initial_ssthresh` against the scenario's `mtu`:
/// at least two full-size datagrams (mtu − 28 bytes each), RFC 9002's minimum window. Below
/// one datagram the connection never sends its first packet.
fn check_windows_hold_two_packets(
    controller: &ControllerSpec,
    at: &str,
    mtu_bytes: u32,
) -> Result<(), FieldError> {
    let datagram = u64::from(mtu_bytes - IP_UDP_HEADER_BYTES);
    let ssthresh = match controller {
        ControllerSpec::Hybla(HyblaSpec {
            initial_ssthresh: Some(HyblaSsthresh::Bytes(bytes)),
            ..
        }) => Some(*bytes),
        _ => None,
    };
    for (key, value) in [
        ("initial_window", controller.initial_window()),
        ("initial_ssthresh", ssthresh),
    ] {
        if let Some(bytes) = value
            && bytes < 2 * datagram
        {
            return Err(FieldError::new(
                format!("{at}.cc_params.{key}"),
                format!(
                    "{bytes} bytes is less than two full-size packets at mtu {mtu_bytes} (2 × \
                     {datagram} = {} bytes of QUIC datagrams, RFC 9002's minimum window)",
                    2 * datagram
                ),
            ));
        }
    }
    Ok(())
}

/// Which applications may share the flow: [`perfwire::routing::check_routing`] (what a
/// receiving end can tell apart), the conflict placed under the later application's table.
fn check_stream_routing(at: &str, apps: &[AppConfig]) -> Result<(), FieldError> {
    use perfwire::routing::{StreamUse, check_routing};
    let uses = apps.iter().map(|app| {
        let used = match &app.kind {
            AppKind::Media(media) => StreamUse::Media {
                sender: media.sender,
            },
            AppKind::Bulk(bulk) => StreamUse::Bulk {
                sender: bulk.sender,
                start: bulk.start,
            },
            AppKind::Perf(perf) => StreamUse::Perf {
                uploads: perf.upload_bytes.is_some(),
            },
        };
        (app.name.as_str(), used)
    });
    check_routing(uses).map_err(|conflict| {
        let app_at = format!("{at}.app[{}]", conflict.index);
        let field = match conflict.key {
            Some(key) => format!("{app_at}.{key}"),
            None => app_at,
        };
        FieldError::new(field, conflict.problem)
    })
}

/// `reconnect_after` repeats sized perf exchanges on a new connection: the applications must
/// finish for the connection to close, and a repeat on the same connection would mix the two.
fn check_reconnect(at: &str, gap: Duration, apps: &[AppConfig]) -> Result<(), FieldError> {
    let field = format!("{at}.reconnect_after");
    if gap.is_zero() {
        return Err(FieldError::new(field, "must be greater than zero"));
    }
    for app in apps {
        match &app.kind {
            AppKind::Perf(perf) if perf.repeat_after.is_some() => {
                return Err(FieldError::new(
                    field,
                    "repeats on a new connection; repeat_after repeats on the same one: give one of them",
                ));
            }
            AppKind::Perf(perf) if perf.download == Some(Download::Unlimited) => {
                return Err(FieldError::new(
                    field,
                    "needs applications that finish; an unlimited download never does",
                ));
            }
            AppKind::Perf(_) => {}
            AppKind::Media(_) | AppKind::Bulk(_) => {
                return Err(FieldError::new(
                    field,
                    format!(
                        "works with perf applications only (app {:?} is {})",
                        app.name,
                        app.kind.name()
                    ),
                ));
            }
        }
    }
    Ok(())
}
