//! Web errors by kind, on real Postgres: a missing object is a 404 page in the site's layout
//! (JSON under /api/), a database that refuses connections is a 503 "not answering", and any
//! other internal failure is a 500 that says nothing of the database or of its internals.

use crate::common;

use axum::http::StatusCode;
use common::web::{app, get, get_json};
use fleetglass::store::Store;
use serde_json::json;

const NOT_ANSWERING: &str = "the database is not answering; try again shortly";

/// A migrated empty database and its name.
async fn database() -> (Store, String) {
    let url = common::fresh_database_url().await;
    let store = Store::connect(&url).await.expect("connect");
    store.migrate().await.expect("migrate");
    let name = url
        .split('?')
        .next()
        .and_then(|base| base.rsplit('/').next())
        .expect("the URL names its database")
        .to_string();
    (store, name)
}

fn web(store: &Store) -> axum::Router {
    app(store.clone(), &common::one_cluster_config("c1"))
}

/// The site's frame: viewport, header navigation, footer.
fn assert_in_layout(page: &str) {
    for part in [
        "<meta name=\"viewport\"",
        "<header class=\"top\">",
        "<a href=\"/problems\">problems</a>",
        "<footer class=\"foot\">",
    ] {
        assert!(page.contains(part), "{part} missing from:\n{page}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_object_is_a_404_page_in_the_layout_and_json_under_the_api() {
    let (store, _) = database().await;
    let app = web(&store);
    let (status, page) = get(&app, "/objects/c1/Kustomization/apps/missing").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_in_layout(&page);
    assert!(
        page.contains("no Kustomization apps/missing on cluster"),
        "{page}"
    );

    let (status, body) = get_json(&app, "/api/v1/objects/c1/Kustomization/apps/missing").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        body,
        json!({"error": "no Kustomization apps/missing on cluster \"c1\""})
    );

    let (status, page) = get(&app, "/objects/c1/Gadget/apps/x").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert_in_layout(&page);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_refuses_connections_is_503_not_answering() {
    let (store, name) = database().await;
    let app = web(&store);
    common::set_database_outage(&name, true).await;
    let (status, body) = get_json(&app, "/api/v1/objects").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body, json!({"error": NOT_ANSWERING}));
    let (status, page) = get(&app, "/objects").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_in_layout(&page);
    assert!(page.contains(NOT_ANSWERING), "{page}");
    common::set_database_outage(&name, false).await;
    let (status, _) = get_json(&app, "/api/v1/objects").await;
    assert_eq!(status, StatusCode::OK, "answers again once it is back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_internal_error_is_500_and_not_reported_as_the_database() {
    let (store, _) = database().await;
    // A schema the queries do not expect: the database answers, the query fails.
    sqlx::query!("ALTER TABLE objects RENAME COLUMN reason TO reason_renamed")
        .execute(store.pool())
        .await
        .unwrap();
    let app = web(&store);
    let (status, body) = get_json(&app, "/api/v1/objects").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    let message = body["error"].as_str().expect("the JSON error shape");
    assert_eq!(body.as_object().unwrap().len(), 1, "{body}");
    assert!(!message.contains("database"), "{message}");
    assert!(!message.contains("reason"), "no internals shown: {message}");
    let (status, page) = get(&app, "/objects").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_in_layout(&page);
    assert!(!page.contains("not answering"), "{page}");
    assert!(!page.contains("reason_renamed"), "no internals shown");
}
