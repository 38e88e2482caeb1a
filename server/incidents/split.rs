//! The version behind an incident: when the clusters a cause is on are exactly those that
//! applied one version of a domain it blocks ("on 4/4 clusters that applied gateway 1.5.0,
//! 0/6 that did not"), that version is the likely change to look at. Claimed only when the
//! split is clean; anything less says nothing.

use super::{DomainVersion, Incident};
use crate::store::DomainRow;
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct VersionSplit {
    pub domain: String,
    pub version: String,
    /// Clusters running the version, all of which have the incident.
    pub with_version: usize,
    /// Clusters of the domain on another version, none of which has it.
    pub without_version: usize,
}

impl VersionSplit {
    /// "on 4/4 clusters that applied gateway 1.5.0, 0/6 that did not"
    pub fn text(&self) -> String {
        format!(
            "on {n}/{n} clusters that applied {} {}, 0/{} that did not",
            self.domain,
            self.version,
            self.without_version,
            n = self.with_version,
        )
    }
}

/// The first domain version the incident blocks whose clusters are exactly the incident's
/// (every cluster that applied it has the incident, no other cluster of the domain does, and
/// both sides have at least one cluster).
pub fn version_split(incident: &Incident, domains: &[DomainRow]) -> Option<VersionSplit> {
    split_of(&incident.clusters, &incident.domains, domains)
}

/// The same for an alert, which knows its clusters and the domains it blocks by name: each
/// domain at the version its first cluster runs.
pub fn alert_version_split(
    clusters: &[String],
    blocked: &[String],
    domains: &[DomainRow],
) -> Option<VersionSplit> {
    let first = clusters.first()?;
    let versions: Vec<DomainVersion> = blocked
        .iter()
        .filter_map(|domain| {
            let row = domains
                .iter()
                .find(|row| row.domain == *domain && row.cluster == *first)?;
            Some(DomainVersion {
                domain: domain.clone(),
                version: row.version.clone(),
                offered: None,
            })
        })
        .collect();
    split_of(clusters, &versions, domains)
}

fn split_of(
    clusters: &[String],
    blocked: &[DomainVersion],
    domains: &[DomainRow],
) -> Option<VersionSplit> {
    let on: BTreeSet<&str> = clusters.iter().map(String::as_str).collect();
    blocked.iter().find_map(|blocked| {
        let version = blocked.version.as_deref()?;
        let rows = domains.iter().filter(|row| row.domain == blocked.domain);
        let (with, without): (Vec<&DomainRow>, Vec<&DomainRow>) =
            rows.partition(|row| row.version.as_deref() == Some(version));
        let separates = !with.is_empty()
            && !without.is_empty()
            && with.iter().all(|row| on.contains(row.cluster.as_str()))
            && without.iter().all(|row| !on.contains(row.cluster.as_str()));
        separates.then(|| VersionSplit {
            domain: blocked.domain.clone(),
            version: version.to_string(),
            with_version: with.len(),
            without_version: without.len(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::State;

    fn row(cluster: &str, version: &str) -> DomainRow {
        DomainRow {
            domain: "gateway".into(),
            cluster: cluster.into(),
            version: Some(version.into()),
            offered: None,
            state: State::Healthy,
            fully_healthy: true,
            objects: 1,
            healthy: 1,
            blockers: vec![],
        }
    }

    fn incident(on: &[&str]) -> Incident {
        Incident {
            key: "k".into(),
            state: State::Failed,
            reason: "x".into(),
            kind: "Deployment".into(),
            namespace: "gw".into(),
            name: "gateway".into(),
            clusters: on.iter().map(|c| c.to_string()).collect(),
            root_causes: vec![],
            affected_total: 1,
            since: None,
            domains: vec![DomainVersion {
                domain: "gateway".into(),
                version: Some("1.5.0".into()),
                offered: None,
            }],
        }
    }

    fn fleet() -> Vec<DomainRow> {
        vec![
            row("a", "1.5.0"),
            row("b", "1.5.0"),
            row("c", "1.4.2"),
            row("d", "1.4.2"),
            row("e", "1.4.2"),
        ]
    }

    #[test]
    fn a_clean_split_names_the_version() {
        let split = version_split(&incident(&["a", "b"]), &fleet()).unwrap();
        assert_eq!(
            split.text(),
            "on 2/2 clusters that applied gateway 1.5.0, 0/3 that did not"
        );
    }

    #[test]
    fn an_alert_splits_by_the_version_its_first_cluster_runs() {
        let on = ["a".to_string(), "b".to_string()];
        let split = alert_version_split(&on, &["gateway".into()], &fleet()).unwrap();
        assert_eq!(
            (split.version.as_str(), split.without_version),
            ("1.5.0", 3)
        );
        assert_eq!(alert_version_split(&on, &["other".into()], &fleet()), None);
    }

    #[test]
    fn anything_less_than_a_clean_split_claims_nothing() {
        // On a cluster without the version too, or not on every one that has it.
        assert_eq!(version_split(&incident(&["a", "b", "c"]), &fleet()), None);
        assert_eq!(version_split(&incident(&["a"]), &fleet()), None);
        // Every cluster has the version: nothing to compare with.
        let everywhere = vec![row("a", "1.5.0"), row("b", "1.5.0")];
        assert_eq!(version_split(&incident(&["a", "b"]), &everywhere), None);
    }
}
