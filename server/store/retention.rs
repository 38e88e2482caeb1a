//! History retention: old state transitions and resolved root causes are deleted so the tables
//! stay bounded.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

/// Deletes transitions older than `before`; returns how many.
#[tracing::instrument(skip_all)]
pub async fn delete_transitions_before(
    conn: &mut PgConnection,
    before: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!("DELETE FROM transitions WHERE at < $1", before)
        .execute(conn)
        .await?;
    Ok(done.rows_affected())
}

/// Deletes resolved root causes recorded before `before`; returns how many.
#[tracing::instrument(skip_all)]
pub async fn delete_resolved_before(
    conn: &mut PgConnection,
    before: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!(
        "DELETE FROM resolved_root_causes WHERE resolved_at < $1",
        before
    )
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

/// Deletes the domain and cluster history (the fleet at a past time) recorded before `before`.
#[tracing::instrument(skip_all)]
pub async fn delete_fleet_history_before(
    conn: &mut PgConnection,
    before: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    // The latest row before the cut stays: it is how the domain (or cluster) stood from then
    // on, until its next change.
    sqlx::query!(
        "DELETE FROM domain_history h WHERE h.at < $1
           AND EXISTS (SELECT 1 FROM domain_history l
                       WHERE l.domain = h.domain AND l.cluster = h.cluster AND l.at > h.at AND l.at <= $1)",
        before
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "DELETE FROM cluster_history h WHERE h.at < $1
           AND EXISTS (SELECT 1 FROM cluster_history l WHERE l.cluster = h.cluster AND l.at > h.at AND l.at <= $1)",
        before
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Deletes rollouts that last moved before `before`, and outages resolved before it.
#[tracing::instrument(skip_all)]
pub async fn delete_rollouts_before(
    conn: &mut PgConnection,
    before: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM rollouts WHERE updated_at < $1", before)
        .execute(&mut *conn)
        .await?;
    sqlx::query!("DELETE FROM domain_outages WHERE resolved_at < $1", before)
        .execute(conn)
        .await?;
    Ok(())
}
