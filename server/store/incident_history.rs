//! The history incidents read: root causes that cleared (recorded as they are deleted) and
//! when root-cause objects entered a problem state (from the transitions), for "recently
//! resolved" and "failed 5 times in 16m".

use super::Store;
use super::decode::Stored;
use super::reads::typed;
use crate::health::{Cause, State};
use crate::model::ObjectId;
use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use std::collections::HashMap;

/// One object's newest entries into a problem state since a moment: how many were counted,
/// and the first and the last of those.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProblemEntries {
    pub times: usize,
    pub first: DateTime<Utc>,
    pub last: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedRow {
    pub root_cause: String,
    pub cluster: String,
    pub state: State,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
    pub cause: Cause,
    pub resolved_at: DateTime<Utc>,
}

/// A `resolved_root_causes` row as stored, before its state is read as the engine's.
struct StoredResolved {
    id: i64,
    root_cause: String,
    cluster: String,
    state: String,
    since: Option<DateTime<Utc>>,
    reason: String,
    cause: String,
    resolved_at: DateTime<Utc>,
}

impl TryFrom<StoredResolved> for ResolvedRow {
    type Error = sqlx::Error;

    fn try_from(row: StoredResolved) -> Result<ResolvedRow, sqlx::Error> {
        let stored = Stored::new("resolved_root_causes", row.id);
        let state = stored.parsed("state", &row.state)?;
        Ok(ResolvedRow {
            state,
            cause: stored.json("cause", &row.cause)?,
            root_cause: row.root_cause,
            cluster: row.cluster,
            since: row.since,
            reason: row.reason,
            resolved_at: row.resolved_at,
        })
    }
}

/// Deletes the root causes that went away and records them as resolved at `now`: those in
/// `gone`, and those of the `replaced` clusters (whose stored rows the writer does not know)
/// not in `kept`. Only the rows deleted are recorded, so a cause never written is not.
pub(super) async fn resolve(
    conn: &mut PgConnection,
    replaced: &[String],
    kept: &[&str],
    gone: &[&str],
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "WITH gone AS (
             DELETE FROM root_causes
             WHERE id = ANY($3) OR (cluster = ANY($1) AND NOT (id = ANY($2)))
             RETURNING id, cluster, state, since, reason, cause)
         INSERT INTO resolved_root_causes (root_cause, cluster, state, since, reason, cause, resolved_at)
         SELECT id, cluster, state, since, reason, cause, $4 FROM gone",
        replaced,
        kept as &[&str],
        gone as &[&str],
        now,
    )
    .execute(conn)
    .await?;
    Ok(())
}

impl Store {
    /// Root causes resolved since `since`, newest first.
    pub async fn resolved_since(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<ResolvedRow>, sqlx::Error> {
        let rows = sqlx::query_as!(
            StoredResolved,
            r#"SELECT id, root_cause, cluster, state, since, reason, cause::text AS "cause!", resolved_at FROM resolved_root_causes
             WHERE resolved_at >= $1 ORDER BY resolved_at DESC LIMIT 500"#,
            since,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    /// Each of the objects `ids`' newest entries into a problem state since `since` (from a
    /// state that was not one), at most `newest` of them: how many, the first and the last;
    /// objects with no entry are left out. Bounded and counted here, one row per object: a
    /// flapping object enters thousands of times an hour under churn, and the fleet page
    /// reads this on every request.
    pub async fn problem_entries(
        &self,
        ids: &[String],
        since: DateTime<Utc>,
        newest: usize,
    ) -> Result<Vec<(String, ProblemEntries)>, sqlx::Error> {
        let problems: Vec<&str> = State::BY_SEVERITY
            .into_iter()
            .filter(|s| s.is_problem())
            .map(State::as_str)
            .collect();
        // Matched column by column so the lookup uses transitions_object (cluster, kind,
        // namespace, name, at): a concatenated id would scan every transition of the window.
        let mut columns: [Vec<&str>; 4] = Default::default();
        let mut asked = HashMap::new();
        for id in ids {
            if let Some(parts @ (cluster, kind, namespace, name)) = ObjectId::split(id) {
                for (column, value) in columns.iter_mut().zip([cluster, kind, namespace, name]) {
                    column.push(value);
                }
                asked.insert(parts, id);
            }
        }
        let [clusters, kinds, namespaces, names] = columns;
        let rows = sqlx::query!(
            r#"SELECT c.cluster AS "cluster!", c.kind AS "kind!", c.namespace AS "namespace!", c.name AS "name!",
                      count(*) AS "times!", min(e.at) AS "first!", max(e.at) AS "last!"
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[])
                  AS c(cluster, kind, namespace, name)
             CROSS JOIN LATERAL (
                 SELECT t.at FROM transitions t
                 WHERE t.cluster = c.cluster AND t.kind = c.kind
                   AND t.namespace = c.namespace AND t.name = c.name
                   AND t.at >= $5 AND t.to_state = ANY($6)
                   AND (t.from_state IS NULL OR NOT (t.from_state = ANY($6)))
                 ORDER BY t.at DESC LIMIT $7) e
             GROUP BY c.cluster, c.kind, c.namespace, c.name"#,
            clusters as Vec<&str>,
            kinds as Vec<&str>,
            namespaces as Vec<&str>,
            names as Vec<&str>,
            since,
            problems as Vec<&str>,
            i64::try_from(newest).unwrap_or(i64::MAX),
        )
        .fetch_all(self.pool())
        .await?;
        // Each row answers the id it was asked for, as asked (never an id spelled here).
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                let parts = (
                    row.cluster.as_str(),
                    row.kind.as_str(),
                    row.namespace.as_str(),
                    row.name.as_str(),
                );
                let id = (*asked.get(&parts)?).clone();
                let entries = ProblemEntries {
                    times: usize::try_from(row.times).unwrap_or(0),
                    first: row.first,
                    last: row.last,
                };
                Some((id, entries))
            })
            .collect())
    }
}
