//! How the state words appear in generated schemas: the config's JSON schema (schemars) and,
//! with the `openapi` feature, the API's OpenAPI document (utoipa). Both list them worst first,
//! the order problem lists and roll-ups use.

use super::State;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use std::borrow::Cow;

impl JsonSchema for State {
    fn schema_name() -> Cow<'static, str> {
        "State".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let states: Vec<&str> = State::BY_SEVERITY.iter().map(|s| s.as_str()).collect();
        json_schema!({"type": "string", "enum": states})
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for State {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(State::BY_SEVERITY.map(State::as_str)))
            .description(Some("a verdict's state; listed worst first"))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for State {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("State")
    }
}

#[cfg(test)]
mod tests {
    use super::State;
    use serde_json::json;

    const WORST_FIRST: [&str; 9] = [
        "failed",
        "stale",
        "stuck",
        "degraded",
        "unverifiable",
        "blocked",
        "progressing",
        "suspended",
        "healthy",
    ];

    #[test]
    fn the_config_schema_names_every_state_worst_first() {
        let schema = serde_json::to_value(schemars::schema_for!(State)).unwrap();
        assert_eq!(schema["type"], "string");
        assert_eq!(schema["enum"], json!(WORST_FIRST));
        assert_eq!(schema["title"], "State");
    }

    #[cfg(feature = "openapi")]
    #[test]
    fn the_openapi_schema_names_every_state_worst_first() {
        use utoipa::{PartialSchema, ToSchema};
        let schema = serde_json::to_value(State::schema()).unwrap();
        assert_eq!(schema["type"], "string");
        assert_eq!(schema["enum"], json!(WORST_FIRST));
        assert_eq!(
            schema["description"],
            "a verdict's state; listed worst first"
        );
        assert_eq!(State::name(), "State");
    }
}
