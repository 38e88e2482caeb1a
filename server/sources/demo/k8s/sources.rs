//! source-controller objects: GitRepository, OCIRepository, HelmRepository (HTTPS and OCI)
//! and HelmChart, each with a stored artifact and Ready conditions as the controller writes them.

use super::meta::{Conditions, Meta, Truth, object, time};
use crate::sources::demo::hex::{digest, hex};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};

const API_VERSION: &str = "source.toolkit.fluxcd.io/v1";

/// The artifact a source offers: its revision and when source-controller stored it.
#[derive(Debug, Clone)]
pub struct Artifact {
    pub revision: String,
    pub updated: DateTime<Utc>,
}

impl Artifact {
    pub fn new(revision: impl Into<String>, updated: DateTime<Utc>) -> Artifact {
        Artifact {
            revision: revision.into(),
            updated,
        }
    }
}

/// Status of a source that fetched its artifact fine: Ready and ArtifactInStorage both True.
fn stored(kind: &str, meta: &Meta, artifact: &Artifact, message: &str) -> Value {
    let file = hex(
        &format!(
            "{kind}/{}/{}/{}",
            meta.namespace, meta.name, artifact.revision
        ),
        40,
    );
    let path = format!(
        "{}/{}/{}/{file}.tar.gz",
        kind.to_lowercase(),
        meta.namespace,
        meta.name
    );
    // Ready has been True since shortly after the object was created; new revisions keep it True.
    let ready_since = meta.created + TimeDelta::seconds(20);
    let mut status = json!({
        "observedGeneration": meta.generation,
        "artifact": {
            "revision": artifact.revision,
            "digest": digest(&path),
            "lastUpdateTime": time(artifact.updated),
            "path": path,
            "url": format!("http://source-controller.flux-system.svc.cluster.local./{path}"),
        },
    });
    status["conditions"] = Conditions::observing(meta.generation)
        .with("Ready", Truth::True, "Succeeded", message, ready_since)
        .with(
            "ArtifactInStorage",
            Truth::True,
            "Succeeded",
            message,
            ready_since,
        )
        .into_json();
    status
}

pub fn git_repository(meta: &Meta, url: &str, artifact: &Artifact) -> Value {
    let spec = json!({"interval": "1m", "timeout": "60s", "url": url, "ref": {"branch": "main"}});
    let message = format!("stored artifact for revision '{}'", artifact.revision);
    let status = stored("GitRepository", meta, artifact, &message);
    object(API_VERSION, "GitRepository", meta, spec, Some(status))
}

pub fn oci_repository(meta: &Meta, url: &str, tag: &str, artifact: &Artifact) -> Value {
    let spec = json!({"interval": "5m", "timeout": "60s", "url": url, "ref": {"tag": tag}, "provider": "generic"});
    let message = format!("stored artifact for digest '{}'", artifact.revision);
    let status = stored("OCIRepository", meta, artifact, &message);
    object(API_VERSION, "OCIRepository", meta, spec, Some(status))
}

/// An HTTPS Helm repository: its artifact is the index, revision `sha256:<hex>`.
pub fn helm_repository(meta: &Meta, url: &str, artifact: &Artifact) -> Value {
    let spec = json!({"interval": "1h", "timeout": "60s", "url": url});
    let message = format!("stored artifact: revision '{}'", artifact.revision);
    let status = stored("HelmRepository", meta, artifact, &message);
    object(API_VERSION, "HelmRepository", meta, spec, Some(status))
}

/// An OCI Helm repository is only a pointer for HelmCharts: source-controller writes no status.
pub fn oci_helm_repository(meta: &Meta, url: &str) -> Value {
    let spec = json!({"type": "oci", "interval": "10m", "url": url});
    object(API_VERSION, "HelmRepository", meta, spec, None)
}

/// The HelmChart helm-controller creates for a HelmRelease; its artifact revision is the version.
pub fn helm_chart(
    meta: &Meta,
    chart: &str,
    version: &str,
    repository: &str,
    pulled: DateTime<Utc>,
) -> Value {
    let spec = json!({
        "chart": chart, "version": version, "interval": "10m", "reconcileStrategy": "ChartVersion",
        "sourceRef": {"kind": "HelmRepository", "name": repository},
    });
    let message = format!("pulled '{chart}' chart with version '{version}'");
    let mut status = stored("HelmChart", meta, &Artifact::new(version, pulled), &message);
    status["observedChartName"] = Value::from(chart);
    object(API_VERSION, "HelmChart", meta, spec, Some(status))
}
