//! Strict readers for the units written in config: durations like `"90s"`, sizes like `"64MiB"`
//! and costs like `"5 USD"`.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

/// A duration written as digits and a unit, several parts allowed: `"500ms"`, `"90s"`, `"10m"`,
/// `"1h30m"`. Anything else (`"10 minutes"`, `"10"`) is refused rather than guessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigDuration(pub Duration);

pub const DURATION_EXPECTED: &str =
    "expected digits followed by a unit (ms, s, m or h), like \"90s\", \"10m\" or \"1h30m\"";

impl ConfigDuration {
    pub fn parse(text: &str) -> Result<Self, String> {
        let refuse = || format!("invalid duration \"{text}\": {DURATION_EXPECTED}");
        let mut rest = text;
        let mut total = Duration::ZERO;
        if rest.is_empty() {
            return Err(refuse());
        }
        while !rest.is_empty() {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return Err(refuse());
            }
            let value: u64 = rest[..digits].parse().map_err(|_| refuse())?;
            rest = &rest[digits..];
            let unit_len = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
            let part = match &rest[..unit_len] {
                "ms" => Duration::from_millis(value),
                "s" => Duration::from_secs(value),
                "m" => Duration::from_secs(value.saturating_mul(60)),
                "h" => Duration::from_secs(value.saturating_mul(3600)),
                _ => return Err(refuse()),
            };
            rest = &rest[unit_len..];
            total = total.checked_add(part).ok_or_else(refuse)?;
        }
        Ok(Self(total))
    }
}

impl<'de> Deserialize<'de> for ConfigDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A byte size written as digits and an optional binary unit: `"65536"`, `"64KiB"`, `"64MiB"`,
/// `"1GiB"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

pub const SIZE_EXPECTED: &str =
    "expected digits with an optional unit (B, KiB, MiB or GiB), like \"64MiB\"";

impl ByteSize {
    pub fn parse(text: &str) -> Result<Self, String> {
        let refuse = || format!("invalid size \"{text}\": {SIZE_EXPECTED}");
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(refuse());
        }
        let value: u64 = text[..digits].parse().map_err(|_| refuse())?;
        let factor: u64 = match &text[digits..] {
            "" | "B" => 1,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            _ => return Err(refuse()),
        };
        value.checked_mul(factor).map(Self).ok_or_else(refuse)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// An amount of money in US dollars, the currency the agents report their cost in: `"5 USD"`,
/// `"0.50 USD"`, `"$5"`, `"$0.50"`. A bare number, another currency or a negative amount is
/// refused rather than guessed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usd(pub f64);

pub const COST_EXPECTED: &str = "expected an amount in US dollars, like \"5 USD\" or \"$0.50\" (the agents report their cost in USD)";

impl Usd {
    pub fn parse(text: &str) -> Result<Self, String> {
        let refuse = || format!("invalid cost \"{text}\": {COST_EXPECTED}");
        let trimmed = text.trim();
        let (amount, marked) = match (trimmed.strip_prefix('$'), trimmed.strip_suffix("USD")) {
            (Some(amount), None) => (amount, true),
            (None, Some(amount)) => (amount.trim_end(), true),
            _ => (trimmed, false),
        };
        let (whole, fraction) = amount.split_once('.').unwrap_or((amount, "0"));
        let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        if !marked || !digits(whole) || !digits(fraction) {
            return Err(refuse());
        }
        amount
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite())
            .map(Self)
            .ok_or_else(refuse)
    }
}

impl<'de> Deserialize<'de> for Usd {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", crate::model::format_usd(self.0))
    }
}

impl fmt::Display for ConfigDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// How `refine-loop.schema.json` describes the units: as the strings their readers take, with
/// the pattern an editor checks them by.
#[cfg(test)]
mod schema {
    use super::{ByteSize, ConfigDuration, Usd};

    /// What [`Usd::parse`] takes, as a regex.
    pub const COST_PATTERN: &str = r"^\s*(\$[0-9]+(\.[0-9]+)?|[0-9]+(\.[0-9]+)? *USD)\s*$";

    /// A string of the form [`Usd::parse`] reads, inlined like a duration.
    impl schemars::JsonSchema for Usd {
        fn inline_schema() -> bool {
            true
        }

        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Cost".into()
        }

        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            schemars::json_schema!({
                "type": "string",
                "pattern": COST_PATTERN,
                "examples": ["5 USD", "$0.50"],
            })
        }
    }

    /// What [`ConfigDuration::parse`] takes, as a regex (but for overflow).
    pub const DURATION_PATTERN: &str = "^([0-9]+(ms|s|m|h))+$";

    /// What [`ByteSize::parse`] takes, as a regex (but for overflow).
    pub const SIZE_PATTERN: &str = "^[0-9]+(B|KiB|MiB|GiB)?$";

    /// A string of the form [`ConfigDuration::parse`] reads (only a string: a bare number has no
    /// unit), inlined so that an editor shows the key's own description.
    impl schemars::JsonSchema for ConfigDuration {
        fn inline_schema() -> bool {
            true
        }

        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Duration".into()
        }

        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            schemars::json_schema!({
                "type": "string",
                "pattern": DURATION_PATTERN,
                "examples": ["90s", "10m", "1h30m"],
            })
        }
    }

    /// A string of the form [`ByteSize::parse`] reads (a TOML integer is refused by the reader, so
    /// by the schema too), inlined like a duration.
    impl schemars::JsonSchema for ByteSize {
        fn inline_schema() -> bool {
            true
        }

        fn schema_name() -> std::borrow::Cow<'static, str> {
            "ByteSize".into()
        }

        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            schemars::json_schema!({
                "type": "string",
                "pattern": SIZE_PATTERN,
                "examples": ["64KiB", "16MiB", "1GiB"],
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let table: [(&str, Option<u64>); 14] = [
            ("500ms", Some(500)),
            ("90s", Some(90_000)),
            ("10m", Some(600_000)),
            ("1h", Some(3_600_000)),
            ("1h30m", Some(5_400_000)),
            ("0s", Some(0)),
            ("10 minutes", None),
            ("10minutes", None),
            ("10", None),
            ("", None),
            ("m", None),
            ("1.5s", None),
            ("-1s", None),
            ("10S", None),
        ];
        for (text, expected) in table {
            let parsed = ConfigDuration::parse(text)
                .ok()
                .map(|d| d.0.as_millis() as u64);
            assert_eq!(parsed, expected, "{text:?}");
        }
    }

    #[test]
    fn duration_error_names_value_and_form() {
        let error = ConfigDuration::parse("10 minutes").unwrap_err();
        assert!(error.contains("\"10 minutes\""), "{error}");
        assert!(error.contains("\"10m\""), "{error}");
    }

    #[test]
    fn sizes() {
        let table: [(&str, Option<u64>); 8] = [
            ("0", Some(0)),
            ("4096", Some(4096)),
            ("64KiB", Some(65_536)),
            ("64MiB", Some(67_108_864)),
            ("1GiB", Some(1_073_741_824)),
            ("64MB", None),
            ("MiB", None),
            ("99999999999GiB", None),
        ];
        for (text, expected) in table {
            assert_eq!(
                ByteSize::parse(text).ok().map(|s| s.0),
                expected,
                "{text:?}"
            );
        }
    }

    #[test]
    fn costs() {
        let table: [(&str, Option<f64>); 14] = [
            ("5 USD", Some(5.0)),
            ("0.50 USD", Some(0.5)),
            ("5USD", Some(5.0)),
            ("$5", Some(5.0)),
            ("$0.25", Some(0.25)),
            (" 12.5 USD ", Some(12.5)),
            ("0 USD", Some(0.0)),
            ("5", None),
            ("5 EUR", None),
            ("$-1", None),
            ("-1 USD", None),
            ("$5 USD", None),
            ("1e3 USD", None),
            ("USD", None),
        ];
        let pattern = regex::Regex::new(schema::COST_PATTERN).unwrap();
        for (text, expected) in table {
            assert_eq!(Usd::parse(text).ok().map(|c| c.0), expected, "{text:?}");
            assert_eq!(pattern.is_match(text), expected.is_some(), "{text:?}");
        }
        let error = Usd::parse("5 EUR").unwrap_err();
        assert!(
            error.contains("\"5 EUR\"") && error.contains("\"5 USD\""),
            "{error}"
        );
    }

    #[test]
    fn the_schema_patterns_take_what_the_readers_take() {
        let durations = regex::Regex::new(schema::DURATION_PATTERN).unwrap();
        for text in [
            "500ms",
            "90s",
            "1h30m",
            "0s",
            "1h1m1s1ms",
            "10 minutes",
            "10",
            "",
            "m",
            "1.5s",
            "-1s",
            "10S",
            "1hm",
            "1msm",
            " 1s",
            "1s ",
        ] {
            let parsed = ConfigDuration::parse(text).is_ok();
            assert_eq!(durations.is_match(text), parsed, "{text:?}");
        }
        let sizes = regex::Regex::new(schema::SIZE_PATTERN).unwrap();
        for text in [
            "0", "4096", "64KiB", "1GiB", "7B", "64MB", "MiB", "64 MiB", "64kib", "-1",
        ] {
            assert_eq!(
                sizes.is_match(text),
                ByteSize::parse(text).is_ok(),
                "{text:?}"
            );
        }
    }
}
