use super::*;
use serde_json::json;

fn kustomization() -> serde_json::Value {
    json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "apps", "namespace": "flux-system", "generation": 3,
                     "labels": {"sharding.fluxcd.io/key": "shard1"}},
        "spec": {"interval": "10m", "timeout": "5m0s", "wait": true,
                 "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
                 "dependsOn": [{"name": "infra"}, {"name": "crds", "namespace": "platform"}]},
        "status": {"observedGeneration": 2,
                   "lastAttemptedRevision": "main@sha1:bbb", "lastAppliedRevision": "main@sha1:aaa",
                   "conditions": [{"type": "Ready", "status": "False", "reason": "HealthCheckFailed",
                                   "message": "timeout", "observedGeneration": 3,
                                   "lastTransitionTime": "2026-11-20T10:00:00Z"}],
                   "inventory": {"entries": [{"id": "default_podinfo_apps_Deployment", "v": "v1"}]}}
    })
}

#[test]
fn reads_the_fields_the_engine_needs() {
    let object = parse_object("prod", &kustomization()).unwrap();
    assert_eq!(object.id().as_str(), "prod/Kustomization/flux-system/apps");
    assert_eq!(object.spec.flux.interval_secs, Some(600));
    assert_eq!(object.spec.flux.timeout_secs, Some(300));
    assert!(object.spec.flux.wait);
    let source = object.spec.flux.source_ref.as_ref().unwrap();
    assert_eq!(
        (source.kind.as_str(), source.namespace.as_str()),
        ("GitRepository", "flux-system")
    );
    assert_eq!(object.spec.flux.depends_on[0].namespace, "flux-system");
    assert_eq!(object.spec.flux.depends_on[0].kind, "Kustomization");
    assert_eq!(object.spec.flux.depends_on[1].namespace, "platform");
    let ready = object.condition("Ready").unwrap();
    assert_eq!(ready.reason, "HealthCheckFailed");
    assert_eq!(ready.observed_generation, Some(3));
    assert_eq!(
        object.status.flux.inventory,
        vec!["default_podinfo_apps_Deployment"]
    );
    assert!(object.defects.is_empty(), "{:?}", object.defects);
}

/// flux2 cmd/flux/reconcile.go sets the `reconcile.fluxcd.io/requestedAt` annotation (an
/// RFC 3339 time); the controller copies it to `status.lastHandledReconcileAt` once handled.
#[test]
fn a_reconcile_request_and_the_one_last_handled_are_read() {
    let mut object = kustomization();
    object["metadata"]["annotations"] = json!({
        "reconcile.fluxcd.io/requestedAt": "2026-12-07T07:00:00.123456789Z",
        "other": "ignored",
    });
    object["status"]["lastHandledReconcileAt"] = json!("2026-12-07T06:00:00Z");
    let parsed = parse_object("prod", &object).unwrap();
    let requested = parsed.reconcile_requested.as_deref();
    assert_eq!(requested, Some("2026-12-07T07:00:00.123456789Z"));
    let handled = parsed.status.flux.last_handled_reconcile.as_deref();
    assert_eq!(handled, Some("2026-12-07T06:00:00Z"));
    let plain = parse_object("prod", &kustomization()).unwrap();
    assert_eq!(plain.reconcile_requested, None);
    assert_eq!(plain.status.flux.last_handled_reconcile, None);
    assert!(plain.defects.is_empty() && parsed.defects.is_empty());
}

#[test]
fn malformed_fields_become_defects_not_failures() {
    let mut value = kustomization();
    value["status"]["conditions"] = json!([
        {"type": "Ready", "status": "Maybe", "lastTransitionTime": "yesterday"},
        "not a condition",
        {"status": "True"}
    ]);
    value["spec"]["interval"] = json!(17);
    let object = parse_object("c", &value).unwrap();
    assert_eq!(object.status.conditions.len(), 1);
    let defects = object.defects.join("\n");
    assert!(defects.contains("status.conditions[0].status"), "{defects}");
    assert!(
        defects.contains("\"yesterday\" is not an RFC 3339 time"),
        "{defects}"
    );
    assert!(
        defects.contains("status.conditions[1]: expected a mapping"),
        "{defects}"
    );
    assert!(
        defects.contains("status.conditions[2].type: missing"),
        "{defects}"
    );
    assert!(
        defects.contains("spec.interval: expected a string"),
        "{defects}"
    );
}

#[test]
fn kustomize_config_kustomization_is_not_a_flux_object() {
    let value = json!({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
                       "metadata": {"name": "x"}});
    assert!(matches!(
        parse_object("c", &value),
        Err(Skip::UnknownKind { .. })
    ));
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    assert!(matches!(
        parse_object("c", &config_map),
        Err(Skip::UnknownKind { .. })
    ));
    assert!(matches!(
        parse_object("c", &json!([1])),
        Err(Skip::Invalid(_))
    ));
    let nameless = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}});
    assert!(matches!(
        parse_object("c", &nameless),
        Err(Skip::Invalid(_))
    ));
}

#[test]
fn helm_release_chart_and_history() {
    let value = json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
        "metadata": {"name": "netop", "namespace": "networking", "generation": 1},
        "spec": {"interval": "30m", "chart": {"spec": {"chart": "netop", "version": "2.x",
                 "sourceRef": {"kind": "HelmRepository", "name": "charts", "namespace": "flux-system"}}}},
        "status": {"history": [{"chartName": "netop", "chartVersion": "2.14.0", "status": "deployed"},
                               {"chartName": "netop", "chartVersion": "2.13.0", "status": "superseded"}],
                   "helmChart": "flux-system/networking-netop"}
    });
    let object = parse_object("c", &value).unwrap();
    assert_eq!(object.spec.flux.source_ref.as_ref().unwrap().name, "charts");
    assert_eq!(
        object
            .status
            .flux
            .release
            .as_ref()
            .unwrap()
            .chart_version
            .as_deref(),
        Some("2.14.0")
    );
    assert_eq!(
        object.status.flux.helm_chart.as_deref(),
        Some("flux-system/networking-netop")
    );
}

#[test]
fn workloads_and_pods_are_normalised() {
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "netop", "namespace": "networking",
                     "labels": {"helm.toolkit.fluxcd.io/name": "netop", "helm.toolkit.fluxcd.io/namespace": "networking"}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "netop"}},
                 "template": {"spec": {"containers": [{"name": "m", "image": "netop:2.14.0"}]}}},
        "status": {"readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 1}
    });
    let object = parse_object("c", &deployment).unwrap();
    assert_eq!(
        object.applied_by(),
        Some((Kind::HelmRelease, "networking", "netop"))
    );
    let w = object.status.workload.unwrap();
    assert_eq!((w.desired, w.available, w.updated), (3, 2, Some(1)));
    assert_eq!(object.spec.images, vec!["netop:2.14.0"]);

    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "netop-1", "namespace": "networking", "ownerReferences": [{"kind": "ReplicaSet", "name": "netop-5d9"}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "m", "ready": false, "restartCount": 7,
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}},
            "lastState": {"terminated": {"reason": "Error"}}}]}
    });
    let pod = parse_object("c", &pod).unwrap();
    let c = &pod.status.pod.as_ref().unwrap().containers[0];
    assert_eq!(c.waiting_reason.as_deref(), Some("CrashLoopBackOff"));
    assert_eq!(c.restarts, 7);
    assert_eq!(pod.owners[0].kind, "ReplicaSet");
}

/// `spec.ref` precedence as fluxcd/source-controller api/v1/gitrepository_types.go documents
/// it (commit > name > semver > tag > branch; no ref: the master branch) and
/// api/v1beta2/ocirepository_types.go (digest > semver > tag).
#[test]
fn sources_keep_their_url_and_what_they_follow() {
    let source = |kind: &str, api: &str, reference: serde_json::Value| {
        let mut spec = json!({"interval": "1m", "url": "ssh://git@github.com/acme/fleet"});
        if !reference.is_null() {
            spec["ref"] = reference;
        }
        let value = json!({"apiVersion": api, "kind": kind,
            "metadata": {"name": "fleet", "namespace": "flux-system"}, "spec": spec});
        parse_object("prod", &value).unwrap().spec.flux.clone()
    };
    let git = |reference| source("GitRepository", "source.toolkit.fluxcd.io/v1", reference);
    let spec = git(json!({"branch": "main"}));
    assert_eq!(spec.url.as_deref(), Some("ssh://git@github.com/acme/fleet"));
    assert_eq!(spec.reference.as_deref(), Some("branch main"));
    assert_eq!(
        git(json!({"branch": "main", "tag": "v1.2.0"}))
            .reference
            .as_deref(),
        Some("tag v1.2.0")
    );
    assert_eq!(
        git(json!({"tag": "v1.2.0", "semver": ">=1.0.0"}))
            .reference
            .as_deref(),
        Some("semver >=1.0.0")
    );
    assert_eq!(
        git(json!({"semver": ">=1.0.0", "name": "refs/heads/release"}))
            .reference
            .as_deref(),
        Some("ref refs/heads/release")
    );
    assert_eq!(
        git(json!({"branch": "main", "commit": "4f1c0ffee"}))
            .reference
            .as_deref(),
        Some("commit 4f1c0ffee on branch main")
    );
    assert_eq!(
        git(serde_json::Value::Null).reference.as_deref(),
        Some("branch master (the default)")
    );
    let oci = source(
        "OCIRepository",
        "source.toolkit.fluxcd.io/v1beta2",
        json!({"tag": "1.5.0", "digest": "sha256:abc"}),
    );
    assert_eq!(oci.reference.as_deref(), Some("digest sha256:abc"));
    let kustomization = parse_object("prod", &kustomization()).unwrap();
    assert_eq!(kustomization.spec.flux.url, None, "only sources have one");
}

/// Lists collected through a filter start with room for four entries: a pod's one container
/// status held a kilobyte, 42 MB of a 100,000-object `fleetglass evaluate`
/// (PERFORMANCE-HISTORY §8).
#[test]
fn a_pods_lists_have_room_for_what_they_hold_not_more() {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "shop", "ownerReferences": [{"kind": "ReplicaSet", "name": "web-5d9"}]},
        "spec": {"containers": [{"name": "web", "image": "web:1.2.0"}]},
        "status": {"phase": "Running",
            "initContainerStatuses": [{"name": "migrate", "ready": true, "restartCount": 0}],
            "containerStatuses": [{"name": "web", "ready": true, "restartCount": 0}]}
    });
    let pod = parse_object("c", &pod).unwrap();
    let containers = &pod.status.pod.as_ref().unwrap().containers;
    let names: Vec<_> = containers
        .iter()
        .map(|c| (c.name.as_str(), c.init))
        .collect();
    assert_eq!(
        names,
        [("migrate", true), ("web", false)],
        "init containers first"
    );
    assert_eq!(containers.capacity(), 2);
    assert_eq!((pod.owners.len(), pod.owners.capacity()), (1, 1));
    assert_eq!((pod.spec.images.len(), pod.spec.images.capacity()), (1, 1));
}

/// The cluster, namespace, API version and each condition's type and reason repeat across
/// objects: parsed on one thread, they are one allocation, not one per object.
#[test]
fn texts_that_objects_repeat_are_held_once() {
    let pod = |name: &str| {
        let value = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop"},
            "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}]}
        });
        parse_object("prod-eu-1", &value).unwrap()
    };
    let (a, b) = (pod("web-1"), pod("web-2"));
    let same = |x: &str, y: &str| x == y && std::ptr::eq(x, y);
    assert!(same(&a.cluster, &b.cluster));
    assert!(same(&a.namespace, &b.namespace));
    assert!(same(&a.api_version, &b.api_version));
    let (ready_a, ready_b) = (a.condition("Ready").unwrap(), b.condition("Ready").unwrap());
    assert!(same(&ready_a.type_, &ready_b.type_));
    assert!(same(&ready_a.reason, &ready_b.reason));
    assert_eq!(ready_a.reason, "ContainersNotReady");
}

/// A list or a mapping where a text belongs is a defect of that field, read past whole: the
/// fields after it are still read.
#[test]
fn a_list_or_mapping_in_the_place_of_a_value_is_read_past() {
    let mut value = kustomization();
    value["spec"]["interval"] = json!(["1m", "2m"]);
    value["spec"]["timeout"] = json!({"minutes": 5});
    let object = parse_object("c", &value).unwrap();
    let defects = object.defects.join("\n");
    assert!(
        defects.contains("spec.interval: expected a string"),
        "{defects}"
    );
    assert!(
        defects.contains("spec.timeout: expected a string"),
        "{defects}"
    );
    assert!(
        object.spec.flux.source_ref.is_some(),
        "the fields after it are read"
    );
}

/// Numbers as YAML and tools write them: negative, as strings, and fractions where an integer
/// belongs (a defect).
#[test]
fn integers_read_negative_and_from_strings_and_fractions_are_defects() {
    let mut value = kustomization();
    value["metadata"]["generation"] = json!(-3);
    assert_eq!(parse_object("c", &value).unwrap().generation, Some(-3));
    value["metadata"]["generation"] = json!("4");
    assert_eq!(parse_object("c", &value).unwrap().generation, Some(4));
    value["metadata"]["generation"] = json!(2.5);
    let object = parse_object("c", &value).unwrap();
    assert_eq!(object.generation, None);
    assert!(
        object.defects.join("\n").contains("metadata.generation"),
        "{:?}",
        object.defects
    );
}

/// No status at all and an empty status are told apart (a new object, or one its controller
/// reached); a Deployment without `spec.replicas` has the API server's default of 1.
#[test]
fn status_presence_and_the_default_replica_count_are_kept() {
    let mut value = kustomization();
    value.as_object_mut().unwrap().remove("status");
    assert!(!parse_object("c", &value).unwrap().status.present);
    value["status"] = json!({});
    assert!(parse_object("c", &value).unwrap().status.present);
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "apps"}, "spec": {"selector": {"matchLabels": {"app": "web"}}}});
    assert_eq!(
        parse_object("c", &deployment).unwrap().spec.replicas,
        Some(1)
    );
}

#[test]
fn a_skipped_object_says_why() {
    let skip = Skip::UnknownKind {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
    };
    assert_eq!(skip.to_string(), "unknown kind ConfigMap (v1)");
    assert_eq!(Skip::Invalid("no kind".into()).to_string(), "no kind");
}

/// A HelmChart's `spec.chart` is the chart's name; a DaemonSet's replicas are the nodes it
/// should run on (`desiredNumberScheduled`), every other workload's its spec's.
#[test]
fn chart_names_and_daemon_set_replicas_are_read_per_kind() {
    let chart = json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart",
        "metadata": {"name": "apps-web", "namespace": "flux-system"},
        "spec": {"chart": "web", "version": "1.x", "sourceRef": {"kind": "HelmRepository", "name": "charts"}}});
    let chart = parse_object("c", &chart).unwrap();
    assert_eq!(chart.spec.flux.chart.as_deref(), Some("web"));
    let daemon_set = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "ops"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}},
        "status": {"desiredNumberScheduled": 3, "numberReady": 3, "numberAvailable": 3, "updatedNumberScheduled": 3}});
    assert_eq!(
        parse_object("c", &daemon_set).unwrap().spec.replicas,
        Some(3)
    );
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "apps"},
        "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"replicas": 2}});
    assert_eq!(
        parse_object("c", &deployment).unwrap().spec.replicas,
        Some(4)
    );
}

/// A container's counters as the kubelet writes them, negative exit codes included (a
/// container killed before it ran reports -1 under some runtimes).
#[test]
fn container_counters_read_as_written() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"},
        "status": {"phase": "Running", "containerStatuses": [{"name": "c", "ready": false, "restartCount": 3,
            "state": {"running": {}}, "lastState": {"terminated": {"exitCode": -1, "reason": "Error"}}}]}});
    let pod = parse_object("c", &pod).unwrap();
    let container = &pod.status.pod.as_ref().unwrap().containers[0];
    assert_eq!(container.restarts, 3);
    assert_eq!(
        container.last_terminated.as_ref().unwrap().exit_code,
        Some(-1)
    );
}
