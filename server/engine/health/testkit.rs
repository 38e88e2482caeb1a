//! The engine tests' world: the standard healthy objects of a fixed `now` (real field paths,
//! reasons and messages), built with the [`crate::objects`] builders and parsed through
//! `parse_object` exactly like real input, and a one-call evaluation.

use super::{
    ClusterInfo, DomainSpec, Evaluation, Input, RootCause, State, Thresholds, Verdict, evaluate,
    evaluate_timed,
};
use crate::model::{Object, parse_object};
use crate::objects::{
    self, Artifact, ChartSource, ContainerState, ContainerStatus, GitRepository, HelmChart,
    HelmRelease, HelmReleaseStatus, HelmRepository, HistoryEntry, Kustomization,
    KustomizationStatus, Meta, Pod, PodStatus, Ref, SourceStatus, Terraform, TerraformStatus,
    Truth, Workload, WorkloadKind, WorkloadStatus,
};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};

pub const CLUSTER: &str = "prod";
pub const SHA: &str = "main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
pub const NEW_SHA: &str = "main@sha1:2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

pub fn now() -> DateTime<Utc> {
    "2026-11-29T12:00:00Z".parse().expect("valid time")
}

/// An RFC 3339 time `minutes` before [`now`].
pub fn ago(minutes: i64) -> String {
    (now() - TimeDelta::minutes(minutes)).to_rfc3339()
}

/// `minutes` before [`now`].
fn minutes_ago(minutes: i64) -> DateTime<Utc> {
    now() - TimeDelta::minutes(minutes)
}

fn truth(status: &str) -> Truth {
    match status {
        "True" => Truth::True,
        "False" => Truth::False,
        "Unknown" => Truth::Unknown,
        other => panic!("a condition status is True, False or Unknown, not {other}"),
    }
}

/// A Flux condition set at generation 1, `minutes_ago` before [`now`].
pub fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    minutes_ago: i64,
) -> Value {
    objects::condition(
        type_,
        truth(status),
        reason,
        message,
        self::minutes_ago(minutes_ago),
        Some(1),
    )
}

pub fn ready(reason: &str, message: &str) -> Value {
    condition("Ready", "True", reason, message, 600)
}

pub fn not_ready(reason: &str, message: &str, minutes_ago: i64) -> Value {
    condition("Ready", "False", reason, message, minutes_ago)
}

/// Replaces the object's conditions.
pub fn with_conditions(mut value: Value, conditions: Vec<Value>) -> Value {
    value["status"]["conditions"] = Value::Array(conditions);
    value
}

/// Moves the object to `namespace` (Flux installed elsewhere than flux-system).
pub fn in_namespace(mut value: Value, namespace: &str) -> Value {
    value["metadata"]["namespace"] = json!(namespace);
    value
}

/// Points a Kustomization or HelmRelease at another source of the same kind.
pub fn with_source(mut value: Value, name: &str) -> Value {
    value["spec"]["sourceRef"]["name"] = json!(name);
    value
}

pub fn with_label(mut value: Value, key: &str, label: &str) -> Value {
    value["metadata"]["labels"][key] = json!(label);
    value
}

/// Labels an object as applied by a Kustomization or HelmRelease (`kustomize`/`helm`).
pub fn applied_by(value: Value, tool: &str, namespace: &str, name: &str) -> Value {
    let value = with_label(value, &format!("{tool}.toolkit.fluxcd.io/name"), name);
    with_label(
        value,
        &format!("{tool}.toolkit.fluxcd.io/namespace"),
        namespace,
    )
}

/// Generation 1, created long before anything the tests look at.
fn meta(name: &str, namespace: &str) -> Meta {
    Meta::new(namespace, name, minutes_ago(10_000))
}

/// A healthy source's status at generation 1.
fn stored(artifact: Artifact, conditions: Vec<Value>) -> Option<SourceStatus> {
    Some(SourceStatus {
        observed_generation: 1,
        artifact: Some(artifact),
        conditions,
    })
}

pub fn git_repository(name: &str, revision: &str) -> Value {
    let message = format!("stored artifact for revision '{revision}'");
    GitRepository {
        meta: meta(name, "flux-system"),
        interval: "1m".into(),
        timeout: None,
        url: format!("https://git.example.com/{name}"),
        branch: Some("main".into()),
        status: stored(
            Artifact::new(revision, minutes_ago(600)),
            vec![
                ready("Succeeded", &message),
                condition("ArtifactInStorage", "True", "Succeeded", "stored", 600),
            ],
        ),
    }
    .to_json()
}

pub fn kustomization(name: &str, depends_on: &[&str]) -> Value {
    let source = Ref::to("GitRepository", "flux-system");
    let mut kustomization = Kustomization::new(
        meta(name, "flux-system"),
        source,
        &format!("./{name}"),
        "10m",
    );
    kustomization.depends_on = depends_on.iter().map(|d| Ref::named(d)).collect();
    kustomization.status = Some(KustomizationStatus {
        observed_generation: 1,
        last_attempted_revision: Some(SHA.into()),
        last_applied_revision: Some(SHA.into()),
        conditions: vec![ready(
            "ReconciliationSucceeded",
            &format!("Applied revision: {SHA}"),
        )],
        inventory: None,
    });
    kustomization.to_json()
}

pub fn helm_repository(name: &str) -> Value {
    HelmRepository {
        meta: meta(name, "flux-system"),
        interval: "1h".into(),
        timeout: None,
        url: "https://charts.example.com".into(),
        oci: false,
        status: stored(
            Artifact::revision("sha256:0123456789abcdef"),
            vec![ready(
                "Succeeded",
                "stored artifact: revision 'sha256:0123456789abcdef'",
            )],
        ),
    }
    .to_json()
}

pub fn helm_chart(
    release_namespace: &str,
    release: &str,
    repository: &str,
    version: &str,
) -> Value {
    let message = format!("pulled '{release}' chart with version '{version}'");
    HelmChart {
        meta: meta(&format!("{release_namespace}-{release}"), "flux-system"),
        chart: release.into(),
        version: "*".into(),
        interval: "1h".into(),
        source: Ref::to("HelmRepository", repository),
        status: stored(
            Artifact::revision(version),
            vec![ready("ChartPullSucceeded", &message)],
        ),
    }
    .to_json()
}

pub fn helm_release(namespace: &str, name: &str, repository: &str) -> Value {
    let message = format!(
        "Helm upgrade succeeded for release {namespace}/{name}.v4 with chart {name}@2.14.0"
    );
    HelmRelease {
        meta: meta(name, namespace),
        interval: "30m".into(),
        chart: ChartSource::Template {
            chart: name.into(),
            version: Some("2.x".into()),
            interval: None,
            source: Ref::to("HelmRepository", repository).in_namespace("flux-system"),
        },
        status: Some(HelmReleaseStatus {
            observed_generation: 1,
            helm_chart: Some(format!("flux-system/{namespace}-{name}")),
            last_attempted_revision: Some("2.14.0".into()),
            history: vec![HistoryEntry {
                chart_name: name.into(),
                chart_version: "2.14.0".into(),
                app_version: None,
                status: "deployed".into(),
                version: 4,
            }],
            conditions: vec![ready("UpgradeSucceeded", &message)],
        }),
    }
    .to_json()
}

pub fn terraform(name: &str) -> Value {
    Terraform {
        meta: meta(name, "flux-system"),
        interval: "12h".into(),
        path: "./nlb".into(),
        approve_plan: "auto".into(),
        source: Ref::to("GitRepository", "flux-system"),
        status: Some(TerraformStatus {
            observed_generation: 1,
            last_attempted_revision: SHA.into(),
            last_applied_revision: SHA.into(),
            last_planned_revision: None,
            conditions: vec![ready("TerraformPlannedNoChanges", "Plan no changes")],
        }),
    }
    .to_json()
}

/// A workload with `available` of `replicas` available; its pods select `app=<name>`.
pub fn deployment(namespace: &str, name: &str, replicas: i64, available: i64) -> Value {
    Workload {
        kind: WorkloadKind::Deployment,
        meta: meta(name, namespace),
        app: name.into(),
        container: "manager".into(),
        image: format!("ghcr.io/example/{name}:v1.0.0"),
        replicas,
        status: Some(WorkloadStatus {
            observed_generation: 1,
            replicas,
            ready: available,
            available,
            updated: replicas,
            ..WorkloadStatus::default()
        }),
    }
    .to_json()
}

/// A Flux controller Deployment in flux-system.
pub fn controller(name: &str, available: i64) -> Value {
    let value = deployment("flux-system", name, 1, available);
    with_label(value, "app.kubernetes.io/part-of", "flux")
}

/// The standard controllers, all running.
pub fn flux_controllers() -> Vec<Value> {
    [
        "source-controller",
        "kustomize-controller",
        "helm-controller",
    ]
    .into_iter()
    .map(|name| controller(name, 1))
    .collect()
}

/// A pod of Deployment `app` (owned through its ReplicaSet), waiting for `waiting` if given.
pub fn pod(namespace: &str, app: &str, suffix: &str, waiting: Option<(&str, &str)>) -> Value {
    let started = minutes_ago(60);
    let image = format!("ghcr.io/example/{app}:v1.0.0");
    let state = match waiting {
        Some((reason, message)) => ContainerState::Waiting {
            reason: reason.into(),
            message: Some(message.into()),
        },
        None => ContainerState::Running {
            started_at: started,
        },
    };
    let replica_set = format!("{app}-5d9c7b");
    Pod {
        meta: Meta::new(namespace, &format!("{replica_set}-{suffix}"), started)
            .label("app", app)
            .owned_by("ReplicaSet", &replica_set),
        container: "manager".into(),
        image: image.clone(),
        restart_policy: None,
        service_account: None,
        status: Some(PodStatus {
            phase: if waiting.is_some() {
                "Pending"
            } else {
                "Running"
            }
            .into(),
            start_time: Some(started),
            conditions: Vec::new(),
            containers: vec![ContainerStatus {
                name: "manager".into(),
                image,
                ready: waiting.is_none(),
                restart_count: 0,
                state,
                last_state: None,
            }],
        }),
    }
    .to_json()
}

pub fn parse(value: &Value) -> Object {
    parse_object(CLUSTER, value).expect("test objects are valid Kubernetes objects")
}

pub struct Run {
    pub evaluation: Evaluation,
    /// When time alone would change the evaluation ([`super::Timed::due`]).
    pub due: Option<DateTime<Utc>>,
}

impl Run {
    pub fn verdict(&self, kind: &str, namespace: &str, name: &str) -> &Verdict {
        let id = format!("{CLUSTER}/{kind}/{namespace}/{name}");
        self.evaluation
            .objects
            .iter()
            .find(|v| v.id.as_str() == id)
            .unwrap_or_else(|| panic!("no verdict for {id}"))
    }

    pub fn state(&self, kind: &str, namespace: &str, name: &str) -> State {
        self.verdict(kind, namespace, name).state
    }

    /// Asserts an object's state and reason together (a failure shows the whole verdict) and
    /// returns the verdict for the checks that follow.
    #[track_caller]
    pub fn assert_verdict(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
        state: State,
        reason: &str,
    ) -> &Verdict {
        let verdict = self.verdict(kind, namespace, name);
        assert_eq!(
            (verdict.state, verdict.reason.as_str()),
            (state, reason),
            "{verdict:?}"
        );
        verdict
    }

    /// The root-cause ids of an object, as plain strings.
    pub fn roots(&self, kind: &str, namespace: &str, name: &str) -> Vec<&str> {
        self.verdict(kind, namespace, name)
            .root_causes
            .iter()
            .map(|r| r.as_str())
            .collect()
    }

    pub fn root_cause(&self, id: &str) -> &RootCause {
        self.evaluation
            .root_causes
            .iter()
            .find(|r| r.id.as_str() == id)
            .unwrap_or_else(|| panic!("no root cause {id}"))
    }
}

pub fn id(kind: &str, namespace: &str, name: &str) -> String {
    format!("{CLUSTER}/{kind}/{namespace}/{name}")
}

pub fn run(values: &[Value]) -> Run {
    run_with(values, &[], &[], &Thresholds::default())
}

pub fn run_with(
    values: &[Value],
    clusters: &[ClusterInfo],
    domains: &[DomainSpec],
    thresholds: &Thresholds,
) -> Run {
    run_seen(values, clusters, domains, thresholds, &Default::default())
}

/// As [`run_with`], with when the caller first saw objects in progress.
pub fn run_seen(
    values: &[Value],
    clusters: &[ClusterInfo],
    domains: &[DomainSpec],
    thresholds: &Thresholds,
    seen_in_progress: &super::SeenInProgress,
) -> Run {
    let objects: Vec<Object> = values.iter().map(parse).collect();
    let timed = evaluate_timed(&Input {
        objects: &objects,
        clusters,
        domains,
        thresholds,
        now: now(),
        seen_in_progress,
    });
    Run {
        evaluation: timed.evaluation,
        due: timed.due,
    }
}

/// Evaluates objects spread over clusters: `(cluster, object)`.
pub fn evaluate_on(
    placed: &[(&str, Value)],
    clusters: &[ClusterInfo],
    domains: &[DomainSpec],
    thresholds: &Thresholds,
) -> Evaluation {
    let objects: Vec<Object> = placed
        .iter()
        .map(|(cluster, value)| parse_object(cluster, value).expect("valid object"))
        .collect();
    evaluate(&Input {
        objects: &objects,
        clusters,
        domains,
        thresholds,
        now: now(),
        seen_in_progress: &Default::default(),
    })
}

/// Ids as plain strings, to compare with [`id`]'s.
pub fn as_strs(ids: &[crate::model::ObjectId]) -> Vec<&str> {
    ids.iter().map(|id| id.as_str()).collect()
}

/// YAML as the server reads it (YAML 1.2's booleans: `y` and `on` are words), for tests that
/// write a domain or thresholds as the configuration file would.
#[cfg(test)]
pub(crate) fn from_yaml<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, serde_saphyr::Error> {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    serde_saphyr::from_str_with_options(text, options)
}
