//! The hint on `/` for a fleet with no domains configured: one suggested domain per top-level
//! Kustomization the clusters hold, gone once a domain is written.

use crate::common;

use common::web::{app, demo_app, demo_config, get};
use fleetglass::store::{ObjectFilter, ObjectRecord};
use fleetglass::web::{self, AppState, Site};
use std::collections::BTreeSet;
use std::time::Duration;

/// Who applied a stored Kustomization, from Flux's labels on it.
fn applier(record: &ObjectRecord) -> Option<(String, String)> {
    let labels = &record.body["labels"];
    Some((
        labels["kustomize.toolkit.fluxcd.io/namespace"]
            .as_str()?
            .to_string(),
        labels["kustomize.toolkit.fluxcd.io/name"]
            .as_str()?
            .to_string(),
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn without_domains_the_fleet_page_suggests_one_per_top_level_kustomization() {
    let (configured, store) = demo_app().await;
    let (_, page) = get(&configured, "/").await;
    assert!(
        !page.contains("domain-hint"),
        "domains are configured: no hint"
    );

    let mut config = demo_config();
    config.domains.clear();
    let (status, page) = get(&app(store.clone(), &config), "/").await;
    assert!(status.is_success());
    assert!(page.contains("No domains configured yet"), "{page}");

    let kustomizations = store
        .objects(&ObjectFilter {
            kind: Some("Kustomization".into()),
            limit: 10_000,
            ..ObjectFilter::default()
        })
        .await
        .unwrap()
        .items;
    let key = |r: &ObjectRecord| {
        (
            r.verdict.cluster.clone(),
            r.verdict.namespace.clone(),
            r.verdict.name.clone(),
        )
    };
    let bootstrap: BTreeSet<_> = kustomizations
        .iter()
        .filter(|r| applier(r) == Some((r.verdict.namespace.clone(), r.verdict.name.clone())))
        .map(key)
        .collect();
    let top_level: BTreeSet<(String, String)> = kustomizations
        .iter()
        .filter(|r| !bootstrap.contains(&key(r)))
        .filter(|r| match applier(r) {
            None => true,
            Some((namespace, name)) => {
                bootstrap.contains(&(r.verdict.cluster.clone(), namespace, name))
            }
        })
        .map(|r| (r.verdict.namespace.clone(), r.verdict.name.clone()))
        .collect();
    assert!(
        !top_level.is_empty(),
        "the demo fleet has top-level Kustomizations"
    );
    let suggested: BTreeSet<(String, String)> = page
        .split("select: {root: ")
        .skip(1)
        .map(|rest| {
            let root = &rest[..rest.find('}').unwrap()];
            let (namespace, name) = root.split_once('/').unwrap();
            (namespace.to_string(), name.to_string())
        })
        .collect();
    assert_eq!(suggested.len(), top_level.len().min(12), "{page}");
    assert!(
        suggested.is_subset(&top_level),
        "{suggested:?} vs {top_level:?}"
    );
}

/// Loading the hint parses every Kustomization's stored body (a third of a second at 100,000
/// of them), so the fleet page reuses a loaded hint for a minute: within it the suggestions
/// stand though their Kustomizations are gone; once the hint is older, it is read again.
#[tokio::test(flavor = "multi_thread")]
async fn the_hint_is_read_again_once_a_minute_old_not_on_every_page() {
    let (_, store) = demo_app().await;
    let mut config = demo_config();
    config.domains.clear();
    let state = AppState::new(store.clone(), Site::from_config(&config));
    let app = web::router(state.clone());
    let suggests = |page: &str| page.contains("select: {root: ");
    let (_, first) = get(&app, "/").await;
    assert!(suggests(&first), "{first}");

    sqlx::query!("DELETE FROM objects WHERE kind = 'Kustomization'")
        .execute(store.pool())
        .await
        .unwrap();
    let (_, within) = get(&app, "/").await;
    assert!(suggests(&within), "the hint loaded a moment ago is reused");

    if let Some((loaded, _)) = state.domain_hint.lock().await.as_mut() {
        *loaded = loaded
            .checked_sub(Duration::from_secs(61))
            .expect("this machine has been up for a minute");
    }
    let (_, later) = get(&app, "/").await;
    assert!(later.contains("No domains configured yet"), "{later}");
    assert!(
        !suggests(&later),
        "read again: no Kustomization left to suggest"
    );
}
