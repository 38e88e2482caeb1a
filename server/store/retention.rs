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
