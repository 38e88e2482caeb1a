//! The queries the web and the API read. Every filter is a bind parameter; nothing is
//! formatted into SQL.

use super::decode::{Stored, object_id};
use super::{ClusterRow, DomainRow, ObjectKey, RootCauseRow, Store};
use crate::health::{ObjectEdge, State};
use crate::model::{Kind, ObjectId};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct ObjectRecord {
    pub cluster: String,
    pub kind: Kind,
    pub namespace: String,
    pub name: String,
    pub state: State,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub message: String,
    pub root_causes: Value,
    pub domains: Vec<String>,
    pub body: Value,
    pub updated_at: DateTime<Utc>,
    /// What it waits on, as the engine walked it (sorted by kind, then target).
    pub edges: Json<Vec<ObjectEdge>>,
}

impl ObjectRecord {
    pub fn id(&self) -> ObjectId {
        ObjectId::new(&self.cluster, self.kind, &self.namespace, &self.name)
    }
}

impl FromRow<'_, PgRow> for ObjectRecord {
    fn from_row(row: &PgRow) -> Result<Self, sqlx::Error> {
        let stored = Stored {
            table: "objects",
            row,
            id: object_id,
        };
        Ok(ObjectRecord {
            cluster: row.try_get("cluster")?,
            kind: stored.parsed("kind")?,
            namespace: row.try_get("namespace")?,
            name: row.try_get("name")?,
            state: stored.parsed("state")?,
            since: row.try_get("since")?,
            reason: row.try_get("reason")?,
            message: row.try_get("message")?,
            root_causes: row.try_get("root_causes")?,
            domains: row.try_get("domains")?,
            body: row.try_get("body")?,
            updated_at: row.try_get("updated_at")?,
            edges: row.try_get("edges")?,
        })
    }
}

/// The columns of an `ObjectRecord`, in order.
pub(super) const OBJECT_COLUMNS: &str = "cluster, kind, namespace, name, state, since, reason, message, root_causes, domains, body, updated_at, edges";

#[derive(Debug, Clone, PartialEq)]
pub struct TransitionRecord {
    pub from_state: Option<State>,
    pub to_state: State,
    pub reason: String,
    pub message: String,
    pub at: DateTime<Utc>,
}

impl FromRow<'_, PgRow> for TransitionRecord {
    fn from_row(row: &PgRow) -> Result<Self, sqlx::Error> {
        let stored = Stored {
            table: "transitions",
            row,
            id: |row: &PgRow| {
                row.try_get::<i64, _>("id")
                    .map_or_else(|_| "?".to_string(), |id| id.to_string())
            },
        };
        Ok(TransitionRecord {
            from_state: stored.parsed_optional("from_state")?,
            to_state: stored.parsed("to_state")?,
            reason: row.try_get("reason")?,
            message: row.try_get("message")?,
            at: row.try_get("at")?,
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
    pub limit: i64,
    pub offset: i64,
}

#[derive(Debug, Clone)]
pub struct ObjectPage {
    pub items: Vec<ObjectRecord>,
    pub total: i64,
}

impl Store {
    pub async fn clusters(&self) -> Result<Vec<ClusterRow>, sqlx::Error> {
        sqlx::query_as("SELECT name, labels, last_good, error, kind_errors, state_counts, controllers, updated_at FROM clusters ORDER BY name")
            .fetch_all(self.pool())
            .await
    }

    pub async fn domain_verdicts(&self) -> Result<Vec<DomainRow>, sqlx::Error> {
        sqlx::query_as(
            "SELECT domain, cluster, version, state, fully_healthy, objects, healthy, blockers
             FROM domain_verdicts ORDER BY domain, cluster",
        )
        .fetch_all(self.pool())
        .await
    }

    pub async fn root_causes(&self) -> Result<Vec<RootCauseRow>, sqlx::Error> {
        sqlx::query_as(
            "SELECT id, cluster, state, since, reason, message, affected FROM root_causes
             ORDER BY jsonb_array_length(affected) DESC, id",
        )
        .fetch_all(self.pool())
        .await
    }

    pub async fn objects(&self, filter: &ObjectFilter) -> Result<ObjectPage, sqlx::Error> {
        const WHERE: &str = "($1::text IS NULL OR cluster = $1) AND ($2::text IS NULL OR kind = $2)
             AND ($3::text IS NULL OR namespace = $3) AND ($4::text IS NULL OR state = $4)
             AND ($5::text IS NULL OR strpos(lower(name), lower($5)) > 0)
             AND ($6::text IS NULL OR domains @> ARRAY[$6]) AND ($7::text[] IS NULL OR cluster = ANY($7))
             AND ($8::text[] IS NULL OR state = ANY($8))";
        let query = format!(
            "SELECT {OBJECT_COLUMNS} FROM objects WHERE {WHERE}
             ORDER BY cluster, kind, namespace, name LIMIT $9 OFFSET $10"
        );
        let items = sqlx::query_as(sqlx::AssertSqlSafe(query))
            .bind(&filter.cluster)
            .bind(&filter.kind)
            .bind(&filter.namespace)
            .bind(&filter.state)
            .bind(&filter.query)
            .bind(&filter.domain)
            .bind(&filter.clusters)
            .bind(&filter.states)
            .bind(filter.limit)
            .bind(filter.offset)
            .fetch_all(self.pool())
            .await?;
        let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM objects WHERE {WHERE}"
        )))
        .bind(&filter.cluster)
        .bind(&filter.kind)
        .bind(&filter.namespace)
        .bind(&filter.state)
        .bind(&filter.query)
        .bind(&filter.domain)
        .bind(&filter.clusters)
        .bind(&filter.states)
        .fetch_one(self.pool())
        .await?;
        Ok(ObjectPage { items, total })
    }

    pub async fn object(&self, key: &ObjectKey) -> Result<Option<ObjectRecord>, sqlx::Error> {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {OBJECT_COLUMNS} FROM objects
             WHERE cluster = $1 AND kind = $2 AND namespace = $3 AND name = $4"
        )))
        .bind(&key.cluster)
        .bind(&key.kind)
        .bind(&key.namespace)
        .bind(&key.name)
        .fetch_optional(self.pool())
        .await
    }

    /// Newest first.
    pub async fn transitions(
        &self,
        key: &ObjectKey,
        limit: i64,
    ) -> Result<Vec<TransitionRecord>, sqlx::Error> {
        sqlx::query_as(
            "SELECT id, from_state, to_state, reason, message, at FROM transitions
             WHERE cluster = $1 AND kind = $2 AND namespace = $3 AND name = $4
             ORDER BY at DESC, id DESC LIMIT $5",
        )
        .bind(&key.cluster)
        .bind(&key.kind)
        .bind(&key.namespace)
        .bind(&key.name)
        .bind(limit)
        .fetch_all(self.pool())
        .await
    }

    pub async fn cluster(&self, name: &str) -> Result<Option<ClusterRow>, sqlx::Error> {
        sqlx::query_as("SELECT name, labels, last_good, error, kind_errors, state_counts, controllers, updated_at FROM clusters WHERE name = $1")
            .bind(name)
            .fetch_optional(self.pool())
            .await
    }

    pub async fn domain_verdicts_of(&self, domain: &str) -> Result<Vec<DomainRow>, sqlx::Error> {
        sqlx::query_as(
            "SELECT domain, cluster, version, state, fully_healthy, objects, healthy, blockers
             FROM domain_verdicts WHERE domain = $1 ORDER BY cluster",
        )
        .bind(domain)
        .fetch_all(self.pool())
        .await
    }

    pub async fn root_causes_by_ids(
        &self,
        ids: &[String],
    ) -> Result<Vec<RootCauseRow>, sqlx::Error> {
        sqlx::query_as(
            "SELECT id, cluster, state, since, reason, message, affected FROM root_causes
             WHERE id = ANY($1) ORDER BY id",
        )
        .bind(ids)
        .fetch_all(self.pool())
        .await
    }

    /// The objects with these ids (`cluster/Kind/namespace/name`); unknown ids are skipped.
    pub async fn objects_by_ids(&self, ids: &[String]) -> Result<Vec<ObjectRecord>, sqlx::Error> {
        let keys: Vec<ObjectKey> = ids.iter().filter_map(|id| key_of_id(id)).collect();
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {OBJECT_COLUMNS} FROM objects o
             JOIN UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) AS t(c, k, ns, n)
               ON o.cluster = t.c AND o.kind = t.k AND o.namespace = t.ns AND o.name = t.n
             ORDER BY cluster, kind, namespace, name"
        )))
        .bind(keys.iter().map(|k| k.cluster.clone()).collect::<Vec<_>>())
        .bind(keys.iter().map(|k| k.kind.clone()).collect::<Vec<_>>())
        .bind(keys.iter().map(|k| k.namespace.clone()).collect::<Vec<_>>())
        .bind(keys.iter().map(|k| k.name.clone()).collect::<Vec<_>>())
        .fetch_all(self.pool())
        .await
    }

    /// One cluster's objects of these kinds (the Flux objects and controllers for its page).
    pub async fn objects_of_kinds(
        &self,
        cluster: &str,
        kinds: &[&str],
    ) -> Result<Vec<ObjectRecord>, sqlx::Error> {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {OBJECT_COLUMNS} FROM objects WHERE cluster = $1 AND kind = ANY($2)
             ORDER BY kind, namespace, name"
        )))
        .bind(cluster)
        .bind(kinds)
        .fetch_all(self.pool())
        .await
    }
}

/// Splits `cluster/Kind/namespace/name` into a key.
pub fn key_of_id(id: &str) -> Option<ObjectKey> {
    let (cluster, kind, namespace, name) = ObjectId::split(id)?;
    Some(ObjectKey {
        cluster: cluster.to_string(),
        kind: kind.to_string(),
        namespace: namespace.to_string(),
        name: name.to_string(),
    })
}
