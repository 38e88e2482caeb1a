//! One domain across the fleet: its version and state on each cluster, and how far the
//! newest version has rolled out ("v1.4.2 fully healthy on 7 of 12 clusters; blocked on …").

use super::present::{href_of_id, label_of_id};
use crate::health::State;
use crate::model::ObjectId;
use crate::store::{ClusterRow, DomainRow, RootCauseRow, Store};
use crate::web::error::ApiError;
use crate::web::fleet_view::{RingCell, early_warnings};
use crate::web::freshness::Freshness;
use crate::web::scope::Scope;
use crate::web::state::Site;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DomainDetail {
    pub name: String,
    pub generated_at: DateTime<Utc>,
    /// The version on the first ring that has one: rollouts start there.
    pub newest_version: Option<String>,
    pub fully_healthy_at_newest: usize,
    pub summary: String,
    pub state: Option<State>,
    pub clusters: Vec<DomainCluster>,
    #[serde(skip)]
    pub label_filter: String,
    /// Per ring shown, the versions failing or stuck in an earlier ring that have not reached
    /// it yet ("2.0.0 failing in staging on 2 clusters").
    #[serde(skip)]
    pub early_warnings: Vec<(String, Vec<String>)>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DomainCluster {
    pub cluster: String,
    pub group: String,
    /// The version applied.
    pub version: Option<String>,
    /// Offered and not applied yet: pending.
    pub offered: Option<String>,
    pub state: State,
    pub fully_healthy: bool,
    pub objects: i32,
    pub healthy: i32,
    pub blockers: Vec<Blocker>,
}

impl DomainCluster {
    /// "v3.1.9", "v3.1.9 → v3.2.0" while v3.2.0 is offered and not applied, "—" for none.
    pub fn version_text(&self) -> String {
        version_text(self.version.as_deref(), self.offered.as_deref())
    }
}

/// How a cell's applied and pending versions read: "v3.1.9 → v3.2.0".
pub fn version_text(applied: Option<&str>, offered: Option<&str>) -> String {
    let applied = applied.unwrap_or("—");
    match offered {
        Some(offered) => format!("{applied} → {offered}"),
        None => applied.to_string(),
    }
}

/// A root cause keeping the domain from being healthy, with the object fields of a verdict.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Blocker {
    pub id: String,
    pub cluster: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub state: Option<State>,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub message: String,
    pub root_causes: Vec<String>,
    #[serde(skip)]
    pub href: String,
    #[serde(skip)]
    pub label: String,
}

impl DomainDetail {
    /// `label` (`key=value`) restricts the clusters shown, e.g. to one ring. A domain outside
    /// `scope` is not found, in the words of one that does not exist; one seen on only some of
    /// its clusters says so in its summary.
    pub async fn load(
        store: &Store,
        site: &Site,
        scope: &Scope,
        name: &str,
        label: Option<(&str, &str)>,
        now: DateTime<Utc>,
    ) -> Result<DomainDetail, ApiError> {
        let not_found = || ApiError::NotFound(format!("no domain named {name:?}"));
        if !scope.sees_domain(name) {
            return Err(not_found());
        }
        let stored = store.domain_verdicts_of(name).await?;
        if stored.is_empty() && !site.domains.iter().any(|d| d.name == name) {
            return Err(not_found());
        }
        let everywhere = stored.len();
        let site = &scope.site(site);
        let (freshness, mut clusters) = Freshness::load(store, site, now).await?;
        clusters.retain(|c| scope.sees_cluster(&c.name));
        let mut rows = scope.domains(freshness.domain_rows(site, &clusters, stored));
        rows.retain(|row| row.domain == name);
        let partial = !scope.is_everything() && rows.len() < everywhere;
        let causes = blockers_of(store, &freshness, &rows).await?;
        let detail = DomainDetail::build(site, name, rows, &clusters, &causes, label, now);
        Ok(detail.partly_seen(partial))
    }

    /// Every domain `scope` sees, on its clusters.
    pub async fn load_all(
        store: &Store,
        site: &Site,
        scope: &Scope,
        now: DateTime<Utc>,
    ) -> Result<Vec<DomainDetail>, ApiError> {
        let site = &scope.site(site);
        let (freshness, mut clusters) = Freshness::load(store, site, now).await?;
        clusters.retain(|c| scope.sees_cluster(&c.name));
        let stored = store.domain_verdicts().await?;
        let everywhere = |name: &str| stored.iter().filter(|r| r.domain == name).count();
        let everywhere: HashMap<String, usize> = site
            .domains
            .iter()
            .map(|d| (d.name.clone(), everywhere(&d.name)))
            .collect();
        let rows = scope.domains(freshness.domain_rows(site, &clusters, stored));
        let causes = blockers_of(store, &freshness, &rows).await?;
        let mut names: Vec<String> = site.domains.iter().map(|d| d.name.clone()).collect();
        names.extend(rows.iter().map(|r| r.domain.clone()));
        names.sort();
        names.dedup();
        Ok(names
            .iter()
            .map(|name| {
                let mine: Vec<DomainRow> =
                    rows.iter().filter(|r| r.domain == *name).cloned().collect();
                let partial = !scope.is_everything()
                    && mine.len() < everywhere.get(name).copied().unwrap_or_default();
                DomainDetail::build(site, name, mine, &clusters, &causes, None, now)
                    .partly_seen(partial)
            })
            .collect())
    }

    /// A domain seen on only some of the clusters it is on says so before its summary (whose
    /// "fully healthy on N of N" is then of those).
    fn partly_seen(mut self, partial: bool) -> DomainDetail {
        if partial {
            self.summary = format!("in your scope: {}", self.summary);
        }
        self
    }

    fn build(
        site: &Site,
        name: &str,
        rows: Vec<DomainRow>,
        clusters: &[ClusterRow],
        causes: &HashMap<String, RootCauseRow>,
        label: Option<(&str, &str)>,
        now: DateTime<Utc>,
    ) -> DomainDetail {
        let label_of = |cluster: &str, key: &str| {
            clusters
                .iter()
                .find(|c| c.name == cluster)
                .and_then(|c| c.labels.get(key))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let order = |cluster: &str| {
            site.cluster_order
                .iter()
                .position(|c| c == cluster)
                .unwrap_or(usize::MAX)
        };
        let early_warnings = ring_warnings(site, &rows, label_of, label);
        let mut cells: Vec<DomainCluster> = rows
            .into_iter()
            .filter(|row| {
                label.is_none_or(|(k, v)| label_of(&row.cluster, k).as_deref() == Some(v))
            })
            .map(|row| DomainCluster {
                group: label_of(&row.cluster, &site.group_by).unwrap_or_else(|| "ungrouped".into()),
                blockers: blockers(&row.blockers, causes),
                state: row.state,
                cluster: row.cluster,
                version: row.version,
                offered: row.offered,
                fully_healthy: row.fully_healthy,
                objects: row.objects,
                healthy: row.healthy,
            })
            .collect();
        cells.sort_by(|a, b| {
            order(&a.cluster)
                .cmp(&order(&b.cluster))
                .then(a.cluster.cmp(&b.cluster))
        });
        // Rollouts start on the first ring: what is offered there is the newest, applied or not.
        let newest_version = cells
            .iter()
            .find_map(|c| c.offered.clone().or_else(|| c.version.clone()));
        let at_newest = cells
            .iter()
            .filter(|c| c.fully_healthy && c.version == newest_version)
            .count();
        DomainDetail {
            summary: summary(newest_version.as_deref(), at_newest, &cells),
            state: cells.iter().map(|c| c.state).reduce(State::worst),
            name: name.to_string(),
            generated_at: now,
            newest_version,
            fully_healthy_at_newest: at_newest,
            clusters: cells,
            label_filter: label.map(|(k, v)| format!("{k}={v}")).unwrap_or_default(),
            early_warnings,
        }
    }
}

/// The early warning of every ring (of the one filtered to, with a label): read from all the
/// domain's clusters, since the earlier rings are what it is about.
fn ring_warnings(
    site: &Site,
    rows: &[DomainRow],
    label_of: impl Fn(&str, &str) -> Option<String>,
    label: Option<(&str, &str)>,
) -> Vec<(String, Vec<String>)> {
    let rings_of: Vec<String> = rows
        .iter()
        .map(|row| label_of(&row.cluster, &site.group_by).unwrap_or_else(|| "ungrouped".into()))
        .collect();
    let rings = crate::incidents::RingOrder::new(&site.group_order)
        .rollout_order(rings_of.iter().map(String::as_str));
    let cells: Vec<RingCell> = rows
        .iter()
        .zip(&rings_of)
        .map(|(row, ring)| RingCell {
            ring,
            version: row.version.as_deref(),
            offered: row.offered.as_deref(),
            state: row.state,
        })
        .collect();
    let shown = |ring: &str| label.is_none_or(|(key, value)| key == site.group_by && value == ring);
    rings
        .iter()
        .zip(early_warnings(&rings, &cells))
        .filter(|(ring, warnings)| !warnings.is_empty() && shown(ring))
        .map(|(ring, warnings)| (ring.to_string(), warnings))
        .collect()
}

/// A domain verdict's stored blocker ids, each with its root cause's state and reason.
pub fn blockers(ids: &[String], causes: &HashMap<String, RootCauseRow>) -> Vec<Blocker> {
    ids.iter().map(|id| blocker(id, causes.get(id))).collect()
}

fn blocker(id: &str, cause: Option<&RootCauseRow>) -> Blocker {
    let (cluster, kind, namespace, name) = ObjectId::split(id).unwrap_or((id, "", "", ""));
    Blocker {
        id: id.to_string(),
        cluster: cluster.to_string(),
        kind: kind.to_string(),
        namespace: namespace.to_string(),
        name: name.to_string(),
        root_causes: vec![id.to_string()],
        state: cause.map(|c| c.verdict.state),
        since: cause.and_then(|c| c.verdict.since),
        reason: cause.map(|c| c.verdict.reason.clone()).unwrap_or_default(),
        message: cause.map(|c| c.verdict.message.clone()).unwrap_or_default(),
        href: href_of_id(id),
        label: label_of_id(id),
    }
}

/// The root causes named as blockers in these rows (judged by `freshness`), by id.
pub async fn blockers_of(
    store: &Store,
    freshness: &Freshness,
    rows: &[DomainRow],
) -> Result<HashMap<String, RootCauseRow>, sqlx::Error> {
    let mut ids: Vec<String> = rows
        .iter()
        .flat_map(|r| r.blockers.iter().cloned())
        .collect();
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let stored = store.root_causes_by_ids(&ids).await?;
    Ok(freshness
        .root_causes(stored, BTreeMap::new())
        .into_iter()
        .map(|c| (c.verdict.id.to_string(), c))
        .collect())
}

fn summary(newest: Option<&str>, at_newest: usize, cells: &[DomainCluster]) -> String {
    let Some(newest) = newest else {
        return if cells.is_empty() {
            "no cluster reports this domain yet".to_string()
        } else {
            "no version found on any cluster".to_string()
        };
    };
    let mut text = format!(
        "{newest} fully healthy on {at_newest} of {} clusters",
        cells.len()
    );
    let behind: Vec<String> = cells
        .iter()
        .filter(|c| !(c.fully_healthy && c.version.as_deref() == Some(newest)))
        .map(|c| match (c.blockers.first(), c.version.as_deref()) {
            (Some(b), _) => {
                let why = if b.reason.is_empty() {
                    b.label.clone()
                } else {
                    format!("{} ({})", b.label, b.reason)
                };
                format!(
                    "{} on {} at {} by {why}",
                    c.state,
                    c.cluster,
                    c.version_text()
                )
            }
            (None, Some(v)) if v != newest => format!("{} still at {v}", c.cluster),
            (None, _) => format!("{} on {}", c.state, c.cluster),
        })
        .collect();
    if !behind.is_empty() {
        text.push_str("; ");
        text.push_str(&behind.join("; "));
    }
    text
}
