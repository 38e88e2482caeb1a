//! The outbox: every notification is a row, written in the same transaction as the alert
//! change that caused it, and delivered by the workers from there: claimed (a lease, committed
//! at once), sent, then recorded. State lives in the table, so a restart loses nothing; a
//! crash between sending and recording sends again (at least once).

use crate::alerts::Notice;
use serde_json::Value;
use sqlx::{PgConnection, PgPool};
use std::time::Duration;

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
    sqlx::query!(
        "INSERT INTO alert_outbox (alert_id, sink, event, payload, status, next_attempt_at, created_at)
         VALUES ($1, $2, $3, $4, $5, LEAST($6, now()), $6)",
        notice.alert_id,
        sink,
        notice.event.as_str(),
        payload,
        if send { "pending" } else { "silenced" },
        notice.at,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Notifications waiting to be delivered (due now or retrying later).
#[tracing::instrument(skip_all)]
pub async fn pending(pool: &sqlx::PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT count(*) AS "pending!" FROM alert_outbox WHERE status = 'pending'"#
    )
    .fetch_one(pool)
    .await
}

/// A claimed notification: no other worker takes it until the claim expires.
#[derive(Debug)]
pub struct Claimed {
    pub id: i64,
    pub sink: String,
    pub payload: Value,
    /// Outcomes recorded so far (deliveries and failures).
    pub attempts: i32,
    /// Claims so far, this one included.
    pub claims: i32,
    pub slack_channel: Option<String>,
    pub slack_ts: Option<String>,
}

impl Claimed {
    /// An earlier claim ended without recording its outcome (the process stopped mid-send), so
    /// the notification may already have been sent.
    pub fn maybe_sent_before(&self) -> bool {
        self.claims > self.attempts + 1
    }
}

/// Claims the oldest due notification of `sink` that no other worker holds, and only if it
/// is the first pending one of its alert and sink (so an edit never overtakes the message it
/// edits), for `lease`; commits at once, so no transaction stays open while it is sent.
#[tracing::instrument(skip_all)]
pub async fn claim(
    pool: &PgPool,
    sink: &str,
    lease: Duration,
) -> Result<Option<Claimed>, sqlx::Error> {
    sqlx::query_as!(
        Claimed,
        "WITH next AS (
             SELECT o.id FROM alert_outbox o
             WHERE o.sink = $1 AND o.status = 'pending' AND o.next_attempt_at <= now()
               AND (o.claimed_until IS NULL OR o.claimed_until <= now())
               AND NOT EXISTS (SELECT 1 FROM alert_outbox e
                               WHERE e.alert_id = o.alert_id AND e.sink = o.sink
                                 AND e.status = 'pending' AND e.id < o.id)
             ORDER BY o.next_attempt_at, o.id
             LIMIT 1
             FOR UPDATE OF o SKIP LOCKED
         ), claimed AS (
             UPDATE alert_outbox o
             SET claimed_until = clock_timestamp() + $2 * interval '1 millisecond', claims = o.claims + 1
             FROM next WHERE o.id = next.id
             RETURNING o.id, o.alert_id, o.sink, o.payload, o.attempts, o.claims
         )
         SELECT c.id, c.sink, c.payload, c.attempts, c.claims, a.slack_channel, a.slack_ts
         FROM claimed c JOIN alerts a ON a.id = c.alert_id",
        sink,
        millis(lease),
    )
    .fetch_optional(pool)
    .await
}

/// Records a delivery, unless the claim was lost meanwhile (it expired and another worker
/// claimed the notification, which then records its own outcome); true when recorded.
#[tracing::instrument(skip_all)]
pub async fn mark_delivered(
    conn: &mut PgConnection,
    claimed: &Claimed,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE alert_outbox SET status = 'delivered', attempts = attempts + 1,
             delivered_at = clock_timestamp(), last_error = NULL, claimed_until = NULL
         WHERE id = $1 AND claims = $2 AND status = 'pending'",
        claimed.id,
        claimed.claims,
    )
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Remembers the Slack message a firing notification created, so later ones edit and thread.
#[tracing::instrument(skip_all)]
pub async fn remember_slack_message(
    conn: &mut PgConnection,
    alert_id: i64,
    channel: &str,
    ts: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE alerts SET slack_channel = $2, slack_ts = $3 WHERE id = $1",
        alert_id,
        channel,
        ts,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Tries again `wait` from now (the wall clock: the failed request took time, and a
/// Retry-After counts from its answer) and releases the claim. `wait` is bounded by the
/// caller (`max_backoff`), so the interval arithmetic cannot overflow.
#[tracing::instrument(skip_all)]
pub async fn reschedule(
    pool: &PgPool,
    claimed: &Claimed,
    wait: Duration,
    error: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE alert_outbox SET attempts = attempts + 1, claimed_until = NULL,
             next_attempt_at = clock_timestamp() + $2 * interval '1 millisecond', last_error = $3
         WHERE id = $1 AND claims = $4 AND status = 'pending'",
        claimed.id,
        millis(wait),
        error,
        claimed.claims,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Milliseconds as the `$n * interval '1 millisecond'` arithmetic takes them (float8).
fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
