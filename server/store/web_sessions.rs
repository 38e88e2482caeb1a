//! The `web_sessions` and `oidc_logins` tables: browser sessions of people signed in through
//! an OpenID provider, and the sign-ins on their way there. Ended rows are dropped as new ones
//! come (a day after their end, so a revoked session still shows as revoked for a while).

use chrono::{DateTime, TimeDelta, Utc};
use sqlx::PgConnection;

/// How long a sign-in may take at the provider before it can no longer come back.
pub const LOGIN_TIMEOUT: TimeDelta = TimeDelta::minutes(10);

/// A sign-in sent to the provider: what its return must match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingLogin {
    pub nonce: String,
    pub pkce_verifier: String,
    /// Where to go once signed in (a path on this site).
    pub next: String,
}

/// A session as a request sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub username: String,
    pub groups: Vec<String>,
    pub expires_at: DateTime<Utc>,
}

/// A session as `fleetglass sessions` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub username: String,
    pub subject: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub source: String,
}

/// A session to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession<'a> {
    pub id_hash: &'a [u8],
    pub username: &'a str,
    pub subject: &'a str,
    pub issuer: &'a str,
    pub groups: &'a [String],
    pub expires_at: DateTime<Utc>,
    pub source: &'a str,
}

#[tracing::instrument(skip_all)]
pub async fn begin_login(
    conn: &mut PgConnection,
    state_hash: &[u8],
    login: &PendingLogin,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "DELETE FROM oidc_logins WHERE created_at < $1",
        now - LOGIN_TIMEOUT
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "INSERT INTO oidc_logins (state_hash, nonce, pkce_verifier, next, created_at) VALUES ($1, $2, $3, $4, $5)",
        state_hash,
        login.nonce,
        login.pkce_verifier,
        login.next,
        now,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// The sign-in with this state, taken (a second return with the same state finds nothing),
/// if it began within [`LOGIN_TIMEOUT`].
#[tracing::instrument(skip_all)]
pub async fn take_login(
    conn: &mut PgConnection,
    state_hash: &[u8],
    now: DateTime<Utc>,
) -> Result<Option<PendingLogin>, sqlx::Error> {
    let row = sqlx::query!(
        "DELETE FROM oidc_logins WHERE state_hash = $1 RETURNING nonce, pkce_verifier, next, created_at",
        state_hash,
    )
    .fetch_optional(conn)
    .await?;
    Ok(row
        .filter(|row| row.created_at >= now - LOGIN_TIMEOUT)
        .map(|row| PendingLogin {
            nonce: row.nonce,
            pkce_verifier: row.pkce_verifier,
            next: row.next,
        }))
}

#[tracing::instrument(skip_all)]
pub async fn open(
    conn: &mut PgConnection,
    session: &NewSession<'_>,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "DELETE FROM web_sessions WHERE expires_at < $1 OR revoked_at < $1",
        now - TimeDelta::days(1)
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "INSERT INTO web_sessions (id_hash, username, subject, issuer, groups, created_at, expires_at, source)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        session.id_hash,
        session.username,
        session.subject,
        session.issuer,
        session.groups,
        now,
        session.expires_at,
        session.source,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// The live session with this id: not expired, not revoked.
#[tracing::instrument(skip_all)]
pub async fn find(
    conn: &mut PgConnection,
    id_hash: &[u8],
    now: DateTime<Utc>,
) -> Result<Option<Session>, sqlx::Error> {
    let row = sqlx::query!(
        "SELECT username, groups, expires_at FROM web_sessions
         WHERE id_hash = $1 AND revoked_at IS NULL AND expires_at > $2",
        id_hash,
        now,
    )
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|row| Session {
        username: row.username,
        groups: row.groups,
        expires_at: row.expires_at,
    }))
}

/// Ends the session with this id; says whether a live one was ended.
#[tracing::instrument(skip_all)]
pub async fn revoke(
    conn: &mut PgConnection,
    id_hash: &[u8],
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE web_sessions SET revoked_at = $2 WHERE id_hash = $1 AND revoked_at IS NULL AND expires_at > $2",
        id_hash,
        now,
    )
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Ends every live session of `username`; says how many.
#[tracing::instrument(skip_all)]
pub async fn revoke_user(
    conn: &mut PgConnection,
    username: &str,
    now: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE web_sessions SET revoked_at = $2 WHERE username = $1 AND revoked_at IS NULL AND expires_at > $2",
        username,
        now,
    )
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

/// The live sessions, newest first.
#[tracing::instrument(skip_all)]
pub async fn live(
    conn: &mut PgConnection,
    now: DateTime<Utc>,
) -> Result<Vec<SessionRow>, sqlx::Error> {
    sqlx::query_as!(
        SessionRow,
        "SELECT username, subject, created_at, expires_at, source FROM web_sessions
         WHERE revoked_at IS NULL AND expires_at > $1 ORDER BY created_at DESC",
        now,
    )
    .fetch_all(conn)
    .await
}
