//! Collector leases: which replica collects which cluster, and which replicas are alive. Expiry
//! is judged by the database clock so replicas with skewed clocks still agree.

use sqlx::PgConnection;
use sqlx::postgres::types::PgInterval;
use std::time::Duration;

fn interval(period: Duration) -> PgInterval {
    PgInterval {
        months: 0,
        days: 0,
        microseconds: i64::try_from(period.as_micros()).unwrap_or(i64::MAX),
    }
}

/// Records that `holder` is alive for `period`, and returns how many replicas are alive.
#[tracing::instrument(skip_all)]
pub async fn heartbeat(
    conn: &mut PgConnection,
    holder: &str,
    period: Duration,
) -> Result<usize, sqlx::Error> {
    sqlx::query!(
        "INSERT INTO collector_heartbeats (holder, expires_at) VALUES ($1, now() + $2)
         ON CONFLICT (holder) DO UPDATE SET expires_at = excluded.expires_at",
        holder,
        interval(period),
    )
    .execute(&mut *conn)
    .await?;
    let live = sqlx::query_scalar!(
        r#"SELECT count(*) AS "live!" FROM collector_heartbeats WHERE expires_at > now()"#
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok(usize::try_from(live).unwrap_or(1).max(1))
}

/// Takes or renews the lease on `cluster`: succeeds when it is free, expired, or already ours.
#[tracing::instrument(skip_all, fields(cluster))]
pub async fn acquire(
    conn: &mut PgConnection,
    cluster: &str,
    holder: &str,
    period: Duration,
) -> Result<bool, sqlx::Error> {
    let won = sqlx::query!(
        "INSERT INTO collector_leases (cluster, holder, expires_at) VALUES ($1, $2, now() + $3)
         ON CONFLICT (cluster) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
         WHERE collector_leases.expires_at < now() OR collector_leases.holder = excluded.holder
         RETURNING cluster",
        cluster,
        holder,
        interval(period),
    )
    .fetch_optional(conn)
    .await?;
    Ok(won.is_some())
}

/// Clusters whose lease is held by someone alive other than `holder`.
#[tracing::instrument(skip_all)]
pub async fn held_by_others(
    conn: &mut PgConnection,
    holder: &str,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT cluster FROM collector_leases WHERE holder <> $1 AND expires_at >= now()",
        holder,
    )
    .fetch_all(conn)
    .await
}

/// Gives up leases (surplus when rebalancing, or all of them at shutdown).
#[tracing::instrument(skip_all)]
pub async fn release(
    conn: &mut PgConnection,
    clusters: &[String],
    holder: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "DELETE FROM collector_leases WHERE holder = $1 AND cluster = ANY($2)",
        holder,
        clusters,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes the heartbeat at shutdown so the others rebalance at once.
#[tracing::instrument(skip_all)]
pub async fn retire(conn: &mut PgConnection, holder: &str) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM collector_heartbeats WHERE holder = $1", holder)
        .execute(conn)
        .await?;
    Ok(())
}
