//! The `alerts:` section: which root causes page whom and when, the lifecycle timers, and where
//! notifications go. Secrets (Slack webhook URLs, bot tokens, webhook URLs) never live in the
//! file: they come from the environment or from a mounted file, and stay wrapped in [`Secret`].

use super::Secret;
use crate::health::State;
use crate::model::{Kind, serde_go};
// Stored with every alert, so the store owns it; a rule names one.
// Most severe first: the derived order is `Critical` < `Warning` < `Info`.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Critical,
    #[default]
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl FromStr for Severity {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        [Severity::Critical, Severity::Warning, Severity::Info]
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| format!("unknown severity {text:?}"))
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

use chrono::TimeDelta;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertsConfig {
    /// Checked in order; the first rule whose scope matches a root cause decides. A root cause
    /// no rule matches is not alerted. Absent: [`default_rules`].
    #[serde(default = "default_rules")]
    pub rules: Vec<AlertRule>,
    /// How often a long-open alert is sent again.
    #[serde(default = "default_renotify", with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub renotify: TimeDelta,
    /// A root cause that clears and returns within this window stays one alert: the resolve is
    /// only sent once it has stayed clear this long.
    #[serde(default = "default_flap_window", with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub flap_window: TimeDelta,
    #[serde(default)]
    pub slack: Option<SlackConfig>,
    #[serde(default)]
    pub webhooks: Vec<WebhookConfig>,
    #[serde(default)]
    pub delivery: DeliveryConfig,
}

impl Default for AlertsConfig {
    fn default() -> Self {
        AlertsConfig {
            rules: default_rules(),
            renotify: default_renotify(),
            flap_window: default_flap_window(),
            slack: None,
            webhooks: Vec::new(),
            delivery: DeliveryConfig::default(),
        }
    }
}

fn default_renotify() -> TimeDelta {
    TimeDelta::hours(4)
}

fn default_flap_window() -> TimeDelta {
    TimeDelta::minutes(10)
}

/// Stale cluster data and dead controllers after five minutes; every other root cause in a
/// problem state at once (the engine already applied the stuck/stale thresholds).
pub fn default_rules() -> Vec<AlertRule> {
    vec![
        AlertRule {
            name: "cluster-not-fresh".into(),
            kinds: vec![CLUSTER_KIND.into()],
            for_: TimeDelta::minutes(5),
            severity: Severity::Critical,
            ..AlertRule::everything("")
        },
        AlertRule {
            name: "controller-unavailable".into(),
            controllers_only: true,
            for_: TimeDelta::minutes(5),
            severity: Severity::Critical,
            ..AlertRule::everything("")
        },
        AlertRule::everything("root-cause"),
    ]
}

/// The kind word a rule uses for a cluster that is itself the root cause (stale data).
pub use crate::health::CLUSTER_KIND;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertRule {
    pub name: String,
    /// Root-cause states this rule covers (problem states, or `suspended` for a suspension that
    /// holds up what waits on it); empty: all of them.
    #[serde(default, deserialize_with = "problem_states")]
    pub states: Vec<State>,
    /// Kinds (`Kustomization`, …, or `Cluster`); empty: every kind.
    #[serde(default, deserialize_with = "rule_kinds")]
    pub kinds: Vec<String>,
    /// Only root causes that are Flux controller Deployments (a controller that is down).
    #[serde(default)]
    pub controllers_only: bool,
    /// Cluster label selector (`ring: prod`); empty: every cluster.
    #[serde(default)]
    pub clusters: BTreeMap<String, String>,
    /// Only root causes that keep one of these domains from being healthy; empty: any.
    #[serde(default)]
    pub domains: Vec<String>,
    /// How long the root cause must have been a problem before it pages.
    #[serde(default, rename = "for", with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub for_: TimeDelta,
    #[serde(default)]
    pub severity: Severity,
}

impl AlertRule {
    /// A rule with no scope: every root cause in a problem state, at once.
    pub fn everything(name: &str) -> AlertRule {
        AlertRule {
            name: name.to_string(),
            states: Vec::new(),
            kinds: Vec::new(),
            controllers_only: false,
            clusters: BTreeMap::new(),
            domains: Vec::new(),
            for_: TimeDelta::zero(),
            severity: Severity::Warning,
        }
    }
}

/// Whether a root cause in this state is worth an alert: a problem, or a suspension (the
/// engine names a suspended object as a root cause only while it holds something up that
/// waits on it).
pub fn alertable(state: State) -> bool {
    state.is_problem() || state == State::Suspended
}

fn problem_states<'de, D: Deserializer<'de>>(de: D) -> Result<Vec<State>, D::Error> {
    let states = Vec::<State>::deserialize(de)?;
    match states.iter().find(|s| !alertable(**s)) {
        Some(state) => Err(serde::de::Error::custom(format!(
            "{state} is not a problem state and never alerts"
        ))),
        None => Ok(states),
    }
}

fn rule_kinds<'de, D: Deserializer<'de>>(de: D) -> Result<Vec<String>, D::Error> {
    Vec::<String>::deserialize(de)?
        .into_iter()
        .map(|kind| {
            if kind.eq_ignore_ascii_case(CLUSTER_KIND) {
                return Ok(CLUSTER_KIND.to_string());
            }
            kind.parse::<Kind>()
                .map(|k| k.as_str().to_string())
                .map_err(|e| serde::de::Error::custom(format!("{e} (or Cluster)")))
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SlackMode {
    /// Incoming webhook: posts only (cannot edit or thread).
    Webhook,
    /// Web API with a bot token: posts, edits its message, resolves in the thread.
    Bot,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlackConfig {
    /// Inferred when absent: `bot` when a token is given, else `webhook`.
    #[serde(default)]
    pub mode: Option<SlackMode>,
    /// Channel id or name for bot mode (`SLACK_CHANNEL` in the environment also works).
    #[serde(default)]
    pub channel: Option<String>,
    /// File holding the bot token (else `SLACK_BOT_TOKEN`).
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    /// File holding the incoming-webhook URL (else `SLACK_WEBHOOK_URL`).
    #[serde(default)]
    pub webhook_url_file: Option<PathBuf>,
    /// The Web API base URL (a local receiver in tests).
    #[serde(default = "default_slack_api")]
    pub api_url: String,
}

fn default_slack_api() -> String {
    "https://slack.com/api".to_string()
}

/// A generic JSON webhook: every alert event is POSTed to it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    pub name: String,
    pub url_file: PathBuf,
}

/// How hard the delivery worker tries.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DeliveryConfig {
    /// One HTTP request may take this long.
    #[serde(with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub timeout: TimeDelta,
    /// First retry delay; doubled per attempt, with jitter.
    #[serde(with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub backoff: TimeDelta,
    #[serde(with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub max_backoff: TimeDelta,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        DeliveryConfig {
            timeout: TimeDelta::seconds(10),
            backoff: TimeDelta::seconds(2),
            max_backoff: TimeDelta::minutes(5),
        }
    }
}

/// Where Slack messages go, with the secret resolved.
#[derive(Debug, Clone)]
pub enum SlackTarget {
    Webhook {
        url: Secret,
    },
    Bot {
        api_url: String,
        token: Secret,
        channel: String,
    },
}

#[derive(Debug, Clone)]
pub struct WebhookTarget {
    pub name: String,
    pub url: Secret,
}

/// A problem with the alert sinks, naming the key (never the secret).
#[derive(Debug, thiserror::Error)]
#[error("alerts.{key}: {problem}")]
pub struct SinkConfigError {
    key: String,
    problem: String,
}

fn sink_error(key: &str, problem: impl Into<String>) -> SinkConfigError {
    SinkConfigError {
        key: key.to_string(),
        problem: problem.into(),
    }
}

impl AlertsConfig {
    /// Resolves the Slack target from the config, the environment (`env` looks a variable up)
    /// and mounted files. `SLACK_WEBHOOK_URL` alone is enough; None when nothing is configured.
    pub fn slack_target(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<SlackTarget>, SinkConfigError> {
        let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let slack = self.slack.clone().unwrap_or(SlackConfig {
            mode: None,
            channel: None,
            token_file: None,
            webhook_url_file: None,
            api_url: default_slack_api(),
        });
        let token = match &slack.token_file {
            Some(path) => Some(read_secret(path, "slack.token_file")?),
            None => env("SLACK_BOT_TOKEN").map(Secret::new),
        };
        let webhook = match &slack.webhook_url_file {
            Some(path) => Some(read_secret(path, "slack.webhook_url_file")?),
            None => env("SLACK_WEBHOOK_URL").map(Secret::new),
        };
        let mode = slack.mode.or(if token.is_some() {
            Some(SlackMode::Bot)
        } else if webhook.is_some() {
            Some(SlackMode::Webhook)
        } else {
            None
        });
        match mode {
            None => Ok(None),
            Some(SlackMode::Webhook) => {
                let url = webhook.ok_or_else(|| {
                    sink_error(
                        "slack.webhook_url_file",
                        "webhook mode needs SLACK_WEBHOOK_URL or webhook_url_file",
                    )
                })?;
                Ok(Some(SlackTarget::Webhook { url }))
            }
            Some(SlackMode::Bot) => {
                let token = token.ok_or_else(|| {
                    sink_error(
                        "slack.token_file",
                        "bot mode needs SLACK_BOT_TOKEN or token_file",
                    )
                })?;
                let channel = slack
                    .channel
                    .or_else(|| env("SLACK_CHANNEL"))
                    .ok_or_else(|| {
                        sink_error(
                            "slack.channel",
                            "bot mode needs a channel (or SLACK_CHANNEL)",
                        )
                    })?;
                Ok(Some(SlackTarget::Bot {
                    api_url: slack.api_url.trim_end_matches('/').to_string(),
                    token,
                    channel,
                }))
            }
        }
    }

    pub fn webhook_targets(&self) -> Result<Vec<WebhookTarget>, SinkConfigError> {
        self.webhooks
            .iter()
            .enumerate()
            .map(|(i, hook)| {
                Ok(WebhookTarget {
                    name: hook.name.clone(),
                    url: read_secret(&hook.url_file, &format!("webhooks[{i}].url_file"))?,
                })
            })
            .collect()
    }
}

fn read_secret(path: &Path, key: &str) -> Result<Secret, SinkConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| sink_error(key, format!("cannot read {}: {e}", path.display())))?;
    let text = text.trim();
    if text.is_empty() {
        return Err(sink_error(key, format!("{} is empty", path.display())));
    }
    Ok(Secret::new(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::from_yaml_str;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn absent_section_gives_the_default_rules_and_timers() {
        let config = from_yaml_str("").unwrap();
        let names: Vec<_> = config
            .alerts
            .rules
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(
            names,
            ["cluster-not-fresh", "controller-unavailable", "root-cause"]
        );
        assert_eq!(config.alerts.renotify, TimeDelta::hours(4));
        assert!(config.alerts.slack_target(no_env).unwrap().is_none());
    }

    #[test]
    fn rules_parse_and_bad_ones_name_the_key() {
        let config = from_yaml_str(
            "alerts:\n  rules:\n    - {name: prod, states: [failed, stale], kinds: [helmrelease, cluster], clusters: {ring: prod}, for: 5m, severity: critical}\n",
        )
        .unwrap();
        let rule = &config.alerts.rules[0];
        assert_eq!(rule.kinds, ["HelmRelease", "Cluster"]);
        assert_eq!(rule.for_, TimeDelta::minutes(5));
        assert_eq!(rule.severity, Severity::Critical);
        let err = from_yaml_str("alerts:\n  rules: [{name: x, states: [healthy]}]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("alerts.rules[0].states") && err.contains("never alerts"),
            "{err}"
        );
        // a suspension holding up what waits on it is a root cause, so a rule may name it
        let config = from_yaml_str(
            "alerts:
  rules: [{name: held, states: [suspended]}]
",
        )
        .unwrap();
        assert_eq!(config.alerts.rules[0].states, [State::Suspended]);
        let err = from_yaml_str("alerts:\n  slack: {mode: carrier-pigeon}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("alerts.slack.mode"), "{err}");
    }

    #[test]
    fn slack_webhook_url_alone_is_enough_and_stays_secret() {
        let config = from_yaml_str("").unwrap();
        let target = config
            .alerts
            .slack_target(|name| {
                (name == "SLACK_WEBHOOK_URL").then(|| "https://hooks.example/T/B/s3cret".into())
            })
            .unwrap();
        let Some(SlackTarget::Webhook { url }) = &target else {
            panic!("{target:?}")
        };
        assert_eq!(url.expose(), "https://hooks.example/T/B/s3cret");
        assert!(!format!("{target:?}").contains("s3cret"));
    }

    #[test]
    fn bot_mode_needs_a_channel() {
        let config = from_yaml_str("").unwrap();
        let token = |name: &str| (name == "SLACK_BOT_TOKEN").then(|| "xoxb-1".to_string());
        let err = config.alerts.slack_target(token).unwrap_err().to_string();
        assert!(err.starts_with("alerts.slack.channel"), "{err}");
        let config =
            from_yaml_str("alerts: {slack: {channel: C42, api_url: 'http://x/api/'}}").unwrap();
        match config.alerts.slack_target(token).unwrap() {
            Some(SlackTarget::Bot {
                api_url, channel, ..
            }) => assert_eq!(
                (api_url.as_str(), channel.as_str()),
                ("http://x/api", "C42")
            ),
            other => panic!("{other:?}"),
        }
    }
}
