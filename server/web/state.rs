//! What every handler can reach: the store and the parts of the configuration pages need.

use crate::config::{AuthConfig, AuthMode, Config};
use crate::health::{DomainSpec, Thresholds};
use crate::store::Store;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub site: Arc<Site>,
}

/// Configuration the web reads (never secrets).
#[derive(Debug, Clone, Default)]
pub struct Site {
    /// Cluster names in configured order (the fleet page keeps that order within a group).
    pub cluster_order: Vec<String>,
    pub domains: Vec<DomainSpec>,
    pub thresholds: Thresholds,
    pub group_by: String,
    /// Token hashes and proxy settings; the hashes are never shown.
    pub auth: AuthConfig,
}

impl Site {
    pub fn from_config(config: &Config) -> Site {
        Site {
            cluster_order: config.clusters.iter().map(|c| c.name.clone()).collect(),
            domains: config.domains.clone(),
            thresholds: config.thresholds.clone(),
            group_by: config.group_by.clone(),
            auth: config.web.auth.clone(),
        }
    }

    /// The footer line saying how access is controlled.
    pub fn access_note(&self) -> &'static str {
        match self.auth.mode {
            AuthMode::None => "no authentication configured (read-only, for local use)",
            AuthMode::Tokens => "read-only · API tokens required",
            AuthMode::Proxy => "read-only · signed in through the proxy",
        }
    }
}
