//! The pages against the demo fleet on real Postgres, and who may see them: every page
//! renders its answer in words and icons, bad input is a 400 page, unknown names 404 pages,
//! and tokens / proxy authentication let in only who they should.

use crate::common;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use common::web::{app, demo_app, demo_config, fresh_store, get, get_json, send};
use sha2::{Digest, Sha256};
use std::net::SocketAddr;

/// Pages keep the CSP honest: no inline scripts, no style attributes, no hx-on.
fn assert_no_inline_code(uri: &str, html: &str) {
    assert!(!html.contains("style="), "{uri} has a style attribute");
    assert!(!html.contains("hx-on"), "{uri} uses hx-on");
    for script in html.split("<script").skip(1) {
        assert!(
            script.trim_start().starts_with("src="),
            "{uri} has an inline script"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_page_renders_its_answer() {
    let (app, _store) = demo_app().await;
    let pages = [
        (
            "/",
            vec![
                "problems affecting",
                "see problems →",
                "/domains/gateway?label=ring%3Dprod",
                "no authentication configured",
            ],
        ),
        (
            "/problems",
            vec![
                "root causes affecting",
                "</svg> failed",
                "tofu-controller",
                "→",
            ],
        ),
        ("/domains/gateway", vec!["fully healthy on", "prod-eu-1"]),
        (
            "/domains/gateway?label=ring%3Ddev",
            vec!["only clusters with", "dev-1"],
        ),
        (
            "/clusters/prod-eu-1",
            vec![
                "controllers",
                "kustomize-controller",
                "dependsOn tree",
                "data fresh",
            ],
        ),
        (
            "/objects?state=failed",
            vec!["match", "</svg> failed", "selected"],
        ),
        (
            "/objects/prod-eu-1/Kustomization/flux-system/infra-network",
            vec![
                "conditions",
                "observedGeneration",
                "reconciled by",
                "kustomize-controller",
                "state timeline",
                "health check",
            ],
        ),
        (
            "/objects/prod-eu-1/Namespace/_/tenants",
            vec!["Namespace tenants"],
        ),
    ];
    for (uri, needles) in pages.into_iter().chain(index_pages()) {
        let (status, html) = get(&app, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        for needle in needles {
            assert!(html.contains(needle), "{uri} should contain {needle:?}");
        }
        assert_no_inline_code(uri, &html);
    }
    let (_, fragment) = get(&app, "/fragments/problems").await;
    assert!(fragment.contains("data-generated-at") && !fragment.contains("<html"));
}

/// Issue 47: the cluster and domain indexes, one click from every page.
fn index_pages() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        (
            "/",
            vec![
                "<h1>fleet</h1>",
                r#"<a href="/clusters">clusters</a>"#,
                r#"<a href="/domains">domains</a>"#,
                // Ring headers link their clusters.
                r#"<a href="/clusters?group=prod">prod</a>"#,
                r#"<a href="/clusters/prod-eu-1">prod-eu-1</a>"#,
            ],
        ),
        (
            "/clusters",
            vec![
                "<h1>clusters</h1>",
                r#"<a href="/clusters/prod-eu-1">prod-eu-1</a>"#,
                r#"<a href="/clusters/dev-1">dev-1</a>"#,
                "fresh",
                // The Flux release from its label, each controller's from its image tag.
                "<code>v2.9.0</code>",
                "source-controller <code>v1.9.0</code>",
                "helm-controller <code>v1.6.0</code>",
                "<code>ring=prod</code>",
                "/objects?cluster=",
            ],
        ),
        (
            "/clusters?group=dev",
            vec!["<h1>clusters in ring dev</h1>", "dev-1", "every cluster"],
        ),
        (
            "/domains",
            vec![
                "<h1>domains</h1>",
                r#"<a href="/domains/gateway">gateway</a>"#,
                "<strong>team-edge</strong>",
                "runbooks.example.com/gateway",
                // tenants has no owner in the demo config, and says so.
                "no owner configured",
                "clusters</td>",
            ],
        ),
    ]
}

/// Issue 47: "root cause: …" on an object's page links to the cause itself, and to its chain.
#[tokio::test(flavor = "multi_thread")]
async fn an_objects_root_cause_links_to_the_cause_itself() {
    let (app, _store) = demo_app().await;
    let (_, blocked) = get_json(&app, "/api/v1/objects?state=blocked&limit=1").await;
    let object = &blocked["items"][0];
    let cause = object["root_causes"][0]
        .as_str()
        .expect("a blocked object names its cause");
    let (cluster, kind, namespace, name) = (
        object["cluster"].as_str().unwrap(),
        object["kind"].as_str().unwrap(),
        object["namespace"].as_str().unwrap(),
        object["name"].as_str().unwrap(),
    );
    let namespace = if namespace.is_empty() { "_" } else { namespace };
    let (status, html) = get(
        &app,
        &format!("/objects/{cluster}/{kind}/{namespace}/{name}"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let parts: Vec<&str> = cause.splitn(4, '/').collect();
    let own_page = format!(
        r#"class="root" href="/objects/{}/{}/{}/{}""#,
        parts[0], parts[1], parts[2], parts[3]
    );
    assert!(html.contains(&own_page), "{own_page} in {html}");
    assert!(html.contains("/problems#p-"), "the chain on /problems");
}

/// Issue 47: the kubelet's Warning events about the demo's tofu-controller pods are the
/// evidence on the Deployment's page (its pods' events), under its incident and in the API.
#[tokio::test(flavor = "multi_thread")]
async fn warning_events_are_shown_as_evidence() {
    let (app, _store) = demo_app().await;
    let uri = "/objects/prod-eu-1/Deployment/flux-system/tofu-controller";
    let (status, html) = get(&app, uri).await;
    assert_eq!(status, StatusCode::OK);
    let section = html
        .split("<h2>warning events</h2>")
        .nth(1)
        .expect("a warning events section");
    let section = section.split("<h2>").next().unwrap();
    assert!(section.contains("<strong>Failed</strong>"), "{section}");
    assert!(section.contains("Failed to pull image"), "{section}");
    assert!(section.contains("kubelet"), "{section}");
    assert!(
        section.contains(">Pod flux-system/tofu-controller-"),
        "on its pod: {section}"
    );
    let (_, detail) = get_json(&app, &format!("/api/v1{uri}")).await;
    let warnings = detail["warnings"].as_array().expect("warnings in the API");
    assert!(
        warnings
            .iter()
            .any(|w| w["reason"] == "Failed" && w["reporter"] == "kubelet"),
        "{warnings:?}"
    );
    let (_, fleet) = get(&app, "/").await;
    let tofu = fleet
        .split(r#"<li class="incident""#)
        .find(|row| row.contains("tofu-controller"))
        .expect("the tofu-controller incident");
    assert!(
        tofu.contains("<small>event</small> <strong>Failed</strong>"),
        "{tofu}"
    );
    // A healthy object has none, and says so.
    let (_, healthy) = get(
        &app,
        "/objects/prod-eu-1/Kustomization/flux-system/flux-system",
    )
    .await;
    assert!(healthy.contains("none kept"), "{healthy}");
}

/// Issue 47: a crash-looping container's last words, asked for from its workload's page: the
/// previous run's lines (the demo's as netop wrote them), its password redacted; with logs
/// off, the fragment says how to turn them on.
#[tokio::test(flavor = "multi_thread")]
async fn a_crashing_containers_last_lines_are_read_on_demand_and_redacted() {
    use fleetglass::sources::logs::PodLogs;
    use fleetglass::web::{self, AppState, Site};
    let (off, store) = demo_app().await;
    let on = web::router(
        AppState::new(store, Site::from_config(&demo_config())).with_pod_logs(PodLogs::Demo),
    );
    let (status, page) = get(&on, "/objects/dev-1/Deployment/networking/netop").await;
    assert_eq!(status, StatusCode::OK);
    let button = page
        .split(r#"hx-get="/fragments/logs/"#)
        .nth(1)
        .expect("a button to show the crashing container's last lines");
    let fragment = format!("/fragments/logs/{}", button.split('"').next().unwrap());
    assert!(
        fragment.starts_with("/fragments/logs/dev-1/networking/netop-"),
        "{fragment}"
    );
    assert!(page.contains("container manager ("), "{page}");
    let (status, lines) = get(&on, &fragment).await;
    assert_eq!(status, StatusCode::OK);
    assert!(lines.contains(r#"<pre class="log">"#), "{lines}");
    assert!(lines.contains("no matches for kind"), "{lines}");
    assert!(lines.contains("postgres://manager:[redacted]@"), "{lines}");
    assert!(
        !lines.contains("hunter2"),
        "the password is never shown: {lines}"
    );
    let (_, refused) = get(&off, &fragment).await;
    assert!(
        refused.contains("reading container logs is off"),
        "{refused}"
    );
    // A healthy Deployment has no container that failed: nothing to ask for.
    let (_, healthy) = get(
        &on,
        "/objects/prod-eu-1/Deployment/flux-system/source-controller",
    )
    .await;
    assert!(!healthy.contains("last log lines"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ring_lists_its_own_clusters_only() {
    let (app, _store) = demo_app().await;
    let (status, html) = get(&app, "/clusters?group=dev").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"<a href="/clusters/dev-1">dev-1</a>"#));
    assert!(!html.contains("prod-eu-1"), "a prod cluster in ring dev");
    let (status, _) = get(&app, "/clusters?grup=dev").await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "a misspelt filter is refused"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_objects_list_pages_and_keeps_its_filters_in_links() {
    let (app, _store) = demo_app().await;
    let (status, html) = get(&app, "/objects?kind=Kustomization&limit=2").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("1–2 of"), "{html}");
    // askama escapes `&` in attributes as `&#38;`.
    let next = html.replace("&#38;", "&");
    assert!(
        next.contains("href=\"/objects?kind=Kustomization&limit=2&offset=2\""),
        "next keeps the filters: {html}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_and_unknown_names_are_pages_too() {
    let (app, _store) = demo_app().await;
    let (status, html) = get(&app, "/objects?state=green").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // askama escapes a quote as &#34;.
    assert!(html.contains("unknown state &#34;green&#34;"), "{html}");
    for uri in [
        "/domains/nope",
        "/clusters/nope",
        "/objects/dev-1/Kustomization/flux-system/nope",
        "/nope/no/such/page",
    ] {
        let (status, html) = get(&app, uri).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
        assert!(
            html.contains("nope") && html.contains("back to the fleet"),
            "{uri}: {html}"
        );
    }
}

/// Glyphs that need an emoji or symbol font; the pages draw their icons instead.
const FONT_GLYPHS: [char; 10] = ['●', '◐', '⏳', '⚠', '✖', '⛓', '▼', '❚', '✓', '⌛'];

/// Every state icon is an inline SVG: beside its state word (hidden from screen readers, the
/// word says it) or on its own with the state word as its label.
fn assert_icons_carry_their_word(uri: &str, html: &str) {
    for glyph in FONT_GLYPHS {
        assert!(!html.contains(glyph), "{uri} uses the glyph {glyph}");
    }
    let icons: Vec<&str> = html.split("<svg class=\"icon\"").skip(1).collect();
    for icon in &icons {
        let (tag, after) = icon.split_once("</svg>").expect("a closed svg");
        if tag.contains("aria-hidden=\"true\"") {
            let word = after.trim_start().split(['<', ' ']).next().unwrap_or("");
            assert!(!word.is_empty(), "{uri}: an icon without its word: {tag}");
        } else {
            let label = tag
                .split("aria-label=\"")
                .nth(1)
                .and_then(|l| l.split('"').next());
            let states = fleetglass::health::State::BY_SEVERITY.map(|s| s.as_str());
            assert!(
                label.is_some_and(|l| states.contains(&l)) && tag.contains("role=\"img\""),
                "{uri}: an icon alone must be labelled with its state: {tag}"
            );
        }
    }
}

/// The pages that show live state refresh themselves in place and say when their data is from.
const LIVE_PAGES: [&str; 7] = [
    "/domains/gateway",
    "/clusters/prod-eu-1",
    "/objects/prod-eu-1/Kustomization/flux-system/infra-network",
    "/objects?state=not-healthy",
    "/owner/prod-eu-1/Kustomization/flux-system/infra-network",
    "/alerts",
    "/problems",
];

#[tokio::test(flavor = "multi_thread")]
async fn icons_are_drawn_and_labelled_and_live_pages_refresh_in_place() {
    let (app, _store) = demo_app().await;
    for uri in LIVE_PAGES.iter().chain(&[
        "/",
        "/impact/prod-eu-1/Kustomization/flux-system/infra-network",
    ]) {
        let (status, html) = get(&app, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert_icons_carry_their_word(uri, &html);
        // The demo's alerts are not evaluated here: /alerts has no state to show.
        assert!(
            *uri == "/alerts" || html.contains("<svg class=\"icon\""),
            "{uri} shows state icons"
        );
    }
    for uri in LIVE_PAGES {
        let (_, html) = get(&app, uri).await;
        assert!(
            html.contains("hx-trigger=\"every 5s\"") && html.contains("as of"),
            "{uri} refreshes itself and says as of when"
        );
    }
    let (_, fleet) = get(&app, "/").await;
    assert!(
        fleet.contains("<small class=\"state healthy\">healthy</small>"),
        "a healthy cell names its state too"
    );
    assert!(
        fleet.contains("href=\"/alerts\""),
        "/alerts is in the navigation"
    );
    // A tab in the background says how many incidents there are, and its refresh keeps it so.
    let (_, api) = get(&app, "/api/v1/fleet").await;
    let api: serde_json::Value = serde_json::from_str(&api).unwrap();
    let incidents = api["incidents"].as_array().unwrap().len();
    assert!(incidents > 0, "the demo has incidents");
    let title = format!("<title>({incidents}) fleetglass · fleet</title>");
    assert!(fleet.contains(&title), "{title} in {fleet:.400}");
    let (_, refresh) = get(&app, "/fragments/fleet").await;
    assert!(refresh.trim_start().starts_with(&title), "{refresh:.200}");
}

#[tokio::test(flavor = "multi_thread")]
async fn error_pages_have_the_sites_frame() {
    let (app, _store) = demo_app().await;
    let (status, html) = get(&app, "/no/such/page").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    for needle in [
        "name=\"viewport\"",
        "<nav>",
        "href=\"/alerts\"",
        "/static/style.css",
    ] {
        assert!(html.contains(needle), "404 page has {needle}: {html}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_object_page_links_revisions_to_commits_and_gives_the_flux_commands() {
    let (app, _store) = demo_app().await;
    let (_, html) = get(
        &app,
        "/objects/prod-eu-1/Kustomization/flux-system/infra-network",
    )
    .await;
    assert!(
        html.contains("flux reconcile kustomization infra-network -n flux-system --context prod-eu-1 --with-source"),
        "{html}"
    );
    // The demo's networking stack comes from github.com/acme/networking-stack on main.
    assert!(
        html.contains("https://github.com/acme/networking-stack"),
        "source URL"
    );
    assert!(html.contains("branch main"), "source branch");
    let commit_link = html
        .split("href=\"https://github.com/acme/networking-stack/commit/")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a revision links to its commit");
    assert_eq!(commit_link.len(), 40, "a full sha: {commit_link}");
    assert!(commit_link.bytes().all(|b| b.is_ascii_hexdigit()));
    let (_, problems) = get(&app, "/problems").await;
    assert!(
        problems.contains("href=\"https://github.com/acme/gateway-stack/commit/"),
        "a root cause's revisions link to their commits"
    );
    assert!(
        html.contains("href=\"/owner/prod-eu-1/Kustomization/flux-system/infra-network\""),
        "what reconciles this is a page"
    );

    let (status, owner) = get(
        &app,
        "/owner/prod-eu-1/Kustomization/flux-system/infra-network",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        owner.contains("What reconciles") && owner.contains("kustomize-controller"),
        "{owner}"
    );
    let (_, deployment) = get(
        &app,
        "/objects/prod-eu-1/Deployment/flux-system/tofu-controller",
    )
    .await;
    assert!(
        deployment.contains("flux trace tofu-controller --kind Deployment --api-version apps/v1 -n flux-system --context prod-eu-1"),
        "an applied object is traced: {deployment}"
    );
}

fn sha256_hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_mode_needs_a_valid_bearer_token() {
    let store = fresh_store().await;
    let mut config = demo_config();
    config.web = fleetglass::yaml::from_str(&format!(
        "auth: {{mode: tokens, tokens: [{{name: ci, sha256: {}}}]}}",
        sha256_hex("s3cret-token")
    ))
    .unwrap();
    let app = app(store, &config);
    let with = |token: &str| {
        Request::get("/api/v1/fleet")
            .header("authorization", format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap()
    };
    let (status, body) = get(&app, "/api/v1/fleet").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body.contains("\"error\""), "{body}");
    assert_eq!(send(&app, with("wrong")).await.0, StatusCode::UNAUTHORIZED);
    let (status, body) = send(&app, with("s3cret-token")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        get(&app, "/").await.0,
        StatusCode::UNAUTHORIZED,
        "pages too"
    );
    // A person's browser gets the sign-in form in the site's frame, still as a 401.
    let browser = Request::get("/objects?state=failed")
        .header("accept", "text/html,application/xhtml+xml")
        .body(Body::empty())
        .unwrap();
    let (status, html) = send(&app, browser).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    for needle in [
        "name=\"viewport\"",
        "<nav>",
        "action=\"/sign-in\"",
        "value=\"/objects?state=failed\"",
    ] {
        assert!(html.contains(needle), "401 page has {needle}: {html}");
    }
    assert_eq!(
        get(&app, "/healthz").await.0,
        StatusCode::OK,
        "probes stay open"
    );
    assert_eq!(get(&app, "/static/style.css").await.0, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn proxy_mode_trusts_the_user_header_only_from_the_proxy() {
    let store = fresh_store().await;
    let mut config = demo_config();
    config.web = fleetglass::yaml::from_str(
        "auth: {mode: proxy, proxy: {user_header: X-Forwarded-User, trusted_proxies: [127.0.0.1/32]}}",
    )
    .unwrap();
    let app = app(store, &config);
    let from = |peer: &str, user: Option<&str>| {
        let mut request = Request::get("/api/v1/clusters");
        if let Some(user) = user {
            request = request.header("x-forwarded-user", user);
        }
        let mut request = request.body(Body::empty()).unwrap();
        request
            .extensions_mut()
            .insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
        request
    };
    assert_eq!(
        send(&app, from("127.0.0.1:5000", Some("ada"))).await.0,
        StatusCode::OK
    );
    let (status, body) = send(&app, from("10.1.2.3:5000", Some("ada"))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("only accepted from the configured proxies"));
    assert_eq!(
        send(&app, from("127.0.0.1:5000", None)).await.0,
        StatusCode::UNAUTHORIZED
    );
}
