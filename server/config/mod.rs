//! One typed configuration: a YAML file, then environment overrides, validated at start-up.
//! Errors name the file, the key and what is wrong.

mod actions;
mod alerts;
mod collector;
mod commit_links;
mod load;
mod oidc;
pub(crate) mod schema;
mod scopes;
mod web;
mod web_limits;

pub use actions::{ActionsConfig, Grantees};
pub use alerts::{
    AlertRule, AlertsConfig, CLUSTER_KIND, DeliveryConfig, Severity, SinkConfigError, SlackMode,
    SlackTarget, WebhookTarget, alertable, default_rules,
};
pub use collector::{CollectorSettings, Retention};
pub use commit_links::{CommitLinkRule, Forge};
pub use load::{ConfigError, from_file, from_yaml_str, load};
pub use oidc::OidcConfig;
pub use schema::json_schema;
pub use scopes::{ScopesConfig, TeamScope, namespace_matches};
pub use web::{AuthConfig, AuthMode, Cidr, ProxyConfig, TokenHash, WebConfig};
pub use web_limits::WebLimits;

use crate::health::{DomainSpec, Thresholds};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

#[derive(Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Postgres URL; `DATABASE_URL` in the environment overrides it.
    #[serde(default)]
    pub database_url: Option<Secret>,
    /// Address the web server listens on; `--listen` overrides it.
    #[serde(default)]
    pub listen: Option<String>,
    #[serde(default)]
    pub clusters: Vec<ClusterConfig>,
    #[serde(default)]
    pub domains: Vec<DomainSpec>,
    #[serde(default)]
    pub thresholds: Thresholds,
    /// The cluster label the fleet page groups columns by.
    #[serde(default = "default_group_by")]
    pub group_by: String,
    /// The `group_by` label values most important first: incidents on the first ring listed
    /// come first. Values not listed come after every listed one.
    #[serde(default = "default_group_order")]
    pub group_order: Vec<String>,
    /// Public URL of this fleetglass, used in alert links.
    #[serde(default)]
    pub public_url: Option<String>,
    /// How revisions of Git sources on self-hosted forges link to their commits (github.com,
    /// gitlab.com, bitbucket.org, codeberg.org and Azure DevOps are known without a rule).
    #[serde(default)]
    pub commit_links: Vec<CommitLinkRule>,
    /// Alert rules, timers and sinks (Slack, webhooks).
    #[serde(default)]
    pub alerts: AlertsConfig,
    #[serde(default)]
    pub collector: CollectorSettings,
    #[serde(default)]
    pub retention: Retention,
    /// Who may read the dashboard and the API.
    #[serde(default)]
    pub web: WebConfig,
}

fn default_group_by() -> String {
    "ring".to_string()
}

fn default_group_order() -> Vec<String> {
    ["prod", "staging", "dev"].map(String::from).to_vec()
}

impl Default for Config {
    fn default() -> Self {
        Config {
            database_url: None,
            listen: None,
            clusters: Vec::new(),
            domains: Vec::new(),
            thresholds: Thresholds::default(),
            group_by: default_group_by(),
            group_order: default_group_order(),
            public_url: None,
            commit_links: Vec::new(),
            alerts: AlertsConfig::default(),
            collector: CollectorSettings::default(),
            retention: Retention::default(),
            web: WebConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    pub name: String,
    /// Path to a kubeconfig file; `$KUBECONFIG` (or ~/.kube/config) when absent.
    #[serde(default)]
    pub kubeconfig: Option<PathBuf>,
    /// Context in the kubeconfig; its current context when absent.
    #[serde(default)]
    pub context: Option<String>,
    /// Use the pod's service account (the cluster fleetglass runs in).
    #[serde(default)]
    pub in_cluster: bool,
    /// Labels such as ring, region, environment; domains select clusters by them.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

/// A string that never appears in logs or `Debug` output (database URLs carry passwords).
#[derive(Clone, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("database_url", &self.database_url)
            .field("listen", &self.listen)
            .field("clusters", &self.clusters)
            .field("domains", &self.domains.len())
            .field("thresholds", &self.thresholds)
            .field("group_by", &self.group_by)
            .field("group_order", &self.group_order)
            .field("commit_links", &self.commit_links)
            .field("alerts", &self.alerts)
            .field("collector", &self.collector)
            .field("retention", &self.retention)
            .field("web", &self.web)
            .finish()
    }
}
