//! Root causes and domain verdicts, replaced per cluster on every evaluation that changed them.

use super::decode::{Stored, text};
use crate::health::State;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::postgres::PgRow;
use sqlx::{FromRow, PgConnection, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct RootCauseRow {
    pub id: String,
    pub cluster: String,
    pub state: State,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub message: String,
    pub affected: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DomainRow {
    pub domain: String,
    pub cluster: String,
    pub version: Option<String>,
    pub state: State,
    pub fully_healthy: bool,
    pub objects: i32,
    pub healthy: i32,
    pub blockers: Value,
}

impl FromRow<'_, PgRow> for RootCauseRow {
    fn from_row(row: &PgRow) -> Result<Self, sqlx::Error> {
        let stored = Stored {
            table: "root_causes",
            row,
            id: |row: &PgRow| text(row, "id"),
        };
        Ok(RootCauseRow {
            id: row.try_get("id")?,
            cluster: row.try_get("cluster")?,
            state: stored.parsed("state")?,
            since: row.try_get("since")?,
            reason: row.try_get("reason")?,
            message: row.try_get("message")?,
            affected: row.try_get("affected")?,
        })
    }
}

impl FromRow<'_, PgRow> for DomainRow {
    fn from_row(row: &PgRow) -> Result<Self, sqlx::Error> {
        let stored = Stored {
            table: "domain_verdicts",
            row,
            id: |row: &PgRow| format!("{}/{}", text(row, "domain"), text(row, "cluster")),
        };
        Ok(DomainRow {
            domain: row.try_get("domain")?,
            cluster: row.try_get("cluster")?,
            version: row.try_get("version")?,
            state: stored.parsed("state")?,
            fully_healthy: row.try_get("fully_healthy")?,
            objects: row.try_get("objects")?,
            healthy: row.try_get("healthy")?,
            blockers: row.try_get("blockers")?,
        })
    }
}

/// The notification channel told whenever roll-ups are replaced (long-poll waits listen).
pub const ROLLUPS_CHANNEL: &str = "fleetglass_rollups";

/// Replaces the root causes and domain verdicts of `clusters` with the given rows (recording
/// the root causes that cleared), and tells [`ROLLUPS_CHANNEL`] once the transaction commits.
pub async fn replace_rollups(
    conn: &mut PgConnection,
    clusters: &[String],
    causes: &[RootCauseRow],
    domains: &[DomainRow],
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let still: Vec<String> = causes.iter().map(|r| r.id.clone()).collect();
    super::incident_history::record_resolved(&mut *conn, clusters, &still, now).await?;
    sqlx::query("DELETE FROM root_causes WHERE cluster = ANY($1)")
        .bind(clusters)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM domain_verdicts WHERE cluster = ANY($1)")
        .bind(clusters)
        .execute(&mut *conn)
        .await?;
    if !causes.is_empty() {
        sqlx::query(
            "INSERT INTO root_causes (id, cluster, state, since, reason, message, affected, updated_at)
             SELECT i, c, s, si, r, m, a, $8 FROM UNNEST($1::text[], $2::text[], $3::text[], $4::timestamptz[],
                                                      $5::text[], $6::text[], $7::jsonb[]) AS t(i, c, s, si, r, m, a)",
        )
        .bind(causes.iter().map(|r| r.id.clone()).collect::<Vec<_>>())
        .bind(causes.iter().map(|r| r.cluster.clone()).collect::<Vec<_>>())
        .bind(causes.iter().map(|r| r.state.as_str()).collect::<Vec<_>>())
        .bind(causes.iter().map(|r| r.since).collect::<Vec<_>>())
        .bind(causes.iter().map(|r| r.reason.clone()).collect::<Vec<_>>())
        .bind(causes.iter().map(|r| r.message.clone()).collect::<Vec<_>>())
        .bind(causes.iter().map(|r| r.affected.clone()).collect::<Vec<_>>())
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    if !domains.is_empty() {
        sqlx::query(
            "INSERT INTO domain_verdicts (domain, cluster, version, state, fully_healthy, objects, healthy, blockers, updated_at)
             SELECT d, c, v, s, f, o, h, b, $9 FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bool[],
                                                         $6::int4[], $7::int4[], $8::jsonb[]) AS t(d, c, v, s, f, o, h, b)",
        )
        .bind(domains.iter().map(|r| r.domain.clone()).collect::<Vec<_>>())
        .bind(domains.iter().map(|r| r.cluster.clone()).collect::<Vec<_>>())
        .bind(domains.iter().map(|r| r.version.clone()).collect::<Vec<_>>())
        .bind(domains.iter().map(|r| r.state.as_str()).collect::<Vec<_>>())
        .bind(domains.iter().map(|r| r.fully_healthy).collect::<Vec<_>>())
        .bind(domains.iter().map(|r| r.objects).collect::<Vec<_>>())
        .bind(domains.iter().map(|r| r.healthy).collect::<Vec<_>>())
        .bind(domains.iter().map(|r| r.blockers.clone()).collect::<Vec<_>>())
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    // Delivered when the transaction commits: waiting requests in other processes look again.
    sqlx::query("SELECT pg_notify($1, '')")
        .bind(ROLLUPS_CHANNEL)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
