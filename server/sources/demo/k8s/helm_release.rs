//! helm-controller's HelmRelease: chart from a HelmRepository (via the HelmChart it creates) or a
//! chartRef to an OCIRepository, the Helm release history, and the Ready/Released conditions.

use super::meta::{Conditions, Meta, Truth, object, time};
use crate::sources::demo::hex::hex;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

pub const API_VERSION: &str = "helm.toolkit.fluxcd.io/v2";

#[derive(Debug, Clone, Copy)]
pub enum Chart<'a> {
    /// `spec.chart.spec`; helm-controller creates the HelmChart `<namespace>-<name>`.
    FromRepository {
        chart: &'a str,
        version: &'a str,
        repository: &'a str,
    },
    /// `spec.chartRef` to an OCIRepository in the release's namespace.
    FromOciRepository { repository: &'a str },
}

/// One Helm release revision as `status.history[]` records it.
#[derive(Debug, Clone, Copy)]
pub struct Release<'a> {
    pub chart: &'a str,
    /// As recorded: plain for repository charts, `<version>+<12 hex>` for OCI chartRefs.
    pub chart_version: &'a str,
    pub app_version: &'a str,
    /// The Helm release revision (`.v<n>`).
    pub revision: i64,
    pub deployed: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy)]
pub struct HelmReleaseState<'a> {
    pub current: Release<'a>,
    /// The superseded release before it; `None` means `current` was an install.
    pub previous: Option<Release<'a>>,
    /// A routine run that started at this time is in progress ("Fulfilling prerequisites").
    pub run_started: Option<DateTime<Utc>>,
}

fn history_entry(meta: &Meta, release: &Release, status: &str) -> Value {
    let seed = format!("{}/{}/{}", meta.namespace, meta.name, release.revision);
    json!({
        "name": meta.name,
        "namespace": meta.namespace,
        "version": release.revision,
        "status": status,
        "chartName": release.chart,
        "chartVersion": release.chart_version,
        "appVersion": release.app_version,
        "configDigest": format!("sha256:{}", hex(&format!("{seed}/config"), 64)),
        "digest": format!("sha256:{}", hex(&seed, 64)),
        "firstDeployed": time(release.deployed),
        "lastDeployed": time(release.deployed),
    })
}

pub fn helm_release(meta: &Meta, chart: Chart, state: &HelmReleaseState) -> Value {
    let mut spec = json!({
        "interval": "30m",
        "install": {"crds": "CreateReplace"},
        "upgrade": {"crds": "CreateReplace"},
    });
    match chart {
        Chart::FromRepository {
            chart,
            version,
            repository,
        } => {
            spec["chart"] = json!({"spec": {
                "chart": chart, "version": version, "interval": "10m",
                "sourceRef": {"kind": "HelmRepository", "name": repository, "namespace": meta.namespace},
            }});
        }
        Chart::FromOciRepository { repository } => {
            spec["chartRef"] =
                json!({"kind": "OCIRepository", "name": repository, "namespace": meta.namespace});
        }
    }
    let current = &state.current;
    let (action, reason) = match state.previous {
        Some(_) => ("upgrade", "UpgradeSucceeded"),
        None => ("install", "InstallSucceeded"),
    };
    let message = format!(
        "Helm {action} succeeded for release {}/{}.v{} with chart {}@{}",
        meta.namespace, meta.name, current.revision, current.chart, current.chart_version
    );
    let mut conditions = Conditions::observing(meta.generation)
        .with("Ready", Truth::True, reason, &message, current.deployed)
        .with("Released", Truth::True, reason, &message, current.deployed);
    if let Some(started) = state.run_started {
        // Every run starts like this while Ready keeps its old value.
        conditions = conditions.with(
            "Reconciling",
            Truth::True,
            "Progressing",
            "Fulfilling prerequisites",
            started,
        );
    }
    let mut history = vec![history_entry(meta, current, "deployed")];
    history.extend(
        state
            .previous
            .iter()
            .map(|p| history_entry(meta, p, "superseded")),
    );
    let mut status = json!({
        "observedGeneration": meta.generation,
        "lastAttemptedGeneration": meta.generation,
        "lastAttemptedRevision": current.chart_version,
        "lastAttemptedReleaseAction": action,
        "storageNamespace": meta.namespace,
    });
    status["lastAttemptedConfigDigest"] = history[0]["configDigest"].clone();
    status["history"] = Value::Array(history);
    status["conditions"] = conditions.into_json();
    if let Chart::FromRepository { .. } = chart {
        status["helmChart"] = Value::from(format!("{0}/{0}-{1}", meta.namespace, meta.name));
    }
    object(API_VERSION, "HelmRelease", meta, spec, Some(status))
}
