//! "If this stack goes, what breaks?": for a Flux object, everything its inventory provides
//! that other Flux objects consume (CRDs, Namespaces), with those consumers and their states,
//! per cluster — on one cluster, or on every cluster of a domain. Objects it shares with other
//! providers are listed as co-ownership warnings.

use super::present::ObjectItem;
use crate::model::{Kind, ObjectId};
use crate::store::{DependencyRow, Store};
use crate::web::error::ApiError;
use crate::web::freshness::Freshness;
use crate::web::scope::Scope;
use crate::web::state::Site;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ImpactView {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// The domain whose clusters were searched, when asked by domain.
    pub domain: Option<String>,
    pub clusters: Vec<ClusterImpact>,
    /// Distinct consumers across all clusters: 0 means nothing else depends on this stack,
    /// but only when `unverified` is empty.
    pub consumers_total: usize,
    /// Clusters searched whose data cannot be trusted now (stale, unreachable, not listed
    /// yet), with why: what depends on the stack there is not known.
    pub unverified: Vec<Unverified>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Unverified {
    pub cluster: String,
    pub reason: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ClusterImpact {
    pub cluster: String,
    /// The stack itself on this cluster (None when it is not there).
    pub provider: Option<ObjectItem>,
    pub provides: Vec<Provided>,
    pub co_owned: Vec<CoOwned>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Provided {
    /// `CustomResourceDefinition.apiextensions.k8s.io/<name>` or `Namespace/<name>`.
    pub object: String,
    pub consumers: Vec<ObjectItem>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CoOwned {
    pub object: String,
    /// The other Flux objects whose inventories hold it too.
    pub also_held_by: Vec<String>,
}

impl ImpactView {
    /// What depends on the stack on each of `clusters`. Absence is never an answer: a cluster
    /// fleetglass does not know, or a stack on none of the clusters, is a 404, never "nothing
    /// depends on it".
    ///
    /// Under a team scope the stack must be in it (else not found, in the same words), and its
    /// impact is told only when every consumer is in it too: a list without the others could
    /// read "nothing else depends on it" when something does, so it is refused instead.
    pub async fn load(
        store: &Store,
        site: &Site,
        scope: &Scope,
        clusters: &[String],
        (kind, namespace, name): (Kind, &str, &str),
        domain: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<ImpactView, ApiError> {
        let (freshness, mut known) = Freshness::load(store, site, now).await?;
        known.retain(|k| scope.sees_cluster(&k.name));
        if let Some(unknown) = clusters
            .iter()
            .find(|c| !known.iter().any(|k| k.name == **c))
        {
            return Err(ApiError::NotFound(format!("no cluster named {unknown:?}")));
        }
        let place = match &domain {
            Some(domain) => format!("any cluster of domain {domain:?}"),
            None => format!("cluster {:?}", clusters.join(", ")),
        };
        let missing = || ApiError::NotFound(format!("no {kind} {namespace}/{name} on {place}"));
        if clusters.iter().any(|c| !scope.sees_object(c, namespace)) {
            return Err(missing());
        }
        let mut impacts = Vec::new();
        let mut consumers_total = std::collections::BTreeSet::new();
        for cluster in clusters {
            let provider_id = ObjectId::new(cluster, kind, namespace, name).into_string();
            let provider = freshness.records(
                store
                    .objects_by_ids(std::slice::from_ref(&provider_id))
                    .await?,
            );
            let edges = store.dependencies_of(&provider_id).await?;
            let consumer_ids: Vec<String> = edges.iter().map(|e| e.consumer.clone()).collect();
            let consumers: BTreeMap<String, ObjectItem> = freshness
                .records(store.objects_by_ids(&consumer_ids).await?)
                .iter()
                .map(|r| {
                    let item = ObjectItem::new(r, now);
                    (item.verdict.id.to_string(), item)
                })
                .collect();
            consumers_total.extend(consumer_ids);
            let co_owned = store
                .co_ownerships_with(&provider_id)
                .await?
                .into_iter()
                .map(|(object, holders)| CoOwned {
                    object,
                    also_held_by: serde_json::from_value::<Vec<String>>(holders)
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|h| *h != provider_id)
                        .collect(),
                })
                .collect();
            impacts.push(ClusterImpact {
                cluster: cluster.clone(),
                provider: provider.first().map(|r| ObjectItem::new(r, now)),
                provides: group(&edges, &consumers),
                co_owned,
            });
        }
        let unverified: Vec<Unverified> = clusters
            .iter()
            .filter_map(|cluster| {
                Some(Unverified {
                    cluster: cluster.clone(),
                    reason: freshness.of(cluster)?.reason.clone(),
                })
            })
            .collect();
        let found = impacts.iter().any(|i| i.provider.is_some());
        if !found && unverified.is_empty() {
            return Err(missing());
        }
        let outside = impacts.iter().any(|i| {
            let consumers = i.provides.iter().flat_map(|p| &p.consumers);
            let holders = i.co_owned.iter().flat_map(|c| &c.also_held_by);
            consumers
                .clone()
                .any(|c| !scope.sees_id(c.verdict.id.as_str()))
                || holders.clone().any(|h| !scope.sees_id(h))
        });
        if outside || consumers_total.iter().any(|id| !scope.sees_id(id)) {
            return Err(ApiError::Forbidden(format!(
                "{kind} {namespace}/{name} is used by objects outside your scope: only an admin \
                 sees its whole impact"
            )));
        }
        Ok(ImpactView {
            kind: kind.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            domain,
            clusters: impacts,
            consumers_total: consumers_total.len(),
            unverified,
        })
    }
}

/// Edges grouped by what is provided; a consumer the store no longer holds is left out.
fn group(edges: &[DependencyRow], consumers: &BTreeMap<String, ObjectItem>) -> Vec<Provided> {
    let mut by_object: BTreeMap<&str, Vec<ObjectItem>> = BTreeMap::new();
    for edge in edges {
        if let Some(item) = consumers.get(&edge.consumer) {
            by_object
                .entry(&edge.object)
                .or_default()
                .push(item.clone());
        }
    }
    by_object
        .into_iter()
        .map(|(object, consumers)| Provided {
            object: object.to_string(),
            consumers,
        })
        .collect()
}
