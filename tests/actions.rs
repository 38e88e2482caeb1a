//! Safe actions against a real API server: reconcile now, suspend and resume patch the object
//! as the flux CLI does, only for those `web.actions.allowed` names, only with the form's CSRF
//! token, each in the audit trail; the page shows the request until the controller's status
//! says it was handled. Without `patch` (the reader role as it is by default) the refusal is
//! named with how to grant it.

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::collector::{config, flux_pair, objects_in, ready_status, set_status};
use common::eventually;
use fleetglass::app::{Collector, Source};
use fleetglass::sources::actions::Actuator;
use fleetglass::store::Store;
use fleetglass::web::{AppState, Site, router};
use http_body_util::BodyExt;
use std::path::Path;
use std::time::Duration;
use tower::ServiceExt;

const DEADLINE: Duration = Duration::from_secs(60);
const HOST: &str = "localhost";

fn sha256_hex(token: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// fleetglass in tokens mode with actions on for the token `ops` (not `viewer`), acting
/// through `kubeconfig` on `cluster`.
fn acting_app(store: Store, kubeconfig: &Path, cluster: &str) -> axum::Router {
    let mut config = config(kubeconfig, &[cluster]);
    let web = format!(
        "auth: {{mode: tokens, tokens: [{{name: ops, sha256: {}}}, {{name: viewer, sha256: {}}}]}}\n\
         actions: {{enabled: true, allowed: {{tokens: [ops]}}}}",
        sha256_hex("ops-token"),
        sha256_hex("viewer-token"),
    );
    config.web = fleetglass::yaml::from_str(&web).unwrap();
    assert_eq!(config.web.problem(None), None);
    let state = AppState::new(store, Site::from_config(&config))
        .with_actions(Actuator::new(config.clusters.clone()));
    router(state)
}

async fn call(
    app: &axum::Router,
    method: &str,
    uri: &str,
    token: &str,
    cookie: &str,
    body: String,
) -> (StatusCode, Vec<String>, String) {
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", HOST)
        .header("origin", format!("http://{HOST}"))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/x-www-form-urlencoded");
    if !cookie.is_empty() {
        request = request.header("cookie", cookie);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let cookies = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_string())
        .collect();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, cookies, String::from_utf8_lossy(&body).into_owned())
}

/// Confirms and carries out `action` as `token`: the POST's status and page.
async fn act(app: &axum::Router, page: &str, token: &str) -> (StatusCode, String) {
    let (status, cookies, confirm) = call(app, "GET", page, token, "", String::new()).await;
    assert_eq!(status, StatusCode::OK, "{confirm}");
    let csrf = confirm
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the confirmation form's token");
    let (status, _, page) = call(
        app,
        "POST",
        page,
        token,
        &cookies.join("; "),
        format!("csrf={csrf}"),
    )
    .await;
    (status, page)
}

fn kubectl_get(bed: &common::testbed::Testbed, cluster: &str, ns: &str, path: &str) -> String {
    bed.kubectl(
        cluster,
        &[
            "get",
            "kustomization/app",
            "-n",
            ns,
            "-o",
            &format!("jsonpath={path}"),
        ],
    )
}

async fn audit(app: &axum::Router) -> Vec<(String, String, String)> {
    let (_, _, body) = call(app, "GET", "/api/v1/audit", "ops-token", "", String::new()).await;
    common::web::audit_events(&serde_json::from_str(&body).unwrap())
}

/// A ready Kustomization `app` (with its GitRepository) in a new namespace on the bed's first
/// cluster, collected into a fresh store: the namespace, the store and the collector.
async fn collected_kustomization(
    bed: &common::testbed::Testbed,
    prefix: &str,
) -> (String, Store, Collector) {
    let cluster = bed.clusters[0].as_str();
    let ns = common::collector::unique_namespace(prefix);
    common::collector::apply(bed, cluster, &flux_pair(&ns));
    set_status(bed, cluster, "kustomization/app", &ns, &ready_status(true));
    let store = common::fresh_store().await;
    let collector = Collector::start(
        &config(&bed.kubeconfig, &[cluster]),
        store.clone(),
        Source::Kube,
        format!("actions-{prefix}"),
    );
    eventually("the Kustomization stored", DEADLINE, || async {
        let objects = objects_in(&store, cluster, &ns).await;
        let kinds = objects.iter().map(|o| o.verdict.kind.as_str());
        kinds.clone().any(|k| k == "Kustomization").then_some(())
    })
    .await;
    (ns, store, collector)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_suspend_and_resume_patch_the_object_and_are_audited() {
    let bed = common::collector::bed();
    let cluster = bed.clusters[0].as_str();
    let (ns, store, _collector) = collected_kustomization(&bed, "fga").await;
    let app = acting_app(store.clone(), &bed.kubeconfig, cluster);
    let object = format!("/objects/{cluster}/Kustomization/{ns}/app");
    let reconcile = format!("/actions/{cluster}/Kustomization/{ns}/app/reconcile");

    // Someone not allowed sees no actions and is refused before anything is looked up.
    let (_, _, page) = call(&app, "GET", &object, "viewer-token", "", String::new()).await;
    assert!(
        !page.contains("/actions/"),
        "no actions offered to a viewer"
    );
    let (status, _, _) = call(&app, "GET", &reconcile, "viewer-token", "", String::new()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _, _) = call(
        &app,
        "POST",
        &reconcile,
        "viewer-token",
        "",
        "csrf=x".into(),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // Allowed, but without the form's token: refused, nothing patched.
    let (status, _, _) = call(
        &app,
        "POST",
        &reconcile,
        "ops-token",
        "",
        "csrf=forged".into(),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let annotation = "{.metadata.annotations.reconcile\\.fluxcd\\.io/requestedAt}";
    assert_eq!(kubectl_get(&bed, cluster, &ns, annotation), "");

    let (_, _, page) = call(&app, "GET", &object, "ops-token", "", String::new()).await;
    assert!(
        page.contains(&format!("href=\"{reconcile}\"")),
        "the page offers reconcile"
    );
    let (status, page) = act(&app, &reconcile, "ops-token").await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{page}");
    let requested = kubectl_get(&bed, cluster, &ns, annotation);
    assert!(
        requested.starts_with("20"),
        "the annotation is set: {requested:?}"
    );
    // The collector sees the request; until the controller handles it the page says so.
    eventually("the request on the object page", DEADLINE, || async {
        let (_, _, page) = call(&app, "GET", &object, "ops-token", "", String::new()).await;
        page.contains(&requested).then_some(())?;
        page.contains("not handled yet").then_some(())
    })
    .await;
    // The controller's answer (the bed runs none: written as kustomize-controller writes it).
    let mut status: serde_json::Value = serde_json::from_str(&ready_status(true)).unwrap();
    status["lastHandledReconcileAt"] = requested.clone().into();
    set_status(&bed, cluster, "kustomization/app", &ns, &status.to_string());
    eventually("the request handled", DEADLINE, || async {
        let (_, _, page) = call(&app, "GET", &object, "ops-token", "", String::new()).await;
        page.contains("handled by the controller").then_some(())
    })
    .await;

    let suspend = reconcile.replace("/reconcile", "/suspend");
    assert_eq!(
        act(&app, &suspend, "ops-token").await.0,
        StatusCode::SEE_OTHER
    );
    assert_eq!(kubectl_get(&bed, cluster, &ns, "{.spec.suspend}"), "true");
    eventually("suspended, and resume offered", DEADLINE, || async {
        let (_, _, page) = call(&app, "GET", &object, "ops-token", "", String::new()).await;
        page.contains("/app/resume\"").then_some(())
    })
    .await;
    let resume = reconcile.replace("/reconcile", "/resume");
    assert_eq!(
        act(&app, &resume, "ops-token").await.0,
        StatusCode::SEE_OTHER
    );
    assert_eq!(kubectl_get(&bed, cluster, &ns, "{.spec.suspend}"), "false");

    let trail = audit(&app).await;
    let acted: Vec<&str> = trail
        .iter()
        .filter(|(actor, _, _)| actor == "token ops")
        .map(|(_, action, _)| action.as_str())
        .collect();
    assert_eq!(
        acted,
        ["resume", "suspend", "reconcile"],
        "newest first: {trail:?}"
    );
    let reconciled = trail
        .iter()
        .find(|(_, action, _)| action == "reconcile")
        .unwrap();
    assert_eq!(reconciled.2, format!("requested at {requested}"));

    // With the reader role as it is by default (no patch): refused, named, audited.
    let reader = acting_app(store.clone(), &bed.readonly_kubeconfig, cluster);
    let (status, page) = act(&reader, &reconcile, "ops-token").await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(page.contains("patch is forbidden"), "{page}");
    assert!(
        page.contains("actions: true"),
        "says how to grant it: {page}"
    );
    let trail = audit(&reader).await;
    assert!(
        trail[0]
            .2
            .starts_with("failed: fleetglass may not change Kustomization"),
        "{trail:?}"
    );
}

/// In a real chromium, signed in through the real OpenID provider: the object page of a
/// Kustomization on a real API server offers reconcile; confirming it patches the object,
/// the page shows the request once the collector has seen it, and the audit trail names her.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_reconciles_from_the_object_page_in_a_real_browser() {
    use crate::browser::{browser, start_chromedriver, wait_until};
    use crate::security_sso::{ALICE, sign_in_at_the_form};
    use common::oidc_provider::{CLIENT_ID, CLIENT_SECRET, OidcProvider};
    use fantoccini::Locator;
    let bed = common::collector::bed();
    let cluster = bed.clusters[0].as_str();
    let (ns, store, _collector) = collected_kustomization(&bed, "fgb").await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let provider = OidcProvider::start(&[ALICE], &format!("{base}/auth/callback")).await;
    let mut settings = config(&bed.kubeconfig, &[cluster]);
    settings.public_url = Some(base.clone());
    settings.web = fleetglass::yaml::from_str(&format!(
        "auth: {{mode: oidc, tokens: [{{name: ci, sha256: {}}}], oidc: {{issuer: '{}', client_id: {CLIENT_ID}}}}}
actions: {{enabled: true, allowed: {{users: [alice]}}}}
scopes:
  admins: {{tokens: [ci]}}
  teams: [{{name: apps, members: {{users: [alice]}}, namespaces: ['{ns}']}}]",
        sha256_hex("ci-token"),
        provider.issuer,
    ))
    .unwrap();
    settings.web.auth.oidc.as_mut().unwrap().client_secret = Some(CLIENT_SECRET.into());
    assert_eq!(settings.web.problem(settings.public_url.as_deref()), None);
    let state = AppState::new(store.clone(), Site::from_config(&settings))
        .with_oidc()
        .unwrap()
        .with_actions(Actuator::new(settings.clusters.clone()));
    let app = router(state.clone());
    let served = router(state).into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, served).await.unwrap() });
    let (_driver, webdriver) = start_chromedriver().await;
    let profile = std::env::temp_dir().join(format!("fleetglass-act-{}", std::process::id()));
    let client = browser(&webdriver, &profile).await;
    let object = format!("{base}/objects/{cluster}/Kustomization/{ns}/app");
    client.goto(&object).await.unwrap();
    sign_in_at_the_form(&client).await;
    assert_eq!(client.current_url().await.unwrap().as_str(), object);
    let reconcile = client
        .find(Locator::Css("p.actions a[href$='/reconcile']"))
        .await
        .expect("the page offers reconcile");
    reconcile.click().await.unwrap();
    let confirm = client.find(Locator::Css("button#confirm")).await.unwrap();
    confirm.click().await.unwrap();
    wait_until("the request on the object page", || async {
        client.goto(&object).await.unwrap();
        client
            .find(Locator::Css("p#reconcile-request"))
            .await
            .is_ok()
    })
    .await;
    let annotation = "{.metadata.annotations.reconcile\\.fluxcd\\.io/requestedAt}";
    let requested = kubectl_get(&bed, cluster, &ns, annotation);
    let shown = client
        .find(Locator::Css("p#reconcile-request"))
        .await
        .unwrap();
    let shown = shown.text().await.unwrap();
    assert!(
        shown.contains(&requested) && shown.contains("not handled yet"),
        "{shown}"
    );
    let (_, _, body) = call(&app, "GET", "/api/v1/audit", "ci-token", "", String::new()).await;
    let trail: serde_json::Value = serde_json::from_str(&body).unwrap();
    let newest = &trail["events"][0];
    assert_eq!(
        (newest["actor"].as_str(), newest["action"].as_str()),
        (Some("alice"), Some("reconcile"))
    );
    assert_eq!(newest["detail"], format!("requested at {requested}"));
    client.close().await.unwrap();
    let _ = std::fs::remove_dir_all(&profile);
}
