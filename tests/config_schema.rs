//! The chart's schema for `config` is generated from fleetglass's config types, never written by
//! hand: this test fails when helm/fleetglass/values.schema.json is out of date, and with
//! FLEETGLASS_WRITE_SCHEMA=1 it writes the current one there.

use std::path::PathBuf;

#[test]
fn the_charts_config_schema_is_the_one_the_config_types_generate() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("helm/fleetglass/values.schema.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut values: serde_json::Value = serde_json::from_str(&text).unwrap();
    let generated = fleetglass::config::json_schema();
    if std::env::var_os("FLEETGLASS_WRITE_SCHEMA").is_some() {
        values["properties"]["config"] = generated;
        let written = serde_json::to_string_pretty(&values).unwrap() + "\n";
        std::fs::write(&path, written).unwrap();
        return;
    }
    assert!(
        values["properties"]["config"] == generated,
        "{} is out of date: run FLEETGLASS_WRITE_SCHEMA=1 cargo test --test suite -- config_schema::",
        path.display()
    );
}
