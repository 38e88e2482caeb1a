//! What one request may see (`web.scopes`), resolved once from its identity: everything, or
//! the union of its teams' grants (domains; objects on clusters a label selector picks, in
//! the namespaces listed). Views filter what they read through it, and the routes no view
//! filters yet are closed to team scopes ([`gate`]): a scope fails closed, never open.

use super::AppState;
use super::auth::Identity;
use super::error::ApiError;
use super::state::Site;
use super::views::present::ObjectItem;
use crate::alerts::AlertView;
use crate::alerts::silences::Silence;
use crate::config::namespace_matches;
use crate::store::{ClusterRow, DomainRow, RootCauseRow, Store};
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// No policy, or an admin.
    Everything,
    /// What the identity's teams grant (nothing for someone on no team).
    Teams(Vec<Grant>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub team: String,
    pub domains: BTreeSet<String>,
    /// The configured clusters the team's label selector picks.
    pub clusters: BTreeSet<String>,
    /// Namespace patterns; empty: every namespace.
    pub namespaces: Vec<String>,
}

impl Grant {
    fn sees_object(&self, cluster: &str, namespace: &str) -> bool {
        self.clusters.contains(cluster)
            && (self.namespaces.is_empty()
                || self
                    .namespaces
                    .iter()
                    .any(|p| namespace_matches(p, namespace)))
    }
}

impl Scope {
    pub fn of(identity: &Identity, site: &Site) -> Scope {
        let Some(policy) = &site.scopes else {
            return Scope::Everything;
        };
        if identity.is_among(&policy.admins) {
            return Scope::Everything;
        }
        let grants = policy
            .teams
            .iter()
            .filter(|team| identity.is_among(&team.members))
            .map(|team| Grant {
                team: team.name.clone(),
                domains: team.domains.iter().cloned().collect(),
                clusters: site
                    .cluster_labels
                    .iter()
                    .filter(|(_, labels)| {
                        team.clusters.iter().all(|(k, v)| labels.get(k) == Some(v))
                    })
                    .map(|(name, _)| name.clone())
                    .collect(),
                namespaces: team.namespaces.clone(),
            })
            .collect();
        Scope::Teams(grants)
    }

    pub fn is_everything(&self) -> bool {
        matches!(self, Scope::Everything)
    }

    fn grants(&self) -> &[Grant] {
        match self {
            Scope::Everything => &[],
            Scope::Teams(grants) => grants,
        }
    }

    pub fn sees_cluster(&self, cluster: &str) -> bool {
        self.is_everything() || self.grants().iter().any(|g| g.clusters.contains(cluster))
    }

    /// Whether every object of the cluster is in scope (so its stored totals are the scope's).
    pub fn sees_whole_cluster(&self, cluster: &str) -> bool {
        self.is_everything()
            || self
                .grants()
                .iter()
                .any(|g| g.clusters.contains(cluster) && g.namespaces.is_empty())
    }

    pub fn sees_object(&self, cluster: &str, namespace: &str) -> bool {
        self.is_everything()
            || self
                .grants()
                .iter()
                .any(|g| g.sees_object(cluster, namespace))
    }

    /// An object id (`cluster/Kind/namespace/name`, or a cluster's own `cluster/Cluster//name`).
    pub fn sees_id(&self, id: &str) -> bool {
        match crate::model::ObjectId::split(id) {
            Some((cluster, "Cluster", _, _)) => self.sees_cluster(cluster),
            Some((cluster, _, namespace, _)) => self.sees_object(cluster, namespace),
            None => self.is_everything(),
        }
    }

    /// An object list item without the root causes and domains the scope does not see.
    pub fn item(&self, mut item: ObjectItem) -> ObjectItem {
        if !self.is_everything() {
            item.root_causes.retain(|id| self.sees_id(id));
            item.domains.retain(|d| self.sees_domain(d));
        }
        item
    }

    /// An alert as the scope sees it: on the clusters where it sees the alert's root cause,
    /// with the affected objects and domains it sees (its count then of those in the sample);
    /// None when it sees the root cause nowhere.
    pub fn alert(&self, mut alert: AlertView) -> Option<AlertView> {
        if self.is_everything() {
            return Some(alert);
        }
        let namespace = alert
            .root_cause
            .parts()
            .map(|(_, _, ns, _)| ns.to_string())?;
        let is_cluster = crate::health::cluster_of_cluster_id(alert.root_cause.as_str()).is_some();
        let seen = |cluster: &String| match is_cluster {
            true => self.sees_cluster(cluster),
            false => self.sees_object(cluster, &namespace),
        };
        let clusters: Vec<String> = alert.clusters.iter().filter(|c| seen(c)).cloned().collect();
        let first = clusters.first()?.clone();
        if first != alert.cluster {
            alert.root_cause = crate::health::same_cause_on(alert.root_cause.as_str(), &first);
            alert.cluster = first;
        }
        alert.clusters = clusters;
        let sample: Vec<String> =
            serde_json::from_value(alert.affected_sample.clone()).unwrap_or_default();
        let sample = self.ids(&sample);
        alert.affected_count = i32::try_from(sample.len()).unwrap_or(i32::MAX);
        alert.affected_sample = serde_json::json!(sample);
        let domains: Vec<String> =
            serde_json::from_value(alert.domains.clone()).unwrap_or_default();
        let domains: Vec<&String> = domains.iter().filter(|d| self.sees_domain(d)).collect();
        alert.domains = serde_json::json!(domains);
        Some(alert)
    }

    /// Whether the scope sees everything a silence names.
    pub fn sees_silence(&self, silence: &Silence) -> bool {
        silence
            .root_cause
            .as_ref()
            .is_none_or(|id| self.sees_id(id))
            && silence.domain.as_ref().is_none_or(|d| self.sees_domain(d))
            && silence
                .cluster
                .as_ref()
                .is_none_or(|c| self.sees_cluster(c))
            && (self.is_everything()
                || silence.root_cause.is_some()
                || silence.domain.is_some()
                || silence.cluster.is_some())
    }

    /// The ids among `ids` the scope sees.
    pub fn ids(&self, ids: &[String]) -> Vec<String> {
        ids.iter().filter(|id| self.sees_id(id)).cloned().collect()
    }

    pub fn sees_domain(&self, domain: &str) -> bool {
        self.is_everything() || self.grants().iter().any(|g| g.domains.contains(domain))
    }

    /// For SQL: `(cluster, LIKE pattern)` pairs covering the scope; None: everything.
    pub fn sql_pairs(&self) -> Option<(Vec<String>, Vec<String>)> {
        if self.is_everything() {
            return None;
        }
        let mut clusters = Vec::new();
        let mut patterns = Vec::new();
        for grant in self.grants() {
            let namespaces: Vec<String> = match grant.namespaces.is_empty() {
                true => vec!["%".to_string()],
                false => grant.namespaces.iter().map(|p| like_pattern(p)).collect(),
            };
            for cluster in &grant.clusters {
                for pattern in &namespaces {
                    clusters.push(cluster.clone());
                    patterns.push(pattern.clone());
                }
            }
        }
        Some((clusters, patterns))
    }

    /// The site as the scope sees it: only its clusters and domains.
    /// Borrowed as it is for those who see everything (every page asks, on every request).
    pub fn site<'a>(&self, site: &'a Site) -> Cow<'a, Site> {
        if self.is_everything() {
            return Cow::Borrowed(site);
        }
        let mut seen = site.clone();
        seen.cluster_order.retain(|c| self.sees_cluster(c));
        seen.cluster_labels.retain(|c, _| self.sees_cluster(c));
        seen.domains.retain(|d| self.sees_domain(&d.name));
        seen.kube_contexts.retain(|c, _| self.sees_cluster(c));
        Cow::Owned(seen)
    }
}

impl Scope {
    /// Cluster rows as the scope sees them: only its clusters, and for a cluster it sees only
    /// some namespaces of, the totals of those (counted now: a past total by namespace is not
    /// kept, so `past` is refused for such a scope); controller ids outside it dropped.
    pub async fn clusters(
        &self,
        store: &Store,
        mut rows: Vec<ClusterRow>,
        past: bool,
    ) -> Result<Vec<ClusterRow>, ApiError> {
        if self.is_everything() {
            return Ok(rows);
        }
        rows.retain(|row| self.sees_cluster(&row.name));
        let partial: Vec<String> = rows
            .iter()
            .filter(|row| !self.sees_whole_cluster(&row.name))
            .map(|row| row.name.clone())
            .collect();
        if !partial.is_empty() {
            if past {
                return Err(ApiError::Forbidden(
                    "the fleet at a past time counts whole clusters; your scope sees only some \
                     namespaces of them"
                        .into(),
                ));
            }
            let (clusters, patterns) = self.sql_pairs().unwrap_or_default();
            let counts = store.state_counts_within(&clusters, &patterns).await?;
            for row in rows.iter_mut().filter(|r| partial.contains(&r.name)) {
                row.state_counts = counts.get(&row.name).cloned().unwrap_or_default();
            }
        }
        for row in &mut rows {
            if let Value::Array(ids) = &mut row.controllers {
                ids.retain(|id| id.as_str().is_some_and(|id| self.sees_id(id)));
            }
        }
        Ok(rows)
    }

    /// Domain rows of the scope's domains on its clusters, blockers outside it dropped.
    pub fn domains(&self, mut rows: Vec<DomainRow>) -> Vec<DomainRow> {
        if self.is_everything() {
            return rows;
        }
        rows.retain(|row| self.sees_domain(&row.domain) && self.sees_cluster(&row.cluster));
        for row in &mut rows {
            row.blockers.retain(|id| self.sees_id(id));
        }
        rows
    }

    /// Root causes the scope sees, with only the affected objects it sees.
    pub fn causes(&self, mut rows: Vec<RootCauseRow>) -> Vec<RootCauseRow> {
        if self.is_everything() {
            return rows;
        }
        rows.retain(|row| self.sees_id(row.verdict.id.as_str()));
        for row in &mut rows {
            row.affected.retain(|id| self.sees_id(id));
        }
        rows
    }
}

/// A namespace pattern as SQL `LIKE` reads it (`payments-*` → `payments-%`); names hold no
/// `%` or `_` (checked when the configuration is read) but are escaped all the same.
fn like_pattern(pattern: &str) -> String {
    let (name, any_rest) = match pattern.strip_suffix('*') {
        Some(prefix) => (prefix, true),
        None => (pattern, false),
    };
    let escaped = name
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    match any_rest {
        true => format!("{escaped}_%"),
        false => escaped,
    }
}

/// The routes whose views filter by scope. Every other route answers a team scope with 403:
/// a route added later is closed to teams until its view filters.
pub const SCOPED_ROUTES: [&str; 35] = [
    "/",
    "/fragments/fleet",
    "/clusters",
    "/clusters/{name}",
    "/problems",
    "/alerts",
    "/fragments/problems",
    "/domains",
    "/domains/{name}",
    "/domains/{name}/rollouts",
    "/domains/{name}/rollouts/{version}",
    "/domains/{name}/delivery",
    "/objects",
    "/objects/{cluster}/{kind}/{namespace}/{name}",
    "/owner/{cluster}/{kind}/{namespace}/{name}",
    "/impact/{cluster}/{kind}/{namespace}/{name}",
    "/fragments/logs/{cluster}/{namespace}/{pod}/{container}",
    "/actions/{cluster}/{kind}/{namespace}/{name}/{action}",
    "/api/v1/fleet",
    "/api/v1/clusters",
    "/api/v1/clusters/{name}",
    "/api/v1/problems",
    "/api/v1/alerts",
    "/api/v1/silences",
    "/api/v1/domains",
    "/api/v1/domains/{name}",
    "/api/v1/domains/{name}/wait",
    "/api/v1/domains/{name}/rollouts",
    "/api/v1/domains/{name}/rollouts/{version}",
    "/api/v1/domains/{name}/delivery",
    "/api/v1/objects",
    "/api/v1/objects/{cluster}/{kind}/{namespace}/{name}",
    "/api/v1/owner",
    "/api/v1/impact",
    "/api/v1/openapi.json",
];

/// Puts the request's [`Scope`] beside its identity, and closes to team scopes the routes
/// that do not filter by scope.
pub async fn gate(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let Some(identity) = request.extensions().get::<Identity>() else {
        return next.run(request).await; // the open routes: probes, assets, signing in and out
    };
    let scope = Scope::of(identity, &state.site);
    if !scope.is_everything() {
        let pattern = request
            .extensions()
            .get::<MatchedPath>()
            .map(|p| p.as_str().to_string())
            .unwrap_or_default();
        if !SCOPED_ROUTES.contains(&pattern.as_str()) {
            let path = request.uri().path().to_string();
            return ApiError::Forbidden(format!(
                "{path} shows the whole fleet: only admins see it while web.scopes is in force"
            ))
            .respond_for(&path);
        }
    }
    request.extensions_mut().insert(scope);
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::oidc::Person;

    fn site() -> Site {
        let config: crate::config::Config = crate::config::from_yaml_str(
            "clusters:
  - {name: prod-1, labels: {ring: prod}}
  - {name: prod-2, labels: {ring: prod}}
  - {name: dev-1, labels: {ring: dev}}
web:
  auth: {mode: tokens, tokens: [{name: ci, sha256: 5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8}]}
  scopes:
    admins: {groups: [platform]}
    teams:
      - {name: pay, members: {groups: [pay]}, clusters: {ring: prod}, namespaces: [payments, 'pay-*']}
      - {name: dev, members: {users: [dee]}, clusters: {ring: dev}}
",
        )
        .unwrap();
        Site::from_config(&config)
    }

    fn person(name: &str, groups: &[&str]) -> Identity {
        Identity::Person(Person {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        })
    }

    #[test]
    fn admins_see_everything_teams_their_grants_and_others_nothing() {
        let site = site();
        assert!(Scope::of(&person("a", &["platform"]), &site).is_everything());
        let pay = Scope::of(&person("p", &["pay"]), &site);
        assert!(pay.sees_object("prod-1", "payments") && pay.sees_object("prod-2", "pay-db"));
        assert!(!pay.sees_object("prod-1", "pay") && !pay.sees_object("prod-1", "flux-system"));
        assert!(!pay.sees_object("dev-1", "payments"), "not its clusters");
        assert!(
            !pay.sees_object("prod-1", ""),
            "no cluster-scoped objects with namespaces"
        );
        assert!(pay.sees_cluster("prod-1") && !pay.sees_whole_cluster("prod-1"));
        assert!(pay.sees_id("prod-1/Kustomization/payments/app"));
        assert!(pay.sees_id("prod-2/Cluster//prod-2") && !pay.sees_id("dev-1/Cluster//dev-1"));
        let both = Scope::of(&person("dee", &["pay"]), &site);
        assert!(both.sees_whole_cluster("dev-1") && both.sees_object("dev-1", ""));
        let nobody = Scope::of(&Identity::Token("ci".into()), &site);
        assert_eq!(nobody, Scope::Teams(vec![]));
        assert!(!nobody.sees_cluster("prod-1") && !nobody.sees_domain("x"));
        assert_eq!(nobody.sql_pairs(), Some((vec![], vec![])));
    }

    /// What the audit trail records at a start that changed it (no secret in it).
    #[test]
    fn the_policy_says_who_sees_what() {
        let policy = site().policy();
        assert!(policy.starts_with("mode tokens; tokens: ci"), "{policy}");
        assert!(
            policy.contains("; scopes: admins group platform"),
            "{policy}"
        );
        assert!(
            policy.contains(
                "; team pay (group pay): domains none, clusters ring=prod, namespaces payments, pay-*"
            ),
            "{policy}"
        );
        assert!(
            policy
                .contains("; team dev (user dee): domains none, clusters ring=dev, namespaces all")
        );
        assert!(!policy.contains("5e884898"), "never a hash");
    }

    #[test]
    fn sql_pairs_cover_each_cluster_with_each_pattern() {
        let pay = Scope::of(&person("p", &["pay"]), &site());
        let (clusters, patterns) = pay.sql_pairs().unwrap();
        assert_eq!(clusters, ["prod-1", "prod-1", "prod-2", "prod-2"]);
        assert_eq!(patterns, ["payments", "pay-_%", "payments", "pay-_%"]);
        assert_eq!(like_pattern("a_b"), "a\\_b");
        let all = site();
        let everything = Scope::Everything.site(&all);
        assert!(
            matches!(everything, Cow::Borrowed(_)),
            "no copy for those who see all"
        );
        let seen = pay.site(&all);
        assert_eq!(seen.cluster_order, ["prod-1", "prod-2"]);
    }
}
