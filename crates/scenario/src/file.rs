//! Scenario files: one TOML file per experiment, turned into a validated [`Scenario`].
//!
//! Scenarios are data, not code: a file states the bottleneck in both directions, the transport
//! settings and the flows, with units in the strings (`"10Mbit"`, `"250ms"`, `"1%"`, `"100MB"`,
//! `"1bdp"`; see [`crate::units`]). The format is documented for users in
//! `docs/scenario-format.md`; keep the two in step.
//!
//! Loading happens in four steps, each reporting errors that name the file and the field:
//! 1. the text is parsed as TOML ([`ScenarioError::Syntax`]);
//! 2. command-line overrides (`key=value`, the CLI's `--set`) are written into the TOML tree
//!    ([`ScenarioError::Override`]);
//! 3. the tree is deserialized into private raw structs with `deny_unknown_fields` and the unit
//!    parsers, so a misspelt key or a wrong unit is caught with its path
//!    ([`ScenarioError::Invalid`]);
//! 4. the raw structs are checked as a whole (durations against the run length, flow names after
//!    `count` expansion, links through [`netsim::LinkConfig::validate`]) and converted.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use netsim::{
    Aqm, ConfigError, DEFAULT_MTU_BYTES, Jitter, JitterDistribution, LinkConfig, LossModel,
    PathConfig, QueueLimit, RedConfig, ScheduleStep,
};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use sched::SchedulerSpec;

use crate::apps::{AppConfig, AppKind, PerfConfig, RawApp, perf_config};
use crate::controllers::ControllerSpec;
use crate::units;

/// Master seed when the file gives none, so that two runs of the same file agree.
pub const DEFAULT_SEED: u64 = 1;

/// Sampling period of per-flow time series when the file gives none.
pub const DEFAULT_SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

/// Smallest path MTU: QUIC requires 1200-byte UDP payloads (RFC 9000 §14), plus 28 bytes of
/// IPv4/UDP headers ([`netsim::IP_UDP_HEADER_BYTES`]).
pub const MIN_MTU_BYTES: u32 = 1228;

/// Largest path MTU: the largest IPv4 packet.
pub const MAX_MTU_BYTES: u32 = 65535;

/// Download sizes at which completion times are reported when the file gives none: the
/// draft-kuhn-quic-4-sat objectives are stated at 2, 10 and 100 MB (\[Kuhn-slides\]).
pub const DEFAULT_TIME_TO_BYTES: [u64; 3] = [2_000_000, 10_000_000, 100_000_000];

/// Largest `max_ack_delay` a QUIC endpoint may announce: values of 2^14 ms or more are invalid
/// (RFC 9000 §18.2).
const MAX_ACK_DELAY_LIMIT: Duration = Duration::from_millis(1 << 14);

/// One experiment: the bottleneck in both directions, run length, and the flows crossing it.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Short identifier, used to name outputs.
    pub name: String,
    /// Free text for reports.
    pub description: Option<String>,
    /// Length of the run in (virtual or wall-clock) time.
    pub duration: Duration,
    /// Master seed; every random stream of the run is derived from it.
    pub seed: u64,
    /// Period of the per-flow time series.
    pub sample_interval: Duration,
    /// Largest IP packet the path carries, bytes.
    pub mtu_bytes: u32,
    /// Delivered-byte marks at which each flow's completion time is reported, bytes.
    pub time_to_bytes: Vec<u64>,
    /// Server → client (download) direction of the bottleneck.
    pub forward: LinkConfig,
    /// Client → server (upload, ACK) direction of the bottleneck.
    pub return_link: LinkConfig,
    /// Flows after `count` expansion, in file order.
    pub flows: Vec<FlowSpec>,
}

/// One QUIC connection and what it transfers.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    /// Unique name (after `count` expansion, `"name-1"`, `"name-2"`, ...).
    pub name: String,
    /// Congestion controller (`cc`) with its validated parameters (`cc_params`).
    pub controller: ControllerSpec,
    /// When the client connects, since the start of the run.
    pub start: Duration,
    /// Extra one-way delay of this flow's access segment, added in each direction.
    pub access_delay: Duration,
    /// The applications on this connection, in order (at least one): the `[[flow.app]]`
    /// tables, or the one perf application the shorthand (`download`, `upload`,
    /// `repeat_after` on the flow) describes.
    pub apps: Vec<AppConfig>,
    /// When the connection closes if still open (unlimited transfers), since the start of
    /// the run.
    pub stop: Option<Duration>,
    /// Whether to write a qlog file for this connection.
    pub qlog: bool,
    /// Transport settings: the flow's overrides merged over the scenario's `[transport]`.
    pub transport: TransportSpec,
    /// How the applications share the connection (`scheduler = "..."`; `none` by default).
    pub scheduler: SchedulerSpec,
}

impl FlowSpec {
    /// The flow's first perf application, if any.
    pub fn perf(&self) -> Option<&PerfConfig> {
        self.apps.iter().find_map(|app| match &app.kind {
            AppKind::Perf(perf) => Some(perf),
            _ => None,
        })
    }
}

/// Size of a flow's download: the perf protocol's request.
pub use perfwire::Request as Download;

/// Transport settings of one connection. `None` means "auto": the lab chooses (windows are
/// sized from the path's bandwidth-delay product, see `quinn_satellite::TransportSettings::for_path`) or leaves quinn's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransportSpec {
    /// RTT assumed before the first sample.
    pub initial_rtt: Option<Duration>,
    /// Per-stream flow-control window, bytes.
    pub stream_receive_window_bytes: Option<u64>,
    /// Connection flow-control window, bytes.
    pub receive_window_bytes: Option<u64>,
    /// Sender buffer limit, bytes.
    pub send_window_bytes: Option<u64>,
    /// ACK-frequency extension: ack-eliciting packets the receiver may get before it must ACK.
    pub ack_eliciting_threshold: Option<u32>,
    /// Longest time the receiver may delay an ACK.
    pub max_ack_delay: Option<Duration>,
}

/// Why a scenario cannot be loaded. Every message starts with the file (origin) and, where
/// there is one, the field path (`path.forward.rate`, `flow[0].download`).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{origin}: cannot read: {source}")]
    Read {
        /// The file.
        origin: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not UTF-8 text (TOML files must be), e.g. cut inside a character or
    /// saved in another encoding.
    #[error("{origin}: not UTF-8 text: byte 0x{byte:02x} at line {line}, column {column}")]
    NotUtf8 {
        /// The file.
        origin: String,
        /// Line of the first invalid byte, from 1.
        line: usize,
        /// Column (characters) of the first invalid byte, from 1.
        column: usize,
        /// The first invalid byte.
        byte: u8,
    },
    /// The text is not valid TOML.
    #[error("{origin}: {message}")]
    Syntax {
        /// The file.
        origin: String,
        /// The TOML parser's message, with line and column.
        message: String,
    },
    /// A `key=value` override could not be applied.
    #[error("{origin}: override {assignment:?}: {problem}")]
    Override {
        /// The file the override was applied to.
        origin: String,
        /// The override as given.
        assignment: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A field has a wrong type, unit or value, is unknown, or is missing.
    #[error("{origin}: {}{problem}", field_prefix(.field))]
    Invalid {
        /// The file.
        origin: String,
        /// Dotted path of the field (`flow[0].download`); empty for the top level.
        field: String,
        /// What is wrong.
        problem: String,
    },
}

fn field_prefix(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("{field}: ")
    }
}

impl ScenarioError {
    /// The field at fault, for an [`ScenarioError::Invalid`] error.
    pub fn field(&self) -> Option<&str> {
        match self {
            ScenarioError::Invalid { field, .. } => Some(field),
            _ => None,
        }
    }
}

impl Scenario {
    /// Reads and validates a scenario file, after applying `overrides` (each `key=value`, see
    /// [`Scenario::from_toml_str`]).
    pub fn from_file(path: &Path, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        let origin = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| ScenarioError::Read {
            origin: origin.clone(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            // Characters before the bad byte on its line (the prefix is valid UTF-8).
            let column = String::from_utf8_lossy(&valid[line_start..])
                .chars()
                .count()
                + 1;
            ScenarioError::NotUtf8 {
                origin: origin.clone(),
                line,
                column,
                byte: e.as_bytes()[valid.len()],
            }
        })?;
        Self::from_toml_str(&text, &origin, overrides)
    }

    /// Parses and validates scenario text; `origin` names it in errors.
    ///
    /// Each override is `key=value`: a dotted key into the TOML tree (`path.forward.rate`,
    /// `duration`, `flow.0.cc` for one array element, `flow.cc` for every element) and a value
    /// read as a TOML value if it parses as one (`60`, `true`, `{ rtt0 = "25ms" }`, `"x"`),
    /// else taken as a string (`20Mbit`, `cubic`). Missing tables on the way are created;
    /// unknown keys are rejected when the tree is deserialized.
    pub fn from_toml_str(
        text: &str,
        origin: &str,
        overrides: &[String],
    ) -> Result<Scenario, ScenarioError> {
        let mut table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| ScenarioError::Syntax {
                    origin: origin.to_owned(),
                    message: e.to_string().trim_end().to_owned(),
                })?;
        // Tables the overrides created on their way, by assignment.
        let mut created: Vec<(&String, String)> = Vec::new();
        for assignment in overrides {
            let mut made = Vec::new();
            apply_override(&mut table, assignment, &mut made).map_err(|problem| {
                ScenarioError::Override {
                    origin: origin.to_owned(),
                    assignment: assignment.clone(),
                    problem,
                }
            })?;
            created.extend(made.into_iter().map(|path| (assignment, path)));
        }
        let raw: RawScenario = serde_path_to_error::deserialize(table).map_err(|e| {
            let field = e.path().to_string();
            // `message()` leaves out toml's own "in `key`" suffix; the path says it.
            let problem = e.into_inner().message().trim_end().to_owned();
            // A table an override created where the file has something else (e.g.
            // `flow.app.rate=…` on a flow without apps): the override is at fault, not the file.
            if let Some((assignment, path)) = created.iter().find(|(_, path)| *path == field) {
                return ScenarioError::Override {
                    origin: origin.to_owned(),
                    assignment: (*assignment).clone(),
                    problem: format!(
                        "`{path}` does not exist, and a table created for it is wrong there: {problem}"
                    ),
                };
            }
            ScenarioError::Invalid {
                origin: origin.to_owned(),
                field: if field == "." { String::new() } else { field },
                problem,
            }
        })?;
        raw.validate().map_err(|p| ScenarioError::Invalid {
            origin: origin.to_owned(),
            field: p.field,
            problem: p.problem,
        })
    }

    /// The netsim path of this scenario: both links, the MTU and each flow's access delay.
    pub fn path_config(&self) -> PathConfig {
        PathConfig {
            forward: self.forward.clone(),
            return_link: self.return_link.clone(),
            mtu_bytes: self.mtu_bytes,
            access_delays: self.flows.iter().map(|f| f.access_delay).collect(),
        }
    }
}

// ---- overrides ---------------------------------------------------------------------------------

/// Writes one `key=value` override into the tree; records in `created` the paths of the
/// tables it had to create (`flow[1].transport`), as error paths write them.
fn apply_override(
    root: &mut toml::Table,
    assignment: &str,
    created: &mut Vec<String>,
) -> Result<(), String> {
    let (key, value) = assignment
        .split_once('=')
        .ok_or("expected key=value, e.g. path.forward.rate=20Mbit")?;
    let key = key.trim();
    let segments: Vec<&str> = key.split('.').map(str::trim).collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(format!("key {key:?} has an empty part"));
    }
    set_in_table(root, &segments, &override_value(value.trim()), "", created)
}

/// The override value as TOML if it is one, else as a string.
fn override_value(text: &str) -> toml::Value {
    let parsed = format!("v = {text}")
        .parse::<toml::Table>()
        .ok()
        .filter(|t| t.len() == 1)
        .and_then(|mut t| t.remove("v"));
    match parsed {
        // "inf", "nan" and dates are TOML too, but never meant as such here.
        Some(toml::Value::Float(_))
            if text
                .trim_start_matches(['+', '-'])
                .starts_with(|c: char| c.is_ascii_alphabetic()) =>
        {
            toml::Value::String(text.to_owned())
        }
        Some(toml::Value::Datetime(_)) | None => toml::Value::String(text.to_owned()),
        Some(value) => value,
    }
}

fn join(at: &str, segment: &str) -> String {
    if at.is_empty() {
        segment.to_owned()
    } else {
        format!("{at}.{segment}")
    }
}

fn set_in_table(
    table: &mut toml::Table,
    segments: &[&str],
    value: &toml::Value,
    at: &str,
    created: &mut Vec<String>,
) -> Result<(), String> {
    let Some((first, rest)) = segments.split_first() else {
        return Ok(());
    };
    if rest.is_empty() {
        table.insert((*first).to_owned(), value.clone());
        return Ok(());
    }
    let path = join(at, first);
    if !table.contains_key(*first) {
        created.push(path.clone());
    }
    let child = table
        .entry(*first)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    set_in_value(child, rest, value, &path, created)
}

fn set_in_value(
    target: &mut toml::Value,
    segments: &[&str],
    value: &toml::Value,
    at: &str,
    created: &mut Vec<String>,
) -> Result<(), String> {
    match target {
        toml::Value::Table(table) => set_in_table(table, segments, value, at, created),
        toml::Value::Array(items) => {
            let Some((first, rest)) = segments.split_first() else {
                return Ok(());
            };
            if let Ok(index) = first.parse::<usize>() {
                let len = items.len();
                let item = items.get_mut(index).ok_or_else(|| {
                    format!("`{at}` has {len} element(s); index {index} is out of range (indices start at 0)")
                })?;
                if rest.is_empty() {
                    *item = value.clone();
                    Ok(())
                } else {
                    set_in_value(item, rest, value, &format!("{at}[{index}]"), created)
                }
            } else if items.is_empty() {
                Err(format!("`{at}` has no entries to apply `{first}` to"))
            } else {
                items.iter_mut().enumerate().try_for_each(|(i, item)| {
                    set_in_value(item, segments, value, &format!("{at}[{i}]"), created)
                })
            }
        }
        other => Err(format!("`{at}` is a {}, not a table", other.type_str())),
    }
}

// ---- raw file structure ------------------------------------------------------------------------

fn default_seed() -> u64 {
    DEFAULT_SEED
}

fn default_count() -> u32 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    description: Option<String>,
    #[serde(deserialize_with = "units::deserialize_duration")]
    duration: Duration,
    #[serde(default = "default_seed")]
    seed: u64,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    sample_interval: Option<Duration>,
    mtu: Option<u32>,
    time_to_bytes: Option<Vec<SizeArg>>,
    path: RawPath,
    #[serde(default)]
    transport: RawTransport,
    #[serde(default)]
    flow: Vec<RawFlow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPath {
    forward: RawLink,
    #[serde(rename = "return")]
    return_link: RawLink,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    #[serde(deserialize_with = "units::deserialize_rate")]
    rate: u64,
    #[serde(deserialize_with = "units::deserialize_duration")]
    delay: Duration,
    #[serde(default, deserialize_with = "units::deserialize_opt_queue")]
    queue: Option<QueueLimit>,
    loss: Option<LossArg>,
    aqm: Option<RawAqm>,
    red: Option<RawRed>,
    jitter: Option<RawJitter>,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    slot: Option<Duration>,
    #[serde(default)]
    schedule: Vec<RawStep>,
}

/// `jitter = { distribution = "exponential", mean = "10ms" }` and its siblings.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJitter {
    distribution: String,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    mean: Option<Duration>,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    stddev: Option<Duration>,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    min: Option<Duration>,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    max: Option<Duration>,
    #[serde(default)]
    reorder: bool,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    interval: Option<Duration>,
}

impl RawJitter {
    /// Each distribution takes exactly its own keys: a key of another one is a mistake (a
    /// `mean` on a uniform distribution would silently not be the mean).
    fn into_jitter(self, at: &str) -> Result<Jitter, Problem> {
        let keys: &[&str] = match self.distribution.as_str() {
            "exponential" => &["mean"],
            "uniform" => &["min", "max"],
            "normal" => &["mean", "stddev"],
            other => {
                return Err(problem(
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
            return Err(problem(format!("{at}.{key}"), problem_text));
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

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum RawAqm {
    #[serde(alias = "drop-tail")]
    Droptail,
    Red,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRed {
    min: Option<f64>,
    max: Option<f64>,
    #[serde(default, deserialize_with = "units::deserialize_opt_probability")]
    max_p: Option<f64>,
    weight: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    #[serde(deserialize_with = "units::deserialize_duration")]
    at: Duration,
    #[serde(default, deserialize_with = "units::deserialize_opt_rate")]
    rate: Option<u64>,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    delay: Option<Duration>,
    loss: Option<LossArg>,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct RawTransport {
    initial_rtt: Option<Setting<Duration>>,
    stream_receive_window: Option<Setting<u64>>,
    receive_window: Option<Setting<u64>>,
    send_window: Option<Setting<u64>>,
    ack_eliciting_threshold: Option<Setting<u32>>,
    max_ack_delay: Option<Setting<Duration>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    name: String,
    cc: String,
    #[serde(default)]
    cc_params: BTreeMap<String, toml::Value>,
    #[serde(default = "default_count")]
    count: u32,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    start: Option<Duration>,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    access_delay: Option<Duration>,
    download: Option<DownloadArg>,
    #[serde(default, deserialize_with = "units::deserialize_opt_size")]
    upload: Option<u64>,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    repeat_after: Option<Duration>,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    stop: Option<Duration>,
    #[serde(default)]
    qlog: bool,
    #[serde(default)]
    transport: RawTransport,
    #[serde(default)]
    app: Vec<RawApp>,
    scheduler: Option<String>,
}

/// A size in a list (`time_to_bytes`).
struct SizeArg(u64);

impl<'de> Deserialize<'de> for SizeArg {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        units::deserialize_size(deserializer).map(SizeArg)
    }
}

/// `"unlimited"` or a size.
pub(crate) struct DownloadArg(pub(crate) Download);

impl<'de> Deserialize<'de> for DownloadArg {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = DownloadArg;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#""unlimited" or a size such as "100MB""#)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DownloadArg, E> {
                if v.trim() == "unlimited" {
                    return Ok(DownloadArg(Download::Unlimited));
                }
                units::parse_size(v)
                    .map(|bytes| DownloadArg(Download::Bytes(bytes)))
                    .map_err(|e| E::custom(format!(r#"{e} (or "unlimited")"#)))
            }
            // Bare numbers lack their unit; the parser says so with a hint.
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DownloadArg, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DownloadArg, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<DownloadArg, E> {
                self.visit_str(&v.to_string())
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// A loss model: `"none"`, a percentage (Bernoulli), or a table naming the model.
struct LossArg(LossModel);

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
enum LossKind {
    Bernoulli,
    GilbertElliott,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LossTable {
    model: LossKind,
    #[serde(deserialize_with = "units::deserialize_probability")]
    p: f64,
    #[serde(default, deserialize_with = "units::deserialize_opt_probability")]
    r: Option<f64>,
    #[serde(default, deserialize_with = "units::deserialize_opt_probability")]
    loss_in_good: Option<f64>,
    #[serde(default, deserialize_with = "units::deserialize_opt_probability")]
    loss_in_bad: Option<f64>,
}

impl LossTable {
    fn into_model(self) -> Result<LossModel, String> {
        match self.model {
            LossKind::Bernoulli => {
                let extra = [
                    ("r", self.r),
                    ("loss_in_good", self.loss_in_good),
                    ("loss_in_bad", self.loss_in_bad),
                ];
                if let Some((key, _)) = extra.iter().find(|(_, v)| v.is_some()) {
                    return Err(format!(
                        r#"`{key}` only applies to model = "gilbert-elliott""#
                    ));
                }
                Ok(LossModel::Bernoulli {
                    probability: self.p,
                })
            }
            LossKind::GilbertElliott => Ok(LossModel::GilbertElliott {
                p_good_to_bad: self.p,
                p_bad_to_good: self.r.ok_or(
                    r#"model = "gilbert-elliott" needs `r`, the probability of leaving the bad state"#,
                )?,
                loss_in_good: self.loss_in_good.unwrap_or(0.0),
                loss_in_bad: self.loss_in_bad.unwrap_or(1.0),
            }),
        }
    }
}

impl<'de> Deserialize<'de> for LossArg {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LossArg;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    r#"a loss probability such as "1%", "none", or a table such as { model = "gilbert-elliott", p = "1.8%", r = "64.5%" }"#,
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LossArg, E> {
                if v.trim() == "none" {
                    return Ok(LossArg(LossModel::None));
                }
                units::parse_probability(v)
                    .map(|probability| LossArg(LossModel::Bernoulli { probability }))
                    .map_err(E::custom)
            }
            // Bare numbers lack their unit; the parser says so with a hint.
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LossArg, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LossArg, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<LossArg, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LossArg, A::Error> {
                let table = LossTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                table.into_model().map(LossArg).map_err(de::Error::custom)
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A transport setting: `"auto"` or a value.
#[derive(Clone, Copy)]
enum Setting<T> {
    Auto,
    Value(T),
}

/// How a [`Setting`] value is written: durations and sizes as unit strings, counts as integers.
trait SettingValue: Sized {
    const EXPECTING: &'static str;
    fn from_text(text: &str) -> Result<Self, String>;
    /// Reads an integer; by default it is a unit string missing its unit, so the text parser
    /// gives the hint.
    fn from_integer(value: i128) -> Result<Self, String> {
        Self::from_text(&value.to_string())
    }
}

impl SettingValue for Duration {
    const EXPECTING: &'static str = r#""auto" or a duration such as "25ms""#;
    fn from_text(text: &str) -> Result<Self, String> {
        units::parse_duration(text).map_err(|e| e.to_string())
    }
}

impl SettingValue for u64 {
    const EXPECTING: &'static str = r#""auto" or a size such as "16MB""#;
    fn from_text(text: &str) -> Result<Self, String> {
        units::parse_size(text).map_err(|e| e.to_string())
    }
}

impl SettingValue for u32 {
    const EXPECTING: &'static str = r#""auto" or an integer >= 0"#;
    fn from_text(text: &str) -> Result<Self, String> {
        Err(format!(
            r#"expected "auto" or an integer >= 0, got {text:?}"#
        ))
    }
    fn from_integer(value: i128) -> Result<Self, String> {
        u32::try_from(value).map_err(|_| {
            format!(
                "{value} is out of range (expected an integer from 0 to {})",
                u32::MAX
            )
        })
    }
}

impl<'de, T: SettingValue> Deserialize<'de> for Setting<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<T: SettingValue> Visitor<'_> for V<T> {
            type Value = Setting<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(T::EXPECTING)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Setting<T>, E> {
                if v.trim() == "auto" {
                    Ok(Setting::Auto)
                } else {
                    T::from_text(v).map(Setting::Value).map_err(E::custom)
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Setting<T>, E> {
                T::from_integer(v.into())
                    .map(Setting::Value)
                    .map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Setting<T>, E> {
                T::from_integer(v.into())
                    .map(Setting::Value)
                    .map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Setting<T>, E> {
                T::from_text(&v.to_string())
                    .map(Setting::Value)
                    .map_err(E::custom)
            }
        }
        deserializer.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `flow` wins over `global`; "auto" in either place means `None`.
fn merge<T: Copy>(flow: Option<Setting<T>>, global: Option<Setting<T>>) -> Option<T> {
    match flow.or(global)? {
        Setting::Auto => None,
        Setting::Value(value) => Some(value),
    }
}

// ---- validation ----------------------------------------------------------------------------------

/// A validation failure before the file name is attached.
pub(crate) struct Problem {
    field: String,
    problem: String,
}

pub(crate) fn problem(field: impl Into<String>, problem: impl Into<String>) -> Problem {
    Problem {
        field: field.into(),
        problem: problem.into(),
    }
}

impl From<ConfigError> for Problem {
    fn from(error: ConfigError) -> Self {
        let field = match &error {
            ConfigError::ZeroRate { field }
            | ConfigError::Probability { field, .. }
            | ConfigError::QueueTooSmall { field, .. }
            | ConfigError::Invalid { field, .. } => field.clone(),
        };
        let message = error.to_string();
        let text = message
            .strip_prefix(&format!("{field}: "))
            .unwrap_or(&message)
            .to_owned();
        problem(field, text)
    }
}

impl RawTransport {
    fn validate(&self, at: &str) -> Result<(), Problem> {
        let windows = [
            ("stream_receive_window", self.stream_receive_window),
            ("receive_window", self.receive_window),
            ("send_window", self.send_window),
        ];
        for (key, value) in windows {
            if let Some(Setting::Value(0)) = value {
                return Err(problem(
                    format!("{at}.{key}"),
                    "window must be greater than zero",
                ));
            }
        }
        if let Some(Setting::Value(Duration::ZERO)) = self.initial_rtt {
            return Err(problem(
                format!("{at}.initial_rtt"),
                "must be greater than zero",
            ));
        }
        if let Some(Setting::Value(delay)) = self.max_ack_delay
            && delay >= MAX_ACK_DELAY_LIMIT
        {
            return Err(problem(
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
    fn into_config(self, at: &str, run: Duration) -> Result<LinkConfig, Problem> {
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
                return Err(problem(
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
                return Err(problem(
                    field,
                    "a schedule step must change at least one of rate, delay, loss",
                ));
            }
            if step.at >= run {
                return Err(problem(
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
) -> Result<(), Problem> {
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
        return Err(problem(
            format!("{at}.queue"),
            format!(
                "buffer of {limit_bytes} bytes{from} cannot hold one {mtu_bytes}-byte packet (mtu)"
            ),
        ));
    }
    Ok(())
}

impl RawScenario {
    fn validate(self) -> Result<Scenario, Problem> {
        if self.name.trim().is_empty() {
            return Err(problem("name", "must not be empty"));
        }
        let duration = self.duration;
        if duration.is_zero() {
            return Err(problem("duration", "must be greater than zero"));
        }
        let sample_interval = self.sample_interval.unwrap_or(DEFAULT_SAMPLE_INTERVAL);
        if sample_interval.is_zero() {
            return Err(problem("sample_interval", "must be greater than zero"));
        }
        if sample_interval > duration {
            return Err(problem(
                "sample_interval",
                format!("{sample_interval:?} is longer than the run (duration = {duration:?})"),
            ));
        }
        let mtu_bytes = self.mtu.unwrap_or(DEFAULT_MTU_BYTES);
        if !(MIN_MTU_BYTES..=MAX_MTU_BYTES).contains(&mtu_bytes) {
            return Err(problem(
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
            return Err(problem(
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
            return Err(problem("flow", "no flows: add at least one [[flow]]"));
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
                    return Err(problem(
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
    ) -> Result<(FlowSpec, u32), Problem> {
        if self.name.trim().is_empty() {
            return Err(problem(format!("{at}.name"), "must not be empty"));
        }
        let controller = ControllerSpec::parse(&self.cc, &self.cc_params, &format!("{at}.cc"))
            .map_err(|e| problem(e.field, e.problem))?;
        if self.count == 0 {
            return Err(problem(format!("{at}.count"), "must be at least 1"));
        }
        let start = self.start.unwrap_or_default();
        if start >= run {
            return Err(problem(
                format!("{at}.start"),
                format!("{start:?} is not before the end of the run (duration = {run:?})"),
            ));
        }
        let shorthand =
            self.download.is_some() || self.upload.is_some() || self.repeat_after.is_some();
        let apps = if self.app.is_empty() {
            if !shorthand {
                return Err(problem(
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
                return Err(problem(
                    at,
                    "give either download/upload/repeat_after on the flow or [[flow.app]] tables, not both",
                ));
            }
            let mut apps: Vec<AppConfig> = Vec::new();
            for (i, raw) in self.app.into_iter().enumerate() {
                let app_at = format!("{at}.app[{i}]");
                let app = raw.into_config(&app_at)?;
                if apps.iter().any(|a| a.name == app.name) {
                    return Err(problem(
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
                return Err(problem(
                    format!("{at}.stop"),
                    "only applies to download = \"unlimited\"",
                ));
            }
            if stop <= start {
                return Err(problem(
                    format!("{at}.stop"),
                    format!("{stop:?} is not after the flow's start ({start:?})"),
                ));
            }
        }
        for (i, app) in apps.iter().enumerate() {
            if let AppKind::Bulk(bulk) = &app.kind
                && bulk.start >= run
            {
                return Err(problem(
                    format!("{at}.app[{i}].start"),
                    format!(
                        "{:?} is not before the end of the run (duration = {run:?})",
                        bulk.start
                    ),
                ));
            }
        }
        let scheduler = match self.scheduler.as_deref() {
            None => SchedulerSpec::default(),
            Some(name) => SchedulerSpec::from_name(name).ok_or_else(|| {
                problem(
                    format!("{at}.scheduler"),
                    format!(
                        "unknown scheduler {name:?}; available: {}",
                        sched::SCHEDULERS.join(", ")
                    ),
                )
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
            qlog: self.qlog,
            transport: self.transport.merged_over(global),
            scheduler,
        };
        Ok((spec, self.count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::{HyblaGrowth, HyblaSpec};

    const ORIGIN: &str = "case.toml";

    /// A small valid scenario; cases below break it with overrides or appended text.
    const BASE: &str = r#"
name = "base"
duration = "60s"

[path.forward]
rate = "10Mbit"
delay = "250ms"

[path.return]
rate = "2Mbit"
delay = "250ms"

[[flow]]
name = "sat"
cc = "newreno"
download = "10MB"
"#;

    fn load(text: &str, overrides: &[&str]) -> Result<Scenario, ScenarioError> {
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        Scenario::from_toml_str(text, ORIGIN, &overrides)
    }

    /// Loads `text` with `overrides`, expects an error naming `field`, returns its message.
    #[track_caller]
    fn fails(text: &str, overrides: &[&str], field: &str) -> String {
        let err = load(text, overrides).expect_err("scenario should be rejected");
        let message = err.to_string();
        assert!(message.starts_with(ORIGIN), "no file name: {message}");
        assert!(message.contains(field), "no field {field:?}: {message}");
        message
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    // ---- a full scenario ---------------------------------------------------------------------

    const FULL: &str = r#"
name = "full"
description = "every key"
duration = "300s"
seed = 7
sample_interval = "50ms"
mtu = 1400
time_to_bytes = ["1MB", "5MiB"]

[path.forward]
rate = "50Mbit"
delay = "325ms"
queue = "2bdp"
loss = { model = "gilbert-elliott", p = "1.8%", r = "64.5%" }
aqm = "red"
red = { min = 4, max = 12.5, max_p = "5%" }
jitter = { distribution = "normal", mean = "8ms", stddev = "3ms", reorder = true, interval = "5ms" }

[[path.forward.schedule]]
at = "5s"
rate = "10Mbit"

[[path.forward.schedule]]
at = "20s"
delay = "330ms"
loss = "0.1%"

[path.return]
rate = "0.5Mbit"
delay = "325ms"
queue = "50 packets"
loss = { model = "bernoulli", p = "1%" }
aqm = "droptail"
jitter = { distribution = "uniform", min = "0ms", max = "4ms" }
slot = "100ms"

[transport]
initial_rtt = "650ms"
stream_receive_window = "16MB"
receive_window = "auto"
send_window = "32MiB"
ack_eliciting_threshold = 10
max_ack_delay = "25ms"

[[flow]]
name = "hyb"
cc = "hybla"
cc_params = { rtt0 = "25ms", growth = "seed" }
count = 2
start = "1s"
access_delay = "10ms"
download = "unlimited"
stop = "60s"
qlog = true
[flow.transport]
stream_receive_window = "auto"
ack_eliciting_threshold = "auto"
max_ack_delay = "10ms"

[[flow]]
name = "up"
cc = "cubic"
upload = "10MB"
download = "100MB"
repeat_after = "10s"
"#;

    #[test]
    fn full_scenario_parses_to_exact_values() {
        let s = load(FULL, &[]).unwrap();
        let transport_global = TransportSpec {
            initial_rtt: Some(ms(650)),
            stream_receive_window_bytes: Some(16_000_000),
            receive_window_bytes: None,
            send_window_bytes: Some(32 << 20),
            ack_eliciting_threshold: Some(10),
            max_ack_delay: Some(ms(25)),
        };
        let hyb = FlowSpec {
            name: "hyb-1".into(),
            controller: ControllerSpec::Hybla(HyblaSpec {
                rtt0: Some(ms(25)),
                growth: Some(HyblaGrowth::Seed),
                ..HyblaSpec::default()
            }),
            start: ms(1000),
            access_delay: ms(10),
            apps: vec![AppConfig {
                name: "perf".into(),
                kind: AppKind::Perf(PerfConfig {
                    download: Some(Download::Unlimited),
                    upload_bytes: None,
                    repeat_after: None,
                }),
            }],
            stop: Some(Duration::from_secs(60)),
            qlog: true,
            transport: TransportSpec {
                stream_receive_window_bytes: None,
                ack_eliciting_threshold: None,
                max_ack_delay: Some(ms(10)),
                ..transport_global
            },
            scheduler: SchedulerSpec::RoundRobin,
        };
        let expected = Scenario {
            name: "full".into(),
            description: Some("every key".into()),
            duration: Duration::from_secs(300),
            seed: 7,
            sample_interval: ms(50),
            mtu_bytes: 1400,
            time_to_bytes: vec![1_000_000, 5 << 20],
            forward: LinkConfig {
                rate_bps: 50_000_000,
                delay: ms(325),
                queue: QueueLimit::BdpMultiple(2.0),
                aqm: Aqm::Red(RedConfig {
                    min_threshold_packets: 4.0,
                    max_threshold_packets: 12.5,
                    max_probability: 0.05,
                    weight: 0.002,
                }),
                loss: LossModel::GilbertElliott {
                    p_good_to_bad: 0.018,
                    p_bad_to_good: 0.645,
                    loss_in_good: 0.0,
                    loss_in_bad: 1.0,
                },
                jitter: Jitter {
                    distribution: JitterDistribution::Normal {
                        mean: ms(8),
                        stddev: ms(3),
                    },
                    reorder: true,
                    interval: Some(ms(5)),
                },
                slot: None,
                schedule: vec![
                    ScheduleStep {
                        at: Duration::from_secs(5),
                        rate_bps: Some(10_000_000),
                        delay: None,
                        loss: None,
                    },
                    ScheduleStep {
                        at: Duration::from_secs(20),
                        rate_bps: None,
                        delay: Some(ms(330)),
                        loss: Some(LossModel::Bernoulli { probability: 0.001 }),
                    },
                ],
            },
            return_link: LinkConfig {
                rate_bps: 500_000,
                delay: ms(325),
                queue: QueueLimit::Packets(50),
                aqm: Aqm::DropTail,
                loss: LossModel::Bernoulli { probability: 0.01 },
                jitter: Jitter {
                    distribution: JitterDistribution::Uniform {
                        min: ms(0),
                        max: ms(4),
                    },
                    reorder: false,
                    interval: None,
                },
                slot: Some(ms(100)),
                schedule: vec![],
            },
            flows: vec![
                hyb.clone(),
                FlowSpec {
                    name: "hyb-2".into(),
                    ..hyb
                },
                FlowSpec {
                    name: "up".into(),
                    controller: ControllerSpec::named("cubic", "cc").unwrap(),
                    start: Duration::ZERO,
                    access_delay: Duration::ZERO,
                    apps: vec![AppConfig {
                        name: "perf".into(),
                        kind: AppKind::Perf(PerfConfig {
                            download: Some(Download::Bytes(100_000_000)),
                            upload_bytes: Some(10_000_000),
                            repeat_after: Some(Duration::from_secs(10)),
                        }),
                    }],
                    stop: None,
                    qlog: false,
                    transport: transport_global,
                    scheduler: SchedulerSpec::RoundRobin,
                },
            ],
        };
        assert_eq!(s, expected);
        let path = s.path_config();
        assert_eq!(path.access_delays, vec![ms(10), ms(10), Duration::ZERO]);
        assert_eq!(path.mtu_bytes, 1400);
    }

    #[test]
    fn defaults() {
        let s = load(BASE, &[]).unwrap();
        assert_eq!(s.description, None);
        assert_eq!(s.seed, DEFAULT_SEED);
        assert_eq!(s.sample_interval, DEFAULT_SAMPLE_INTERVAL);
        assert_eq!(s.mtu_bytes, DEFAULT_MTU_BYTES);
        assert_eq!(s.time_to_bytes, DEFAULT_TIME_TO_BYTES.to_vec());
        assert_eq!(s.forward, LinkConfig::new(10_000_000, ms(250)));
        assert_eq!(s.return_link, LinkConfig::new(2_000_000, ms(250)));
        let flow = &s.flows[0];
        assert_eq!(flow.name, "sat");
        assert_eq!(flow.start, Duration::ZERO);
        assert_eq!(flow.access_delay, Duration::ZERO);
        assert_eq!(
            flow.perf().unwrap().download,
            Some(Download::Bytes(10_000_000))
        );
        assert_eq!(flow.perf().unwrap().upload_bytes, None);
        assert!(!flow.qlog);
        assert_eq!(
            flow.controller,
            ControllerSpec::named("newreno", "cc").unwrap()
        );
        assert_eq!(flow.transport, TransportSpec::default());
    }

    #[test]
    fn loss_none_and_red_defaults() {
        let s = load(BASE, &["path.forward.loss=none", "path.return.aqm=red"]).unwrap();
        assert_eq!(s.forward.loss, LossModel::None);
        assert_eq!(s.return_link.aqm, Aqm::Red(RedConfig::default()));
    }

    // ---- invalid values name the file and the field -----------------------------------------

    #[test]
    fn zero_duration() {
        fails(BASE, &["duration=0s"], "duration");
    }

    #[test]
    fn negative_delay() {
        let m = fails(BASE, &["path.forward.delay=-5ms"], "path.forward.delay");
        assert!(m.contains("negative duration"), "{m}");
    }

    #[test]
    fn no_flows() {
        let text = BASE.split("[[flow]]").next().unwrap();
        let m = fails(text, &[], "flow");
        assert!(m.contains("no flows"), "{m}");
    }

    #[test]
    fn zero_rate() {
        fails(BASE, &["path.forward.rate=0bit"], "path.forward.rate");
        fails(BASE, &["path.return.rate=0Mbit"], "path.return.rate");
    }

    #[test]
    fn zero_rate_in_schedule() {
        fails(
            BASE,
            &[r#"path.forward.schedule=[{ at = "5s", rate = "0Mbit" }]"#],
            "path.forward.schedule[0].rate",
        );
    }

    #[test]
    fn loss_above_100_percent() {
        let m = fails(BASE, &["path.forward.loss=101%"], "path.forward.loss");
        assert!(m.contains("more than 100%"), "{m}");
        fails(
            BASE,
            &[r#"path.return.loss={ model = "gilbert-elliott", p = "1%", r = "150%" }"#],
            "path.return.loss.r",
        );
    }

    #[test]
    fn bad_loss_tables() {
        fails(
            BASE,
            &[r#"path.forward.loss={ model = "gilbert-elliott", p = "1%" }"#],
            "path.forward.loss",
        );
        fails(
            BASE,
            &[r#"path.forward.loss={ model = "bernoulli", p = "1%", r = "5%" }"#],
            "path.forward.loss",
        );
        fails(
            BASE,
            &[r#"path.forward.loss={ model = "uniform", p = "1%" }"#],
            "path.forward.loss.model",
        );
        let m = fails(BASE, &["path.forward.loss=0.01"], "path.forward.loss");
        assert!(m.contains(r#"write "1%" not "0.01""#), "{m}");
    }

    #[test]
    fn schedule_out_of_order() {
        fails(
            BASE,
            &[
                r#"path.forward.schedule=[{ at = "5s", rate = "5Mbit" }, { at = "2s", rate = "1Mbit" }]"#,
            ],
            "path.forward.schedule[1].at",
        );
    }

    #[test]
    fn schedule_beyond_duration() {
        fails(
            BASE,
            &[r#"path.return.schedule=[{ at = "60s", rate = "5Mbit" }]"#],
            "path.return.schedule[0].at",
        );
    }

    #[test]
    fn schedule_step_without_change() {
        let m = fails(
            BASE,
            &[r#"path.forward.schedule=[{ at = "5s" }]"#],
            "path.forward.schedule[0]",
        );
        assert!(m.contains("at least one of rate, delay, loss"), "{m}");
    }

    #[test]
    fn red_without_aqm_red() {
        fails(BASE, &["path.forward.red={ min = 5 }"], "path.forward.red");
        fails(
            BASE,
            &["path.forward.red={ min = 5 }", "path.forward.aqm=droptail"],
            "path.forward.red",
        );
    }

    #[test]
    fn bad_red_thresholds() {
        fails(
            BASE,
            &[
                "path.forward.aqm=red",
                "path.forward.red={ min = 20, max = 10 }",
            ],
            "path.forward.red",
        );
    }

    #[test]
    fn bad_jitter_and_slot() {
        let m = fails(
            BASE,
            &[r#"path.forward.jitter={ distribution = "pareto", mean = "5ms" }"#],
            "path.forward.jitter.distribution",
        );
        assert!(m.contains("exponential"), "{m}");
        let m = fails(
            BASE,
            &[r#"path.forward.jitter={ distribution = "exponential" }"#],
            "path.forward.jitter.mean",
        );
        assert!(m.contains("required"), "{m}");
        let m = fails(
            BASE,
            &[
                r#"path.return.jitter={ distribution = "uniform", mean = "5ms", min = "0ms", max = "9ms" }"#,
            ],
            "path.return.jitter.mean",
        );
        assert!(m.contains("min, max"), "{m}");
        fails(
            BASE,
            &[r#"path.forward.jitter={ distribution = "uniform", min = "9ms", max = "1ms" }"#],
            "path.forward.jitter",
        );
        fails(
            BASE,
            &[r#"path.forward.jitter={ distribution = "normal", mean = "9ms", stddev = "0ms" }"#],
            "path.forward.jitter",
        );
        fails(
            BASE,
            &[r#"path.forward.jitter={ distribution = "exponential", mean = "-1ms" }"#],
            "path.forward.jitter",
        );
        fails(
            BASE,
            &[
                r#"path.forward.jitter={ distribution = "exponential", mean = "1ms", reorder = "yes" }"#,
            ],
            "path.forward.jitter",
        );
        fails(
            BASE,
            &[
                r#"path.forward.jitter={ distribution = "exponential", mean = "1ms", interval = "0s" }"#,
            ],
            "path.forward.jitter.interval",
        );
        fails(BASE, &["path.return.slot=0ms"], "path.return.slot");
        fails(BASE, &["path.return.slot=100"], "path.return.slot");
    }

    #[test]
    fn unknown_aqm() {
        fails(BASE, &["path.forward.aqm=codel"], "path.forward.aqm");
    }

    #[test]
    fn queue_too_small_and_zero() {
        fails(BASE, &["path.forward.queue=1000B"], "path.forward.queue");
        fails(BASE, &["path.forward.queue=0pkt"], "path.forward.queue");
        // 2 Mbit/s × 2 ms = 500 bytes: less than one packet.
        fails(
            BASE,
            &["path.forward.delay=1ms", "path.return.delay=1ms"],
            "path.return.queue",
        );
    }

    #[test]
    fn duplicate_flow_names_after_expansion() {
        let text =
            format!("{BASE}\n[[flow]]\nname = \"sat-2\"\ncc = \"cubic\"\nupload = \"1MB\"\n");
        let m = fails(&text, &["flow.0.count=3"], "flow[1].name");
        assert!(m.contains("sat-2"), "{m}");
        let text = format!("{BASE}\n[[flow]]\nname = \"sat\"\ncc = \"cubic\"\nupload = \"1MB\"\n");
        fails(&text, &[], "flow[1].name");
    }

    #[test]
    fn unknown_controller() {
        let m = fails(BASE, &["flow.cc=vegas"], "flow[0].cc");
        assert!(m.contains("newreno, cubic, bbr, hybla"), "{m}");
    }

    #[test]
    fn flow_needs_a_transfer() {
        let text = BASE.replace("download = \"10MB\"\n", "");
        fails(&text, &[], "flow[0]");
    }

    #[test]
    fn zero_sizes() {
        fails(BASE, &["flow.0.download=0MB"], "flow[0].download");
        fails(BASE, &["flow.0.upload=0B"], "flow[0].upload");
        fails(
            BASE,
            &[r#"time_to_bytes=["1MB", "0B"]"#],
            "time_to_bytes[1]",
        );
        fails(
            BASE,
            &["transport.stream_receive_window=0B"],
            "transport.stream_receive_window",
        );
    }

    #[test]
    fn bad_sizes_name_the_field() {
        let m = fails(BASE, &["flow.0.download=10Mb"], "flow[0].download");
        assert!(m.contains("unlimited"), "{m}");
        fails(BASE, &[r#"time_to_bytes=["1MB", "2"]"#], "time_to_bytes[1]");
    }

    #[test]
    fn start_not_before_end() {
        fails(BASE, &["flow.start=60s"], "flow[0].start");
    }

    #[test]
    fn count_zero() {
        fails(BASE, &["flow.count=0"], "flow[0].count");
        fails(BASE, &["flow.count=-1"], "flow[0].count");
    }

    #[test]
    fn repeat_and_stop_need_the_right_download() {
        fails(
            BASE,
            &["flow.repeat_after=10s", "flow.download=unlimited"],
            "flow[0].repeat_after",
        );
        fails(BASE, &["flow.stop=10s"], "flow[0].stop");
        fails(
            BASE,
            &["flow.stop=1s", "flow.start=2s", "flow.download=unlimited"],
            "flow[0].stop",
        );
    }

    #[test]
    fn mtu_range() {
        fails(BASE, &["mtu=1227"], "mtu");
        fails(BASE, &["mtu=65536"], "mtu");
        assert_eq!(load(BASE, &["mtu=1228"]).unwrap().mtu_bytes, 1228);
    }

    #[test]
    fn sample_interval_range() {
        fails(BASE, &["sample_interval=0s"], "sample_interval");
        fails(BASE, &["sample_interval=61s"], "sample_interval");
    }

    #[test]
    fn transport_values() {
        fails(
            BASE,
            &["flow.transport.ack_eliciting_threshold=-1"],
            "flow[0].transport.ack_eliciting_threshold",
        );
        fails(
            BASE,
            &["transport.max_ack_delay=20s"],
            "transport.max_ack_delay",
        );
        fails(
            BASE,
            &["transport.initial_rtt=0ms"],
            "transport.initial_rtt",
        );
        let m = fails(
            BASE,
            &["transport.initial_rtt=333"],
            "transport.initial_rtt",
        );
        assert!(m.contains("missing unit"), "{m}");
        fails(
            BASE,
            &["transport.ack_eliciting_threshold=2.5"],
            "transport.ack_eliciting_threshold",
        );
        let m = fails(BASE, &["flow.download=100"], "flow[0].download");
        assert!(m.contains("missing unit"), "{m}");
    }

    #[test]
    fn wrong_types_and_missing_keys() {
        let m = fails(BASE, &["path.forward.rate=10000000"], "path.forward.rate");
        assert!(m.contains("10Mbit"), "{m}");
        let m = fails(BASE, &["path.forward.rate=10MB/s"], "path.forward.rate");
        assert!(m.contains("80Mbit"), "{m}");
        let text = BASE.replace("rate = \"2Mbit\"\n", "");
        let m = fails(&text, &[], "path.return");
        assert!(m.contains("rate"), "{m}");
        let m = load(&BASE.replace("name = \"base\"\n", ""), &[])
            .unwrap_err()
            .to_string();
        assert_eq!(m, "case.toml: missing field `name`");
    }

    #[test]
    fn syntax_error_names_the_file() {
        let err = load("name = ", &[]).unwrap_err();
        assert!(matches!(err, ScenarioError::Syntax { .. }));
        assert!(err.to_string().starts_with("case.toml: "), "{err}");
    }

    // ---- unknown keys ------------------------------------------------------------------------

    #[test]
    fn unknown_keys_are_rejected_by_name() {
        let m = fails(&format!("{BASE}\nbandwidth = 1\n"), &[], "bandwidth");
        assert!(m.contains("unknown field"), "{m}");
        let m = fails(BASE, &["path.forward.rat=20Mbit"], "rat");
        assert!(m.contains("unknown field"), "{m}");
        fails(BASE, &["flow.0.transport.cwnd=1"], "cwnd");
        fails(BASE, &["path.forward.red.min_p=1%"], "min_p");
        fails(
            BASE,
            &[r#"path.forward.loss={ model = "bernoulli", p = "1%", q = "2%" }"#],
            "q",
        );
    }

    // ---- overrides ---------------------------------------------------------------------------

    #[test]
    fn overrides_replace_values() {
        let s = load(
            BASE,
            &[
                "path.forward.rate=20Mbit",
                "duration = 90s",
                "seed=42",
                "flow.0.cc=hybla",
                "flow.0.qlog=true",
                r#"flow.0.cc_params={ rtt0 = "25ms" }"#,
                "path.forward.loss=1%",
                "transport.max_ack_delay=10ms",
                "description=a b = c",
            ],
        )
        .unwrap();
        assert_eq!(s.forward.rate_bps, 20_000_000);
        assert_eq!(s.duration, Duration::from_secs(90));
        assert_eq!(s.seed, 42);
        assert!(s.flows[0].qlog);
        assert_eq!(
            s.flows[0].controller,
            ControllerSpec::Hybla(HyblaSpec {
                rtt0: Some(ms(25)),
                ..HyblaSpec::default()
            })
        );
        assert_eq!(s.forward.loss, LossModel::Bernoulli { probability: 0.01 });
        assert_eq!(s.flows[0].transport.max_ack_delay, Some(ms(10)));
        assert_eq!(s.description.as_deref(), Some("a b = c"));
    }

    #[test]
    fn override_applies_to_every_flow() {
        let text = format!("{BASE}\n[[flow]]\nname = \"other\"\ncc = \"bbr\"\nupload = \"1MB\"\n");
        let s = load(
            &text,
            &["flow.cc=hybla", "flow.transport.initial_rtt=600ms"],
        )
        .unwrap();
        assert!(s.flows.iter().all(|f| f.controller.name() == "hybla"));
        assert!(
            s.flows
                .iter()
                .all(|f| f.transport.initial_rtt == Some(ms(600)))
        );
        let s = load(&text, &["flow.1.cc=newreno"]).unwrap();
        assert_eq!(s.flows[0].controller.name(), "newreno");
        assert_eq!(s.flows[1].controller.name(), "newreno");
        let s = load(&text, &["flow.1.name=x"]).unwrap();
        assert_eq!(s.flows[1].name, "x");
    }

    #[test]
    fn override_indexes_nested_arrays() {
        let s = load(
            BASE,
            &[
                r#"path.forward.schedule=[{ at = "5s", rate = "5Mbit" }]"#,
                "path.forward.schedule.0.rate=1Mbit",
                "time_to_bytes=[\"1MB\", \"2MB\"]",
                "time_to_bytes.1=3MB",
            ],
        )
        .unwrap();
        assert_eq!(s.forward.schedule[0].rate_bps, Some(1_000_000));
        assert_eq!(s.time_to_bytes, vec![1_000_000, 3_000_000]);
    }

    #[test]
    fn bad_overrides() {
        for (assignment, needle) in [
            ("duration", "key=value"),
            ("flow.5.cc=cubic", "out of range"),
            ("name.x=1", "not a table"),
            ("path..rate=1Mbit", "empty part"),
        ] {
            let err = load(BASE, &[assignment]).unwrap_err();
            assert!(matches!(err, ScenarioError::Override { .. }), "{err}");
            let m = err.to_string();
            assert!(m.starts_with(ORIGIN) && m.contains(needle), "{m}");
        }
    }

    /// Found by tests/bad_input.rs: `flow.app.bitrate=…` on a file where one flow has no
    /// `[[flow.app]]` created a table there and blamed the file ("flow[1].app: invalid type:
    /// map, expected a sequence") without naming the override.
    #[test]
    fn an_override_that_creates_a_wrong_table_is_named() {
        let text = format!(
            "{}\n[[flow]]\nname = \"media\"\ncc = \"cubic\"\n[[flow.app]]\nkind = \"media\"\n",
            BASE
        );
        let err = load(&text, &["flow.app.bitrate=1Mbit"]).unwrap_err();
        assert!(matches!(err, ScenarioError::Override { .. }), "{err}");
        let m = err.to_string();
        assert!(
            m.contains("flow.app.bitrate=1Mbit") && m.contains("`flow[0].app` does not exist"),
            "{m}"
        );
        // Tables that may be created still are.
        let s = load(&text, &["flow.transport.initial_rtt=600ms"]).unwrap();
        assert!(
            s.flows
                .iter()
                .all(|f| f.transport.initial_rtt == Some(ms(600)))
        );
    }

    #[test]
    fn override_values_that_look_like_toml_floats_stay_strings() {
        let s = load(BASE, &["flow.0.name=nan", "name=inf"]).unwrap();
        assert_eq!(s.flows[0].name, "nan");
        assert_eq!(s.name, "inf");
    }

    // ---- count expansion ---------------------------------------------------------------------

    #[test]
    fn count_expands_into_named_flows() {
        let s = load(BASE, &["flow.count=3", "flow.access_delay=5ms"]).unwrap();
        let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["sat-1", "sat-2", "sat-3"]);
        assert!(s.flows.iter().all(|f| f.access_delay == ms(5)));
        let s = load(BASE, &["flow.count=1"]).unwrap();
        assert_eq!(s.flows[0].name, "sat");
    }

    // ---- shipped scenarios -------------------------------------------------------------------

    #[test]
    fn every_shipped_scenario_parses() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        assert!(files.len() >= 11, "found only {files:?}");
        for file in &files {
            let s = Scenario::from_file(file, &[]).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                Some(s.name.as_str()),
                file.file_stem().and_then(|n| n.to_str()),
                "scenario name should match its file name"
            );
        }
    }

    #[test]
    fn shipped_scenarios_match_their_sources() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let load =
            |name: &str| Scenario::from_file(&dir.join(format!("{name}.toml")), &[]).unwrap();
        let geo = load("thesis-geo");
        assert_eq!(geo.forward.delay + geo.return_link.delay, ms(500));
        assert_eq!(geo.forward.loss, LossModel::Bernoulli { probability: 1e-4 });
        assert_eq!(
            geo.flows[0].perf().unwrap().download,
            Some(Download::Unlimited)
        );
        let variable = load("kuhn-variable");
        assert_eq!(variable.forward.rate_bps, 50_000_000);
        assert_eq!(variable.forward.schedule[0].rate_bps, Some(10_000_000));
        assert_eq!(variable.forward.schedule[0].at, Duration::from_secs(5));
        let pico = load("picoquic-sat");
        assert_eq!(
            pico.forward.queue,
            QueueLimit::Bytes(250_000_000 * 6 / 10 / 8)
        );
        let sat = load("sat");
        assert_eq!(sat.forward.queue, QueueLimit::Packets(25));
        assert_eq!(
            sat.flows[0].perf().unwrap().download,
            Some(Download::Bytes(10 << 20))
        );
    }

    #[test]
    fn app_tables_describe_several_apps_on_one_connection() {
        let text = BASE.replace(
            "download = \"10MB\"",
            "[[flow.app]]\nkind = \"perf\"\nname = \"file\"\ndownload = \"1MB\"\n\
             [[flow.app]]\nkind = \"perf\"\nname = \"backup\"\nupload = \"2MB\"",
        );
        let s = load(&text, &[]).unwrap();
        let names: Vec<&str> = s.flows[0].apps.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["file", "backup"]);
        assert_eq!(
            s.flows[0].apps[1].kind,
            AppKind::Perf(PerfConfig {
                download: None,
                upload_bytes: Some(2_000_000),
                repeat_after: None,
            })
        );
        let m = fails(&text, &["flow.download=1MB"], "flow[0]");
        assert!(m.contains("not both"), "{m}");
        let m = fails(&text, &["flow.app.1.name=file"], "flow[0].app[1].name");
        assert!(m.contains("already used"), "{m}");
        let m = fails(
            &text,
            &["flow.app.0.download=0MB"],
            "flow[0].app[0].download",
        );
        assert!(m.contains("greater than zero"), "{m}");
        let bad_kind = text.replace(
            "kind = \"perf\"\nname = \"file\"",
            "kind = \"video\"\nname = \"file\"",
        );
        let err = load(&bad_kind, &[]).unwrap_err().to_string();
        assert!(
            err.contains("flow[0].app[0].kind") && err.contains("video"),
            "{err}"
        );
    }

    #[test]
    fn schedulers_and_bulk_tables_are_checked_by_field() {
        let text = BASE.replace(
            "download = \"10MB\"",
            "[[flow.app]]\nkind = \"media\"\n[[flow.app]]\nkind = \"bulk\"\nrate = \"2Mbit\"\nstart = \"10s\"",
        );
        let s = load(&text, &[]).unwrap();
        assert_eq!(s.flows[0].scheduler, SchedulerSpec::RoundRobin);
        let AppKind::Bulk(bulk) = &s.flows[0].apps[1].kind else {
            panic!("not bulk: {:?}", s.flows[0].apps[1]);
        };
        assert_eq!(
            (bulk.rate_bps, bulk.start, bulk.upload),
            (Some(2_000_000), ms(10_000), false)
        );
        for name in sched::SCHEDULERS {
            let s = load(&text, &[&format!("flow.scheduler={name}")]).unwrap();
            assert_eq!(s.flows[0].scheduler.name(), name);
        }
        let s = load(&text, &["flow.app.1.rate=unlimited"]).unwrap();
        assert!(matches!(&s.flows[0].apps[1].kind, AppKind::Bulk(b) if b.rate_bps.is_none()));
        for (set, field, needle) in [
            ("flow.scheduler=fifo", "flow[0].scheduler", "seed-balancer"),
            ("flow.scheduler=3", "flow[0].scheduler", ""),
            (
                "flow.app.1.rate=0Mbit",
                "flow[0].app[1].rate",
                "greater than zero",
            ),
            ("flow.app.1.rate=2MB", "flow[0].app[1].rate", "unlimited"),
            ("flow.app.1.start=-1s", "flow[0].app[1].start", ""),
            (
                "flow.app.1.start=1h",
                "flow[0].app[1].start",
                "not before the end",
            ),
            (
                "flow.app.1.direction=up",
                "flow[0].app[1].direction",
                "upload",
            ),
            ("flow.app.1.burst=3", "flow[0].app[1]", "burst"),
            ("flow.app.0.adaptive=maybe", "flow[0].app[0].adaptive", ""),
        ] {
            let message = fails(&text, &[set], field);
            assert!(message.contains(needle), "{set}: {message}");
        }
    }

    #[test]
    fn media_tables_take_defaults_and_reject_nonsense_by_field() {
        let text = BASE.replace(
            "download = \"10MB\"",
            "[[flow.app]]\nkind = \"media\"\n[[flow.app]]\nkind = \"perf\"\nname = \"bulk\"\ndownload = \"unlimited\"",
        );
        let s = load(&text, &[]).unwrap();
        assert_eq!(s.flows[0].apps[0].name, "media");
        let AppKind::Media(media) = &s.flows[0].apps[0].kind else {
            panic!("not media: {:?}", s.flows[0].apps[0]);
        };
        assert_eq!(
            (media.bitrate_bps, media.fps, media.deadline),
            (2_000_000, 30, None)
        );
        let s = load(
            &text,
            &["flow.app.0.bitrate=500kbit", "flow.app.0.deadline=400ms"],
        )
        .unwrap();
        let AppKind::Media(media) = &s.flows[0].apps[0].kind else {
            panic!();
        };
        assert_eq!(
            (media.bitrate_bps, media.deadline),
            (500_000, Some(ms(400)))
        );
        for (set, field, needle) in [
            (
                "flow.app.0.bitrate=0Mbit",
                "flow[0].app[0].bitrate",
                "greater than zero",
            ),
            ("flow.app.0.fps=0", "flow[0].app[0].fps", "1 to 240"),
            ("flow.app.0.deadline=-5ms", "flow[0].app[0].deadline", ""),
            (
                "flow.app.0.deadline=0ms",
                "flow[0].app[0].deadline",
                "greater than zero",
            ),
            ("flow.app.0.jitter=1.5", "flow[0].app[0].jitter", "below 1"),
            (
                "flow.app.0.direction=sideways",
                "flow[0].app[0].direction",
                "upload",
            ),
            ("flow.app.0.codec=av1", "flow[0].app[0]", "codec"),
        ] {
            let m = fails(&text, &[set], field);
            assert!(m.contains(needle), "{set}: {m}");
        }
    }

    /// Found by tests/bad_input.rs: a file cut inside a character was "stream did not contain
    /// valid UTF-8" with no position.
    #[test]
    fn a_file_that_is_not_utf8_names_the_position() {
        let path =
            std::env::temp_dir().join(format!("scenario-latin1-{}.toml", std::process::id()));
        std::fs::write(&path, b"name = \"x\"\n# caf\xe9\n").unwrap();
        let err = Scenario::from_file(&path, &[]).unwrap_err().to_string();
        let _ = std::fs::remove_file(&path);
        assert!(
            err.ends_with("not UTF-8 text: byte 0xe9 at line 2, column 6"),
            "{err}"
        );
    }

    #[test]
    fn missing_file_names_it() {
        let err = Scenario::from_file(Path::new("/nonexistent/x.toml"), &[]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/nonexistent/x.toml: cannot read"),
            "{err}"
        );
    }
}
