//! The outbox and the delivery workers against local receivers that fail, hang and
//! rate-limit: nothing lost, nothing duplicated, Retry-After honoured up to max_backoff,
//! restarts survived, several workers sharing the work, a hanging sink delaying no other, a
//! crash between sending and recording found in Slack instead of posted twice, secrets kept
//! out of errors, the last evaluation's page sent when the alerts stop.

use crate::common;

use chrono::Utc;
use common::alerts::{Receiver, Reply, cause, evaluation};
use common::eventually;
use fleetglass::alerts::rules::Policy;
use fleetglass::alerts::{DeliverySettings, Dispatcher, Sinks, Worker};
use fleetglass::config::{AlertsConfig, Secret, SlackTarget, WebhookTarget};
use fleetglass::health::{Fleet, State};
use fleetglass::ingest::Evaluated;
use fleetglass::store::Store;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a delivery the test arranged may take to arrive.
const DELIVERY: Duration = Duration::from_secs(20);

fn sinks(url: String, timeout: Duration) -> Arc<Sinks> {
    let slack = SlackTarget::Webhook {
        url: Secret::new(url),
    };
    Arc::new(Sinks::new(Some(slack), Vec::new(), timeout).unwrap())
}

fn settings(max_backoff: Duration) -> DeliverySettings {
    DeliverySettings {
        backoff: Duration::from_millis(20),
        max_backoff,
        poll: Duration::from_millis(20),
        claim: Duration::from_secs(1),
    }
}

fn worker(store: &Store, sinks: Arc<Sinks>) -> Worker {
    Worker::new(store.clone(), sinks, settings(Duration::from_millis(200)))
}

fn slack_and_pager(slack: SlackTarget, pager: &Receiver, timeout: Duration) -> Arc<Sinks> {
    let pager = WebhookTarget {
        name: "pager".into(),
        url: Secret::new(format!("{}/pager", pager.base)),
    };
    Arc::new(Sinks::new(Some(slack), vec![pager], timeout).unwrap())
}

fn slack_webhook(receiver: &Receiver) -> SlackTarget {
    SlackTarget::Webhook {
        url: Secret::new(format!("{}/slack", receiver.base)),
    }
}

fn slack_bot(receiver: &Receiver) -> SlackTarget {
    SlackTarget::Bot {
        api_url: format!("{}/api", receiver.base),
        token: Secret::new("xoxb-test"),
        channel: "C-ALERTS".into(),
    }
}

/// Queues one firing notification per root cause `dev-1/Deployment/apps/app-{i}`.
async fn queue(store: &Store, sinks: &Sinks, count: usize) {
    let dispatcher = Dispatcher::new(
        store.clone(),
        Policy::from_config(&AlertsConfig::default()),
        sinks.routes(),
        BTreeMap::new(),
        None,
    );
    let causes = (0..count)
        .map(|i| {
            cause(
                &format!("dev-1/Deployment/apps/app-{i}"),
                State::Failed,
                "CrashLoopBackOff",
                1,
                1,
            )
        })
        .collect();
    dispatcher
        .round(&evaluation(&["dev-1"], causes), Utc::now())
        .await
        .unwrap();
}

async fn outbox_statuses(store: &Store) -> Vec<(String, i32, Option<String>)> {
    sqlx::query!("SELECT status, attempts, last_error FROM alert_outbox ORDER BY id")
        .fetch_all(store.pool())
        .await
        .unwrap()
        .into_iter()
        .map(|row| (row.status, row.attempts, row.last_error))
        .collect()
}

/// The outbox once every row is recorded delivered (the receiver may have a message before
/// the worker records it).
async fn all_delivered(store: &Store) -> Vec<(String, i32, Option<String>)> {
    loop {
        let statuses = outbox_statuses(store).await;
        if statuses.iter().all(|(s, ..)| s == "delivered") {
            return statuses;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Which root cause each accepted message named.
fn delivered_causes(receiver: &Receiver) -> Vec<String> {
    let mut names: Vec<String> = receiver
        .accepted()
        .iter()
        .map(|r| {
            let text = r.body["text"].as_str().unwrap();
            text.split_whitespace()
                .find(|w| w.starts_with("apps/app-"))
                .unwrap()
                .to_string()
        })
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn delivers_after_500s_and_timeouts_without_loss_or_duplicates() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    receiver.script([
        Reply::Status(500),
        Reply::Hang,
        Reply::Status(503),
        Reply::Hang,
        Reply::Status(500),
    ]);
    let sinks = sinks(
        format!("{}/slack", receiver.base),
        Duration::from_millis(300),
    );
    queue(&store, &sinks, 3).await;
    let task = tokio::spawn(worker(&store, sinks).run());
    eventually("all three delivered", DELIVERY, async || {
        (receiver.accepted().len() >= 3).then_some(())
    })
    .await;
    let statuses = all_delivered(&store).await;
    task.abort();
    assert_eq!(receiver.requests().len(), 8, "5 failures, then 3 successes");
    assert_eq!(
        delivered_causes(&receiver),
        ["apps/app-0", "apps/app-1", "apps/app-2"]
    );
    let attempts: i32 = statuses.iter().map(|(_, a, _)| a).sum();
    assert_eq!(attempts, 8);
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_is_honoured() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    receiver.script([Reply::RetryAfter(1)]);
    let sinks = sinks(format!("{}/slack", receiver.base), Duration::from_secs(5));
    queue(&store, &sinks, 1).await;
    // Honoured up to max_backoff.
    let settings = settings(Duration::from_secs(5));
    let task = tokio::spawn(Worker::new(store.clone(), sinks, settings).run());
    eventually("delivered after the 429", DELIVERY, async || {
        (receiver.accepted().len() == 1).then_some(())
    })
    .await;
    task.abort();
    let requests = receiver.requests();
    assert_eq!(requests.len(), 2);
    assert!(!requests[0].answered_ok && requests[1].answered_ok);
    let waited = requests[1].at - requests[0].at;
    assert!(
        waited >= Duration::from_secs(1),
        "retried after {waited:?}, before Retry-After: 1"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_in_the_middle_of_a_retry_loses_nothing() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let url = format!("{}/slack", receiver.base);
    // First worker: the receiver fails, then hangs while the worker holds the claim.
    receiver.script([Reply::Status(500), Reply::Hang]);
    let first_sinks = sinks(url.clone(), Duration::from_secs(60));
    queue(&store, &first_sinks, 1).await;
    let first = tokio::spawn(worker(&store, first_sinks).run());
    eventually("the retry is in flight", DELIVERY, async || {
        (receiver.requests().len() == 2).then_some(())
    })
    .await;
    first.abort();
    let _ = first.await;
    assert!(receiver.accepted().is_empty());

    let second = tokio::spawn(worker(&store, sinks(url, Duration::from_secs(5))).run());
    eventually("the new worker delivers", DELIVERY, async || {
        (receiver.accepted().len() == 1).then_some(())
    })
    .await;
    loop {
        let statuses = outbox_statuses(&store).await;
        if statuses[0].0 == "delivered" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    second.abort();
    assert_eq!(receiver.accepted().len(), 1, "delivered once");
}

#[tokio::test(flavor = "multi_thread")]
async fn several_workers_deliver_each_notification_exactly_once() {
    let store = common::fresh_store().await;
    let receiver = Receiver::start().await;
    let sinks = sinks(format!("{}/slack", receiver.base), Duration::from_secs(5));
    queue(&store, &sinks, 20).await;
    let workers: Vec<_> = (0..3)
        .map(|_| tokio::spawn(worker(&store, sinks.clone()).run()))
        .collect();
    eventually("twenty delivered", DELIVERY, async || {
        (receiver.accepted().len() >= 20).then_some(())
    })
    .await;
    loop {
        if outbox_statuses(&store)
            .await
            .iter()
            .all(|(s, ..)| s == "delivered")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for w in workers {
        w.abort();
    }
    let causes = delivered_causes(&receiver);
    let mut unique = causes.clone();
    unique.dedup();
    assert_eq!(causes.len(), 20);
    assert_eq!(unique.len(), 20, "no duplicates: {causes:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn delivery_errors_never_show_the_secret_url() {
    let store = common::fresh_store().await;
    // Nothing listens on port 1: every attempt fails with a connection error.
    let sinks = sinks(
        "http://127.0.0.1:1/services/T000/B000/sekrit".into(),
        Duration::from_secs(2),
    );
    queue(&store, &sinks, 1).await;
    let worker = worker(&store, sinks);
    assert!(worker.deliver_one().await.unwrap());
    let statuses = outbox_statuses(&store).await;
    let (status, attempts, error) = &statuses[0];
    assert_eq!((status.as_str(), *attempts), ("pending", 1));
    let error = error.as_deref().unwrap();
    assert!(
        !error.contains("sekrit") && !error.contains("127.0.0.1:1"),
        "{error}"
    );
    assert!(!error.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_is_a_failed_delivery_and_never_followed() {
    let store = common::fresh_store().await;
    let (slack, elsewhere) = (Receiver::start().await, Receiver::start().await);
    slack.script([Reply::Redirect(format!("{}/stolen", elsewhere.base))]);
    let sinks = sinks(format!("{}/slack", slack.base), Duration::from_secs(5));
    queue(&store, &sinks, 1).await;
    let worker = worker(&store, sinks);
    assert!(worker.deliver_one().await.unwrap());
    assert_eq!(slack.requests().len(), 1);
    assert!(
        elsewhere.requests().is_empty(),
        "the alert was re-posted to the redirect's Location"
    );
    let statuses = outbox_statuses(&store).await;
    let (status, attempts, error) = &statuses[0];
    assert_eq!((status.as_str(), *attempts), ("pending", 1));
    assert_eq!(error.as_deref(), Some("HTTP 307"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hanging_slack_does_not_delay_the_pager_webhook() {
    let store = common::fresh_store().await;
    let (slack, pager) = (Receiver::start().await, Receiver::start().await);
    slack.script(std::iter::repeat_n(Reply::Hang, 20));
    // The delivery timeout is far longer than the test: Slack's first request is still
    // hanging when the pager has everything.
    let sinks = slack_and_pager(slack_webhook(&slack), &pager, Duration::from_secs(120));
    queue(&store, &sinks, 5).await;
    let queued = Instant::now();
    let task = tokio::spawn(worker(&store, sinks).run());
    eventually("the pager's five alerts", DELIVERY, async || {
        (pager.accepted().len() == 5).then_some(())
    })
    .await;
    let delays: Vec<Duration> = pager.accepted().iter().map(|r| r.at - queued).collect();
    let slack_requests = slack.requests();
    task.abort();
    assert_eq!(
        slack_requests.len(),
        1,
        "Slack's first message is still in flight"
    );
    assert!(!slack_requests[0].answered_ok);
    let causes = delivered_causes_in(&pager.accepted(), |r| {
        r.body["alert"]["root_cause"].as_str().unwrap().to_string()
    });
    assert_eq!(causes.len(), 5, "{causes:?}");
    println!(
        "hanging slack: pager's 5 alerts delivered {:?} after queueing (the 5th {:.0} ms), slack still waiting on its first",
        delays,
        delays.iter().max().unwrap().as_secs_f64() * 1000.0
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_enormous_retry_after_waits_max_backoff_and_blocks_no_other_sink() {
    let store = common::fresh_store().await;
    let (slack, pager) = (Receiver::start().await, Receiver::start().await);
    // 10^14 seconds: three million years, more than any timestamp can hold.
    slack.script([Reply::RetryAfter(100_000_000_000_000)]);
    let sinks = slack_and_pager(slack_webhook(&slack), &pager, Duration::from_secs(5));
    queue(&store, &sinks, 3).await;
    let max_backoff = Duration::from_secs(1);
    let task = tokio::spawn(Worker::new(store.clone(), sinks, settings(max_backoff)).run());
    eventually("the pager's three alerts", DELIVERY, async || {
        (pager.accepted().len() == 3).then_some(())
    })
    .await;
    eventually("slack's three, after the throttle", DELIVERY, async || {
        (slack.accepted().len() == 3).then_some(())
    })
    .await;
    let requests = slack.requests();
    assert_eq!(
        requests.len(),
        4,
        "one refused, then three delivered: no retry storm"
    );
    let waited = requests[1].at - requests[0].at;
    assert!(
        waited >= max_backoff && waited < max_backoff * 5,
        "retried after {waited:?}: Retry-After is capped at max_backoff ({max_backoff:?})"
    );
    assert!(
        pager.accepted().iter().all(|r| r.at < requests[1].at),
        "the pager did not wait for Slack's throttle"
    );
    // The receiver has them; wait for the worker to record them too.
    let statuses = all_delivered(&store).await;
    task.abort();
    let attempts: Vec<i32> = statuses.iter().map(|(_, a, _)| *a).collect();
    assert_eq!(
        attempts.iter().sum::<i32>(),
        7,
        "one retry in all: {attempts:?}"
    );
    println!(
        "retry-after 10^14 s: slack retried after {waited:?} (max_backoff {max_backoff:?}); pager unaffected"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_between_posting_and_recording_finds_the_slack_message_instead_of_posting_again() {
    let store = common::fresh_store().await;
    let slack = Receiver::start().await;
    slack.script([Reply::AcceptThenHang]);
    let sinks =
        Arc::new(Sinks::new(Some(slack_bot(&slack)), Vec::new(), Duration::from_secs(60)).unwrap());
    queue(&store, &sinks, 1).await;
    let first = tokio::spawn(worker(&store, sinks.clone()).run());
    eventually("the message is in the channel", DELIVERY, async || {
        (slack.accepted().len() == 1).then_some(())
    })
    .await;
    // The process dies before it can record the delivery.
    first.abort();
    let _ = first.await;
    let row = sqlx::query!("SELECT status, claims FROM alert_outbox")
        .fetch_one(store.pool())
        .await
        .unwrap();
    let (status, claims) = (row.status, row.claims);
    assert_eq!((status.as_str(), claims), ("pending", 1));

    let restarted = tokio::spawn(worker(&store, sinks).run());
    let delivered = || async {
        sqlx::query_scalar!("SELECT status FROM alert_outbox")
            .fetch_one(store.pool())
            .await
            .unwrap()
            == "delivered"
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !delivered().await {
        assert!(Instant::now() < deadline, "never recorded");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    restarted.abort();
    let posts: Vec<_> = slack
        .accepted()
        .into_iter()
        .filter(|r| r.path.ends_with("/chat.postMessage"))
        .collect();
    assert_eq!(posts.len(), 1, "posted once, found after the crash");
    assert!(
        slack
            .requests()
            .iter()
            .any(|r| r.path.ends_with("/conversations.history")),
        "looked for the earlier post"
    );
    let ts: Option<String> = sqlx::query_scalar!("SELECT slack_ts FROM alerts")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(
        ts.as_deref(),
        posts[0].body["ts"].as_str(),
        "later edits go to that message"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_between_sending_and_recording_resends_a_webhook_with_the_same_id() {
    let store = common::fresh_store().await;
    let (slack, pager) = (Receiver::start().await, Receiver::start().await);
    pager.script([Reply::AcceptThenHang]);
    let sinks = slack_and_pager(slack_webhook(&slack), &pager, Duration::from_secs(60));
    queue(&store, &sinks, 1).await;
    let first = tokio::spawn(worker(&store, sinks.clone()).run());
    eventually("the pager took it", DELIVERY, async || {
        (pager.accepted().len() == 1).then_some(())
    })
    .await;
    first.abort();
    let _ = first.await;
    let restarted = tokio::spawn(worker(&store, sinks).run());
    eventually("sent again after the claim expired", DELIVERY, async || {
        (pager.accepted().len() == 2).then_some(())
    })
    .await;
    restarted.abort();
    let accepted = pager.accepted();
    assert_eq!(
        accepted[0].body["id"], accepted[1].body["id"],
        "at least once, the same id"
    );
    assert_eq!(accepted[0].idempotency_key, accepted[1].idempotency_key);
    assert!(accepted[0].idempotency_key.is_some());
    assert_eq!(slack.accepted().len(), 1, "Slack got its message once");
}

fn delivered_causes_in(
    requests: &[common::alerts::Request],
    cause: impl Fn(&common::alerts::Request) -> String,
) -> Vec<String> {
    let mut causes: Vec<String> = requests.iter().map(cause).collect();
    causes.sort();
    causes.dedup();
    causes
}

/// What `serve` does on SIGTERM after its collector stopped: the runner's last evaluation
/// (published just before the runner ended) is decided and its page sent before the alerts'
/// tasks end, instead of waiting in the outbox for the next process.
#[tokio::test(flavor = "multi_thread")]
async fn stopping_the_alerts_decides_the_last_evaluation_and_sends_its_page() {
    let store = common::fresh_store().await;
    let slack = Receiver::start().await;
    let url_file = std::env::temp_dir().join(format!("fg-stop-alerts-{}", std::process::id()));
    std::fs::write(&url_file, format!("{}/slack", slack.base)).unwrap();
    let config = fleetglass::config::from_yaml_str(&format!(
        "alerts:\n  slack:\n    mode: webhook\n    webhook_url_file: {}\n",
        url_file.display()
    ))
    .unwrap();
    let (publish, latest) = tokio::sync::watch::channel(Arc::new(Evaluated::default()));
    let alerts = fleetglass::alerts::start(&config, store.clone(), latest).unwrap();

    let causes = vec![cause(
        "dev-1/Deployment/apps/app-0",
        State::Failed,
        "CrashLoopBackOff",
        1,
        1,
    )];
    let last = Fleet::new(BTreeMap::from([(
        "dev-1".to_string(),
        Arc::new(evaluation(&["dev-1"], causes)),
    )]));
    publish.send_replace(Arc::new(Evaluated {
        fleet: Arc::new(last),
        at: Some(Utc::now()),
        reevaluated: Default::default(),
        held_back: Default::default(),
    }));
    drop(publish); // the runner ended
    alerts.stop().await;
    std::fs::remove_file(&url_file).ok();

    assert_eq!(delivered_causes(&slack), ["apps/app-0"]);
    assert_eq!(
        outbox_statuses(&store).await,
        [("delivered".to_string(), 1, None)]
    );
}
