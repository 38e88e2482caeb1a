//! source-controller's objects as the demo shows them: each source with a stored artifact and
//! Ready conditions as the controller writes them, and the artifact's digest, path and URL.

use crate::objects::{
    Artifact, Conditions, GitRepository, HelmChart, HelmRepository, Meta, OciRepository, Ref,
    SourceStatus, Storage, Truth,
};
use crate::sources::demo::hex::{digest, hex};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;

/// Status of a source that fetched its artifact fine: Ready and ArtifactInStorage both True.
fn stored(kind: &str, meta: &Meta, artifact: &Artifact, message: &str) -> Option<SourceStatus> {
    // Ready has been True since shortly after the object was created; new revisions keep it True.
    let ready_since = meta.created + TimeDelta::seconds(20);
    let conditions = Conditions::observing(meta.generation)
        .with("Ready", Truth::True, "Succeeded", message, ready_since)
        .with(
            "ArtifactInStorage",
            Truth::True,
            "Succeeded",
            message,
            ready_since,
        );
    Some(SourceStatus {
        observed_generation: meta.generation,
        artifact: Some(Artifact {
            storage: Some(storage(kind, meta, &artifact.revision)),
            ..artifact.clone()
        }),
        conditions: conditions.into_vec(),
    })
}

/// Where source-controller keeps the artifact: a file named after its revision.
fn storage(kind: &str, meta: &Meta, revision: &str) -> Storage {
    let file = hex(
        &format!("{kind}/{}/{}/{revision}", meta.namespace, meta.name),
        40,
    );
    let path = format!(
        "{}/{}/{}/{file}.tar.gz",
        kind.to_lowercase(),
        meta.namespace,
        meta.name
    );
    Storage {
        digest: digest(&path),
        url: format!("http://source-controller.flux-system.svc.cluster.local./{path}"),
        path,
    }
}

pub fn git_repository(meta: &Meta, url: &str, artifact: &Artifact) -> Value {
    let message = format!("stored artifact for revision '{}'", artifact.revision);
    let source = GitRepository {
        meta: meta.clone(),
        interval: "1m".into(),
        timeout: Some("60s".into()),
        url: url.into(),
        branch: Some("main".into()),
        status: stored("GitRepository", meta, artifact, &message),
    };
    source.to_json()
}

pub fn oci_repository(meta: &Meta, url: &str, tag: &str, artifact: &Artifact) -> Value {
    let message = format!("stored artifact for digest '{}'", artifact.revision);
    let source = OciRepository {
        meta: meta.clone(),
        interval: "5m".into(),
        timeout: Some("60s".into()),
        url: url.into(),
        tag: tag.into(),
        status: stored("OCIRepository", meta, artifact, &message),
    };
    let mut value = source.to_json();
    value["spec"]["provider"] = Value::from("generic");
    value
}

/// An HTTPS Helm repository: its artifact is the index, revision `sha256:<hex>`.
pub fn helm_repository(meta: &Meta, url: &str, artifact: &Artifact) -> Value {
    let message = format!("stored artifact: revision '{}'", artifact.revision);
    let source = HelmRepository {
        meta: meta.clone(),
        interval: "1h".into(),
        timeout: Some("60s".into()),
        url: url.into(),
        oci: false,
        status: stored("HelmRepository", meta, artifact, &message),
    };
    source.to_json()
}

/// An OCI Helm repository is only a pointer for HelmCharts: source-controller writes no status.
pub fn oci_helm_repository(meta: &Meta, url: &str) -> Value {
    HelmRepository {
        meta: meta.clone(),
        interval: "10m".into(),
        timeout: None,
        url: url.into(),
        oci: true,
        status: None,
    }
    .to_json()
}

/// The HelmChart helm-controller creates for a HelmRelease; its artifact revision is the version.
pub fn helm_chart(
    meta: &Meta,
    chart: &str,
    version: &str,
    repository: &str,
    pulled: DateTime<Utc>,
) -> Value {
    let message = format!("pulled '{chart}' chart with version '{version}'");
    let source = HelmChart {
        meta: meta.clone(),
        chart: chart.into(),
        version: version.into(),
        interval: "10m".into(),
        source: Ref::to("HelmRepository", repository),
        status: stored("HelmChart", meta, &Artifact::new(version, pulled), &message),
    };
    let mut value = source.to_json();
    value["spec"]["reconcileStrategy"] = Value::from("ChartVersion");
    value["status"]["observedChartName"] = Value::from(chart);
    value
}
