//! API server faults on the real test bed: slow and hung servers (a proxy on loopback), a
//! restart that resets the watch cache past an etcd compaction (410 Gone), a credential
//! revoked mid-watch, a Flux CRD deleted and re-created, and condition timestamps from a
//! clock that is ahead or far behind. Each test says what fleetglass reported, what it kept,
//! and how long it took to recover (printed; run with `--nocapture` to read them).

use crate::common;

use common::collector::{
    apply, bed_time, cluster_row, config, flux_pair, objects_in, ready_of, ready_status,
    set_status, unique_namespace,
};
use common::eventually;
use common::fault_proxy::{FaultProxy, Mode};
use common::kubeconfig::EditedKubeconfig;
use common::testbed::{Testbed, manifest};
use fleetglass::app::{Collector, Source};
use fleetglass::objects::{self, ChartSource, HelmRelease, Meta, Ref};
use fleetglass::store::{ObjectRecord, Store};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(90);

/// The tests stop servers, compact the shared etcd and delete CRDs: one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn bed() -> Testbed {
    Testbed::up("faults", 2)
}

/// A test's turn on the bed, and a namespace of its own on the first cluster holding a
/// GitRepository `repo` and a Kustomization `app`.
struct Turn {
    _serial: tokio::sync::MutexGuard<'static, ()>,
    bed: Testbed,
    ns: String,
}

async fn turn(prefix: &str) -> Turn {
    let serial = ONE_AT_A_TIME.lock().await;
    let bed = bed();
    let ns = unique_namespace(prefix);
    apply(&bed, &bed.clusters[0], &flux_pair(&ns));
    Turn {
        _serial: serial,
        bed,
        ns,
    }
}

async fn object(
    store: &Store,
    cluster: &str,
    ns: &str,
    kind: &str,
    name: &str,
) -> Option<ObjectRecord> {
    objects_in(store, cluster, ns)
        .await
        .into_iter()
        .find(|o| o.verdict.kind.as_str() == kind && o.verdict.name == name)
}

async fn fresh(store: &Store, cluster: &str, after: chrono::DateTime<chrono::Utc>) -> Option<()> {
    let row = cluster_row(store, cluster).await?;
    (row.error.is_none() && row.last_good? > after).then_some(())
}

/// Waits until `faulty` is reported with an error and its Kustomization `app` in `ns` is
/// unverifiable naming `reason`, its last body (Ready = `last_ready`) kept, while `healthy`
/// stays fresh; returns the cluster's error.
async fn reported_faulty(
    store: &Store,
    (faulty, healthy): (&str, &str),
    ns: &str,
    reason: &str,
    last_ready: &str,
) -> String {
    let error = eventually("the cluster reported", DEADLINE, || async {
        cluster_row(store, faulty).await?.error
    })
    .await;
    let app = eventually("its objects unverifiable", DEADLINE, || async {
        let app = object(store, faulty, ns, "Kustomization", "app").await?;
        (app.verdict.state.as_str() == "unverifiable").then_some(app)
    })
    .await;
    assert!(
        app.verdict.reason.contains(reason),
        "{}",
        app.verdict.reason
    );
    assert_eq!(
        ready_of(&app).as_deref(),
        Some(last_ready),
        "the last body is kept"
    );
    let during = chrono::Utc::now();
    eventually("the other cluster still fresh", DEADLINE, || {
        fresh(store, healthy, during)
    })
    .await;
    error
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_then_hung_api_server_is_reported_and_recovers() {
    let Turn { _serial, bed, ns } = turn("fgslow").await;
    let (one, two) = (bed.clusters[0].as_str(), bed.clusters[1].as_str());
    set_status(&bed, one, "kustomization/app", &ns, &ready_status(true));
    let mut kubeconfig = EditedKubeconfig::read(&bed.kubeconfig);
    let server = kubeconfig.server(one);
    let upstream = server
        .trim_start_matches("https://")
        .parse()
        .expect("https://127.0.0.1:port");
    let proxy = FaultProxy::start(upstream).await;
    let proxied = kubeconfig
        .set_server(one, &format!("https://{}", proxy.addr))
        .write(&bed.state, "proxied");
    let store = common::fresh_store().await;
    let collector = Collector::start(
        &config(&proxied, &[one, two]),
        store.clone(),
        Source::Kube,
        "slow".into(),
    );
    eventually(
        "the Kustomization collected through the proxy",
        DEADLINE,
        || async {
            let app = object(&store, one, &ns, "Kustomization", "app").await?;
            (app.verdict.state.as_str() == "healthy").then_some(())
        },
    )
    .await;

    // Slow: every chunk the server sends is a second late. Still fresh, changes still arrive.
    proxy.set(Mode::Slow(Duration::from_secs(1)));
    let slowed = chrono::Utc::now();
    set_status(&bed, one, "kustomization/app", &ns, &ready_status(false));
    let changed = Instant::now();
    eventually(
        "a change collected through the slow server",
        DEADLINE,
        || async {
            let app = object(&store, one, &ns, "Kustomization", "app").await?;
            (ready_of(&app).as_deref() == Some("False")).then_some(())
        },
    )
    .await;
    let slow_propagation = changed.elapsed();
    eventually("the slow cluster probed fresh", DEADLINE, || {
        fresh(&store, one, slowed)
    })
    .await;

    // Hung: connections are accepted and never answered.
    proxy.set(Mode::Hung);
    let hung = Instant::now();
    let error = reported_faulty(&store, (one, two), &ns, "timeout", "False").await;
    let detection = hung.elapsed();
    assert!(error.starts_with("timeout"), "{error}");

    proxy.set(Mode::Pass);
    let released = Instant::now();
    let released_at = chrono::Utc::now();
    eventually("fresh again", DEADLINE, || fresh(&store, one, released_at)).await;
    let recovery = released.elapsed();
    set_status(&bed, one, "kustomization/app", &ns, &ready_status(true));
    eventually("a change after the hang collected", DEADLINE, || async {
        let app = object(&store, one, &ns, "Kustomization", "app").await?;
        (app.verdict.state.as_str() == "healthy").then_some(())
    })
    .await;
    collector.stop().await;
    println!(
        "slow server (+1 s per chunk): change visible after {slow_propagation:?}; hung server: reported after {detection:?}, fresh {recovery:?} after it answered again"
    );
}

/// etcd's JSON gateway on the test bed's own etcd (loopback, plain HTTP).
struct Etcd {
    base: String,
    client: reqwest::Client,
}

impl Etcd {
    fn of(bed: &Testbed) -> Etcd {
        let port = std::fs::read_to_string(bed.state.join("etcd/client-port")).expect("etcd port");
        Etcd {
            base: format!("http://127.0.0.1:{}", port.trim()),
            client: reqwest::Client::new(),
        }
    }

    async fn call(&self, path: &str, body: serde_json::Value) -> serde_json::Value {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "etcd {path}: {}",
            response.status()
        );
        response.json().await.unwrap()
    }

    async fn delete(&self, key: &str) -> u64 {
        let answer = self
            .call(
                "/v3/kv/deleterange",
                serde_json::json!({"key": base64(key.as_bytes())}),
            )
            .await;
        answer["deleted"].as_str().unwrap_or("0").parse().unwrap()
    }

    /// Compacts everything up to the current revision: older watches can only get 410 Gone.
    async fn compact(&self) -> String {
        let answer = self
            .call("/v3/kv/range", serde_json::json!({"key": base64(b"/")}))
            .await;
        let revision = answer["header"]["revision"]
            .as_str()
            .expect("a revision")
            .to_string();
        self.call(
            "/v3/kv/compaction",
            serde_json::json!({"revision": revision, "physical": true}),
        )
        .await;
        revision
    }
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (*b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_past_an_etcd_compaction_relists_and_sweeps() {
    let Turn { _serial, bed, ns } = turn("fg410").await;
    let (one, two) = (bed.clusters[0].as_str(), bed.clusters[1].as_str());
    apply(
        &bed,
        one,
        &flux_pair(&ns)
            .split("---")
            .last()
            .unwrap()
            .replace("name: app", "name: gone"),
    );
    for name in ["app", "gone"] {
        set_status(
            &bed,
            one,
            &format!("kustomization/{name}"),
            &ns,
            &ready_status(true),
        );
    }
    let store = common::fresh_store().await;
    let collector = Collector::start(
        &config(&bed.kubeconfig, &[one]),
        store.clone(),
        Source::Kube,
        "gone".into(),
    );
    eventually("both Kustomizations collected", DEADLINE, || async {
        object(&store, one, &ns, "Kustomization", "gone").await?;
        object(&store, one, &ns, "Kustomization", "app").await
    })
    .await;

    // While the server is down, `gone` is deleted behind its back and etcd is compacted past
    // every revision the collector's watches know; a write elsewhere moves etcd on.
    bed.stop_cluster(one);
    let etcd = Etcd::of(&bed);
    let key = format!("/{one}/kustomize.toolkit.fluxcd.io/kustomizations/{ns}/gone");
    assert_eq!(etcd.delete(&key).await, 1, "deleted {key} in etcd");
    bed.kubectl(
        two,
        &["create", "namespace", &unique_namespace("fg410-bump")],
    );
    let compacted = etcd.compact().await;
    bed.start_cluster(one);
    let restarted = Instant::now();
    eventually(
        "gone swept from the store after the re-list",
        DEADLINE,
        || async {
            object(&store, one, &ns, "Kustomization", "gone")
                .await
                .is_none()
                .then_some(())
        },
    )
    .await;
    let relisted = restarted.elapsed();
    let app = eventually("app verified again", DEADLINE, || async {
        let app = object(&store, one, &ns, "Kustomization", "app").await?;
        (app.verdict.state.as_str() == "healthy").then_some(app)
    })
    .await;
    assert_eq!(ready_of(&app).as_deref(), Some("True"));
    set_status(&bed, one, "kustomization/app", &ns, &ready_status(false));
    eventually("watching again: a new change arrives", DEADLINE, || async {
        let app = object(&store, one, &ns, "Kustomization", "app").await?;
        (app.verdict.state.as_str() == "failed").then_some(())
    })
    .await;
    collector.stop().await;
    println!(
        "compacted etcd at revision {compacted}; re-listed and swept {relisted:?} after the restart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_revoked_mid_watch_is_reported_and_nothing_is_dropped() {
    let Turn { _serial, bed, ns } = turn("fgtok").await;
    let (one, two) = (bed.clusters[0].as_str(), bed.clusters[1].as_str());
    set_status(&bed, one, "kustomization/app", &ns, &ready_status(true));
    let rbac = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/helm/rbac/fleetglass-reader.yaml"
    ))
    .unwrap();
    apply(&bed, one, &rbac);
    let binding = format!(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: reader, namespace: {ns}}}\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {{name: {ns}-reader}}\n\
         roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: fleetglass-reader}}\n\
         subjects: [{{kind: ServiceAccount, name: reader, namespace: {ns}}}]\n"
    );
    apply(&bed, one, &binding);
    let token = bed.kubectl(
        one,
        &["create", "token", "reader", "-n", &ns, "--duration", "1h"],
    );
    let kubeconfig = EditedKubeconfig::read(&bed.kubeconfig)
        .set_token(one, token.trim())
        .write(&bed.state, &format!("token-{ns}"));
    let store = common::fresh_store().await;
    let collector = Collector::start(
        &config(&kubeconfig, &[one, two]),
        store.clone(),
        Source::Kube,
        "token".into(),
    );
    eventually(
        "collected with the service account's token",
        DEADLINE,
        || async {
            let app = object(&store, one, &ns, "Kustomization", "app").await?;
            (app.verdict.state.as_str() == "healthy").then_some(())
        },
    )
    .await;

    bed.kubectl(one, &["delete", "serviceaccount", "reader", "-n", &ns]);
    let revoked = Instant::now();
    let error = reported_faulty(&store, (one, two), &ns, "401", "True").await;
    let detection = revoked.elapsed();
    assert_eq!(error, "401 Unauthorized: credentials rejected");
    collector.stop().await;
    bed.kubectl(
        one,
        &["delete", "clusterrolebinding", &format!("{ns}-reader")],
    );
    println!("a revoked token was reported {detection:?} after the service account was deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flux_crd_deleted_and_recreated_is_watched_again() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let bed = bed();
    let two = bed.clusters[1].as_str();
    let crd_name = "helmreleases.helm.toolkit.fluxcd.io";
    let mut crd: serde_json::Value =
        serde_json::from_str(&bed.kubectl(two, &["get", "crd", crd_name, "-o", "json"])).unwrap();
    for field in [
        "resourceVersion",
        "uid",
        "creationTimestamp",
        "generation",
        "managedFields",
    ] {
        crd["metadata"].as_object_mut().unwrap().remove(field);
    }
    crd.as_object_mut().unwrap().remove("status");
    let ns = unique_namespace("fgcrd");
    let release = |name: &str| {
        let release = HelmRelease {
            meta: Meta::new(&ns, name, bed_time()),
            interval: "5m".into(),
            chart: ChartSource::Template {
                chart: "web".into(),
                version: None,
                interval: None,
                source: Ref::to("HelmRepository", "charts"),
            },
            status: None,
        };
        let namespace = objects::namespace(&Meta::new("", &ns, bed_time()));
        manifest(&[namespace, release.to_json()])
    };
    apply(&bed, two, &release("web"));
    let store = common::fresh_store().await;
    // Periodic rediscovery far beyond the deadline: only the CRD watch can bring the kind back.
    let mut settings = config(&bed.kubeconfig, &[two]);
    settings.collector.rediscover = chrono::TimeDelta::minutes(30);
    let collector = Collector::start(&settings, store.clone(), Source::Kube, "crd".into());
    eventually("the HelmRelease collected", DEADLINE, || async {
        object(&store, two, &ns, "HelmRelease", "web").await
    })
    .await;

    bed.kubectl(two, &["delete", "crd", crd_name, "--wait=true"]);
    let deleted = Instant::now();
    eventually("the HelmRelease gone with its CRD", DEADLINE, || async {
        object(&store, two, &ns, "HelmRelease", "web")
            .await
            .is_none()
            .then_some(())
    })
    .await;
    let noticed = deleted.elapsed();
    let kind_errors = eventually(
        "the cluster says HelmRelease is not served",
        DEADLINE,
        || async {
            let row = cluster_row(&store, two).await?;
            row.kind_errors
                .to_string()
                .contains("not served")
                .then_some(row.kind_errors)
        },
    )
    .await;
    assert!(
        kind_errors.to_string().contains("HelmRelease"),
        "{kind_errors}"
    );

    let output = bed.kubectl_output(two, &["create", "-f", "-"], Some(&crd.to_string()));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Polled: `kubectl wait` fails outright while the new CRD has no conditions yet.
    eventually("the re-created CRD established", DEADLINE, || async {
        let jsonpath = r#"-o=jsonpath={.status.conditions[?(@.type=="Established")].status}"#;
        let output = bed.kubectl_output(two, &["get", "crd", crd_name, jsonpath], None);
        (String::from_utf8_lossy(&output.stdout) == "True").then_some(())
    })
    .await;
    let recreated = Instant::now();
    apply(&bed, two, &release("web2"));
    eventually(
        "a HelmRelease made after the re-creation collected",
        DEADLINE,
        || async { object(&store, two, &ns, "HelmRelease", "web2").await },
    )
    .await;
    let resumed = recreated.elapsed();
    eventually("the kind error cleared", DEADLINE, || async {
        let row = cluster_row(&store, two).await?;
        (!row.kind_errors.to_string().contains("not served")).then_some(())
    })
    .await;
    collector.stop().await;
    println!(
        "CRD deleted: objects dropped after {noticed:?}; re-created: watched again after {resumed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn condition_times_from_a_skewed_clock_never_make_a_false_verdict() {
    let Turn { _serial, bed, ns } = turn("fgskew").await;
    let one = bed.clusters[0].as_str();
    apply(
        &bed,
        one,
        &flux_pair(&ns)
            .split("---")
            .last()
            .unwrap()
            .replace("name: app", "name: behind"),
    );
    let reconciling = |at: chrono::DateTime<chrono::Utc>| {
        let at = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        format!(
            r#"{{"observedGeneration": 1, "conditions": [
                {{"type": "Ready", "status": "Unknown", "reason": "Progressing", "message": "reconciling", "lastTransitionTime": "{at}"}},
                {{"type": "Reconciling", "status": "True", "reason": "Progressing", "message": "reconciling", "lastTransitionTime": "{at}"}}]}}"#
        )
    };
    // A controller whose clock is two hours ahead, and one a week behind.
    let now = chrono::Utc::now();
    set_status(
        &bed,
        one,
        "kustomization/app",
        &ns,
        &reconciling(now + chrono::TimeDelta::hours(2)),
    );
    set_status(
        &bed,
        one,
        "kustomization/behind",
        &ns,
        &reconciling(now - chrono::TimeDelta::days(7)),
    );
    let store = common::fresh_store().await;
    let collector = Collector::start(
        &config(&bed.kubeconfig, &[one]),
        store.clone(),
        Source::Kube,
        "skew".into(),
    );
    let ahead = eventually("the clock-ahead object evaluated", DEADLINE, || async {
        object(&store, one, &ns, "Kustomization", "app").await
    })
    .await;
    let behind = eventually("the clock-behind object evaluated", DEADLINE, || async {
        object(&store, one, &ns, "Kustomization", "behind").await
    })
    .await;
    // Ahead: in progress, never a start in the future, never healthy.
    assert_eq!(ahead.verdict.state.as_str(), "progressing", "{ahead:?}");
    assert!(
        ahead
            .verdict
            .since
            .is_none_or(|since| since <= chrono::Utc::now()),
        "{:?}",
        ahead.verdict.since
    );
    // A week behind: past every threshold, so stuck (not progressing forever, not healthy).
    assert_eq!(behind.verdict.state.as_str(), "stuck", "{behind:?}");
    collector.stop().await;
}
