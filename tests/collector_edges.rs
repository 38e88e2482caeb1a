//! Issue 43 on real API servers from the test bed: a cluster whose API server is down from the
//! start exists from the moment it is configured and is unverifiable on every reader (never
//! green, never "no cluster reports this domain"), while the cluster that answers is proven
//! healthy; `wait` and `impact` on names that do not exist are errors, never a safe answer.

use crate::common;

use axum::http::StatusCode;
use common::collector::{apply, cluster_row, config, flux_pair, set_status, unique_namespace};
use common::eventually;
use common::kubeconfig::EditedKubeconfig;
use common::testbed::Testbed;
use common::web::{app, get_json};
use fleetglass::app::{Collector, Source};
use fleetglass::config::from_yaml_str;
use fleetglass::health::testkit::{SHA, git_repository, kustomization};
use fleetglass::health::{Parts, cluster_id};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

/// A GitRepository `repo` and a Kustomization `app` in a new namespace on `cluster`, Ready
/// and converged (the source's artifact applied) as the controllers write them; the namespace.
fn healthy_pair(bed: &Testbed, cluster: &str, prefix: &str) -> String {
    let ns = unique_namespace(prefix);
    apply(bed, cluster, &flux_pair(&ns));
    let status = |value: serde_json::Value| value["status"].to_string();
    let mut repository = git_repository("repo", SHA);
    // The fields the CRD requires of an artifact, as source-controller writes them.
    let artifact = &mut repository["status"]["artifact"];
    let path = format!("gitrepository/{ns}/repo/1111111.tar.gz");
    artifact["digest"] = format!("sha256:{}", "0".repeat(64)).into();
    artifact["url"] = format!("http://source-controller.flux-system/{path}").into();
    artifact["path"] = path.into();
    set_status(bed, cluster, "gitrepository/repo", &ns, &status(repository));
    let app = status(kustomization("app", &[]));
    set_status(bed, cluster, "kustomization/app", &ns, &app);
    ns
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_server_down_from_the_start_is_never_reached_on_every_reader() {
    let bed = common::collector::bed();
    let (one, two) = (bed.clusters[0].as_str(), bed.clusters[1].as_str());
    let ns = healthy_pair(&bed, one, "fgedge");
    // `two`'s API server address has nothing listening on it from the start.
    let closed = format!("https://127.0.0.1:{}", common::free_port());
    let kubeconfig = EditedKubeconfig::read(&bed.kubeconfig)
        .set_server(two, &closed)
        .write(&bed.state, "down-from-the-start");
    let mut config = config(&kubeconfig, &[one, two]);
    config.clusters[0].labels =
        [("ring".into(), "prod".into()), ("site".into(), "a".into())].into();
    config.clusters[1].labels = [("ring".into(), "prod".into())].into();
    config.domains = from_yaml_str(&format!(
        "domains: [{{name: edge, select: {{namespaces: [{ns}]}}, clusters: {{ring: prod}},
           version: {{from: source_revision, kind: GitRepository, namespace: {ns}, name: repo}}}}]"
    ))
    .expect("a domain")
    .domains;
    let store = common::fresh_store().await;
    let collector = Collector::start(&config, store.clone(), Source::Kube, "edges".into());

    let error = eventually("two reported as never reached", DEADLINE, || async {
        let row = cluster_row(&store, two).await?;
        row.last_good.is_none().then_some(row.error?)
    })
    .await;
    assert!(error.contains("refused"), "{error}");
    let web = app(store.clone(), &config);
    // The control: the cluster that answers is proven healthy at the version its source offers.
    let gate = |label: &'static str| {
        let web = web.clone();
        async move {
            get_json(
                &web,
                &format!("/api/v1/domains/edge/wait?version=1111111&timeout=0s&label={label}"),
            )
            .await
        }
    };
    eventually(
        "the domain healthy on the cluster that answers",
        DEADLINE,
        || async {
            let (_, verdict) = gate("site%3Da").await;
            (verdict["healthy"] == true).then_some(())
        },
    )
    .await;

    let (_, fleet) = get_json(&web, "/api/v1/fleet").await;
    let row = fleet["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == two)
        .expect("the down cluster is listed");
    assert_eq!(row["fresh"], false, "{row}");
    assert!(
        row["unverifiable"]
            .as_str()
            .unwrap()
            .starts_with("never reached"),
        "{row}"
    );
    let cell = fleet["domains"][0]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cluster"] == two)
        .expect("a cell on the down cluster");
    assert_eq!(cell["state"], "unverifiable", "{cell}");
    let two_id = cluster_id(two);
    assert!(
        fleet["root_causes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == two_id.as_str()),
        "{fleet}"
    );
    let (status, verdict) = gate("ring%3Dprod").await;
    assert_eq!(status, StatusCode::OK, "{verdict}");
    assert_eq!(
        verdict["healthy"], false,
        "the ring holds a cluster never reached"
    );
    // The collector's own evaluation names it a root cause too: it alerts after its delay.
    let evaluated = collector.latest.borrow().fleet.clone();
    assert!(
        evaluated.root_causes().iter().any(|c| c.id == two_id),
        "the evaluation has the down cluster as a cause"
    );

    let (status, body) = gate("ring%3Dnope").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let impact = |cluster: &str, name: &str| {
        format!("/api/v1/impact?cluster={cluster}&kind=Kustomization&namespace={ns}&name={name}")
    };
    let (status, body) = get_json(&web, &impact("nope", "app")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = get_json(&web, &impact(one, "apq")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = get_json(&web, &impact(two, "app")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["unverified"][0]["cluster"], two, "{body}");
    collector.stop().await;
}

/// The body of a `GET` on a running `serve`, as JSON; None while it does not answer yet.
async fn api(server: &common::DemoServer, path: &str) -> Option<serde_json::Value> {
    let answer = common::raw_get(&server.address(), path).await.ok()?;
    let (_, body) = answer.split_once("\r\n\r\n")?;
    serde_json::from_str(body).ok()
}

/// When `cluster`'s data was last proven good, as the running server says.
async fn last_good(
    server: &common::DemoServer,
    cluster: &str,
) -> Option<chrono::DateTime<chrono::Utc>> {
    let clusters = api(server, "/api/v1/clusters").await?;
    let row = clusters["clusters"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == cluster)?;
    row["last_good"].as_str()?.parse().ok()
}

/// A folder for one `serve` test and its config file: the bed's first cluster (ring prod) and
/// a domain `name` of the healthy pair in `ns`, with these thresholds and extra keys.
fn serve_config(
    bed: &Testbed,
    name: &str,
    ns: &str,
    thresholds: &str,
    extra: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let one = &bed.clusters[0];
    let dir = std::env::temp_dir().join(format!("fg-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "clusters: [{{name: {one}, kubeconfig: {kubeconfig}, context: {one}, labels: {{ring: prod}}}}]
domains:
  - {{name: {name}, select: {{namespaces: [{ns}]}},
     version: {{from: source_revision, kind: GitRepository, namespace: {ns}, name: repo}}}}
thresholds: {{{thresholds}}}
collector: {{probe_interval: 1s}}
{extra}
",
            kubeconfig = bed.kubeconfig.display()
        ),
    )
    .unwrap();
    (dir, config)
}

/// Issue 43 (3): starting and restarting `serve` over a healthy fleet pages nobody. Every
/// start used to evaluate a partial picture (Kustomizations listed before their sources) and
/// page "source GitRepository … not found" at once. The Slack receiver is local; after each
/// start's first full list is written, it is watched for a bounded window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarting_serve_over_a_healthy_fleet_sends_no_alert() {
    let bed = common::collector::bed();
    let one = bed.clusters[0].as_str();
    let ns = healthy_pair(&bed, one, "fgrestart");
    let receiver = common::alerts::Receiver::start().await;
    let (dir, config) = serve_config(
        &bed,
        "restart",
        &ns,
        "freshness: 30s",
        "alerts: {rules: [{name: restart, domains: [restart]}]}",
    );
    let database = common::fresh_database_url().await;
    let slack = format!("{}/slack", receiver.base);
    let start = |run: &str| {
        common::DemoServer::serve(
            &database,
            &dir.join(format!("{run}.log")),
            &["--config", config.to_str().unwrap()],
            &[("SLACK_WEBHOOK_URL", slack.as_str())],
        )
    };
    let gate = "/api/v1/domains/restart/wait?version=1111111&timeout=0s";
    for run in ["first", "second"] {
        let started = chrono::Utc::now();
        let server = start(run);
        eventually(
            "the server listed the cluster after it started",
            DEADLINE,
            || async { (last_good(&server, one).await? > started).then_some(()) },
        )
        .await;
        eventually("the domain proven healthy", DEADLINE, || async {
            (api(&server, gate).await?["healthy"] == true).then_some(())
        })
        .await;
        // A page from a partial picture goes out in the first rounds after the list: ten
        // seconds of them, then the answer. Bounded; nothing else to wait on for "nothing".
        let watched = tokio::time::Instant::now() + Duration::from_secs(10);
        while tokio::time::Instant::now() < watched {
            assert!(
                receiver.requests().is_empty(),
                "{run} start paged: {:#?}",
                receiver.requests()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let alerts = api(&server, "/api/v1/alerts").await.expect("the alerts");
        for list in ["open", "resolved"] {
            assert_eq!(alerts[list], serde_json::json!([]), "{run}: {alerts}");
        }
        drop(server);
    }
}

/// Issue 43 (1): the collector process is paused (SIGSTOP) while a web-only replica serves.
/// Past the freshness limit every reader of the replica says unverifiable, and `wait` no longer
/// passes; resumed, the cluster is proven again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_collector_leaves_nothing_green_on_a_web_replica() {
    let bed = common::collector::bed();
    let one = bed.clusters[0].as_str();
    let ns = healthy_pair(&bed, one, "fgpause");
    let (dir, config) = serve_config(&bed, "paused", &ns, "freshness: 5s", "");
    let database = common::fresh_database_url().await;
    let serve = |role: &str| {
        common::DemoServer::serve(
            &database,
            &dir.join(format!("{role}.log")),
            &["--config", config.to_str().unwrap(), "--role", role],
            &[],
        )
    };
    let collector = serve("collector");
    let web = serve("web");
    let gate = "/api/v1/domains/paused/wait?version=1111111&timeout=0s";
    eventually(
        "the replica proves the domain healthy",
        DEADLINE,
        || async { (api(&web, gate).await?["healthy"] == true).then_some(()) },
    )
    .await;

    let signal = |name: &str| {
        let status = std::process::Command::new("kill")
            .args([name, &collector.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {name}");
    };
    signal("-STOP");
    let paused = std::time::Instant::now();
    eventually("the replica's gate no longer passes", DEADLINE, || async {
        (api(&web, gate).await?["healthy"] == false).then_some(())
    })
    .await;
    let unverifiable = paused.elapsed();
    let fleet = api(&web, "/api/v1/fleet").await.expect("the fleet");
    let row = &fleet["clusters"][0];
    assert_eq!(row["fresh"], false, "{row}");
    assert_eq!(
        row["state_counts"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec!["unverifiable"],
        "{row}"
    );
    let objects = api(
        &web,
        &format!("/api/v1/objects?namespace={ns}&state=healthy"),
    )
    .await
    .expect("objects");
    assert_eq!(objects["total"], 0, "{objects}");
    eprintln!(
        "collector paused: the replica's readers unverifiable {:.1} s after SIGSTOP (freshness limit 5 s)",
        unverifiable.as_secs_f64()
    );

    signal("-CONT");
    eventually(
        "proven again once the collector resumes",
        DEADLINE,
        || async { (api(&web, gate).await?["healthy"] == true).then_some(()) },
    )
    .await;
}
