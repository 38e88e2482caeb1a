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
    if !notice.evidence.is_empty() && notice.event != Event::Resolved {
        let lines: Vec<String> = notice.evidence.iter().map(|line| escape(line)).collect();
        blocks.push(json!({"type": "section", "text": {"type": "mrkdwn",
            "text": truncate(&format!("*Evidence*\n{}", lines.join("\n")), SECTION_MAX)}}));
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
    // Phones show `text`, which Slack reads as mrkdwn: escaped like the blocks, or a
    // workload-controlled reason could say `<!channel>` or `<https://evil|sign in>`.
    json!({
        "text": escape(&format!("{title} — {} ({})", notice.object(), affects(notice))),
        "blocks": blocks,
    })
}

/// A short follow-up for a Slack that cannot edit its message (an incoming webhook): which
/// clusters joined or left, and where the incident is now.
pub fn render_cluster_change(notice: &Notice) -> Value {
    let mut changes = Vec::new();
    if !notice.joined.is_empty() {
        changes.push(format!("{} joined", notice.joined.join(", ")));
    }
    if !notice.left.is_empty() {
        changes.push(format!("{} recovered", notice.left.join(", ")));
    }
    let now_on = match notice.clusters.len() {
        1 => format!("now on {}", notice.cluster_list()),
        n => format!("now on {n} clusters: {}", notice.cluster_list()),
    };
    let (kind, name) = (&notice.kind, &notice.name);
    let text = format!(
        "{kind} {name} {}: {} — {now_on}",
        notice.headline_reason(),
        changes.join(", ")
    );
    json!({
        "text": escape(&text),
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": truncate(&escape(&text), SECTION_MAX)}},
            {"type": "context", "elements": [{"type": "mrkdwn",
                "text": format!("{} · rule {} · alert #{}", notice.severity, escape(&notice.rule), notice.alert_id)}]},
        ],
    })
}

fn title(notice: &Notice) -> String {
    let reason = match notice.clusters.len() {
        0 | 1 => notice.headline_reason().to_string(),
        n => format!("{} on {n} clusters", notice.headline_reason()),
    };
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

/// Slack's mrkdwn has three control characters to escape (Slack's "Formatting text for app
/// surfaces": `&`, `<` and `>`). Backticks have no escape there, and three of them in a
/// message would end the code block it is shown in, making the rest formatted text (bold, a
/// clickable link): each becomes a look-alike that formats nothing (U+02CB).
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('`', "\u{2cb}")
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::AlertStatus;
    use crate::config::Severity;

    fn notice(reason: &str, message: &str) -> Notice {
        let at = "2026-11-30T10:00:00Z".parse().unwrap();
        Notice {
            alert_id: 7,
            event: Event::Firing,
            status: AlertStatus::Firing,
            key: "HelmRelease/apps/<!here>/0000".into(),
            root_cause: "prod-1/HelmRelease/apps/<!here>".into(),
            cluster: "prod-1".into(),
            clusters: vec!["prod-1".into()],
            joined: Vec::new(),
            left: Vec::new(),
            kind: "HelmRelease".into(),
            namespace: "apps".into(),
            name: "<!here>".into(),
            rule: "root-cause".into(),
            severity: Severity::Critical,
            state: State::Failed,
            reason: reason.into(),
            message: message.into(),
            since: Some(at),
            fired_at: Some(at),
            resolved_at: None,
            affected_count: 2,
            affected_sample: vec!["prod-1/Deployment/apps/a&b".into()],
            evidence: vec!["BackOff (3×, kubelet): <!here> back-off".into()],
            domains: Vec::new(),
            link: None,
            at,
        }
    }

    /// Issue 47: the latest Warning event reasons travel with a firing alert, escaped like
    /// everything a workload writes; a resolved one does not repeat them.
    #[test]
    fn warning_events_are_the_alerts_evidence_until_it_resolves() {
        let firing = render_slack(&notice("ImagePullBackOff", ""));
        let texts: Vec<String> = firing["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b["text"]["text"].as_str().map(String::from))
            .collect();
        let evidence = texts
            .iter()
            .find(|t| t.starts_with("*Evidence*"))
            .expect("an evidence section");
        assert!(
            evidence.contains("BackOff (3×, kubelet): &lt;!here&gt; back-off"),
            "{evidence}"
        );
        let mut resolved = notice("ImagePullBackOff", "");
        resolved.event = Event::Resolved;
        assert!(
            !render_slack(&resolved)
                .to_string()
                .contains("Warning events")
        );
    }

    #[test]
    fn backticks_in_what_workloads_write_never_end_a_code_block() {
        let breakout = "image pull failed ```\n*URGENT* sign in at https://evil.example/login ```";
        let message = render_slack(&notice(breakout, breakout));
        let blocks = message["blocks"].as_array().unwrap();
        let code = blocks
            .iter()
            .filter_map(|b| b["text"]["text"].as_str())
            .find(|t| t.starts_with("```"))
            .expect("the message is in a code block");
        assert_eq!(code.matches('`').count(), 6, "only the fences: {code}");
        assert!(code.ends_with("```") && code.contains("*URGENT*"), "{code}");
        // Everything Slack reads as mrkdwn (a plain_text header formats nothing).
        let mut mrkdwn = vec![message["text"].as_str().unwrap().to_string()];
        for block in blocks {
            let texts = std::iter::once(&block["text"])
                .chain(block["elements"].as_array().into_iter().flatten());
            mrkdwn.extend(
                texts
                    .filter(|t| t["type"] == "mrkdwn")
                    .map(|t| t["text"].as_str().unwrap().to_string()),
            );
        }
        let mrkdwn = mrkdwn.join("\n");
        assert_eq!(
            mrkdwn.matches('`').count(),
            6 + 2,
            "the fences and the affected sample's own quotes only: {mrkdwn}"
        );
    }

    #[test]
    fn the_text_phones_show_is_escaped_like_the_blocks() {
        let message = render_slack(&notice(
            "<!channel> <https://evil.example|sign in> & more",
            "<@U123> x > y",
        ));
        let text = message["text"].as_str().unwrap();
        for raw in ["<!channel>", "<https://evil", "<!here>", " & "] {
            assert!(!text.contains(raw), "{raw} left in {text}");
        }
        assert!(
            text.contains("&lt;!channel&gt;") && text.contains("&amp; more"),
            "{text}"
        );
        assert!(
            text.contains("&lt;https://evil.example|sign in&gt;"),
            "{text}"
        );
        let blocks = message["blocks"].to_string();
        assert!(
            !blocks.contains("<@U123>") && !blocks.contains("<!here>"),
            "{blocks}"
        );
    }

    #[test]
    fn a_cluster_change_names_who_joined_and_left_and_where_it_is_now() {
        let mut n = notice("ImagePullBackOff", "");
        n.event = Event::Update;
        n.clusters = vec!["prod-1".into(), "prod-3".into()];
        n.joined = vec!["prod-3".into()];
        n.left = vec!["prod-2".into()];
        let message = render_cluster_change(&n);
        let text = message["text"].as_str().unwrap();
        assert!(
            text.contains("prod-3 joined, prod-2 recovered")
                && text.contains("now on 2 clusters: prod-1, prod-3")
                && !text.contains("<!here>"),
            "{text}"
        );
        let title = render_slack(&n)["blocks"][0]["text"]["text"].clone();
        assert!(
            title.as_str().unwrap().ends_with("on 2 clusters"),
            "{title}"
        );
    }

    #[test]
    fn clusters_unreachable_together_are_named_in_the_list_not_the_reason() {
        let mut n = notice("cluster prod-1 unreachable: connection refused", "");
        n.state = State::Stale;
        (n.kind, n.namespace, n.name) = ("Cluster".into(), String::new(), "prod-1".into());
        n.root_cause = "prod-1/Cluster//prod-1".into();
        n.clusters = vec!["prod-1".into(), "prod-2".into()];
        let text = render_slack(&n)["text"].as_str().unwrap().to_string();
        assert!(
            text.contains(
                "stale: unreachable: connection refused on 2 clusters — clusters prod-1, prod-2"
            ),
            "{text}"
        );
    }
}
