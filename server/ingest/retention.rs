//! History retention: deletes state transitions and resolved root causes older than the
//! configured period, hourly.

use crate::store::{Store, delete_warnings_before, retention};
use chrono::{TimeDelta, Utc};
use std::time::Duration;

const EVERY: Duration = Duration::from_secs(3600);

/// How long a Warning event is kept after it was last seen.
pub const WARNINGS_KEPT: TimeDelta = TimeDelta::days(1);

pub async fn run(store: Store, keep: TimeDelta) {
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match prune(&store, keep).await {
            Ok(0) => {}
            Ok(deleted) => tracing::info!(deleted, "deleted transitions past their retention"),
            Err(error) => {
                tracing::warn!(%error, "could not delete old transitions; retrying later")
            }
        }
    }
}

/// One pass: deletes transitions (and resolved root causes) older than `keep`; returns how
/// many transitions.
pub async fn prune(store: &Store, keep: TimeDelta) -> Result<u64, sqlx::Error> {
    let mut conn = store.pool().acquire().await?;
    let before = Utc::now() - keep;
    retention::delete_resolved_before(&mut conn, before).await?;
    // Warning events are evidence of now: a day is kept, whatever the history's retention.
    delete_warnings_before(&mut conn, Utc::now() - WARNINGS_KEPT).await?;
    retention::delete_transitions_before(&mut conn, before).await
}
