//! Slack, two ways. Incoming webhook: each notice is a new message (it cannot edit), so an
//! incident posts when it fires, when it resolves, at re-notify, and a short follow-up when a
//! cluster joins or leaves. Web API with a bot token: the firing message is kept (`channel`,
//! `ts`) and edited on every change, clusters joining and leaving included; resolves and
//! re-notify reminders reply in its thread. Edits go first, being harmless to repeat on a retry. Every
//! post carries the notification's id as message metadata, so that after a crash between
//! posting and recording, the retry finds the earlier post (`conversations.history`, or
//! `conversations.replies` in a thread) instead of posting twice.

use super::blocks::{render_cluster_change, render_slack};
use super::sinks::{Attempt, SendError, Sent, check_status, redact};
use super::{Event, Notice};
use crate::config::{Secret, SlackTarget};
use serde::Deserialize;
use serde_json::{Value, json};

/// The metadata event type fleetglass's posts carry.
const METADATA_EVENT: &str = "fleetglass_notification";
/// How far before the notification's time an earlier post is looked for.
const LOOK_BACK_SECS: i64 = 600;

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
    /// `conversations.history` / `conversations.replies`.
    #[serde(default)]
    messages: Vec<Posted>,
}

#[derive(Deserialize)]
struct Posted {
    ts: String,
    #[serde(default)]
    metadata: Option<Value>,
}

impl Posted {
    fn is_notification(&self, notification: i64) -> bool {
        self.metadata.as_ref().is_some_and(|m| {
            m["event_type"] == METADATA_EVENT
                && m["event_payload"]["notification"].as_i64() == Some(notification)
        })
    }
}

impl Slack {
    pub fn new(target: SlackTarget) -> Slack {
        Slack { target }
    }

    pub fn can_edit(&self) -> bool {
        matches!(self.target, SlackTarget::Bot { .. })
    }

    pub async fn send(
        &self,
        client: &reqwest::Client,
        notice: &Notice,
        attempt: &Attempt<'_>,
    ) -> Result<Sent, SendError> {
        let message = render_slack(notice);
        match &self.target {
            SlackTarget::Webhook { url } => {
                // Only updates that change the clusters reach a webhook (`Notice::for_sink`).
                let message = match notice.event {
                    Event::Update => render_cluster_change(notice),
                    _ => message,
                };
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
                let message = with(
                    message,
                    json!({"metadata": {"event_type": METADATA_EVENT,
                        "event_payload": {"notification": attempt.notification, "alert_id": notice.alert_id}}}),
                );
                let Some((thread_channel, ts)) = attempt.thread else {
                    // Nothing posted yet for this alert: post it (an update has nothing to edit;
                    // the next firing/renotify message carries the news).
                    if notice.event == Event::Update {
                        return Ok(Sent::Done);
                    }
                    let earlier = match attempt.maybe_sent_before {
                        true => {
                            api.find_post(channel, None, notice, attempt.notification)
                                .await?
                        }
                        false => None,
                    };
                    let (channel, ts) = match earlier {
                        Some(ts) => (Some(channel.clone()), Some(ts)),
                        None => {
                            let reply = api
                                .call(
                                    "chat.postMessage",
                                    with(message, json!({"channel": channel})),
                                )
                                .await?;
                            (reply.channel, reply.ts)
                        }
                    };
                    return Ok(match (channel, ts) {
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
                let posted_before = attempt.maybe_sent_before
                    && api
                        .find_post(thread_channel, Some(ts), notice, attempt.notification)
                        .await?
                        .is_some();
                if matches!(notice.event, Event::Resolved | Event::Renotify) && !posted_before {
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
        let request = self
            .client
            .post(format!("{}/{method}", self.base))
            .json(&body);
        self.answer(method, request).await
    }

    /// The ts of a message this notification already posted in `channel` (in the thread of
    /// `thread_ts` when given), if any. Read methods take form fields, not JSON.
    async fn find_post(
        &self,
        channel: &str,
        thread_ts: Option<&str>,
        notice: &Notice,
        notification: i64,
    ) -> Result<Option<String>, SendError> {
        let oldest = (notice.at.timestamp() - LOOK_BACK_SECS).to_string();
        let mut form = vec![
            ("channel", channel),
            ("oldest", oldest.as_str()),
            ("include_all_metadata", "true"),
            ("limit", "200"),
        ];
        let method = match thread_ts {
            Some(ts) => {
                form.push(("ts", ts));
                "conversations.replies"
            }
            None => "conversations.history",
        };
        let request = self
            .client
            .post(format!("{}/{method}", self.base))
            .form(&form);
        let reply = self.answer(method, request).await?;
        Ok(reply
            .messages
            .into_iter()
            .find(|m| m.is_notification(notification))
            .map(|m| m.ts))
    }

    async fn answer(
        &self,
        method: &str,
        request: reqwest::RequestBuilder,
    ) -> Result<ApiReply, SendError> {
        let response = request
            .bearer_auth(self.token.expose())
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
