//! How the model's types that parse text their own way (Go durations, kinds) appear in the
//! JSON schemas generated from the types that hold them (the config's schema, for Helm).

use super::Kind;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use std::borrow::Cow;

/// A duration as Flux and Go write it: `90s`, `15m`, `1h30m`, `250ms`.
pub struct GoDuration;

impl GoDuration {
    /// The text `parse_go_duration` accepts, as a JSON schema pattern.
    pub const PATTERN: &str = r"^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$";
}

impl JsonSchema for GoDuration {
    fn schema_name() -> Cow<'static, str> {
        "GoDuration".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": GoDuration::PATTERN, "examples": ["90s", "15m", "1h30m"]})
    }
}

impl JsonSchema for Kind {
    fn schema_name() -> Cow<'static, str> {
        "Kind".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let kinds: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
        json_schema!({"type": "string", "enum": kinds})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names the chart's values.schema.json refers to them by.
    #[test]
    fn the_schemas_are_named_for_their_types() {
        assert_eq!(GoDuration::schema_name(), "GoDuration");
        assert_eq!(Kind::schema_name(), "Kind");
    }

    #[test]
    fn kinds_are_an_enum_of_their_names_and_durations_a_pattern() {
        let kind = serde_json::to_value(schemars::schema_for!(Kind)).unwrap();
        assert_eq!(kind["type"], "string");
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(kind["enum"], serde_json::json!(names));
        assert!(names.contains(&"HelmRelease") && names.contains(&"Deployment"));
        let duration = serde_json::to_value(schemars::schema_for!(GoDuration)).unwrap();
        assert_eq!(duration["pattern"], GoDuration::PATTERN);
        assert_eq!(duration["type"], "string");
    }
}
