//! One scenario: its namespace (recreated), its Git repository, the Flux objects and repository
//! content the scenarios share, and captured steps evaluated by fleetglass.

use super::bed::FluxBed;
use super::report::{Report, evaluate};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub struct Scenario {
    pub bed: &'static FluxBed,
    pub ns: String,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Thresholds (stuck after 20s) and one domain per scenario namespace.
pub fn config() -> PathBuf {
    repo().join("tests/fixtures/real-flux/config.yaml")
}

impl Scenario {
    pub fn new(ns: &str) -> Scenario {
        let bed = FluxBed::get();
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
        }
    }

    pub fn commit(&self, files: &[(&str, String)], message: &str) -> String {
        self.bed.commit(&self.ns, files, message)
    }

    /// Captures the namespace, saves it as step `step`, and evaluates it as of the capture.
    pub fn capture(&self, step: &str) -> Report {
        let objects = self.bed.capture(&self.ns);
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let text = format!("# captured-at: {now}\n{objects}");
        let dir = repo().join("target/real-flux");
        std::fs::create_dir_all(&dir).expect("target/real-flux");
        let file = dir.join(format!("{step}.yaml"));
        std::fs::write(&file, &text).expect("save capture");
        if std::env::var_os("FLEETGLASS_UPDATE_FIXTURES").is_some() {
            let fixture = repo().join(format!("tests/fixtures/real-flux/{step}.yaml"));
            std::fs::write(fixture, &text).expect("save fixture");
        }
        evaluate(&file, &config(), &now)
    }

    /// Captures and evaluates until `kind/name` is in `state` (what fleetglass derives from time
    /// and status together), at most 180s.
    pub fn wait_for_state(&self, step: &str, kind: &str, name: &str, state: &str) -> Report {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            let report = self.capture(step);
            let verdict = report.verdict(kind, &self.ns, name);
            if verdict["state"] == state {
                return report;
            }
            assert!(
                Instant::now() < deadline,
                "{kind} {}/{name} is not {state} after 180s: {verdict:#}",
                self.ns
            );
            std::thread::sleep(Duration::from_secs(2));
        }
    }

    /// Writes what a kubelet writes for a container in CrashLoopBackOff into the pods' status
    /// (kwok only drives pods from Pending to Running, so it leaves this alone).
    pub fn crash_loop_pods(&self, selector: &str) {
        let pods = self
            .bed
            .kubectl(&["-n", &self.ns, "get", "pods", "-l", selector, "-o", "name"]);
        let patch = r#"{"status":{"conditions":[{"type":"Ready","status":"False","reason":"ContainersNotReady","message":"containers with unready status: [app]"},{"type":"ContainersReady","status":"False","reason":"ContainersNotReady","message":"containers with unready status: [app]"}],"containerStatuses":[{"name":"app","image":"registry.testbed.invalid/webapp:1.2.0","imageID":"","ready":false,"started":false,"restartCount":6,"state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 2m40s restarting failed container=app"}},"lastState":{"terminated":{"exitCode":1,"reason":"Error"}}}]}}"#;
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
        r#"apiVersion: v1
kind: Namespace
metadata: {{name: {ns}}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: fleet, namespace: {ns}}}
spec: {{interval: 1m, timeout: 20s, url: "{git}", ref: {{branch: main}}}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {{name: charts, namespace: {ns}}}
spec: {{interval: 10m, url: "{helm}"}}
"#,
        ns = s.ns,
        git = s.bed.git_url(&s.ns),
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
