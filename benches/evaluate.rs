//! `fleetglass evaluate` end to end on a large input: writes 100,000 objects the way
//! `kubectl get -o yaml` and `kubectl get -o json` print them (Kustomizations in dependsOn
//! chains, HelmReleases with their HelmCharts, Git and Helm repositories, the Flux controllers,
//! Deployments and their Pods, about 1 % failing), runs the release binary on each and prints
//! wall time and peak RSS (from `/usr/bin/time`), per object, and the wall time of a second
//! run at once. `cargo bench --bench evaluate -- 20000` runs other sizes.

use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

mod support;

const REVISION: &str = "main@sha1:1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const NOW: &str = "2026-11-29T12:00:00Z";
const AN_HOUR_AGO: &str = "2026-11-29T11:00:00Z";

fn main() {
    fleetglass_allocator::configure();
    let wanted: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if wanted.is_empty() {
        vec![support::size(100_000, 2_000)]
    } else {
        wanted
    };
    let dir =
        std::env::temp_dir().join(format!("fleetglass-bench-evaluate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for size in sizes {
        let objects = fleet(size);
        let yaml = dir.join("fleet.yaml");
        let json = dir.join("fleet.json");
        write_yaml(&yaml, &objects);
        write_json_list(&json, &objects);
        drop(objects);
        for (format, path) in [("yaml", &yaml), ("json List", &json)] {
            let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
            let run = evaluate(path);
            assert_eq!(run.objects, size, "every object has a verdict");
            // Run again at once: the pages the first run freed are still warm. On a virtual
            // machine that hands idle memory back to its host, the first run's time includes
            // the system zeroing every page afresh (docs/PERFORMANCE-HISTORY.md §8, eighth round).
            let again = evaluate(path);
            let per_object = |x: f64| x / size as f64;
            println!(
                "evaluate {size} objects ({format}, {:.0} MB, {:.0} bytes/object): wall {:.2} s ({:.1} µs/object), cpu {}, peak RSS {} ({}); run again at once: wall {:.2} s",
                bytes as f64 / 1e6,
                per_object(bytes as f64),
                run.wall,
                per_object(run.wall * 1e6),
                run.cpu.map_or("unknown".into(), |cpu| format!(
                    "{cpu:.2} s ({:.1} µs/object)",
                    per_object(cpu * 1e6)
                )),
                run.peak_rss_kib
                    .map_or("unknown".into(), |k| format!("{:.0} MB", k as f64 / 1024.0)),
                run.peak_rss_kib
                    .map_or("no /usr/bin/time".into(), |k| format!(
                        "{:.0} bytes/object",
                        per_object(k as f64 * 1024.0)
                    )),
                again.wall,
            );
        }
    }
    // FLEETGLASS_BENCH_KEEP=1 keeps the generated files (for profiling), and says where.
    if std::env::var_os("FLEETGLASS_BENCH_KEEP").is_some() {
        println!("inputs kept in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

struct Run {
    wall: f64,
    /// User + system CPU seconds: on a shared machine, what the run itself cost.
    cpu: Option<f64>,
    peak_rss_kib: Option<u64>,
    objects: usize,
}

/// Runs the release binary on `path`, under `/usr/bin/time` when it is there (for peak RSS).
/// The report goes to a file, as `> report.json` sends it: read through a pipe, the 35 MB
/// would be timed at the pace this process drains the pipe (1.5 s of a 3.5 s run when its
/// buffer's pages were cold).
fn evaluate(path: &Path) -> Run {
    let binary = env!("CARGO_BIN_EXE_fleetglass");
    let time = Path::new("/usr/bin/time");
    let rss_file = path.with_extension("rss");
    let report_file = path.with_extension("report.json");
    let mut command = if time.exists() {
        let mut command = Command::new(time);
        command
            .arg("-f")
            .arg("%M %U %S")
            .arg("-o")
            .arg(&rss_file)
            .arg(binary);
        command
    } else {
        Command::new(binary)
    };
    command
        .args(["evaluate", "--now", NOW, "--cluster", "bench"])
        .arg(path)
        .stdout(std::fs::File::create(&report_file).expect("report file"))
        .stderr(Stdio::piped());
    let started = Instant::now();
    let output = command.output().expect("fleetglass evaluate runs");
    let wall = started.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = std::fs::read(&report_file).expect("the report");
    let report: Value = serde_json::from_slice(&report).expect("a JSON report");
    // `/usr/bin/time` writes "peak-KiB user-s system-s" on its last line.
    let measured: Vec<f64> = std::fs::read_to_string(&rss_file)
        .ok()
        .and_then(|text| text.trim().lines().last().map(str::to_string))
        .map(|line| line.split(' ').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default();
    Run {
        wall,
        peak_rss_kib: measured.first().map(|&k| k as u64),
        cpu: (measured.len() == 3).then(|| measured[1] + measured[2]),
        objects: report["objects"].as_array().map_or(0, Vec::len),
    }
}

fn write_yaml(path: &PathBuf, objects: &[Value]) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("file"));
    for object in objects {
        writeln!(out, "---").expect("write");
        serde_saphyr::to_io_writer(&mut out, object).expect("yaml");
    }
    out.flush().expect("flush");
}

fn write_json_list(path: &PathBuf, objects: &[Value]) {
    let out = std::io::BufWriter::new(std::fs::File::create(path).expect("file"));
    let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": objects});
    serde_json::to_writer_pretty(out, &list).expect("json");
}

/// `size` objects: the controllers and sources, then apps of seven objects (a Kustomization,
/// its HelmRelease and HelmChart, a Deployment and three Pods) in 50 team namespaces.
fn fleet(size: usize) -> Vec<Value> {
    let mut objects = vec![
        git_repository(),
        helm_repository(),
        controller("source-controller"),
        controller("kustomize-controller"),
        controller("helm-controller"),
    ];
    let mut app = 0;
    while objects.len() < size {
        add_app(&mut objects, app);
        app += 1;
    }
    objects.truncate(size);
    objects
}

fn add_app(objects: &mut Vec<Value>, app: usize) {
    let name = format!("app-{app}");
    let namespace = format!("team-{}", app % 50);
    let depends_on = if app.is_multiple_of(10) {
        json!([])
    } else {
        json!([{"name": format!("app-{}", app - 1)}])
    };
    let ready = if app % 100 == 7 {
        condition(
            "Ready",
            "False",
            "BuildFailed",
            "kustomize build failed: accumulating resources from './apps': missing file",
        )
    } else {
        condition(
            "Ready",
            "True",
            "ReconciliationSucceeded",
            &format!("Applied revision: {REVISION}"),
        )
    };
    objects.push(json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": meta(&name, "flux-system", json!({"app.kubernetes.io/part-of": name})),
        "spec": {"interval": "10m", "path": format!("./apps/{name}"), "prune": true, "wait": false,
                 "timeout": "5m", "dependsOn": depends_on, "targetNamespace": namespace,
                 "sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
        "status": {"observedGeneration": 1, "lastAttemptedRevision": REVISION, "lastAppliedRevision": REVISION,
                   "lastHandledReconcileAt": AN_HOUR_AGO,
                   "conditions": [ready],
                   "inventory": {"entries": [
                       {"id": format!("{namespace}_{name}_helm.toolkit.fluxcd.io_HelmRelease"), "v": "v2"}]}}
    }));
    let kustomize_labels = json!({
        "kustomize.toolkit.fluxcd.io/name": name, "kustomize.toolkit.fluxcd.io/namespace": "flux-system"});
    objects.push(json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
        "metadata": meta(&name, &namespace, kustomize_labels),
        "spec": {"interval": "30m", "releaseName": name, "timeout": "5m",
                 "chart": {"spec": {"chart": "podinfo", "version": "6.x", "reconcileStrategy": "ChartVersion",
                                    "sourceRef": {"kind": "HelmRepository", "name": "charts", "namespace": "flux-system"}}},
                 "values": {"replicaCount": 3, "resources": {"limits": {"memory": "256Mi"}}}},
        "status": {"observedGeneration": 1, "helmChart": format!("flux-system/{namespace}-{name}"),
                   "lastAttemptedRevision": "6.0.3", "lastAttemptedConfigDigest": "sha256:9f0c7d",
                   "history": [{"chartName": "podinfo", "chartVersion": "6.0.3", "status": "deployed", "version": 4,
                                "name": name, "namespace": namespace, "digest": "sha256:1a2b3c",
                                "firstDeployed": AN_HOUR_AGO, "lastDeployed": AN_HOUR_AGO}],
                   "conditions": [
                       condition("Ready", "True", "UpgradeSucceeded", &format!("Helm upgrade succeeded for release {namespace}/{name}.v4 with chart podinfo@6.0.3")),
                       condition("Released", "True", "UpgradeSucceeded", "Helm upgrade succeeded")]}
    }));
    objects.push(json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart",
        "metadata": meta(&format!("{namespace}-{name}"), "flux-system", json!({})),
        "spec": {"chart": "podinfo", "version": "6.x", "interval": "30m", "reconcileStrategy": "ChartVersion",
                 "sourceRef": {"kind": "HelmRepository", "name": "charts"}},
        "status": {"observedGeneration": 1, "observedChartName": "podinfo",
                   "artifact": {"revision": "6.0.3", "digest": "sha256:4d5e6f", "lastUpdateTime": AN_HOUR_AGO,
                                "path": format!("helmchart/flux-system/{namespace}-{name}/podinfo-6.0.3.tgz"), "size": 14_000},
                   "conditions": [condition("Ready", "True", "ChartPullSucceeded", "pulled 'podinfo' chart with version '6.0.3'")]}
    }));
    let helm_labels = json!({"helm.toolkit.fluxcd.io/name": name, "helm.toolkit.fluxcd.io/namespace": namespace,
                             "app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "Helm"});
    objects.push(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": meta(&name, &namespace, helm_labels),
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
                 "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                 "template": {"metadata": {"labels": {"app.kubernetes.io/name": name}},
                              "spec": pod_spec(&name)}},
        "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "updatedReplicas": 3,
                   "conditions": [
                       {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.", "lastTransitionTime": AN_HOUR_AGO, "lastUpdateTime": AN_HOUR_AGO},
                       {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": format!("ReplicaSet \"{name}-5d9c7b\" has successfully progressed."), "lastTransitionTime": AN_HOUR_AGO, "lastUpdateTime": AN_HOUR_AGO}]}
    }));
    for replica in 0..3 {
        objects.push(pod(&name, &namespace, replica));
    }
}

fn pod(app: &str, namespace: &str, replica: usize) -> Value {
    let mut metadata = meta(
        &format!("{app}-5d9c7b-{replica:05}"),
        namespace,
        json!({"app.kubernetes.io/name": app, "pod-template-hash": "5d9c7b"}),
    );
    metadata["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{app}-5d9c7b"),
                                           "uid": "0b6f3a52-5c1e-4e39-9d0e-3f0c6c1d2e7a", "controller": true, "blockOwnerDeletion": true}]);
    json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec(app),
        "status": {"phase": "Running", "podIP": "10.42.3.17", "hostIP": "172.18.0.4", "qosClass": "Burstable",
                   "startTime": AN_HOUR_AGO,
                   "conditions": [
                       {"type": "Initialized", "status": "True", "lastTransitionTime": AN_HOUR_AGO},
                       {"type": "Ready", "status": "True", "lastTransitionTime": AN_HOUR_AGO},
                       {"type": "ContainersReady", "status": "True", "lastTransitionTime": AN_HOUR_AGO},
                       {"type": "PodScheduled", "status": "True", "lastTransitionTime": AN_HOUR_AGO}],
                   "containerStatuses": [{"name": "podinfo", "ready": true, "started": true, "restartCount": 0,
                                          "image": "ghcr.io/stefanprodan/podinfo:6.0.3",
                                          "imageID": "ghcr.io/stefanprodan/podinfo@sha256:4d5e6f7a8b9c",
                                          "containerID": "containerd://8e9f0a1b2c3d",
                                          "state": {"running": {"startedAt": AN_HOUR_AGO}}}]}
    })
}

fn pod_spec(app: &str) -> Value {
    json!({
        "serviceAccountName": app, "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "containers": [{
            "name": "podinfo", "image": "ghcr.io/stefanprodan/podinfo:6.0.3", "imagePullPolicy": "IfNotPresent",
            "command": ["./podinfo", "--port=9898", "--level=info"],
            "ports": [{"name": "http", "containerPort": 9898, "protocol": "TCP"}],
            "env": [{"name": "PODINFO_UI_COLOR", "value": "#34577c"}],
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": 9898}, "initialDelaySeconds": 1, "periodSeconds": 10},
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": 9898}, "initialDelaySeconds": 1, "periodSeconds": 10},
            "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "64Mi"}},
            "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
        "volumes": [{"name": "data", "emptyDir": {}}]
    })
}

fn git_repository() -> Value {
    json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
        "metadata": meta("flux-system", "flux-system", json!({})),
        "spec": {"interval": "1m", "url": "https://git.example.com/fleet", "ref": {"branch": "main"}},
        "status": {"observedGeneration": 1,
                   "artifact": {"revision": REVISION, "digest": "sha256:7a8b9c", "lastUpdateTime": AN_HOUR_AGO},
                   "conditions": [condition("Ready", "True", "Succeeded", &format!("stored artifact for revision '{REVISION}'"))]}
    })
}

fn helm_repository() -> Value {
    json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
        "metadata": meta("charts", "flux-system", json!({})),
        "spec": {"interval": "1h", "url": "https://stefanprodan.github.io/podinfo"},
        "status": {"observedGeneration": 1,
                   "artifact": {"revision": "sha256:0123456789abcdef", "lastUpdateTime": AN_HOUR_AGO},
                   "conditions": [condition("Ready", "True", "Succeeded", "stored artifact: revision 'sha256:0123456789abcdef'")]}
    })
}

fn controller(name: &str) -> Value {
    let labels = json!({"app.kubernetes.io/part-of": "flux", "app.kubernetes.io/component": name, "app": name});
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(name, "flux-system", labels),
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec(name)}},
        "status": {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "updatedReplicas": 1,
                   "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                                   "message": "Deployment has minimum availability.", "lastTransitionTime": AN_HOUR_AGO}]}
    })
}

fn meta(name: &str, namespace: &str, labels: Value) -> Value {
    json!({"name": name, "namespace": namespace, "generation": 1, "labels": labels,
           "uid": "6c0f7d7e-3b1a-4f5e-9a8b-2c1d0e9f8a7b", "resourceVersion": "48213377",
           "creationTimestamp": "2026-11-01T08:00:00Z",
           "annotations": {"meta.helm.sh/release-name": name, "meta.helm.sh/release-namespace": namespace}})
}

fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": AN_HOUR_AGO, "observedGeneration": 1})
}
