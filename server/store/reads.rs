//! The queries the web and the API read. Every filter is a bind parameter; nothing is
//! formatted into SQL.

use super::clusters::StoredCluster;
use super::decode::{Key, Stored};
use super::objects::Columns;
use super::rollups::{StoredDomain, StoredRootCause};
use super::verdict::ObjectVerdict;
use super::{ClusterRow, DomainRow, ObjectKey, RootCauseRow, Store};
use crate::health::{ObjectEdge, State};
use crate::model::{Kind, ObjectId};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use std::collections::{BTreeMap, HashMap};

/// An `objects` row: the object's verdict and what the pages read with it.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectRecord {
    pub verdict: ObjectVerdict,
    pub root_causes: Value,
    pub domains: Vec<String>,
    pub body: Value,
    pub updated_at: DateTime<Utc>,
    /// What it waits on, as the engine walked it (sorted by kind, then target).
    pub edges: Json<Vec<ObjectEdge>>,
}

/// An `objects` row as the query macros read it, before its kind and state are read as the
/// engine's (a bad one names the row).
pub(super) struct StoredObject {
    pub cluster: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub state: String,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub message: String,
    pub root_causes: Value,
    pub domains: Vec<String>,
    /// As stored, text: a value that is not JSON names its row ([`Stored::json`]).
    pub body: String,
    pub updated_at: DateTime<Utc>,
    /// As text: a value that is not a list of edges names its row ([`Stored::json`]).
    pub edges: String,
}

impl TryFrom<StoredObject> for ObjectRecord {
    type Error = sqlx::Error;

    fn try_from(row: StoredObject) -> Result<ObjectRecord, sqlx::Error> {
        let stored = Stored::new(
            "objects",
            Key([&row.cluster, &row.kind, &row.namespace, &row.name]),
        );
        let kind: Kind = stored.parsed("kind", &row.kind)?;
        let state = stored.parsed("state", &row.state)?;
        let id = ObjectId::new(&row.cluster, kind, &row.namespace, &row.name);
        Ok(ObjectRecord {
            verdict: ObjectVerdict::new(id, state, row.since, row.reason, row.message),
            root_causes: row.root_causes,
            domains: row.domains,
            body: stored.json("body", &row.body)?,
            updated_at: row.updated_at,
            edges: Json(stored.json("edges", &row.edges)?),
        })
    }
}

/// Reads stored rows as their typed records; the first bad one fails the read.
pub(crate) fn typed<S, T: TryFrom<S, Error = sqlx::Error>>(
    rows: Vec<S>,
) -> Result<Vec<T>, sqlx::Error> {
    rows.into_iter().map(T::try_from).collect()
}

#[derive(Debug, Clone, PartialEq)]
pub struct TransitionRecord {
    pub from_state: Option<State>,
    pub to_state: State,
    pub reason: String,
    pub message: String,
    pub at: DateTime<Utc>,
}

struct StoredTransition {
    id: i64,
    from_state: Option<String>,
    to_state: String,
    reason: String,
    message: String,
    at: DateTime<Utc>,
}

impl TryFrom<StoredTransition> for TransitionRecord {
    type Error = sqlx::Error;

    fn try_from(row: StoredTransition) -> Result<TransitionRecord, sqlx::Error> {
        let stored = Stored::new("transitions", row.id);
        Ok(TransitionRecord {
            from_state: stored.parsed_optional("from_state", row.from_state.as_deref())?,
            to_state: stored.parsed("to_state", &row.to_state)?,
            reason: row.reason,
            message: row.message,
            at: row.at,
        })
    }
}

/// Filters for the objects list; `None` means "any".
#[derive(Debug, Clone, Default)]
pub struct ObjectFilter {
    /// Any of these clusters (from a cluster-label filter); `None` means any cluster.
    pub clusters: Option<Vec<String>>,
    pub cluster: Option<String>,
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub state: Option<String>,
    /// Any of these states (`None` means any state).
    pub states: Option<Vec<String>>,
    /// Substring of the name, case-insensitive.
    pub query: Option<String>,
    /// Member of this domain.
    pub domain: Option<String>,
    /// Clusters whose data cannot be trusted now (`web::Freshness`): their objects match a
    /// state filter as `unverifiable`, whatever was stored.
    pub untrusted: Vec<String>,
    /// Only objects a scope sees: (cluster, namespace `LIKE` pattern) pairs; None: any.
    pub within: Option<(Vec<String>, Vec<String>)>,
    pub limit: i64,
    pub offset: i64,
}

#[derive(Debug, Clone)]
pub struct ObjectPage {
    pub items: Vec<ObjectRecord>,
    pub total: i64,
}

/// The objects list's filter ($1 to $11), written once for the page and its count: the query
/// macros need their SQL as literals, so both queries are built around this text here.
macro_rules! filtered_objects {
    ($query:ident!($($record:ident,)? $select:literal, $tail:literal), $filter:expr $(, $more:expr)*) => {
        sqlx::$query!(
            $($record,)?
            $select
                + "
             FROM objects
             WHERE ($1::text IS NULL OR cluster = $1) AND ($2::text IS NULL OR kind = $2)
               AND ($3::text IS NULL OR namespace = $3)
               AND ($4::text IS NULL OR (state = $4 AND NOT cluster = ANY($9::text[]))
                    OR ($4 = 'unverifiable' AND cluster = ANY($9::text[])))
               AND ($5::text IS NULL OR strpos(lower(name), lower($5)) > 0)
               AND ($6::text IS NULL OR domains @> ARRAY[$6]) AND ($7::text[] IS NULL OR cluster = ANY($7))
               AND ($8::text[] IS NULL OR (state = ANY($8) AND NOT cluster = ANY($9::text[]))
                    OR ('unverifiable' = ANY($8) AND cluster = ANY($9::text[])))
               AND ($10::text[] IS NULL OR EXISTS (
                    SELECT 1 FROM unnest($10::text[], $11::text[]) AS g(c, ns)
                    WHERE g.c = cluster AND namespace LIKE g.ns))
             "
                + $tail,
            $filter.cluster,
            $filter.kind,
            $filter.namespace,
            $filter.state,
            $filter.query,
            $filter.domain,
            $filter.clusters.as_deref(),
            $filter.states.as_deref(),
            &$filter.untrusted,
            $filter.within.as_ref().map(|w| w.0.as_slice()),
            $filter.within.as_ref().map(|w| w.1.as_slice()),
            $($more,)*
        )
    };
}

impl Store {
    /// Objects by state on each cluster, counting only those in a namespace matching one of
    /// the cluster's `LIKE` patterns (`pairs`: a cluster and a pattern, each pair once): a
    /// scope's own totals.
    pub async fn state_counts_within(
        &self,
        clusters: &[String],
        patterns: &[String],
    ) -> Result<BTreeMap<String, crate::health::StateCounts>, sqlx::Error> {
        let rows = sqlx::query!(
            r#"SELECT o.cluster AS "cluster!", o.state AS "state!", count(*) AS "count!"
               FROM objects o
               WHERE EXISTS (SELECT 1 FROM unnest($1::text[], $2::text[]) AS g(c, ns)
                             WHERE g.c = o.cluster AND o.namespace LIKE g.ns)
               GROUP BY o.cluster, o.state"#,
            clusters,
            patterns,
        )
        .fetch_all(self.pool())
        .await?;
        let mut counts: BTreeMap<String, crate::health::StateCounts> = BTreeMap::new();
        for row in rows {
            let state: State = row
                .state
                .parse()
                .map_err(|e: String| sqlx::Error::Decode(e.into()))?;
            let total = counts.entry(row.cluster).or_default();
            *total.0.entry(state).or_default() += row.count as u64;
        }
        Ok(counts)
    }

    pub async fn clusters(&self) -> Result<Vec<ClusterRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredCluster,
            r#"SELECT name, labels, last_good, error, kind_errors, state_counts::text AS "state_counts!", controllers, updated_at
             FROM clusters ORDER BY name"#
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    pub async fn domain_verdicts(&self) -> Result<Vec<DomainRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredDomain,
            r#"SELECT domain, cluster, version, offered, state, fully_healthy, objects, healthy, blockers::text AS "blockers!"
             FROM domain_verdicts ORDER BY domain, cluster"#
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    pub async fn root_causes(&self) -> Result<Vec<RootCauseRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredRootCause,
            r#"SELECT id, state, since, reason, message, cause::text AS "cause!", affected::text AS "affected!" FROM root_causes
             ORDER BY jsonb_array_length(affected) DESC, id"#
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    pub async fn objects(&self, filter: &ObjectFilter) -> Result<ObjectPage, sqlx::Error> {
        let rows = filtered_objects!(
            query_as!(
                StoredObject,
                r#"SELECT cluster, kind, namespace, name, state, since, reason, message, root_causes, domains, body, updated_at, edges::text AS "edges!""#,
                "ORDER BY cluster, kind, namespace, name LIMIT $12 OFFSET $13"
            ),
            filter,
            filter.limit,
            filter.offset
        )
        .fetch_all(self.pool())
        .await?;
        // A count of its own rather than `count(*) OVER ()`, which gives no total past the
        // last page.
        let total = filtered_objects!(query_scalar!(r#"SELECT count(*) AS "total!""#, ""), filter)
            .fetch_one(self.pool())
            .await?;
        Ok(ObjectPage {
            items: typed(rows)?,
            total,
        })
    }

    /// The ids of every object stored of these clusters, by cluster.
    pub async fn object_ids_on(
        &self,
        clusters: &[String],
    ) -> Result<BTreeMap<String, Vec<String>>, sqlx::Error> {
        let rows = sqlx::query!(
            "SELECT cluster, kind, namespace, name FROM objects WHERE cluster = ANY($1)",
            clusters,
        )
        .fetch_all(self.pool())
        .await?;
        let mut ids: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for row in rows {
            let stored = Stored::new(
                "objects",
                Key([&row.cluster, &row.kind, &row.namespace, &row.name]),
            );
            let kind: Kind = stored.parsed("kind", &row.kind)?;
            let id = ObjectId::new(&row.cluster, kind, &row.namespace, &row.name);
            ids.entry(row.cluster).or_default().push(id.into_string());
        }
        Ok(ids)
    }

    pub async fn object(&self, key: &ObjectKey) -> Result<Option<ObjectRecord>, sqlx::Error> {
        let row = sqlx::query_as!(
            StoredObject,
            r#"SELECT cluster, kind, namespace, name, state, since, reason, message, root_causes, domains, body, updated_at, edges::text AS "edges!"
             FROM objects
             WHERE cluster = $1 AND kind = $2 AND namespace = $3 AND name = $4"#,
            key.cluster,
            key.kind.as_str(),
            key.namespace,
            key.name,
        )
        .fetch_optional(self.pool())
        .await?;
        row.map(ObjectRecord::try_from).transpose()
    }

    /// Newest first.
    pub async fn transitions(
        &self,
        key: &ObjectKey,
        limit: i64,
    ) -> Result<Vec<TransitionRecord>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredTransition,
            "SELECT id, from_state, to_state, reason, message, at FROM transitions
             WHERE cluster = $1 AND kind = $2 AND namespace = $3 AND name = $4
             ORDER BY at DESC, id DESC LIMIT $5",
            key.cluster,
            key.kind.as_str(),
            key.namespace,
            key.name,
            limit,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    pub async fn domain_verdicts_of(&self, domain: &str) -> Result<Vec<DomainRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredDomain,
            r#"SELECT domain, cluster, version, offered, state, fully_healthy, objects, healthy, blockers::text AS "blockers!"
             FROM domain_verdicts WHERE domain = $1 ORDER BY cluster"#,
            domain,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    pub async fn root_causes_by_ids(
        &self,
        ids: &[String],
    ) -> Result<Vec<RootCauseRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredRootCause,
            r#"SELECT id, state, since, reason, message, cause::text AS "cause!", affected::text AS "affected!" FROM root_causes
             WHERE id = ANY($1) ORDER BY id"#,
            ids,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    /// The objects with these ids (`cluster/Kind/namespace/name`); unknown ids are skipped.
    pub async fn objects_by_ids(&self, ids: &[String]) -> Result<Vec<ObjectRecord>, sqlx::Error> {
        let keys: Vec<ObjectKey> = ids.iter().filter_map(|id| key_of_id(id)).collect();
        let columns = Columns::of(keys.iter());
        let rows = sqlx::query_as!(
            StoredObject,
            r#"SELECT cluster, kind, namespace, name, state, since, reason, message, root_causes, domains, body, updated_at, edges::text AS "edges!"
             FROM objects o
             JOIN UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) AS t(c, k, ns, n)
               ON o.cluster = t.c AND o.kind = t.k AND o.namespace = t.ns AND o.name = t.n
             ORDER BY cluster, kind, namespace, name"#,
            &columns.cluster as &[&str],
            &columns.kind as &[&str],
            &columns.namespace as &[&str],
            &columns.name as &[&str],
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    /// The domains each of these objects belongs to, by id (`cluster/Kind/namespace/name`);
    /// unknown ids are left out. Light: the incidents ask it for every root cause.
    pub async fn domains_of(
        &self,
        ids: &[String],
    ) -> Result<HashMap<String, Vec<String>>, sqlx::Error> {
        let keys: Vec<ObjectKey> = ids.iter().filter_map(|id| key_of_id(id)).collect();
        let columns = Columns::of(keys.iter());
        let rows = sqlx::query!(
            r#"SELECT cluster, kind, namespace, name, domains
             FROM objects o
             JOIN UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) AS t(c, k, ns, n)
               ON o.cluster = t.c AND o.kind = t.k AND o.namespace = t.ns AND o.name = t.n"#,
            &columns.cluster as &[&str],
            &columns.kind as &[&str],
            &columns.namespace as &[&str],
            &columns.name as &[&str],
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let id = [row.cluster, row.kind, row.namespace, row.name].join("/");
                (id, row.domains)
            })
            .collect())
    }

    /// One cluster's objects of these kinds (the Flux objects and controllers for its page).
    pub async fn objects_of_kinds(
        &self,
        cluster: &str,
        kinds: &[&str],
    ) -> Result<Vec<ObjectRecord>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredObject,
            r#"SELECT cluster, kind, namespace, name, state, since, reason, message, root_causes, domains, body, updated_at, edges::text AS "edges!"
             FROM objects WHERE cluster = $1 AND kind = ANY($2)
             ORDER BY kind, namespace, name"#,
            cluster,
            kinds as &[&str],
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }
}

/// Splits `cluster/Kind/namespace/name` into a key; None when it has not four parts or the
/// kind is not one fleetglass writes, spelled as it writes it (no such object is stored).
pub fn key_of_id(id: &str) -> Option<ObjectKey> {
    let (cluster, kind, namespace, name) = ObjectId::split(id)?;
    let kind = kind.parse::<Kind>().ok().filter(|k| k.as_str() == kind)?;
    Some(ObjectKey {
        cluster: cluster.to_string(),
        kind,
        namespace: namespace.to_string(),
        name: name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_a_key_only_with_its_kind_spelled_as_fleetglass_writes_it() {
        let key = key_of_id("c/HelmRelease/apps/a/b").expect("a key");
        assert_eq!(
            (key.cluster.as_str(), key.kind, key.namespace.as_str()),
            ("c", Kind::HelmRelease, "apps")
        );
        assert_eq!(key.name, "a/b", "the name is the rest, slashes and all");
        assert_eq!(key_of_id("c/helmrelease/apps/a"), None);
        assert_eq!(key_of_id("c/Widget/apps/a"), None);
        assert_eq!(key_of_id("c/HelmRelease/a"), None);
    }
}
