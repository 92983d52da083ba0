//! Unit fields read with serde: one visitor for every field that is not plain TOML, and the
//! `deserialize_with` helpers of the parsers.

use std::fmt;
use std::time::Duration;

use netsim::QueueLimit;
use serde::Deserializer;
use serde::de::{self, Visitor};

use super::error::{Quantity, UnitError};
use super::parse::{parse_duration, parse_probability, parse_queue, parse_rate, parse_size};

/// How one kind of field is read from what a TOML file may hold there: text (a number with
/// its unit, or a keyword such as `"auto"`), a bare number, or for some fields a table.
///
/// Every field of a scenario that is not plain TOML is read through [`UnitVisitor`] with one of
/// these, so all of them treat a bare number the same way (run through the text parser, which
/// names the missing unit) and word "expected …" the same way.
pub(crate) trait FieldReader {
    /// What the field becomes.
    type Value;
    /// Why a value was rejected; becomes the serde error's message.
    type Error: fmt::Display;

    /// What the field accepts, for serde's "invalid type: …, expected …" messages.
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;

    /// Reads the field's text.
    fn parse(&self, text: &str) -> Result<Self::Value, Self::Error>;

    /// Reads an integer. By default it is text missing its unit, and the text parser gives the
    /// specific hint ("missing unit, e.g. ...", or "write 1% not 0.01" for probabilities).
    fn parse_integer(&self, value: i128) -> Result<Self::Value, Self::Error> {
        self.parse(&value.to_string())
    }

    /// Reads a floating-point number. By default it is text missing its unit, as an integer
    /// is; a field of whole numbers says it got a fraction instead.
    fn parse_float(&self, value: f64) -> Result<Self::Value, Self::Error> {
        self.parse(&value.to_string())
    }

    /// Reads a table, for fields that may be one (a loss model); `None` (the default) makes a
    /// table the wrong type.
    fn parse_table<'de, A: de::MapAccess<'de>>(
        &self,
        table: A,
    ) -> Option<Result<Self::Value, A::Error>> {
        let _ = table;
        None
    }
}

/// The serde visitor of every text field: strings, numbers and (where the reader takes them)
/// tables go to the [`FieldReader`]; anything else is the wrong type.
pub(crate) struct UnitVisitor<R>(pub(crate) R);

impl<'de, R: FieldReader> Visitor<'de> for UnitVisitor<R> {
    type Value = R::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<R::Value, E> {
        self.0.parse(v).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<R::Value, E> {
        self.0.parse_integer(v.into()).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<R::Value, E> {
        self.0.parse_integer(v.into()).map_err(E::custom)
    }

    // A float lacks its unit as an integer does; the text parser says so (by default).
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<R::Value, E> {
        self.0.parse_float(v).map_err(E::custom)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<R::Value, A::Error> {
        match self.0.parse_table(map) {
            Some(result) => result,
            None => Err(de::Error::invalid_type(de::Unexpected::Map, &self)),
        }
    }
}

/// A quantity with a unit, read by one of the parsers (`parse`).
struct Unit<T> {
    quantity: Quantity,
    parse: fn(&str) -> Result<T, UnitError>,
}

impl<T> FieldReader for Unit<T> {
    type Value = T;
    type Error = UnitError;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a {} string with a unit, e.g. \"{}\"",
            self.quantity,
            self.quantity.example()
        )
    }

    fn parse(&self, text: &str) -> Result<T, UnitError> {
        (self.parse)(text)
    }
}

macro_rules! deserializers {
    ($($(#[$doc:meta])* $name:ident, $opt_name:ident, $ty:ty, $quantity:expr, $parse:path;)*) => {$(
        $(#[$doc])*
        pub fn $name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<$ty, D::Error> {
            deserializer.deserialize_str(UnitVisitor(Unit {
                quantity: $quantity,
                parse: $parse,
            }))
        }

        /// Like the non-`opt` helper, for an optional field; pair with `#[serde(default)]` so a
        /// missing key is `None`.
        pub fn $opt_name<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<$ty>, D::Error> {
            $name(deserializer).map(Some)
        }
    )*};
}

deserializers! {
    /// serde `deserialize_with` helper for [`parse_rate`] (bits per second).
    deserialize_rate, deserialize_opt_rate, u64, Quantity::Rate, parse_rate;
    /// serde `deserialize_with` helper for [`parse_duration`].
    deserialize_duration, deserialize_opt_duration, Duration, Quantity::Duration, parse_duration;
    /// serde `deserialize_with` helper for [`parse_size`] (bytes).
    deserialize_size, deserialize_opt_size, u64, Quantity::Size, parse_size;
    /// serde `deserialize_with` helper for [`parse_probability`] (fraction 0..=1).
    deserialize_probability, deserialize_opt_probability, f64, Quantity::Probability, parse_probability;
    /// serde `deserialize_with` helper for [`parse_queue`].
    deserialize_queue, deserialize_opt_queue, QueueLimit, Quantity::Queue, parse_queue;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Fields {
        #[serde(deserialize_with = "deserialize_rate")]
        rate: u64,
        #[serde(default, deserialize_with = "deserialize_opt_duration")]
        delay: Option<Duration>,
    }

    #[test]
    fn serde_helpers() {
        let f: Fields = toml::from_str(r#"rate = "2Mbit""#).unwrap();
        assert_eq!(f.rate, 2_000_000);
        assert_eq!(f.delay, None);
        let f: Fields = toml::from_str("rate = \"2Mbit\"\ndelay = \"5ms\"").unwrap();
        assert_eq!(f.delay, Some(Duration::from_millis(5)));
        let err = toml::from_str::<Fields>("rate = 2000000").unwrap_err();
        assert!(
            err.to_string().contains(r#"missing unit, e.g. "10Mbit""#),
            "{err}"
        );
        let err = toml::from_str::<Fields>("rate = true").unwrap_err();
        assert!(err.to_string().contains(r#"e.g. "10Mbit""#), "{err}");
        let err = toml::from_str::<Fields>(r#"rate = "2MB/s""#).unwrap_err();
        assert!(err.to_string().contains("16Mbit"), "{err}");
    }
}
