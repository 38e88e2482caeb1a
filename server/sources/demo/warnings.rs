//! The Warning events the demo's objects would have made the kubelet and the Flux controllers
//! write: derived from each object as it changes, as those writers derive them from the same
//! state (the kubelet's image pull and back-off events, a Flux controller's event for a failed
//! reconciliation, reasoned as its Ready condition).

use super::hex::hex;
use crate::model::{Kind, ObjectId, Warning};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// The Warning events `object` (on `cluster`) would carry at `now`.
pub fn warnings_of(cluster: &str, object: &Value, now: DateTime<Utc>) -> Vec<Warning> {
    let Some(kind) = object["kind"].as_str().and_then(|k| k.parse::<Kind>().ok()) else {
        return Vec::new();
    };
    let metadata = &object["metadata"];
    let (namespace, name) = (
        metadata["namespace"].as_str().unwrap_or_default(),
        metadata["name"].as_str().unwrap_or_default(),
    );
    let regarding = ObjectId::new(cluster, kind, namespace, name);
    let warning = |reason: &str, note: String, count: i64, reporter: &str| Warning {
        uid: hex(&format!("{}/{reason}", regarding.as_str()), 32),
        regarding: regarding.clone(),
        reason: reason.to_string(),
        note,
        count: i32::try_from(count.max(1)).unwrap_or(i32::MAX),
        last_seen: now,
        reporter: reporter.to_string(),
    };
    if kind == Kind::Pod {
        return pod_warnings(object, name, namespace)
            .into_iter()
            .map(|(reason, note, count)| warning(reason, note, count, "kubelet"))
            .collect();
    }
    let Some(controller) = kind.controller() else {
        return Vec::new();
    };
    let conditions = object["status"]["conditions"].as_array();
    let not_ready = conditions
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready" && c["status"] == "False");
    not_ready
        .map(|ready| {
            let reason = ready["reason"].as_str().unwrap_or("ReconciliationFailed");
            let note = ready["message"].as_str().unwrap_or_default().to_string();
            warning(reason, note, 1, controller)
        })
        .into_iter()
        .collect()
}

/// The kubelet's events for a pod's waiting containers: `Failed` and `BackOff` while an image
/// cannot be pulled, `BackOff` for a container restarting after crashes (k8s.io/kubernetes
/// pkg/kubelet/events: FailedToPullImage = "Failed", BackOffStartContainer = "BackOff").
fn pod_warnings(pod: &Value, name: &str, namespace: &str) -> Vec<(&'static str, String, i64)> {
    let statuses = pod["status"]["containerStatuses"].as_array();
    let mut out = Vec::new();
    for status in statuses.into_iter().flatten() {
        let container = status["name"].as_str().unwrap_or_default();
        let image = status["image"].as_str().unwrap_or_default();
        let restarts = status["restartCount"].as_i64().unwrap_or(0);
        match status["state"]["waiting"]["reason"].as_str() {
            Some("ImagePullBackOff" | "ErrImagePull") => {
                out.push((
                    "Failed",
                    format!("Failed to pull image \"{image}\": rpc error: code = NotFound desc = failed to pull and unpack image \"{image}\": not found"),
                    1,
                ));
                out.push(("BackOff", format!("Back-off pulling image \"{image}\""), 1));
            }
            Some("CrashLoopBackOff") => out.push((
                "BackOff",
                format!(
                    "Back-off restarting failed container {container} in pod {name}_{namespace}"
                ),
                restarts,
            )),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        "2026-12-06T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn a_pod_that_cannot_pull_its_image_has_the_kubelets_two_warnings() {
        let pod = json!({"kind": "Pod", "metadata": {"namespace": "apps", "name": "api-1"},
            "status": {"containerStatuses": [{"name": "app", "image": "app:v2", "restartCount": 0,
                "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}});
        let warnings = warnings_of("c", &pod, now());
        let reasons: Vec<&str> = warnings.iter().map(|w| w.reason.as_str()).collect();
        assert_eq!(reasons, ["Failed", "BackOff"]);
        assert!(warnings[0].note.contains("Failed to pull image \"app:v2\""));
        assert!(warnings.iter().all(|w| w.reporter == "kubelet"));
        assert_ne!(warnings[0].uid, warnings[1].uid, "two events, two uids");
        assert_eq!(
            warnings,
            warnings_of("c", &pod, now()),
            "the same uids each time"
        );
    }

    #[test]
    fn a_crash_loop_counts_its_restarts_and_a_running_pod_has_none() {
        let pod = |state: Value| {
            json!({"kind": "Pod", "metadata": {"namespace": "apps", "name": "api-1"},
                "status": {"containerStatuses": [{"name": "app", "restartCount": 9, "state": state}]}})
        };
        let looping = warnings_of(
            "c",
            &pod(json!({"waiting": {"reason": "CrashLoopBackOff"}})),
            now(),
        );
        assert_eq!(looping.len(), 1);
        assert_eq!(
            (looping[0].reason.as_str(), looping[0].count),
            ("BackOff", 9)
        );
        assert!(warnings_of("c", &pod(json!({"running": {}})), now()).is_empty());
    }

    #[test]
    fn a_flux_object_not_ready_has_its_controllers_warning() {
        let release = json!({"kind": "HelmRelease", "metadata": {"namespace": "apps", "name": "api"},
            "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "UpgradeFailed",
                "message": "Helm upgrade failed: timed out waiting for the condition"}]}});
        let warnings = warnings_of("c", &release, now());
        assert_eq!(warnings.len(), 1);
        assert_eq!(
            (warnings[0].reason.as_str(), warnings[0].reporter.as_str()),
            ("UpgradeFailed", "helm-controller")
        );
        let mut ready = release.clone();
        ready["status"]["conditions"][0]["status"] = json!("True");
        assert!(warnings_of("c", &ready, now()).is_empty());
    }
}
