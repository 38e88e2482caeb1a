//! Who sees what (`web.scopes`). Absent, everyone who is let in sees the whole fleet. Present,
//! admins see everything, a team's members see its domains, and its objects on the clusters
//! its label selector picks in the namespaces it lists, and anyone else sees nothing.

use super::actions::Grantees;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScopesConfig {
    /// See everything, the audit trail included.
    #[serde(default)]
    pub admins: Grantees,
    #[serde(default)]
    pub teams: Vec<TeamScope>,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamScope {
    pub name: String,
    /// Who is on the team.
    pub members: Grantees,
    /// The domains the team sees (on its clusters).
    #[serde(default)]
    pub domains: Vec<String>,
    /// Cluster label selector (`ring: prod`); empty: every cluster.
    #[serde(default)]
    pub clusters: BTreeMap<String, String>,
    /// Namespaces whose objects the team sees; a trailing `*` matches any rest
    /// (`payments-*`). Empty: every namespace, cluster-scoped objects included.
    #[serde(default)]
    pub namespaces: Vec<String>,
}

impl ScopesConfig {
    /// A key and what is wrong, when the policy cannot mean what it says.
    pub fn problem(&self, identifies: bool, domains: &[&str]) -> Option<(String, String)> {
        if !identifies {
            return Some((
                "web.scopes".into(),
                "scopes need to know who is asking: configure web.auth (tokens, proxy or oidc)"
                    .into(),
            ));
        }
        if self.admins.is_empty() && self.teams.is_empty() {
            return Some((
                "web.scopes".into(),
                "scopes are configured but name no admins and no teams: nobody would see anything"
                    .into(),
            ));
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, team) in self.teams.iter().enumerate() {
            let key = format!("web.scopes.teams[{i}]");
            if team.name.trim().is_empty() || !names.insert(team.name.as_str()) {
                return Some((
                    format!("{key}.name"),
                    format!("{:?}: every team needs a name of its own", team.name),
                ));
            }
            if team.members.is_empty() {
                return Some((format!("{key}.members"), "names nobody".into()));
            }
            if let Some(unknown) = team.domains.iter().find(|d| !domains.contains(&d.as_str())) {
                return Some((
                    format!("{key}.domains"),
                    format!("no domain named {unknown:?} is configured"),
                ));
            }
            if let Some(bad) = team.namespaces.iter().find(|n| !valid_pattern(n)) {
                return Some((
                    format!("{key}.namespaces"),
                    format!("{bad:?} is not a namespace name, or one ending in *"),
                ));
            }
        }
        None
    }
}

/// A namespace name (lower-case letters, digits, `-`), optionally ending in `*`.
fn valid_pattern(pattern: &str) -> bool {
    let name = pattern.strip_suffix('*').unwrap_or(pattern);
    !pattern.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Whether `namespace` matches a pattern of [`TeamScope::namespaces`].
pub fn namespace_matches(pattern: &str, namespace: &str) -> bool {
    match pattern.strip_suffix('*') {
        // At least one more character, as SQL's `prefix_%` reads it.
        Some(prefix) => namespace.starts_with(prefix) && namespace.len() > prefix.len(),
        None => pattern == namespace,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scopes(yaml: &str) -> ScopesConfig {
        crate::yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn a_policy_must_name_someone_and_only_known_domains() {
        let team = "teams: [{name: pay, members: {groups: [pay]}, domains: [payments]}]";
        assert_eq!(scopes(team).problem(true, &["payments"]), None);
        assert_eq!(
            scopes(team).problem(false, &["payments"]).unwrap().0,
            "web.scopes"
        );
        let typo = scopes(team).problem(true, &["payment"]).unwrap();
        assert_eq!(typo.0, "web.scopes.teams[0].domains");
        assert!(typo.1.contains("\"payments\""), "{}", typo.1);
        assert_eq!(scopes("{}").problem(true, &[]).unwrap().0, "web.scopes");
        let twice = "teams: [{name: a, members: {users: [x]}}, {name: a, members: {users: [y]}}]";
        assert_eq!(
            scopes(twice).problem(true, &[]).unwrap().0,
            "web.scopes.teams[1].name"
        );
        let nobody = "teams: [{name: a, members: {}}]";
        assert_eq!(
            scopes(nobody).problem(true, &[]).unwrap().0,
            "web.scopes.teams[0].members"
        );
        let bad = "teams: [{name: a, members: {users: [x]}, namespaces: ['pay*ments']}]";
        assert_eq!(
            scopes(bad).problem(true, &[]).unwrap().0,
            "web.scopes.teams[0].namespaces"
        );
    }

    #[test]
    fn namespace_patterns_match_a_name_or_a_prefix() {
        assert!(namespace_matches("payments", "payments"));
        assert!(!namespace_matches("payments", "payments-db"));
        assert!(namespace_matches("payments-*", "payments-db"));
        assert!(!namespace_matches("payments-*", "payment"));
        assert!(!namespace_matches("payments-*", "payments-"));
        assert!(
            !namespace_matches("*", ""),
            "a cluster-scoped object is in no namespace"
        );
        assert!(namespace_matches("*", "anything"));
    }
}
