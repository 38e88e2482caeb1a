//! Root causes and domain verdicts (and, through crossstack, the cross-stack edges): the rows
//! that changed since the last write are upserted and those that went away deleted.

use super::decode::{Key, Stored};
use super::verdict::ObjectVerdict;
use crate::health::{Cause, CoOwnership, Dependency, State};
use crate::model::ObjectId;
use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use sqlx::types::Json;
use std::collections::HashSet;

/// A root cause on its cluster (the cluster its id names) and what it affects.
#[derive(Debug, Clone, PartialEq)]
pub struct RootCauseRow {
    pub verdict: ObjectVerdict,
    /// Why, as fields: what incidents key on.
    pub cause: Cause,
    /// Ids of the objects whose verdict names this cause.
    pub affected: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DomainRow {
    pub domain: String,
    pub cluster: String,
    /// The version applied.
    pub version: Option<String>,
    /// Offered and not applied yet: pending.
    pub offered: Option<String>,
    pub state: State,
    pub fully_healthy: bool,
    pub objects: i32,
    pub healthy: i32,
    /// Ids of the root causes that keep this domain version from being fully healthy.
    pub blockers: Vec<String>,
}

/// A `root_causes` row as stored, before its state is read as the engine's.
pub(super) struct StoredRootCause {
    pub id: String,
    pub state: String,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub message: String,
    pub cause: String,
    // As text, read straight into strings: the fleet page reads every cause's list on each
    // request, and a bad list is an error naming its row.
    pub affected: String,
}

impl TryFrom<StoredRootCause> for RootCauseRow {
    type Error = sqlx::Error;

    fn try_from(row: StoredRootCause) -> Result<RootCauseRow, sqlx::Error> {
        let stored = Stored::new("root_causes", &row.id);
        let id: ObjectId = stored.parsed("id", &row.id)?;
        let state = stored.parsed("state", &row.state)?;
        Ok(RootCauseRow {
            verdict: ObjectVerdict::new(id, state, row.since, row.reason, row.message),
            cause: stored.json("cause", &row.cause)?,
            affected: stored.json("affected", &row.affected)?,
        })
    }
}

/// A `domain_verdicts` row as stored, before its state is read as the engine's.
pub(super) struct StoredDomain {
    pub domain: String,
    pub cluster: String,
    pub version: Option<String>,
    pub offered: Option<String>,
    pub state: String,
    pub fully_healthy: bool,
    pub objects: i32,
    pub healthy: i32,
    pub blockers: String,
}

impl TryFrom<StoredDomain> for DomainRow {
    type Error = sqlx::Error;

    fn try_from(row: StoredDomain) -> Result<DomainRow, sqlx::Error> {
        let stored = Stored::new("domain_verdicts", Key([&row.domain, &row.cluster]));
        let state = stored.parsed("state", &row.state)?;
        let blockers = stored.json("blockers", &row.blockers)?;
        Ok(DomainRow {
            state,
            blockers,
            domain: row.domain,
            cluster: row.cluster,
            version: row.version,
            offered: row.offered,
            fully_healthy: row.fully_healthy,
            objects: row.objects,
            healthy: row.healthy,
        })
    }
}

/// The notification channel told whenever roll-ups are replaced (long-poll waits listen).
pub const ROLLUPS_CHANNEL: &str = "fleetglass_rollups";

/// One roll-up table's rows to write: those new or changed, and those that went away.
#[derive(Debug)]
pub struct RowChanges<'a, T> {
    pub write: Vec<&'a T>,
    pub gone: Vec<&'a T>,
}

impl<T> Default for RowChanges<'_, T> {
    fn default() -> Self {
        RowChanges {
            write: Vec::new(),
            gone: Vec::new(),
        }
    }
}

impl<'a, T> RowChanges<'a, T> {
    /// A cluster's whole set of rows (with `replaced` naming the cluster: the rest go).
    pub fn all(rows: &'a [T]) -> Self {
        RowChanges {
            write: rows.iter().collect(),
            gone: Vec::new(),
        }
    }
}

/// The roll-up rows that changed since the last write. `replaced` names the clusters whose
/// stored rows the writer does not know (its first write of them, a cluster taken over from
/// another collector): their stored rows not among `write` go too.
#[derive(Debug, Default)]
pub struct RollupWrite<'a> {
    pub replaced: Vec<String>,
    pub causes: RowChanges<'a, RootCauseRow>,
    pub domains: RowChanges<'a, DomainRow>,
    pub dependencies: RowChanges<'a, Dependency>,
    pub co_ownerships: RowChanges<'a, CoOwnership>,
}

/// Writes the roll-up rows that changed (rows that did not change are not touched, so their
/// `updated_at` stays when they last changed), records the root causes that went away as
/// resolved, and tells [`ROLLUPS_CHANNEL`] once the transaction commits.
pub async fn write_rollups(
    conn: &mut PgConnection,
    rollups: &RollupWrite<'_>,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let replaced = &rollups.replaced;
    write_root_causes(&mut *conn, replaced, &rollups.causes, now).await?;
    write_domain_verdicts(&mut *conn, replaced, &rollups.domains, now).await?;
    super::crossstack::write_dependencies(&mut *conn, replaced, &rollups.dependencies).await?;
    super::crossstack::write_co_ownerships(&mut *conn, replaced, &rollups.co_ownerships).await?;
    notify_rollups(conn).await
}

/// Replaces the root causes and domain verdicts of `clusters` with the given rows (recording
/// the root causes that cleared), and tells [`ROLLUPS_CHANNEL`] once the transaction commits.
pub async fn replace_rollups(
    conn: &mut PgConnection,
    clusters: &[String],
    causes: &[RootCauseRow],
    domains: &[DomainRow],
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    write_root_causes(&mut *conn, clusters, &RowChanges::all(causes), now).await?;
    write_domain_verdicts(&mut *conn, clusters, &RowChanges::all(domains), now).await?;
    notify_rollups(conn).await
}

/// Delivered when the transaction commits: waiting requests in other processes look again.
async fn notify_rollups(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query!("SELECT pg_notify($1, '')", ROLLUPS_CHANNEL)
        .execute(conn)
        .await?;
    Ok(())
}

async fn write_root_causes(
    conn: &mut PgConnection,
    replaced: &[String],
    causes: &RowChanges<'_, RootCauseRow>,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    if !replaced.is_empty() || !causes.gone.is_empty() {
        let kept: Vec<&str> = causes.write.iter().map(|r| r.verdict.id.as_str()).collect();
        let gone: Vec<&str> = causes.gone.iter().map(|r| r.verdict.id.as_str()).collect();
        super::incident_history::resolve(&mut *conn, replaced, &kept, &gone, now).await?;
    }
    let rows = &causes.write;
    if rows.is_empty() {
        return Ok(());
    }
    // Only a row that differs is updated: an unchanged one keeps its `updated_at`.
    sqlx::query!(
        "INSERT INTO root_causes (id, cluster, state, since, reason, message, affected, cause, updated_at)
         SELECT i, c, s, si, r, m, a, ca, $9 FROM UNNEST($1::text[], $2::text[], $3::text[], $4::timestamptz[],
                                                  $5::text[], $6::text[], $7::jsonb[], $8::jsonb[]) AS t(i, c, s, si, r, m, a, ca)
         ON CONFLICT (id) DO UPDATE SET
             cluster = excluded.cluster, state = excluded.state, since = excluded.since,
             reason = excluded.reason, message = excluded.message, affected = excluded.affected,
             cause = excluded.cause, updated_at = excluded.updated_at
         WHERE (root_causes.cluster, root_causes.state, root_causes.since, root_causes.reason, root_causes.message, root_causes.affected, root_causes.cause)
               IS DISTINCT FROM
               (excluded.cluster, excluded.state, excluded.since, excluded.reason, excluded.message, excluded.affected, excluded.cause)",
        rows.iter().map(|r| r.verdict.id.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.verdict.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.verdict.state.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.verdict.since).collect::<Vec<_>>() as Vec<Option<DateTime<Utc>>>,
        rows.iter().map(|r| r.verdict.reason.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.verdict.message.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| Json(&r.affected)).collect::<Vec<_>>() as Vec<Json<&Vec<String>>>,
        rows.iter().map(|r| Json(&r.cause)).collect::<Vec<_>>() as Vec<Json<&Cause>>,
        now,
    )
    .execute(conn)
    .await?;
    Ok(())
}

async fn write_domain_verdicts(
    conn: &mut PgConnection,
    replaced: &[String],
    domains: &RowChanges<'_, DomainRow>,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    if !replaced.is_empty() || !domains.gone.is_empty() {
        let (kept, gone) = (&domains.write, &domains.gone);
        // What went is recorded in the history (`gone`), and its outage closes.
        sqlx::query!(
            "WITH gone AS (
                 DELETE FROM domain_verdicts v
                 WHERE (v.cluster, v.domain) IN (SELECT * FROM UNNEST($1::text[], $2::text[]))
                    OR (v.cluster = ANY($3) AND (v.cluster, v.domain) NOT IN (SELECT * FROM UNNEST($4::text[], $5::text[])))
                 RETURNING v.*),
             closed AS (
                 UPDATE domain_outages o SET resolved_at = $6
                 FROM gone WHERE o.domain = gone.domain AND o.cluster = gone.cluster AND o.resolved_at IS NULL)
             INSERT INTO domain_history (domain, cluster, at, version, offered, state, fully_healthy, objects, healthy, blockers, gone)
             SELECT domain, cluster, $6, version, offered, state, fully_healthy, objects, healthy, blockers, true FROM gone",
            gone.iter().map(|r| r.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
            gone.iter().map(|r| r.domain.as_str()).collect::<Vec<_>>() as Vec<&str>,
            replaced,
            kept.iter().map(|r| r.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
            kept.iter().map(|r| r.domain.as_str()).collect::<Vec<_>>() as Vec<&str>,
            now,
        )
        .execute(&mut *conn)
        .await?;
    }
    let rows = &domains.write;
    if rows.is_empty() {
        return Ok(());
    }
    // Only the rows that really changed come back: they are what the delivery history records.
    let changed = sqlx::query!(
        "INSERT INTO domain_verdicts (domain, cluster, version, state, fully_healthy, objects, healthy, blockers, updated_at, offered)
         SELECT d, c, v, s, f, o, h, b, $9, p FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bool[],
                                                     $6::int4[], $7::int4[], $8::jsonb[], $10::text[]) AS t(d, c, v, s, f, o, h, b, p)
         ON CONFLICT (domain, cluster) DO UPDATE SET
             version = excluded.version, state = excluded.state, fully_healthy = excluded.fully_healthy,
             objects = excluded.objects, healthy = excluded.healthy, blockers = excluded.blockers,
             updated_at = excluded.updated_at, offered = excluded.offered
         WHERE (domain_verdicts.version, domain_verdicts.state, domain_verdicts.fully_healthy, domain_verdicts.objects, domain_verdicts.healthy, domain_verdicts.blockers, domain_verdicts.offered)
               IS DISTINCT FROM
               (excluded.version, excluded.state, excluded.fully_healthy, excluded.objects, excluded.healthy, excluded.blockers, excluded.offered)
         RETURNING domain, cluster",
        rows.iter().map(|r| r.domain.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.version.as_deref()).collect::<Vec<_>>() as Vec<Option<&str>>,
        rows.iter().map(|r| r.state.as_str()).collect::<Vec<_>>() as Vec<&str>,
        &rows.iter().map(|r| r.fully_healthy).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.objects).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.healthy).collect::<Vec<_>>(),
        rows.iter().map(|r| Json(&r.blockers)).collect::<Vec<_>>() as Vec<Json<&Vec<String>>>,
        now,
        rows.iter().map(|r| r.offered.as_deref()).collect::<Vec<_>>() as Vec<Option<&str>>,
    )
    .fetch_all(&mut *conn)
    .await?;
    let changed: HashSet<(&str, &str)> = changed
        .iter()
        .map(|r| (r.domain.as_str(), r.cluster.as_str()))
        .collect();
    let changed: Vec<&DomainRow> = rows
        .iter()
        .copied()
        .filter(|r| changed.contains(&(r.domain.as_str(), r.cluster.as_str())))
        .collect();
    super::delivery::record(conn, replaced, &changed, now).await
}
