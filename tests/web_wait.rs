//! The CI gate, both ways: it returns as soon as the version becomes fully healthy while a
//! request waits, and it times out naming the blockers; `fleetglass wait` maps that to exit
//! codes 0, 1 and 2.

use crate::common;

use chrono::Utc;
use common::web::{
    app, cause_row, cluster_row, domain_row, fresh_store, get, get_json, seed_rollups,
};
use fleetglass::config::Config;
use fleetglass::store::Store;
use std::process::Command;

const CAUSE: &str = "prod-1/Kustomization/flux-system/infra-policies";

fn config() -> Config {
    fleetglass::config::from_yaml_str(
        "clusters: [{name: dev-1, labels: {ring: dev}}, {name: prod-1, labels: {ring: prod}}]
domains:
  - name: gateway
    select: {labels: {domain: gateway}}
    version: {from: chart_version, namespace: gw, name: gw}",
    )
    .unwrap()
}

/// dev-1 healthy at 1.5.0; prod-1 still at 1.4.2, failed, blocked by an RBAC problem.
async fn seed_rollout_in_progress(store: &Store) {
    let now = Utc::now();
    let clusters = [
        cluster_row("dev-1", "dev", now),
        cluster_row("prod-1", "prod", now),
    ];
    seed_rollups(
        store,
        &clusters,
        "dev-1",
        &[],
        &[domain_row("gateway", "dev-1", "1.5.0", true, &[])],
    )
    .await;
    seed_rollups(
        store,
        &[],
        "prod-1",
        &[cause_row(CAUSE, "RBAC Forbidden", &[CAUSE])],
        &[domain_row("gateway", "prod-1", "1.4.2", false, &[CAUSE])],
    )
    .await;
}

async fn prod_becomes_healthy(store: &Store) {
    seed_rollups(
        store,
        &[],
        "prod-1",
        &[],
        &[domain_row("gateway", "prod-1", "1.5.0", true, &[])],
    )
    .await;
}

/// Issue 49: with `fail_fast`, a wait answers as soon as the version fails on a cluster in
/// scope (the next round's roll-ups), naming it, instead of at its timeout.
#[tokio::test(flavor = "multi_thread")]
async fn a_fail_fast_wait_answers_when_the_version_fails() {
    let store = fresh_store().await;
    seed_rollout_in_progress(&store).await;
    let app = app(store.clone(), &config());
    let waiting = {
        let app = app.clone();
        tokio::spawn(async move {
            get_json(
                &app,
                "/api/v1/domains/gateway/wait?version=1.5.0&timeout=10m&fail_fast=true",
            )
            .await
        })
    };
    // prod-1 takes 1.5.0 and fails with it.
    seed_rollups(
        &store,
        &[],
        "prod-1",
        &[cause_row(CAUSE, "RBAC Forbidden", &[CAUSE])],
        &[domain_row("gateway", "prod-1", "1.5.0", false, &[CAUSE])],
    )
    .await;
    let (status, verdict) = waiting.await.unwrap();
    assert_eq!(status, 200, "{verdict}");
    assert_eq!(verdict["healthy"], false);
    assert_eq!(
        verdict["failed_on"],
        serde_json::json!(["prod-1"]),
        "{verdict}"
    );
    let (status, _) = get_json(
        &app,
        "/api/v1/domains/gateway/wait?version=1.5.0&timeout=0s&fail_fast=maybe",
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gate_returns_as_soon_as_the_version_is_healthy_everywhere() {
    let store = fresh_store().await;
    seed_rollout_in_progress(&store).await;
    let app = app(store.clone(), &config());
    let (_, now) = get_json(
        &app,
        "/api/v1/domains/gateway/wait?version=1.5.0&timeout=0s",
    )
    .await;
    assert_eq!(now["healthy"], false, "not yet: {now}");

    let waiting = {
        let app = app.clone();
        tokio::spawn(async move {
            get_json(
                &app,
                "/api/v1/domains/gateway/wait?version=1.5.0&timeout=10m",
            )
            .await
        })
    };
    prod_becomes_healthy(&store).await;
    let (status, verdict) = waiting.await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(verdict["healthy"], true, "{verdict}");
    assert_eq!(verdict["domain"], "gateway");
    assert_eq!(verdict["version"], "1.5.0");
    let waited: f64 = verdict["waited"]
        .as_str()
        .unwrap()
        .trim_end_matches('s')
        .parse()
        .unwrap();
    assert!(
        waited < 600.0,
        "answered when healthy, not at the timeout: {verdict}"
    );
    assert!(
        verdict["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["at_version"] == true)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gate_times_out_naming_the_blockers() {
    let store = fresh_store().await;
    seed_rollout_in_progress(&store).await;
    let app = app(store, &config());
    let (status, verdict) = get_json(
        &app,
        "/api/v1/domains/gateway/wait?version=1.5.0&timeout=1s",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(verdict["healthy"], false);
    let clusters = verdict["clusters"].as_array().unwrap();
    let prod = clusters.iter().find(|c| c["cluster"] == "prod-1").unwrap();
    assert_eq!(prod["version"], "1.4.2");
    assert_eq!(prod["at_version"], false);
    let blocker = &prod["blockers"][0];
    assert_eq!(blocker["id"], CAUSE);
    assert_eq!(blocker["kind"], "Kustomization");
    assert_eq!(blocker["state"], "failed");
    assert_eq!(blocker["reason"], "RBAC Forbidden");
    assert_eq!(blocker["root_causes"][0], CAUSE);
    let dev = clusters.iter().find(|c| c["cluster"] == "dev-1").unwrap();
    assert_eq!(dev["at_version"], true);
}

/// Serves the router on a free port for the CLI to call.
async fn serve(store: Store) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = app(store, &config());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{address}")
}

fn fleetglass_wait(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .arg("wait")
        .args(args)
        .env_remove("FLEETGLASS_URL")
        .env_remove("FLEETGLASS_TOKEN")
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Issue 49: the domain page warns a later ring of a version failing in an earlier one before
/// it arrives there (and a ring filter keeps its own warning only).
#[tokio::test(flavor = "multi_thread")]
async fn the_domain_page_warns_a_later_ring_of_a_version_failing_earlier() {
    let store = fresh_store().await;
    let now = Utc::now();
    let clusters = [
        cluster_row("dev-1", "dev", now),
        cluster_row("prod-1", "prod", now),
    ];
    seed_rollups(
        &store,
        &clusters,
        "dev-1",
        &[cause_row(CAUSE, "RBAC Forbidden", &[CAUSE])],
        &[domain_row("gateway", "dev-1", "2.0.0", false, &[CAUSE])],
    )
    .await;
    seed_rollups(
        &store,
        &[],
        "prod-1",
        &[],
        &[domain_row("gateway", "prod-1", "1.9.0", true, &[])],
    )
    .await;
    let app = app(store, &config());
    let warning = "coming to <strong>prod</strong>: 2.0.0 failing in dev on 1 cluster";
    let (_, page) = get(&app, "/domains/gateway").await;
    assert!(page.contains(warning), "{page}");
    let (_, prod) = get(&app, "/domains/gateway?label=ring%3Dprod").await;
    assert!(prod.contains(warning), "{prod}");
    let (_, dev) = get(&app, "/domains/gateway?label=ring%3Ddev").await;
    assert!(!dev.contains("coming to"), "{dev}");
}

/// Issue 49: `--fail-fast` ends the wait as soon as the awaited version has failed on a
/// cluster in scope, long before the timeout; a cluster failing on the old version does not
/// count (it has not tried the new one).
#[tokio::test(flavor = "multi_thread")]
async fn fail_fast_ends_the_wait_when_the_version_fails_somewhere() {
    let store = fresh_store().await;
    seed_rollout_in_progress(&store).await;
    let url = serve(store.clone()).await;
    let wait = |version: &'static str, timeout: &'static str| {
        let url = url.clone();
        tokio::task::spawn_blocking(move || {
            fleetglass_wait(&[
                "--url",
                &url,
                "--domain",
                "gateway",
                "--version",
                version,
                "--timeout",
                timeout,
                "--fail-fast",
            ])
        })
    };
    // prod-1 fails on 1.4.2, not on 1.5.0: fail-fast does not fire; the timeout ends it.
    let (code, out, _) = wait("1.5.0", "1s").await.unwrap();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("is not fully healthy on every cluster"),
        "{out}"
    );
    // prod-1 applied 1.5.0 and failed: the wait ends at once, well inside its 10 minutes.
    seed_rollups(
        &store,
        &[],
        "prod-1",
        &[cause_row(CAUSE, "RBAC Forbidden", &[CAUSE])],
        &[domain_row("gateway", "prod-1", "1.5.0", false, &[CAUSE])],
    )
    .await;
    let (code, out, _) = wait("1.5.0", "10m").await.unwrap();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("gateway 1.5.0 failed on prod-1 (--fail-fast"),
        "{out}"
    );
    assert!(
        out.contains(&format!("blocked by {CAUSE} (failed)")),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_wait_command_exits_0_1_or_2() {
    let store = fresh_store().await;
    seed_rollout_in_progress(&store).await;
    let url = serve(store.clone()).await;
    let run = |args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            fleetglass_wait(&args)
        })
    };
    let args = |domain: &str, version: &str, timeout: &str| {
        [
            "--url",
            &url,
            "--domain",
            domain,
            "--version",
            version,
            "--timeout",
            timeout,
        ]
        .map(String::from)
        .to_vec()
    };

    let (code, out, _) = run(args("gateway", "1.5.0", "1s")).await.unwrap();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("prod-1: failed at 1.4.2"), "{out}");
    assert!(
        out.contains(&format!("blocked by {CAUSE} (failed): RBAC Forbidden")),
        "{out}"
    );

    let (code, _, err) = run(args("nope", "1.5.0", "1s")).await.unwrap();
    assert_eq!(code, 2);
    assert!(
        err.contains("404") && err.contains("no domain named"),
        "{err}"
    );

    let (code, _, err) = run(args("gateway", "1.5.0", "soon")).await.unwrap();
    assert_eq!(code, 2);
    assert!(err.contains("--timeout"), "{err}");

    let (code, _, err) = tokio::task::spawn_blocking(|| {
        fleetglass_wait(&[
            "--url",
            "http://127.0.0.1:9",
            "--domain",
            "gateway",
            "--version",
            "1",
            "--timeout",
            "1s",
        ])
    })
    .await
    .unwrap();
    assert_eq!(code, 2);
    assert!(
        err.starts_with("fleetglass wait: cannot reach http://127.0.0.1:9"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");

    prod_becomes_healthy(&store).await;
    let (code, out, err) = run(args("gateway", "1.5.0", "30s")).await.unwrap();
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("gateway 1.5.0 is fully healthy on every cluster"),
        "{out}"
    );
}

/// A server behind a flaky ingress: the first requests are answered 503 (busy, Retry-After),
/// 502 (an HTML error page) and 504, then the real gate answers. Records each request's
/// `timeout`.
async fn serve_flaky(store: Store) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use axum::extract::Request;
    use axum::response::{IntoResponse, Response};
    use std::sync::{Arc, Mutex};
    let real = app(store, &config());
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let flaky = axum::Router::new().fallback(move |request: Request| {
        let real = real.clone();
        let log = log.clone();
        async move {
            let query = request.uri().query().unwrap_or_default().to_string();
            let n = {
                let mut log = log.lock().unwrap();
                log.push(query);
                log.len()
            };
            let answer: Response = match n {
                1 => (
                    axum::http::StatusCode::SERVICE_UNAVAILABLE,
                    [("retry-after", "0")],
                    axum::Json(serde_json::json!({"error": "1000 waits are already in progress"})),
                )
                    .into_response(),
                2 => (
                    axum::http::StatusCode::BAD_GATEWAY,
                    axum::response::Html("<html><body>502 Bad Gateway</body></html>"),
                )
                    .into_response(),
                3 => axum::http::StatusCode::GATEWAY_TIMEOUT.into_response(),
                _ => tower::ServiceExt::oneshot(real, request).await.unwrap(),
            };
            answer
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, flaky).await.unwrap() });
    (format!("http://{address}"), seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_wait_command_rides_out_gateway_errors_in_short_server_waits() {
    let store = fresh_store().await;
    seed_rollout_in_progress(&store).await;
    prod_becomes_healthy(&store).await;
    let (url, seen) = serve_flaky(store).await;
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        fleetglass_wait(&[
            "--url",
            &url,
            "--domain",
            "gateway",
            "--version",
            "1.5.0",
            "--timeout",
            "15m",
        ])
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}{err}");
    for status in ["503", "502", "504"] {
        assert!(
            out.contains(status) && out.contains("asking again"),
            "{status}: {out}"
        );
    }
    assert!(
        out.contains("gateway 1.5.0 is fully healthy on every cluster"),
        "{out}"
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 4, "three failures, then the answer: {seen:?}");
    for query in &seen {
        let seconds: u64 = query
            .split('&')
            .find_map(|p| p.strip_prefix("timeout="))
            .and_then(|t| t.strip_suffix('s'))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("a timeout in seconds: {query}"));
        assert!(
            seconds <= 30,
            "each server wait is short, not the whole 15m: {query}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_wait_command_gates_one_ring_reports_progress_and_prints_json() {
    let store = fresh_store().await;
    seed_rollout_in_progress(&store).await;
    let url = serve(store.clone()).await;
    let run = |extra: &[&str]| {
        let mut args: Vec<String> = ["--url", &url, "--domain", "gateway", "--timeout", "1s"]
            .map(String::from)
            .to_vec();
        args.extend(extra.iter().map(|a| a.to_string()));
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            fleetglass_wait(&args)
        })
    };

    // dev is done, prod is not: the dev ring passes on its own.
    let (code, out, err) = run(&["--version", "1.5.0", "--label", "ring=dev", "-o", "json"])
        .await
        .unwrap();
    assert_eq!(code, 0, "{out}{err}");
    let report: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(report["healthy"], true);
    let clusters: Vec<&str> = report["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cluster"].as_str().unwrap())
        .collect();
    assert_eq!(clusters, ["dev-1"], "only the ring asked for");
    assert!(
        err.contains("dev-1: healthy at 1.5.0"),
        "progress goes to stderr with -o json: {err}"
    );

    let (code, out, _) = run(&["--version", "1.5.0", "-o", "json"]).await.unwrap();
    assert_eq!(code, 1);
    let report: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(report["healthy"], false);
    assert_eq!(report["clusters"].as_array().unwrap().len(), 2);

    // Progress in text: each cluster's state, and that nobody has the version yet.
    let (code, out, _) = run(&["--version", "9.9.9"]).await.unwrap();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("no cluster reports gateway 9.9.9 yet"),
        "{out}"
    );
    assert!(
        out.contains("prod-1: failed at 1.4.2, waiting for 9.9.9")
            && out.contains("dev-1: healthy at 1.5.0, waiting for 9.9.9"),
        "each cluster's version and what it waits for: {out}"
    );
    assert!(
        out.contains("gateway 9.9.9 is not fully healthy on every cluster after"),
        "{out}"
    );
    let (code, out, _) = run(&["--version", "1.5.0", "--label", "ring=dev"])
        .await
        .unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("gateway 1.5.0 is fully healthy on every cluster with ring=dev"),
        "the summary names its scope: {out}"
    );

    let (code, _, err) = run(&["--version", "1.5.0", "--label", "prod"])
        .await
        .unwrap();
    assert_eq!(code, 2);
    assert!(err.contains("key=value"), "{err}");
}

/// The first lines come from the state now, not after the server's first wait (up to 25 s).
#[tokio::test(flavor = "multi_thread")]
async fn the_wait_command_prints_where_things_stand_at_once() {
    let store = fresh_store().await;
    seed_rollout_in_progress(&store).await;
    let url = serve(store.clone()).await;
    let first_line = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
            .args([
                "wait",
                "--url",
                &url,
                "--domain",
                "gateway",
                "--version",
                "9.9.9",
            ])
            .args(["--timeout", "10m"])
            .env_remove("FLEETGLASS_TOKEN")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let took = started.elapsed();
        child.kill().unwrap();
        child.wait().unwrap();
        (line, took)
    })
    .await
    .unwrap();
    let (line, took) = first_line;
    assert!(
        line.contains("no cluster reports gateway 9.9.9 yet"),
        "{line}"
    );
    assert!(
        took < std::time::Duration::from_secs(20),
        "the first line came after {took:?}: after the server's wait, not at once"
    );
}

/// Issue 43 (e): a cell shows the version applied and the one its source offers as pending;
/// `wait` passes for a version only where it is applied and fully healthy.
#[tokio::test(flavor = "multi_thread")]
async fn cells_pages_and_the_gate_show_what_is_applied_and_what_is_pending() {
    let store = fresh_store().await;
    let now = Utc::now();
    let clusters = [
        cluster_row("dev-1", "dev", now),
        cluster_row("prod-1", "prod", now),
    ];
    seed_rollups(
        &store,
        &clusters,
        "dev-1",
        &[],
        &[domain_row("gateway", "dev-1", "1.5.0", true, &[])],
    )
    .await;
    // prod-1 runs 1.4.2; 1.5.0 is offered and held up by the RBAC problem.
    let mut pending = domain_row("gateway", "prod-1", "1.4.2", false, &[CAUSE]);
    pending.offered = Some("1.5.0".into());
    seed_rollups(
        &store,
        &[],
        "prod-1",
        &[cause_row(CAUSE, "RBAC Forbidden", &[CAUSE])],
        &[pending],
    )
    .await;
    let app = app(store.clone(), &config());

    let (_, fleet) = get_json(&app, "/api/v1/fleet").await;
    let prod = fleet["domains"][0]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cluster"] == "prod-1")
        .unwrap()
        .clone();
    assert_eq!(
        (prod["version"].as_str(), prod["offered"].as_str()),
        (Some("1.4.2"), Some("1.5.0"))
    );
    let (_, page) = common::web::get(&app, "/").await;
    assert!(
        page.contains("1.4.2 → 1.5.0"),
        "the prod cell says what runs and what waits"
    );
    let (_, page) = common::web::get(&app, "/domains/gateway").await;
    assert!(page.contains("1.4.2 → 1.5.0"), "the domain page too");

    for version in ["1.5.0", "1.4.2"] {
        let (_, verdict) = get_json(
            &app,
            &format!("/api/v1/domains/gateway/wait?version={version}&timeout=0s"),
        )
        .await;
        assert_eq!(verdict["healthy"], false, "{version}: {verdict}");
        let prod = verdict["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["cluster"] == "prod-1")
            .unwrap();
        assert_eq!(prod["at_version"], false, "{verdict}");
        assert_eq!(prod["version"], "1.4.2", "{verdict}");
        assert_eq!(prod["offered"], "1.5.0", "{verdict}");
    }
}
