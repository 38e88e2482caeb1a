//! Safe actions on Flux objects, as the flux CLI performs them (flux2 `cmd/flux`): reconcile
//! now sets the `reconcile.fluxcd.io/requestedAt` annotation to the time (reconcile.go
//! `requestReconciliation`), suspend and resume set `spec.suspend` (suspend.go, resume.go),
//! each a merge patch. Only the Flux kinds that reconcile take them. The controller proves a
//! reconcile was taken by copying the annotation to `status.lastHandledReconcileAt`.

use crate::config::ClusterConfig;
use crate::model::Kind;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long the API server may take to answer.
pub const TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Reconcile,
    Suspend,
    Resume,
}

impl Action {
    pub const ALL: [Action; 3] = [Action::Reconcile, Action::Suspend, Action::Resume];

    pub fn named(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Reconcile => "reconcile",
            Action::Suspend => "suspend",
            Action::Resume => "resume",
        }
    }

    /// The merge patch, for a request made at `now`.
    pub fn patch(self, now: DateTime<Utc>) -> Value {
        match self {
            Action::Reconcile => json!({"metadata": {"annotations": {
                "reconcile.fluxcd.io/requestedAt": requested_at(now)
            }}}),
            Action::Suspend => json!({"spec": {"suspend": true}}),
            Action::Resume => json!({"spec": {"suspend": false}}),
        }
    }
}

/// The annotation's value for a request at `now` (RFC 3339 with nanoseconds, as Go's
/// `time.RFC3339Nano` writes it for the flux CLI).
pub fn requested_at(now: DateTime<Utc>) -> String {
    now.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// The kinds a Flux controller reconciles on request: Kustomizations, HelmReleases and sources.
pub fn takes_actions(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Kustomization
            | Kind::HelmRelease
            | Kind::GitRepository
            | Kind::OCIRepository
            | Kind::HelmRepository
            | Kind::HelmChart
            | Kind::Bucket
    )
}

/// Why an action was not carried out, in words for the page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    #[error(
        "fleetglass may not change {kind} objects on {cluster} (patch is forbidden): grant it with the fleetglass-reader chart's actions: true"
    )]
    Forbidden { cluster: String, kind: Kind },
    #[error("no cluster named {0:?} is configured")]
    UnknownCluster(String),
    #[error("{0} takes no actions (only Kustomizations, HelmReleases and sources do)")]
    NotActionable(Kind),
    #[error("{cluster} has no such object any more: {problem}")]
    Gone { cluster: String, problem: String },
    #[error("{cluster} did not answer within {seconds} s", seconds = TIMEOUT.as_secs())]
    TimedOut { cluster: String },
    #[error("{cluster}: {problem}")]
    Failed { cluster: String, problem: String },
}

/// The object an action is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target<'a> {
    pub cluster: &'a str,
    pub kind: Kind,
    /// As the collector read it (`kustomize.toolkit.fluxcd.io/v1`).
    pub api_version: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

/// Where actions go: the configured clusters' API servers.
pub struct Actuator {
    clusters: BTreeMap<String, ClusterConfig>,
}

impl Actuator {
    pub fn new(clusters: impl IntoIterator<Item = ClusterConfig>) -> Actuator {
        let clusters = clusters.into_iter().map(|c| (c.name.clone(), c)).collect();
        Actuator { clusters }
    }

    /// Patches the object; bounded by [`TIMEOUT`].
    pub async fn act(
        &self,
        target: &Target<'_>,
        action: Action,
        now: DateTime<Utc>,
    ) -> Result<(), ActionError> {
        if !takes_actions(target.kind) {
            return Err(ActionError::NotActionable(target.kind));
        }
        let cluster = self
            .clusters
            .get(target.cluster)
            .ok_or_else(|| ActionError::UnknownCluster(target.cluster.to_string()))?;
        let patch = action.patch(now);
        tokio::time::timeout(TIMEOUT, super::kube::patch_object(cluster, target, &patch))
            .await
            .map_err(|_| ActionError::TimedOut {
                cluster: target.cluster.to_string(),
            })?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patches_are_the_flux_clis() {
        let now = DateTime::parse_from_rfc3339("2026-12-07T07:00:00.000000042Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            Action::Reconcile.patch(now),
            json!({"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": "2026-12-07T07:00:00.000000042Z"}}})
        );
        assert_eq!(
            Action::Suspend.patch(now),
            json!({"spec": {"suspend": true}})
        );
        assert_eq!(
            Action::Resume.patch(now),
            json!({"spec": {"suspend": false}})
        );
        for action in Action::ALL {
            assert_eq!(Action::named(action.as_str()), Some(action));
        }
        assert_eq!(Action::named("delete"), None);
    }

    #[test]
    fn only_reconciled_flux_kinds_take_actions() {
        assert!(takes_actions(Kind::Kustomization) && takes_actions(Kind::HelmRelease));
        assert!(takes_actions(Kind::GitRepository) && takes_actions(Kind::Bucket));
        assert!(!takes_actions(Kind::Deployment) && !takes_actions(Kind::Pod));
    }
}
