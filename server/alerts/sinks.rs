//! Where notifications go: Slack (incoming webhook or Web API bot) and generic JSON webhooks.
//! Each send either succeeds or says when to try again; error text never carries a URL or a
//! token (reqwest errors are stripped with `without_url`).

use super::Notice;
use super::slack::Slack;
use super::webhook::WebhookBody;
use crate::config::{SlackTarget, WebhookTarget};
use chrono::{DateTime, Utc};
use reqwest::{Response, StatusCode};
use std::time::Duration;

/// What a successful send leaves behind.
#[derive(Debug, PartialEq)]
pub enum Sent {
    Done,
    /// A new Slack message (bot mode): later notices edit it and thread under it.
    SlackMessage {
        channel: String,
        ts: String,
    },
}

/// One try at sending a notification.
#[derive(Debug, Clone, Copy)]
pub struct Attempt<'a> {
    /// The outbox row's id: the same on every retry, so receivers can drop duplicates.
    pub notification: i64,
    /// An earlier try may have gone out without its outcome being recorded.
    pub maybe_sent_before: bool,
    /// The (channel, ts) of the alert's first Slack message, once there is one.
    pub thread: Option<(&'a str, &'a str)>,
}

#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The receiver asked us to wait (HTTP 429 with Retry-After).
    #[error("rate limited; retry after {}s", .0.as_secs())]
    RetryAfter(Duration),
    #[error("{0}")]
    Failed(String),
    #[error("no sink named {0:?} is configured")]
    UnknownSink(String),
}

/// The configured sinks and one HTTP client for all of them.
pub struct Sinks {
    client: reqwest::Client,
    slack: Option<Slack>,
    webhooks: Vec<WebhookTarget>,
}

/// A sink's name in the outbox, and whether it wants `update` events (it can edit, or it is a
/// machine that wants every change).
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub sink: String,
    pub updates: bool,
}

const SLACK: &str = "slack";
const WEBHOOK_PREFIX: &str = "webhook:";

impl Sinks {
    pub fn new(
        slack: Option<SlackTarget>,
        webhooks: Vec<WebhookTarget>,
        timeout: Duration,
    ) -> Result<Sinks, SendError> {
        // A redirect is a failed delivery: following one would post the alert (and a bot's
        // token) wherever the receiving end points.
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("fleetglass/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| SendError::Failed(redact(e)))?;
        Ok(Sinks {
            client,
            slack: slack.map(Slack::new),
            webhooks,
        })
    }

    pub fn routes(&self) -> Vec<Route> {
        let slack = self.slack.as_ref().map(|s| Route {
            sink: SLACK.to_string(),
            updates: s.can_edit(),
        });
        slack
            .into_iter()
            .chain(self.webhooks.iter().map(|w| Route {
                sink: format!("{WEBHOOK_PREFIX}{}", w.name),
                updates: true,
            }))
            .collect()
    }

    pub async fn send(
        &self,
        sink: &str,
        notice: &Notice,
        attempt: &Attempt<'_>,
    ) -> Result<Sent, SendError> {
        if sink == SLACK
            && let Some(slack) = &self.slack
        {
            return slack.send(&self.client, notice, attempt).await;
        }
        let hook = sink
            .strip_prefix(WEBHOOK_PREFIX)
            .and_then(|name| self.webhooks.iter().find(|w| w.name == name))
            .ok_or_else(|| SendError::UnknownSink(sink.to_string()))?;
        // `id` (and the Idempotency-Key header) stay the same when a notification is sent
        // again after a crash: delivery is at least once.
        let body = WebhookBody::of(attempt.notification, notice);
        let response = self
            .client
            .post(hook.url.expose())
            .header("idempotency-key", attempt.notification.to_string())
            .json(&body)
            .send()
            .await
            .map_err(|e| SendError::Failed(redact(e)))?;
        check_status(&response)?;
        Ok(Sent::Done)
    }
}

/// Success for 2xx; 429 with a Retry-After becomes a wait; anything else a plain failure.
pub fn check_status(response: &Response) -> Result<(), SendError> {
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    if status == StatusCode::TOO_MANY_REQUESTS
        && let Some(wait) = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, Utc::now()))
    {
        return Err(SendError::RetryAfter(wait));
    }
    Err(SendError::Failed(format!("HTTP {}", status.as_u16())))
}

/// A Retry-After value: delay-seconds, or an HTTP-date (RFC 9110 section 10.2.3; the
/// IMF-fixdate form, `Sun, 06 Nov 1994 08:49:37 GMT`, is the one senders must use). A date
/// already past means "now".
fn retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?;
    Some(
        (at.with_timezone(&Utc) - now)
            .to_std()
            .unwrap_or(Duration::ZERO),
    )
}

/// A reqwest error without the URL (a webhook URL is a secret), with its causes.
pub fn redact(error: reqwest::Error) -> String {
    if error.is_timeout() {
        return "timed out".to_string();
    }
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = std::error::Error::source(cause);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = at("2026-12-01T08:49:07Z");
        assert_eq!(retry_after(" 30 ", now), Some(Duration::from_secs(30)));
        assert_eq!(
            retry_after("Tue, 01 Dec 2026 08:49:37 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            retry_after("Tue, 01 Dec 2026 08:00:00 GMT", now),
            Some(Duration::ZERO),
            "a date already past means now"
        );
        assert_eq!(retry_after("soon", now), None);
        assert_eq!(retry_after("-5", now), None);
    }
}
