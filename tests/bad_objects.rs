//! Pathological objects through the whole path — parsing, the engine, the runner's write to
//! real Postgres, the pages and the API: a megabyte message, thousands of conditions, a
//! dependsOn cycle, a ten-thousand-deep dependsOn chain, and a document that is not UTF-8.
//! Nothing panics, nothing is green that should not be, and the rest of the fleet is served.

use crate::common;

use chrono::Utc;
use common::web::{app, fresh_store, get, get_json};
use fleetglass::ingest::{Runner, RunnerSettings};
use fleetglass::model::parse_object;
use fleetglass::sources::SourceEvent;
use serde_json::{Value, json};

const CLUSTER: &str = "c1";

fn kustomization(name: &str, depends_on: &[String], conditions: Value) -> Value {
    let depends: Vec<Value> = depends_on.iter().map(|d| json!({"name": d})).collect();
    json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": name, "namespace": "apps", "generation": 1},
        "spec": {"interval": "10m", "path": "./", "dependsOn": depends,
                 "sourceRef": {"kind": "GitRepository", "name": "repo"}},
        "status": {"observedGeneration": 1, "lastAppliedRevision": "main@sha1:0123",
                   "lastAttemptedRevision": "main@sha1:0123", "conditions": conditions}
    })
}

fn ready(status: &str, reason: &str, message: &str) -> Value {
    json!([{"type": "Ready", "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z"}])
}

fn git_repository() -> Value {
    json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
            "metadata": {"name": "repo", "namespace": "apps", "generation": 1},
            "spec": {"interval": "5m", "url": "https://example.invalid/r.git"},
            "status": {"observedGeneration": 1, "artifact": {"revision": "main@sha1:0123"},
                       "conditions": ready("True", "Succeeded", "stored")}})
}

fn apply(runner: &mut Runner, value: &Value) {
    let object = parse_object(CLUSTER, value).expect("parsed leniently");
    runner.apply(SourceEvent::Apply(Box::new(object)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pathological_objects_are_evaluated_stored_and_served() {
    let store = fresh_store().await;
    let config = common::one_cluster_config(CLUSTER);
    let (mut runner, latest) = Runner::new(RunnerSettings::from_config(&config), store.clone());
    runner.apply(SourceEvent::ClusterAlive {
        cluster: CLUSTER.into(),
        at: Utc::now(),
    });
    apply(&mut runner, &git_repository());
    let huge = "x".repeat(1 << 20);
    apply(
        &mut runner,
        &kustomization("huge-message", &[], ready("False", "BuildFailed", &huge)),
    );
    let many: Vec<Value> = (0..5000)
        .map(|i| {
            json!({"type": format!("Custom{i}"), "status": "True", "reason": "R", "message": "m",
                        "lastTransitionTime": "2026-01-01T00:00:00Z"})
        })
        .chain(
            ready("True", "ReconciliationSucceeded", "applied")
                .as_array()
                .unwrap()
                .clone(),
        )
        .collect();
    apply(
        &mut runner,
        &kustomization("many-conditions", &[], Value::Array(many)),
    );
    apply(
        &mut runner,
        &kustomization(
            "cycle-a",
            &["cycle-b".into()],
            ready("True", "ReconciliationSucceeded", "ok"),
        ),
    );
    apply(
        &mut runner,
        &kustomization(
            "cycle-b",
            &["cycle-a".into()],
            ready("True", "ReconciliationSucceeded", "ok"),
        ),
    );
    const DEPTH: usize = 10_000;
    for i in 0..DEPTH {
        let depends = if i + 1 < DEPTH {
            vec![format!("chain-{}", i + 1)]
        } else {
            vec![]
        };
        let conditions = if i + 1 < DEPTH {
            ready(
                "False",
                "DependencyNotReady",
                &format!("dependency 'apps/chain-{}' is not ready", i + 1),
            )
        } else {
            ready("False", "BuildFailed", "the bottom of the chain fails")
        };
        apply(
            &mut runner,
            &kustomization(&format!("chain-{i}"), &depends, conditions),
        );
    }
    runner.run_round(Utc::now()).await;
    let evaluation = latest.borrow().fleet.merged();
    let state = |name: &str| {
        evaluation
            .objects
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.state.as_str())
            .unwrap_or_else(|| panic!("{name} evaluated"))
    };
    assert_eq!(state("huge-message"), "failed");
    assert_eq!(state("many-conditions"), "healthy");
    for name in ["cycle-a", "cycle-b"] {
        assert_eq!(state(name), "failed", "a dependsOn cycle never reconciles");
    }
    assert_eq!(
        state("chain-0"),
        "blocked",
        "the top of the chain waits on the bottom"
    );
    let chain_root = evaluation
        .root_causes
        .iter()
        .find(|cause| cause.affected.len() >= DEPTH)
        .expect("one root cause for the whole chain");
    assert!(
        chain_root
            .id
            .as_str()
            .ends_with(&format!("/chain-{}", DEPTH - 1)),
        "{}",
        chain_root.id.as_str()
    );

    // Stored and served: the rows are in Postgres and every surface answers.
    let app = app(store.clone(), &config);
    for name in ["huge-message", "many-conditions", "cycle-a", "chain-0"] {
        let uri = format!("/api/v1/objects/{CLUSTER}/Kustomization/apps/{name}");
        let (status, body) = get_json(&app, &uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        assert_eq!(body["name"], name);
        let (status, _) = get(
            &app,
            &format!("/objects/{CLUSTER}/Kustomization/apps/{name}"),
        )
        .await;
        assert_eq!(status, 200, "the object page of {name}");
    }
    for uri in ["/", "/problems", "/api/v1/fleet"] {
        let (status, body) = get(&app, uri).await;
        assert_eq!(status, 200, "{uri}: {body:.500}");
    }
}

#[test]
fn a_document_that_is_not_utf8_is_refused_with_where() {
    let dir = std::env::temp_dir().join(format!("fg-not-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("objects.yaml");
    let mut bytes =
        b"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: \""
            .to_vec();
    bytes.extend([0xff, 0xfe, b'x']);
    bytes.extend(b"\", namespace: apps}\n");
    std::fs::write(&file, bytes).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .arg("evaluate")
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("objects.yaml") && stderr.contains("UTF-8"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The state and since of the Kustomization `never-started` in the runner's newest evaluation.
fn never_started_verdict(
    latest: &fleetglass::ingest::Latest,
) -> (String, Option<chrono::DateTime<Utc>>) {
    let evaluated = latest.borrow().clone();
    let verdict = evaluated
        .fleet
        .merged()
        .objects
        .iter()
        .find(|v| v.name == "never-started")
        .cloned()
        .expect("evaluated");
    (verdict.state.as_str().to_string(), verdict.since)
}

/// A new generation the controller never starts on has no start time of its own; the runner
/// remembers when it first saw it in progress, so days later it is `stuck`, not forever
/// `progressing`, and its verdict says since when.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_that_never_starts_becomes_stuck_from_when_it_was_first_seen() {
    let store = fresh_store().await;
    let config = common::one_cluster_config(CLUSTER);
    let (mut runner, latest) = Runner::new(RunnerSettings::from_config(&config), store.clone());
    let mut never_started = kustomization(
        "never-started",
        &[],
        ready("True", "ReconciliationSucceeded", "applied"),
    );
    never_started["metadata"]["generation"] = json!(2);
    apply(&mut runner, &git_repository());
    apply(&mut runner, &never_started);
    let first_seen = Utc::now();
    for (days, cluster_alive) in [
        (0, first_seen),
        (3, first_seen + chrono::TimeDelta::days(3)),
    ] {
        runner.apply(SourceEvent::ClusterAlive {
            cluster: CLUSTER.into(),
            at: cluster_alive,
        });
        runner
            .run_round(first_seen + chrono::TimeDelta::days(days))
            .await;
        let (state, since) = never_started_verdict(&latest);
        if days == 0 {
            assert_eq!((state.as_str(), since), ("progressing", None));
        } else {
            assert_eq!((state.as_str(), since), ("stuck", Some(first_seen)));
        }
    }
}

/// The first sighting in progress is kept in Postgres: a collector restarted (a new runner on
/// the same database) measures the stuck window from the first sighting, not from its start,
/// and the sighting goes when the object leaves progress.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_the_window_of_work_without_a_start_time() {
    let store = fresh_store().await;
    let config = common::one_cluster_config(CLUSTER);
    let id = format!("{CLUSTER}/Kustomization/apps/never-started");
    let first_seen: chrono::DateTime<Utc> = "2026-12-01T00:00:00Z".parse().unwrap();
    let mut object = kustomization(
        "never-started",
        &[],
        ready("True", "ReconciliationSucceeded", "applied"),
    );
    object["metadata"]["generation"] = json!(2);
    // Threshold: twice the default timeout of a 10m interval (9m30s) = 19m.
    let round =
        async |runner: &mut Runner, latest: &fleetglass::ingest::Latest, object: &Value, at| {
            apply(runner, &git_repository());
            apply(runner, object);
            runner.apply(SourceEvent::ClusterAlive {
                cluster: CLUSTER.into(),
                at,
            });
            runner.run_round(at).await;
            never_started_verdict(latest)
        };
    let stored = async || -> Option<chrono::DateTime<Utc>> {
        sqlx::query_scalar!("SELECT since FROM seen_in_progress WHERE id = $1", id)
            .fetch_optional(store.pool())
            .await
            .unwrap()
    };

    let (mut first, latest) = Runner::new(RunnerSettings::from_config(&config), store.clone());
    let seen = round(&mut first, &latest, &object, first_seen).await;
    assert_eq!((seen.0.as_str(), seen.1), ("progressing", None));
    assert_eq!(stored().await, Some(first_seen));
    drop(first);

    let (mut restarted, latest) = Runner::new(RunnerSettings::from_config(&config), store.clone());
    let later = first_seen + chrono::TimeDelta::minutes(20);
    let seen = round(&mut restarted, &latest, &object, later).await;
    assert_eq!(
        (seen.0.as_str(), seen.1),
        ("stuck", Some(first_seen)),
        "20m since the first sighting, though the runner only just started"
    );

    // Converged: the sighting goes, and new work starts a new window.
    object["status"]["observedGeneration"] = json!(2);
    let seen = round(&mut restarted, &latest, &object, later).await;
    assert_eq!(seen.0, "healthy");
    assert_eq!(stored().await, None);
    object["metadata"]["generation"] = json!(3);
    let again = later + chrono::TimeDelta::minutes(1);
    let seen = round(&mut restarted, &latest, &object, again).await;
    assert_eq!((seen.0.as_str(), seen.1), ("progressing", None));
    assert_eq!(stored().await, Some(again));
}
