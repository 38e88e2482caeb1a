//! `fleetglass evaluate` on captured objects, and lookups into its JSON report.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The test bed cluster the objects come from (ids are `tb-1/Kind/namespace/name`).
pub const CLUSTER: &str = "tb-1";

/// Runs `fleetglass evaluate` on captured objects as the test bed cluster, as of `now`.
pub fn evaluate(objects: &Path, config: &Path, now: &str) -> Report {
    let output = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .args(["evaluate", "--cluster", CLUSTER, "--now", now, "--config"])
        .arg(config)
        .arg(objects)
        .output()
        .expect("run fleetglass evaluate");
    assert!(
        output.status.success(),
        "fleetglass evaluate failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Report(serde_json::from_slice(&output.stdout).expect("evaluate prints JSON"))
}

/// The `evaluate` JSON document, with lookups by object.
pub struct Report(pub Value);

impl Report {
    pub fn verdict(&self, kind: &str, namespace: &str, name: &str) -> &Value {
        let id = format!("{CLUSTER}/{kind}/{namespace}/{name}");
        self.0["objects"]
            .as_array()
            .and_then(|objects| objects.iter().find(|o| o["id"] == id.as_str()))
            .unwrap_or_else(|| panic!("no verdict for {id} in {:#}", self.0["objects"]))
    }

    pub fn domain(&self, name: &str) -> &Value {
        self.0["domains"]
            .as_array()
            .and_then(|d| d.iter().find(|d| d["domain"] == name))
            .unwrap_or_else(|| panic!("no domain {name} in {:#}", self.0["domains"]))
    }
}
