//! Root causes and domain verdicts, replaced per cluster on every evaluation that changed them.

use super::decode::{Key, Stored};
use super::verdict::ObjectVerdict;
use crate::health::State;
use crate::model::ObjectId;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgConnection;

/// A root cause on its cluster (the cluster its id names) and what it affects.
#[derive(Debug, Clone, PartialEq)]
pub struct RootCauseRow {
    pub verdict: ObjectVerdict,
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

/// A `root_causes` row as stored, before its state is read as the engine's.
pub(super) struct StoredRootCause {
    pub id: String,
    pub state: String,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub message: String,
    pub affected: Value,
}

impl TryFrom<StoredRootCause> for RootCauseRow {
    type Error = sqlx::Error;

    fn try_from(row: StoredRootCause) -> Result<RootCauseRow, sqlx::Error> {
        let stored = Stored::new("root_causes", &row.id);
        let id: ObjectId = stored.parsed("id", &row.id)?;
        let state = stored.parsed("state", &row.state)?;
        Ok(RootCauseRow {
            verdict: ObjectVerdict::new(id, state, row.since, row.reason, row.message),
            affected: row.affected,
        })
    }
}

/// A `domain_verdicts` row as stored, before its state is read as the engine's.
pub(super) struct StoredDomain {
    pub domain: String,
    pub cluster: String,
    pub version: Option<String>,
    pub state: String,
    pub fully_healthy: bool,
    pub objects: i32,
    pub healthy: i32,
    pub blockers: Value,
}

impl TryFrom<StoredDomain> for DomainRow {
    type Error = sqlx::Error;

    fn try_from(row: StoredDomain) -> Result<DomainRow, sqlx::Error> {
        let state = Stored::new("domain_verdicts", Key([&row.domain, &row.cluster]))
            .parsed("state", &row.state)?;
        Ok(DomainRow {
            state,
            domain: row.domain,
            cluster: row.cluster,
            version: row.version,
            fully_healthy: row.fully_healthy,
            objects: row.objects,
            healthy: row.healthy,
            blockers: row.blockers,
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
    let still: Vec<String> = causes.iter().map(|r| r.verdict.id.0.clone()).collect();
    super::incident_history::record_resolved(&mut *conn, clusters, &still, now).await?;
    sqlx::query!("DELETE FROM root_causes WHERE cluster = ANY($1)", clusters)
        .execute(&mut *conn)
        .await?;
    sqlx::query!(
        "DELETE FROM domain_verdicts WHERE cluster = ANY($1)",
        clusters
    )
    .execute(&mut *conn)
    .await?;
    if !causes.is_empty() {
        sqlx::query!(
            "INSERT INTO root_causes (id, cluster, state, since, reason, message, affected, updated_at)
             SELECT i, c, s, si, r, m, a, $8 FROM UNNEST($1::text[], $2::text[], $3::text[], $4::timestamptz[],
                                                      $5::text[], $6::text[], $7::jsonb[]) AS t(i, c, s, si, r, m, a)",
            causes.iter().map(|r| r.verdict.id.as_str()).collect::<Vec<_>>() as Vec<&str>,
            causes.iter().map(|r| r.verdict.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
            causes.iter().map(|r| r.verdict.state.as_str()).collect::<Vec<_>>() as Vec<&str>,
            causes.iter().map(|r| r.verdict.since).collect::<Vec<_>>() as Vec<Option<DateTime<Utc>>>,
            causes.iter().map(|r| r.verdict.reason.as_str()).collect::<Vec<_>>() as Vec<&str>,
            causes.iter().map(|r| r.verdict.message.as_str()).collect::<Vec<_>>() as Vec<&str>,
            causes.iter().map(|r| &r.affected).collect::<Vec<_>>() as Vec<&Value>,
            now,
        )
        .execute(&mut *conn)
        .await?;
    }
    if !domains.is_empty() {
        sqlx::query!(
            "INSERT INTO domain_verdicts (domain, cluster, version, state, fully_healthy, objects, healthy, blockers, updated_at)
             SELECT d, c, v, s, f, o, h, b, $9 FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bool[],
                                                         $6::int4[], $7::int4[], $8::jsonb[]) AS t(d, c, v, s, f, o, h, b)",
            domains.iter().map(|r| r.domain.as_str()).collect::<Vec<_>>() as Vec<&str>,
            domains.iter().map(|r| r.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
            domains.iter().map(|r| r.version.as_deref()).collect::<Vec<_>>() as Vec<Option<&str>>,
            domains.iter().map(|r| r.state.as_str()).collect::<Vec<_>>() as Vec<&str>,
            &domains.iter().map(|r| r.fully_healthy).collect::<Vec<_>>(),
            &domains.iter().map(|r| r.objects).collect::<Vec<_>>(),
            &domains.iter().map(|r| r.healthy).collect::<Vec<_>>(),
            domains.iter().map(|r| &r.blockers).collect::<Vec<_>>() as Vec<&Value>,
            now,
        )
        .execute(&mut *conn)
        .await?;
    }
    // Delivered when the transaction commits: waiting requests in other processes look again.
    sqlx::query!("SELECT pg_notify($1, '')", ROLLUPS_CHANNEL)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
