//! The fleet at a glance, built from the store's roll-ups: domains × cluster groups, counts by
//! state, incidents and root causes, and clusters whose data is not fresh. The page and
//! `/api/v1/fleet` both render this one model.

use super::error::ApiError;
use super::freshness::Freshness;
use super::scope::Scope;
use super::state::Site;
use super::views::domain::version_text;
use super::views::incidents::{IncidentView, Incidents};
use super::views::present::encode;
use crate::health::{State, StateCounts, worst_first};
use crate::incidents::RingOrder;
use crate::model::{ObjectId, human};
use crate::store::{ClusterRow, DomainRow, ObjectVerdict, RootCauseRow, Store};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct FleetView {
    pub generated_at: DateTime<Utc>,
    pub group_by: String,
    pub groups: Vec<Group>,
    pub clusters: Vec<ClusterView>,
    pub domains: Vec<DomainView>,
    #[schema(value_type = BTreeMap<String, u64>)]
    pub counts: StateCounts,
    pub root_causes: Vec<CauseView>,
    /// Distinct objects the root causes affect (each once), as `/api/v1/problems` counts.
    pub affected_total: usize,
    /// Root causes grouped across clusters, most impact first.
    pub incidents: Vec<IncidentView>,
    /// The past time this view shows the fleet as it was (`?at=`); None: now.
    pub at: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Group {
    pub name: String,
    pub clusters: Vec<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ClusterView {
    pub name: String,
    pub group: String,
    #[schema(value_type = BTreeMap<String, String>)]
    pub labels: serde_json::Value,
    pub fresh: bool,
    pub last_good: Option<DateTime<Utc>>,
    pub error: Option<String>,
    /// Why its data proves nothing now, when it does not ("data is 5m old (freshness limit
    /// 2m)", "never reached: connection refused", "not yet listed: …").
    pub unverifiable: Option<String>,
    /// Objects by state, e.g. `{"healthy": 40, "failed": 2}`.
    #[schema(value_type = BTreeMap<String, u64>)]
    pub state_counts: StateCounts,
    #[serde(skip)]
    pub age: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DomainView {
    pub name: String,
    pub clusters: Vec<DomainCell>,
    pub groups: Vec<GroupCell>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct DomainCell {
    pub cluster: String,
    /// The version applied.
    pub version: Option<String>,
    /// Offered and not applied yet: pending.
    pub offered: Option<String>,
    pub state: State,
    pub fully_healthy: bool,
    pub objects: i32,
    pub healthy: i32,
    pub blockers: Vec<String>,
}

/// A domain on one group of clusters (a ring): versions seen, the worst state, n of m healthy.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct GroupCell {
    pub group: String,
    /// The versions applied on its clusters.
    pub versions: Vec<String>,
    /// The versions offered there and not applied yet.
    pub offered: Vec<String>,
    pub state: Option<State>,
    pub fully_healthy_clusters: usize,
    /// Clusters whose cell cannot be verified, said beside the worst known state.
    pub unverifiable_clusters: usize,
    pub clusters: usize,
    /// Versions failing or stuck in an earlier ring (in `group_order`) and not applied here
    /// yet: "2.0.0 failing in staging on 2 clusters", before they arrive.
    pub early_warnings: Vec<String>,
}

/// A root cause and the objects it affects.
#[derive(Debug)]
pub struct CauseView {
    pub verdict: ObjectVerdict,
    pub affected: Vec<String>,
}

// A root cause as `/api/v1/fleet` has always shown it: the verdict without the id's parts
// (kind, namespace, name). A plain comment: a doc comment would become its OpenAPI
// description.
#[derive(Serialize, utoipa::ToSchema)]
struct CauseJson<'a> {
    #[schema(value_type = String)]
    id: &'a ObjectId,
    cluster: &'a str,
    state: State,
    since: Option<DateTime<Utc>>,
    reason: &'a str,
    message: &'a str,
    affected: &'a [String],
}

impl Serialize for CauseView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let verdict = &self.verdict;
        CauseJson {
            id: &verdict.id,
            cluster: &verdict.cluster,
            state: verdict.state,
            since: verdict.since,
            reason: &verdict.reason,
            message: &verdict.message,
            affected: &self.affected,
        }
        .serialize(serializer)
    }
}

impl utoipa::PartialSchema for CauseView {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        CauseJson::schema()
    }
}

impl utoipa::ToSchema for CauseView {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        CauseJson::schemas(schemas)
    }
}

impl GroupCell {
    /// How many clusters are unverifiable, when the cell shows a known state beside them.
    pub fn unverifiable_beside(&self) -> Option<usize> {
        (self.unverifiable_clusters > 0 && self.state != Some(State::Unverifiable))
            .then_some(self.unverifiable_clusters)
    }

    /// "v3.1.9", "v3.1.9 → v3.2.0" while v3.2.0 is offered and not applied.
    pub fn version_text(&self) -> String {
        let joined = |versions: &[String]| (!versions.is_empty()).then(|| versions.join(" / "));
        version_text(
            joined(&self.versions).as_deref(),
            joined(&self.offered).as_deref(),
        )
    }
}

/// `?at=`: an RFC 3339 time in the past, within the history kept (`retention.transitions`);
/// empty or absent: now.
pub fn past_time(
    text: Option<&str>,
    site: &Site,
    now: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, ApiError> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let at = DateTime::parse_from_rfc3339(text)
        .map_err(|e| {
            ApiError::BadRequest(format!(
                "at is an RFC 3339 time such as 2026-12-01T09:30:00Z, not {text:?}: {e}"
            ))
        })?
        .with_timezone(&Utc);
    if at > now {
        return Err(ApiError::BadRequest(format!(
            "at {text} is in the future: the fleet's history ends now"
        )));
    }
    let oldest = now - site.history_kept;
    if at < oldest {
        return Err(ApiError::BadRequest(format!(
            "at {text} is before the history kept (retention.transitions: {}, since {})",
            human(site.history_kept),
            oldest.format("%Y-%m-%d %H:%M UTC")
        )));
    }
    Ok(Some(at))
}

impl FleetView {
    /// The fleet now, or as it was at `at`.
    pub async fn load_when(
        store: &Store,
        site: &Site,
        scope: &Scope,
        at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<FleetView, ApiError> {
        match at {
            Some(at) => FleetView::load_at(store, site, scope, at).await,
            None => FleetView::load(store, site, scope, now).await,
        }
    }

    /// The tab's title: the number of incidents first while there are any, so a tab in the
    /// background says so (the page's refresh carries it too).
    pub fn title(&self) -> String {
        match self.incidents.len() {
            0 => "fleetglass · fleet".to_string(),
            n => format!("({n}) fleetglass · fleet"),
        }
    }

    /// The fleet now, as `scope` sees it: its clusters (with its own totals), its domains,
    /// the root causes it sees affecting what it sees.
    pub async fn load(
        store: &Store,
        site: &Site,
        scope: &Scope,
        now: DateTime<Utc>,
    ) -> Result<FleetView, ApiError> {
        // Three independent reads on three connections at once: under ingest each waits
        // for Postgres, so the page waits for the slowest instead of their sum.
        let (clusters, domains, causes) = tokio::try_join!(
            store.clusters(),
            store.domain_verdicts(),
            store.root_causes()
        )?;
        let site = &scope.site(site);
        let clusters = scope.clusters(store, clusters, false).await?;
        let (freshness, clusters) = Freshness::judge(site, clusters, now);
        let domains = scope.domains(freshness.domain_rows(site, &clusters, domains));
        let causes = scope.causes(freshness.load_root_causes(store, causes).await?);
        let incidents = Incidents::load(store, site, &causes, &clusters, &domains, now).await?;
        Ok(FleetView::build(
            site, &freshness, clusters, domains, causes, incidents, now,
        ))
    }

    /// The fleet as it was at `at`, from the history: domain verdicts and cluster counts as
    /// they last changed before it, the root causes open then. Warning events are evidence of
    /// now and are left out.
    pub async fn load_at(
        store: &Store,
        site: &Site,
        scope: &Scope,
        at: DateTime<Utc>,
    ) -> Result<FleetView, ApiError> {
        let (clusters, domains, causes) = tokio::try_join!(
            store.clusters_at(at),
            store.domain_verdicts_at(at),
            store.root_causes_at(at)
        )?;
        let site = &scope.site(site);
        let clusters = scope.clusters(store, clusters, true).await?;
        let (freshness, clusters) = Freshness::judge(site, clusters, at);
        let domains = scope.domains(freshness.domain_rows(site, &clusters, domains));
        let causes = scope.causes(freshness.load_root_causes(store, causes).await?);
        let incidents = Incidents::load_at(store, site, &causes, &clusters, &domains, at).await?;
        let mut view = FleetView::build(site, &freshness, clusters, domains, causes, incidents, at);
        view.at = Some(at);
        Ok(view)
    }

    /// The view of rows already judged by `freshness` (see [`FleetView::load`]).
    pub fn build(
        site: &Site,
        freshness: &Freshness,
        clusters: Vec<ClusterRow>,
        domains: Vec<DomainRow>,
        causes: Vec<RootCauseRow>,
        incidents: Incidents,
        now: DateTime<Utc>,
    ) -> FleetView {
        let mut clusters: Vec<ClusterView> = clusters
            .into_iter()
            .map(|c| cluster_view(site, freshness, c, now))
            .collect();
        let order = |name: &str| {
            site.cluster_order
                .iter()
                .position(|n| n == name)
                .unwrap_or(usize::MAX)
        };
        clusters.sort_by(|a, b| {
            order(&a.name)
                .cmp(&order(&b.name))
                .then(a.name.cmp(&b.name))
        });
        let groups = groups_of(&clusters);
        let mut counts = StateCounts::default();
        for cluster in &clusters {
            counts.add(&cluster.state_counts);
        }
        let domains = domain_views(site, &groups, domains);
        let mut root_causes: Vec<CauseView> = causes.into_iter().map(cause_view).collect();
        fn impact(c: &CauseView) -> (State, usize, &str) {
            (c.verdict.state, c.affected.len(), c.verdict.id.as_str())
        }
        root_causes.sort_by(|a, b| worst_first(impact(a), impact(b)));
        FleetView {
            generated_at: now,
            group_by: site.group_by.clone(),
            groups,
            clusters,
            domains,
            counts,
            root_causes,
            affected_total: incidents.affected_total,
            incidents: incidents.active,
            at: None,
        }
    }

    pub fn stale_clusters(&self) -> impl Iterator<Item = &ClusterView> {
        self.clusters.iter().filter(|c| !c.fresh)
    }

    /// The domain page filtered to one group (ring) of clusters.
    pub fn cell_href(&self, domain: &str, group: &str) -> String {
        format!(
            "/domains/{}?label={}",
            encode(domain),
            encode(&format!("{}={group}", self.group_by))
        )
    }

    /// Counts in severity order, for the summary line.
    pub fn ordered_counts(&self) -> Vec<(State, u64)> {
        self.counts.worst_first()
    }
}

fn cause_view(row: RootCauseRow) -> CauseView {
    CauseView {
        affected: row.affected,
        verdict: row.verdict,
    }
}

fn cluster_view(
    site: &Site,
    freshness: &Freshness,
    row: ClusterRow,
    now: DateTime<Utc>,
) -> ClusterView {
    let group = row
        .labels
        .get(&site.group_by)
        .and_then(|v| v.as_str())
        .unwrap_or("ungrouped")
        .to_string();
    let unverifiable = freshness.of(&row.name).map(|u| u.why.describe());
    ClusterView {
        fresh: unverifiable.is_none(),
        unverifiable,
        age: row
            .last_good
            .map_or_else(|| "never".to_string(), |t| human(now - t)),
        name: row.name,
        group,
        labels: row.labels,
        last_good: row.last_good,
        error: row.error,
        state_counts: row.state_counts,
    }
}

fn groups_of(clusters: &[ClusterView]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for cluster in clusters {
        match groups.iter_mut().find(|g| g.name == cluster.group) {
            Some(group) => group.clusters.push(cluster.name.clone()),
            None => groups.push(Group {
                name: cluster.group.clone(),
                clusters: vec![cluster.name.clone()],
            }),
        }
    }
    groups
}

fn domain_views(site: &Site, groups: &[Group], rows: Vec<DomainRow>) -> Vec<DomainView> {
    let order = RingOrder::new(&site.group_order);
    let mut by_domain: BTreeMap<String, Vec<DomainCell>> = site
        .domains
        .iter()
        .map(|d| (d.name.clone(), Vec::new()))
        .collect();
    for row in rows {
        by_domain
            .entry(row.domain.clone())
            .or_default()
            .push(DomainCell {
                cluster: row.cluster,
                version: row.version,
                offered: row.offered,
                state: row.state,
                fully_healthy: row.fully_healthy,
                objects: row.objects,
                healthy: row.healthy,
                blockers: row.blockers,
            });
    }
    by_domain
        .into_iter()
        .map(|(name, cells)| {
            let mut group_cells: Vec<GroupCell> = groups
                .iter()
                .map(|group| group_cell(group, &cells))
                .collect();
            warn_later_rings(&order, groups, &cells, &mut group_cells);
            DomainView {
                name,
                clusters: cells,
                groups: group_cells,
            }
        })
        .collect()
}

/// Marks each ring's cell with [`early_warnings`].
fn warn_later_rings(
    order: &RingOrder,
    groups: &[Group],
    cells: &[DomainCell],
    group_cells: &mut [GroupCell],
) {
    let ring_cells: Vec<RingCell> = cells
        .iter()
        .filter_map(|cell| {
            let group = groups.iter().find(|g| g.clusters.contains(&cell.cluster))?;
            Some(RingCell {
                ring: &group.name,
                version: cell.version.as_deref(),
                offered: cell.offered.as_deref(),
                state: cell.state,
            })
        })
        .collect();
    let rings = order.rollout_order(groups.iter().map(|g| g.name.as_str()));
    let warnings = early_warnings(&rings, &ring_cells);
    for cell in group_cells.iter_mut() {
        if let Some(at) = rings.iter().position(|ring| *ring == cell.group) {
            cell.early_warnings.clone_from(&warnings[at]);
        }
    }
}

/// One cluster's cell of a domain, as the early warning reads it.
pub struct RingCell<'a> {
    pub ring: &'a str,
    pub version: Option<&'a str>,
    pub offered: Option<&'a str>,
    pub state: State,
}

/// For each ring of `rings` (in rollout order), the versions failing or stuck in the rings
/// before it (the version attempted there, else the one applied) that it has not applied yet:
/// "2.0.0 failing in staging on 2 clusters". Versions are not ordered: a ring already past a
/// version an earlier ring fails on is warned too.
pub fn early_warnings(rings: &[&str], cells: &[RingCell]) -> Vec<Vec<String>> {
    rings
        .iter()
        .enumerate()
        .map(|(at, ring)| {
            let applied: Vec<&str> = cells
                .iter()
                .filter(|c| c.ring == *ring)
                .filter_map(|c| c.version)
                .collect();
            let mut seen: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
            for earlier in &rings[..at] {
                for cell in cells.iter().filter(|c| c.ring == *earlier) {
                    let word = match cell.state {
                        State::Failed | State::Degraded => "failing",
                        State::Stuck => "stuck",
                        _ => continue,
                    };
                    let Some(version) = cell.offered.or(cell.version) else {
                        continue;
                    };
                    if !applied.contains(&version) {
                        *seen.entry((version, word, earlier)).or_default() += 1;
                    }
                }
            }
            seen.into_iter()
                .map(|((version, word, ring), n)| {
                    let plural = if n == 1 { "" } else { "s" };
                    format!("{version} {word} in {ring} on {n} cluster{plural}")
                })
                .collect()
        })
        .collect()
}

fn group_cell(group: &Group, cells: &[DomainCell]) -> GroupCell {
    let in_group: Vec<&DomainCell> = cells
        .iter()
        .filter(|c| group.clusters.contains(&c.cluster))
        .collect();
    let distinct = |of: fn(&DomainCell) -> Option<&String>| {
        let mut found: Vec<String> = in_group.iter().filter_map(|c| of(c).cloned()).collect();
        found.sort();
        found.dedup();
        found
    };
    let versions = distinct(|c| c.version.as_ref());
    let offered = distinct(|c| c.offered.as_ref());
    GroupCell {
        group: group.name.clone(),
        versions,
        offered,
        state: in_group.iter().map(|c| c.state).reduce(State::worst),
        fully_healthy_clusters: in_group.iter().filter(|c| c.fully_healthy).count(),
        unverifiable_clusters: in_group
            .iter()
            .filter(|c| c.state == State::Unverifiable)
            .count(),
        clusters: in_group.len(),
        early_warnings: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    /// Issue 43 (f): a ring with one cluster failed and one unverifiable reads failed, with
    /// the unverifiable one counted beside it.
    #[test]
    fn a_rings_cell_shows_the_known_failure_and_counts_the_unverifiable_beside_it() {
        let cell = |cluster: &str, state: State| DomainCell {
            cluster: cluster.into(),
            version: Some("v1".into()),
            offered: None,
            state,
            fully_healthy: state == State::Healthy,
            objects: 3,
            healthy: 0,
            blockers: vec![],
        };
        let group = Group {
            name: "prod".into(),
            clusters: vec!["a".into(), "b".into(), "c".into()],
        };
        let cells = [
            cell("a", State::Unverifiable),
            cell("b", State::Degraded),
            cell("c", State::Healthy),
        ];
        let rolled = group_cell(&group, &cells);
        assert_eq!(rolled.state, Some(State::Degraded));
        assert_eq!(rolled.unverifiable_clusters, 1);
        assert_eq!(rolled.unverifiable_beside(), Some(1));
        assert_eq!(rolled.fully_healthy_clusters, 1);
    }

    /// Issue 49: a version failing or stuck in an earlier ring is marked on the later rings'
    /// cells before it arrives there; a ring that already runs it, or an earlier one, is not.
    #[test]
    fn a_version_failing_in_an_earlier_ring_is_marked_on_the_later_ones() {
        let cell = |cluster: &str, version: &str, offered: Option<&str>, state: State| DomainCell {
            cluster: cluster.into(),
            version: Some(version.into()),
            offered: offered.map(String::from),
            state,
            fully_healthy: state == State::Healthy,
            objects: 3,
            healthy: 0,
            blockers: vec![],
        };
        let group = |name: &str, clusters: &[&str]| Group {
            name: name.into(),
            clusters: clusters.iter().map(|c| c.to_string()).collect(),
        };
        let groups = [
            group("dev", &["dev-1"]),
            group("staging", &["stg-1", "stg-2", "stg-3"]),
            group("prod", &["prod-1"]),
            group("edge", &["edge-1"]),
        ];
        let cells = [
            cell("dev-1", "2.0.0", None, State::Healthy),
            // Attempted 2.0.0 and failed (still applied 1.9.0), applied and failing, stuck.
            cell("stg-1", "1.9.0", Some("2.0.0"), State::Failed),
            cell("stg-2", "2.0.0", None, State::Degraded),
            cell("stg-3", "2.0.0", None, State::Stuck),
            cell("prod-1", "1.9.0", None, State::Healthy),
            cell("edge-1", "2.0.0", None, State::Progressing),
        ];
        let mut rolled: Vec<GroupCell> = groups.iter().map(|g| group_cell(g, &cells)).collect();
        let order = RingOrder::new(&["edge", "prod", "staging", "dev"].map(String::from));
        warn_later_rings(&order, &groups, &cells, &mut rolled);
        assert!(rolled[0].early_warnings.is_empty() && rolled[1].early_warnings.is_empty());
        assert_eq!(
            rolled[2].early_warnings,
            [
                "2.0.0 failing in staging on 2 clusters",
                "2.0.0 stuck in staging on 1 cluster"
            ]
        );
        assert!(
            rolled[3].early_warnings.is_empty(),
            "edge already runs 2.0.0"
        );
    }

    #[test]
    fn a_root_cause_in_the_fleet_api_has_exactly_the_fields_it_always_had() {
        let row = RootCauseRow {
            verdict: ObjectVerdict::new(
                "prod-eu-1/HelmRelease/apps/payments"
                    .parse::<ObjectId>()
                    .unwrap(),
                State::Degraded,
                Some(Utc.with_ymd_and_hms(2026, 11, 20, 10, 0, 0).unwrap()),
                "UpgradeFailed".to_string(),
                "timed out".to_string(),
            ),
            cause: Default::default(),
            affected: vec!["prod-eu-1/Kustomization/flux-system/apps".to_string()],
        };
        assert_eq!(
            serde_json::to_string(&cause_view(row)).unwrap(),
            r#"{"id":"prod-eu-1/HelmRelease/apps/payments","cluster":"prod-eu-1","state":"degraded","since":"2026-11-20T10:00:00Z","reason":"UpgradeFailed","message":"timed out","affected":["prod-eu-1/Kustomization/flux-system/apps"]}"#
        );
    }

    #[test]
    fn the_fleet_api_describes_a_root_cause_as_it_always_did() {
        use utoipa::PartialSchema;
        let schema = serde_json::to_string(&CauseView::schema()).unwrap();
        assert_eq!(
            schema,
            r##"{"type":"object","required":["id","cluster","state","reason","message","affected"],"properties":{"affected":{"type":"array","items":{"type":"string"}},"cluster":{"type":"string"},"id":{"type":"string"},"message":{"type":"string"},"reason":{"type":"string"},"since":{"type":["string","null"],"format":"date-time"},"state":{"$ref":"#/components/schemas/State"}}}"##
        );
    }
}
