//! Every root cause, worst first: what it is, since when, the classified reason, what it
//! affects, and the chain from each affected object to it. Answers "which node is the root".

use super::contacts::{Contact, contacts};
use super::incidents::{IncidentView, Incidents};
use super::object::CommitUrls;
use super::present::{Moment, ObjectItem, body_of, href_of_id, label_of_id};
use crate::health::{EdgeKind, PathsToRoot, State};
use crate::incidents::{RESOLVED_WINDOW, ResolvedIncident};
use crate::model::Kind;
use crate::store::{ObjectRecord, ObjectVerdict, RootCauseRow, Store};
use crate::web::error::ApiError;
use crate::web::freshness::Freshness;
use crate::web::scope::Scope;
use crate::web::state::Site;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::HashMap;

/// Affected objects listed per problem; the count is always complete.
const AFFECTED_SHOWN: usize = 200;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ProblemsView {
    pub generated_at: DateTime<Utc>,
    pub problems: Vec<Problem>,
    /// Distinct objects the root causes affect (each once), as `/api/v1/fleet` counts.
    pub affected_total: usize,
    /// Root causes grouped across clusters, most impact first.
    pub incidents: Vec<IncidentView>,
    /// Incidents whose every root cause cleared within the last 24 h, newest first.
    pub recently_resolved: Vec<ResolvedIncident>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Problem {
    #[serde(flatten)]
    pub verdict: ObjectVerdict,
    /// A root cause is its own root cause.
    pub root_causes: Vec<String>,
    pub affected_count: usize,
    pub affected: Vec<Affected>,
    pub revisions: Revisions,
    /// Owner, runbook and Slack channel of the domains it and what it affects belong to.
    pub contacts: Vec<Contact>,
    #[serde(skip)]
    pub href: String,
    #[serde(skip)]
    pub anchor: String,
    #[serde(skip)]
    pub since_moment: Option<Moment>,
    #[serde(skip)]
    pub by_state: Vec<(State, usize)>,
}

#[derive(Debug, Default, Serialize, utoipa::ToSchema)]
#[schema(as = CauseRevisions)]
pub struct Revisions {
    pub attempted: Option<String>,
    pub applied: Option<String>,
    /// The commits' pages, when the cause's source is a Git repository on a known forge.
    pub commit_urls: CommitUrls,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Affected {
    #[serde(flatten)]
    pub object: ObjectItem,
    /// Ids from this object to the root cause, both included.
    pub chain: Vec<String>,
    #[serde(skip)]
    pub links: Vec<ChainLink>,
}

#[derive(Debug, Serialize)]
pub struct ChainLink {
    pub label: String,
    pub href: String,
    pub state: Option<State>,
}

impl ProblemsView {
    /// The root causes `scope` sees, with what they affect that it sees (a chain through an
    /// object outside it skips that object).
    pub async fn load(
        store: &Store,
        site: &Site,
        scope: &Scope,
        now: DateTime<Utc>,
    ) -> Result<ProblemsView, ApiError> {
        let site = &scope.site(site);
        let (freshness, mut clusters) = Freshness::load(store, site, now).await?;
        clusters.retain(|c| scope.sees_cluster(&c.name));
        let causes = freshness
            .load_root_causes(store, store.root_causes().await?)
            .await?;
        let causes = scope.causes(causes);
        let mut wanted: Vec<String> = Vec::new();
        for cause in &causes {
            wanted.push(cause.verdict.id.to_string());
            wanted.extend(cause.affected.iter().take(AFFECTED_SHOWN).cloned());
        }
        wanted.sort();
        wanted.dedup();
        let mut records = by_id(freshness.records(store.objects_by_ids(&wanted).await?));
        // The causes' sources, for links from their revisions to the commits.
        let sources: Vec<String> = causes
            .iter()
            .filter_map(|c| source_id(records.get(c.verdict.id.as_str())?))
            .filter(|id| !records.contains_key(id))
            .collect();
        records.extend(by_id(
            freshness.records(store.objects_by_ids(&sources).await?),
        ));
        let mut problems: Vec<Problem> = causes
            .iter()
            .map(|cause| problem(cause, &records, site, now))
            .map(|problem| problem.seen_by(scope))
            .collect();
        fn impact(p: &Problem) -> (State, usize, &str) {
            (p.verdict.state, p.affected_count, p.verdict.id.as_str())
        }
        problems.sort_by(|a, b| crate::health::worst_first(impact(a), impact(b)));
        let (domains, resolved) = tokio::try_join!(
            store.domain_verdicts(),
            store.resolved_since(now - RESOLVED_WINDOW)
        )?;
        let domains = scope.domains(freshness.domain_rows(site, &clusters, domains));
        let incidents = Incidents::load(store, site, &causes, &clusters, &domains, now).await?;
        let resolved: Vec<_> = resolved
            .into_iter()
            .filter(|r| scope.sees_id(&r.root_cause))
            .collect();
        Ok(ProblemsView {
            generated_at: now,
            affected_total: incidents.affected_total,
            recently_resolved: incidents.recently_resolved(&resolved),
            incidents: incidents.active,
            problems,
        })
    }
}

impl Problem {
    /// Without the objects `scope` does not see along the chains.
    fn seen_by(mut self, scope: &Scope) -> Problem {
        if scope.is_everything() {
            return self;
        }
        self.root_causes = scope.ids(&self.root_causes);
        self.affected = std::mem::take(&mut self.affected)
            .into_iter()
            .map(|mut affected| {
                // One link per id of the chain: kept or dropped together.
                let seen: Vec<bool> = affected.chain.iter().map(|id| scope.sees_id(id)).collect();
                let mut kept = seen.iter();
                affected
                    .links
                    .retain(|_| kept.next().copied().unwrap_or(false));
                affected.chain = scope.ids(&affected.chain);
                affected.object = scope.item(affected.object);
                affected
            })
            .collect();
        self
    }
}

fn by_id(records: Vec<ObjectRecord>) -> HashMap<String, ObjectRecord> {
    records
        .into_iter()
        .map(|r| (r.verdict.id.to_string(), r))
        .collect()
}

/// The id of an object's source, as the engine resolved it (a HelmRelease's HelmChart).
fn source_id(record: &ObjectRecord) -> Option<String> {
    let edge = record.edges.iter().find(|e| e.kind == EdgeKind::Source)?;
    Some(edge.target.to_string())
}

fn problem(
    cause: &RootCauseRow,
    records: &HashMap<String, ObjectRecord>,
    site: &Site,
    now: DateTime<Utc>,
) -> Problem {
    let cause_id = cause.verdict.id.as_str();
    let shown: Vec<&ObjectRecord> = cause
        .affected
        .iter()
        .filter(|id| *id != cause_id)
        .take(AFFECTED_SHOWN)
        .filter_map(|id| records.get(id))
        .collect();
    let paths = PathsToRoot::new(
        cause_id,
        shown.iter().map(|r| (r.verdict.id.as_str(), &r.edges[..])),
    );
    let state_of = |id: &str| records.get(id).map(|r| r.verdict.state);
    let affected: Vec<Affected> = shown
        .iter()
        .map(|record| {
            let object = ObjectItem::new(record, now);
            let chain = paths.path(object.verdict.id.as_str());
            let links = chain
                .iter()
                .map(|id| ChainLink {
                    label: label_of_id(id),
                    href: href_of_id(id),
                    state: state_of(id),
                })
                .collect();
            Affected {
                object,
                chain,
                links,
            }
        })
        .collect();
    let mut by_state: Vec<(State, usize)> = State::BY_SEVERITY
        .into_iter()
        .map(|s| {
            let n = affected.iter().filter(|a| a.object.verdict.state == s);
            (s, n.count())
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    by_state.sort_by_key(|(s, _)| s.severity_rank());
    let cause_record = records.get(cause_id);
    let revisions = cause_record
        .and_then(|r| Some((r, body_of(r)?)))
        .map(|(record, o)| {
            let source = source_id(record)
                .and_then(|id| records.get(&id))
                .and_then(body_of)
                .filter(|s| s.kind == Kind::GitRepository);
            let link = |revision: &Option<String>| {
                let url = source.as_ref()?.spec.flux.url.as_deref()?;
                site.commit_links.commit_url(url, revision.as_deref()?)
            };
            Revisions {
                commit_urls: CommitUrls {
                    offered: None,
                    attempted: link(&o.status.flux.last_attempted_revision),
                    applied: link(&o.status.flux.last_applied_revision),
                },
                attempted: o.status.flux.last_attempted_revision.clone(),
                applied: o.status.flux.last_applied_revision.clone(),
            }
        })
        .unwrap_or_default();
    let touched = cause_record
        .into_iter()
        .chain(shown.iter().copied())
        .flat_map(|r| r.domains.iter().map(String::as_str));
    let contacts = contacts(&site.domains, touched);
    Problem {
        contacts,
        href: href_of_id(cause_id),
        anchor: anchor(cause_id),
        since_moment: Moment::of(cause.verdict.since, now),
        root_causes: vec![cause.verdict.id.to_string()],
        affected_count: cause.affected.iter().filter(|id| *id != cause_id).count(),
        verdict: cause.verdict.clone(),
        affected,
        revisions,
        by_state,
    }
}

/// An HTML id for a problem, so the fleet page can link straight to it.
pub fn anchor(id: &str) -> String {
    format!("p-{}", slug(id))
}

/// An id with everything but ASCII letters and digits turned into `-`, for HTML ids.
pub fn slug(id: &str) -> String {
    id.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}
