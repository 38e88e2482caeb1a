//! Seed 000, incident 2, end to end through the runner, the store and the web: before the
//! gateway upgrade the impact query lists NetOp as a consumer of the CRD the gateway provides;
//! after the upgrade removed the CRD, NetOp is failed at once, naming the CRD and its former
//! provider, and `fleetglass impact` exits 1 / 0 / 2 as CI needs.

use crate::common;

use chrono::Utc;
use common::web::{fresh_store, get, get_json};
use fleetglass::ingest::{Runner, RunnerSettings};
use fleetglass::model::parse_object;
use fleetglass::sources::SourceEvent;
use serde_json::{Value, json};
use std::process::Command;

const CLUSTER: &str = "dev-1";
const CRD: &str = "ratelimitconfigs.ratelimit.solo.io";

fn ready() -> Value {
    json!([{"type": "Ready", "status": "True", "reason": "UpgradeSucceeded", "message": "Helm upgrade succeeded",
            "lastTransitionTime": "2026-11-28T10:00:00Z", "observedGeneration": 1}])
}

fn release(namespace: &str, name: &str, inventory: &[String]) -> Value {
    json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
           "metadata": {"name": name, "namespace": namespace, "generation": 1},
           "spec": {"interval": "30m", "chartRef": {"kind": "OCIRepository", "name": name}},
           "status": {"observedGeneration": 1, "conditions": ready(),
                      "inventory": {"entries": inventory.iter().map(|id| json!({"id": id, "v": "v1"})).collect::<Vec<_>>()}}})
}

fn oci(namespace: &str, name: &str) -> Value {
    json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository",
           "metadata": {"name": name, "namespace": namespace, "generation": 1},
           "spec": {"interval": "5m", "url": "oci://registry/x"},
           "status": {"observedGeneration": 1, "artifact": {"revision": "1.0.0@sha256:abc"},
                      "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "stored",
                                      "lastTransitionTime": "2026-11-28T09:00:00Z", "observedGeneration": 1}]}})
}

fn crd(name: &str, group: &str, kind: &str) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": name}, "spec": {"group": group, "names": {"kind": kind}},
           "status": {"conditions": [{"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                                      "message": "ok", "lastTransitionTime": "2026-11-01T00:00:00Z"}]}})
}

fn gateway(with_crd: bool) -> Value {
    let mut inventory = vec!["gateway-system_gateway_apps_Deployment".to_string()];
    if with_crd {
        inventory.push(format!(
            "_{CRD}_apiextensions.k8s.io_CustomResourceDefinition"
        ));
    }
    release("gateway-system", "gateway", &inventory)
}

fn apply(runner: &mut Runner, value: &Value) {
    runner.apply(SourceEvent::Apply(Box::new(
        parse_object(CLUSTER, value).unwrap(),
    )));
}

fn fleetglass_impact(url: &str, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .args(["impact", "--url", url])
        .args(args)
        .env_remove("FLEETGLASS_URL")
        .env_remove("FLEETGLASS_TOKEN")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_removed_crd_is_caught_on_day_0_and_the_impact_query_warned_before() {
    let store = fresh_store().await;
    let config = fleetglass::config::from_yaml_str(&format!(
        "clusters: [{{name: {CLUSTER}, labels: {{ring: dev}}}}]"
    ))
    .unwrap();
    let (mut runner, _latest) = Runner::new(RunnerSettings::from_config(&config), store.clone());
    for value in [
        gateway(true),
        oci("gateway-system", "gateway"),
        oci("networking", "netop"),
        release(
            "networking",
            "netop",
            &[
                "networking_netop_apps_Deployment".into(),
                "networking_limits_ratelimit.solo.io_RateLimitConfig".into(),
            ],
        ),
        crd(CRD, "ratelimit.solo.io", "RateLimitConfig"),
        crd(
            "helmreleases.helm.toolkit.fluxcd.io",
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
        ),
    ] {
        apply(&mut runner, &value);
    }
    runner.apply(SourceEvent::ClusterAlive {
        cluster: CLUSTER.into(),
        at: Utc::now(),
    });
    runner.run_round(Utc::now()).await;
    let app = common::web::app(store.clone(), &config);

    // Before: the gateway provides the CRD NetOp consumes.
    let uri = format!(
        "/api/v1/impact?cluster={CLUSTER}&kind=HelmRelease&namespace=gateway-system&name=gateway"
    );
    let (status, impact) = get_json(&app, &uri).await;
    assert_eq!(status, 200, "{impact}");
    assert_eq!(impact["consumers_total"], 1, "{impact}");
    let provided = &impact["clusters"][0]["provides"][0];
    assert!(
        provided["object"].as_str().unwrap().ends_with(CRD),
        "{impact}"
    );
    assert_eq!(
        provided["consumers"][0]["id"],
        "dev-1/HelmRelease/networking/netop"
    );
    let (status, page) = get(&app, "/impact/dev-1/HelmRelease/gateway-system/gateway").await;
    assert_eq!(status, 200);
    assert!(
        page.contains("networking/netop") && page.contains(CRD),
        "the page names consumer and CRD"
    );
    let (status, _) = get_json(&app, "/api/v1/impact?kind=HelmRelease&name=gateway").await;
    assert_eq!(status, 400, "cluster or domain is required");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let served = common::web::app(store.clone(), &config);
    tokio::spawn(async move { axum::serve(listener, served).await.unwrap() });
    let args = [
        "--cluster",
        CLUSTER,
        "--kind",
        "HelmRelease",
        "--namespace",
        "gateway-system",
        "--name",
        "gateway",
    ];
    let (code, text) = tokio::task::spawn_blocking({
        let url = url.clone();
        move || fleetglass_impact(&url, &args)
    })
    .await
    .unwrap();
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("dev-1/HelmRelease/networking/netop"),
        "{text}"
    );
    // `fleetglass impact | head`: the reader is gone before anything is printed.
    let closed = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            Command::new(env!("CARGO_BIN_EXE_fleetglass"))
                .args(["impact", "--url", &url])
                .args(args)
                .stdout(writer)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&closed.stderr);
    assert_eq!(
        closed.status.code(),
        Some(0),
        "a closed pipe ends it quietly: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let unused = [
        "--cluster",
        CLUSTER,
        "--kind",
        "HelmRelease",
        "--namespace",
        "networking",
        "--name",
        "netop",
    ];
    let (code, text) = tokio::task::spawn_blocking({
        let url = url.clone();
        move || fleetglass_impact(&url, &unused)
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "nothing consumes what netop provides: {text}");
    let (code, _) = tokio::task::spawn_blocking(|| {
        fleetglass_impact(
            "http://127.0.0.1:9",
            &["--cluster", "x", "--kind", "HelmRelease", "--name", "y"],
        )
    })
    .await
    .unwrap();
    assert_eq!(code, 2);

    // The upgrade drops the subchart: the CRD and its inventory entry are gone.
    apply(&mut runner, &gateway(false));
    runner.apply(SourceEvent::Delete(
        format!("{CLUSTER}/CustomResourceDefinition//{CRD}")
            .parse::<fleetglass::model::ObjectId>()
            .unwrap(),
    ));
    runner.run_round(Utc::now()).await;
    let (_, netop) = get_json(&app, "/api/v1/objects/dev-1/HelmRelease/networking/netop").await;
    let object = if netop.get("object").is_some() {
        &netop["object"]
    } else {
        &netop
    };
    assert_eq!(object["state"], "failed", "{netop}");
    let reason = object["reason"].as_str().unwrap();
    assert!(
        reason.contains(CRD) && reason.contains("dev-1/HelmRelease/gateway-system/gateway"),
        "{reason}"
    );
    let (_, problems) = get_json(&app, "/api/v1/problems").await;
    assert!(
        problems
            .to_string()
            .contains("dev-1/HelmRelease/networking/netop"),
        "a root cause at once: {problems}"
    );
}
