//! The object filters shared by `/objects` and `/api/v1/objects`: parsed from the query
//! string with messages that say what is wrong, and written back into links so every
//! filtered view has a URL. `state` may be repeated (any of them) and may be `not-healthy`.

use super::present::encode;
use crate::health::State;
use crate::model::Kind;
use crate::store::{ClusterRow, ObjectFilter, ObjectPage, Store};
use crate::web::error::ApiError;
use crate::web::freshness::Freshness;
use crate::web::scope::Scope;
use crate::web::state::Site;
use chrono::{DateTime, Utc};
use std::collections::HashMap;

pub const DEFAULT_LIMIT: i64 = 100;
pub const MAX_LIMIT: i64 = 1000;
/// Longest accepted search text; longer is certainly not a name.
const MAX_QUERY: usize = 253;
/// The `state` filter for every state but healthy.
pub const NOT_HEALTHY: &str = "not-healthy";

/// The filters as given (normalised), to rebuild links, and as the store wants them.
#[derive(Debug, Clone, Default)]
pub struct ObjectQuery {
    pub cluster: String,
    pub kind: String,
    pub namespace: String,
    /// As given (normalised): state names, or `not-healthy`.
    pub states: Vec<String>,
    pub domain: String,
    pub q: String,
    pub label: String,
    pub limit: i64,
    pub offset: i64,
}

impl ObjectQuery {
    pub fn parse(pairs: &[(String, String)], site: &Site) -> Result<ObjectQuery, ApiError> {
        let params: HashMap<String, String> = pairs.iter().cloned().collect();
        let params = &params;
        let get = |key: &str| {
            params
                .get(key)
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        let bad = |m: String| Err(ApiError::BadRequest(m));
        let mut query = ObjectQuery {
            cluster: get("cluster"),
            namespace: get("namespace"),
            q: get("q"),
            label: get("label"),
            ..ObjectQuery::default()
        };
        let kind = get("kind");
        if !kind.is_empty() {
            match kind.parse::<Kind>() {
                Ok(kind) => query.kind = kind.as_str().to_string(),
                Err(e) => return bad(e.to_string()),
            }
        }
        for (_, state) in pairs.iter().filter(|(key, _)| key == "state") {
            let state = state.trim();
            let name = match state {
                "" => continue,
                NOT_HEALTHY => NOT_HEALTHY,
                _ => match state.parse::<State>() {
                    Ok(state) => state.as_str(),
                    Err(e) => return bad(format!("{e}, or {NOT_HEALTHY}")),
                },
            };
            if !query.states.iter().any(|s| s == name) {
                query.states.push(name.to_string());
            }
        }
        let domain = get("domain");
        if !domain.is_empty() {
            if !site.domains.iter().any(|d| d.name == domain) {
                let known: Vec<&str> = site.domains.iter().map(|d| d.name.as_str()).collect();
                return bad(format!(
                    "unknown domain {domain:?} (one of: {})",
                    known.join(", ")
                ));
            }
            query.domain = domain;
        }
        if !query.label.is_empty() {
            label_pair(&query.label)?;
        }
        if query.q.len() > MAX_QUERY {
            return bad(format!("q is longer than {MAX_QUERY} characters"));
        }
        query.limit = number(params, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)?;
        query.offset = number(params, "offset", 0, 0, i64::MAX)?;
        Ok(query)
    }

    /// One page of the objects this query selects, as they read now: a state filter and
    /// the verdicts shown both judge each cluster's freshness at this moment.
    /// The objects `scope` sees that match, a page of them; `site` as the scope sees it.
    pub async fn page(
        &self,
        store: &Store,
        site: &Site,
        scope: &Scope,
        now: DateTime<Utc>,
    ) -> Result<ObjectPage, ApiError> {
        let (freshness, mut clusters) = Freshness::load(store, site, now).await?;
        clusters.retain(|c| scope.sees_cluster(&c.name));
        self.known_cluster(site, &clusters)?;
        let mut filter = self.filter(&clusters, &freshness)?;
        filter.within = scope.sql_pairs();
        let mut page = store.objects(&filter).await?;
        page.items = freshness.records(page.items);
        Ok(page)
    }

    /// A cluster filter names a configured or stored cluster: a typo is an error, as an
    /// unknown domain is, not an empty answer.
    fn known_cluster(&self, site: &Site, clusters: &[ClusterRow]) -> Result<(), ApiError> {
        let wanted = self.cluster.as_str();
        if wanted.is_empty()
            || site.cluster_order.iter().any(|c| c == wanted)
            || clusters.iter().any(|c| c.name == wanted)
        {
            return Ok(());
        }
        let mut known: Vec<&str> = site.cluster_order.iter().map(String::as_str).collect();
        known.extend(clusters.iter().map(|c| c.name.as_str()));
        known.sort_unstable();
        known.dedup();
        Err(ApiError::BadRequest(format!(
            "unknown cluster {wanted:?} (one of: {})",
            known.join(", ")
        )))
    }

    /// The store filter; a cluster-label filter becomes the list of matching clusters.
    fn filter(
        &self,
        clusters: &[ClusterRow],
        freshness: &Freshness,
    ) -> Result<ObjectFilter, ApiError> {
        let some = |s: &String| (!s.is_empty()).then(|| s.clone());
        let clusters = if self.label.is_empty() {
            None
        } else {
            let (key, value) = label_pair(&self.label)?;
            Some(
                clusters
                    .iter()
                    .filter(|c| c.labels.get(key).and_then(|v| v.as_str()) == Some(value))
                    .map(|c| c.name.clone())
                    .collect(),
            )
        };
        let states = (!self.states.is_empty()).then(|| {
            State::BY_SEVERITY
                .iter()
                .filter(|s| {
                    self.states.iter().any(|wanted| {
                        wanted == s.as_str() || (wanted == NOT_HEALTHY && **s != State::Healthy)
                    })
                })
                .map(|s| s.as_str().to_string())
                .collect()
        });
        Ok(ObjectFilter {
            clusters,
            cluster: some(&self.cluster),
            kind: some(&self.kind),
            namespace: some(&self.namespace),
            state: None,
            states,
            query: some(&self.q),
            domain: some(&self.domain),
            untrusted: freshness.untrusted_names(),
            within: None,
            limit: self.limit,
            offset: self.offset,
        })
    }

    /// The query string of this view at another offset (empty filters left out).
    /// Whether the filter is exactly this one state (for the page's select).
    pub fn is_only(&self, state: &str) -> bool {
        self.states.len() == 1 && self.states[0] == state
    }

    pub fn link(&self, offset: i64) -> String {
        let mut pairs: Vec<String> = [
            ("cluster", &self.cluster),
            ("label", &self.label),
            ("domain", &self.domain),
            ("kind", &self.kind),
            ("namespace", &self.namespace),
        ]
        .into_iter()
        .chain(self.states.iter().map(|s| ("state", s)))
        .chain([("q", &self.q)])
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect();
        if self.limit != DEFAULT_LIMIT {
            pairs.push(format!("limit={}", self.limit));
        }
        if offset > 0 {
            pairs.push(format!("offset={offset}"));
        }
        format!("/objects?{}", pairs.join("&"))
    }
}

/// `key=value` as a cluster-label filter.
pub fn label_pair(text: &str) -> Result<(&str, &str), ApiError> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() && !v.is_empty() => Ok((k, v)),
        _ => Err(ApiError::BadRequest(format!(
            "label {text:?} must be written key=value, e.g. ring=prod"
        ))),
    }
}

fn number(
    params: &HashMap<String, String>,
    key: &str,
    default: i64,
    min: i64,
    max: i64,
) -> Result<i64, ApiError> {
    match params.get(key).map(|v| v.trim()).filter(|v| !v.is_empty()) {
        None => Ok(default),
        Some(text) => match text.parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ if max == i64::MAX => Err(ApiError::BadRequest(format!(
                "{key} must be a whole number of at least {min}, not {text:?}"
            ))),
            _ => Err(ApiError::BadRequest(format!(
                "{key} must be a whole number from {min} to {max}, not {text:?}"
            ))),
        },
    }
}
