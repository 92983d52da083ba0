//! Checks of a scenario as a whole, once serde has read it: durations against the run length,
//! the MTU, every buffer against one full-size packet, flow names after `count` expansion,
//! applications, schedulers, transport settings, and links through
//! [`netsim::LinkConfig::validate`]. What passes becomes the model ([`Scenario`]).

use std::collections::BTreeMap;
use std::time::Duration;

use netsim::{
    Aqm, DEFAULT_MTU_BYTES, Jitter, JitterDistribution, LinkConfig, LossModel, QueueLimit,
    RedConfig, ScheduleStep,
};
use sched::SchedulerSpec;

use super::{RawAqm, RawFlow, RawJitter, RawLink, RawRed, RawScenario, RawTransport};
use crate::apps::{AppConfig, AppKind, Download, perf_config};
use crate::controllers::ControllerSpec;
use crate::error::FieldError;
use crate::model::{
    DEFAULT_SAMPLE_INTERVAL, DEFAULT_TIME_TO_BYTES, FlowSpec, MAX_MTU_BYTES, MIN_MTU_BYTES,
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

/// Checks that a link's buffer holds at least one full-size packet, resolving a BDP multiple
/// as netsim does (initial rate × bottleneck two-way delay).
fn check_queue_holds_packet(
    link: &LinkConfig,
    at: &str,
    base_rtt: Duration,
    mtu_bytes: u32,
) -> Result<(), FieldError> {
    let Some(limit_bytes) = link.queue.limit_bytes(link.rate_bps, base_rtt) else {
        return Ok(());
    };
    if limit_bytes < u64::from(mtu_bytes) {
        // Name the fields the limit comes from: a change to the rate, a delay or the MTU can
        // make a buffer that was fine too small.
        let from = match link.queue {
            QueueLimit::BdpMultiple(m) => format!(
                " ({m}bdp at rate {} bit/s over the base RTT {base_rtt:?}, the forward + return delay)",
                link.rate_bps
            ),
            QueueLimit::Time(t) => format!(" ({t:?} at rate {} bit/s)", link.rate_bps),
            QueueLimit::Bytes(_) | QueueLimit::Packets(_) => String::new(),
        };
        return Err(FieldError::new(
            format!("{at}.queue"),
            format!(
                "buffer of {limit_bytes} bytes{from} cannot hold one {mtu_bytes}-byte packet (mtu)"
            ),
        ));
    }
    Ok(())
}

impl RawScenario {
    pub(crate) fn validate(self) -> Result<Scenario, FieldError> {
        if self.name.trim().is_empty() {
            return Err(FieldError::new("name", "must not be empty"));
        }
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
        check_queue_holds_packet(&forward, "path.forward", base_rtt, mtu_bytes)?;
        check_queue_holds_packet(&return_link, "path.return", base_rtt, mtu_bytes)?;

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
            let template = raw.into_spec(&at, duration, self.transport)?;
            let count = template.1;
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
        global: RawTransport,
    ) -> Result<(FlowSpec, u32), FieldError> {
        if self.name.trim().is_empty() {
            return Err(FieldError::new(format!("{at}.name"), "must not be empty"));
        }
        let controller = ControllerSpec::parse(&self.cc, &self.cc_params, &format!("{at}.cc"))?;
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
