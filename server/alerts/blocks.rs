//! A notice as a Slack message: Block Kit blocks (header, sections, context) and the `text`
//! fallback Slack shows in notifications and to screen readers. Limits from Slack's reference:
//! header text ≤ 150 characters, section text ≤ 3000, at most 50 blocks.

use super::{Event, Notice};
use crate::health::State;
use crate::model::human;
use serde_json::{Value, json};

const HEADER_MAX: usize = 150;
const SECTION_MAX: usize = 3000;
/// Room left for the code fence around the raw message.
const MESSAGE_MAX: usize = SECTION_MAX - 8;

/// `{text, blocks}` for a notice; the caller adds channel, ts or thread_ts.
pub fn render_slack(notice: &Notice) -> Value {
    let title = title(notice);
    let mut lines = vec![format!(
        "*{}*{}",
        escape(&notice.object()),
        notice
            .link
            .as_ref()
            .map(|url| format!("  <{}|open in fleetglass>", escape(url)))
            .unwrap_or_default()
    )];
    if let Some(since) = notice.since.or(notice.fired_at) {
        lines.push(format!(
            "{} since {} ({})",
            notice.state,
            since.format("%Y-%m-%d %H:%M UTC"),
            human(notice.at - since)
        ));
    }
    lines.push(affects(notice));
    let mut blocks = vec![
        json!({"type": "header", "text": {"type": "plain_text", "text": truncate(&title, HEADER_MAX), "emoji": true}}),
        json!({"type": "section", "text": {"type": "mrkdwn", "text": truncate(&lines.join("\n"), SECTION_MAX)}}),
    ];
    if !notice.message.is_empty() && notice.event != Event::Resolved {
        blocks.push(json!({"type": "section", "text": {"type": "mrkdwn",
            "text": format!("```{}```", truncate(&escape(&notice.message), MESSAGE_MAX))}}));
    }
    if !notice.affected_sample.is_empty() {
        let sample: Vec<String> = notice
            .affected_sample
            .iter()
            .map(|id| format!("`{}`", escape(id)))
            .collect();
        blocks.push(json!({"type": "context", "elements": [{"type": "mrkdwn",
            "text": truncate(&format!("affects {}", sample.join(", ")), SECTION_MAX)}]}));
    }
    blocks.push(json!({"type": "context", "elements": [{"type": "mrkdwn",
        "text": format!("{} · rule {} · alert #{}", notice.severity, escape(&notice.rule), notice.alert_id)}]}));
    json!({
        "text": format!("{title} — {} ({})", notice.object(), affects(notice)),
        "blocks": blocks,
    })
}

fn title(notice: &Notice) -> String {
    let reason = notice.headline_reason();
    match notice.event {
        Event::Resolved => format!("{} resolved: {reason}", State::Healthy.icon()),
        Event::Renotify => format!(
            "{} still {} after {}: {reason}",
            notice.state.icon(),
            notice.state,
            human(notice.at - notice.fired_at.unwrap_or(notice.at))
        ),
        Event::Firing | Event::Update if notice.resolved_at.is_some() => {
            format!("{} resolved: {reason}", State::Healthy.icon())
        }
        Event::Firing | Event::Update => {
            format!("{} {}: {reason}", notice.state.icon(), notice.state)
        }
    }
}

fn affects(notice: &Notice) -> String {
    match notice.affected_count {
        0 | 1 => "affects only itself".to_string(),
        n => format!("{n} affected"),
    }
}

/// Slack's mrkdwn needs only these three escaped.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}
