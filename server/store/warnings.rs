//! Warning events kept beside the verdicts: upserted by their uid (a repeated event's count
//! grows in place), at most [`KEPT_PER_OBJECT`] per object, read newest first.

use super::Store;
use super::decode::Stored;
use super::objects::Columns;
use crate::model::{ObjectId, Warning};
use chrono::{DateTime, Utc};
use sqlx::PgConnection;

/// The newest this many Warning events of each object are kept: enough to see what keeps
/// happening, bounded however noisy an object is.
pub const KEPT_PER_OBJECT: i64 = 10;

/// Writes `warnings` (a later copy of an event replaces the stored one) and trims their
/// objects to the newest [`KEPT_PER_OBJECT`].
#[tracing::instrument(skip_all, fields(warnings = warnings.len()))]
pub async fn write_warnings(
    conn: &mut PgConnection,
    warnings: &[Warning],
) -> Result<(), sqlx::Error> {
    if warnings.is_empty() {
        return Ok(());
    }
    let (mut uid, mut reason, mut note, mut count, mut last_seen, mut reporter) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    // The newest copy of each event wins within the batch too (ON CONFLICT may not touch a
    // row twice in one statement).
    let mut newest: Vec<&Warning> = Vec::with_capacity(warnings.len());
    for warning in warnings.iter().rev() {
        let seen = newest
            .iter()
            .any(|w| w.uid == warning.uid && w.cluster() == warning.cluster());
        if !seen {
            newest.push(warning);
        }
    }
    let newest: Vec<&Warning> = newest
        .into_iter()
        .filter(|w| w.regarding.parts().is_some())
        .collect();
    let objects = Columns::of_ids(newest.iter().map(|w| &w.regarding));
    for warning in newest {
        uid.push(warning.uid.as_str());
        reason.push(warning.reason.as_str());
        note.push(warning.note.as_str());
        count.push(warning.count);
        last_seen.push(warning.last_seen);
        reporter.push(warning.reporter.as_str());
    }
    sqlx::query!(
        "INSERT INTO warning_events (cluster, kind, namespace, name, uid, reason, note, count, last_seen, reporter)
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int4[], $9::timestamptz[], $10::text[])
         ON CONFLICT (cluster, uid) DO UPDATE SET
           kind = EXCLUDED.kind, namespace = EXCLUDED.namespace, name = EXCLUDED.name,
           reason = EXCLUDED.reason, note = EXCLUDED.note, count = EXCLUDED.count,
           last_seen = EXCLUDED.last_seen, reporter = EXCLUDED.reporter",
        &objects.cluster as &[&str],
        &objects.kind as &[&str],
        &objects.namespace as &[&str],
        &objects.name as &[&str],
        &uid as &[&str],
        &reason as &[&str],
        &note as &[&str],
        &count,
        &last_seen as &[DateTime<Utc>],
        &reporter as &[&str],
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "DELETE FROM warning_events w USING (
           SELECT cluster, uid FROM (
             SELECT e.cluster, e.uid, row_number() OVER (
               PARTITION BY e.cluster, e.kind, e.namespace, e.name ORDER BY e.last_seen DESC, e.uid) AS n
             FROM warning_events e
             JOIN (SELECT DISTINCT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[])) AS t(c, k, ns, n)
               ON e.cluster = t.c AND e.kind = t.k AND e.namespace = t.ns AND e.name = t.n
           ) ranked WHERE n > $5
         ) old
         WHERE w.cluster = old.cluster AND w.uid = old.uid",
        &objects.cluster as &[&str],
        &objects.kind as &[&str],
        &objects.namespace as &[&str],
        &objects.name as &[&str],
        KEPT_PER_OBJECT,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Deletes warnings last seen before `before`; returns how many.
pub async fn delete_warnings_before(
    conn: &mut PgConnection,
    before: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!("DELETE FROM warning_events WHERE last_seen < $1", before)
        .execute(conn)
        .await?;
    Ok(done.rows_affected())
}

impl Store {
    /// The Warning events kept of these objects and of the pods each owns (a workload's
    /// evidence is mostly on its pods: the kubelet writes about the pod), newest first, each
    /// with the id it was asked for.
    pub async fn warnings_of(
        &self,
        ids: &[ObjectId],
    ) -> Result<Vec<(ObjectId, Warning)>, sqlx::Error> {
        let objects = Columns::of_ids(ids);
        // Driven from the kept warnings (bounded), never from the objects: a fleet page asks
        // for every root cause, and a cause's namespace can hold thousands of pods.
        let rows = sqlx::query!(
            r#"WITH asked AS (
                 SELECT DISTINCT c || '/' || k || '/' || ns || '/' || n AS id, c, k, ns, n
                 FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) AS t(c, k, ns, n)
               )
             SELECT a.id AS "asked!", w.cluster AS "cluster!", w.kind AS "kind!", w.namespace AS "namespace!",
                    w.name AS "name!", w.uid AS "uid!", w.reason AS "reason!", w.note AS "note!",
                    w.count AS "count!", w.last_seen AS "last_seen!", w.reporter AS "reporter!"
             FROM warning_events w
             JOIN asked a ON w.cluster = a.c AND w.kind = a.k AND w.namespace = a.ns AND w.name = a.n
             UNION ALL
             SELECT a.id, w.cluster, w.kind, w.namespace, w.name, w.uid, w.reason, w.note, w.count, w.last_seen, w.reporter
             FROM warning_events w
             JOIN objects p ON p.cluster = w.cluster AND p.kind = w.kind AND p.namespace = w.namespace AND p.name = w.name
             CROSS JOIN LATERAL jsonb_array_elements(p.edges) e
             JOIN asked a ON a.id = e->>'target'
             WHERE w.kind = 'Pod' AND e->>'kind' = 'owner'
             ORDER BY 10 DESC, 6"#,
            &objects.cluster as &[&str],
            &objects.kind as &[&str],
            &objects.namespace as &[&str],
            &objects.name as &[&str],
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|row| {
                let stored = Stored::new("warning_events", row.uid.clone());
                let regarding = [row.cluster, row.kind, row.namespace, row.name].join("/");
                let warning = Warning {
                    regarding: stored.parsed("object", &regarding)?,
                    uid: row.uid,
                    reason: row.reason,
                    note: row.note,
                    count: row.count,
                    last_seen: row.last_seen,
                    reporter: row.reporter,
                };
                Ok((stored.parsed("asked", &row.asked)?, warning))
            })
            .collect()
    }
}
