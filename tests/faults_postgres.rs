//! Postgres faults, each on a Postgres server of the test's own (the shared one is never
//! touched): a restart while the collector evaluates and alerts are decided loses no transition
//! and no alert; a stopped or connection-exhausted database turns `/readyz` to 503 and every
//! page to a "not answering" error — never to old green — and the service recovers without a
//! restart of its own; a database lost between an alert's send and its record does not page
//! twice.

use crate::common;

use chrono::{DateTime, Utc};
use common::alerts::{Receiver, Reply};
use common::eventually;
use common::own_postgres::OwnPostgres;
use fleetglass::alerts::rules::Policy;
use fleetglass::alerts::{DeliverySettings, Dispatcher, Sinks, Worker};
use fleetglass::config::{AlertsConfig, Secret, SlackTarget};
use fleetglass::ingest::{Runner, RunnerSettings};
use fleetglass::model::{Kind, parse_object};
use fleetglass::objects::{
    Artifact, GitRepository, Kustomization, KustomizationStatus, Meta, Ref, SourceStatus, Truth,
    condition,
};
use fleetglass::sources::{self, SourceEvent};
use fleetglass::store::{ObjectKey, Store};
use serde_json::Value;
use sqlx::Connection;
use std::sync::Arc;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);
const CLUSTER: &str = "c1";

/// When the objects were created and their conditions set.
fn long_ago() -> DateTime<Utc> {
    "2026-01-01T00:00:00Z".parse().expect("a valid time")
}

fn apply(value: &Value) -> SourceEvent {
    SourceEvent::Apply(Box::new(
        parse_object(CLUSTER, value).expect("a valid object"),
    ))
}

fn kustomization(name: &str, ready: bool) -> SourceEvent {
    let (status, reason) = if ready {
        (Truth::True, "ReconciliationSucceeded")
    } else {
        (Truth::False, "BuildFailed")
    };
    let meta = Meta::new("apps", name, long_ago());
    let mut kustomization = Kustomization::new(meta, Ref::to("GitRepository", "repo"), "./", "10m");
    let message = format!("{name}: {reason}");
    kustomization.status = Some(KustomizationStatus {
        observed_generation: 1,
        last_applied_revision: Some("main@sha1:0123".into()),
        conditions: vec![condition(
            "Ready",
            status,
            reason,
            &message,
            long_ago(),
            None,
        )],
        ..KustomizationStatus::default()
    });
    apply(&kustomization.to_json())
}

fn git_repository() -> SourceEvent {
    let stored = condition(
        "Ready",
        Truth::True,
        "Succeeded",
        "stored",
        long_ago(),
        None,
    );
    let repository = GitRepository {
        meta: Meta::new("apps", "repo", long_ago()),
        interval: "5m".into(),
        timeout: None,
        url: "https://example.invalid/repo.git".into(),
        branch: None,
        status: Some(SourceStatus {
            observed_generation: 1,
            artifact: Some(Artifact::revision("main@sha1:0123")),
            conditions: vec![stored],
        }),
    };
    apply(&repository.to_json())
}

fn alive() -> SourceEvent {
    SourceEvent::ClusterAlive {
        cluster: CLUSTER.into(),
        at: chrono::Utc::now(),
    }
}

/// The alert messages the receiver accepted that name `name`.
fn messages_naming(receiver: &Receiver, name: &str) -> usize {
    receiver
        .accepted()
        .iter()
        .filter(|r| r.body.to_string().contains(&format!("apps/{name}")))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_restart_loses_no_transition_and_no_alert() {
    let pg = OwnPostgres::start("faults-restart", 40);
    let store = Store::connect(&pg.url("postgres")).await.unwrap();
    store.migrate().await.unwrap();
    let config = common::one_cluster_config(CLUSTER);
    let (events, receiver_of_events) = sources::channel();
    let (runner, latest) = Runner::new(RunnerSettings::from_config(&config), store.clone());
    tokio::spawn(runner.run(receiver_of_events));
    let receiver = Receiver::start().await;
    let slack = SlackTarget::Webhook {
        url: Secret::new(format!("{}/slack/webhook", receiver.base)),
    };
    let sinks = Arc::new(Sinks::new(Some(slack), Vec::new(), Duration::from_secs(5)).unwrap());
    let dispatcher = Dispatcher::new(
        store.clone(),
        Policy::from_config(&AlertsConfig::default()),
        sinks.routes(),
        Default::default(),
        None,
    );
    tokio::spawn(dispatcher.run(latest.clone()));
    let settings = DeliverySettings {
        backoff: Duration::from_millis(100),
        max_backoff: Duration::from_secs(1),
        poll: Duration::from_millis(100),
        claim: Duration::from_secs(1),
    };
    tokio::spawn(Worker::new(store.clone(), sinks, settings).run());

    for event in [
        alive(),
        git_repository(),
        kustomization("a", true),
        kustomization("b", false),
    ] {
        events.send(event).await.unwrap();
    }
    eventually("the alert for b", DEADLINE, || async {
        (messages_naming(&receiver, "b") == 1).then_some(())
    })
    .await;

    pg.stop();
    let stopped = chrono::Utc::now();
    // While the database is down: a flaps false and back, c fails (a new root cause).
    for event in [
        alive(),
        kustomization("a", false),
        kustomization("c", false),
    ] {
        events.send(event).await.unwrap();
    }
    let c_is_a_cause = || {
        latest
            .borrow()
            .fleet
            .merged()
            .root_causes
            .iter()
            .any(|cause| cause.id.as_str().ends_with("/apps/c"))
    };
    eventually(
        "the runner evaluated c during the outage",
        DEADLINE,
        || async { c_is_a_cause().then_some(()) },
    )
    .await;
    events.send(kustomization("a", true)).await.unwrap();
    eventually("the runner evaluated a's recovery", DEADLINE, || async {
        let evaluated = latest.borrow().clone();
        let healthy = evaluated
            .fleet
            .merged()
            .objects
            .iter()
            .find(|v| v.name == "a")?
            .state
            .as_str()
            == "healthy";
        (healthy && evaluated.at? > stopped).then_some(())
    })
    .await;
    // The outage lasts a while (a failover, a minute-long maintenance): its length is the
    // fault itself, not a wait for anything. `scripts/soak` makes it a minute.
    let outage: u64 = std::env::var("FLEETGLASS_PG_OUTAGE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    tokio::time::sleep(Duration::from_secs(outage)).await;
    assert!(
        sqlx::PgConnection::connect(&pg.url("postgres"))
            .await
            .is_err(),
        "the database must really be down while the changes happen"
    );
    assert_eq!(
        messages_naming(&receiver, "c"),
        0,
        "nothing can be queued yet"
    );

    pg.start_again();
    let restarted = Instant::now();
    eventually(
        "the alert for c, decided during the outage",
        DEADLINE,
        || async { (messages_naming(&receiver, "c") == 1).then_some(()) },
    )
    .await;
    let alert_recovery = restarted.elapsed();
    let key = |name: &str| ObjectKey {
        cluster: CLUSTER.into(),
        kind: Kind::Kustomization,
        namespace: "apps".into(),
        name: name.into(),
    };
    let history = eventually("a's flap is in the history", DEADLINE, || async {
        let rows = store.transitions(&key("a"), 10).await.ok()?;
        (rows.len() >= 3).then_some(rows)
    })
    .await;
    let mut states: Vec<&str> = history.iter().map(|t| t.to_state.as_str()).collect();
    states.reverse();
    assert_eq!(states, ["healthy", "failed", "healthy"], "a's history");
    assert!(
        history[..2].iter().all(|t| t.at > stopped),
        "the outage's transitions keep the time they were seen: {history:?}"
    );
    // Exactly one message per cause: the retry after the outage did not page b again.
    assert_eq!(messages_naming(&receiver, "b"), 1);
    assert_eq!(messages_naming(&receiver, "c"), 1);
    println!(
        "alert decided during a Postgres outage delivered {alert_recovery:?} after the restart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_whose_record_meets_a_stopped_database_is_recorded_later_not_sent_again() {
    let pg = OwnPostgres::start("faults-record", 20);
    // The store waits up to 5 s for a connection, so a shorter outage is waited out without
    // an error; a pool that gives up sooner lets a short outage reach the record.
    let give_up = Duration::from_millis(300);
    let pool = sqlx::postgres::PgPoolOptions::new()
        .acquire_timeout(give_up)
        .connect(&pg.url("postgres"))
        .await
        .unwrap();
    let store = Store::from_pool(pool);
    store.migrate().await.unwrap();
    common::alerts::raise_tofu_controller_alert(&store).await;
    let receiver = Receiver::start().await;
    let release = Arc::new(tokio::sync::Notify::new());
    receiver.script([Reply::OkWhenReleased(release.clone())]);
    let slack = SlackTarget::Webhook {
        url: Secret::new(format!("{}/slack/webhook", receiver.base)),
    };
    let sinks = Arc::new(Sinks::new(Some(slack), Vec::new(), Duration::from_secs(5)).unwrap());
    let claim = Duration::from_secs(1);
    let settings = DeliverySettings {
        backoff: Duration::from_millis(100),
        max_backoff: Duration::from_secs(1),
        poll: Duration::from_millis(100),
        claim,
    };
    tokio::spawn(Worker::new(store.clone(), sinks, settings).run());
    eventually("the notification reaches Slack", DEADLINE, || async {
        (receiver.accepted().len() == 1).then_some(())
    })
    .await;

    // Slack has the message; the database goes before the worker hears back.
    pg.stop();
    release.notify_one();
    // The outage outlasts the pool's wait and the claim (the fault itself): a worker that left
    // the record to the claim's expiry would claim the notification again and send it twice.
    tokio::time::sleep(give_up + claim * 2).await;
    pg.start_again();
    eventually("the delivery is recorded", DEADLINE, || async {
        let status: String = sqlx::query_scalar!("SELECT status FROM alert_outbox")
            .fetch_one(store.pool())
            .await
            .ok()?;
        (status == "delivered").then_some(())
    })
    .await;
    assert_eq!(
        receiver.accepted().len(),
        1,
        "sent once: {:?}",
        receiver.accepted()
    );
}

async fn status_and_body(client: &reqwest::Client, url: &str) -> Option<(u16, String)> {
    let response = client.get(url).send().await.ok()?;
    let status = response.status().as_u16();
    Some((status, response.text().await.ok()?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_and_pages_follow_a_stopped_and_an_exhausted_database() {
    // 12 connections, 2 kept for superusers: 10 for the application role and the hog.
    let pg = OwnPostgres::start("faults-readyz", 12);
    let mut admin = sqlx::PgConnection::connect(&pg.url("postgres"))
        .await
        .unwrap();
    for statement in [
        "CREATE ROLE app LOGIN",
        "CREATE ROLE hog LOGIN",
        "CREATE DATABASE fleet OWNER app",
    ] {
        sqlx::query(statement).execute(&mut admin).await.unwrap();
    }
    drop(admin);
    let app_url = format!("postgres://app@127.0.0.1:{}/fleet", pg.port);
    let log = std::env::temp_dir().join(format!("fg-faults-readyz-{}.log", std::process::id()));
    let server = common::DemoServer::start(&app_url, &log);
    let base = server.base.clone();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let ready = || async {
        let (status, _) = status_and_body(&client, &format!("{base}/readyz")).await?;
        (status == 200).then_some(())
    };
    eventually("ready", DEADLINE, ready).await;
    eventually("the demo fleet written", DEADLINE, || async {
        let (_, body) = status_and_body(&client, &format!("{base}/api/v1/fleet")).await?;
        let fleet: serde_json::Value = serde_json::from_str(&body).ok()?;
        (fleet["clusters"].as_array()?.len() == 5).then_some(())
    })
    .await;

    pg.stop();
    let not_ready = || async {
        let (status, body) = status_and_body(&client, &format!("{base}/readyz")).await?;
        (status == 503).then_some(body)
    };
    let body = eventually(
        "/readyz 503 while the database is stopped",
        DEADLINE,
        not_ready,
    )
    .await;
    assert!(body.starts_with("not ready: "), "{body}");
    let (status, body) = status_and_body(&client, &format!("{base}/healthz"))
        .await
        .unwrap();
    assert_eq!(
        (status, body.as_str()),
        (200, "ok"),
        "the process itself is alive"
    );
    for path in ["/", "/api/v1/fleet", "/problems", "/api/v1/domains/gateway"] {
        let (status, body) = status_and_body(&client, &format!("{base}{path}"))
            .await
            .unwrap();
        assert_eq!(status, 503, "{path}: {body}");
        assert!(body.contains("not answering"), "{path} says why: {body}");
        assert!(
            !body.contains("healthy"),
            "{path} shows no old green: {body}"
        );
    }
    pg.start_again();
    let restarted = Instant::now();
    eventually("ready again after the restart", DEADLINE, ready).await;
    let restart_recovery = restarted.elapsed();
    let (status, _) = status_and_body(&client, &format!("{base}/api/v1/fleet"))
        .await
        .unwrap();
    assert_eq!(status, 200);

    // Every non-superuser slot taken by another client and fleetglass's own connections cut:
    // it cannot get a connection until the hog lets go. Cutting frees slots that fleetglass
    // may win back first, so cut and fill again until it holds none.
    let hog_url = format!("postgres://hog@127.0.0.1:{}/postgres", pg.port);
    let mut admin = sqlx::PgConnection::connect(&pg.url("postgres"))
        .await
        .unwrap();
    let mut hogs = Vec::new();
    let mut refusal = String::new();
    // While the hog holds the slots, fleetglass may not win one back: its runner, dispatcher
    // and delivery workers reconnect within milliseconds of being cut, and a refused attempt
    // still holds a slot while it starts, so the hog can be refused one slot short. Its role
    // is shut out until the hog lets go.
    sqlx::query!("ALTER ROLE app CONNECTION LIMIT 0")
        .execute(&mut admin)
        .await
        .unwrap();
    for _ in 0..20 {
        sqlx::query!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'app'"
        )
        .fetch_all(&mut admin)
        .await
        .unwrap();
        loop {
            match sqlx::PgConnection::connect(&hog_url).await {
                Ok(connection) => hogs.push(connection),
                Err(error) => {
                    refusal = error.to_string();
                    break;
                }
            }
            assert!(
                hogs.len() <= 12,
                "max_connections is not limiting connections"
            );
        }
        let held: i64 = sqlx::query_scalar!(
            r#"SELECT count(*) AS "held!" FROM pg_stat_activity WHERE usename = 'app' AND state IS NOT NULL"#,
        )
        .fetch_one(&mut admin)
        .await
        .unwrap();
        if held == 0 {
            break;
        }
    }
    assert!(
        refusal.contains("connection slots") || refusal.contains("too many clients"),
        "{refusal}"
    );
    eventually(
        "/readyz 503 while connections are exhausted",
        DEADLINE,
        not_ready,
    )
    .await;
    let (status, body) = status_and_body(&client, &format!("{base}/api/v1/fleet"))
        .await
        .unwrap();
    assert_eq!(status, 503, "{body}");
    sqlx::query!("ALTER ROLE app CONNECTION LIMIT -1")
        .execute(&mut admin)
        .await
        .unwrap();
    drop(admin);
    drop(hogs);
    let released = Instant::now();
    eventually("ready once connections are free", DEADLINE, ready).await;
    let exhaustion_recovery = released.elapsed();

    // The database answers but refuses every write: not ready, saying so.
    let mut admin = sqlx::PgConnection::connect(&pg.url("postgres"))
        .await
        .unwrap();
    const READ_ONLY: [&str; 2] = [
        "ALTER DATABASE fleet SET default_transaction_read_only = on",
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'app'",
    ];
    const WRITABLE: [&str; 2] = [
        "ALTER DATABASE fleet RESET default_transaction_read_only",
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'app'",
    ];
    for statement in READ_ONLY {
        sqlx::query(statement).execute(&mut admin).await.unwrap();
    }
    let body = eventually("/readyz 503 while writes fail", DEADLINE, not_ready).await;
    assert!(
        body.contains("read-only") || body.contains("write failed"),
        "{body}"
    );
    for statement in WRITABLE {
        sqlx::query(statement).execute(&mut admin).await.unwrap();
    }
    eventually("ready once writes go through", DEADLINE, ready).await;
    drop(admin);

    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("connection slots")
            || log.contains("too many clients")
            || log.contains("too many connections for role"),
        "the log names the refusal"
    );
    println!(
        "recovery: ready {restart_recovery:?} after the Postgres restart, {exhaustion_recovery:?} after connections were released"
    );
}
