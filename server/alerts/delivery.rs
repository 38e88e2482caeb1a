//! The delivery worker: claims one due notification at a time (`FOR UPDATE SKIP LOCKED`, so
//! with several replicas exactly one sends each), sends it, and in the same transaction marks it
//! delivered or schedules the retry — exponential backoff with jitter, capped, and never sooner
//! than a 429's Retry-After. Everything it knows is in the table, so a restart loses nothing.

use super::Notice;
use super::outbox::{self, Claimed};
use super::sinks::{SendError, Sent, Sinks};
use crate::config::DeliveryConfig;
use crate::store::Store;
use chrono::TimeDelta;
use rand::Rng;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct DeliverySettings {
    pub backoff: Duration,
    pub max_backoff: Duration,
    /// How often to look for work when the outbox is empty.
    pub poll: Duration,
}

impl DeliverySettings {
    pub fn from_config(config: &DeliveryConfig) -> DeliverySettings {
        let std = |d: TimeDelta| d.to_std().unwrap_or(Duration::from_secs(1));
        DeliverySettings {
            backoff: std(config.backoff),
            max_backoff: std(config.max_backoff),
            poll: Duration::from_secs(1),
        }
    }

    /// Attempt `n` (1-based) failed: wait base·2ⁿ⁻¹, capped, then take a random 50–100 % of
    /// it so that many failed notifications do not retry in lockstep.
    fn delay(&self, attempts: u32) -> Duration {
        let exponent = attempts.saturating_sub(1).min(20);
        let full = self
            .backoff
            .saturating_mul(1 << exponent)
            .min(self.max_backoff);
        full.mul_f64(rand::rng().random_range(0.5..=1.0))
    }
}

pub struct Worker {
    store: Store,
    sinks: Arc<Sinks>,
    settings: DeliverySettings,
}

impl Worker {
    pub fn new(store: Store, sinks: Arc<Sinks>, settings: DeliverySettings) -> Worker {
        Worker {
            store,
            sinks,
            settings,
        }
    }

    /// Delivers until the task is dropped.
    pub async fn run(self) {
        loop {
            match self.deliver_one().await {
                Ok(true) => continue,
                Ok(false) => match outbox::pending(self.store.pool()).await {
                    Ok(pending) => crate::metrics::set_outbox_pending(pending),
                    Err(error) => tracing::warn!(%error, "alert outbox: cannot count pending"),
                },
                Err(error) => tracing::warn!(%error, "alert delivery: database error"),
            }
            tokio::time::sleep(self.settings.poll).await;
        }
    }

    /// Sends the next due notification, if any; true when there was one.
    #[tracing::instrument(skip_all)]
    pub async fn deliver_one(&self) -> Result<bool, sqlx::Error> {
        let mut tx = self.store.pool().begin().await?;
        let Some(claimed) = outbox::claim(&mut tx).await? else {
            return Ok(false);
        };
        match self.send(&claimed).await {
            Ok((alert_id, sent)) => {
                crate::metrics::alert_delivery(&claimed.sink, true);
                outbox::mark_delivered(&mut tx, claimed.id).await?;
                if let Sent::SlackMessage { channel, ts } = sent {
                    outbox::remember_slack_message(&mut tx, alert_id, &channel, &ts).await?;
                }
            }
            Err(error) => {
                crate::metrics::alert_delivery(&claimed.sink, false);
                let attempts = u32::try_from(claimed.attempts).unwrap_or(0) + 1;
                let mut wait = self.settings.delay(attempts);
                if let SendError::RetryAfter(asked) = &error {
                    wait = wait.max(*asked);
                }
                tracing::warn!(
                    sink = %claimed.sink,
                    attempts,
                    retry_in_ms = wait.as_millis() as u64,
                    %error,
                    "alert delivery failed; will retry"
                );
                outbox::reschedule(&mut tx, claimed.id, wait, &error.to_string()).await?;
            }
        }
        tx.commit().await?;
        Ok(true)
    }

    async fn send(&self, claimed: &Claimed) -> Result<(i64, Sent), SendError> {
        let notice: Notice = serde_json::from_value(claimed.payload.clone())
            .map_err(|e| SendError::Failed(format!("unreadable notification: {e}")))?;
        let thread = claimed
            .slack_channel
            .as_deref()
            .zip(claimed.slack_ts.as_deref());
        let sent = self.sinks.send(&claimed.sink, &notice, thread).await?;
        Ok((notice.alert_id, sent))
    }
}
