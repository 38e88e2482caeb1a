//! One cluster: how fresh its data is, its Flux controllers (those the engine matched, in
//! whatever namespace) and whether they run, its objects by state, and the dependsOn tree of
//! its Kustomizations and HelmReleases (the engine's dependsOn edges).

use super::present::{Moment, ObjectItem, body_of, encode};
use crate::health::{EdgeKind, State, StateCounts};
use crate::model::{CONTROLLER_NAMES, Kind, controller_of_deployment};
use crate::store::{Linked, ObjectRecord, Store};
use crate::web::error::ApiError;
use crate::web::freshness::Freshness;
use crate::web::scope::Scope;
use crate::web::state::Site;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ClusterDetail {
    pub name: String,
    #[schema(value_type = BTreeMap<String, String>)]
    pub labels: serde_json::Value,
    pub fresh: bool,
    pub last_good: Option<DateTime<Utc>>,
    pub error: Option<String>,
    /// Kinds that could not be listed or watched, with the error.
    #[schema(value_type = BTreeMap<String, String>)]
    pub kind_errors: serde_json::Value,
    #[schema(value_type = BTreeMap<String, u64>)]
    pub state_counts: StateCounts,
    pub controllers: Vec<Controller>,
    pub tree: Vec<TreeNode>,
    #[serde(skip)]
    pub last_good_moment: Option<Moment>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Controller {
    pub controller: String,
    pub deployment: String,
    /// None when no Deployment of that name was seen.
    pub object: Option<ObjectItem>,
    pub ready: Option<String>,
}

/// One line of the dependsOn tree: an object and how deep it sits.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TreeNode {
    pub depth: usize,
    pub object: ObjectItem,
    /// Already shown higher up (a diamond or a cycle): not expanded again.
    pub repeated: bool,
    #[serde(skip)]
    pub depth_class: String,
}

impl ClusterDetail {
    /// The cluster as `scope` sees it: its own totals and objects, the controllers it sees;
    /// a cluster outside it is not found, in the words of one that does not exist.
    pub async fn load(
        store: &Store,
        site: &Site,
        scope: &Scope,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<ClusterDetail, ApiError> {
        let not_found = || ApiError::NotFound(format!("no cluster named {name:?}"));
        if !scope.sees_cluster(name) {
            return Err(not_found());
        }
        let rows = scope
            .clusters(store, store.clusters().await?, false)
            .await?;
        let (freshness, rows) = Freshness::judge(site, rows, now);
        let row = rows
            .into_iter()
            .find(|row| row.name == name)
            .ok_or_else(not_found)?;
        let mut records = store
            .objects_of_kinds(name, &["Kustomization", "HelmRelease"])
            .await?;
        records.retain(|r| scope.sees_id(r.verdict.id.as_str()));
        let records = freshness.records(records);
        let mut linked = store.controllers(name).await?;
        linked.retain(|l| scope.sees_id(l.id.as_str()));
        let controllers = controllers(&linked, now);
        let fresh = freshness.is_fresh(name);
        Ok(ClusterDetail {
            controllers,
            tree: tree(&records, now)
                .into_iter()
                .map(|mut node| {
                    node.object = scope.item(node.object);
                    node
                })
                .collect(),
            state_counts: row.state_counts,
            last_good_moment: Moment::of(row.last_good, now),
            name: row.name,
            labels: row.labels,
            fresh,
            last_good: row.last_good,
            error: row.error,
            kind_errors: row.kind_errors,
        })
    }

    /// Counts in severity order, each with a link to the filtered objects list.
    pub fn ordered_counts(&self) -> Vec<(State, u64, String)> {
        self.state_counts
            .worst_first()
            .into_iter()
            .map(|(s, n)| {
                let href = format!("/objects?cluster={}&state={s}", encode(&self.name));
                (s, n, href)
            })
            .collect()
    }
}

fn controllers(matched: &[Linked], now: DateTime<Utc>) -> Vec<Controller> {
    let mut found: Vec<Controller> = matched
        .iter()
        .filter_map(|linked| {
            let (_, _, _, deployment) = linked.id.parts()?;
            let controller = controller_of_deployment(deployment)?;
            let record = linked.record.as_ref();
            let ready = record
                .and_then(body_of)
                .and_then(|o| o.status.workload)
                .map(|w| format!("{}/{} ready", w.ready, w.desired));
            Some(Controller {
                controller: controller.to_string(),
                deployment: deployment.to_string(),
                object: record.map(|r| ObjectItem::new(r, now)),
                ready,
            })
        })
        .collect();
    // The controllers every Flux installation needs, called out when missing.
    for needed in CONTROLLER_NAMES.iter().take(3) {
        if !found.iter().any(|c| c.controller == *needed) {
            found.push(Controller {
                controller: needed.to_string(),
                deployment: needed.to_string(),
                object: None,
                ready: None,
            });
        }
    }
    found.sort_by(|a, b| a.deployment.cmp(&b.deployment));
    found
}

fn tree(records: &[ObjectRecord], now: DateTime<Utc>) -> Vec<TreeNode> {
    let flux: Vec<&ObjectRecord> = records
        .iter()
        .filter(|r| r.verdict.is_kind(Kind::Kustomization) || r.verdict.is_kind(Kind::HelmRelease))
        .collect();
    let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut has_parent = vec![false; flux.len()];
    for (i, record) in flux.iter().enumerate() {
        for edge in record
            .edges
            .iter()
            .filter(|e| e.kind == EdgeKind::DependsOn)
        {
            children.entry(edge.target.as_str()).or_default().push(i);
            has_parent[i] = true;
        }
    }
    let mut out = Vec::new();
    let mut shown = HashSet::new();
    // Roots first, then anything left (members of a cycle have no root).
    let order: Vec<usize> = (0..flux.len())
        .filter(|i| !has_parent[*i])
        .chain((0..flux.len()).filter(|i| has_parent[*i]))
        .collect();
    for root in order {
        if shown.contains(&root) {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        while let Some((i, depth)) = stack.pop() {
            let repeated = !shown.insert(i);
            out.push(TreeNode {
                depth,
                object: ObjectItem::new(flux[i], now),
                repeated,
                depth_class: format!("d{}", depth.min(8)),
            });
            if repeated {
                continue;
            }
            for &child in children
                .get(flux[i].verdict.id.as_str())
                .into_iter()
                .flatten()
                .rev()
            {
                stack.push((child, depth + 1));
            }
        }
    }
    out
}
