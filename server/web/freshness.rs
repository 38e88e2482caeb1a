//! Freshness judged when reading. The collector writes verdicts while it runs; once it stops,
//! or never reaches a cluster, or has not listed one yet, what the store holds of that cluster
//! proves nothing, however green it was. Every reader (pages, `/api/v1`, `wait`, `impact`)
//! takes the stored rows through [`Freshness`], which applies the engine's one rule
//! (`health::untrusted_data`) at the time of reading: such a cluster's objects, counts, domain
//! cells and root causes read as `unverifiable`, the cluster itself their one root cause.

use super::state::Site;
use crate::health::{State, StateCounts, Untrusted, cluster_id, untrusted_data};
use crate::store::{
    ClusterRow, DomainRow, Linked, ObjectRecord, ObjectVerdict, RootCauseRow, Store,
};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The clusters whose stored data cannot be trusted now, and why.
#[derive(Debug, Default)]
pub struct Freshness {
    untrusted: BTreeMap<String, Unproven>,
}

/// Why a cluster's data proves nothing, and since when (its last good list, if any).
#[derive(Debug, Clone, PartialEq)]
pub struct Unproven {
    pub why: Untrusted,
    /// `why` as verdicts and root causes say it ("cluster prod-eu-1 data is 5m old …").
    pub reason: String,
    pub since: Option<DateTime<Utc>>,
}

impl Freshness {
    /// Judges every cluster the store holds a row of, and every configured cluster without one
    /// (configured, so it exists: never reached or not listed yet). Returns the rows with a
    /// row made up for each of the latter, so every reader lists them.
    pub fn judge(
        site: &Site,
        mut clusters: Vec<ClusterRow>,
        now: DateTime<Utc>,
    ) -> (Freshness, Vec<ClusterRow>) {
        let stored: BTreeSet<String> = clusters.iter().map(|c| c.name.clone()).collect();
        for name in site.cluster_order.iter().filter(|n| !stored.contains(*n)) {
            clusters.push(unreported(site, name, now));
        }
        let untrusted = clusters
            .iter()
            .filter_map(|row| {
                let why = untrusted_data(
                    row.last_good,
                    row.error.as_deref(),
                    site.thresholds.freshness,
                    now,
                )?;
                let unproven = Unproven {
                    reason: why.reason(&row.name),
                    why,
                    since: row.last_good,
                };
                Some((row.name.clone(), unproven))
            })
            .collect();
        let freshness = Freshness { untrusted };
        for row in &mut clusters {
            freshness.counts(row);
        }
        (freshness, clusters)
    }

    /// Reads the cluster rows and judges them.
    pub async fn load(
        store: &Store,
        site: &Site,
        now: DateTime<Utc>,
    ) -> Result<(Freshness, Vec<ClusterRow>), sqlx::Error> {
        Ok(Freshness::judge(site, store.clusters().await?, now))
    }

    pub fn of(&self, cluster: &str) -> Option<&Unproven> {
        self.untrusted.get(cluster)
    }

    pub fn is_fresh(&self, cluster: &str) -> bool {
        !self.untrusted.contains_key(cluster)
    }

    /// The untrusted clusters' names (for filters the database applies).
    pub fn untrusted_names(&self) -> Vec<String> {
        self.untrusted.keys().cloned().collect()
    }

    /// An object's verdict as it reads now.
    pub fn verdict(&self, verdict: &mut ObjectVerdict) {
        if let Some(unproven) = self.of(&verdict.cluster) {
            verdict.state = State::Unverifiable;
            verdict.since = unproven.since;
            verdict.reason = unproven.reason.clone();
            verdict.message =
                "what was last collected from its cluster cannot be trusted now".to_string();
        }
    }

    /// An object's record as it reads now: its verdict, and the cluster as its root cause.
    pub fn record(&self, record: &mut ObjectRecord) {
        if self.of(&record.verdict.cluster).is_some() {
            self.verdict(&mut record.verdict);
            record.root_causes = json!([cluster_id(&record.verdict.cluster)]);
        }
    }

    /// Object records as they read now.
    pub fn records(&self, mut records: Vec<ObjectRecord>) -> Vec<ObjectRecord> {
        for record in &mut records {
            self.record(record);
        }
        records
    }

    /// Linked objects (what an object waits on, what waits on it) as they read now.
    pub fn linked(&self, links: &mut [Linked]) {
        for record in links.iter_mut().filter_map(|l| l.record.as_mut()) {
            self.record(record);
        }
    }

    /// A cluster's counts as they read now: all of its objects unverifiable.
    fn counts(&self, row: &mut ClusterRow) {
        if self.of(&row.name).is_none() {
            return;
        }
        let total: u64 = row.state_counts.0.values().sum();
        let mut counts = StateCounts::default();
        if total > 0 {
            counts.0.insert(State::Unverifiable, total);
        }
        row.state_counts = counts;
    }

    /// The domain cells as they read now: an untrusted cluster's cells unverifiable, blocked
    /// by the cluster, and a cell for every domain that selects an untrusted cluster of which
    /// nothing is stored yet (never reached: no domain could report there).
    pub fn domain_rows(
        &self,
        site: &Site,
        clusters: &[ClusterRow],
        mut rows: Vec<DomainRow>,
    ) -> Vec<DomainRow> {
        for row in &mut rows {
            if self.of(&row.cluster).is_some() {
                row.state = State::Unverifiable;
                row.fully_healthy = false;
                row.healthy = 0;
                row.blockers = vec![cluster_id(&row.cluster).into_string()];
            }
        }
        let present: BTreeSet<(String, String)> = rows
            .iter()
            .map(|r| (r.domain.clone(), r.cluster.clone()))
            .collect();
        for cluster in clusters.iter().filter(|c| self.of(&c.name).is_some()) {
            for domain in &site.domains {
                let selected = domain
                    .clusters
                    .iter()
                    .all(|(k, v)| cluster.labels.get(k).and_then(Value::as_str) == Some(v));
                if selected && !present.contains(&(domain.name.clone(), cluster.name.clone())) {
                    rows.push(DomainRow {
                        domain: domain.name.clone(),
                        cluster: cluster.name.clone(),
                        version: None,
                        offered: None,
                        state: State::Unverifiable,
                        fully_healthy: false,
                        objects: 0,
                        healthy: 0,
                        blockers: vec![cluster_id(&cluster.name).into_string()],
                    });
                }
            }
        }
        rows.sort_by(|a, b| (&a.domain, &a.cluster).cmp(&(&b.domain, &b.cluster)));
        rows
    }

    /// The root causes as they read now: an untrusted cluster's stored causes give way to the
    /// cluster itself, affecting every object stored of it: as the collector wrote it when it
    /// saw the cluster go (its stored cause), else as `objects_of` (cluster → ids) says.
    pub fn root_causes(
        &self,
        causes: Vec<RootCauseRow>,
        mut objects_of: BTreeMap<String, Vec<String>>,
    ) -> Vec<RootCauseRow> {
        let (mut kept, untrusted): (Vec<RootCauseRow>, Vec<RootCauseRow>) = causes
            .into_iter()
            .partition(|c| self.of(&c.verdict.cluster).is_none());
        for cause in untrusted {
            if cause.verdict.id == cluster_id(&cause.verdict.cluster) {
                objects_of.insert(cause.verdict.cluster, cause.affected);
            }
        }
        for (cluster, unproven) in &self.untrusted {
            let mut affected = objects_of.remove(cluster).unwrap_or_default();
            affected.sort();
            kept.push(RootCauseRow {
                verdict: ObjectVerdict::new(
                    cluster_id(cluster),
                    State::Unverifiable,
                    unproven.since,
                    unproven.reason.clone(),
                    String::new(),
                ),
                cause: unproven.why.cause(),
                affected,
            });
        }
        kept
    }

    /// `root_causes`, reading the objects of the untrusted clusters whose own cause the
    /// collector did not write (it stopped before it saw them go): only then, so a cluster
    /// the collector already reports as stale costs the fleet page nothing more.
    pub async fn load_root_causes(
        &self,
        store: &Store,
        causes: Vec<RootCauseRow>,
    ) -> Result<Vec<RootCauseRow>, sqlx::Error> {
        let unwritten: Vec<String> = self
            .untrusted
            .keys()
            .filter(|cluster| {
                let id = cluster_id(cluster);
                !causes.iter().any(|c| c.verdict.id == id)
            })
            .cloned()
            .collect();
        let objects_of = if unwritten.is_empty() {
            BTreeMap::new()
        } else {
            store.object_ids_on(&unwritten).await?
        };
        Ok(self.root_causes(causes, objects_of))
    }
}

/// The row of a configured cluster the store has nothing of yet.
fn unreported(site: &Site, name: &str, now: DateTime<Utc>) -> ClusterRow {
    ClusterRow {
        name: name.to_string(),
        labels: json!(site.cluster_labels.get(name).cloned().unwrap_or_default()),
        last_good: None,
        error: None,
        kind_errors: json!({}),
        state_counts: StateCounts::default(),
        controllers: json!([]),
        updated_at: now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ObjectId;
    use chrono::{TimeDelta, TimeZone};

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 6, 12, 0, 0).unwrap()
    }

    fn row(name: &str, last_good: Option<DateTime<Utc>>, error: Option<&str>) -> ClusterRow {
        ClusterRow {
            name: name.to_string(),
            labels: json!({"ring": "prod"}),
            last_good,
            error: error.map(str::to_string),
            kind_errors: json!({}),
            state_counts: StateCounts::of([
                State::Healthy,
                State::Healthy,
                State::Healthy,
                State::Failed,
            ]),
            controllers: json!([]),
            updated_at: now(),
        }
    }

    fn site() -> Site {
        Site {
            cluster_order: vec!["fresh".into(), "old".into(), "configured".into()],
            cluster_labels: BTreeMap::from([(
                "configured".to_string(),
                BTreeMap::from([("ring".to_string(), "prod".to_string())]),
            )]),
            ..Site::default()
        }
    }

    fn judged() -> (Freshness, Vec<ClusterRow>) {
        let rows = vec![
            row("fresh", Some(now() - TimeDelta::seconds(30)), None),
            row("old", Some(now() - TimeDelta::minutes(5)), None),
            row("down", Some(now()), Some("connection refused")),
        ];
        Freshness::judge(&site(), rows, now())
    }

    #[test]
    fn data_past_the_limit_unreachable_or_never_reported_is_untrusted_when_read() {
        let (freshness, rows) = judged();
        assert!(freshness.is_fresh("fresh"));
        assert_eq!(
            freshness.of("old").map(|u| u.reason.as_str()),
            Some("cluster old data is 5m old (freshness limit 2m)")
        );
        assert_eq!(
            freshness.of("down").map(|u| u.reason.as_str()),
            Some("cluster down unreachable: connection refused")
        );
        let configured = freshness
            .of("configured")
            .expect("a configured cluster exists");
        assert!(
            configured.reason.contains("not yet listed"),
            "{configured:?}"
        );
        assert_eq!(rows.len(), 4, "the configured cluster gets a row");
        let counts = |name: &str| {
            rows.iter()
                .find(|r| r.name == name)
                .unwrap()
                .state_counts
                .clone()
        };
        let json = |name: &str| serde_json::to_value(counts(name)).unwrap();
        assert_eq!(json("fresh"), json!({"healthy": 3, "failed": 1}));
        assert_eq!(json("old"), json!({"unverifiable": 4}));
        assert_eq!(json("configured"), json!({}));
    }

    fn healthy(id: &str) -> ObjectVerdict {
        ObjectVerdict::new(
            id.parse::<ObjectId>().unwrap(),
            State::Healthy,
            None,
            "ready".into(),
            String::new(),
        )
    }

    #[test]
    fn an_untrusted_clusters_objects_read_unverifiable_with_the_cluster_as_cause() {
        let (freshness, _) = judged();
        let mut verdict = healthy("old/Kustomization/flux-system/apps");
        freshness.verdict(&mut verdict);
        assert_eq!(verdict.state, State::Unverifiable);
        assert_eq!(verdict.since, Some(now() - TimeDelta::minutes(5)));
        let mut fresh = healthy("fresh/Kustomization/flux-system/apps");
        freshness.verdict(&mut fresh);
        assert_eq!(fresh.state, State::Healthy);
    }

    #[test]
    fn cells_of_untrusted_clusters_are_never_fully_healthy_and_missing_ones_appear() {
        let (freshness, rows) = judged();
        let mut site = site();
        site.domains = crate::yaml::from_str(
            "- {name: gateway, clusters: {ring: prod}, version: {from: chart_version, namespace: g, name: g}}",
        )
        .unwrap();
        let cell = |cluster: &str| DomainRow {
            domain: "gateway".into(),
            cluster: cluster.into(),
            version: Some("1.4.2".into()),
            offered: None,
            state: State::Healthy,
            fully_healthy: true,
            objects: 3,
            healthy: 3,
            blockers: vec![],
        };
        let cells = freshness.domain_rows(&site, &rows, vec![cell("fresh"), cell("old")]);
        let by: BTreeMap<&str, &DomainRow> =
            cells.iter().map(|c| (c.cluster.as_str(), c)).collect();
        assert!(by["fresh"].fully_healthy);
        for cluster in ["old", "configured", "down"] {
            assert_eq!(by[cluster].state, State::Unverifiable, "{cluster}");
            assert!(!by[cluster].fully_healthy, "{cluster}");
            assert_eq!(
                by[cluster].blockers,
                vec![cluster_id(cluster).into_string()]
            );
        }
    }

    #[test]
    fn an_untrusted_clusters_causes_give_way_to_the_cluster_affecting_all_it_holds() {
        let (freshness, _) = judged();
        let cause = |id: &str| RootCauseRow {
            verdict: ObjectVerdict::new(
                id.parse::<ObjectId>().unwrap(),
                State::Failed,
                None,
                "x".into(),
                String::new(),
            ),
            cause: Default::default(),
            affected: vec![id.to_string()],
        };
        let objects = BTreeMap::from([(
            "old".to_string(),
            vec![
                "old/Kustomization/a/b".to_string(),
                "old/Kustomization/a/a".to_string(),
            ],
        )]);
        // What the collector wrote when it saw `down` go: its own cause, with what it affects.
        let mut written = cause(cluster_id("down").as_str());
        written.affected = vec!["down/Kustomization/a/z".to_string()];
        let causes = freshness.root_causes(
            vec![
                cause("fresh/Kustomization/a/x"),
                cause("old/Kustomization/a/y"),
                written,
            ],
            objects,
        );
        let down = causes.iter().find(|c| c.verdict.cluster == "down").unwrap();
        assert_eq!(down.affected, vec!["down/Kustomization/a/z"]);
        assert_eq!(
            down.verdict.reason,
            "cluster down unreachable: connection refused"
        );
        assert_eq!(down.verdict.state, State::Unverifiable);
        let ids: Vec<&str> = causes.iter().map(|c| c.verdict.id.as_str()).collect();
        assert!(ids.contains(&"fresh/Kustomization/a/x"));
        assert!(!ids.contains(&"old/Kustomization/a/y"));
        let old = causes.iter().find(|c| c.verdict.cluster == "old").unwrap();
        assert_eq!(old.verdict.id, cluster_id("old"));
        assert_eq!(
            old.affected,
            vec!["old/Kustomization/a/a", "old/Kustomization/a/b"]
        );
        assert!(
            causes
                .iter()
                .any(|c| c.verdict.id == cluster_id("configured"))
        );
    }
}
