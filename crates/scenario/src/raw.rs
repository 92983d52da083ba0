//! The scenario file as written: structs that serde reads the TOML tree into, one per table,
//! with `deny_unknown_fields` and the unit parsers, so that a misspelt key or a wrong unit is
//! reported with its path before anything is checked. The child module `validate` checks them
//! as a whole and turns them into the model.

use std::collections::BTreeMap;
use std::time::Duration;

use netsim::QueueLimit;
use serde::Deserialize;

use crate::apps::RawApp;
use crate::model::DEFAULT_SEED;
use crate::units;
use crate::values::{self, DownloadArg, LossArg, Setting, SizeArg};

mod validate;

fn default_seed() -> u64 {
    DEFAULT_SEED
}

fn default_count() -> u32 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a scenario table")]
pub(crate) struct RawScenario {
    name: String,
    description: Option<String>,
    #[serde(deserialize_with = "units::deserialize_duration")]
    duration: Duration,
    #[serde(
        default = "default_seed",
        deserialize_with = "values::deserialize_seed"
    )]
    seed: u64,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    sample_interval: Option<Duration>,
    #[serde(default, deserialize_with = "values::deserialize_opt_u32")]
    mtu: Option<u32>,
    time_to_bytes: Option<Vec<SizeArg>>,
    path: RawPath,
    #[serde(default)]
    transport: RawTransport,
    #[serde(default)]
    flow: Vec<RawFlow>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with the links `forward` and `return`"
)]
struct RawPath {
    forward: RawLink,
    #[serde(rename = "return")]
    return_link: RawLink,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = r#"a link table such as { rate = "10Mbit", delay = "250ms" }"#
)]
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
#[serde(
    deny_unknown_fields,
    expecting = r#"a table such as { distribution = "exponential", mean = "4.5ms" }"#
)]
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

/// `aqm`, read from a string (a derived unit enum words a number there as "invalid type: unit
/// variant, expected string only").
#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(try_from = "String")]
enum RawAqm {
    Droptail,
    Red,
}

impl TryFrom<String> for RawAqm {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        match name.as_str() {
            "droptail" | "drop-tail" => Ok(RawAqm::Droptail),
            "red" => Ok(RawAqm::Red),
            other => Err(format!(
                r#"unknown queue discipline {other:?}; expected "droptail" or "red""#
            )),
        }
    }
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { min = 5, max = 15 }"
)]
struct RawRed {
    min: Option<f64>,
    max: Option<f64>,
    #[serde(default, deserialize_with = "units::deserialize_opt_probability")]
    max_p: Option<f64>,
    weight: Option<f64>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = r#"a table such as { at = "5s", rate = "10Mbit" }"#
)]
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
#[serde(
    deny_unknown_fields,
    expecting = r#"a table of transport settings such as { initial_rtt = "600ms" }"#
)]
struct RawTransport {
    initial_rtt: Option<Setting<Duration>>,
    stream_receive_window: Option<Setting<u64>>,
    receive_window: Option<Setting<u64>>,
    send_window: Option<Setting<u64>>,
    ack_eliciting_threshold: Option<Setting<u32>>,
    max_ack_delay: Option<Setting<Duration>>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = r#"a [[flow]] table such as { name = "bulk", cc = "cubic", download = "10MB" }"#
)]
struct RawFlow {
    name: String,
    cc: String,
    #[serde(default)]
    cc_params: BTreeMap<String, toml::Value>,
    #[serde(
        default = "default_count",
        deserialize_with = "values::deserialize_u32"
    )]
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
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    reconnect_after: Option<Duration>,
    #[serde(default)]
    qlog: bool,
    #[serde(default)]
    transport: RawTransport,
    #[serde(default)]
    app: Vec<RawApp>,
    scheduler: Option<String>,
}
