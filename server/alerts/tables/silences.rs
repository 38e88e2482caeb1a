//! The `silences` table: creating a silence, the ones in force, ending one. What a silence
//! matches and what is a valid one is `alerts::silences`.

use crate::alerts::records::{NewSilence, Silence};
use chrono::{DateTime, Utc};
use sqlx::PgConnection;

#[tracing::instrument(skip_all)]
pub async fn create(
    conn: &mut PgConnection,
    silence: &NewSilence,
    created_by: &str,
    now: DateTime<Utc>,
) -> Result<Silence, sqlx::Error> {
    sqlx::query_as!(
        Silence,
        "INSERT INTO silences (root_cause, domain, cluster, until, comment, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         RETURNING id, root_cause, domain, cluster, until, comment, created_by, created_at",
        silence.root_cause,
        silence.domain,
        silence.cluster,
        silence.until,
        silence.comment,
        created_by,
        now,
    )
    .fetch_one(conn)
    .await
}

/// Silences still in force at `now`, newest first.
#[tracing::instrument(skip_all)]
pub async fn active(
    conn: &mut PgConnection,
    now: DateTime<Utc>,
) -> Result<Vec<Silence>, sqlx::Error> {
    sqlx::query_as!(
        Silence,
        "SELECT id, root_cause, domain, cluster, until, comment, created_by, created_at
         FROM silences WHERE until > $1 ORDER BY id DESC",
        now,
    )
    .fetch_all(conn)
    .await
}

/// Ends a silence now; false when there was no such silence in force.
#[tracing::instrument(skip_all)]
pub async fn expire(
    conn: &mut PgConnection,
    id: i64,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE silences SET until = $2 WHERE id = $1 AND until > $2",
        id,
        now,
    )
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}
