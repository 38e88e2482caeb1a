//! Delivery history: each changed domain verdict is appended to `domain_history` (the fleet
//! at a past time), moves its version's row in `rollouts` (offered, applied, fully healthy,
//! where it stopped) and opens or closes the domain's outage on that cluster. Written in the
//! transaction that writes the verdicts, so the history never disagrees with them.

use super::clusters::StoredCluster;
use super::decode::{Key, Stored};
use super::reads::typed;
use super::rollups::{DomainRow, RootCauseRow, StoredDomain, StoredRootCause};
use super::{ClusterRow, Store};
use crate::health::{State, StateCounts};
use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use sqlx::types::Json;

/// The version a verdict's rollout is about: the one offered and not applied yet while there
/// is one (a failure then is that version's), else the one applied.
pub fn version_in_flight(row: &DomainRow) -> Option<&str> {
    row.offered.as_deref().or(row.version.as_deref())
}

/// An outage is a known problem on the domain: what cannot be verified (an unreachable
/// cluster) is not counted as the domain being down.
pub fn is_outage(state: State) -> bool {
    state.is_problem() && state != State::Unverifiable
}

/// Records the verdicts that changed. `replaced` names clusters written for the first time
/// by this collector: a version found already applied there is a baseline, not a rollout
/// fleetglass watched.
pub(super) async fn record(
    conn: &mut PgConnection,
    replaced: &[String],
    changed: &[&DomainRow],
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    if changed.is_empty() {
        return Ok(());
    }
    let dated: Vec<(DateTime<Utc>, &DomainRow)> = changed.iter().map(|r| (now, *r)).collect();
    append_history(&mut *conn, &dated).await?;
    move_rollouts(&mut *conn, replaced, changed, now).await?;
    move_outages(conn, changed, now).await
}

/// Appends each verdict to the history at its time.
async fn append_history(
    conn: &mut PgConnection,
    dated: &[(DateTime<Utc>, &DomainRow)],
) -> Result<(), sqlx::Error> {
    let rows: Vec<&DomainRow> = dated.iter().map(|(_, r)| *r).collect();
    sqlx::query!(
        "WITH keys AS (
             INSERT INTO domain_history_keys (domain, cluster)
             SELECT * FROM UNNEST($1::text[], $2::text[]) ON CONFLICT DO NOTHING)
         INSERT INTO domain_history (domain, cluster, at, version, offered, state, fully_healthy, objects, healthy, blockers)
         SELECT d, c, a, v, o, s, f, n, h, b FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
                                                       $6::bool[], $7::int4[], $8::int4[], $9::jsonb[], $10::timestamptz[])
                                                AS t(d, c, v, o, s, f, n, h, b, a)",
        rows.iter().map(|r| r.domain.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
        rows.iter().map(|r| r.version.as_deref()).collect::<Vec<_>>() as Vec<Option<&str>>,
        rows.iter().map(|r| r.offered.as_deref()).collect::<Vec<_>>() as Vec<Option<&str>>,
        rows.iter().map(|r| r.state.as_str()).collect::<Vec<_>>() as Vec<&str>,
        &rows.iter().map(|r| r.fully_healthy).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.objects).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.healthy).collect::<Vec<_>>(),
        rows.iter().map(|r| Json(&r.blockers)).collect::<Vec<_>>() as Vec<Json<&Vec<String>>>,
        &dated.iter().map(|(at, _)| *at).collect::<Vec<_>>(),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// First times are kept (`COALESCE`); the state, cause and reason follow the verdict, so a
/// version replaced before it was healthy keeps where it stopped.
async fn move_rollouts(
    conn: &mut PgConnection,
    replaced: &[String],
    rows: &[&DomainRow],
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let moving: Vec<(&DomainRow, &str)> = rows
        .iter()
        .filter_map(|r| Some((*r, version_in_flight(r)?)))
        .collect();
    if moving.is_empty() {
        return Ok(());
    }
    let applied = |r: &DomainRow, v: &str| r.version.as_deref() == Some(v);
    sqlx::query!(
        "INSERT INTO rollouts (domain, version, cluster, offered_at, applied_at, healthy_at, problem_at, state, cause, reason, baseline, updated_at)
         SELECT d, v, c, $9, CASE WHEN a THEN $9::timestamptz END, CASE WHEN h THEN $9::timestamptz END,
                CASE WHEN p THEN $9::timestamptz END, s, k, COALESCE(rc.reason, ''), a AND c = ANY($10), $9
         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bool[], $5::bool[], $6::bool[], $7::text[], $8::text[])
              AS t(d, v, c, a, h, p, s, k)
         LEFT JOIN root_causes rc ON rc.id = t.k
         ON CONFLICT (domain, version, cluster) DO UPDATE SET
             applied_at = COALESCE(rollouts.applied_at, excluded.applied_at),
             healthy_at = COALESCE(rollouts.healthy_at, excluded.healthy_at),
             problem_at = COALESCE(rollouts.problem_at, excluded.problem_at),
             state = excluded.state, cause = excluded.cause, reason = excluded.reason,
             updated_at = excluded.updated_at",
        moving.iter().map(|(r, _)| r.domain.as_str()).collect::<Vec<_>>() as Vec<&str>,
        moving.iter().map(|(_, v)| *v).collect::<Vec<_>>() as Vec<&str>,
        moving.iter().map(|(r, _)| r.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
        &moving.iter().map(|(r, v)| applied(r, v)).collect::<Vec<_>>(),
        &moving
            .iter()
            .map(|(r, v)| applied(r, v) && r.fully_healthy)
            .collect::<Vec<_>>(),
        &moving
            .iter()
            .map(|(r, _)| is_outage(r.state))
            .collect::<Vec<_>>(),
        moving.iter().map(|(r, _)| r.state.as_str()).collect::<Vec<_>>() as Vec<&str>,
        moving
            .iter()
            .map(|(r, _)| r.blockers.first().map(String::as_str))
            .collect::<Vec<_>>() as Vec<Option<&str>>,
        now,
        replaced,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A domain entering a known problem opens an outage (one open per domain and cluster); a
/// fully healthy verdict closes it.
async fn move_outages(
    conn: &mut PgConnection,
    rows: &[&DomainRow],
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let (opening, closing): (Vec<&DomainRow>, Vec<&DomainRow>) = rows
        .iter()
        .copied()
        .filter(|r| is_outage(r.state) || r.fully_healthy)
        .partition(|r| is_outage(r.state));
    if !closing.is_empty() {
        sqlx::query!(
            "UPDATE domain_outages o SET resolved_at = $3
             FROM UNNEST($1::text[], $2::text[]) AS t(d, c)
             WHERE o.domain = t.d AND o.cluster = t.c AND o.resolved_at IS NULL",
            closing
                .iter()
                .map(|r| r.domain.as_str())
                .collect::<Vec<_>>() as Vec<&str>,
            closing
                .iter()
                .map(|r| r.cluster.as_str())
                .collect::<Vec<_>>() as Vec<&str>,
            now,
        )
        .execute(&mut *conn)
        .await?;
    }
    if !opening.is_empty() {
        sqlx::query!(
            "INSERT INTO domain_outages (domain, cluster, version, state, reason, opened_at)
             SELECT d, c, v, s, COALESCE(rc.reason, ''), $6
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS t(d, c, v, s, k)
             LEFT JOIN root_causes rc ON rc.id = t.k
             ON CONFLICT (domain, cluster) WHERE resolved_at IS NULL DO NOTHING",
            opening.iter().map(|r| r.domain.as_str()).collect::<Vec<_>>() as Vec<&str>,
            opening.iter().map(|r| r.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
            opening
                .iter()
                .map(|r| version_in_flight(r))
                .collect::<Vec<_>>() as Vec<Option<&str>>,
            opening.iter().map(|r| r.state.as_str()).collect::<Vec<_>>() as Vec<&str>,
            opening
                .iter()
                .map(|r| r.blockers.first().map(String::as_str))
                .collect::<Vec<_>>() as Vec<Option<&str>>,
            now,
        )
        .execute(conn)
        .await?;
    }
    Ok(())
}

/// One domain version on one cluster, as `rollouts` keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutRow {
    pub domain: String,
    pub version: String,
    pub cluster: String,
    pub offered_at: DateTime<Utc>,
    pub applied_at: Option<DateTime<Utc>>,
    pub healthy_at: Option<DateTime<Utc>>,
    pub problem_at: Option<DateTime<Utc>>,
    /// Where it stands, or where it stopped once another version replaced it.
    pub state: State,
    /// The root cause that held it, when one did.
    pub cause: Option<String>,
    pub reason: String,
    pub baseline: bool,
    pub updated_at: DateTime<Utc>,
}

pub(super) struct StoredRollout {
    domain: String,
    version: String,
    cluster: String,
    offered_at: DateTime<Utc>,
    applied_at: Option<DateTime<Utc>>,
    healthy_at: Option<DateTime<Utc>>,
    problem_at: Option<DateTime<Utc>>,
    state: String,
    cause: Option<String>,
    reason: String,
    baseline: bool,
    updated_at: DateTime<Utc>,
}

impl TryFrom<StoredRollout> for RolloutRow {
    type Error = sqlx::Error;

    fn try_from(row: StoredRollout) -> Result<RolloutRow, sqlx::Error> {
        let key = Key([&row.domain, &row.version, &row.cluster]);
        let state = Stored::new("rollouts", key).parsed("state", &row.state)?;
        Ok(RolloutRow {
            state,
            domain: row.domain,
            version: row.version,
            cluster: row.cluster,
            offered_at: row.offered_at,
            applied_at: row.applied_at,
            healthy_at: row.healthy_at,
            problem_at: row.problem_at,
            cause: row.cause,
            reason: row.reason,
            baseline: row.baseline,
            updated_at: row.updated_at,
        })
    }
}

/// A domain down on a cluster, from when it entered a known problem to when it was fully
/// healthy again (open while `resolved_at` is None).
#[derive(Debug, Clone, PartialEq)]
pub struct OutageRow {
    pub domain: String,
    pub cluster: String,
    pub version: Option<String>,
    pub state: State,
    pub reason: String,
    pub opened_at: DateTime<Utc>,
    pub resolved_at: Option<DateTime<Utc>>,
}

pub(super) struct StoredOutage {
    id: i64,
    domain: String,
    cluster: String,
    version: Option<String>,
    state: String,
    reason: String,
    opened_at: DateTime<Utc>,
    resolved_at: Option<DateTime<Utc>>,
}

impl TryFrom<StoredOutage> for OutageRow {
    type Error = sqlx::Error;

    fn try_from(row: StoredOutage) -> Result<OutageRow, sqlx::Error> {
        let state = Stored::new("domain_outages", row.id).parsed("state", &row.state)?;
        Ok(OutageRow {
            state,
            domain: row.domain,
            cluster: row.cluster,
            version: row.version,
            reason: row.reason,
            opened_at: row.opened_at,
            resolved_at: row.resolved_at,
        })
    }
}

/// A cluster's finished rollouts of a domain, newest first: seconds from offered to fully
/// healthy.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterDurations {
    pub cluster: String,
    pub seconds: Vec<f64>,
}

/// One version of a domain in a list of its rollouts.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionSummary {
    pub version: String,
    pub first_offered: DateTime<Utc>,
    pub clusters: i64,
    pub fully_healthy: i64,
}

/// How many of a cluster's latest rollouts its usual duration is read from.
pub const DURATIONS_KEPT: i64 = 20;

impl Store {
    /// The rows of the domain's newest `limit` versions (newest first offered first), or of
    /// one version.
    pub async fn rollouts_of(
        &self,
        domain: &str,
        version: Option<&str>,
        limit: i64,
    ) -> Result<Vec<RolloutRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredRollout,
            "WITH versions AS (
                 SELECT version, min(offered_at) AS first FROM rollouts
                 WHERE domain = $1 AND ($2::text IS NULL OR version = $2)
                 GROUP BY version ORDER BY first DESC, version LIMIT $3)
             SELECT r.domain, r.version, r.cluster, r.offered_at, r.applied_at, r.healthy_at, r.problem_at,
                    r.state, r.cause, r.reason, r.baseline, r.updated_at
             FROM rollouts r JOIN versions v USING (version)
             WHERE r.domain = $1
             ORDER BY v.first DESC, r.version, r.cluster",
            domain,
            version,
            limit,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    /// The domain's newest `limit` versions, counted (without their rows).
    pub async fn rollout_versions(
        &self,
        domain: &str,
        limit: i64,
    ) -> Result<Vec<VersionSummary>, sqlx::Error> {
        sqlx::query_as!(
            VersionSummary,
            r#"SELECT version, min(offered_at) AS "first_offered!", count(*) AS "clusters!",
                      count(*) FILTER (WHERE healthy_at IS NOT NULL AND state = 'healthy') AS "fully_healthy!"
             FROM rollouts WHERE domain = $1
             GROUP BY version ORDER BY 2 DESC, version LIMIT $2"#,
            domain,
            limit,
        )
        .fetch_all(self.pool())
        .await
    }

    /// Every row of the versions of the domain that moved (offered, applied, healthy or in
    /// trouble) since `from`: what the delivery figures of a window are computed from.
    pub async fn rollouts_since(
        &self,
        domain: &str,
        from: DateTime<Utc>,
    ) -> Result<Vec<RolloutRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredRollout,
            "SELECT domain, version, cluster, offered_at, applied_at, healthy_at, problem_at,
                    state, cause, reason, baseline, updated_at
             FROM rollouts
             WHERE domain = $1 AND version IN (
                 SELECT version FROM rollouts WHERE domain = $1 AND updated_at >= $2)
             ORDER BY version, cluster",
            domain,
            from,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    /// The domain's outages open at any time since `from`.
    pub async fn outages_since(
        &self,
        domain: &str,
        from: DateTime<Utc>,
    ) -> Result<Vec<OutageRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredOutage,
            "SELECT id, domain, cluster, version, state, reason, opened_at, resolved_at
             FROM domain_outages
             WHERE domain = $1 AND (resolved_at IS NULL OR resolved_at >= $2)
             ORDER BY opened_at, id",
            domain,
            from,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    /// Each cluster's latest finished rollouts of the domain (those fleetglass watched from
    /// the offer), leaving out `version` (the one in flight).
    pub async fn rollout_durations(
        &self,
        domain: &str,
        version: &str,
    ) -> Result<Vec<ClusterDurations>, sqlx::Error> {
        sqlx::query_as!(
            ClusterDurations,
            r#"SELECT cluster AS "cluster!", array_agg(seconds ORDER BY offered_at DESC) AS "seconds!"
             FROM (SELECT cluster, offered_at, extract(epoch FROM healthy_at - offered_at)::float8 AS seconds,
                          row_number() OVER (PARTITION BY cluster ORDER BY offered_at DESC) AS n
                   FROM rollouts
                   WHERE domain = $1 AND version <> $2 AND healthy_at IS NOT NULL AND NOT baseline) latest
             WHERE n <= $3
             GROUP BY cluster ORDER BY cluster"#,
            domain,
            version,
            DURATIONS_KEPT,
        )
        .fetch_all(self.pool())
        .await
    }

    /// The domain verdicts as they were at `at` (from the history; the fleet at a past time).
    pub async fn domain_verdicts_at(
        &self,
        at: DateTime<Utc>,
    ) -> Result<Vec<DomainRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredDomain,
            r#"SELECT k.domain AS "domain!", k.cluster AS "cluster!", h.version, h.offered, h.state AS "state!",
                      h.fully_healthy AS "fully_healthy!", h.objects AS "objects!", h.healthy AS "healthy!",
                      h.blockers::text AS "blockers!"
             FROM domain_history_keys k
             CROSS JOIN LATERAL (
                 SELECT * FROM domain_history h
                 WHERE h.domain = k.domain AND h.cluster = k.cluster AND h.at <= $1
                 ORDER BY h.at DESC LIMIT 1) h
             WHERE NOT h.gone
             ORDER BY k.domain, k.cluster"#,
            at,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    /// The clusters with their counts and error as they were at `at`; a cluster with no
    /// history by then is left out. `last_good` is `at` when it had no error then, else when
    /// the error was recorded — but never later than the cluster's last good data now, so a
    /// past time after the collector stopped is judged stale, never fresh.
    pub async fn clusters_at(&self, at: DateTime<Utc>) -> Result<Vec<ClusterRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredCluster,
            r#"SELECT c.name, c.labels,
                      CASE WHEN c.last_good IS NULL THEN NULL
                           WHEN h.error IS NULL THEN LEAST($1, c.last_good)
                           ELSE LEAST(h.at, c.last_good) END AS last_good,
                      h.error, '{}'::jsonb AS "kind_errors!", h.state_counts::text AS "state_counts!",
                      c.controllers, h.at AS "updated_at!"
             FROM clusters c
             CROSS JOIN LATERAL (
                 SELECT * FROM cluster_history h WHERE h.cluster = c.name AND h.at <= $1
                 ORDER BY h.at DESC LIMIT 1) h
             ORDER BY c.name"#,
            at,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    /// The root causes open at `at`: those still open that began by then, and those resolved
    /// since (their affected objects are not kept, so they list none).
    pub async fn root_causes_at(
        &self,
        at: DateTime<Utc>,
    ) -> Result<Vec<RootCauseRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredRootCause,
            r#"SELECT id AS "id!", state AS "state!", since, reason AS "reason!", message AS "message!", cause AS "cause!", affected AS "affected!"
             FROM (SELECT id, state, since, reason, message, cause::text AS cause, affected::text AS affected FROM root_causes
                   WHERE COALESCE(since, updated_at) <= $1
                   UNION ALL
                   (SELECT DISTINCT ON (root_cause) root_cause, state, since, reason, '', cause::text, '[]' FROM resolved_root_causes
                    WHERE since <= $1 AND resolved_at > $1
                      AND root_cause NOT IN (SELECT id FROM root_causes WHERE COALESCE(since, updated_at) <= $1)
                    ORDER BY root_cause, resolved_at)) open
             ORDER BY id"#,
            at,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }
}

/// A history written in one go (the demo's generated 90 days): rollouts, outages, domain
/// verdicts as they changed and cluster counts.
#[derive(Debug, Default)]
pub struct SeededHistory {
    pub rollouts: Vec<RolloutRow>,
    pub outages: Vec<OutageRow>,
    pub domains: Vec<(DateTime<Utc>, DomainRow)>,
    pub clusters: Vec<(DateTime<Utc>, String, StateCounts)>,
}

impl Store {
    /// Writes `history` unless some rollout is recorded already (a restarted demo keeps what
    /// it had); says whether it wrote.
    pub async fn seed_history(&self, history: &SeededHistory) -> Result<bool, sqlx::Error> {
        let mut tx = self.pool().begin().await?;
        let recorded = sqlx::query_scalar!(r#"SELECT EXISTS (SELECT 1 FROM rollouts) AS "some!""#)
            .fetch_one(&mut *tx)
            .await?;
        if recorded {
            return Ok(false);
        }
        let r = &history.rollouts;
        sqlx::query!(
            "INSERT INTO rollouts (domain, version, cluster, offered_at, applied_at, healthy_at, problem_at, state, cause, reason, baseline, updated_at)
             SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[],
                                  $7::timestamptz[], $8::text[], $9::text[], $10::text[], $11::bool[], $12::timestamptz[])",
            r.iter().map(|r| r.domain.as_str()).collect::<Vec<_>>() as Vec<&str>,
            r.iter().map(|r| r.version.as_str()).collect::<Vec<_>>() as Vec<&str>,
            r.iter().map(|r| r.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
            &r.iter().map(|r| r.offered_at).collect::<Vec<_>>(),
            r.iter().map(|r| r.applied_at).collect::<Vec<_>>() as Vec<Option<DateTime<Utc>>>,
            r.iter().map(|r| r.healthy_at).collect::<Vec<_>>() as Vec<Option<DateTime<Utc>>>,
            r.iter().map(|r| r.problem_at).collect::<Vec<_>>() as Vec<Option<DateTime<Utc>>>,
            r.iter().map(|r| r.state.as_str()).collect::<Vec<_>>() as Vec<&str>,
            r.iter().map(|r| r.cause.as_deref()).collect::<Vec<_>>() as Vec<Option<&str>>,
            r.iter().map(|r| r.reason.as_str()).collect::<Vec<_>>() as Vec<&str>,
            &r.iter().map(|r| r.baseline).collect::<Vec<_>>(),
            &r.iter().map(|r| r.updated_at).collect::<Vec<_>>(),
        )
        .execute(&mut *tx)
        .await?;
        let o = &history.outages;
        sqlx::query!(
            "INSERT INTO domain_outages (domain, cluster, version, state, reason, opened_at, resolved_at)
             SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[])",
            o.iter().map(|o| o.domain.as_str()).collect::<Vec<_>>() as Vec<&str>,
            o.iter().map(|o| o.cluster.as_str()).collect::<Vec<_>>() as Vec<&str>,
            o.iter().map(|o| o.version.as_deref()).collect::<Vec<_>>() as Vec<Option<&str>>,
            o.iter().map(|o| o.state.as_str()).collect::<Vec<_>>() as Vec<&str>,
            o.iter().map(|o| o.reason.as_str()).collect::<Vec<_>>() as Vec<&str>,
            &o.iter().map(|o| o.opened_at).collect::<Vec<_>>(),
            o.iter().map(|o| o.resolved_at).collect::<Vec<_>>() as Vec<Option<DateTime<Utc>>>,
        )
        .execute(&mut *tx)
        .await?;
        let dated: Vec<(DateTime<Utc>, &DomainRow)> =
            history.domains.iter().map(|(at, row)| (*at, row)).collect();
        append_history(&mut tx, &dated).await?;
        let c = &history.clusters;
        sqlx::query!(
            "INSERT INTO cluster_history (at, cluster, state_counts)
             SELECT * FROM UNNEST($1::timestamptz[], $2::text[], $3::jsonb[])",
            &c.iter().map(|(at, _, _)| *at).collect::<Vec<_>>(),
            c.iter()
                .map(|(_, name, _)| name.as_str())
                .collect::<Vec<_>>() as Vec<&str>,
            c.iter()
                .map(|(_, _, counts)| Json(counts))
                .collect::<Vec<_>>() as Vec<Json<&StateCounts>>,
        )
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }
}
