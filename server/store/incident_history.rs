//! The history incidents read: root causes that cleared (recorded as they are deleted) and
//! when root-cause objects entered a problem state (from the transitions), for "recently
//! resolved" and "failed 5 times in 16m".

use super::Store;
use super::decode::Stored;
use super::reads::typed;
use crate::health::State;
use crate::model::ObjectId;
use chrono::{DateTime, Utc};
use sqlx::PgConnection;

#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedRow {
    pub root_cause: String,
    pub cluster: String,
    pub state: State,
    pub since: Option<DateTime<Utc>>,
    pub reason: String,
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
    resolved_at: DateTime<Utc>,
}

impl TryFrom<StoredResolved> for ResolvedRow {
    type Error = sqlx::Error;

    fn try_from(row: StoredResolved) -> Result<ResolvedRow, sqlx::Error> {
        let state = Stored::new("resolved_root_causes", row.id).parsed("state", &row.state)?;
        Ok(ResolvedRow {
            state,
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
             RETURNING id, cluster, state, since, reason)
         INSERT INTO resolved_root_causes (root_cause, cluster, state, since, reason, resolved_at)
         SELECT id, cluster, state, since, reason, $4 FROM gone",
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
            "SELECT id, root_cause, cluster, state, since, reason, resolved_at FROM resolved_root_causes
             WHERE resolved_at >= $1 ORDER BY resolved_at DESC LIMIT 500",
            since,
        )
        .fetch_all(self.pool())
        .await?;
        typed(rows)
    }

    /// When each of the objects `ids` entered a problem state since `since` (from a state
    /// that was not one), as (id, at).
    pub async fn problem_entries(
        &self,
        ids: &[String],
        since: DateTime<Utc>,
    ) -> Result<Vec<(String, DateTime<Utc>)>, sqlx::Error> {
        let problems: Vec<&str> = State::BY_SEVERITY
            .into_iter()
            .filter(|s| s.is_problem())
            .map(State::as_str)
            .collect();
        // Matched column by column so the lookup uses transitions_object (cluster, kind,
        // namespace, name, at): a concatenated id would scan every transition of the window.
        let mut columns: [Vec<String>; 4] = Default::default();
        for id in ids {
            let id = ObjectId(id.clone());
            if let Some((cluster, kind, namespace, name)) = id.parts() {
                for (column, value) in columns.iter_mut().zip([cluster, kind, namespace, name]) {
                    column.push(value.to_string());
                }
            }
        }
        let [clusters, kinds, namespaces, names] = columns;
        let rows = sqlx::query!(
            r#"SELECT t.cluster || '/' || t.kind || '/' || t.namespace || '/' || t.name AS "id!", t.at
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[])
                  AS c(cluster, kind, namespace, name)
             JOIN transitions t ON t.cluster = c.cluster AND t.kind = c.kind
                               AND t.namespace = c.namespace AND t.name = c.name
             WHERE t.at >= $5 AND t.to_state = ANY($6)
               AND (t.from_state IS NULL OR NOT (t.from_state = ANY($6)))"#,
            &clusters,
            &kinds,
            &namespaces,
            &names,
            since,
            problems as Vec<&str>,
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(|row| (row.id, row.at)).collect())
    }
}
