//! Warning events (events.k8s.io/v1 `type=Warning`, every namespace) about the kinds fleetglass
//! tracks: the kubelet's "Failed to pull image", the controllers' "ReconciliationFailed". One
//! watch per cluster, filtered by the API server; events about other kinds, and about pods
//! outside the namespaces whose pods are watched, are dropped here. A cluster that forbids
//! reading events loses only this evidence: nothing else waits on it.

use super::context::ClusterContext;
use crate::model::{Kind, ObjectId, Warning};
use crate::sources::SourceEvent;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::Value;
use std::sync::Arc;

/// Where pods are always watched (the controllers' own), beside the workloads' namespaces.
const FLUX_SYSTEM: &str = "flux-system";

/// A note longer than this is cut: a Helm error can carry a whole manifest.
const NOTE_BYTES: usize = 1024;

fn events_resource() -> ApiResource {
    ApiResource {
        group: "events.k8s.io".into(),
        version: "v1".into(),
        api_version: "events.k8s.io/v1".into(),
        kind: "Event".into(),
        plural: "events".into(),
    }
}

#[tracing::instrument(skip_all, fields(cluster = %ctx.cluster, kind = "Event"))]
pub async fn run(client: kube::Client, ctx: Arc<ClusterContext>) {
    let api: Api<DynamicObject> = Api::all_with(client, &events_resource());
    let config = watcher::Config::default().fields("type=Warning");
    let mut stream = watcher(api, config)
        .default_backoff()
        .applied_objects()
        .boxed();
    let mut failing = false;
    while let Some(item) = stream.next().await {
        let event = match item {
            Ok(event) => event,
            Err(error) => {
                if !std::mem::replace(&mut failing, true) {
                    tracing::warn!(%error, "cannot watch Warning events; retrying (verdicts are unaffected)");
                }
                continue;
            }
        };
        failing = false;
        let Ok(value) = serde_json::to_value(&event) else {
            continue;
        };
        let Some(warning) = warning_of(&ctx.cluster, &value) else {
            continue;
        };
        if warning
            .regarding
            .parts()
            .is_some_and(|(_, kind, namespace, _)| {
                kind == Kind::Pod.as_str() && !pods_watched_in(&ctx, namespace)
            })
        {
            continue;
        }
        ctx.send(SourceEvent::Warning(Box::new(warning))).await;
    }
}

fn pods_watched_in(ctx: &ClusterContext, namespace: &str) -> bool {
    namespace == FLUX_SYSTEM
        || ctx
            .namespaces
            .borrow()
            .values()
            .any(|namespaces| namespaces.contains(namespace))
}

/// An events.k8s.io/v1 Event (as JSON) about a tracked kind, as a [`Warning`]; None for
/// anything else. The time and count are the series' when there is one (a repeating event
/// is one Event whose series grows), else the Event's own, else the deprecated core fields
/// the API server converts from core/v1 Events.
pub fn warning_of(cluster: &str, event: &Value) -> Option<Warning> {
    if event["type"].as_str() != Some("Warning") {
        return None;
    }
    let regarding = &event["regarding"];
    let kind: Kind = regarding["kind"].as_str()?.parse().ok()?;
    let name = regarding["name"].as_str()?;
    let namespace = regarding["namespace"].as_str().unwrap_or_default();
    let time = |field: &Value| {
        field
            .as_str()
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc))
    };
    let series = &event["series"];
    let last_seen = time(&series["lastObservedTime"])
        .or_else(|| time(&event["deprecatedLastTimestamp"]))
        .or_else(|| time(&event["eventTime"]))
        .or_else(|| time(&event["metadata"]["creationTimestamp"]))?;
    let count = series["count"]
        .as_i64()
        .or_else(|| event["deprecatedCount"].as_i64())
        .unwrap_or(1);
    let reporter = event["reportingController"]
        .as_str()
        .filter(|r| !r.is_empty())
        .or_else(|| event["deprecatedSource"]["component"].as_str())
        .unwrap_or_default();
    Some(Warning {
        regarding: ObjectId::new(cluster, kind, namespace, name),
        uid: event["metadata"]["uid"].as_str()?.to_string(),
        reason: event["reason"].as_str().unwrap_or_default().to_string(),
        note: cut(event["note"].as_str().unwrap_or_default()),
        count: i32::try_from(count.max(1)).unwrap_or(i32::MAX),
        last_seen,
        reporter: reporter.to_string(),
    })
}

fn cut(note: &str) -> String {
    if note.len() <= NOTE_BYTES {
        return note.to_string();
    }
    let mut end = NOTE_BYTES;
    while !note.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &note[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// As the kubelet writes it (k8s.io/kubernetes pkg/kubelet/images: `Failed`, reported by
    /// `kubelet`), through events.k8s.io/v1 with a series once it repeats.
    fn pull_failure() -> Value {
        json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event", "type": "Warning",
            "metadata": {"name": "api-1.17f", "namespace": "apps", "uid": "u-1",
                         "creationTimestamp": "2026-12-06T10:00:00Z"},
            "regarding": {"kind": "Pod", "namespace": "apps", "name": "api-1", "apiVersion": "v1"},
            "reason": "Failed", "note": "Failed to pull image \"app:v2\": not found",
            "reportingController": "kubelet",
            "series": {"count": 7, "lastObservedTime": "2026-12-06T10:30:00.000000Z"}
        })
    }

    #[test]
    fn a_repeating_event_counts_and_dates_by_its_series() {
        let warning = warning_of("c", &pull_failure()).unwrap();
        assert_eq!(warning.regarding.as_str(), "c/Pod/apps/api-1");
        assert_eq!((warning.count, warning.reporter.as_str()), (7, "kubelet"));
        assert_eq!(warning.last_seen.to_rfc3339(), "2026-12-06T10:30:00+00:00");
        assert_eq!(warning.reason, "Failed");
    }

    #[test]
    fn an_event_converted_from_core_v1_reads_its_deprecated_fields() {
        let mut event = pull_failure();
        let object = event.as_object_mut().unwrap();
        object.remove("series");
        object.insert("reportingController".into(), json!(""));
        object.insert("deprecatedCount".into(), json!(3));
        object.insert(
            "deprecatedLastTimestamp".into(),
            json!("2026-12-06T10:20:00Z"),
        );
        object.insert("deprecatedSource".into(), json!({"component": "kubelet"}));
        let warning = warning_of("c", &event).unwrap();
        assert_eq!((warning.count, warning.reporter.as_str()), (3, "kubelet"));
        assert_eq!(warning.last_seen.to_rfc3339(), "2026-12-06T10:20:00+00:00");
    }

    #[test]
    fn normal_events_untracked_kinds_and_unnamed_objects_are_dropped() {
        let mut normal = pull_failure();
        normal["type"] = json!("Normal");
        assert!(warning_of("c", &normal).is_none());
        let mut service = pull_failure();
        service["regarding"]["kind"] = json!("Service");
        assert!(warning_of("c", &service).is_none());
        let mut unnamed = pull_failure();
        unnamed["regarding"].as_object_mut().unwrap().remove("name");
        assert!(warning_of("c", &unnamed).is_none());
    }

    #[test]
    fn a_long_note_is_cut_on_a_character_boundary() {
        let mut event = pull_failure();
        event["note"] = json!("é".repeat(1000));
        let note = warning_of("c", &event).unwrap().note;
        assert!(note.len() <= NOTE_BYTES + "…".len() && note.ends_with('…'));
    }

    #[test]
    fn a_cluster_scoped_objects_event_has_no_namespace() {
        let mut event = pull_failure();
        event["regarding"] = json!({"kind": "Namespace", "name": "apps"});
        let warning = warning_of("c", &event).unwrap();
        assert_eq!(warning.regarding.as_str(), "c/Namespace//apps");
    }
}
