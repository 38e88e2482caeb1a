//! The queries the web and the API read. Every filter is a bind parameter; nothing is
//! formatted into SQL.

use super::{ClusterRow, DomainRow, ObjectKey, RootCauseRow, Store};
use chrono::{DateTime, Utc};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ObjectRecord {
    pub cluster: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub state: String,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub message: String,
    pub root_causes: Value,
    pub body: Value,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct TransitionRecord {
    pub from_state: Option<String>,
    pub to_state: String,
    pub reason: String,
    pub message: String,
    pub at: DateTime<Utc>,
}

/// Filters for the objects list; `None` means "any".
#[derive(Debug, Clone, Default)]
pub struct ObjectFilter {
    pub cluster: Option<String>,
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub state: Option<String>,
    /// Substring of the name, case-insensitive.
    pub query: Option<String>,
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
        sqlx::query_as("SELECT name, labels, last_good, error, kind_errors, state_counts, updated_at FROM clusters ORDER BY name")
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
             AND ($5::text IS NULL OR strpos(lower(name), lower($5)) > 0)";
        let query = format!(
            "SELECT cluster, kind, namespace, name, state, since, reason, message, root_causes, body, updated_at
             FROM objects WHERE {WHERE} ORDER BY cluster, kind, namespace, name LIMIT $6 OFFSET $7"
        );
        let items = sqlx::query_as(sqlx::AssertSqlSafe(query))
            .bind(&filter.cluster)
            .bind(&filter.kind)
            .bind(&filter.namespace)
            .bind(&filter.state)
            .bind(&filter.query)
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
        .fetch_one(self.pool())
        .await?;
        Ok(ObjectPage { items, total })
    }

    pub async fn object(&self, key: &ObjectKey) -> Result<Option<ObjectRecord>, sqlx::Error> {
        sqlx::query_as(
            "SELECT cluster, kind, namespace, name, state, since, reason, message, root_causes, body, updated_at
             FROM objects WHERE cluster = $1 AND kind = $2 AND namespace = $3 AND name = $4",
        )
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
            "SELECT from_state, to_state, reason, message, at FROM transitions
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
}
