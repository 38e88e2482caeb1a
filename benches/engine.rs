//! Health engine throughput on synthetic fleets of 10k, 100k and 1M objects: Kustomizations in
//! dependsOn chains applying HelmReleases with their charts, workloads and pods, the Flux
//! controllers per cluster, and a share of failures. `cargo bench --bench engine -- 10000`
//! runs only the sizes given.

use chrono::{DateTime, TimeDelta, Utc};
use fleetglass::health::{Input, Thresholds, evaluate};
use fleetglass::model::{
    Condition, ConditionStatus, ContainerState, Kind, Labels, Object, OwnerRef, PodStatus, Ref,
    Spec, Status, WorkloadStatus,
};
use std::time::Instant;

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
/// One cluster per this many objects, like a fleet of mid-sized clusters.
const OBJECTS_PER_CLUSTER: usize = 10_000;
const REVISION: &str = "main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

mod support;

fn main() {
    fleetglass_allocator::configure();
    let wanted: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes: Vec<usize> = if !wanted.is_empty() {
        wanted
    } else if support::full() {
        SIZES.to_vec()
    } else {
        vec![2_000]
    };
    let now: DateTime<Utc> = "2026-11-29T12:00:00Z".parse().expect("valid time");
    let thresholds = Thresholds::default();
    for size in sizes {
        let objects = fleet(size, now);
        let input = Input {
            objects: &objects,
            clusters: &[],
            domains: &[],
            thresholds: &thresholds,
            now,
            seen_in_progress: &Default::default(),
        };
        let runs = (1_000_000 / size).clamp(1, 5);
        let (mut best_wall, mut best_cpu) = (f64::MAX, f64::MAX);
        let mut problems = 0;
        for _ in 0..runs {
            let (started, cpu_started) = (Instant::now(), cpu_seconds());
            let evaluation = evaluate(&input);
            best_wall = best_wall.min(started.elapsed().as_secs_f64());
            best_cpu = best_cpu.min(cpu_seconds() - cpu_started);
            problems = evaluation
                .objects
                .iter()
                .filter(|v| v.state.is_problem())
                .count();
        }
        let per_object = |seconds: f64| seconds * 1e9 / objects.len() as f64;
        println!(
            "{:>9} objects: wall {:>8.1} ms ({:>5.0} ns/object), cpu {:>8.1} ms ({:>5.0} ns/object); {problems} in a problem state; best of {runs}",
            objects.len(),
            best_wall * 1e3,
            per_object(best_wall),
            best_cpu * 1e3,
            per_object(best_cpu),
        );
    }
}

/// This thread's CPU time (Linux schedstat), so results on a shared machine are comparable;
/// 0 elsewhere.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let nanos: f64 = stat
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0.0);
    nanos / 1e9
}

/// About `size` objects: per cluster the controllers and sources, then apps of six objects.
fn fleet(size: usize, now: DateTime<Utc>) -> Vec<Object> {
    let mut objects = Vec::with_capacity(size + 16);
    let clusters = size.div_ceil(OBJECTS_PER_CLUSTER);
    for c in 0..clusters {
        let cluster = format!("cluster-{c:04}");
        for controller in [
            "source-controller",
            "kustomize-controller",
            "helm-controller",
        ] {
            objects.push(deployment(&cluster, "flux-system", controller, 1, now));
        }
        objects.push(source(
            &cluster,
            Kind::GitRepository,
            "flux-system",
            REVISION,
            now,
        ));
        objects.push(source(
            &cluster,
            Kind::HelmRepository,
            "charts",
            "sha256:0123456789abcdef",
            now,
        ));
        let apps = (OBJECTS_PER_CLUSTER.min(size) - 5) / 6;
        for app in 0..apps {
            add_app(&mut objects, &cluster, app, now);
        }
    }
    objects
}

fn add_app(objects: &mut Vec<Object>, cluster: &str, app: usize, now: DateTime<Utc>) {
    let name = format!("app-{app}");
    let namespace = format!("team-{}", app % 40);
    let mut kustomization = flux(cluster, Kind::Kustomization, "flux-system", &name, now);
    kustomization.spec.flux.to_mut().source_ref =
        Some(reference("GitRepository", "flux-system", "flux-system"));
    if !app.is_multiple_of(10) {
        // Chains of ten: each app waits for the previous one.
        kustomization.spec.flux.to_mut().depends_on.push(reference(
            "Kustomization",
            &format!("app-{}", app - 1),
            "flux-system",
        ));
    }
    if app % 100 == 7 {
        kustomization.status.conditions[0] =
            condition("Ready", ConditionStatus::False, "BuildFailed", now);
    }
    let mut release = flux(cluster, Kind::HelmRelease, &namespace, &name, now);
    release.spec.flux.to_mut().source_ref =
        Some(reference("HelmRepository", "charts", "flux-system"));
    release.labels = applied_labels("kustomize", "flux-system", &name);
    let mut chart = flux(
        cluster,
        Kind::HelmChart,
        "flux-system",
        &format!("{namespace}-{name}"),
        now,
    );
    chart.spec.flux.to_mut().source_ref =
        Some(reference("HelmRepository", "charts", "flux-system"));
    chart.status.flux.to_mut().artifact_revision = Some("6.0.3".into());
    let mut workload = deployment(cluster, &namespace, &name, 2, now);
    workload.labels = applied_labels("helm", &namespace, &name);
    objects.extend([kustomization, release, chart, workload]);
    for replica in 0..2 {
        let crash = app % 50 == 3 && replica == 1;
        objects.push(pod(cluster, &namespace, &name, replica, crash));
    }
}

fn base(cluster: &str, kind: Kind, namespace: &str, name: &str) -> Object {
    Object {
        cluster: cluster.into(),
        kind,
        api_version: "".into(),
        namespace: namespace.into(),
        name: name.into(),
        generation: Some(1),
        labels: Labels::default(),
        deleting: false,
        created: None,
        deleting_since: None,
        owners: Vec::new(),
        reconcile_requested: None,
        spec: Spec::default(),
        status: Status {
            present: true,
            observed_generation: Some(1),
            ..Status::default()
        },
        defects: Vec::new(),
    }
}

fn flux(cluster: &str, kind: Kind, namespace: &str, name: &str, now: DateTime<Utc>) -> Object {
    let mut object = base(cluster, kind, namespace, name);
    object.spec.flux.to_mut().interval_secs = Some(600);
    object.status.conditions.push(condition(
        "Ready",
        ConditionStatus::True,
        "ReconciliationSucceeded",
        now,
    ));
    object.status.flux.to_mut().last_applied_revision = Some(REVISION.into());
    object.status.flux.to_mut().last_attempted_revision = Some(REVISION.into());
    object
}

fn source(cluster: &str, kind: Kind, name: &str, revision: &str, now: DateTime<Utc>) -> Object {
    let mut object = flux(cluster, kind, "flux-system", name, now);
    object.status.flux.to_mut().artifact_revision = Some(revision.into());
    object
}

fn deployment(
    cluster: &str,
    namespace: &str,
    name: &str,
    replicas: i64,
    now: DateTime<Utc>,
) -> Object {
    let mut object = base(cluster, Kind::Deployment, namespace, name);
    object.spec.replicas = Some(replicas);
    object.spec.selector = Labels::from([("app".to_string(), name.to_string())]);
    object.spec.images = vec![format!("ghcr.io/example/{name}:v1.0.0")];
    object.status.workload = Some(WorkloadStatus {
        desired: replicas,
        total: replicas,
        ready: replicas,
        available: replicas,
        updated: Some(replicas),
        revision_pending: false,
    });
    object.status.conditions.push(condition(
        "Available",
        ConditionStatus::True,
        "MinimumReplicasAvailable",
        now,
    ));
    object
}

fn pod(cluster: &str, namespace: &str, app: &str, replica: usize, crash: bool) -> Object {
    let mut object = base(
        cluster,
        Kind::Pod,
        namespace,
        &format!("{app}-5d9c7b-{replica}"),
    );
    object.labels = Labels::from([("app".to_string(), app.to_string())]);
    object.owners.push(OwnerRef {
        kind: "ReplicaSet".into(),
        name: format!("{app}-5d9c7b"),
    });
    let container = ContainerState {
        name: "main".into(),
        ready: !crash,
        waiting_reason: crash.then(|| "CrashLoopBackOff".to_string()),
        ..ContainerState::default()
    };
    object.status.pod = Some(Box::new(PodStatus {
        phase: Some("Running".into()),
        containers: vec![container],
        ..PodStatus::default()
    }));
    object
}

fn condition(type_: &str, status: ConditionStatus, reason: &str, now: DateTime<Utc>) -> Condition {
    Condition {
        type_: type_.into(),
        status,
        reason: reason.into(),
        message: String::new(),
        last_transition: Some(now - TimeDelta::hours(3)),
        last_update: None,
        observed_generation: Some(1),
    }
}

fn reference(kind: &str, name: &str, namespace: &str) -> Ref {
    Ref {
        kind: kind.into(),
        name: name.into(),
        namespace: namespace.into(),
    }
}

fn applied_labels(tool: &str, namespace: &str, name: &str) -> Labels {
    Labels::from([
        (format!("{tool}.toolkit.fluxcd.io/name"), name.to_string()),
        (
            format!("{tool}.toolkit.fluxcd.io/namespace"),
            namespace.to_string(),
        ),
    ])
}
