//! Safe actions (`web.actions`): asking Flux to reconcile an object now, suspending and
//! resuming it, from its page. Off by default; on, only the people, groups and tokens named
//! may act, and fleetglass needs `patch` on those kinds (the fleetglass-reader chart's
//! `actions: true`).

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionsConfig {
    #[serde(default)]
    pub enabled: bool,
    /// Who may act. Nobody else sees the buttons, and a request from anyone else is refused.
    #[serde(default)]
    pub allowed: Grantees,
}

/// Identities by how they signed in.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Grantees {
    /// People by name: as the OpenID provider names them (`web.auth.oidc.username_claim`) or
    /// as the proxy does.
    #[serde(default)]
    pub users: Vec<String>,
    /// People by the groups the OpenID provider lists for them.
    #[serde(default)]
    pub groups: Vec<String>,
    /// API tokens by name.
    #[serde(default)]
    pub tokens: Vec<String>,
}

impl Grantees {
    pub fn is_empty(&self) -> bool {
        self.users.is_empty() && self.groups.is_empty() && self.tokens.is_empty()
    }

    /// Whether a person with this name and these groups is among them.
    pub fn has_person(&self, name: &str, groups: &[String]) -> bool {
        self.users.iter().any(|u| u == name) || self.groups.iter().any(|g| groups.contains(g))
    }

    pub fn has_token(&self, name: &str) -> bool {
        self.tokens.iter().any(|t| t == name)
    }
}

impl ActionsConfig {
    /// A key and what is wrong, when actions are on but nobody could be told apart or allowed.
    pub fn problem(&self, identifies: bool) -> Option<(String, String)> {
        if !self.enabled {
            return None;
        }
        if !identifies {
            return Some((
                "web.actions.enabled".into(),
                "actions need to know who acts: configure web.auth (tokens, proxy or oidc)".into(),
            ));
        }
        if self.allowed.is_empty() {
            return Some((
                "web.actions.allowed".into(),
                "actions are enabled but nobody is allowed: name users, groups or tokens".into(),
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actions(yaml: &str) -> ActionsConfig {
        crate::yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn off_by_default_and_on_only_for_someone_identified() {
        assert!(!ActionsConfig::default().enabled);
        assert_eq!(ActionsConfig::default().problem(false), None);
        let nobody = actions("enabled: true\n");
        assert_eq!(nobody.problem(true).unwrap().0, "web.actions.allowed");
        let someone = actions("enabled: true\nallowed: {groups: [platform]}\n");
        assert_eq!(someone.problem(false).unwrap().0, "web.actions.enabled");
        assert_eq!(someone.problem(true), None);
    }

    #[test]
    fn people_are_allowed_by_name_or_group_and_tokens_by_name() {
        let allowed =
            actions("allowed: {users: [ana], groups: [platform], tokens: [deploy]}\n").allowed;
        assert!(allowed.has_person("ana", &[]));
        assert!(allowed.has_person("bo", &["dev".into(), "platform".into()]));
        assert!(!allowed.has_person("bo", &["dev".into()]));
        assert!(
            !allowed.has_person("deploy", &[]),
            "a token's name is not a person's"
        );
        assert!(allowed.has_token("deploy") && !allowed.has_token("ana"));
    }
}
