//! Field values with more than one form, read through the units visitor
//! ([`units::UnitVisitor`]): a size or `"unlimited"` (a download), `"none"`, a percentage or a
//! table (a loss model), `"auto"` or a value (a transport setting), a size in a list, and the
//! seed (an integer, or a string for the values above TOML's largest integer).

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use netsim::LossModel;
use perfwire::Request as Download;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess};

use crate::units::{self, FieldReader, UnitVisitor};

/// A size in a list (`time_to_bytes`).
pub(crate) struct SizeArg(pub(crate) u64);

impl<'de> Deserialize<'de> for SizeArg {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        units::deserialize_size(deserializer).map(SizeArg)
    }
}

/// `"unlimited"` or a size.
pub(crate) struct DownloadArg(pub(crate) Download);

/// Reads a [`DownloadArg`].
struct DownloadReader;

impl FieldReader for DownloadReader {
    type Value = DownloadArg;
    type Error = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#""unlimited" or a size such as "100MB""#)
    }

    fn parse(&self, text: &str) -> Result<DownloadArg, String> {
        if text.trim() == "unlimited" {
            return Ok(DownloadArg(Download::Unlimited));
        }
        units::parse_size(text)
            .map(|bytes| DownloadArg(Download::Bytes(bytes)))
            .map_err(|e| format!(r#"{e} (or "unlimited")"#))
    }
}

impl<'de> Deserialize<'de> for DownloadArg {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(UnitVisitor(DownloadReader))
    }
}

/// A loss model: `"none"`, a percentage (Bernoulli), or a table naming the model.
pub(crate) struct LossArg(pub(crate) LossModel);

/// A loss table's `model`, read from a string (as `aqm` is).
#[derive(Deserialize)]
#[serde(try_from = "String")]
enum LossKind {
    Bernoulli,
    GilbertElliott,
}

impl TryFrom<String> for LossKind {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        match name.as_str() {
            "bernoulli" => Ok(LossKind::Bernoulli),
            "gilbert-elliott" => Ok(LossKind::GilbertElliott),
            other => Err(format!(
                r#"unknown loss model {other:?}; expected "bernoulli" or "gilbert-elliott""#
            )),
        }
    }
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

/// Reads a [`LossArg`].
struct LossReader;

impl FieldReader for LossReader {
    type Value = LossArg;
    type Error = units::UnitError;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            r#"a loss probability such as "1%", "none", or a table such as { model = "gilbert-elliott", p = "1.8%", r = "64.5%" }"#,
        )
    }

    fn parse(&self, text: &str) -> Result<LossArg, units::UnitError> {
        if text.trim() == "none" {
            return Ok(LossArg(LossModel::None));
        }
        units::parse_probability(text)
            .map(|probability| LossArg(LossModel::Bernoulli { probability }))
    }

    fn parse_table<'de, A: MapAccess<'de>>(&self, table: A) -> Option<Result<LossArg, A::Error>> {
        Some(
            LossTable::deserialize(de::value::MapAccessDeserializer::new(table))
                .and_then(|table| table.into_model().map(LossArg).map_err(de::Error::custom)),
        )
    }
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
        deserializer.deserialize_any(UnitVisitor(LossReader))
    }
}

/// A transport setting: `"auto"` or a value.
#[derive(Clone, Copy)]
pub(crate) enum Setting<T> {
    Auto,
    Value(T),
}

/// How a [`Setting`] value is written: durations and sizes as unit strings, counts as integers.
pub(crate) trait SettingValue: Sized {
    const EXPECTING: &'static str;
    fn from_text(text: &str) -> Result<Self, String>;
    /// Reads an integer; by default it is a unit string missing its unit, so the text parser
    /// gives the hint.
    fn from_integer(value: i128) -> Result<Self, String> {
        Self::from_text(&value.to_string())
    }
    /// Reads a floating-point number; by default, like an integer, text missing its unit.
    fn from_float(value: f64) -> Result<Self, String> {
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
    fn from_float(value: f64) -> Result<Self, String> {
        Err(format!(
            r#"expected "auto" or an integer >= 0, got {value}"#
        ))
    }
}

/// Reads a [`Setting`] of `T`.
struct SettingReader<T>(PhantomData<T>);

impl<T: SettingValue> FieldReader for SettingReader<T> {
    type Value = Setting<T>;
    type Error = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn parse(&self, text: &str) -> Result<Setting<T>, String> {
        if text.trim() == "auto" {
            Ok(Setting::Auto)
        } else {
            T::from_text(text).map(Setting::Value)
        }
    }

    fn parse_integer(&self, value: i128) -> Result<Setting<T>, String> {
        T::from_integer(value).map(Setting::Value)
    }

    fn parse_float(&self, value: f64) -> Result<Setting<T>, String> {
        T::from_float(value).map(Setting::Value)
    }
}

impl<'de, T: SettingValue> Deserialize<'de> for Setting<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UnitVisitor(SettingReader(PhantomData)))
    }
}

/// `flow` wins over `global`; "auto" in either place means `None`.
pub(crate) fn merge<T: Copy>(flow: Option<Setting<T>>, global: Option<Setting<T>>) -> Option<T> {
    match flow.or(global)? {
        Setting::Auto => None,
        Setting::Value(value) => Some(value),
    }
}

/// Reads a u32 field (`mtu`, `count`, `fps`) from an integer. A digit string is one too large
/// for a TOML integer (an override's value arrives as text then): out of range, not "a
/// string".
struct U32Reader;

impl FieldReader for U32Reader {
    type Value = u32;
    type Error = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an integer from 0 to {}", u32::MAX)
    }

    fn parse(&self, text: &str) -> Result<u32, String> {
        let trimmed = text.trim();
        let digits = trimmed.strip_prefix(['-', '+']).unwrap_or(trimmed);
        let numeric = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        if numeric && trimmed.parse::<u32>().is_err() {
            return Err(format!(
                "{trimmed} is out of range (expected an integer from 0 to {})",
                u32::MAX
            ));
        }
        Err(format!(
            "expected an integer from 0 to {}, got {text:?}",
            u32::MAX
        ))
    }

    fn parse_integer(&self, value: i128) -> Result<u32, String> {
        u32::try_from(value).map_err(|_| {
            format!(
                "{value} is out of range (expected an integer from 0 to {})",
                u32::MAX
            )
        })
    }

    fn parse_float(&self, value: f64) -> Result<u32, String> {
        Err(format!(
            "expected an integer from 0 to {}, got {value}",
            u32::MAX
        ))
    }
}

/// serde `deserialize_with` helper for a u32 field ([`U32Reader`]).
pub(crate) fn deserialize_u32<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    deserializer.deserialize_any(UnitVisitor(U32Reader))
}

/// Like [`deserialize_u32`], for an optional field; pair with `#[serde(default)]`.
pub(crate) fn deserialize_opt_u32<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u32>, D::Error> {
    deserialize_u32(deserializer).map(Some)
}

/// Reads the seed: a u64, as an integer or, for the values above `i64::MAX` that a TOML
/// integer cannot hold (`--set seed=18446744073709551615` arrives as text), as a string of
/// digits.
struct SeedReader;

impl SeedReader {
    fn out_of_range(value: impl fmt::Display) -> String {
        format!(
            "{value} is out of range (expected an integer from 0 to {})",
            u64::MAX
        )
    }
}

impl FieldReader for SeedReader {
    type Value = u64;
    type Error = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an integer from 0 to {}", u64::MAX)
    }

    fn parse(&self, text: &str) -> Result<u64, String> {
        let digits = text.trim();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "expected an integer from 0 to {}, got {text:?}",
                u64::MAX
            ));
        }
        digits.parse().map_err(|_| Self::out_of_range(digits))
    }

    fn parse_integer(&self, value: i128) -> Result<u64, String> {
        u64::try_from(value).map_err(|_| Self::out_of_range(value))
    }

    fn parse_float(&self, value: f64) -> Result<u64, String> {
        Err(format!(
            "expected an integer from 0 to {}, got {value}",
            u64::MAX
        ))
    }
}

/// serde `deserialize_with` helper for the seed ([`SeedReader`]).
pub(crate) fn deserialize_seed<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<u64, D::Error> {
    deserializer.deserialize_any(UnitVisitor(SeedReader))
}
