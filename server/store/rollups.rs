//! Root causes and domain verdicts, replaced per cluster on every evaluation that changed them.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgConnection;

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct RootCauseRow {
    pub id: String,
    pub cluster: String,
    pub state: String,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub message: String,
    pub affected: Value,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct DomainRow {
    pub domain: String,
    pub cluster: String,
    pub version: Option<String>,
    pub state: String,
    pub fully_healthy: bool,
    pub objects: i32,
    pub healthy: i32,
    pub blockers: Value,
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
        .bind(causes.iter().map(|r| r.state.clone()).collect::<Vec<_>>())
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
        .bind(domains.iter().map(|r| r.state.clone()).collect::<Vec<_>>())
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
