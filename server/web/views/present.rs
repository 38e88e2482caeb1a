//! How one object, one moment and one link are presented, the same on every page and in
//! every API response (the object fields are those of `fleetglass evaluate`).

use crate::health::cluster_of_cluster_id;
use crate::model::{Object, ObjectId, human};
use crate::store::{ObjectRecord, ObjectVerdict};
use chrono::{DateTime, Utc};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Serialize;

/// A time shown both ways: relative for reading, absolute UTC on hover and in `datetime`.
#[derive(Debug, Clone, PartialEq)]
pub struct Moment {
    pub iso: String,
    pub utc: String,
    /// "7d 2h", "38m": how long ago.
    pub ago: String,
}

impl Moment {
    pub fn new(at: DateTime<Utc>, now: DateTime<Utc>) -> Moment {
        Moment {
            iso: at.to_rfc3339(),
            utc: at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
            ago: human(now - at),
        }
    }

    pub fn of(at: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Option<Moment> {
        at.map(|at| Moment::new(at, now))
    }
}

/// What a page that refreshes itself needs: its own URL (path and query, to fetch again) and
/// when its data was read ("as of").
#[derive(Debug, Clone)]
pub struct Live {
    pub url: String,
    pub iso: String,
    pub utc: String,
    /// `HH:MM:SS`, the time of day in UTC.
    pub clock: String,
}

impl Live {
    pub fn new(uri: &axum::http::Uri, now: DateTime<Utc>) -> Live {
        Live {
            url: uri
                .path_and_query()
                .map_or_else(|| uri.path().to_string(), |p| p.as_str().to_string()),
            iso: now.to_rfc3339(),
            utc: now.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
            clock: now.format("%H:%M:%S").to_string(),
        }
    }
}

/// One object's verdict as every response shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ObjectItem {
    #[serde(flatten)]
    pub verdict: ObjectVerdict,
    pub root_causes: Vec<String>,
    pub domains: Vec<String>,
    pub updated_at: DateTime<Utc>,
    #[serde(skip)]
    pub href: String,
    #[serde(skip)]
    pub since_moment: Option<Moment>,
}

impl ObjectItem {
    pub fn new(record: &ObjectRecord, now: DateTime<Utc>) -> ObjectItem {
        let verdict = &record.verdict;
        ObjectItem {
            href: object_href(
                &verdict.cluster,
                &verdict.kind,
                &verdict.namespace,
                &verdict.name,
            ),
            since_moment: Moment::of(verdict.since, now),
            verdict: verdict.clone(),
            root_causes: serde_json::from_value(record.root_causes.clone()).unwrap_or_default(),
            domains: record.domains.clone(),
            updated_at: record.updated_at,
        }
    }

    /// `namespace/name`, or the name alone for cluster-scoped objects.
    pub fn short_name(&self) -> String {
        short_name(&self.verdict.namespace, &self.verdict.name)
    }

    /// The root causes other than the object itself.
    /// Its root causes other than itself, each linked to the cause's own page and to its
    /// chain on `/problems`.
    pub fn other_causes(&self) -> Vec<NamedCause> {
        self.root_causes
            .iter()
            .filter(|c| *c != self.verdict.id.as_str())
            .map(|id| NamedCause {
                href: href_of_id(id),
                chain_href: format!("/problems#{}", super::problems::anchor(id)),
                id: id.clone(),
            })
            .collect()
    }
}

/// A root cause named on another object's page.
pub struct NamedCause {
    pub id: String,
    /// The cause's own page (its object, or its cluster when the cluster is the cause).
    pub href: String,
    /// Its entry on `/problems`, with the chain from every object it affects.
    pub chain_href: String,
}

pub fn short_name(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

/// The slim object stored with a verdict, when it can be read back.
pub fn body_of(record: &ObjectRecord) -> Option<Object> {
    serde_json::from_value(record.body.clone()).ok()
}

/// `/objects/{cluster}/{kind}/{namespace}/{name}`, with `_` for the empty namespace of
/// cluster-scoped objects (a path segment cannot be empty).
pub fn object_href(cluster: &str, kind: &str, namespace: &str, name: &str) -> String {
    let namespace = if namespace.is_empty() { "_" } else { namespace };
    format!(
        "/objects/{}/{}/{}/{}",
        encode(cluster),
        encode(kind),
        encode(namespace),
        encode(name)
    )
}

/// The page for an id: an object page, or a cluster page for the cluster itself
/// (`cluster/Cluster//cluster`, the id the engine gives stale data).
pub fn href_of_id(id: &str) -> String {
    match ObjectId::split(id) {
        _ if let Some(cluster) = cluster_of_cluster_id(id) => {
            format!("/clusters/{}", encode(cluster))
        }
        Some((cluster, kind, namespace, name)) => object_href(cluster, kind, namespace, name),
        None => "/problems".to_string(),
    }
}

/// A readable label for an id: `Kind namespace/name`.
pub fn label_of_id(id: &str) -> String {
    match ObjectId::split(id) {
        _ if let Some(cluster) = cluster_of_cluster_id(id) => format!("cluster {cluster}"),
        Some((_, kind, namespace, name)) => format!("{kind} {}", short_name(namespace, name)),
        None => id.to_string(),
    }
}

/// What a URL component (path segment or query value) keeps unencoded: RFC 3986's unreserved
/// characters.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes one URL component (path segment or query value).
pub fn encode(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_use_underscore_for_cluster_scoped_objects_and_encode_parts() {
        assert_eq!(
            object_href("dev-1", "Namespace", "", "tenants"),
            "/objects/dev-1/Namespace/_/tenants"
        );
        assert_eq!(href_of_id("prod/Cluster//prod"), "/clusters/prod");
        assert_eq!(
            href_of_id("prod/Kustomization/gitops/apps"),
            "/objects/prod/Kustomization/gitops/apps"
        );
        assert_eq!(encode("ring=prod eu"), "ring%3Dprod%20eu");
        assert_eq!(
            label_of_id("c/HelmRelease/gw/gateway"),
            "HelmRelease gw/gateway"
        );
    }
}
