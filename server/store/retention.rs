//! History retention: old state transitions are deleted so the table stays bounded.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

/// Deletes transitions older than `before`; returns how many.
#[tracing::instrument(skip_all)]
pub async fn delete_transitions_before(
    conn: &mut PgConnection,
    before: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query("DELETE FROM transitions WHERE at < $1")
        .bind(before)
        .execute(conn)
        .await?;
    Ok(done.rows_affected())
}
