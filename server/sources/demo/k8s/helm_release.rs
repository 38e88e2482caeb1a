//! helm-controller's HelmRelease: chart from a HelmRepository (via the HelmChart it creates) or a
//! chartRef to an OCIRepository, the Helm release history, and the Ready/Released conditions.

use crate::objects::{
    ChartSource, Conditions, HelmRelease, HelmReleaseStatus, HistoryEntry, Meta, Ref, Truth, time,
};
use crate::sources::demo::hex::hex;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

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

impl Release<'_> {
    fn entry(&self, status: &str) -> HistoryEntry {
        HistoryEntry {
            chart_name: self.chart.into(),
            chart_version: self.chart_version.into(),
            app_version: Some(self.app_version.into()),
            status: status.into(),
            version: self.revision,
        }
    }

    /// What helm-controller records beside the entry: the release's identity, digests and
    /// deploy times.
    fn details(&self, meta: &Meta) -> Value {
        let seed = format!("{}/{}/{}", meta.namespace, meta.name, self.revision);
        json!({
            "name": meta.name,
            "namespace": meta.namespace,
            "configDigest": format!("sha256:{}", hex(&format!("{seed}/config"), 64)),
            "digest": format!("sha256:{}", hex(&seed, 64)),
            "firstDeployed": time(self.deployed),
            "lastDeployed": time(self.deployed),
        })
    }
}

pub fn helm_release(meta: &Meta, chart: Chart, state: &HelmReleaseState) -> Value {
    let chart_source = match chart {
        Chart::FromRepository {
            chart,
            version,
            repository,
        } => ChartSource::Template {
            chart: chart.into(),
            version: Some(version.into()),
            interval: Some("10m".into()),
            source: Ref::to("HelmRepository", repository).in_namespace(&meta.namespace),
        },
        Chart::FromOciRepository { repository } => {
            ChartSource::Ref(Ref::to("OCIRepository", repository).in_namespace(&meta.namespace))
        }
    };
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
    let mut releases = vec![(current, "deployed")];
    releases.extend(state.previous.iter().map(|p| (p, "superseded")));
    let helm_chart = match chart {
        Chart::FromRepository { .. } => Some(format!("{0}/{0}-{1}", meta.namespace, meta.name)),
        Chart::FromOciRepository { .. } => None,
    };
    let release = HelmRelease {
        meta: meta.clone(),
        interval: "30m".into(),
        chart: chart_source,
        status: Some(HelmReleaseStatus {
            observed_generation: meta.generation,
            helm_chart,
            last_attempted_revision: Some(current.chart_version.into()),
            history: releases.iter().map(|(r, status)| r.entry(status)).collect(),
            conditions: conditions.into_vec(),
        }),
    };
    let mut value = release.to_json();
    value["spec"]["install"] = json!({"crds": "CreateReplace"});
    value["spec"]["upgrade"] = json!({"crds": "CreateReplace"});
    for (entry, (release, _)) in value["status"]["history"]
        .as_array_mut()
        .into_iter()
        .flatten()
        .zip(&releases)
    {
        merge(entry, release.details(meta));
    }
    let status = &mut value["status"];
    status["lastAttemptedGeneration"] = Value::from(meta.generation);
    status["lastAttemptedReleaseAction"] = Value::from(action);
    status["storageNamespace"] = Value::from(meta.namespace.as_str());
    status["lastAttemptedConfigDigest"] = status["history"][0]["configDigest"].clone();
    value
}

/// Adds `extra`'s fields to the object `into`.
fn merge(into: &mut Value, extra: Value) {
    if let (Some(into), Value::Object(extra)) = (into.as_object_mut(), extra) {
        into.extend(extra);
    }
}
