//! The fleet's incidents as `/`, `/problems` and their APIs show them: each with the severity
//! its alert rule gives it, whether it flaps, who to call, and its per-cluster root causes; and
//! the incidents resolved within the last [`RESOLVED_WINDOW`].

use super::contacts::{Contact, contacts};
use super::present::{Moment, href_of_id, label_of_id};
use super::problems::{anchor, slug};
use crate::alerts::{Candidate, rules};
use crate::config::Severity;
use crate::health::{State, reason_beside_clusters};
use crate::incidents::{
    self, Cause, DomainVersion, ENTRIES_COUNTED, FLAP_WINDOW, Flap, Incident, RESOLVED_WINDOW,
    ResolvedCause, ResolvedIncident, RingOrder,
};
use crate::model::{ObjectId, Warning};
use crate::store::{
    ClusterRow, DomainRow, ObjectVerdict, ProblemEntries, ResolvedRow, RootCauseRow, Store,
};
use crate::web::state::Site;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How the pages say the resolved window ("24 h").
pub fn resolved_window_text() -> String {
    format!("{} h", RESOLVED_WINDOW.num_hours())
}

/// The active incidents. The recently resolved ones are read apart
/// ([`Incidents::recently_resolved`]): only `/problems` shows them, and under churn they are
/// the fastest-growing history the fleet page would otherwise read on every request.
#[derive(Debug)]
pub struct Incidents {
    pub active: Vec<IncidentView>,
    /// Distinct objects the root causes affect: the one count of "affecting N objects".
    pub affected_total: usize,
}

/// An incident; the JSON is exactly [`Incident`]'s fields, the rest is for the pages.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct IncidentView {
    #[serde(flatten)]
    pub incident: Incident,
    #[serde(skip)]
    pub severity: Option<Severity>,
    #[serde(skip)]
    pub flap: Option<Flap>,
    /// The failing component's domains' contacts first, then the blocked domains'.
    #[serde(skip)]
    pub contacts: Vec<Contact>,
    /// No domain of the failing component names an owner: said on the page, not left out.
    #[serde(skip)]
    pub owner_missing: bool,
    /// The domain version whose clusters are exactly the incident's, when one is.
    pub version_split: Option<incidents::VersionSplit>,
    /// The latest Warning event reasons of its root causes and their pods.
    #[serde(skip)]
    pub warnings: Vec<incidents::ReasonSeen>,
    #[serde(skip)]
    pub causes: Vec<CauseLink>,
    #[serde(skip)]
    pub since_moment: Option<Moment>,
    #[serde(skip)]
    pub anchor: String,
}

/// One cluster's root cause inside an incident.
#[derive(Debug)]
pub struct CauseLink {
    pub cluster: String,
    pub state: State,
    pub label: String,
    pub href: String,
    /// Where it is explained on the problems page.
    pub problem_href: String,
    pub affected: usize,
}

/// The head of an incident whose root causes are clusters themselves: "3 clusters" and
/// "unreachable: connection refused".
pub struct ClustersHead {
    pub who: String,
    pub why: String,
}

impl IncidentView {
    /// For several clusters that are themselves the cause (stale), the head that names them
    /// together instead of after the first.
    pub fn clusters_head(&self) -> Option<ClustersHead> {
        let incident = &self.incident;
        let first = incident.root_causes.first()?;
        let together =
            incident.clusters.len() > 1 && crate::health::cluster_of_cluster_id(first).is_some();
        together.then(|| ClustersHead {
            who: format!("{} clusters", incident.clusters.len()),
            why: reason_beside_clusters(first, &incident.reason).to_string(),
        })
    }

    /// "on prod-eu-1", "on 2 clusters (prod-eu-1, prod-eu-2)".
    pub fn clusters_text(&self) -> String {
        match self.incident.clusters.as_slice() {
            [one] => format!("on {one}"),
            many => format!("on {} clusters ({})", many.len(), many.join(", ")),
        }
    }

    /// The objects its root causes hold up, the causes themselves left out: what the cause
    /// cards on `/problems` add up to ("affects 7" + "affects 7" is 14, where
    /// `affected_total`, the API's and the fleet summary's count, is 16 with the two causes).
    pub fn held_up(&self) -> usize {
        let causes_counted = self
            .incident
            .root_causes
            .iter()
            .filter(|id| crate::health::cluster_of_cluster_id(id).is_none())
            .count();
        self.incident.affected_total.saturating_sub(causes_counted)
    }

    /// The cause itself (its first cluster's), for the headline to link to.
    pub fn head_href(&self) -> &str {
        self.causes.first().map_or("/problems", |c| c.href.as_str())
    }

    pub fn domains_text(&self) -> String {
        self.incident
            .domains
            .iter()
            .map(|d| match (&d.version, &d.offered) {
                (None, None) => format!("{} (version unknown)", d.domain),
                (applied, offered) => format!(
                    "{} {}",
                    d.domain,
                    super::domain::version_text(applied.as_deref(), offered.as_deref())
                ),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Incidents {
    pub async fn load(
        store: &Store,
        site: &Site,
        causes: &[RootCauseRow],
        clusters: &[ClusterRow],
        domains: &[DomainRow],
        now: DateTime<Utc>,
    ) -> Result<Incidents, sqlx::Error> {
        Incidents::load_with(store, site, causes, clusters, domains, now, true).await
    }

    /// As they were at `at` (the fleet at a past time): without Warning events, which are
    /// evidence of now.
    pub async fn load_at(
        store: &Store,
        site: &Site,
        causes: &[RootCauseRow],
        clusters: &[ClusterRow],
        domains: &[DomainRow],
        at: DateTime<Utc>,
    ) -> Result<Incidents, sqlx::Error> {
        Incidents::load_with(store, site, causes, clusters, domains, at, false).await
    }

    async fn load_with(
        store: &Store,
        site: &Site,
        causes: &[RootCauseRow],
        clusters: &[ClusterRow],
        domains: &[DomainRow],
        now: DateTime<Utc>,
        with_warnings: bool,
    ) -> Result<Incidents, sqlx::Error> {
        let ids: Vec<String> = causes.iter().map(|c| c.verdict.id.to_string()).collect();
        let object_ids: Vec<ObjectId> = match with_warnings {
            true => causes.iter().map(|c| c.verdict.id.clone()).collect(),
            false => Vec::new(),
        };
        let (entries, own_domains, warnings) = tokio::try_join!(
            store.problem_entries(&ids, now - FLAP_WINDOW, ENTRIES_COUNTED),
            store.domains_of(&ids),
            store.warnings_of(&object_ids)
        )?;
        let history = History {
            entries: &entries,
            own_domains: &own_domains,
            warnings: &warnings,
        };
        Ok(Incidents::build(
            site, causes, clusters, domains, history, now,
        ))
    }

    /// The root causes resolved within [`RESOLVED_WINDOW`] as incidents, leaving out those
    /// active again.
    pub fn recently_resolved(&self, resolved: &[ResolvedRow]) -> Vec<ResolvedIncident> {
        incidents::recently_resolved(
            &resolved.iter().map(resolved_cause).collect::<Vec<_>>(),
            self.active.iter().map(|view| view.incident.key.as_str()),
        )
    }

    pub fn build(
        site: &Site,
        causes: &[RootCauseRow],
        clusters: &[ClusterRow],
        domains: &[DomainRow],
        history: History,
        now: DateTime<Utc>,
    ) -> Incidents {
        let History {
            entries,
            own_domains,
            warnings,
        } = history;
        let labels: HashMap<&str, BTreeMap<String, String>> = clusters
            .iter()
            .map(|c| (c.name.as_str(), labels_of(c)))
            .collect();
        let blocked = blocked_domains(domains);
        let inputs: Vec<Cause> = causes
            .iter()
            .map(|row| Cause {
                id: row.verdict.id.to_string(),
                cluster: row.verdict.cluster.clone(),
                group: labels
                    .get(row.verdict.cluster.as_str())
                    .and_then(|l| l.get(&site.group_by))
                    .cloned()
                    .unwrap_or_else(|| "ungrouped".to_string()),
                state: row.verdict.state,
                since: row.verdict.since,
                cause: row.cause.clone(),
                reason: row.verdict.reason.clone(),
                affected: row.affected.clone(),
                blocks: blocked
                    .get(row.verdict.id.as_str())
                    .cloned()
                    .unwrap_or_default(),
            })
            .collect();
        let entries_of: HashMap<&str, &ProblemEntries> =
            entries.iter().map(|(id, e)| (id.as_str(), e)).collect();
        let by_id: HashMap<&str, &Cause> = inputs.iter().map(|c| (c.id.as_str(), c)).collect();
        let grouped = incidents::group(&inputs, &RingOrder::new(&site.group_order));
        let active = grouped
            .into_iter()
            .map(|incident| {
                let members: Vec<&Cause> = incident
                    .root_causes
                    .iter()
                    .filter_map(|id| by_id.get(id.as_str()).copied())
                    .collect();
                let severity = members
                    .iter()
                    .filter_map(|c| severity_of(site, c, &labels))
                    .min();
                let flap = members
                    .iter()
                    .filter_map(|c| incidents::flapping(entries_of.get(c.id.as_str())?))
                    .max_by_key(|f| f.times);
                let (contacts, owner_missing) = contacts_of(site, &incident, &members, own_domains);
                let members_warnings = warnings
                    .iter()
                    .filter(|(asked, _)| members.iter().any(|m| m.id == asked.as_str()))
                    .map(|(_, warning)| warning);
                IncidentView {
                    version_split: incidents::version_split(&incident, domains),
                    warnings: incidents::by_reason(members_warnings, incidents::REASONS_SHOWN),
                    contacts,
                    owner_missing,
                    causes: members.iter().copied().map(cause_link).collect(),
                    since_moment: Moment::of(incident.since, now),
                    anchor: format!("i-{}", slug(&incident.key)),
                    severity,
                    flap,
                    incident,
                }
            })
            .collect();
        Incidents {
            active,
            affected_total: incidents::affected_total(inputs.iter().map(|c| c.affected.as_slice())),
        }
    }
}

/// What the incidents read from the store beside the causes.
pub struct History<'a> {
    /// Each cause's entries into a problem state, for flapping.
    pub entries: &'a [(String, ProblemEntries)],
    /// The domains each cause object itself belongs to (its owner's).
    pub own_domains: &'a HashMap<String, Vec<String>>,
    /// Warning events of the causes and their pods, newest first, with the cause asked for.
    pub warnings: &'a [(ObjectId, Warning)],
}

/// Who to call: the failing component's domains first (its owner fixes it), then the domains
/// it blocks; and whether the component has no owner at all (a cluster that is itself the
/// cause is the platform's, never flagged).
fn contacts_of(
    site: &Site,
    incident: &Incident,
    members: &[&Cause],
    own_domains: &HashMap<String, Vec<String>>,
) -> (Vec<Contact>, bool) {
    let own: BTreeSet<&str> = members
        .iter()
        .filter_map(|c| own_domains.get(&c.id))
        .flatten()
        .map(String::as_str)
        .collect();
    let mut list = contacts(&site.domains, own.iter().copied());
    let cluster_itself =
        (members.first()).is_some_and(|c| crate::health::cluster_of_cluster_id(&c.id).is_some());
    let owner_missing = !cluster_itself && !list.iter().any(|c| c.owner.is_some());
    let blocked = incident
        .domains
        .iter()
        .map(|d| d.domain.as_str())
        .filter(|d| !own.contains(d));
    list.extend(contacts(&site.domains, blocked));
    (list, owner_missing)
}

fn labels_of(cluster: &ClusterRow) -> BTreeMap<String, String> {
    serde_json::from_value(cluster.labels.clone()).unwrap_or_default()
}

/// Root-cause id → the domain versions it keeps from being fully healthy.
fn blocked_domains(domains: &[DomainRow]) -> HashMap<&str, Vec<DomainVersion>> {
    let mut blocked: HashMap<&str, Vec<DomainVersion>> = HashMap::new();
    for row in domains {
        for blocker in &row.blockers {
            blocked.entry(blocker).or_default().push(DomainVersion {
                domain: row.domain.clone(),
                version: row.version.clone(),
                offered: row.offered.clone(),
            });
        }
    }
    blocked
}

/// What the first matching alert rule would page with.
fn severity_of(
    site: &Site,
    cause: &Cause,
    labels: &HashMap<&str, BTreeMap<String, String>>,
) -> Option<Severity> {
    let verdict = ObjectVerdict::new(
        cause.id.parse().ok()?,
        cause.state,
        cause.since,
        cause.reason.clone(),
        String::new(),
    );
    let candidate = Candidate {
        verdict: ObjectVerdict {
            cluster: cause.cluster.clone(),
            ..verdict
        },
        cause: cause.cause.clone(),
        affected_count: cause.affected.len(),
        affected_sample: Vec::new(),
        domains: cause.blocks.iter().map(|d| d.domain.clone()).collect(),
        cluster_labels: labels
            .get(cause.cluster.as_str())
            .cloned()
            .unwrap_or_default(),
    };
    rules::rule_for(&site.alert_rules, &candidate).map(|rule| rule.severity)
}

fn cause_link(cause: &Cause) -> CauseLink {
    CauseLink {
        cluster: cause.cluster.clone(),
        state: cause.state,
        label: label_of_id(&cause.id),
        href: href_of_id(&cause.id),
        problem_href: format!("/problems#{}", anchor(&cause.id)),
        // Besides itself, as the cause's card on /problems counts.
        affected: cause.affected.iter().filter(|id| **id != cause.id).count(),
    }
}

fn resolved_cause(row: &ResolvedRow) -> ResolvedCause {
    ResolvedCause {
        id: row.root_cause.clone(),
        cluster: row.cluster.clone(),
        state: row.state,
        since: row.since,
        cause: row.cause.clone(),
        reason: row.reason.clone(),
        resolved_at: row.resolved_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> Site {
        Site::from_config(
            &crate::config::from_yaml_str(
                "domains:
  - {name: gateway, select: {labels: {d: g}}, version: {from: chart_version, namespace: g, name: g}, owner: team-edge}
  - {name: tenants, select: {labels: {d: t}}, version: {from: chart_version, namespace: t, name: t}, owner: team-tenants}
  - {name: orphan, select: {labels: {d: o}}, version: {from: chart_version, namespace: o, name: o}}",
            )
            .unwrap(),
        )
    }

    fn cause(id: &str, cluster: &str) -> Cause {
        Cause {
            id: id.into(),
            cluster: cluster.into(),
            group: "prod".into(),
            state: State::Failed,
            since: None,
            cause: Default::default(),
            reason: "x".into(),
            affected: vec![],
            blocks: vec![],
        }
    }

    fn incident(kind: &str, name: &str, blocks: &[&str]) -> Incident {
        Incident {
            key: "k".into(),
            state: State::Failed,
            reason: "x".into(),
            kind: kind.into(),
            namespace: "ns".into(),
            name: name.into(),
            clusters: vec!["c".into()],
            root_causes: vec![],
            affected_total: 1,
            since: None,
            domains: blocks
                .iter()
                .map(|d| DomainVersion {
                    domain: d.to_string(),
                    version: None,
                    offered: None,
                })
                .collect(),
        }
    }

    #[test]
    fn the_failing_components_owner_comes_first_then_what_it_blocks() {
        let member = cause("c/Deployment/ns/api", "c");
        let own = HashMap::from([(member.id.clone(), vec!["gateway".to_string()])]);
        let (list, missing) = contacts_of(
            &site(),
            &incident("Deployment", "api", &["tenants", "gateway"]),
            &[&member],
            &own,
        );
        let domains: Vec<&str> = list.iter().map(|c| c.domain.as_str()).collect();
        assert_eq!(domains, ["gateway", "tenants"], "own first, each once");
        assert!(!missing);
    }

    #[test]
    fn a_component_without_an_owner_is_flagged_but_a_cluster_never_is() {
        let member = cause("c/Deployment/ns/api", "c");
        let own = HashMap::from([(member.id.clone(), vec!["orphan".to_string()])]);
        let (list, missing) = contacts_of(
            &site(),
            &incident("Deployment", "api", &["tenants"]),
            &[&member],
            &own,
        );
        assert!(missing, "its only domain names no owner");
        assert_eq!(list.len(), 1, "the blocked domain's owner is still given");
        let cluster = cause("c/Cluster//c", "c");
        let (_, missing) = contacts_of(
            &site(),
            &incident(crate::config::CLUSTER_KIND, "c", &[]),
            &[&cluster],
            &HashMap::new(),
        );
        assert!(!missing, "an unreachable cluster is the platform's");
    }
}
