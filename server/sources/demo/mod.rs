//! INTERIM demo module shell until the demo fleet lands.
mod source;
pub use source::{WorldDiff, apply_to_config, run};

pub struct DemoCluster {
    pub name: &'static str,
    pub labels: &'static [(&'static str, &'static str)],
}
pub const DEMO_CLUSTERS: &[DemoCluster] = &[DemoCluster {
    name: "dev-1",
    labels: &[("ring", "dev")],
}];
pub const DEMO_DOMAINS_YAML: &str = "[]";
pub fn world(
    _started: chrono::DateTime<chrono::Utc>,
    _now: chrono::DateTime<chrono::Utc>,
) -> Vec<(String, serde_json::Value)> {
    Vec::new()
}
