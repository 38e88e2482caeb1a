//! Clusters: labels, freshness, and their objects counted by state.

use super::decode::Stored;
use crate::health::StateCounts;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgConnection;
use sqlx::types::Json;

#[derive(Debug, Clone, PartialEq)]
pub struct ClusterRow {
    pub name: String,
    pub labels: Value,
    pub last_good: Option<DateTime<Utc>>,
    pub error: Option<String>,
    pub kind_errors: Value,
    pub state_counts: StateCounts,
    /// Ids of the Flux controller Deployments the engine matched (or found absent).
    pub controllers: Value,
    pub updated_at: DateTime<Utc>,
}

/// A `clusters` row as stored, its counts as text until read as [`StateCounts`].
pub(super) struct StoredCluster {
    pub name: String,
    pub labels: Value,
    pub last_good: Option<DateTime<Utc>>,
    pub error: Option<String>,
    pub kind_errors: Value,
    pub state_counts: String,
    pub controllers: Value,
    pub updated_at: DateTime<Utc>,
}

impl TryFrom<StoredCluster> for ClusterRow {
    type Error = sqlx::Error;

    fn try_from(row: StoredCluster) -> Result<ClusterRow, sqlx::Error> {
        let state_counts =
            Stored::new("clusters", &row.name).json("state_counts", &row.state_counts)?;
        Ok(ClusterRow {
            state_counts,
            name: row.name,
            labels: row.labels,
            last_good: row.last_good,
            error: row.error,
            kind_errors: row.kind_errors,
            controllers: row.controllers,
            updated_at: row.updated_at,
        })
    }
}

pub async fn upsert_clusters(
    conn: &mut PgConnection,
    rows: &[ClusterRow],
) -> Result<(), sqlx::Error> {
    if rows.is_empty() {
        return Ok(());
    }
    // Counts or an error that changed are appended to `cluster_history` (the fleet at a past
    // time); every sub-statement reads the rows as they were before this one.
    sqlx::query!(
        "WITH input AS (
             SELECT * FROM UNNEST($1::text[], $2::jsonb[], $3::timestamptz[], $4::text[], $5::jsonb[], $6::jsonb[], $7::timestamptz[], $8::jsonb[])
                 AS t(name, labels, last_good, error, kind_errors, state_counts, updated_at, controllers)),
         upserted AS (
             INSERT INTO clusters (name, labels, last_good, error, kind_errors, state_counts, updated_at, controllers)
             SELECT * FROM input
             ON CONFLICT (name) DO UPDATE SET
                 labels = excluded.labels, last_good = COALESCE(excluded.last_good, clusters.last_good), error = excluded.error,
                 kind_errors = excluded.kind_errors, state_counts = excluded.state_counts,
                 updated_at = excluded.updated_at, controllers = excluded.controllers)
         INSERT INTO cluster_history (cluster, at, state_counts, error)
         SELECT i.name, i.updated_at, i.state_counts, i.error FROM input i LEFT JOIN clusters c ON c.name = i.name
         WHERE (c.state_counts, c.error) IS DISTINCT FROM (i.state_counts, i.error)",
        rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| &r.labels).collect::<Vec<_>>() as Vec<&Value>,
        rows.iter().map(|r| r.last_good).collect::<Vec<_>>() as Vec<Option<DateTime<Utc>>>,
        rows.iter().map(|r| r.error.as_deref()).collect::<Vec<_>>() as Vec<Option<&str>>,
        rows.iter().map(|r| &r.kind_errors).collect::<Vec<_>>() as Vec<&Value>,
        rows.iter().map(|r| Json(&r.state_counts)).collect::<Vec<_>>() as Vec<Json<&StateCounts>>,
        &rows.iter().map(|r| r.updated_at).collect::<Vec<_>>(),
        rows.iter().map(|r| &r.controllers).collect::<Vec<_>>() as Vec<&Value>,
    )
    .execute(conn)
    .await?;
    Ok(())
}
