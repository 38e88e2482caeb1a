//! History retention: deletes state transitions, resolved root causes and the fleet's history
//! older than the configured period, and rollouts older than theirs, hourly.

use crate::config::Retention;
use crate::store::{Store, delete_warnings_before, retention};
use chrono::{TimeDelta, Utc};
use std::time::Duration;

const EVERY: Duration = Duration::from_secs(3600);

/// How long a Warning event is kept after it was last seen.
pub const WARNINGS_KEPT: TimeDelta = TimeDelta::days(1);

pub async fn run(store: Store, keep: Retention) {
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match prune(&store, &keep).await {
            Ok(0) => {}
            Ok(deleted) => tracing::info!(deleted, "deleted transitions past their retention"),
            Err(error) => {
                tracing::warn!(%error, "could not delete old transitions; retrying later")
            }
        }
    }
}

/// One pass: deletes transitions (and resolved root causes, the fleet's history) older than
/// `keep.transitions`, rollouts older than `keep.rollouts` and audit events older than
/// `keep.audit`; returns how many transitions.
pub async fn prune(store: &Store, keep: &Retention) -> Result<u64, sqlx::Error> {
    let mut conn = store.pool().acquire().await?;
    let now = Utc::now();
    let before = now - keep.transitions;
    retention::delete_resolved_before(&mut conn, before).await?;
    retention::delete_fleet_history_before(&mut conn, before).await?;
    retention::delete_rollouts_before(&mut conn, now - keep.rollouts).await?;
    crate::store::audit::delete_before(&mut conn, now - keep.audit).await?;
    // Warning events are evidence of now: a day is kept, whatever the history's retention.
    delete_warnings_before(&mut conn, Utc::now() - WARNINGS_KEPT).await?;
    retention::delete_transitions_before(&mut conn, before).await
}
