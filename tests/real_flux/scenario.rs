//! One scenario: its namespace (recreated), its Git repository, a fleetglass collector of its
//! own writing verdicts to a fresh Postgres database, and the steps whose stored verdicts are
//! held to the expectations in expect.rs. Each step's objects are saved under target/real-flux/
//! (and, with FLEETGLASS_UPDATE_FIXTURES=1, as tests/fixtures/real-flux/, once `fleetglass
//! evaluate` on the saved objects meets the same expectation).

use super::bed::{DEADLINE, FluxBed};
use super::common;
use super::report::{CLUSTER, Report, evaluate};
use chrono::TimeDelta;
use fleetglass::app::{Collector, Source};
use fleetglass::store::Store;
use serde_json::{Value, json};
use std::cell::Cell;
use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Once;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Thresholds (stuck after 20s) and one domain per scenario namespace.
pub fn config() -> PathBuf {
    repo().join("tests/fixtures/real-flux/config.yaml")
}

/// fleetglass as deployed: the kube collector on the test bed cluster (as its read-only user),
/// evaluating into its own Postgres database; verdicts are read back from the store.
pub struct Fleetglass {
    runtime: tokio::runtime::Runtime,
    store: Store,
    collector: Option<Collector>,
}

impl Fleetglass {
    fn start(bed: &FluxBed, holder: &str) -> Fleetglass {
        assert_eq!(
            bed.cluster, CLUSTER,
            "the fixtures name the cluster {CLUSTER}"
        );
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio runtime");
        let store = runtime.block_on(common::fresh_store());
        let mut settings = common::collector::config(&bed.readonly_kubeconfig, &[CLUSTER]);
        let file =
            fleetglass::config::from_file(&config()).expect("tests/fixtures/real-flux/config.yaml");
        settings.thresholds.stuck_after = file.thresholds.stuck_after;
        // (this machine runs builds beside the test bed: a slow probe must not read as a lost cluster)
        settings.thresholds.freshness = TimeDelta::seconds(30);
        settings.domains = file.domains;
        let collector = {
            let _context = runtime.enter();
            Collector::start(&settings, store.clone(), Source::Kube, holder.to_string())
        };
        Fleetglass {
            runtime,
            store,
            collector: Some(collector),
        }
    }

    /// The stored verdicts of the namespace's objects and of flux-system's (the controllers),
    /// the root causes among them and the namespace's domains, in the shape of
    /// `fleetglass evaluate`'s report (each object also carries its stored body).
    pub fn report(&self, ns: &str) -> Report {
        self.runtime.block_on(async {
            let mut records = common::collector::objects_in(&self.store, CLUSTER, ns).await;
            records.extend(common::collector::objects_in(&self.store, CLUSTER, "flux-system").await);
            let ids: HashSet<String> = records
                .iter()
                .map(|r| format!("{}/{}/{}/{}", r.verdict.cluster, r.verdict.kind, r.verdict.namespace, r.verdict.name))
                .collect();
            let objects: Vec<Value> = records
                .iter()
                .map(|r| {
                    json!({
                        "id": format!("{}/{}/{}/{}", r.verdict.cluster, r.verdict.kind, r.verdict.namespace, r.verdict.name),
                        "cluster": r.verdict.cluster, "kind": r.verdict.kind, "namespace": r.verdict.namespace, "name": r.verdict.name,
                        "state": r.verdict.state, "since": r.verdict.since, "reason": r.verdict.reason, "message": r.verdict.message,
                        "root_causes": r.root_causes, "body": r.body,
                    })
                })
                .collect();
            let root_causes: Vec<Value> = self
                .store
                .root_causes()
                .await
                .expect("read root causes")
                .into_iter()
                .filter(|c| ids.contains(&c.verdict.id.to_string()))
                .map(|c| json!({"id": c.verdict.id, "state": c.verdict.state, "reason": c.verdict.reason, "message": c.verdict.message, "affected": c.affected}))
                .collect();
            let domains: Vec<Value> = self
                .store
                .domain_verdicts()
                .await
                .expect("read domain verdicts")
                .into_iter()
                .filter(|d| d.cluster == CLUSTER && d.domain.starts_with(&format!("{ns}-")))
                .map(|d| {
                    json!({
                        "domain": d.domain, "cluster": d.cluster, "version": d.version, "state": d.state,
                        "fully_healthy": d.fully_healthy, "objects": d.objects, "healthy": d.healthy,
                        "blockers": d.blockers,
                    })
                })
                .collect();
            Report(json!({"cluster": CLUSTER, "objects": objects, "root_causes": root_causes, "domains": domains}))
        })
    }
}

impl Drop for Fleetglass {
    fn drop(&mut self) {
        if let Some(collector) = self.collector.take() {
            self.runtime.block_on(collector.stop());
        }
    }
}

thread_local! {
    /// Set while an expectation is tried on a step that may not have settled yet: its panic
    /// is the answer "not yet", not a failure to print.
    static TRYING: Cell<bool> = const { Cell::new(false) };
}

/// Whether `check` passes (does not panic) on `report`, without printing its panic.
fn holds(report: &Report, check: &dyn Fn(&Report)) -> bool {
    static QUIET_HOOK: Once = Once::new();
    QUIET_HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !TRYING.with(Cell::get) {
                default(info);
            }
        }));
    });
    TRYING.with(|t| t.set(true));
    let passed = catch_unwind(AssertUnwindSafe(|| check(report))).is_ok();
    TRYING.with(|t| t.set(false));
    passed
}

pub struct Scenario {
    pub bed: &'static FluxBed,
    pub ns: String,
    pub fleetglass: Fleetglass,
    started: Instant,
}

impl Drop for Scenario {
    fn drop(&mut self) {
        let outcome = if std::thread::panicking() {
            "failed"
        } else {
            "passed"
        };
        eprintln!(
            "real_flux: {}: {outcome} in {:.1?} (namespace reset, setup and every step)",
            self.ns,
            self.started.elapsed()
        );
    }
}

impl Scenario {
    pub fn new(ns: &str) -> Scenario {
        let bed = FluxBed::get();
        let started = Instant::now();
        // a rerun on a bed that is still up starts from nothing (Flux finalizers need the
        // controllers, which every scenario leaves running)
        bed.kubectl(&[
            "delete",
            "namespace",
            ns,
            "--ignore-not-found",
            "--wait",
            "--timeout=120s",
        ]);
        Scenario {
            bed,
            ns: ns.to_string(),
            fleetglass: Fleetglass::start(bed, &format!("real-flux-{ns}")),
            started,
        }
    }

    pub fn commit(&self, files: &[(&str, String)], message: &str) -> String {
        self.bed.commit(&self.ns, files, message)
    }

    /// Polls fleetglass's stored verdicts until `check` (an expectation of expect.rs) holds on
    /// them, at most DEADLINE, then saves the cluster's objects as step `step`. At the deadline
    /// `check` fails the test with its own message.
    pub fn expect(&self, step: &str, check: impl Fn(&Report)) -> Report {
        self.expect_stored(step, check, |_| {})
    }

    /// `expect`, and also `stored` (which reads what only the store has, like the objects'
    /// stored bodies) on the same stored verdicts; the saved step is held to `check` alone.
    pub fn expect_stored(
        &self,
        step: &str,
        check: impl Fn(&Report),
        stored: impl Fn(&Report),
    ) -> Report {
        let both = |report: &Report| {
            check(report);
            stored(report);
        };
        let deadline = Instant::now() + DEADLINE;
        let report = loop {
            let report = self.fleetglass.report(&self.ns);
            if holds(&report, &both) {
                break report;
            }
            if Instant::now() > deadline {
                eprintln!(
                    "real_flux: {}: step {step} not reached after {DEADLINE:?}; stored verdicts:",
                    self.ns
                );
                for o in report.0["objects"].as_array().into_iter().flatten() {
                    eprintln!(
                        "  {} {} ({}) root causes {}",
                        o["id"], o["state"], o["reason"], o["root_causes"]
                    );
                }
                both(&report);
                unreachable!("the expectation failed a moment ago");
            }
            std::thread::sleep(Duration::from_millis(500));
        };
        eprintln!(
            "real_flux: {}: step {step} seen in the store {:.1?} after the scenario began",
            self.ns,
            self.started.elapsed()
        );
        self.save(step, &check);
        report
    }

    /// Saves the namespace's objects as step `step` (target/real-flux/<step>.yaml); with
    /// FLEETGLASS_UPDATE_FIXTURES set, also as the fixture, once `fleetglass evaluate` on the
    /// saved objects meets `check` too (what tests/real_flux_fixtures.rs will assert).
    fn save(&self, step: &str, check: &dyn Fn(&Report)) {
        let dir = repo().join("target/real-flux");
        std::fs::create_dir_all(&dir).expect("target/real-flux");
        let file = dir.join(format!("{step}.yaml"));
        let update = std::env::var_os("FLEETGLASS_UPDATE_FIXTURES").is_some();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            let text = format!("# captured-at: {now}\n{}", self.bed.capture(&self.ns));
            std::fs::write(&file, &text).expect("save capture");
            if !update {
                return;
            }
            let evaluated = evaluate(&file, &config(), &now);
            if holds(&evaluated, check) {
                let fixture = repo().join(format!("tests/fixtures/real-flux/{step}.yaml"));
                std::fs::write(fixture, &text).expect("save fixture");
                return;
            }
            if Instant::now() > deadline {
                eprintln!(
                    "real_flux: {}: the capture of step {step} does not evaluate as the store did",
                    self.ns
                );
                check(&evaluated);
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Writes what a kubelet writes for a container in CrashLoopBackOff into the pods' status
    /// (kwok only drives pods from Pending to Running, so it leaves this alone).
    pub fn crash_loop_pods(&self, selector: &str) {
        let patch = r#"{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"False","reason":"ContainersNotReady","message":"containers with unready status: [app]"},{"type":"ContainersReady","status":"False","reason":"ContainersNotReady","message":"containers with unready status: [app]"}],"containerStatuses":[{"name":"app","image":"registry.testbed.invalid/webapp:1.2.0","imageID":"","ready":false,"started":false,"restartCount":6,"state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 2m40s restarting failed container=app"}},"lastState":{"terminated":{"exitCode":1,"reason":"Error"}}}]}}"#;
        self.patch_pod_status(selector, patch);
    }

    /// Patches the status of the namespace's pods matching `selector`, as their kubelet would.
    fn patch_pod_status(&self, selector: &str, patch: &str) {
        let pods = self
            .bed
            .kubectl(&["-n", &self.ns, "get", "pods", "-l", selector, "-o", "name"]);
        for pod in pods.lines().filter(|l| !l.is_empty()) {
            self.bed.kubectl(&[
                "-n",
                &self.ns,
                "patch",
                pod,
                "--subresource=status",
                "--type=strategic",
                "-p",
                patch,
            ]);
        }
    }
}

/// The namespace, the GitRepository `fleet` (this scenario's repository) and the
/// HelmRepository `charts` (the test bed's packaged charts).
pub fn namespace_and_sources(s: &Scenario) -> String {
    format!(
        r#"{namespace}---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: fleet, namespace: {ns}}}
spec: {{interval: 1m, timeout: 20s, url: "{git}", ref: {{branch: main}}}}
---
{charts}"#,
        namespace = namespace(&s.ns),
        charts = charts(s, "{}"),
        ns = s.ns,
        git = s.bed.git_url(&s.ns),
    )
}

/// The namespace and HelmRepository `charts` with `labels` (the sharding scenario labels it
/// for shard `apps`, as one placed under an app directory inherits it, seed 004:
/// source-controller-apps reconciles it, the main source-controller, watching
/// `!sharding.fluxcd.io/key`, cannot see it).
pub fn namespace_and_charts(s: &Scenario, labels: &str) -> String {
    format!("{}---\n{}", namespace(&s.ns), charts(s, labels))
}

fn namespace(ns: &str) -> String {
    format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n")
}

/// HelmRepository `charts` (the test bed's packaged charts) with `labels`.
fn charts(s: &Scenario, labels: &str) -> String {
    format!(
        r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {{name: charts, namespace: {ns}, labels: {labels}}}
spec: {{interval: 10m, url: "{helm}"}}
"#,
        ns = s.ns,
        helm = s.bed.helm_url,
    )
}

/// Sources plus Kustomization `infra` (wait, short timeout) and `apps` (dependsOn infra).
pub fn chain_objects(s: &Scenario) -> String {
    format!(
        r#"{sources}---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: infra, namespace: {ns}}}
spec:
  interval: 1m
  retryInterval: 10s
  timeout: 10s
  wait: true
  prune: true
  path: ./infra
  targetNamespace: {ns}
  sourceRef: {{kind: GitRepository, name: fleet}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: apps, namespace: {ns}}}
spec:
  interval: 1m
  retryInterval: 10s
  timeout: 2m
  dependsOn: [{{name: infra}}]
  prune: true
  path: ./apps
  targetNamespace: {ns}
  sourceRef: {{kind: GitRepository, name: fleet}}
"#,
        sources = namespace_and_sources(s),
        ns = s.ns,
    )
}

/// The repository content of a healthy chain: a Deployment under infra, a HelmRelease under apps.
pub fn chain_files() -> Vec<(&'static str, String)> {
    vec![
        ("infra/backend.yaml", deployment("backend", "")),
        ("apps/webapp.yaml", webapp_release("")),
    ]
}

fn deployment(name: &str, extra_spec: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, labels: {{app: {name}}}}}
spec:
  replicas: 1{extra_spec}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      nodeSelector: {{type: kwok}}
      containers: [{{name: app, image: "registry.testbed.invalid/{name}:1.0.0"}}]
"#
    )
}

/// A Deployment whose pod runs but only counts as available after an hour (minReadySeconds):
/// a rollout that is slow, not failed. (A pod no node matches is Unschedulable: a failure.)
pub fn never_ready_deployment() -> String {
    deployment(
        "never-ready",
        "\n  minReadySeconds: 3600\n  progressDeadlineSeconds: 7200",
    )
}

pub fn load_balancer_service(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec:\n  type: LoadBalancer\n  selector: {{app: backend}}\n  ports: [{{port: 80}}]\n"
    )
}

/// HelmRelease `webapp` of the test bed's chart webapp 1.2.0 (namespace omitted when empty:
/// the Kustomization's targetNamespace sets it).
pub fn webapp_release(ns: &str) -> String {
    let namespace = if ns.is_empty() {
        String::new()
    } else {
        format!(", namespace: {ns}")
    };
    format!(
        r#"apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: webapp{namespace}}}
spec:
  interval: 1m
  timeout: 2m
  chart:
    spec:
      chart: webapp
      version: "1.2.0"
      sourceRef: {{kind: HelmRepository, name: charts}}
"#
    )
}

/// HelmRelease `webapp` whose install waits on a rollout that cannot finish: kwok holds its pod
/// before Ready for an hour (its `pod-ready` stage delay, from the pod's annotation) and the
/// Deployment's progress deadline is 5s, so kube-controller-manager marks it
/// ProgressDeadlineExceeded and helm-controller's wait reads it as stalled. No retries: the
/// release ends Stalled (RetriesExceeded).
pub fn stalling_release(ns: &str) -> String {
    format!(
        r#"apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: webapp, namespace: {ns}}}
spec:
  interval: 10m
  timeout: 90s
  install: {{remediation: {{retries: 0, remediateLastFailure: false}}}}
  values:
    progressDeadlineSeconds: 5
    # kwok waits delay..jitter-delay before its pod-ready stage: both, or the jitter (5s) wins
    podAnnotations: {{pod-ready.stage.kwok.x-k8s.io/delay: 1h, pod-ready.stage.kwok.x-k8s.io/jitter-delay: 1h}}
  chart:
    spec:
      chart: webapp
      version: "1.2.0"
      sourceRef: {{kind: HelmRepository, name: charts}}
"#
    )
}

/// Kustomization `name` of the scenario's repository at `path` (not waiting on what it applies).
pub fn kustomization_at(ns: &str, name: &str, path: &str, source: &str) -> String {
    format!(
        r#"apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: {name}, namespace: {ns}}}
spec:
  interval: 1m
  retryInterval: 10s
  timeout: 30s
  prune: true
  path: {path}
  targetNamespace: {ns}
  sourceRef: {{kind: GitRepository, name: {source}}}
"#
    )
}

/// GitRepository `app` of the scenario's repository, including GitRepository `shared`, which
/// points at a repository the test bed's Git server does not have (so it never gets an
/// artifact).
pub fn including_repositories(s: &Scenario) -> String {
    format!(
        r#"{namespace}---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: shared, namespace: {ns}}}
spec: {{interval: 1m, timeout: 20s, url: "{missing}", ref: {{branch: main}}}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: app, namespace: {ns}}}
spec:
  interval: 1m
  timeout: 20s
  url: "{git}"
  ref: {{branch: main}}
  include: [{{repository: {{name: shared}}, toPath: shared}}]
"#,
        namespace = namespace(&s.ns),
        ns = s.ns,
        git = s.bed.git_url(&s.ns),
        missing = s.bed.git_url("no-such-repository"),
    )
}

/// A ValidatingAdmissionPolicy, bound to the scenario's namespace, that denies Deployments of
/// more than two replicas.
pub fn at_most_two_replicas(ns: &str) -> String {
    format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: {ns}-replicas}}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}}]
  validations: [{{expression: "object.spec.replicas <= 2", message: "at most 2 replicas"}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: {ns}-replicas}}
spec:
  policyName: {ns}-replicas
  validationActions: [Deny]
  matchResources: {{namespaceSelector: {{matchLabels: {{kubernetes.io/metadata.name: {ns}}}}}}}
"#
    )
}

/// HelmRelease `webapp` that rolls back a failed upgrade (no retries, the last failure
/// remediated), optionally impersonating service account `account`.
pub fn remediated_release(ns: &str, account: Option<&str>) -> String {
    let account = account
        .map(|a| format!("\n  serviceAccountName: {a}"))
        .unwrap_or_default();
    format!(
        r#"apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: webapp, namespace: {ns}}}
spec:
  interval: 1m
  timeout: 60s{account}
  upgrade: {{remediation: {{retries: 0, remediateLastFailure: true}}}}
  chart:
    spec:
      chart: webapp
      version: "1.2.0"
      sourceRef: {{kind: HelmRepository, name: charts}}
"#
    )
}

/// Service account `deployer`, allowed to read and to create or update what the chart holds,
/// and Helm's release Secrets, but not to delete a Deployment.
pub fn deployer_without_delete(ns: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: ServiceAccount
metadata: {{name: deployer, namespace: {ns}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: deployer, namespace: {ns}}}
rules:
- {{apiGroups: ["", apps], resources: ["*"], verbs: [get, list, watch]}}
- {{apiGroups: [apps], resources: [deployments], verbs: [create, update, patch]}}
- {{apiGroups: [""], resources: [secrets], verbs: ["*"]}}
- {{apiGroups: ["", events.k8s.io], resources: [events], verbs: [create, patch]}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {{name: deployer, namespace: {ns}}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: deployer}}
subjects: [{{kind: ServiceAccount, name: deployer, namespace: {ns}}}]
"#
    )
}

/// A Job that runs once (no retries); kwok is told to hold its pod before completing it, so
/// the test writes how it ended.
pub fn migration_job() -> String {
    r#"apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: {pod-complete.stage.kwok.x-k8s.io/delay: 1h, pod-complete.stage.kwok.x-k8s.io/jitter-delay: 1h}
    spec:
      restartPolicy: Never
      nodeSelector: {type: kwok}
      containers: [{name: migrate, image: "registry.testbed.invalid/migrate:1.0.0"}]
"#
    .to_string()
}

impl Scenario {
    /// Writes what a kubelet writes for a pod whose only container exited 1 leaving `words`
    /// as its termination message.
    pub fn fail_pods(&self, selector: &str, words: &str) {
        let patch = json!({"status": {"phase": "Failed",
            "conditions": [{"type": "Ready", "status": "False", "reason": "PodFailed"}],
            "containerStatuses": [{"name": "migrate", "image": "registry.testbed.invalid/migrate:1.0.0",
                "imageID": "", "ready": false, "restartCount": 0, "started": false,
                "state": {"terminated": {"exitCode": 1, "reason": "Error", "message": words,
                    "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:00:01Z"}}}]}})
        .to_string();
        self.patch_pod_status(selector, &patch);
    }
}
