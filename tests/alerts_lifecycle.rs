//! Alerts end to end against real Postgres and a local receiver: one message per incident (the
//! same cause on several clusters is one alert, updated as clusters join and leave), edits
//! instead of new messages, resolves in the thread, silences, and the demo fleet.

use crate::common;

use chrono::{TimeDelta, Utc};
use common::alerts::{Receiver, block_kit_problems, cause, evaluation};
use fleetglass::alerts::rules::Policy;
use fleetglass::alerts::silences::NewSilence;
use fleetglass::alerts::tables::silences;
use fleetglass::alerts::{DeliverySettings, Dispatcher, Sinks, Worker};
use fleetglass::config::{AlertsConfig, Config, Secret, SlackTarget, WebhookTarget};
use fleetglass::health::{Parts, State};
use fleetglass::ingest::{Runner, RunnerSettings};
use fleetglass::sources::demo::{WorldDiff, apply_to_config};
use fleetglass::store::Store;
use std::sync::Arc;
use std::time::Duration;

fn settings() -> DeliverySettings {
    DeliverySettings {
        backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
        poll: Duration::from_millis(20),
        claim: Duration::from_secs(1),
    }
}

struct Setup {
    evaluator: Dispatcher,
    worker: Worker,
}

fn setup(store: &Store, slack: Option<SlackTarget>, webhooks: Vec<WebhookTarget>) -> Setup {
    let sinks = Arc::new(Sinks::new(slack, webhooks, Duration::from_secs(5)).unwrap());
    let labels = [
        ("prod-eu-1", "prod"),
        ("prod-eu-2", "prod"),
        ("prod-us-1", "prod"),
        ("dev-1", "dev"),
        ("staging-1", "staging"),
    ]
    .into_iter()
    .map(|(c, ring)| {
        (
            c.to_string(),
            [("ring".to_string(), ring.to_string())].into(),
        )
    })
    .collect();
    Setup {
        evaluator: Dispatcher::new(
            store.clone(),
            Policy::from_config(&AlertsConfig::default()),
            sinks.routes(),
            labels,
            Some("https://fleetglass.example".into()),
        ),
        worker: Worker::new(store.clone(), sinks, settings()),
    }
}

fn webhook(receiver: &Receiver) -> Option<SlackTarget> {
    Some(SlackTarget::Webhook {
        url: Secret::new(format!("{}/slack/webhook", receiver.base)),
    })
}

fn bot(receiver: &Receiver) -> Option<SlackTarget> {
    Some(SlackTarget::Bot {
        api_url: format!("{}/api", receiver.base),
        token: Secret::new("xoxb-test"),
        channel: "C-ALERTS".into(),
    })
}

/// Sends everything due now.
async fn drain(worker: &Worker) {
    while worker.deliver_one().await.unwrap() {}
}

/// The seed incidents the demo replays, as the engine names their root causes.
fn seed_incidents() -> Vec<fleetglass::health::RootCause> {
    vec![
        cause(
            "prod-eu-1/Deployment/flux-system/tofu-controller",
            State::Failed,
            "ImagePullBackOff",
            5,
            48,
        ),
        cause(
            "prod-eu-2/Deployment/flux-system/tofu-controller",
            State::Failed,
            "ImagePullBackOff",
            5,
            48,
        ),
        cause(
            "dev-1/Deployment/networking/netop",
            State::Failed,
            "CrashLoopBackOff",
            2,
            24,
        ),
        cause(
            "staging-1/Kustomization/flux-system/gateway-config",
            State::Failed,
            "RBAC Forbidden",
            1,
            1,
        ),
        cause(
            "prod-us-1/Kustomization/flux-system/observability",
            State::Stuck,
            "in progress for 4h",
            0,
            4,
        ),
        cause(
            "prod-us-1/Kustomization/flux-system/gateway-edge",
            State::Failed,
            "admission denied",
            1,
            0,
        ),
    ]
}

const CLUSTERS: [&str; 5] = ["dev-1", "staging-1", "prod-eu-1", "prod-eu-2", "prod-us-1"];

#[tokio::test(flavor = "multi_thread")]
async fn one_message_per_seed_incident() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let hook = WebhookTarget {
        name: "pager".into(),
        url: Secret::new(format!("{}/hook", receiver.base)),
    };
    let s = setup(&store, webhook(&receiver), vec![hook]);
    let incidents = seed_incidents();
    let eval = evaluation(&CLUSTERS, incidents.clone());
    let now = Utc::now();
    // Several evaluations of the same world: still one message each.
    for seconds in [0, 5, 10] {
        s.evaluator
            .round(&eval, now + TimeDelta::seconds(seconds))
            .await
            .unwrap();
    }
    drain(&s.worker).await;

    let slack: Vec<_> = receiver
        .accepted()
        .into_iter()
        .filter(|r| r.path == "/slack/webhook")
        .collect();
    // tofu-controller's ImagePullBackOff on prod-eu-1 and prod-eu-2 is one incident.
    assert_eq!(slack.len(), incidents.len() - 1, "{slack:#?}");
    for incident in &incidents {
        let naming: Vec<_> = slack
            .iter()
            .filter(|r| {
                r.body["blocks"]
                    .to_string()
                    .contains(incident.id.as_str().split('/').nth(3).unwrap())
            })
            .filter(|r| {
                r.body["text"]
                    .as_str()
                    .unwrap()
                    .contains(incident.id.as_str().split('/').next().unwrap())
            })
            .collect();
        assert_eq!(
            naming.len(),
            1,
            "{} must be named by exactly one message",
            incident.id
        );
        let message = &naming[0].body;
        assert!(
            block_kit_problems(message).is_empty(),
            "{:?}\n{message:#}",
            block_kit_problems(message)
        );
        let text = message.to_string();
        assert!(
            text.contains(&incident.reason),
            "the classified reason is named: {text}"
        );
        if !incident.id.as_str().starts_with("prod-eu-2/") {
            assert!(
                text.contains(&format!(
                    "https://fleetglass.example/objects/{}",
                    incident.id
                )),
                "{text}"
            );
        }
    }
    let tofu = slack
        .iter()
        .find(|r| r.body["text"].as_str().unwrap().contains("prod-eu-1"))
        .unwrap();
    let text = tofu.body["text"].as_str().unwrap();
    assert!(
        text.contains("on prod-eu-1, prod-eu-2") && text.contains("12 affected"),
        "{:#}",
        tofu.body
    );

    let generic: Vec<_> = receiver
        .accepted()
        .into_iter()
        .filter(|r| r.path == "/hook")
        .collect();
    assert_eq!(generic.len(), incidents.len() - 1);
    assert!(
        generic
            .iter()
            .all(|r| r.body["event"] == "firing" && r.body["alert"]["root_cause"].is_string())
    );
}

/// tofu-controller in ImagePullBackOff on these clusters.
fn tofu_on(clusters: &[&str]) -> fleetglass::health::Evaluation {
    let causes = clusters
        .iter()
        .map(|c| {
            cause(
                &format!("{c}/Deployment/flux-system/tofu-controller"),
                State::Failed,
                "ImagePullBackOff",
                2,
                48,
            )
        })
        .collect();
    evaluation(&CLUSTERS, causes)
}

/// The same cause on prod-eu-1 and prod-eu-2; prod-us-1 joins; prod-eu-1 recovers; then the
/// rest recover and stay clear past the flap window. Returns what the receiver took.
async fn an_incident_spreads_and_recovers(
    s: &Setup,
    receiver: &Receiver,
) -> Vec<common::alerts::Request> {
    let now = Utc::now();
    let rounds: [(i64, &[&str]); 6] = [
        (0, &["prod-eu-1", "prod-eu-2"]),
        (5, &["prod-eu-1", "prod-eu-2", "prod-us-1"]),
        (10, &["prod-eu-2", "prod-us-1"]),
        (60, &[]),
        (12 * 60, &[]),
        (13 * 60, &[]),
    ];
    for (seconds, clusters) in rounds {
        s.evaluator
            .round(&tofu_on(clusters), now + TimeDelta::seconds(seconds))
            .await
            .unwrap();
        drain(&s.worker).await;
    }
    let calls = receiver.accepted();
    for call in &calls {
        assert!(
            block_kit_problems(&call.body).is_empty(),
            "{:?}\n{:#}",
            block_kit_problems(&call.body),
            call.body
        );
    }
    calls
}

fn text_of(request: &common::alerts::Request) -> &str {
    request.body["text"].as_str().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn bot_mode_edits_one_message_per_incident_as_clusters_join_and_leave() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let s = setup(&store, bot(&receiver), Vec::new());
    let calls = an_incident_spreads_and_recovers(&s, &receiver).await;
    let paths: Vec<&str> = calls.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/api/chat.postMessage",
            "/api/chat.update",
            "/api/chat.update",
            "/api/chat.update",
            "/api/chat.postMessage"
        ],
        "one message, edited as clusters join and leave, resolved once in its thread"
    );
    assert!(
        text_of(&calls[0]).contains("on 2 clusters")
            && text_of(&calls[0]).contains("on prod-eu-1, prod-eu-2"),
        "{}",
        text_of(&calls[0])
    );
    let ts = "1700000000.000001";
    for edit in &calls[1..4] {
        assert_eq!(
            (edit.body["channel"].as_str(), edit.body["ts"].as_str()),
            (Some("C-ALERTS"), Some(ts)),
            "{:#}",
            edit.body
        );
    }
    assert!(
        text_of(&calls[1]).contains("on prod-eu-1, prod-eu-2, prod-us-1"),
        "{}",
        text_of(&calls[1])
    );
    assert!(
        text_of(&calls[2]).contains("on prod-eu-2, prod-us-1"),
        "{}",
        text_of(&calls[2])
    );
    assert!(text_of(&calls[3]).contains("resolved"));
    assert_eq!(calls[4].body["thread_ts"], ts);
    assert!(text_of(&calls[4]).contains("resolved"));
    let alerts: Vec<(String, Vec<String>)> = sqlx::query!("SELECT status, clusters FROM alerts")
        .fetch_all(store.pool())
        .await
        .unwrap()
        .into_iter()
        .map(|row| (row.status, row.clusters))
        .collect();
    assert_eq!(
        alerts,
        [(
            "resolved".to_string(),
            vec!["prod-eu-2".to_string(), "prod-us-1".to_string()]
        )]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn webhook_mode_follows_up_when_a_cluster_joins_or_leaves() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let s = setup(&store, webhook(&receiver), Vec::new());
    let calls = an_incident_spreads_and_recovers(&s, &receiver).await;
    let texts: Vec<&str> = calls.iter().map(text_of).collect();
    assert_eq!(texts.len(), 4, "{texts:#?}");
    assert!(
        texts[0].contains("ImagePullBackOff on 2 clusters")
            && texts[0].contains("on prod-eu-1, prod-eu-2"),
        "{}",
        texts[0]
    );
    assert!(
        texts[1].contains("prod-us-1 joined")
            && texts[1].contains("now on 3 clusters: prod-eu-1, prod-eu-2, prod-us-1"),
        "{}",
        texts[1]
    );
    assert!(
        texts[2].contains("prod-eu-1 recovered")
            && texts[2].contains("now on 2 clusters: prod-eu-2, prod-us-1"),
        "{}",
        texts[2]
    );
    assert!(texts[3].contains("resolved"), "{}", texts[3]);
    assert_eq!(
        texts.iter().filter(|t| t.contains("resolved")).count(),
        1,
        "resolved once"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bot_mode_edits_the_message_as_symptoms_join_and_resolves_in_its_thread() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let s = setup(&store, bot(&receiver), Vec::new());
    let id = "staging-1/Kustomization/flux-system/gateway-config";
    let now = Utc::now();
    s.evaluator
        .round(
            &evaluation(
                &CLUSTERS,
                vec![cause(id, State::Failed, "RBAC Forbidden", 2, 1)],
            ),
            now,
        )
        .await
        .unwrap();
    drain(&s.worker).await;
    s.evaluator
        .round(
            &evaluation(
                &CLUSTERS,
                vec![cause(id, State::Failed, "RBAC Forbidden", 7, 1)],
            ),
            now + TimeDelta::seconds(5),
        )
        .await
        .unwrap();
    drain(&s.worker).await;

    let calls = receiver.accepted();
    let paths: Vec<&str> = calls.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/api/chat.postMessage", "/api/chat.update"]);
    assert!(
        calls
            .iter()
            .all(|r| r.authorization.as_deref() == Some("Bearer xoxb-test"))
    );
    let ts = "1700000000.000001";
    assert_eq!(calls[0].body["channel"], "C-ALERTS");
    assert_eq!(
        (
            calls[1].body["channel"].as_str(),
            calls[1].body["ts"].as_str()
        ),
        (Some("C-ALERTS"), Some(ts))
    );
    assert!(
        calls[1].body["text"]
            .as_str()
            .unwrap()
            .contains("8 affected"),
        "{:#}",
        calls[1].body
    );
    for call in &calls {
        assert!(
            block_kit_problems(&call.body).is_empty(),
            "{:?}",
            block_kit_problems(&call.body)
        );
    }

    // The cause clears: nothing until the flap window has passed, then one resolve.
    let quiet = evaluation(&CLUSTERS, Vec::new());
    s.evaluator
        .round(&quiet, now + TimeDelta::minutes(1))
        .await
        .unwrap();
    drain(&s.worker).await;
    assert_eq!(receiver.accepted().len(), 2);
    s.evaluator
        .round(&quiet, now + TimeDelta::minutes(12))
        .await
        .unwrap();
    s.evaluator
        .round(&quiet, now + TimeDelta::minutes(13))
        .await
        .unwrap();
    drain(&s.worker).await;
    let calls = receiver.accepted();
    let paths: Vec<&str> = calls.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths[2..], ["/api/chat.update", "/api/chat.postMessage"]);
    assert!(calls[2].body["text"].as_str().unwrap().contains("resolved"));
    let reply = &calls[3].body;
    assert_eq!(
        reply["thread_ts"], ts,
        "the resolve replies in the alert's thread: {reply:#}"
    );
    assert!(reply["text"].as_str().unwrap().contains("resolved"));
    assert!(block_kit_problems(reply).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn webhook_mode_reports_growth_at_renotify_not_as_new_messages() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let s = setup(&store, webhook(&receiver), Vec::new());
    let id = "dev-1/Deployment/networking/netop";
    let now = Utc::now();
    for (minutes, affected) in [(0, 1), (1, 3), (2, 9)] {
        s.evaluator
            .round(
                &evaluation(
                    &CLUSTERS,
                    vec![cause(id, State::Failed, "CrashLoopBackOff", affected, 1)],
                ),
                now + TimeDelta::minutes(minutes),
            )
            .await
            .unwrap();
    }
    drain(&s.worker).await;
    assert_eq!(
        receiver.accepted().len(),
        1,
        "incoming webhooks cannot edit: growth waits for re-notify"
    );
    s.evaluator
        .round(
            &evaluation(
                &CLUSTERS,
                vec![cause(id, State::Failed, "CrashLoopBackOff", 9, 1)],
            ),
            now + TimeDelta::hours(4),
        )
        .await
        .unwrap();
    drain(&s.worker).await;
    let calls = receiver.accepted();
    assert_eq!(calls.len(), 2);
    let text = calls[1].body["text"].as_str().unwrap();
    assert!(
        text.contains("still failed") && text.contains("10 affected"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_is_sent_while_silenced_and_the_alert_is_still_recorded() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let s = setup(&store, webhook(&receiver), Vec::new());
    let now = Utc::now();
    let mut conn = store.pool().acquire().await.unwrap();
    let silence = NewSilence {
        root_cause: None,
        domain: Some("gateway".into()),
        cluster: Some("staging-1".into()),
        until: now + TimeDelta::hours(1),
        comment: "Calico RBAC fix rolling out".into(),
    };
    let silence = silences::create(&mut conn, &silence.validated(now).unwrap(), "alice", now)
        .await
        .unwrap();
    let id = "staging-1/Kustomization/flux-system/gateway-config";
    let eval = evaluation(
        &CLUSTERS,
        vec![cause(id, State::Failed, "RBAC Forbidden", 2, 1)],
    );
    s.evaluator.round(&eval, now).await.unwrap();
    drain(&s.worker).await;
    assert!(receiver.requests().is_empty(), "silenced: nothing sent");
    let row = sqlx::query!(
        "SELECT status, silence_id FROM alerts WHERE root_cause = $1",
        id
    )
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    let (status, silence_id) = (row.status, row.silence_id);
    assert_eq!((status.as_str(), silence_id), ("firing", Some(silence.id)));
    let recorded: Vec<String> = sqlx::query_scalar!("SELECT status FROM alert_outbox")
        .fetch_all(&mut *conn)
        .await
        .unwrap();
    assert_eq!(recorded, ["silenced"]);

    assert!(
        silences::expire(&mut conn, silence.id, now + TimeDelta::minutes(1))
            .await
            .unwrap()
    );
    s.evaluator
        .round(&eval, now + TimeDelta::minutes(2))
        .await
        .unwrap();
    drain(&s.worker).await;
    assert_eq!(
        receiver.accepted().len(),
        1,
        "once the silence ends, people hear of it"
    );
}

/// The demo world through the runner and whatever engine is merged: one message per incident
/// among the root causes the engine names.
#[tokio::test(flavor = "multi_thread")]
async fn the_demo_fleet_pages_once_per_incident() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let mut config = Config::default();
    apply_to_config(&mut config);
    let (mut runner, latest) = Runner::new(RunnerSettings::from_config(&config), store.clone());
    let mut world = WorldDiff::default();
    let started = Utc::now() - TimeDelta::minutes(1);
    for event in world.step(started, Utc::now()) {
        runner.apply(event);
    }
    runner.run_round(Utc::now()).await;
    let evaluated = latest.borrow().clone();
    let s = setup(&store, webhook(&receiver), Vec::new());
    let at = evaluated.at.unwrap();
    s.evaluator
        .round(evaluated.fleet.as_ref(), at)
        .await
        .unwrap();
    s.evaluator
        .round(evaluated.fleet.as_ref(), at + TimeDelta::seconds(5))
        .await
        .unwrap();
    drain(&s.worker).await;
    let problems: Vec<_> = evaluated
        .fleet
        .root_causes()
        .into_iter()
        .filter(|c| c.state.is_problem())
        .collect();
    let messages = receiver.accepted();
    let mut ids: Vec<&str> = problems.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    let mut seeds: Vec<_> = seed_incidents()
        .into_iter()
        .map(|c| c.id.into_string())
        .collect();
    seeds.sort();
    assert_eq!(
        ids, seeds,
        "the engine names the seed incidents' root causes"
    );
    // Controllers and stale clusters wait 5 minutes unless their problem is older; the demo's
    // are. tofu-controller on prod-eu-1 and prod-eu-2 is one incident.
    assert_eq!(messages.len(), problems.len() - 1, "{messages:#?}");
    for cause in problems {
        let (cluster, _, _, name) = cause.id.parts().unwrap();
        let naming = messages
            .iter()
            .filter(|m| {
                let text = m.body["text"].as_str().unwrap();
                text.contains(cluster) && text.contains(name)
            })
            .count();
        assert_eq!(naming, 1, "{}", cause.id);
    }
    for message in &messages {
        assert!(
            block_kit_problems(&message.body).is_empty(),
            "{:#}",
            message.body
        );
    }
}

/// An open alert on prod-eu-1 under `key`, paged already, as an earlier version wrote it: its
/// one member in the JSON stored since migration 0010, without a cause. Returns its id.
async fn stored_open_alert(store: &Store, key: &str, root_cause: &str) -> i64 {
    sqlx::query_scalar!(
        "INSERT INTO alerts (incident_key, root_cause, cluster, clusters, members, rule, severity,
             status, state, reason, message, affected_count, affected_sample, domains,
             first_seen, fired_at, notified, last_notified_at, updated_at)
         VALUES ($1, $2, 'prod-eu-1', '{prod-eu-1}',
             jsonb_build_array(jsonb_build_object('root_cause', $2::text, 'cluster', 'prod-eu-1',
                 'state', 'failed', 'since', NULL, 'reason', 'ImagePullBackOff', 'message', 'm',
                 'affected_count', 3, 'affected_sample', '[]'::jsonb, 'domains', '[]'::jsonb)),
             'root-cause', 'warning', 'firing', 'failed', 'ImagePullBackOff', 'm', 3, '[]', '[]',
             now(), now(), true, now(), now())
         RETURNING id",
        key,
        root_cause,
    )
    .fetch_one(store.pool())
    .await
    .unwrap()
}

/// An alert stored before incidents (keyed by its root cause, as migration 0010 leaves it)
/// carries on under its incident's key: no second page, no resolve.
#[tokio::test(flavor = "multi_thread")]
async fn an_alert_from_before_incidents_carries_on_under_its_incident() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let s = setup(&store, webhook(&receiver), Vec::new());
    let id = "prod-eu-1/Deployment/flux-system/tofu-controller";
    stored_open_alert(&store, id, id).await;
    let now = Utc::now();
    for minutes in [0, 20] {
        s.evaluator
            .round(
                &tofu_on(&["prod-eu-1", "prod-eu-2"]),
                now + TimeDelta::minutes(minutes),
            )
            .await
            .unwrap();
    }
    drain(&s.worker).await;
    let alerts: Vec<(String, String, Vec<String>)> =
        sqlx::query!("SELECT incident_key, status, clusters FROM alerts")
            .fetch_all(store.pool())
            .await
            .unwrap()
            .into_iter()
            .map(|row| (row.incident_key, row.status, row.clusters))
            .collect();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    let (key, status, clusters) = &alerts[0];
    assert!(
        key.starts_with("Deployment/flux-system/tofu-controller/"),
        "{key}"
    );
    assert_eq!(status, "firing");
    assert_eq!(clusters, &["prod-eu-1", "prod-eu-2"]);
    let texts: Vec<String> = receiver
        .accepted()
        .iter()
        .map(|r| text_of(r).to_string())
        .collect();
    assert_eq!(texts.len(), 1, "{texts:#?}");
    assert!(texts[0].contains("prod-eu-2 joined"), "{}", texts[0]);
}

/// Deployment apps/web crash-looping on each cluster given, its pod named with the suffix given
/// and restarted that many times, as the engine evaluates it.
fn crash_loop_on(clusters: &[(&str, &str, i64)]) -> fleetglass::health::Evaluation {
    use fleetglass::health::testkit::{self, deployment, pod};
    use fleetglass::health::{ClusterInfo, Thresholds};
    let mut placed = Vec::new();
    for &(cluster, suffix, restarts) in clusters {
        let mut crashing = pod(
            "apps",
            "web",
            suffix,
            Some((
                "CrashLoopBackOff",
                &format!("back-off {restarts}s restarting failed container=manager"),
            )),
        );
        crashing["status"]["containerStatuses"][0]["restartCount"] = restarts.into();
        placed.push((cluster, deployment("apps", "web", 1, 0)));
        placed.push((cluster, crashing));
    }
    let infos: Vec<ClusterInfo> = CLUSTERS
        .iter()
        .map(|name| ClusterInfo {
            name: name.to_string(),
            last_good: Some(testkit::now()),
            ..ClusterInfo::default()
        })
        .collect();
    testkit::evaluate_on(&placed, &infos, &[], &Thresholds::default())
}

/// Issue 46: one crash loop on two clusters whose pods differ in name and restart count (so
/// the engine's words differ) is one incident and one alert, paged once.
#[tokio::test(flavor = "multi_thread")]
async fn one_crash_loop_on_two_clusters_with_different_restart_counts_is_one_alert() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let s = setup(&store, webhook(&receiver), Vec::new());
    let evaluation = crash_loop_on(&[("prod-eu-1", "x2k4q", 4), ("prod-eu-2", "b7z9m", 57)]);
    let reasons: Vec<&str> = evaluation
        .root_causes
        .iter()
        .map(|r| r.reason.as_str())
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert_ne!(reasons[0], reasons[1], "the words differ by cluster");
    s.evaluator.round(&evaluation, Utc::now()).await.unwrap();
    drain(&s.worker).await;
    let alerts: Vec<(String, Vec<String>)> =
        sqlx::query!("SELECT incident_key, clusters FROM alerts")
            .fetch_all(store.pool())
            .await
            .unwrap()
            .into_iter()
            .map(|row| (row.incident_key, row.clusters))
            .collect();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(alerts[0].1, ["prod-eu-1", "prod-eu-2"]);
    assert_eq!(receiver.accepted().len(), 1);
}

/// An open alert written before causes were recorded (keyed by a digest of its reason's words,
/// members without a cause) carries on under the key of its cause: the same alert, still
/// firing, no second page.
#[tokio::test(flavor = "multi_thread")]
async fn an_alert_keyed_by_its_reason_carries_on_under_its_cause() {
    use sha2::{Digest, Sha256};
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let s = setup(&store, webhook(&receiver), Vec::new());
    let id = "prod-eu-1/Deployment/flux-system/tofu-controller";
    // The previous version's key: kind/namespace/name and the first 4 bytes of the sha256 of
    // the reason with per-cluster details taken out ("ImagePullBackOff" has none).
    let digest: String = Sha256::digest(b"ImagePullBackOff")
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect();
    let old_key = format!("Deployment/flux-system/tofu-controller/{digest}");
    let alert_id = stored_open_alert(&store, &old_key, id).await;
    s.evaluator
        .round(&tofu_on(&["prod-eu-1"]), Utc::now())
        .await
        .unwrap();
    drain(&s.worker).await;
    let alerts: Vec<(i64, String, String, serde_json::Value)> =
        sqlx::query!("SELECT id, incident_key, status, members FROM alerts")
            .fetch_all(store.pool())
            .await
            .unwrap()
            .into_iter()
            .map(|row| (row.id, row.incident_key, row.status, row.members))
            .collect();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    let (same, key, status, members) = &alerts[0];
    assert_eq!((*same, status.as_str()), (alert_id, "firing"));
    assert_ne!(key, &old_key, "keyed by its cause now");
    assert!(
        key.starts_with("Deployment/flux-system/tofu-controller/"),
        "{key}"
    );
    assert_eq!(members[0]["cause"]["code"], "flux_failure", "{members}");
    assert!(receiver.accepted().is_empty(), "no second page");
}
