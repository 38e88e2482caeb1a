//! The config's JSON schema, generated from the config types, so the Helm chart can reject a
//! misspelled key at `helm install` instead of in the pod's crash message. The config's own types
//! that parse text their own way (retention periods, address ranges, token hashes) say here what
//! text they take; the engine's (Go durations, kinds, states) say it in the engine.

// Config fields name the engine's Go duration schema through here.
pub use crate::model::GoDuration;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use std::borrow::Cow;

/// The schema of the config file, self-contained (no references), draft-07 as Helm reads it.
pub fn json_schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let mut schema = serde_json::to_value(generator.into_root_schema_for::<super::Config>())
        .expect("a schema is JSON");
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    schema
}

/// A retention period: whole days (`30d`) or a Go duration.
pub struct DaysOrGoDuration;

impl JsonSchema for DaysOrGoDuration {
    fn schema_name() -> Cow<'static, str> {
        "DaysOrGoDuration".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": format!(r"^[0-9]+d$|{}", GoDuration::PATTERN), "examples": ["30d", "720h"]})
    }
}

/// A token's sha256, as `sha256sum` prints it.
pub struct Sha256Hex;

impl JsonSchema for Sha256Hex {
    fn schema_name() -> Cow<'static, str> {
        "Sha256Hex".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": "^[0-9a-fA-F]{64}$"})
    }
}

impl JsonSchema for super::Cidr {
    fn schema_name() -> Cow<'static, str> {
        "Cidr".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": "^[0-9a-fA-F.:]+/[0-9]{1,3}$", "examples": ["10.0.0.0/8"]})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_closes_every_config_level() {
        let schema = json_schema();
        assert_eq!(schema["additionalProperties"], false);
        let clusters = &schema["properties"]["clusters"]["items"];
        assert_eq!(clusters["additionalProperties"], false);
        assert!(clusters["properties"]["kubeconfig"].is_object());
        assert!(
            schema["properties"]["thresholds"]["properties"]["stuck_after"]["pattern"].is_string()
        );
        assert!(!schema.to_string().contains("$ref"), "self-contained");
    }
}
