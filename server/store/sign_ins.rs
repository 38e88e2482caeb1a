//! The `revoked_sign_ins` table: browser sign-ins ended before their expiry (by signing out).
//! A row lives until the sign-in would have expired; expired ones are dropped as new ones come.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

/// Ends the sign-in `id`, which would otherwise last until `expires_at`.
#[tracing::instrument(skip_all)]
pub async fn revoke(
    conn: &mut PgConnection,
    id: &str,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM revoked_sign_ins WHERE expires_at <= $1", now)
        .execute(&mut *conn)
        .await?;
    sqlx::query!(
        "INSERT INTO revoked_sign_ins (id, expires_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
        id,
        expires_at,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Whether the sign-in `id` was ended.
#[tracing::instrument(skip_all)]
pub async fn is_revoked(conn: &mut PgConnection, id: &str) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM revoked_sign_ins WHERE id = $1) AS "revoked!""#,
        id
    )
    .fetch_one(conn)
    .await
}
