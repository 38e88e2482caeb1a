//! Warning events written to a real API server, as kustomize-controller writes them through
//! events.k8s.io/v1 (a series once it repeats), reach the store as evidence of the object they
//! are about; Normal events and events about kinds fleetglass does not track never do.

use crate::common;

use common::collector::{config, flux_pair, objects_in, ready_status};
use common::eventually;
use fleetglass::app::{Collector, Source};
use fleetglass::model::ObjectId;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

/// An events.k8s.io/v1 Event as a controller's event recorder writes it, first seen at
/// [`first_seen`] (immutable); a series says how often it happened since.
fn event(
    ns: &str,
    name: &str,
    kind_of_event: &str,
    regarding: (&str, &str, &str),
    series: Option<u32>,
) -> String {
    let (api_version, kind, object) = regarding;
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.6fZ");
    let first = first_seen();
    let series = series.map_or(String::new(), |count| {
        format!("series: {{count: {count}, lastObservedTime: \"{now}\"}}\n")
    });
    format!(
        "apiVersion: events.k8s.io/v1
kind: Event
metadata: {{name: {name}, namespace: {ns}}}
eventTime: \"{first}\"
reportingController: kustomize-controller
reportingInstance: kustomize-controller-6b8d9c7f4-abcde
action: Reconcile
reason: ReconciliationFailed
note: \"kustomize build failed: accumulating resources: missing file apps.yaml\"
type: {kind_of_event}
regarding: {{apiVersion: {api_version}, kind: {kind}, name: {object}, namespace: {ns}}}
{series}"
    )
}

fn first_seen() -> &'static str {
    static FIRST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FIRST.get_or_init(|| {
        chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.6fZ")
            .to_string()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warning_events_reach_the_store_as_evidence_of_their_object() {
    let bed = common::collector::bed();
    let one = bed.clusters[0].as_str();
    let ns = common::collector::unique_namespace("fge");
    common::collector::apply(&bed, one, &flux_pair(&ns));
    common::collector::set_status(&bed, one, "kustomization/app", &ns, &ready_status(false));
    let kustomization = ("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "app");
    common::collector::apply(
        &bed,
        one,
        &event(&ns, "app.warning", "Warning", kustomization, None),
    );
    common::collector::apply(
        &bed,
        one,
        &event(&ns, "app.normal", "Normal", kustomization, None),
    );
    common::collector::apply(
        &bed,
        one,
        &event(
            &ns,
            "svc.warning",
            "Warning",
            ("v1", "Service", "web"),
            None,
        ),
    );

    let store = common::fresh_store().await;
    let collector = Collector::start(
        &config(&bed.kubeconfig, &[one]),
        store.clone(),
        Source::Kube,
        "events-test".into(),
    );
    let id = format!("{one}/Kustomization/{ns}/app")
        .parse::<ObjectId>()
        .unwrap();
    let found = eventually("the Warning event stored", DEADLINE, || async {
        let found = store.warnings_of(std::slice::from_ref(&id)).await.ok()?;
        (!found.is_empty()).then_some(found)
    })
    .await;
    assert_eq!(found.len(), 1, "the Normal event is not kept: {found:?}");
    let warning = &found[0].1;
    assert_eq!(
        (
            warning.reason.as_str(),
            warning.reporter.as_str(),
            warning.count
        ),
        ("ReconciliationFailed", "kustomize-controller", 1)
    );
    assert!(warning.note.contains("missing file apps.yaml"));

    // It repeats: the recorder turns the event into a series; the stored one follows.
    common::collector::apply(
        &bed,
        one,
        &event(&ns, "app.warning", "Warning", kustomization, Some(4)),
    );
    eventually("the series' count stored", DEADLINE, || async {
        let found = store.warnings_of(std::slice::from_ref(&id)).await.ok()?;
        (found.len() == 1 && found[0].1.count == 4).then_some(())
    })
    .await;
    // The Service's event never arrives, however long the collector has run.
    let objects = objects_in(&store, one, &ns).await;
    assert!(!objects.is_empty());
    let service = format!("{one}/Service/{ns}/web")
        .parse::<ObjectId>()
        .unwrap();
    assert!(store.warnings_of(&[service]).await.unwrap().is_empty());
    collector.stop().await;
}
