//! Durations written the way Flux and Go write them: `90s`, `15m`, `1h30m`, `5m0s`, `250ms`.
//!
//! Not `kube::core::Duration`: it reads an empty string as zero and multiplies with
//! `std::time::Duration::mul_f64`, which panics when the value overflows (`99999999999999999999h`
//! in one object's `spec.interval` would take the collector down); here both are errors that name
//! the input.

use chrono::TimeDelta;
use std::fmt;

/// Parses a Go-style duration. A bare `0` is accepted, as Go does; negative values are not.
pub fn parse_go_duration(text: &str) -> Result<TimeDelta, DurationError> {
    let text = text.trim();
    if text == "0" {
        return Ok(TimeDelta::zero());
    }
    if text.is_empty() {
        return Err(DurationError::new(text, "empty duration"));
    }
    let mut total_nanos: i128 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| DurationError::new(text, "missing unit (use ns, us, ms, s, m or h)"))?;
        if number_len == 0 {
            return Err(DurationError::new(text, "expected a number"));
        }
        let number: f64 = rest[..number_len]
            .parse()
            .map_err(|_| DurationError::new(text, "invalid number"))?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let nanos_per_unit: f64 = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            other => {
                return Err(DurationError::new(
                    text,
                    &format!("unknown unit {other:?} (use ns, us, ms, s, m or h)"),
                ));
            }
        };
        rest = &rest[unit_len..];
        total_nanos += (number * nanos_per_unit) as i128;
        if total_nanos > i64::MAX as i128 {
            return Err(DurationError::new(text, "too large"));
        }
    }
    Ok(TimeDelta::nanoseconds(total_nanos as i64))
}

/// Formats a duration compactly for people: `7d 2h`, `38m`, `12s`.
pub fn human(delta: TimeDelta) -> String {
    let secs = delta.num_seconds().max(0);
    let (days, hours, mins) = (secs / 86_400, (secs % 86_400) / 3600, (secs % 3600) / 60);
    match (days, hours, mins) {
        (0, 0, 0) => format!("{secs}s"),
        (0, 0, m) => format!("{m}m"),
        (0, h, 0) => format!("{h}h"),
        (0, h, m) => format!("{h}h {m}m"),
        (d, 0, _) => format!("{d}d"),
        (d, h, _) => format!("{d}d {h}h"),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurationError {
    input: String,
    problem: String,
}

impl DurationError {
    fn new(input: &str, problem: &str) -> Self {
        DurationError {
            input: input.to_string(),
            problem: problem.to_string(),
        }
    }
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid duration {:?}: {} (write it like 90s, 15m, 1h30m)",
            self.input, self.problem
        )
    }
}

impl std::error::Error for DurationError {}

/// Writes a duration the way it is read back: `1h30m`, `90s` as `1m30s`, `250ms`, `0s`.
pub fn format_go_duration(delta: TimeDelta) -> String {
    let mut millis = delta.num_milliseconds().max(0);
    if millis == 0 {
        return "0s".to_string();
    }
    let mut text = String::new();
    for (unit, size) in [("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)] {
        if millis >= size {
            text.push_str(&format!("{}{unit}", millis / size));
            millis %= size;
        }
    }
    text
}

/// Serde adapter so config files can say `stuck_after: 15m` (and the config's JSON schema can
/// show the defaults the same way).
pub mod serde_go {
    use super::{format_go_duration, parse_go_duration};
    use chrono::TimeDelta;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<TimeDelta, D::Error> {
        let text = String::deserialize(de)?;
        parse_go_duration(&text).map_err(serde::de::Error::custom)
    }

    pub fn serialize<S: Serializer>(delta: &TimeDelta, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(&format_go_duration(*delta))
    }

    pub mod option {
        use super::*;
        pub fn deserialize<'de, D: Deserializer<'de>>(
            de: D,
        ) -> Result<Option<TimeDelta>, D::Error> {
            let text = Option::<String>::deserialize(de)?;
            text.map(|t| parse_go_duration(&t).map_err(serde::de::Error::custom))
                .transpose()
        }

        pub fn serialize<S: Serializer>(
            delta: &Option<TimeDelta>,
            ser: S,
        ) -> Result<S::Ok, S::Error> {
            match delta {
                Some(delta) => super::serialize(delta, ser),
                None => ser.serialize_none(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Config files say `stuck_after: 15m`: the serde adapter reads and writes that form.
    #[test]
    fn the_serde_adapter_reads_and_writes_go_durations() {
        #[derive(serde::Deserialize, serde::Serialize)]
        struct Config {
            #[serde(with = "serde_go")]
            stuck_after: TimeDelta,
        }
        let config: Config = serde_json::from_str(r#"{"stuck_after": "1h30m"}"#).unwrap();
        assert_eq!(config.stuck_after, TimeDelta::minutes(90));
        assert_eq!(
            serde_json::to_string(&config).unwrap(),
            r#"{"stuck_after":"1h30m"}"#
        );
        assert!(serde_json::from_str::<Config>(r#"{"stuck_after": "soon"}"#).is_err());
    }

    /// The largest duration there is parses; one nanosecond more is too large.
    #[test]
    fn the_largest_duration_parses_and_no_larger() {
        let max = parse_go_duration("2562047h2836854775807ns").unwrap();
        assert_eq!(max, TimeDelta::nanoseconds(i64::MAX));
        assert!(parse_go_duration("2562047h2836854775808ns").is_err());
    }

    #[test]
    fn parses_flux_and_go_forms() {
        assert_eq!(parse_go_duration("90s").unwrap(), TimeDelta::seconds(90));
        assert_eq!(parse_go_duration("15m").unwrap(), TimeDelta::minutes(15));
        assert_eq!(parse_go_duration("1h30m").unwrap(), TimeDelta::minutes(90));
        assert_eq!(parse_go_duration("5m0s").unwrap(), TimeDelta::minutes(5));
        assert_eq!(
            parse_go_duration("250ms").unwrap(),
            TimeDelta::milliseconds(250)
        );
        assert_eq!(parse_go_duration("1.5h").unwrap(), TimeDelta::minutes(90));
        assert_eq!(parse_go_duration("0").unwrap(), TimeDelta::zero());
    }

    #[test]
    fn rejects_garbage_with_a_reason() {
        for bad in [
            "",
            "15",
            "m",
            "5x",
            "-5m",
            "1h 30m",
            "99999999999999999999h",
        ] {
            let err = parse_go_duration(bad).unwrap_err().to_string();
            assert!(err.contains("invalid duration"), "{bad}: {err}");
        }
    }

    #[test]
    fn formatted_durations_parse_back() {
        for (delta, text) in [
            (TimeDelta::minutes(90), "1h30m"),
            (TimeDelta::seconds(90), "1m30s"),
            (TimeDelta::milliseconds(250), "250ms"),
            (TimeDelta::zero(), "0s"),
            (TimeDelta::days(30), "720h"),
        ] {
            assert_eq!(format_go_duration(delta), text);
            assert_eq!(parse_go_duration(text).unwrap(), delta);
        }
    }

    #[test]
    fn human_durations_are_compact() {
        assert_eq!(human(TimeDelta::seconds(12)), "12s");
        assert_eq!(human(TimeDelta::minutes(38)), "38m");
        assert_eq!(human(TimeDelta::hours(170)), "7d 2h");
        assert_eq!(human(TimeDelta::minutes(125)), "2h 5m");
    }
}
