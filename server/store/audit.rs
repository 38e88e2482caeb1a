//! The `audit_events` table: one row per write made through fleetglass, written in the
//! transaction of the write it records (a silence and its record commit together).

use super::Store;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgConnection;

/// What the audit trail says about one write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct AuditEvent {
    pub id: i64,
    pub at: DateTime<Utc>,
    /// Who, as authentication established it ("token ci", the proxy's user, "fleetglass").
    pub actor: String,
    /// "sign-in", "sign-in-refused", "sign-out", "silence-added", "silence-expired",
    /// "policy-changed".
    pub action: String,
    /// What it was done to (a silence's scope, a token's name).
    pub subject: String,
    pub detail: String,
    /// The address the request came from ("in-process" for requests made in process).
    pub source: String,
}

/// An event to record (its id and time are given when written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAuditEvent<'a> {
    pub actor: &'a str,
    pub action: &'a str,
    pub subject: &'a str,
    pub detail: &'a str,
    pub source: &'a str,
}

/// Cut so that a hostile value (a 1 MB proxy header, a huge comment) cannot bloat the table.
const KEPT_CHARS: usize = 1_000;

fn kept(text: &str) -> String {
    text.chars().take(KEPT_CHARS).collect()
}

#[tracing::instrument(skip_all)]
pub async fn record(
    conn: &mut PgConnection,
    event: &NewAuditEvent<'_>,
    at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO audit_events (at, actor, action, subject, detail, source) VALUES ($1, $2, $3, $4, $5, $6)",
        at,
        kept(event.actor),
        kept(event.action),
        kept(event.subject),
        kept(event.detail),
        kept(event.source),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// The detail of the latest `policy-changed` event: the policy in force when it was written.
pub async fn last_policy(conn: &mut PgConnection) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT detail FROM audit_events WHERE action = 'policy-changed' ORDER BY id DESC LIMIT 1"
    )
    .fetch_optional(conn)
    .await
}

/// Deletes the events recorded before `before`.
#[tracing::instrument(skip_all)]
pub async fn delete_before(
    conn: &mut PgConnection,
    before: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!("DELETE FROM audit_events WHERE at < $1", before)
        .execute(conn)
        .await?;
    Ok(done.rows_affected())
}

impl Store {
    /// The newest events first, at most `limit`, those older than event `before` when given.
    pub async fn audit_events(
        &self,
        limit: i64,
        before: Option<i64>,
    ) -> Result<Vec<AuditEvent>, sqlx::Error> {
        sqlx::query_as!(
            AuditEvent,
            "SELECT id, at, actor, action, subject, detail, source FROM audit_events
             WHERE $2::bigint IS NULL OR id < $2
             ORDER BY id DESC LIMIT $1",
            limit,
            before,
        )
        .fetch_all(self.pool())
        .await
    }
}
