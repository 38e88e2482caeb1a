//! Where a Git source's revisions link to: the forges fleetglass knows by host (GitHub,
//! GitLab, Bitbucket, Codeberg, Azure DevOps) and, for self-hosted ones, rules in the config:
//! a host with its forge kind (`gitea`, `forgejo`, `gitlab`…) or with a URL template.

use serde::Deserialize;

/// One host's rule: exactly one of `forge` or `template`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommitLinkRule {
    /// The host as it appears in the GitRepository URL, e.g. `git.example.com`.
    pub host: String,
    /// How the forge at that host shapes commit URLs.
    #[serde(default)]
    pub forge: Option<Forge>,
    /// Any other forge: a URL with `{repo}` (the repository path, without `.git`), `{host}`
    /// and `{commit}`, e.g. `https://code.example.com/{repo}/+/{commit}`.
    #[serde(default)]
    pub template: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Forge {
    Github,
    Gitlab,
    Bitbucket,
    Gitea,
    Forgejo,
    AzureDevops,
}

impl CommitLinkRule {
    /// What is wrong with the rule, if anything.
    pub fn problem(&self) -> Option<String> {
        if self.host.trim().is_empty() || self.host.contains(['/', ' ', '@']) {
            return Some(format!("host {:?} must be a bare host name", self.host));
        }
        match (&self.forge, &self.template) {
            (Some(_), Some(_)) => Some("give forge or template, not both".into()),
            (None, None) => Some("give forge or template".into()),
            (None, Some(t)) if !(t.starts_with("https://") || t.starts_with("http://")) => Some(
                format!("template {t:?} must start with https:// or http://"),
            ),
            (None, Some(t)) if !t.contains("{commit}") => {
                Some(format!("template {t:?} must contain {{commit}}"))
            }
            _ => None,
        }
    }
}
