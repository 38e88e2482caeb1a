//! What the engine is given besides the objects: clusters and their freshness, thresholds,
//! and the domains to roll up. Config files deserialize straight into these types.

use crate::model::{Kind, ObjectId, serde_go};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What the engine knows about one cluster's data. Absent for a cluster = evidence is fresh
/// (the `evaluate` command reads files, which have no age). Present without `input`, it is
/// what a collector knows: until `last_good` is set the cluster's first full list has not
/// completed, and nothing of it is evidence yet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterInfo {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// When the cluster's data was last known good (watch alive, re-list succeeded).
    pub last_good: Option<DateTime<Utc>>,
    /// The error that stopped collection, e.g. "connection refused", "401 Unauthorized".
    pub error: Option<String>,
    /// Kinds the collector cannot read on this cluster, with why (e.g. RBAC Forbidden).
    pub kind_errors: BTreeMap<Kind, String>,
    /// Kinds whose first list has begun but not completed: what is held of them is partial,
    /// so neither their objects nor the absence of one is evidence yet.
    pub unlisted: BTreeSet<Kind>,
    /// Who provided each CRD the last time it was seen (history kept by the collector).
    pub former_crd_providers: Vec<FormerCrdProvider>,
    /// Set when the objects were read from files (`evaluate`), not listed by the collector.
    pub input: Option<InputEvidence>,
}

/// What files given to `evaluate` hold. The collector lists every kind it can read, so an
/// object it did not see is absent; an input holds only what the user put in it, so absence
/// is evidence only for the kinds it covers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputEvidence {
    /// The kinds the input holds at least one object of.
    pub kinds: BTreeSet<Kind>,
    /// Objects the input gives more than once with different contents: where each copy is.
    pub conflicting: HashMap<ObjectId, Vec<String>>,
}

/// A CRD's provider as last seen, so a consumer of a vanished CRD can name who removed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormerCrdProvider {
    pub group: String,
    pub kind: String,
    pub crd: String,
    pub provider: crate::model::ObjectId,
    pub last_seen: DateTime<Utc>,
}

/// Time limits; every in-progress state becomes `stuck` (or `stale`) past its threshold.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Thresholds {
    /// Minimum time an object may be in progress before it is `stuck`; the effective
    /// threshold is the larger of this and twice the object's effective `spec.timeout`.
    #[serde(with = "serde_go")]
    #[schemars(with = "crate::model::GoDuration")]
    pub stuck_after: TimeDelta,
    /// Per-kind overrides of `stuck_after` (e.g. `HelmRelease: 30m`).
    #[serde(deserialize_with = "kind_durations")]
    #[schemars(with = "BTreeMap<String, crate::model::GoDuration>")]
    pub by_kind: BTreeMap<Kind, TimeDelta>,
    /// A cluster whose data is older than this is `unverifiable`.
    #[serde(with = "serde_go")]
    #[schemars(with = "crate::model::GoDuration")]
    pub freshness: TimeDelta,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            stuck_after: TimeDelta::minutes(15),
            by_kind: BTreeMap::new(),
            freshness: TimeDelta::minutes(2),
        }
    }
}

fn kind_durations<'de, D: serde::Deserializer<'de>>(
    de: D,
) -> Result<BTreeMap<Kind, TimeDelta>, D::Error> {
    let raw = BTreeMap::<String, String>::deserialize(de)?;
    raw.into_iter()
        .map(|(kind, text)| {
            let kind: Kind = kind.parse().map_err(serde::de::Error::custom)?;
            let duration =
                crate::model::parse_go_duration(&text).map_err(serde::de::Error::custom)?;
            Ok((kind, duration))
        })
        .collect()
}

/// A capability deployed across the fleet: which objects, on which clusters, and where its
/// version is read from.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DomainSpec {
    pub name: String,
    /// Which Flux objects belong to the domain (any of the three ways; at least one).
    #[serde(default)]
    pub select: Selection,
    /// Cluster label selector (`ring: prod`); empty selects every cluster.
    #[serde(default)]
    pub clusters: BTreeMap<String, String>,
    pub version: VersionSource,
    /// Overrides the global thresholds for the domain's objects.
    #[serde(default, with = "serde_go::option")]
    #[schemars(with = "Option<crate::model::GoDuration>")]
    pub stuck_after: Option<TimeDelta>,
    /// Who owns the domain (a team or a person), shown with its problems and alerts; like
    /// `runbook` and `slack_channel`, for people only: the engine never reads them.
    #[serde(default)]
    pub owner: Option<String>,
    /// The runbook's URL (http or https).
    #[serde(default)]
    pub runbook: Option<String>,
    /// The Slack channel to ask in, e.g. `#team-gateway`.
    #[serde(default)]
    pub slack_channel: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Selection {
    /// Flux-object label selector (matchLabels semantics).
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// A root Kustomization (`namespace/name`): it and every Flux object it applied, recursively.
    #[serde(default)]
    pub root: Option<String>,
    /// Every Flux object in these namespaces.
    #[serde(default)]
    pub namespaces: Vec<String>,
}

impl Selection {
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.root.is_none() && self.namespaces.is_empty()
    }
}

/// Where a domain's version is read from, on each cluster.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case", tag = "from")]
pub enum VersionSource {
    /// The revision of a source's artifact: `main@sha1:…` is shown as the short SHA,
    /// `v1.4.2@sha256:…` as the tag.
    SourceRevision {
        kind: Kind,
        namespace: String,
        name: String,
    },
    /// The chart version of a HelmRelease's newest release.
    ChartVersion { namespace: String, name: String },
    /// The image tag of a workload's first container.
    ImageTag {
        kind: Kind,
        namespace: String,
        name: String,
    },
}
