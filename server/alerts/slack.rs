//! Slack, two ways. Incoming webhook: each notice is a new message (it cannot edit), so a root
//! cause posts when it fires, when it resolves and at re-notify. Web API with a bot token: the
//! firing message is kept (`channel`, `ts`) and edited on every change; resolves and re-notify
//! reminders reply in its thread. Edits go first, being harmless to repeat on a retry.

use super::blocks::render_slack;
use super::sinks::{SendError, Sent, check_status, redact};
use super::{Event, Notice};
use crate::config::{Secret, SlackTarget};
use serde::Deserialize;
use serde_json::{Value, json};

pub struct Slack {
    target: SlackTarget,
}

/// The Web API answers 200 with `ok: false` on failure; `error` is a code such as
/// `channel_not_found`, safe to show.
#[derive(Deserialize)]
struct ApiReply {
    ok: bool,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    channel: Option<String>,
    #[serde(default)]
    ts: Option<String>,
}

impl Slack {
    pub fn new(target: SlackTarget) -> Slack {
        Slack { target }
    }

    pub fn can_edit(&self) -> bool {
        matches!(self.target, SlackTarget::Bot { .. })
    }

    /// `thread` is the (channel, ts) of the alert's first message, once there is one.
    pub async fn send(
        &self,
        client: &reqwest::Client,
        notice: &Notice,
        thread: Option<(&str, &str)>,
    ) -> Result<Sent, SendError> {
        let message = render_slack(notice);
        match &self.target {
            SlackTarget::Webhook { url } => {
                let response = client
                    .post(url.expose())
                    .json(&message)
                    .send()
                    .await
                    .map_err(|e| SendError::Failed(redact(e)))?;
                check_status(&response)?;
                Ok(Sent::Done)
            }
            SlackTarget::Bot {
                api_url,
                token,
                channel,
            } => {
                let api = Api {
                    client,
                    base: api_url,
                    token,
                };
                let Some((thread_channel, ts)) = thread else {
                    // Nothing posted yet for this alert: post it (an update has nothing to edit;
                    // the next firing/renotify message carries the news).
                    if notice.event == Event::Update {
                        return Ok(Sent::Done);
                    }
                    let reply = api
                        .call(
                            "chat.postMessage",
                            with(message, json!({"channel": channel})),
                        )
                        .await?;
                    return Ok(match (reply.channel, reply.ts) {
                        (Some(channel), Some(ts)) if notice.event == Event::Firing => {
                            Sent::SlackMessage { channel, ts }
                        }
                        _ => Sent::Done,
                    });
                };
                let edit = with(
                    render_slack(&Notice {
                        event: Event::Update,
                        ..notice.clone()
                    }),
                    json!({"channel": thread_channel, "ts": ts}),
                );
                api.call("chat.update", edit).await?;
                if matches!(notice.event, Event::Resolved | Event::Renotify) {
                    let reply = with(
                        message,
                        json!({"channel": thread_channel, "thread_ts": ts,
                               "reply_broadcast": notice.event == Event::Renotify}),
                    );
                    api.call("chat.postMessage", reply).await?;
                }
                Ok(Sent::Done)
            }
        }
    }
}

struct Api<'a> {
    client: &'a reqwest::Client,
    base: &'a str,
    token: &'a Secret,
}

impl Api<'_> {
    async fn call(&self, method: &str, body: Value) -> Result<ApiReply, SendError> {
        let response = self
            .client
            .post(format!("{}/{method}", self.base))
            .bearer_auth(self.token.expose())
            .json(&body)
            .send()
            .await
            .map_err(|e| SendError::Failed(redact(e)))?;
        check_status(&response)?;
        let reply: ApiReply = response
            .json()
            .await
            .map_err(|e| SendError::Failed(format!("{method}: {}", redact(e))))?;
        if reply.ok {
            Ok(reply)
        } else {
            Err(SendError::Failed(format!(
                "{method}: {}",
                reply.error.as_deref().unwrap_or("not ok")
            )))
        }
    }
}

/// The rendered message with the call's addressing fields added.
fn with(mut message: Value, fields: Value) -> Value {
    if let (Some(message), Value::Object(fields)) = (message.as_object_mut(), fields) {
        message.extend(fields);
    }
    message
}
