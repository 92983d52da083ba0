//! The applications a flow runs, as scenario data: the `[[flow.app]]` tables and the
//! shorthand (`download = "100MB"` on the flow itself), which is one perf application named
//! `"perf"`.
//!
//! A new application kind is a variant of [`AppKind`] with its table struct here; the lab maps
//! it to the simulator's application in one place (`lab::plan`).

use perfwire::Sender;
use std::time::Duration;

use perfwire::media::VideoModel;
use serde::Deserialize;

use crate::error::FieldError;
use crate::units;
use crate::values::{self, DownloadArg};

/// Size of a perf application's download: the perf protocol's request.
pub use perfwire::Request as Download;

/// One application of a flow.
#[derive(Debug, Clone, PartialEq)]
pub struct AppConfig {
    /// Name for reports, unique within the flow.
    pub name: String,
    /// What it is.
    pub kind: AppKind,
}

/// The application kinds a scenario may name in `kind`.
#[derive(Debug, Clone, PartialEq)]
pub enum AppKind {
    /// The QUIC performance protocol: downloads, uploads, a repeated fetch, unlimited bulk.
    Perf(PerfConfig),
    /// Synthetic real-time video, one stream per frame.
    Media(MediaConfig),
    /// Offered load on one long stream, next to other applications on the connection.
    Bulk(BulkConfig),
}

/// A bulk source on the same connection as other applications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkConfig {
    /// Offered load, bit/s; `None` is unlimited (a file that is always ready).
    pub rate_bps: Option<u64>,
    /// When it starts offering, since the start of the run.
    pub start: Duration,
    /// Which end sends: the client for `direction = "upload"`, the server otherwise.
    pub sender: Sender,
}

/// A media application: a synthetic video source.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaConfig {
    /// Mean media rate, bit/s.
    pub bitrate_bps: u64,
    /// Frame sizes and capture times (`fps`, `keyframe_interval`, `keyframe_ratio`, `jitter`).
    pub video: VideoModel,
    /// Frames later than this are late; None: the flow's one-way propagation delay + 150 ms.
    pub deadline: Option<Duration>,
    /// Which end sends the video: the client for `direction = "upload"`, the server otherwise.
    pub sender: Sender,
    /// Whether the source follows the scheduler's target bitrate (`adaptive = true`).
    pub adaptive: bool,
}

impl AppKind {
    /// The `kind` string of the scenario table.
    pub fn name(&self) -> &'static str {
        match self {
            AppKind::Perf(_) => "perf",
            AppKind::Media(_) => "media",
            AppKind::Bulk(_) => "bulk",
        }
    }
}

/// A perf application: what the client asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfConfig {
    /// What the client downloads, if anything.
    pub download: Option<Download>,
    /// Bytes the client uploads, if any.
    pub upload_bytes: Option<u64>,
    /// Idle gap after the first download completes before a second download of the same size
    /// (draft-kuhn "repeat").
    pub repeat_after: Option<Duration>,
}

/// A `[[flow.app]]` table as written: `kind` picks the struct the rest is read into, so errors
/// name the field inside the table.
#[derive(Debug)]
pub(crate) struct RawApp(toml::Table);

impl<'de> Deserialize<'de> for RawApp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match toml::Value::deserialize(deserializer)? {
            toml::Value::Table(table) => Ok(RawApp(table)),
            other => Err(serde::de::Error::custom(format!(
                r#"invalid type: {}, expected a [[flow.app]] table such as {{ kind = "media" }}"#,
                other.type_str()
            ))),
        }
    }
}

/// The fields of a `kind = "perf"` table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPerf {
    name: Option<String>,
    download: Option<DownloadArg>,
    #[serde(default, deserialize_with = "units::deserialize_opt_size")]
    upload: Option<u64>,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    repeat_after: Option<Duration>,
}

/// The fields of a `kind = "media"` table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMedia {
    name: Option<String>,
    #[serde(default, deserialize_with = "units::deserialize_opt_rate")]
    bitrate: Option<u64>,
    #[serde(default, deserialize_with = "values::deserialize_opt_u32")]
    fps: Option<u32>,
    #[serde(default, deserialize_with = "values::deserialize_opt_u32")]
    keyframe_interval: Option<u32>,
    keyframe_ratio: Option<f64>,
    jitter: Option<f64>,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    deadline: Option<Duration>,
    direction: Option<String>,
    adaptive: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBulk {
    name: Option<String>,
    rate: Option<String>,
    #[serde(default, deserialize_with = "units::deserialize_opt_duration")]
    start: Option<Duration>,
    direction: Option<String>,
}

/// Defaults of a media table: 2 Mbit/s at 30 fps, a keyframe every 2 s five times a P-frame,
/// ±20 % size jitter (also `satquic get --media`'s).
pub const DEFAULT_MEDIA: MediaConfig = MediaConfig {
    bitrate_bps: 2_000_000,
    video: VideoModel {
        fps: 30,
        keyframe_interval: 60,
        keyframe_ratio: 5.0,
        jitter: 0.2,
    },
    deadline: None,
    sender: Sender::Server,
    adaptive: false,
};

impl MediaConfig {
    /// Checks the values against what a media source can play. The error names the key as a
    /// `[[flow.app]]` table writes it (`bitrate`, `fps`, `keyframe_interval`,
    /// `keyframe_ratio`, `jitter`, `deadline`), for the caller to place: under the table's
    /// path when read from a file, as the flag that set it on the command line (`satquic get`).
    pub fn check(&self) -> Result<(), FieldError> {
        perfwire::media::check_source(self.bitrate_bps, &self.video)
            .and_then(|()| {
                self.deadline
                    .map_or(Ok(()), perfwire::media::check_deadline)
            })
            .map_err(|e| FieldError::new(e.field, e.problem))
    }
}

fn media_config(raw: RawMedia, at: &str) -> Result<MediaConfig, FieldError> {
    let field = |key: &str| format!("{at}.{key}");
    let mut config = MediaConfig {
        bitrate_bps: raw.bitrate.unwrap_or(DEFAULT_MEDIA.bitrate_bps),
        video: VideoModel {
            fps: raw.fps.unwrap_or(DEFAULT_MEDIA.video.fps),
            keyframe_interval: raw
                .keyframe_interval
                .unwrap_or(DEFAULT_MEDIA.video.keyframe_interval),
            keyframe_ratio: raw
                .keyframe_ratio
                .unwrap_or(DEFAULT_MEDIA.video.keyframe_ratio),
            jitter: raw.jitter.unwrap_or(DEFAULT_MEDIA.video.jitter),
        },
        deadline: raw.deadline,
        sender: Sender::Server,
        adaptive: raw.adaptive.unwrap_or(DEFAULT_MEDIA.adaptive),
    };
    config
        .check()
        .map_err(|e| FieldError::new(field(&e.field), e.problem))?;
    config.sender = direction(raw.direction.as_deref(), &field("direction"))?;
    Ok(config)
}

/// `direction`: who sends.
fn direction(direction: Option<&str>, field: &str) -> Result<Sender, FieldError> {
    match direction {
        None | Some("download") => Ok(Sender::Server),
        Some("upload") => Ok(Sender::Client),
        Some(other) => Err(FieldError::new(
            field,
            format!("{other:?}: expected \"download\" (server sends) or \"upload\""),
        )),
    }
}

fn bulk_config(raw: RawBulk, at: &str) -> Result<BulkConfig, FieldError> {
    let field = |key: &str| format!("{at}.{key}");
    let rate_bps = match raw.rate.as_deref() {
        None | Some("unlimited") => None,
        Some(text) => {
            let bps = units::parse_rate(text).map_err(|e| {
                FieldError::new(
                    field("rate"),
                    format!("{e} (or \"unlimited\" for a source that always has data)"),
                )
            })?;
            if bps == 0 {
                return Err(FieldError::new(field("rate"), "must be greater than zero"));
            }
            Some(bps)
        }
    };
    Ok(BulkConfig {
        rate_bps,
        start: raw.start.unwrap_or_default(),
        sender: direction(raw.direction.as_deref(), &field("direction"))?,
    })
}

/// Reads the rest of an app table (without `kind`) into `T`, naming the field on error and
/// the kind the table was read as (a key of another kind is unknown only for this one).
fn fields<T: serde::de::DeserializeOwned>(
    table: toml::Table,
    at: &str,
    kind: &str,
) -> Result<T, FieldError> {
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." {
            at.to_owned()
        } else {
            format!("{at}.{path}")
        };
        FieldError::new(
            field,
            format!("{} (kind = {kind:?})", e.into_inner().message().trim_end()),
        )
    })
}

impl RawApp {
    /// Checks one app table at `at` (`flow[0].app[1]`).
    pub(crate) fn into_config(self, at: &str) -> Result<AppConfig, FieldError> {
        let mut table = self.0;
        let kind = match table.remove("kind") {
            Some(toml::Value::String(kind)) => kind,
            Some(other) => {
                return Err(FieldError::new(
                    format!("{at}.kind"),
                    format!("expected a string such as \"perf\", got {other}"),
                ));
            }
            None => {
                return Err(FieldError::new(
                    format!("{at}.kind"),
                    "missing (e.g. kind = \"perf\")",
                ));
            }
        };
        match kind.as_str() {
            "perf" => {
                let raw: RawPerf = fields(table, at, "perf")?;
                Ok(AppConfig {
                    name: raw.name.unwrap_or_else(|| "perf".to_owned()),
                    kind: AppKind::Perf(perf_config(
                        at,
                        raw.download.map(|d| d.0),
                        raw.upload,
                        raw.repeat_after,
                    )?),
                })
            }
            "media" => {
                let raw: RawMedia = fields(table, at, "media")?;
                Ok(AppConfig {
                    name: raw.name.clone().unwrap_or_else(|| "media".to_owned()),
                    kind: AppKind::Media(media_config(raw, at)?),
                })
            }
            "bulk" => {
                let raw: RawBulk = fields(table, at, "bulk")?;
                Ok(AppConfig {
                    name: raw.name.clone().unwrap_or_else(|| "bulk".to_owned()),
                    kind: AppKind::Bulk(bulk_config(raw, at)?),
                })
            }
            other => Err(FieldError::new(
                format!("{at}.kind"),
                format!(
                    "unknown application kind {other:?}; available: {}",
                    KINDS.join(", ")
                ),
            )),
        }
    }
}

/// Application kinds a `[[flow.app]]` table may name.
pub const KINDS: [&str; 3] = ["perf", "media", "bulk"];

/// Validates a perf application's fields (from a table or the flow shorthand at `at`).
pub(crate) fn perf_config(
    at: &str,
    download: Option<Download>,
    upload_bytes: Option<u64>,
    repeat_after: Option<Duration>,
) -> Result<PerfConfig, FieldError> {
    if download.is_none() && upload_bytes.is_none() {
        return Err(FieldError::new(
            at,
            "a perf application needs a download and/or an upload",
        ));
    }
    if download == Some(Download::Bytes(0)) {
        return Err(FieldError::new(
            format!("{at}.download"),
            "must be greater than zero",
        ));
    }
    if upload_bytes == Some(0) {
        return Err(FieldError::new(
            format!("{at}.upload"),
            "must be greater than zero",
        ));
    }
    if repeat_after.is_some() && !matches!(download, Some(Download::Bytes(_))) {
        return Err(FieldError::new(
            format!("{at}.repeat_after"),
            "repeats a sized download; set download to a size such as \"100MB\"",
        ));
    }
    Ok(PerfConfig {
        download,
        upload_bytes,
        repeat_after,
    })
}
