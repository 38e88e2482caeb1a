//! source-controller's kinds: GitRepository, OCIRepository, HelmRepository and HelmChart, with
//! the status they share (observed generation, stored artifact, conditions).

use super::meta::{Meta, Truth, condition, object, time};
use super::reference::Ref;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

pub const API_VERSION: &str = "source.toolkit.fluxcd.io/v1";

/// The artifact a source offers: its revision and when source-controller stored it.
#[derive(Debug, Clone)]
pub struct Artifact {
    pub revision: String,
    pub updated: Option<DateTime<Utc>>,
    /// Not read by the engine, but the CRDs require it of a status an API server accepts.
    pub storage: Option<Storage>,
}

/// Where source-controller keeps an artifact.
#[derive(Debug, Clone)]
pub struct Storage {
    pub path: String,
    pub url: String,
    pub digest: String,
}

impl Artifact {
    pub fn new(revision: impl Into<String>, updated: DateTime<Utc>) -> Artifact {
        Artifact {
            revision: revision.into(),
            updated: Some(updated),
            storage: None,
        }
    }

    /// An artifact whose status records no update time.
    pub fn revision(revision: impl Into<String>) -> Artifact {
        Artifact {
            revision: revision.into(),
            updated: None,
            storage: None,
        }
    }

    fn to_json(&self) -> Value {
        let mut artifact = json!({"revision": self.revision});
        if let Some(updated) = self.updated {
            artifact["lastUpdateTime"] = Value::from(time(updated));
        }
        if let Some(storage) = &self.storage {
            artifact["path"] = Value::from(storage.path.as_str());
            artifact["url"] = Value::from(storage.url.as_str());
            artifact["digest"] = Value::from(storage.digest.as_str());
        }
        artifact
    }
}

#[derive(Debug, Clone)]
pub struct SourceStatus {
    pub observed_generation: i64,
    pub artifact: Option<Artifact>,
    pub conditions: Vec<Value>,
}

impl SourceStatus {
    /// Ready at generation 1, serving `revision` since `at`.
    pub fn serving(revision: &str, at: DateTime<Utc>) -> SourceStatus {
        SourceStatus {
            observed_generation: 1,
            artifact: Some(Artifact::revision(revision)),
            conditions: vec![condition(
                "Ready",
                Truth::True,
                "Succeeded",
                &format!("stored artifact for revision '{revision}'"),
                at,
                None,
            )],
        }
    }

    fn to_json(&self) -> Value {
        let mut status = json!({"observedGeneration": self.observed_generation});
        if let Some(artifact) = &self.artifact {
            status["artifact"] = artifact.to_json();
        }
        status["conditions"] = Value::Array(self.conditions.clone());
        status
    }
}

fn source(kind: &str, meta: &Meta, spec: Value, status: &Option<SourceStatus>) -> Value {
    object(
        API_VERSION,
        kind,
        meta,
        spec,
        status.as_ref().map(SourceStatus::to_json),
    )
}

fn with_timeout(mut spec: Value, timeout: &Option<String>) -> Value {
    if let Some(timeout) = timeout {
        spec["timeout"] = Value::from(timeout.as_str());
    }
    spec
}

#[derive(Debug, Clone)]
pub struct GitRepository {
    pub meta: Meta,
    pub interval: String,
    pub timeout: Option<String>,
    pub url: String,
    /// `ref.branch`; None leaves `ref` out (source-controller then takes the default branch).
    pub branch: Option<String>,
    pub status: Option<SourceStatus>,
}

impl GitRepository {
    /// A repository followed on its `main` branch every 5 minutes, with no status yet.
    pub fn on_main(meta: Meta, url: &str) -> GitRepository {
        GitRepository {
            meta,
            interval: "5m".into(),
            timeout: None,
            url: url.into(),
            branch: Some("main".into()),
            status: None,
        }
    }

    pub fn to_json(&self) -> Value {
        let mut spec = json!({"interval": self.interval, "url": self.url});
        if let Some(branch) = &self.branch {
            spec["ref"] = json!({"branch": branch});
        }
        let spec = with_timeout(spec, &self.timeout);
        source("GitRepository", &self.meta, spec, &self.status)
    }
}

#[derive(Debug, Clone)]
pub struct OciRepository {
    pub meta: Meta,
    pub interval: String,
    pub timeout: Option<String>,
    pub url: String,
    pub tag: String,
    pub status: Option<SourceStatus>,
}

impl OciRepository {
    pub fn to_json(&self) -> Value {
        let spec = json!({"interval": self.interval, "url": self.url, "ref": {"tag": self.tag}});
        let spec = with_timeout(spec, &self.timeout);
        source("OCIRepository", &self.meta, spec, &self.status)
    }
}

#[derive(Debug, Clone)]
pub struct HelmRepository {
    pub meta: Meta,
    pub interval: String,
    pub timeout: Option<String>,
    pub url: String,
    /// `type: oci`: only a pointer for HelmCharts, which source-controller never reconciles.
    pub oci: bool,
    pub status: Option<SourceStatus>,
}

impl HelmRepository {
    pub fn to_json(&self) -> Value {
        let mut spec = json!({"interval": self.interval, "url": self.url});
        if self.oci {
            spec["type"] = Value::from("oci");
        }
        let spec = with_timeout(spec, &self.timeout);
        source("HelmRepository", &self.meta, spec, &self.status)
    }
}

/// The HelmChart helm-controller creates for a HelmRelease (`<namespace>-<name>`).
#[derive(Debug, Clone)]
pub struct HelmChart {
    pub meta: Meta,
    pub chart: String,
    pub version: String,
    pub interval: String,
    pub source: Ref,
    pub status: Option<SourceStatus>,
}

impl HelmChart {
    pub fn to_json(&self) -> Value {
        let spec = json!({"chart": self.chart, "version": self.version, "interval": self.interval,
                          "sourceRef": self.source.to_json()});
        source("HelmChart", &self.meta, spec, &self.status)
    }
}
