//! What every handler can reach: the store, the parts of the configuration pages need, the
//! key that signs form tokens, and what long-poll waits share.

use super::csrf::CsrfKey;
use super::hosts::HostPolicy;
use super::oidc::Provider;
use super::throttle::SignInThrottle;
use super::views::commits::CommitLinks;
use super::views::domain_hint::HintCache;
use super::waits::{Waits, WakeSource};
use crate::config::{
    ActionsConfig, AlertRule, AuthConfig, AuthMode, Config, Grantees, ScopesConfig, WebLimits,
};
use crate::health::{DomainSpec, Thresholds};
use crate::ingest::Latest;
use crate::sources::actions::Actuator;
use crate::sources::logs::PodLogs;
use crate::store::Store;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub site: Arc<Site>,
    pub csrf_key: Arc<CsrfKey>,
    pub waits: Arc<Waits>,
    /// The fleet page's hint while no domains are configured, as last loaded and when.
    pub domain_hint: Arc<HintCache>,
    pub sign_in_throttle: Arc<SignInThrottle>,
    /// Where container logs are read from; None when reading them is off.
    pub pod_logs: Option<Arc<PodLogs>>,
    /// The OpenID provider people sign in with (`mode: oidc`).
    pub oidc: Option<Arc<Provider>>,
    /// Where reconcile, suspend and resume go; None while `web.actions` is off.
    pub actions: Option<Arc<Actuator>>,
}

impl AppState {
    /// Waits are woken by Postgres notifications and form tokens signed with a fresh key;
    /// [`AppState::with_evaluations`] and [`AppState::with_csrf_key`] change that.
    pub fn new(store: Store, site: Site) -> AppState {
        let waits = Waits::new(
            site.limits.max_waits,
            site.limits.max_waits_per_client.min(site.limits.max_waits),
            WakeSource::Notifications(store.clone()),
        );
        AppState {
            store,
            site: Arc::new(site),
            csrf_key: Arc::new(CsrfKey::generate()),
            waits: Arc::new(waits),
            domain_hint: Arc::default(),
            sign_in_throttle: Arc::default(),
            pod_logs: None,
            oidc: None,
            actions: None,
        }
    }

    /// Wakes waits on every evaluation of the runner in this process instead.
    pub fn with_evaluations(mut self, latest: Latest) -> AppState {
        self.waits = Arc::new(Waits::new(
            self.site.limits.max_waits,
            self.site
                .limits
                .max_waits_per_client
                .min(self.site.limits.max_waits),
            WakeSource::Evaluations(latest),
        ));
        self
    }

    /// Offers containers' last log lines, read from `logs`.
    pub fn with_pod_logs(mut self, logs: PodLogs) -> AppState {
        self.pod_logs = Some(Arc::new(logs));
        self
    }

    /// Carries out the actions `web.actions` allows, on these clusters.
    pub fn with_actions(mut self, actuator: Actuator) -> AppState {
        if self.site.actions.enabled {
            self.actions = Some(Arc::new(actuator));
        }
        self
    }

    /// Signs people in with the configured OpenID provider; no request is made to it here.
    pub fn with_oidc(mut self) -> Result<AppState, String> {
        let Some(config) = self.site.auth.oidc.clone() else {
            return Ok(self);
        };
        let public_url = self.site.public_url.as_deref().unwrap_or_default();
        self.oidc = Some(Arc::new(Provider::new(config, public_url)?));
        Ok(self)
    }

    pub fn with_csrf_key(mut self, key: CsrfKey) -> AppState {
        self.csrf_key = Arc::new(key);
        self
    }
}

/// Configuration the web reads (never secrets).
#[derive(Debug, Clone, Default)]
pub struct Site {
    /// Cluster names in configured order (the fleet page keeps that order within a group).
    pub cluster_order: Vec<String>,
    /// Each configured cluster's labels: a cluster exists from the moment it is configured,
    /// before anything of it is stored.
    pub cluster_labels: BTreeMap<String, BTreeMap<String, String>>,
    pub domains: Vec<DomainSpec>,
    pub thresholds: Thresholds,
    pub group_by: String,
    /// The `group_by` values most important first (incidents there come first).
    pub group_order: Vec<String>,
    /// The alert rules, for the severity each incident would page with.
    pub alert_rules: Vec<AlertRule>,
    /// Where notifications go (`Slack`, `webhook pager`); none configured: nobody is told.
    pub sinks: Vec<String>,
    /// Token hashes and proxy settings; the hashes are never shown.
    pub auth: AuthConfig,
    /// Which Host names are this server, and whether it is reached over https.
    pub hosts: HostPolicy,
    pub limits: WebLimits,
    /// Where Git revisions link to (the config's `commit_links`).
    pub commit_links: CommitLinks,
    /// Each cluster's kubeconfig context, where one is configured (for `flux --context`).
    pub kube_contexts: BTreeMap<String, String>,
    /// How far back the fleet's history goes (`retention.transitions`): the oldest `?at=`.
    pub history_kept: chrono::TimeDelta,
    /// Where people reach this fleetglass (`public_url`).
    pub public_url: Option<String>,
    /// Who may reconcile, suspend and resume (`web.actions`).
    pub actions: ActionsConfig,
    /// Who sees what (`web.scopes`); None: everyone let in sees everything.
    pub scopes: Option<ScopesConfig>,
}

impl Site {
    pub fn from_config(config: &Config) -> Site {
        Site {
            cluster_order: config.clusters.iter().map(|c| c.name.clone()).collect(),
            cluster_labels: config
                .clusters
                .iter()
                .map(|c| (c.name.clone(), c.labels.clone()))
                .collect(),
            domains: config.domains.clone(),
            thresholds: config.thresholds.clone(),
            group_by: config.group_by.clone(),
            group_order: config.group_order.clone(),
            alert_rules: config.alerts.rules.clone(),
            sinks: config
                .alerts
                .slack
                .iter()
                .map(|_| "Slack".to_string())
                .chain(
                    config
                        .alerts
                        .webhooks
                        .iter()
                        .map(|w| format!("webhook {}", w.name)),
                )
                .collect(),
            auth: config.web.auth.clone(),
            hosts: HostPolicy::new(
                config.public_url.as_deref(),
                &config.web.allowed_hosts,
                None,
            ),
            limits: config.web.limits.clone(),
            commit_links: CommitLinks::new(config.commit_links.clone()),
            history_kept: config.retention.transitions,
            public_url: config.public_url.clone(),
            actions: config.web.actions.clone(),
            scopes: config.web.scopes.clone(),
            kube_contexts: config
                .clusters
                .iter()
                .filter_map(|c| Some((c.name.clone(), c.context.clone()?)))
                .collect(),
        }
    }

    /// The address the server listens on (the footer and the Host check depend on it).
    pub fn listening_on(mut self, address: SocketAddr) -> Site {
        self.hosts.listening_on(address);
        self
    }

    /// Whether anyone on the network can reach this server without signing in.
    pub fn open_to_the_network(&self) -> bool {
        !self.auth.identifies() && self.hosts.listen().is_some_and(|a| !a.ip().is_loopback())
    }

    /// Who may sign in, act and see what, in one line without secrets: what the audit trail
    /// records when it changes.
    pub fn policy(&self) -> String {
        let mut policy = self.auth.policy();
        let names = |g: &Grantees| {
            let mut all: Vec<String> = (g.users.iter().map(|u| format!("user {u}")))
                .chain(g.groups.iter().map(|x| format!("group {x}")))
                .chain(g.tokens.iter().map(|t| format!("token {t}")))
                .collect();
            all.sort();
            match all.is_empty() {
                true => "nobody".to_string(),
                false => all.join(", "),
            }
        };
        if self.actions.enabled {
            policy.push_str(&format!("; actions by {}", names(&self.actions.allowed)));
        }
        if let Some(scopes) = &self.scopes {
            policy.push_str(&format!("; scopes: admins {}", names(&scopes.admins)));
            for team in &scopes.teams {
                let list = |items: &[String]| match items.is_empty() {
                    true => "all".to_string(),
                    false => items.join(", "),
                };
                let clusters: Vec<String> = team
                    .clusters
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                policy.push_str(&format!(
                    "; team {} ({}): domains {}, clusters {}, namespaces {}",
                    team.name,
                    names(&team.members),
                    match team.domains.is_empty() {
                        true => "none".to_string(),
                        false => team.domains.join(", "),
                    },
                    list(&clusters),
                    list(&team.namespaces)
                ));
            }
        }
        policy
    }

    /// Whether changes (silences) can be made here: only by someone identified.
    pub fn can_write(&self) -> bool {
        self.auth.identifies()
    }

    /// The footer line saying how access is controlled.
    pub fn access_note(&self) -> &'static str {
        match self.auth.mode() {
            AuthMode::None if self.open_to_the_network() => {
                "no authentication: read-only, and open to anyone who can reach it"
            }
            AuthMode::None => "no authentication configured: read-only, for local use",
            AuthMode::Tokens => "API tokens required",
            AuthMode::Proxy => "signed in through the proxy",
            AuthMode::Oidc => "signed in with single sign-on",
        }
    }
}
