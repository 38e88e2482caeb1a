//! The `alerts` table: loading open alerts for the lifecycle (locked, so two collectors take
//! turns), storing what the lifecycle decided, and the listing the page and the API show.

use crate::alerts::{Alert, Candidate};
use crate::health::State;
use crate::model::ObjectId;
use crate::store::{Stored, typed};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::PgConnection;

/// An `alerts` row as stored.
struct AlertRecord {
    id: i64,
    incident_key: String,
    root_cause: String,
    cluster: String,
    clusters: Vec<String>,
    members: Value,
    rule: String,
    severity: String,
    status: String,
    state: String,
    reason: String,
    message: String,
    since: Option<DateTime<Utc>>,
    affected_count: i32,
    affected_sample: Value,
    domains: Value,
    first_seen: DateTime<Utc>,
    fired_at: Option<DateTime<Utc>>,
    cleared_at: Option<DateTime<Utc>>,
    resolved_at: Option<DateTime<Utc>>,
    notified: bool,
    last_notified_at: Option<DateTime<Utc>>,
    silence_id: Option<i64>,
}

impl TryFrom<AlertRecord> for Alert {
    type Error = sqlx::Error;

    fn try_from(r: AlertRecord) -> Result<Alert, sqlx::Error> {
        let decode = |e: String| sqlx::Error::Decode(e.into());
        let strings = |v: Value| serde_json::from_value(v).map_err(|e| decode(e.to_string()));
        Ok(Alert {
            root_cause: Stored::new("alerts", r.id).parsed("root_cause", &r.root_cause)?,
            id: Some(r.id),
            severity: r.severity.parse().map_err(decode)?,
            status: r.status.parse().map_err(decode)?,
            state: r.state.parse().map_err(decode)?,
            affected_count: usize::try_from(r.affected_count).unwrap_or(0),
            affected_sample: strings(r.affected_sample)?,
            domains: strings(r.domains)?,
            members: serde_json::from_value::<Vec<Candidate>>(r.members)
                .map_err(|e| decode(e.to_string()))?,
            key: r.incident_key,
            clusters: r.clusters,
            cluster: r.cluster,
            rule: r.rule,
            reason: r.reason,
            message: r.message,
            since: r.since,
            first_seen: r.first_seen,
            fired_at: r.fired_at,
            cleared_at: r.cleared_at,
            resolved_at: r.resolved_at,
            notified: r.notified,
            last_notified_at: r.last_notified_at,
            silence_id: r.silence_id,
        })
    }
}

/// The open alerts on any of these clusters or with any of these incident keys, locked until
/// the transaction ends: a second collector evaluating a cluster of the same incident waits
/// and then sees this one's decisions.
#[tracing::instrument(skip_all)]
pub async fn lock_open(
    conn: &mut PgConnection,
    clusters: &[String],
    keys: &[String],
) -> Result<Vec<Alert>, sqlx::Error> {
    let records = sqlx::query_as!(
        AlertRecord,
        "SELECT id, incident_key, root_cause, cluster, clusters, members, rule, severity, status,
                state, reason, message, since, affected_count, affected_sample, domains,
                first_seen, fired_at, cleared_at, resolved_at, notified, last_notified_at,
                silence_id
         FROM alerts
         WHERE status <> 'resolved' AND (clusters && $1 OR incident_key = ANY($2))
         ORDER BY id FOR UPDATE",
        clusters,
        keys,
    )
    .fetch_all(conn)
    .await?;
    typed(records)
}

/// Runs `$sql` with an alert's columns bound as $1 to $23, in the order `insert` lists them
/// and `update` follows, then any further parameters. The query macros need literal SQL, so
/// the two statements stay two; what they bind is written once.
macro_rules! with_alert_columns {
    ($query:ident!($sql:literal), $alert:expr, $now:expr $(, $more:expr)*) => {
        sqlx::$query!(
            $sql,
            $alert.root_cause.as_str(),
            $alert.cluster,
            $alert.rule,
            $alert.severity.as_str(),
            $alert.status.as_str(),
            $alert.state.as_str(),
            $alert.reason,
            $alert.message,
            $alert.since,
            count($alert.affected_count),
            serde_json::json!($alert.affected_sample),
            serde_json::json!($alert.domains),
            $alert.first_seen,
            $alert.fired_at,
            $alert.cleared_at,
            $alert.resolved_at,
            $alert.notified,
            $alert.last_notified_at,
            $alert.silence_id,
            $now,
            $alert.key,
            &$alert.clusters,
            members($alert)?,
            $($more,)*
        )
    };
}

/// Stores a new alert; None when another collector opened one for the incident first.
#[tracing::instrument(skip_all)]
pub async fn insert(
    conn: &mut PgConnection,
    alert: &Alert,
    now: DateTime<Utc>,
) -> Result<Option<i64>, sqlx::Error> {
    with_alert_columns!(
        query_scalar!(
            "INSERT INTO alerts (root_cause, cluster, rule, severity, status, state, reason, message,
                 since, affected_count, affected_sample, domains, first_seen, fired_at, cleared_at,
                 resolved_at, notified, last_notified_at, silence_id, updated_at, incident_key,
                 clusters, members)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                     $18, $19, $20, $21, $22, $23)
             ON CONFLICT (incident_key) WHERE status <> 'resolved' DO NOTHING
             RETURNING id"
        ),
        alert,
        now
    )
    .fetch_optional(conn)
    .await
}

/// Writes what the lifecycle decided over the stored alert `id` (`first_seen` is written back
/// as it was read).
#[tracing::instrument(skip_all)]
pub async fn update(
    conn: &mut PgConnection,
    id: i64,
    alert: &Alert,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    with_alert_columns!(
        query!(
            "UPDATE alerts SET root_cause = $1, cluster = $2, rule = $3, severity = $4,
                 status = $5, state = $6, reason = $7, message = $8, since = $9,
                 affected_count = $10, affected_sample = $11, domains = $12, first_seen = $13,
                 fired_at = $14, cleared_at = $15, resolved_at = $16, notified = $17,
                 last_notified_at = $18, silence_id = $19, updated_at = $20, incident_key = $21,
                 clusters = $22, members = $23
             WHERE id = $24"
        ),
        alert,
        now,
        id
    )
    .execute(conn)
    .await?;
    Ok(())
}

#[tracing::instrument(skip_all)]
pub async fn delete(conn: &mut PgConnection, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM alerts WHERE id = $1", id)
        .execute(conn)
        .await?;
    Ok(())
}

fn members(alert: &Alert) -> Result<Value, sqlx::Error> {
    serde_json::to_value(&alert.members).map_err(|e| sqlx::Error::Encode(e.into()))
}

fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// An alert as the page and the API show it, with the delivery status of its notifications.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct AlertView {
    pub id: i64,
    /// The incident's key (as in `incidents`; an alert from before incidents: its root cause).
    pub key: String,
    /// The first cluster's root cause, and that cluster.
    #[schema(value_type = String)]
    pub root_cause: ObjectId,
    pub cluster: String,
    /// Every cluster the incident is on, in the order they joined (resolved: the last ones).
    pub clusters: Vec<String>,
    pub rule: String,
    pub severity: String,
    pub status: String,
    #[schema(value_type = String)]
    pub state: State,
    pub reason: String,
    pub message: String,
    pub since: Option<DateTime<Utc>>,
    pub affected_count: i32,
    #[schema(value_type = Vec<String>)]
    pub affected_sample: Value,
    #[schema(value_type = Vec<String>)]
    pub domains: Value,
    pub first_seen: DateTime<Utc>,
    pub fired_at: Option<DateTime<Utc>>,
    pub cleared_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub silence_id: Option<i64>,
    pub deliveries: Vec<Delivery>,
}

impl TryFrom<AlertRecord> for AlertView {
    type Error = sqlx::Error;

    fn try_from(r: AlertRecord) -> Result<AlertView, sqlx::Error> {
        let stored = Stored::new("alerts", r.id);
        Ok(AlertView {
            state: stored.parsed("state", &r.state)?,
            root_cause: stored.parsed("root_cause", &r.root_cause)?,
            id: r.id,
            key: r.incident_key,
            cluster: r.cluster,
            clusters: r.clusters,
            rule: r.rule,
            severity: r.severity,
            status: r.status,
            reason: r.reason,
            message: r.message,
            since: r.since,
            affected_count: r.affected_count,
            affected_sample: r.affected_sample,
            domains: r.domains,
            first_seen: r.first_seen,
            fired_at: r.fired_at,
            cleared_at: r.cleared_at,
            resolved_at: r.resolved_at,
            silence_id: r.silence_id,
            deliveries: Vec::new(),
        })
    }
}

/// One notification and where it stands.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Delivery {
    #[serde(skip)]
    pub alert_id: i64,
    pub sink: String,
    pub event: String,
    /// pending (retrying), delivered or silenced (recorded, not sent).
    pub status: String,
    pub attempts: i32,
    pub next_attempt_at: DateTime<Utc>,
    /// Redacted: never a URL or a token.
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
}

/// Open alerts (pending and firing), then the most recently resolved.
#[tracing::instrument(skip_all)]
pub async fn list_alerts(
    conn: &mut PgConnection,
    resolved_limit: i64,
) -> Result<Vec<AlertView>, sqlx::Error> {
    // A UNION's columns read as nullable to the macros: the first branch names the NOT NULL ones.
    let records = sqlx::query_as!(
        AlertRecord,
        r#"(SELECT id AS "id!", incident_key AS "incident_key!", root_cause AS "root_cause!",
                 cluster AS "cluster!", clusters AS "clusters!", members AS "members!",
                 rule AS "rule!", severity AS "severity!", status AS "status!", state AS "state!",
                 reason AS "reason!", message AS "message!", since,
                 affected_count AS "affected_count!", affected_sample AS "affected_sample!",
                 domains AS "domains!", first_seen AS "first_seen!", fired_at, cleared_at,
                 resolved_at, notified AS "notified!", last_notified_at, silence_id
          FROM alerts WHERE status <> 'resolved')
         UNION ALL
         (SELECT id, incident_key, root_cause, cluster, clusters, members, rule, severity, status,
                 state, reason, message, since, affected_count, affected_sample, domains,
                 first_seen, fired_at, cleared_at, resolved_at, notified, last_notified_at,
                 silence_id
          FROM alerts WHERE status = 'resolved' ORDER BY resolved_at DESC LIMIT $1)"#,
        resolved_limit,
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut alerts: Vec<AlertView> = typed(records)?;
    let ids: Vec<i64> = alerts.iter().map(|a| a.id).collect();
    let deliveries = sqlx::query_as!(
        Delivery,
        "SELECT alert_id, sink, event, status, attempts, next_attempt_at, last_error, created_at,
                delivered_at
         FROM alert_outbox WHERE alert_id = ANY($1) ORDER BY id",
        &ids,
    )
    .fetch_all(&mut *conn)
    .await?;
    for delivery in deliveries {
        if let Some(alert) = alerts.iter_mut().find(|a| a.id == delivery.alert_id) {
            alert.deliveries.push(delivery);
        }
    }
    alerts.sort_by_key(|a| {
        (
            a.status == "resolved",
            a.resolved_at.map(|t| -t.timestamp()),
            a.id,
        )
    });
    Ok(alerts)
}
