//! The delivery workers: one per sink, so a sink that hangs or throttles delays only its own
//! notifications. Each claims its sink's next due notification (`FOR UPDATE SKIP LOCKED`, a
//! lease committed at once, so with several replicas one sends each), sends it with no
//! transaction open, then records the outcome: delivered, or a retry after exponential backoff
//! with jitter, capped at `max_backoff` — a 429's Retry-After is honoured up to that cap too.
//!
//! Delivery is at least once: a process that stops between sending and recording leaves the
//! claim to expire, and the notification is sent again (a database that is down at that
//! moment only delays the record: the worker retries it rather than let the claim expire). Where the sink can tell (Slack with a
//! bot token), the worker looks for the earlier message before posting again; generic webhooks
//! get the notification's id to drop duplicates by.

use super::Notice;
use super::sinks::{Attempt, SendError, Sent, Sinks};
use super::tables::outbox::{self, Claimed};
use crate::config::DeliveryConfig;
use crate::store::Store;
use chrono::TimeDelta;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

#[derive(Debug, Clone)]
pub struct DeliverySettings {
    pub backoff: Duration,
    pub max_backoff: Duration,
    /// How often to look for work when the outbox is empty.
    pub poll: Duration,
    /// How long a claim lasts: longer than any send (every HTTP call of one send has the
    /// configured timeout), so only a worker that died loses it.
    pub claim: Duration,
}

impl DeliverySettings {
    pub fn from_config(config: &DeliveryConfig) -> DeliverySettings {
        let std = |d: TimeDelta| d.to_std().unwrap_or(Duration::from_secs(1));
        DeliverySettings {
            backoff: std(config.backoff),
            max_backoff: std(config.max_backoff),
            poll: Duration::from_secs(1),
            // A Slack bot send is at most three calls (look up, edit, post).
            claim: std(config.timeout) * 4 + Duration::from_secs(10),
        }
    }

    /// Attempt `n` (1-based) failed: wait base·2ⁿ⁻¹, capped, then take a random 50–100 % of
    /// it so that many failed notifications do not retry in lockstep. A receiver's own
    /// Retry-After is waited out, up to the same cap.
    fn delay(&self, attempts: u32, error: &SendError) -> Duration {
        let exponent = attempts.saturating_sub(1).min(20);
        let full = self
            .backoff
            .saturating_mul(1 << exponent)
            .min(self.max_backoff);
        let jittered = full.mul_f64(rand::random_range(0.5..=1.0));
        match error {
            SendError::RetryAfter(asked) => jittered.max(*asked).min(self.max_backoff),
            _ => jittered,
        }
    }
}

/// What one turn of a sink's worker did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing was due.
    Idle,
    /// A notification was sent, or its retry scheduled.
    Handled,
    /// The receiver rate-limited the sink: it rests this long (at most `max_backoff`).
    Throttled(Duration),
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

    /// Delivers until the task is dropped: one loop per sink, side by side.
    pub async fn run(self) {
        let (_never_stopped, stop) = watch::channel(false);
        self.run_until(stop).await;
    }

    /// Delivers until `stop` says so (or its sender is gone), then sends what is due at that
    /// moment and ends: a page decided in the last evaluation goes out now, not at the next
    /// start. What waits on a retry stays in the outbox for the next process.
    pub async fn run_until(self, stop: watch::Receiver<bool>) {
        let sinks: Vec<String> = self.sinks.routes().into_iter().map(|r| r.sink).collect();
        futures::future::join_all(sinks.iter().map(|sink| self.run_sink(sink, stop.clone()))).await;
    }

    async fn run_sink(&self, sink: &str, mut stop: watch::Receiver<bool>) {
        loop {
            let pause = match self.deliver_next(sink).await {
                Ok(Outcome::Handled) => continue,
                // Nothing more is due (or the sink cannot take it now): stopped once drained.
                _ if *stop.borrow_and_update() => return,
                Ok(Outcome::Idle) => {
                    self.report_outbox_depth().await;
                    self.settings.poll
                }
                // The receiver asked the whole sink to slow down, not just this message.
                Ok(Outcome::Throttled(wait)) => wait,
                Err(error) => {
                    tracing::warn!(sink, %error, "alert delivery: database error");
                    self.settings.poll
                }
            };
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                changed = stop.changed() => {
                    if changed.is_err() {
                        return; // the owner is gone without a word: nobody to deliver for
                    }
                }
            }
        }
    }

    /// Publishes how many notifications wait (due now or retrying later).
    async fn report_outbox_depth(&self) {
        match outbox::pending(self.store.pool()).await {
            Ok(pending) => crate::metrics::set_outbox_pending(pending),
            Err(error) => tracing::warn!(%error, "alert outbox: cannot count pending"),
        }
    }

    /// Sends the next due notification of every sink, one after the other; true when any
    /// had one (tests drain the outbox with it).
    pub async fn deliver_one(&self) -> Result<bool, sqlx::Error> {
        let mut any = false;
        for route in self.sinks.routes() {
            any |= self.deliver_next(&route.sink).await? != Outcome::Idle;
        }
        Ok(any)
    }

    /// Sends the next due notification of `sink`, if any.
    #[tracing::instrument(skip(self))]
    pub async fn deliver_next(&self, sink: &str) -> Result<Outcome, sqlx::Error> {
        let Some(claimed) = outbox::claim(self.store.pool(), sink, self.settings.claim).await?
        else {
            return Ok(Outcome::Idle);
        };
        match self.send(&claimed).await {
            Ok((alert_id, sent)) => {
                crate::metrics::alert_delivery(&claimed.sink, true);
                self.record_delivered(&claimed, alert_id, &sent).await;
                Ok(Outcome::Handled)
            }
            Err(error) => {
                crate::metrics::alert_delivery(&claimed.sink, false);
                let attempts = u32::try_from(claimed.attempts).unwrap_or(0) + 1;
                let wait = self.settings.delay(attempts, &error);
                tracing::warn!(
                    sink = %claimed.sink,
                    attempts,
                    retry_in_ms = wait.as_millis() as u64,
                    %error,
                    "alert delivery failed; will retry"
                );
                outbox::reschedule(self.store.pool(), &claimed, wait, &error.to_string()).await?;
                Ok(match error {
                    SendError::RetryAfter(_) => Outcome::Throttled(wait),
                    _ => Outcome::Handled,
                })
            }
        }
    }

    /// Records a sent notification, retrying until the database takes it: were it left to
    /// the claim to expire, the notification would go out a second time (a Postgres restart
    /// right after a send would page twice). The sink waits meanwhile; it could claim nothing
    /// without the database anyway.
    async fn record_delivered(&self, claimed: &Claimed, alert_id: i64, sent: &Sent) {
        loop {
            match self.try_record_delivered(claimed, alert_id, sent).await {
                Ok(()) => return,
                Err(error) => {
                    tracing::warn!(
                        sink = %claimed.sink,
                        notification = claimed.id,
                        %error,
                        "alert delivered but not yet recorded; retrying so it is not sent twice"
                    );
                    tokio::time::sleep(self.settings.poll).await;
                }
            }
        }
    }

    async fn try_record_delivered(
        &self,
        claimed: &Claimed,
        alert_id: i64,
        sent: &Sent,
    ) -> Result<(), sqlx::Error> {
        let mut tx = self.store.pool().begin().await?;
        if outbox::mark_delivered(&mut tx, claimed).await?
            && let Sent::SlackMessage { channel, ts } = sent
        {
            outbox::remember_slack_message(&mut tx, alert_id, channel, ts).await?;
        }
        tx.commit().await
    }

    async fn send(&self, claimed: &Claimed) -> Result<(i64, Sent), SendError> {
        let notice: Notice = serde_json::from_value(claimed.payload.clone())
            .map_err(|e| SendError::Failed(format!("unreadable notification: {e}")))?;
        let attempt = Attempt {
            notification: claimed.id,
            maybe_sent_before: claimed.maybe_sent_before(),
            thread: claimed
                .slack_channel
                .as_deref()
                .zip(claimed.slack_ts.as_deref()),
        };
        let sent = self.sinks.send(&claimed.sink, &notice, &attempt).await?;
        Ok((notice.alert_id, sent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_capped_at_max_backoff_however_large() {
        let settings = DeliverySettings {
            backoff: Duration::from_secs(2),
            max_backoff: Duration::from_secs(300),
            poll: Duration::from_secs(1),
            claim: Duration::from_secs(50),
        };
        let huge = SendError::RetryAfter(Duration::from_secs(100_000_000_000_000));
        assert_eq!(settings.delay(1, &huge), Duration::from_secs(300));
        let short = SendError::RetryAfter(Duration::from_secs(30));
        assert!(settings.delay(1, &short) >= Duration::from_secs(30));
        let plain = SendError::Failed("HTTP 500".into());
        assert!(settings.delay(40, &plain) <= Duration::from_secs(300));
    }
}
