//! The hint on `/` for someone who has not written a domain yet: what a domain is for, and a
//! config block to start from, one domain per top-level Kustomization the clusters hold.

use crate::model::Kind;
use crate::store::{Store, SuggestedDomain};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// How long a loaded hint is shown before it is read again.
const HINT_REUSED_FOR: Duration = Duration::from_secs(60);

/// The hint as last loaded, and when.
pub type HintCache = Mutex<Option<(Instant, DomainHint)>>;

#[derive(Debug, Clone)]
pub struct DomainHint {
    pub suggestions: Vec<SuggestedDomain>,
    /// A `domains:` block for the config file, ready to edit.
    pub yaml: String,
}

impl DomainHint {
    async fn load(store: &Store) -> Result<DomainHint, sqlx::Error> {
        Ok(DomainHint::from_suggestions(
            store.suggested_domains().await?,
        ))
    }

    /// The hint as `cache` holds it while younger than [`HINT_REUSED_FOR`] at `now`, else
    /// loaded afresh (one load at a time) and kept. Loading parses every Kustomization's
    /// stored body, a third of a second at 100,000 of them; a suggestion a minute old serves
    /// as well.
    pub async fn cached(
        cache: &HintCache,
        store: &Store,
        now: Instant,
    ) -> Result<DomainHint, sqlx::Error> {
        let mut held = cache.lock().await;
        if let Some((loaded, hint)) = held.as_ref()
            && now.saturating_duration_since(*loaded) < HINT_REUSED_FOR
        {
            return Ok(hint.clone());
        }
        let hint = DomainHint::load(store).await?;
        *held = Some((now, hint.clone()));
        Ok(hint)
    }

    pub fn from_suggestions(suggestions: Vec<SuggestedDomain>) -> DomainHint {
        let mut yaml = String::from("domains:\n");
        for s in &suggestions {
            yaml.push_str(&format!(
                "  - name: {}\n    select: {{root: {}/{}}}\n",
                domain_name(s, &suggestions),
                s.namespace,
                s.name
            ));
            match source_of(s) {
                Some((kind, namespace, name)) => yaml.push_str(&format!(
                    "    version: {{from: source_revision, kind: {kind}, namespace: {namespace}, name: {name}}}\n"
                )),
                None => yaml.push_str(
                    "    # version: {from: chart_version, namespace: …, name: …} (where its version is read)\n",
                ),
            }
        }
        DomainHint { suggestions, yaml }
    }
}

/// The Kustomization's name, or namespace-name when another suggestion has the same name (domain
/// names must be unique).
fn domain_name(s: &SuggestedDomain, all: &[SuggestedDomain]) -> String {
    if all.iter().filter(|o| o.name == s.name).count() > 1 {
        format!("{}-{}", s.namespace, s.name)
    } else {
        s.name.clone()
    }
}

/// The Kustomization's source, when it is a kind a domain's version can be read from.
fn source_of(s: &SuggestedDomain) -> Option<(Kind, &str, &str)> {
    let kind = s.source_kind.as_deref()?.parse::<Kind>().ok()?;
    Some((
        kind,
        s.source_namespace.as_deref()?,
        s.source_name.as_deref()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suggestion(name: &str, source: Option<&str>) -> SuggestedDomain {
        SuggestedDomain {
            namespace: "gitops".into(),
            name: name.into(),
            clusters: 3,
            source_kind: source.map(String::from),
            source_namespace: source.map(|_| "gitops".into()),
            source_name: source.map(|_| "fleet".into()),
        }
    }

    #[test]
    fn the_suggested_block_is_a_config_fleetglass_accepts() {
        let hint = DomainHint::from_suggestions(vec![
            suggestion("apps", Some("GitRepository")),
            suggestion("infrastructure", Some("OCIRepository")),
        ]);
        let config = crate::config::from_yaml_str(&hint.yaml).unwrap();
        let names: Vec<&str> = config.domains.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["apps", "infrastructure"]);
        assert_eq!(
            config.domains[0].select.root.as_deref(),
            Some("gitops/apps")
        );
    }

    #[test]
    fn kustomizations_of_one_name_in_several_namespaces_get_distinct_domains() {
        let mut other = suggestion("apps", Some("GitRepository"));
        other.namespace = "team-b".into();
        let hint =
            DomainHint::from_suggestions(vec![suggestion("apps", Some("GitRepository")), other]);
        let config = crate::config::from_yaml_str(&hint.yaml).unwrap();
        let names: Vec<&str> = config.domains.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["gitops-apps", "team-b-apps"]);
    }

    #[test]
    fn a_source_no_version_can_come_from_is_left_to_the_user() {
        // a kind fleetglass does not read
        let hint = DomainHint::from_suggestions(vec![suggestion("apps", Some("SnapshotArtifact"))]);
        assert!(hint.yaml.contains("# version:"), "{}", hint.yaml);
        // an ExternalArtifact is a source like the others: its revision is the version
        let hint = DomainHint::from_suggestions(vec![suggestion("apps", Some("ExternalArtifact"))]);
        assert!(
            hint.yaml.contains(
                "version: {from: source_revision, kind: ExternalArtifact, namespace: gitops, name: fleet}"
            ),
            "{}",
            hint.yaml
        );
    }
}
