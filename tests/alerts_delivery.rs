//! The outbox and the delivery worker against a receiver that fails, hangs and rate-limits:
//! nothing lost, nothing duplicated, Retry-After honoured, restarts survived, several workers
//! sharing the work, secrets kept out of errors.

mod alerts_support;
mod common;

use alerts_support::{Receiver, Reply, cause, evaluation, eventually};
use chrono::Utc;
use fleetglass::alerts::rules::Policy;
use fleetglass::alerts::{DeliverySettings, Dispatcher, Sinks, Worker};
use fleetglass::config::{AlertsConfig, Secret, SlackTarget};
use fleetglass::health::State;
use fleetglass::store::Store;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

fn sinks(url: String, timeout: Duration) -> Arc<Sinks> {
    let slack = SlackTarget::Webhook {
        url: Secret::new(url),
    };
    Arc::new(Sinks::new(Some(slack), Vec::new(), timeout).unwrap())
}

fn worker(store: &Store, sinks: Arc<Sinks>) -> Worker {
    let settings = DeliverySettings {
        backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
        poll: Duration::from_millis(20),
    };
    Worker::new(store.clone(), sinks, settings)
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
    sqlx::query_as("SELECT status, attempts, last_error FROM alert_outbox ORDER BY id")
        .fetch_all(store.pool())
        .await
        .unwrap()
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
    eventually("all three delivered", || receiver.accepted().len() >= 3).await;
    let statuses = loop {
        let statuses = outbox_statuses(&store).await;
        if statuses.iter().all(|(s, ..)| s == "delivered") {
            break statuses;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
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
    let task = tokio::spawn(worker(&store, sinks).run());
    eventually("delivered after the 429", || receiver.accepted().len() == 1).await;
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
    eventually("the retry is in flight", || receiver.requests().len() == 2).await;
    first.abort();
    let _ = first.await;
    assert!(receiver.accepted().is_empty());

    let second = tokio::spawn(worker(&store, sinks(url, Duration::from_secs(5))).run());
    eventually("the new worker delivers", || receiver.accepted().len() == 1).await;
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
    eventually("twenty delivered", || receiver.accepted().len() >= 20).await;
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
