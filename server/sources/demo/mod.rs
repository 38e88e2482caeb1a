//! The demo fleet: an in-process simulated fleet of Flux clusters whose objects look exactly like
//! what the API servers would return, replaying the seed incidents (see `scenario` for the
//! incident table), and the source that feeds it to the runner.

mod fleet;
mod hex;
pub mod history;
mod k8s;
mod logs;
mod scenario;
mod source;
mod warnings;

pub use fleet::{DEMO_CLUSTERS, DEMO_DOMAINS_YAML, DOMAIN_LABEL, DemoCluster, RINGS};
pub use logs::previous_log;
pub use scenario::{LOOP_PERIOD_SECS, world};
pub use source::{WorldDiff, apply_to_config, demo_domains, run};

#[cfg(test)]
mod tests;
