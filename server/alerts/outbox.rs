//! The outbox: every notification is a row, written in the same transaction as the alert
//! change that caused it, and delivered by the worker from there. State lives in the table, so
//! a restart loses nothing.

use super::Notice;
use serde_json::Value;
use sqlx::PgConnection;

/// Queues a notification for a sink, due at once; `send: false` records it as silenced.
/// Due times are on the database's clock, so replicas with skewed clocks agree.
#[tracing::instrument(skip_all)]
pub async fn enqueue(
    conn: &mut PgConnection,
    sink: &str,
    notice: &Notice,
    send: bool,
) -> Result<(), sqlx::Error> {
    let payload = serde_json::to_value(notice).map_err(|e| sqlx::Error::Encode(e.into()))?;
    sqlx::query(
        "INSERT INTO alert_outbox (alert_id, sink, event, payload, status, next_attempt_at, created_at)
         VALUES ($1, $2, $3, $4, $5, LEAST($6, now()), $6)",
    )
    .bind(notice.alert_id)
    .bind(sink)
    .bind(notice.event.as_str())
    .bind(payload)
    .bind(if send { "pending" } else { "silenced" })
    .bind(notice.at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Notifications waiting to be delivered (due now or retrying later).
#[tracing::instrument(skip_all)]
pub async fn pending(pool: &sqlx::PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT count(*) FROM alert_outbox WHERE status = 'pending'")
        .fetch_one(pool)
        .await
}

/// A claimed notification, locked by the claiming transaction.
#[derive(Debug, sqlx::FromRow)]
pub struct Claimed {
    pub id: i64,
    pub sink: String,
    pub payload: Value,
    pub attempts: i32,
    pub slack_channel: Option<String>,
    pub slack_ts: Option<String>,
}

/// The oldest due notification no other worker holds, and only if it is the first pending one
/// of its alert and sink (so an edit never overtakes the message it edits).
#[tracing::instrument(skip_all)]
pub async fn claim(conn: &mut PgConnection) -> Result<Option<Claimed>, sqlx::Error> {
    sqlx::query_as(
        "SELECT o.id, o.sink, o.payload, o.attempts, a.slack_channel, a.slack_ts
         FROM alert_outbox o JOIN alerts a ON a.id = o.alert_id
         WHERE o.status = 'pending' AND o.next_attempt_at <= now()
           AND NOT EXISTS (SELECT 1 FROM alert_outbox e
                           WHERE e.alert_id = o.alert_id AND e.sink = o.sink
                             AND e.status = 'pending' AND e.id < o.id)
         ORDER BY o.next_attempt_at, o.id
         LIMIT 1
         FOR UPDATE OF o SKIP LOCKED",
    )
    .fetch_optional(conn)
    .await
}

#[tracing::instrument(skip_all)]
pub async fn mark_delivered(conn: &mut PgConnection, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE alert_outbox SET status = 'delivered', attempts = attempts + 1,
             delivered_at = clock_timestamp(), last_error = NULL
         WHERE id = $1",
    )
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Remembers the Slack message a firing notification created, so later ones edit and thread.
#[tracing::instrument(skip_all)]
pub async fn remember_slack_message(
    conn: &mut PgConnection,
    alert_id: i64,
    channel: &str,
    ts: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE alerts SET slack_channel = $2, slack_ts = $3 WHERE id = $1")
        .bind(alert_id)
        .bind(channel)
        .bind(ts)
        .execute(conn)
        .await?;
    Ok(())
}

#[tracing::instrument(skip_all)]
/// Tries again `wait` from now (the wall clock, not the transaction's start: the failed
/// request took time, and a Retry-After counts from its answer).
pub async fn reschedule(
    conn: &mut PgConnection,
    id: i64,
    wait: std::time::Duration,
    error: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE alert_outbox SET attempts = attempts + 1,
             next_attempt_at = clock_timestamp() + $2 * interval '1 millisecond', last_error = $3
         WHERE id = $1",
    )
    .bind(id)
    .bind(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX))
    .bind(error)
    .execute(conn)
    .await?;
    Ok(())
}
