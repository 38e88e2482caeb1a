//! Tests of the demo fleet: every object reads cleanly, the world is consistent and
//! deterministic, and the incidents appear (and clear) exactly when the scenario says.

use super::*;
use crate::model::{ConditionStatus, Kind, Object, parse_object};
use chrono::{DateTime, TimeDelta, Utc};
use std::collections::{BTreeMap, BTreeSet};

fn started() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-29T12:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn at(seconds: i64) -> DateTime<Utc> {
    started() + TimeDelta::seconds(seconds)
}

/// The world at `started + seconds`, parsed, by id.
fn objects(seconds: i64) -> BTreeMap<String, Object> {
    let mut by_id = BTreeMap::new();
    for (cluster, value) in world(started(), at(seconds)) {
        let object =
            parse_object(&cluster, &value).unwrap_or_else(|skip| panic!("{skip}: {value}"));
        assert!(
            object.defects.is_empty(),
            "{}: {:?}",
            object.id(),
            object.defects
        );
        let id = object.id().to_string();
        assert!(
            by_id.insert(id.clone(), object).is_none(),
            "duplicate id {id}"
        );
    }
    by_id
}

fn get<'a>(world: &'a BTreeMap<String, Object>, id: &str) -> &'a Object {
    world.get(id).unwrap_or_else(|| panic!("{id} missing"))
}

fn ready(object: &Object) -> (ConditionStatus, &str) {
    let c = object
        .condition("Ready")
        .unwrap_or_else(|| panic!("{} has no Ready", object.id()));
    (c.status, c.reason.as_str())
}

fn reconciling(object: &Object) -> Option<(&str, &str)> {
    object
        .condition("Reconciling")
        .filter(|c| c.is_true())
        .map(|c| (c.reason.as_str(), c.message.as_str()))
}

/// Sample times: the start, every phase boundary of the first loop, and later loops.
const TIMES: [i64; 14] = [
    0,
    19,
    20,
    49,
    50,
    60,
    80,
    140,
    150,
    200,
    219,
    239,
    240 + 100,
    240 * 37 + 21,
];

/// Objects deliberately not converged, by time (see the incident table in `scenario`).
fn incident_ids(seconds: i64) -> BTreeSet<String> {
    let phase = seconds % LOOP_PERIOD_SECS;
    let mut ids: BTreeSet<String> = [
        "staging-1/Kustomization/flux-system/gateway-config",
        "staging-1/Kustomization/flux-system/gateway",
        "prod-us-1/Kustomization/flux-system/observability",
        "staging-1/HelmRelease/observability/collector",
    ]
    .map(String::from)
    .into();
    for cluster in ["prod-eu-1", "prod-eu-2"] {
        for id in [
            "Kustomization/flux-system/infra-network",
            "Kustomization/flux-system/networking-config",
            "Kustomization/tenants/tenants",
            "Terraform/flux-system/nlb-security-groups",
        ] {
            ids.insert(format!("{cluster}/{id}"));
        }
    }
    if (60..150).contains(&phase) {
        ids.insert("prod-us-1/Kustomization/flux-system/gateway-edge".into());
        ids.insert("prod-us-1/Kustomization/flux-system/gateway".into());
    }
    for cluster in DEMO_CLUSTERS {
        let offset = scenario::rollout_phase(cluster.label("ring").unwrap());
        if seconds >= offset && (offset..offset + 30).contains(&phase) {
            ids.insert(format!("{}/Kustomization/tenants/tenants", cluster.name));
        }
    }
    ids
}

#[test]
fn every_object_parses_without_defects_and_ids_are_unique() {
    for seconds in TIMES {
        let world = objects(seconds);
        for cluster in DEMO_CLUSTERS {
            let count = world.values().filter(|o| o.cluster == cluster.name).count();
            assert!(
                (40..=90).contains(&count),
                "{}: {count} objects",
                cluster.name
            );
        }
    }
}

#[test]
fn the_world_is_deterministic() {
    for seconds in TIMES {
        assert_eq!(world(started(), at(seconds)), world(started(), at(seconds)));
    }
    // Before the start it is the world at the start.
    assert_eq!(world(started(), at(-50)), world(started(), at(0)));
}

#[test]
fn references_resolve_on_the_same_cluster() {
    for seconds in [0, 100, 215] {
        let world = objects(seconds);
        for object in world.values() {
            let spec = &object.spec;
            let refs = spec
                .flux
                .depends_on
                .iter()
                .chain(&spec.flux.health_checks)
                .chain(spec.flux.source_ref.iter());
            for r in refs {
                let id = format!("{}/{}/{}/{}", object.cluster, r.kind, r.namespace, r.name);
                assert!(
                    world.contains_key(&id),
                    "{} refers to missing {id}",
                    object.id()
                );
            }
            if let Some((kind, namespace, name)) = object.applied_by() {
                let id = format!("{}/{kind}/{namespace}/{name}", object.cluster);
                assert!(
                    world.contains_key(&id),
                    "{} applied by missing {id}",
                    object.id()
                );
            }
            for entry in &object.status.flux.inventory {
                let parts: Vec<&str> = entry.split('_').collect();
                if let Ok(kind) = parts[3].parse::<Kind>() {
                    let id = format!("{}/{kind}/{}/{}", object.cluster, parts[0], parts[1]);
                    assert!(
                        world.contains_key(&id),
                        "{} lists missing {id}",
                        object.id()
                    );
                }
            }
            if let Some(chart) = &object.status.flux.helm_chart {
                let (namespace, name) = chart.split_once('/').unwrap();
                assert!(
                    world.contains_key(&format!("{}/HelmChart/{namespace}/{name}", object.cluster))
                );
            }
        }
    }
}

#[test]
fn pods_belong_to_a_workload_whose_selector_matches() {
    let world = objects(30);
    for pod in world.values().filter(|o| o.kind == Kind::Pod) {
        let owner = &pod.owners[0];
        let workload_name = match owner.kind.as_str() {
            "ReplicaSet" => owner.name.rsplit_once('-').unwrap().0,
            _ => owner.name.as_str(),
        };
        let kind = if owner.kind == "ReplicaSet" {
            "Deployment"
        } else {
            owner.kind.as_str()
        };
        let id = format!("{}/{kind}/{}/{workload_name}", pod.cluster, pod.namespace);
        let workload = get(&world, &id);
        assert!(
            workload
                .spec
                .selector
                .iter()
                .all(|(k, v)| pod.label(k) == Some(v)),
            "{}",
            pod.id()
        );
    }
}

#[test]
fn everything_outside_the_incidents_is_healthy_and_converged() {
    for seconds in TIMES {
        let world = objects(seconds);
        let incidents = incident_ids(seconds);
        for object in world.values() {
            let id = object.id().to_string();
            if !object.kind.is_flux() || incidents.contains(&id) || !object.status.present {
                continue;
            }
            assert_eq!(ready(object).0, ConditionStatus::True, "{id} at {seconds}");
            assert_eq!(reconciling(object), None, "{id} at {seconds}");
            assert_eq!(object.status.observed_generation, object.generation, "{id}");
            assert_eq!(
                object.condition("Ready").unwrap().observed_generation,
                object.generation,
                "{id}"
            );
            if matches!(object.kind, Kind::Kustomization) {
                let source = object.spec.flux.source_ref.as_ref().unwrap();
                let source_id = format!(
                    "{}/{}/{}/{}",
                    object.cluster, source.kind, source.namespace, source.name
                );
                let offered = get(&world, &source_id)
                    .status
                    .flux
                    .artifact_revision
                    .as_ref();
                assert_eq!(
                    object.status.flux.last_applied_revision.as_ref(),
                    offered,
                    "{id} at {seconds}"
                );
                assert_eq!(
                    object.status.flux.last_attempted_revision.as_ref(),
                    offered,
                    "{id} at {seconds}"
                );
            }
        }
        // Workloads are available and pods running, except the two incident workloads.
        for object in world.values().filter(|o| o.kind.is_workload()) {
            let w = object.status.workload.as_ref().unwrap();
            let broken = object.name == "tofu-controller" && object.cluster.starts_with("prod-eu")
                || object.name == "netop" && object.cluster == "dev-1"
                || object.namespace == "tenants";
            if !broken {
                assert_eq!(
                    (w.available, w.updated),
                    (w.desired, Some(w.desired)),
                    "{}",
                    object.id()
                );
            }
        }
    }
}

#[test]
fn standing_incidents_are_there_from_the_start_with_past_condition_times() {
    let world = objects(0);
    let past = |object: &Object, type_: &str, older_than: TimeDelta| {
        let since = object.condition(type_).unwrap().last_transition.unwrap();
        assert!(
            since <= started() - older_than,
            "{} {type_} since {since}",
            object.id()
        );
    };

    // a. tofu-controller dead, Terraform Ready + Reconciling for 7 days, the chain behind it.
    for cluster in ["prod-eu-1", "prod-eu-2"] {
        let tofu = get(
            &world,
            &format!("{cluster}/Deployment/flux-system/tofu-controller"),
        );
        assert_eq!(tofu.status.workload.as_ref().unwrap().available, 0);
        assert_eq!(
            tofu.label("app.kubernetes.io/component"),
            Some("tofu-controller")
        );
        let pod = world
            .values()
            .find(|o| o.cluster == cluster && o.name.starts_with("tofu-controller-"))
            .unwrap();
        let container = &pod.status.pod.as_ref().unwrap().containers[0];
        assert_eq!(
            container.waiting_reason.as_deref(),
            Some("ImagePullBackOff")
        );
        assert_eq!(
            container.waiting_message.as_deref(),
            Some("Back-off pulling image \"ghcr.io/flux-iac/tofu-controller:v0.16.0-rc.5\"")
        );
        assert!(
            pod.status.pod.as_ref().unwrap().started.unwrap() <= started() - TimeDelta::hours(47)
        );
        let release = get(
            &world,
            &format!("{cluster}/HelmRelease/flux-system/tofu-controller"),
        );
        assert_eq!(ready(release).0, ConditionStatus::True);
        let tf = get(
            &world,
            &format!("{cluster}/Terraform/flux-system/nlb-security-groups"),
        );
        assert_eq!(
            ready(tf),
            (ConditionStatus::True, "TerraformOutputsWritten")
        );
        assert_eq!(
            reconciling(tf),
            Some(("Progressing", "Fulfilling prerequisites"))
        );
        past(tf, "Reconciling", TimeDelta::days(7));
        let infra = get(
            &world,
            &format!("{cluster}/Kustomization/flux-system/infra-network"),
        );
        assert_eq!(ready(infra), (ConditionStatus::False, "HealthCheckFailed"));
        assert_eq!(
            infra.condition("Ready").unwrap().message,
            "timeout waiting for: [Terraform/flux-system/nlb-security-groups status: 'InProgress']"
        );
        assert_eq!(infra.spec.flux.health_checks[0].kind, "Terraform");
        past(infra, "Ready", TimeDelta::days(7));
        for blocked in [
            "Kustomization/flux-system/networking-config",
            "Kustomization/tenants/tenants",
        ] {
            let object = get(&world, &format!("{cluster}/{blocked}"));
            assert_eq!(
                ready(object),
                (ConditionStatus::False, "DependencyNotReady"),
                "{blocked}"
            );
        }
        let config = get(
            &world,
            &format!("{cluster}/Kustomization/flux-system/networking-config"),
        );
        assert_eq!(
            config.condition("Ready").unwrap().message,
            "dependency 'flux-system/infra-network' is not ready"
        );
    }

    // b. NetOp: release Ready on 2.14.0, 2 of 3 available, the new pod crash-looping on the CRD.
    let netop = get(&world, "dev-1/HelmRelease/networking/netop");
    assert_eq!(ready(netop), (ConditionStatus::True, "UpgradeSucceeded"));
    assert_eq!(
        netop
            .status
            .flux
            .release
            .as_ref()
            .unwrap()
            .chart_version
            .as_deref(),
        Some("2.14.0")
    );
    past(netop, "Ready", TimeDelta::hours(20));
    let w = get(&world, "dev-1/Deployment/networking/netop")
        .status
        .workload
        .clone()
        .unwrap();
    assert_eq!((w.desired, w.available, w.updated), (3, 2, Some(1)));
    let crashing: Vec<&Object> = world
        .values()
        .filter(|o| o.cluster == "dev-1" && o.kind == Kind::Pod && o.name.starts_with("netop-"))
        .filter(|o| {
            o.status.pod.as_ref().unwrap().containers[0]
                .waiting_reason
                .as_deref()
                == Some("CrashLoopBackOff")
        })
        .collect();
    assert_eq!(crashing.len(), 1);
    let container = &crashing[0].status.pod.as_ref().unwrap().containers[0];
    assert!(container.restarts > 100, "{}", container.restarts);
    assert_eq!(
        container
            .last_terminated
            .as_ref()
            .and_then(|t| t.reason.as_deref()),
        Some("Error")
    );
    let raw = world_value("dev-1", &crashing[0].name);
    let message = raw["status"]["containerStatuses"][0]["lastState"]["terminated"]["message"]
        .as_str()
        .unwrap();
    assert!(message.contains(
        r#"no matches for kind \"RateLimitConfig\" in version \"ratelimit.solo.io/v1alpha1\""#
    ));
    assert!(
        !world.contains_key("dev-1/CustomResourceDefinition//ratelimitconfigs.ratelimit.solo.io")
    );
    assert!(
        world
            .contains_key("staging-1/CustomResourceDefinition//ratelimitconfigs.ratelimit.solo.io")
    );
    let gateway = get(&world, "dev-1/HelmRelease/gateway-system/gateway");
    assert_eq!(
        gateway
            .status
            .flux
            .release
            .as_ref()
            .unwrap()
            .chart_version
            .as_deref(),
        Some("1.5.0")
    );

    // c. RBAC Forbidden on staging: failed child behind its generation, root health check failed.
    let config = get(&world, "staging-1/Kustomization/flux-system/gateway-config");
    assert_eq!(
        ready(config),
        (ConditionStatus::False, "ReconciliationFailed")
    );
    let message = &config.condition("Ready").unwrap().message;
    assert!(
        message.starts_with("GlobalNetworkPolicy/allow-gateway-ingress dry-run failed: "),
        "{message}"
    );
    assert!(
        message.contains("User \"system:serviceaccount:flux-system:config-deployer\" cannot patch")
    );
    assert_ne!(
        config.status.flux.last_attempted_revision,
        config.status.flux.last_applied_revision
    );
    assert_eq!(
        (config.generation, config.status.observed_generation),
        (Some(4), Some(3))
    );
    past(config, "Ready", TimeDelta::minutes(40));
    let root = get(&world, "staging-1/Kustomization/flux-system/gateway");
    assert_eq!(ready(root), (ConditionStatus::False, "HealthCheckFailed"));
    assert!(
        root.spec
            .flux
            .health_checks
            .iter()
            .any(|h| h.name == "gateway-config")
    );
    let apps = get(&world, "staging-1/Kustomization/flux-system/gateway-apps");
    assert_ne!(
        apps.status.flux.last_applied_revision,
        config.status.flux.last_applied_revision
    );

    // d. observability stuck mid-run for hours on prod-us-1.
    let stuck = get(&world, "prod-us-1/Kustomization/flux-system/observability");
    assert_eq!(ready(stuck), (ConditionStatus::Unknown, "Progressing"));
    assert_eq!(
        stuck.condition("Ready").unwrap().message,
        "Reconciliation in progress"
    );
    assert_eq!(reconciling(stuck).unwrap().0, "Progressing");
    assert_ne!(
        stuck.status.flux.last_attempted_revision,
        stuck.status.flux.last_applied_revision
    );
    past(stuck, "Ready", TimeDelta::hours(3));
}

fn world_value(cluster: &str, name: &str) -> serde_json::Value {
    world(started(), at(0))
        .into_iter()
        .find(|(c, v)| c == cluster && v["metadata"]["name"] == name)
        .unwrap()
        .1
}

#[test]
fn the_gatekeeper_denial_appears_at_60_and_clears_at_150_with_a_new_revision() {
    let edge = |seconds| {
        get(
            &objects(seconds),
            "prod-us-1/Kustomization/flux-system/gateway-edge",
        )
        .clone()
    };
    for loop_start in [0, LOOP_PERIOD_SECS * 5] {
        let before = edge(loop_start + 59);
        assert_eq!(ready(&before).0, ConditionStatus::True);
        for seconds in [60, 100, 149] {
            let denied = edge(loop_start + seconds);
            assert_eq!(
                ready(&denied),
                (ConditionStatus::False, "ReconciliationFailed")
            );
            let message = &denied.condition("Ready").unwrap().message;
            assert!(message.contains(
                "admission webhook \"validation.gatekeeper.sh\" denied the request: [lb-whitelist]"
            ));
            assert!(message.contains("K8sRequiredLabels"));
            assert_eq!(
                denied.status.flux.last_applied_revision,
                before.status.flux.last_applied_revision
            );
            assert_ne!(
                denied.status.flux.last_attempted_revision,
                denied.status.flux.last_applied_revision
            );
            assert_eq!(
                denied.condition("Ready").unwrap().last_transition,
                Some(at(loop_start + 60))
            );
        }
        let fixed = edge(loop_start + 150);
        assert_eq!(
            ready(&fixed),
            (ConditionStatus::True, "ReconciliationSucceeded")
        );
        assert_ne!(
            fixed.status.flux.last_applied_revision,
            before.status.flux.last_applied_revision
        );
        assert_ne!(
            fixed.status.flux.last_applied_revision,
            edge(loop_start + 100).status.flux.last_attempted_revision
        );
        // The root waits on its child meanwhile, then converges with it.
        let root = get(
            &objects(loop_start + 100),
            "prod-us-1/Kustomization/flux-system/gateway",
        )
        .clone();
        assert_eq!(ready(&root), (ConditionStatus::Unknown, "Progressing"));
    }
    // Elsewhere the same commits apply cleanly.
    let staging = get(
        &objects(100),
        "dev-1/Kustomization/flux-system/gateway-edge",
    )
    .clone();
    assert_eq!(ready(&staging).0, ConditionStatus::True);
}

#[test]
fn the_routine_helm_run_shows_ready_and_reconciling_for_20_seconds() {
    let collector = |seconds| {
        get(
            &objects(seconds),
            "staging-1/HelmRelease/observability/collector",
        )
        .clone()
    };
    for loop_start in [0, LOOP_PERIOD_SECS * 3] {
        assert_eq!(reconciling(&collector(loop_start + 199)), None);
        for seconds in [200, 219] {
            let running = collector(loop_start + seconds);
            assert_eq!(ready(&running).0, ConditionStatus::True);
            assert_eq!(
                reconciling(&running),
                Some(("Progressing", "Fulfilling prerequisites"))
            );
        }
        assert_eq!(reconciling(&collector(loop_start + 220)), None);
    }
}

/// The first second at which `cluster` applied `version` of tenants, within the first loop.
fn applied_at(cluster: &str, version: &str) -> Option<i64> {
    (0..LOOP_PERIOD_SECS).step_by(5).find(|&seconds| {
        let world = objects(seconds);
        let tenants = get(&world, &format!("{cluster}/Kustomization/tenants/tenants"));
        let applied = tenants
            .status
            .flux
            .last_applied_revision
            .as_deref()
            .unwrap();
        applied.starts_with(&format!("{version}@")) && ready(tenants).0 == ConditionStatus::True
    })
}

#[test]
fn tenants_roll_out_ring_by_ring_and_back() {
    let first = |ring: &str| {
        DEMO_CLUSTERS
            .iter()
            .filter(|c| c.label("ring") == Some(ring) && !c.name.starts_with("prod-eu"))
            .map(|c| {
                applied_at(c.name, "v3.2.0")
                    .unwrap_or_else(|| panic!("{} never got v3.2.0", c.name))
            })
            .min()
            .unwrap()
    };
    let order: Vec<i64> = RINGS.iter().map(|ring| first(ring)).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert_eq!(order, vec![50, 110, 170]);
    // Progressing for 30 s in between: attempted the new revision, not yet applied, pods rolling.
    let world = objects(25);
    let dev = get(&world, "dev-1/Kustomization/tenants/tenants");
    assert_eq!(ready(dev), (ConditionStatus::Unknown, "Progressing"));
    assert_eq!(reconciling(dev).unwrap().0, "Progressing");
    assert!(
        dev.status
            .flux
            .last_attempted_revision
            .as_deref()
            .unwrap()
            .starts_with("v3.2.0@sha256:")
    );
    assert!(
        dev.status
            .flux
            .last_applied_revision
            .as_deref()
            .unwrap()
            .starts_with("v3.1.9@sha256:")
    );
    let api = get(&world, "dev-1/Deployment/tenants/tenant-api")
        .status
        .workload
        .clone()
        .unwrap();
    assert_eq!((api.desired, api.available, api.updated), (2, 2, Some(1)));
    let source = get(&world, "staging-1/OCIRepository/tenants/tenants");
    assert!(
        source
            .status
            .flux
            .artifact_revision
            .as_deref()
            .unwrap()
            .starts_with("v3.1.9@")
    );
    // Blocked prod-eu clusters see the new artifact but never apply it.
    let world = objects(200);
    let source = get(&world, "prod-eu-1/OCIRepository/tenants/tenants");
    assert!(
        source
            .status
            .flux
            .artifact_revision
            .as_deref()
            .unwrap()
            .starts_with("v3.2.0@")
    );
    let tenants = get(&world, "prod-eu-1/Kustomization/tenants/tenants");
    assert!(
        tenants
            .status
            .flux
            .last_applied_revision
            .as_deref()
            .unwrap()
            .starts_with("v3.1.9@")
    );
    // The next loop rolls back in the same order.
    let world = objects(LOOP_PERIOD_SECS + 55);
    let version = |cluster: &str| {
        let tenants = get(&world, &format!("{cluster}/Kustomization/tenants/tenants"));
        tenants.status.flux.last_applied_revision.clone().unwrap()[..6].to_string()
    };
    assert_eq!(
        (version("dev-1").as_str(), version("staging-1").as_str()),
        ("v3.1.9", "v3.2.0")
    );
}

#[test]
fn every_cluster_runs_flux_and_every_domain_is_versioned() {
    let world = objects(0);
    let domains: Vec<serde_json::Value> = crate::yaml::from_str(DEMO_DOMAINS_YAML).unwrap();
    assert_eq!(domains.len(), 4);
    for cluster in DEMO_CLUSTERS {
        let c = cluster.name;
        for controller in [
            "source-controller",
            "kustomize-controller",
            "helm-controller",
            "notification-controller",
            "tofu-controller",
        ] {
            let deployment = get(&world, &format!("{c}/Deployment/flux-system/{controller}"));
            assert_eq!(deployment.label("app.kubernetes.io/part-of"), Some("flux"));
            assert_eq!(deployment.spec.selector.get("app"), Some(controller));
        }
        get(
            &world,
            &format!("{c}/GitRepository/flux-system/flux-system"),
        );
        get(
            &world,
            &format!("{c}/Kustomization/flux-system/flux-system"),
        );
        let oci = get(
            &world,
            &format!("{c}/HelmRepository/gateway-system/gateway-charts"),
        );
        assert!(!oci.status.present, "an OCI HelmRepository has no status");
        for domain in &domains {
            let version = &domain["version"];
            let kind = version["kind"].as_str().unwrap_or("HelmRelease");
            let id = format!(
                "{c}/{kind}/{}/{}",
                version["namespace"].as_str().unwrap(),
                version["name"].as_str().unwrap()
            );
            let object = get(&world, &id);
            if let Some(label) = domain["select"]["labels"][DOMAIN_LABEL].as_str() {
                assert_eq!(object.label(DOMAIN_LABEL), Some(label), "{id}");
            }
        }
        for object in world
            .values()
            .filter(|o| o.cluster == c && o.kind.is_flux())
        {
            let in_flux_system = object.namespace == "flux-system"
                && [
                    "flux-system",
                    "tofu-controller",
                    "flux-system-tofu-controller",
                ]
                .contains(&object.name.as_str());
            assert!(
                in_flux_system || object.label(DOMAIN_LABEL).is_some(),
                "{} has no domain",
                object.id()
            );
        }
    }
}
