//! Packaging: the Helm charts (lint, render, schema, and the rendered manifests validated by a
//! real API server with a server-side dry run) and docker-compose.yml.

use crate::common;

use common::collector::{apply, flux_pair, unique_namespace};
use common::pod::{PodRun, documents, find};
use common::testbed::Testbed;
use std::path::PathBuf;
use std::process::{Command, Output};

fn charts() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("helm")
}

fn helm(args: &[&str]) -> Output {
    Command::new(Testbed::bin_dir().join("helm"))
        .args(args)
        .current_dir(charts())
        .output()
        .expect("run helm")
}

fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Packs the reader subchart into the main chart once per run (tests run in parallel and
/// helm's dependency build is not safe to run concurrently).
fn build_dependencies() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        ok(helm(&["dependency", "build", "fleetglass"]));
    });
}

/// Renders the main chart with extra `--set` values.
fn render(sets: &[&str]) -> Output {
    build_dependencies();
    let mut args = vec!["template", "fg", "fleetglass", "--namespace", "fleetglass"];
    for set in sets {
        args.extend(["--set", set]);
    }
    helm(&args)
}

#[test]
fn charts_lint_clean() {
    build_dependencies();
    ok(helm(&["lint", "--strict", "fleetglass"]));
    ok(helm(&["lint", "--strict", "fleetglass-reader"]));
    // The config's schema applies to lint as to install.
    let misspelled = helm(&[
        "lint",
        "--strict",
        "fleetglass",
        "--set",
        "config.group_bye=ring",
    ]);
    assert!(!misspelled.status.success());
    let said = [&misspelled.stdout[..], &misspelled.stderr[..]].concat();
    assert!(String::from_utf8_lossy(&said).contains("group_bye"));
}

#[test]
fn misspelled_or_floating_values_are_rejected() {
    for (set, complaint) in [
        ("servce.port=80", "servce"),
        ("image.tga=1.0.0", "tga"),
        ("podDisruptionBudget.minAvilable=1", "minAvilable"),
        ("image.tag=latest", "/image/tag"),
        ("topology=sideways", "topology"),
        (
            "fleetglass-reader.serviceAcount.create=false",
            "serviceAcount",
        ),
        // fleetglass's own config, checked by the schema generated from its types.
        ("config.group_bye=ring", "group_bye"),
        ("config.thresholds.stuck_afer=5m", "stuck_afer"),
        ("config.thresholds.stuck_after=20 minutes", "stuck_after"),
        (
            "config.clusters[0].name=a,config.clusters[0].kubconfig=/x",
            "kubconfig",
        ),
        ("config.web.auth.mode=everyone", "mode"),
    ] {
        let output = render(&[set]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{set} must be rejected");
        assert!(stderr.contains(complaint), "{set}: {stderr}");
    }
    // Open levels stay open: annotations, labels and resources take any key.
    ok(render(&[
        "podAnnotations.anything/goes=yes",
        "resources.limits.cpu=2",
        "nodeSelector.zone=a",
    ]));
    // What the server accepts, the schema accepts.
    ok(render(&[
        "config.thresholds.stuck_after=1h30m",
        "config.retention.transitions=30d",
        "config.clusters[0].name=mgmt,config.clusters[0].in_cluster=true",
    ]));
}

#[test]
fn rendered_manifests_are_hardened() {
    let one = ok(render(&[
        "image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ]));
    for needle in [
        "readOnlyRootFilesystem: true",
        "allowPrivilegeEscalation: false",
        "runAsNonRoot: true",
        "- ALL",
        "terminationMessagePolicy: FallbackToLogsOnError",
        "startupProbe:",
        "path: /healthz",
        "path: /readyz",
        "kind: PodDisruptionBudget",
        "kind: ClusterRole",
        "@sha256:0123456789abcdef",
        "secretKeyRef",
    ] {
        assert!(one.contains(needle), "missing {needle}");
    }
    assert!(!one.contains(":latest"));
    assert!(!one.contains("verbs: [\"create\""), "read-only RBAC only");
    let split = ok(render(&["topology=split"]));
    assert!(
        split.contains("name: fg-fleetglass-web")
            && split.contains("name: fg-fleetglass-collector")
    );
    assert!(split.contains("--role=collector") && split.contains("--role=web"));
}

#[test]
fn the_api_server_accepts_the_rendered_manifests() {
    let bed = Testbed::up("shared", 3);
    let cluster = &bed.clusters[0];
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fleetglass\n";
    let created = bed.kubectl_output(cluster, &["apply", "-f", "-"], Some(namespace));
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    for sets in [
        vec![],
        vec![
            "topology=split",
            "ingress.enabled=true",
            "ingress.tls[0].secretName=tls",
            "ingress.tls[0].hosts[0]=fleetglass.example.com",
            "networkPolicy.enabled=true",
            "slack.existingSecret=slack",
            "apiTokens.existingSecret=tokens",
            "kubeconfigs.existingSecret=kc",
        ],
    ] {
        let manifests = ok(render(&sets));
        let applied = bed.kubectl_output(
            cluster,
            &["apply", "--dry-run=server", "-f", "-"],
            Some(&manifests),
        );
        let stderr = String::from_utf8_lossy(&applied.stderr);
        assert!(applied.status.success(), "{sets:?}: {stderr}");
        let stdout = String::from_utf8_lossy(&applied.stdout);
        assert!(stdout.contains("deployment.apps/fg-fleetglass"), "{stdout}");
    }
    let reader = ok(helm(&[
        "template",
        "reader",
        "fleetglass-reader",
        "--namespace",
        "fleetglass",
        "--set",
        "tokenSecret=true",
    ]));
    let applied = bed.kubectl_output(
        cluster,
        &["apply", "--dry-run=server", "-f", "-"],
        Some(&reader),
    );
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
}

#[test]
fn docker_compose_is_valid_and_pinned() {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docker-compose.yml"),
    )
    .unwrap();
    let compose: serde_json::Value =
        fleetglass::yaml::from_str(&text).expect("docker-compose.yml parses");
    let services = compose["services"].as_object().expect("services");
    let postgres = &compose["services"]["postgres"];
    let image = postgres["image"].as_str().unwrap();
    assert!(
        image.starts_with("postgres:") && !image.ends_with(":latest") && image.contains('.'),
        "pinned: {image}"
    );
    assert!(postgres["healthcheck"]["test"].is_array());
    assert!(postgres["volumes"].is_array());
    let fleetglass = &compose["services"]["fleetglass"];
    let command: Vec<&str> = fleetglass["command"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(command.contains(&"--demo"));
    assert!(
        fleetglass["environment"]["DATABASE_URL"]
            .as_str()
            .unwrap()
            .contains("@postgres:5432/")
    );
    assert_eq!(
        fleetglass["depends_on"]["postgres"]["condition"].as_str(),
        Some("service_healthy")
    );
    // The demo by default; watching your own clusters only under a profile.
    let profiled: Vec<&str> = services
        .iter()
        .filter(|(_, service)| !service["profiles"].is_null())
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(profiled, ["fleetglass-clusters"]);
    assert_eq!(services.len(), 3);
    let clusters = &compose["services"]["fleetglass-clusters"];
    let kube_mount = clusters["volumes"][0].as_str().unwrap();
    assert!(
        kube_mount.ends_with(":ro") && kube_mount.contains(".kube:"),
        "{kube_mount}"
    );
    let mounted_at = kube_mount.split(':').nth(1).unwrap();
    assert!(
        clusters["environment"]["KUBECONFIG"]
            .as_str()
            .unwrap()
            .starts_with(mounted_at)
    );
    assert!(!format!("{:?}", clusters["command"]).contains("--demo"));
    for (name, _) in compose["volumes"].as_object().unwrap() {
        assert!(
            text.contains(&format!("{}:/", name.as_str())),
            "volume used"
        );
    }
}

/// The plain manifest (for `kubectl apply`) and the chart grant exactly the same permissions.
#[test]
fn the_reader_manifest_and_the_chart_grant_the_same_rules() {
    let rules_of = |yaml: &str| -> serde_json::Value {
        serde_saphyr::from_multiple::<serde_json::Value>(yaml)
            .unwrap()
            .into_iter()
            .find(|doc| doc["kind"] == "ClusterRole")
            .expect("a ClusterRole")["rules"]
            .clone()
    };
    let manifest = std::fs::read_to_string(charts().join("rbac/fleetglass-reader.yaml")).unwrap();
    let chart = ok(helm(&["template", "reader", "fleetglass-reader"]));
    assert_eq!(rules_of(&manifest), rules_of(&chart));
    let text = format!("{:?}", rules_of(&chart));
    for needed in [
        "kustomizations",
        "helmreleases",
        "customresourcedefinitions",
        "namespaces",
        "pods",
        "events.k8s.io",
    ] {
        assert!(text.contains(needed), "{needed}");
    }
    assert!(!text.contains("secrets") && !text.contains("create") && !text.contains("patch"));

    // Issue 48: actions: true adds patch on exactly the Flux kinds that reconcile.
    let acting = ok(helm(&[
        "template",
        "reader",
        "fleetglass-reader",
        "--set",
        "actions=true",
    ]));
    let patched: Vec<String> = rules_of(&acting)
        .as_array()
        .unwrap()
        .iter()
        .filter(|rule| rule["verbs"] == serde_json::json!(["patch"]))
        .flat_map(|rule| rule["resources"].as_array().unwrap().clone())
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        patched,
        [
            "kustomizations",
            "helmreleases",
            "gitrepositories",
            "ocirepositories",
            "helmrepositories",
            "helmcharts",
            "buckets"
        ]
    );
}

/// The chart's default install, run as its pod would run: the ServiceAccount and RBAC it
/// renders applied to a real API server, a TokenRequest token for that account, the CA and
/// namespace where a kubelet mounts them, the ConfigMap where the pod mounts it, the args and
/// env as rendered, as the pod's user. It must find the cluster it runs in on its own and show
/// that cluster's Kustomizations through its API.
#[tokio::test(flavor = "multi_thread")]
async fn the_default_install_watches_the_cluster_it_runs_in() {
    let bed = Testbed::up("shared", 3);
    let cluster = bed.clusters[0].as_str();
    let namespace = "fleetglass";
    apply(
        &bed,
        cluster,
        &format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {namespace}}}\n"),
    );
    let database = common::fresh_database_url().await;
    let secret = bed.kubectl_output(
        cluster,
        &[
            "-n",
            namespace,
            "create",
            "secret",
            "generic",
            "fleetglass-database",
            "--from-literal",
            &format!("url={database}"),
            "--dry-run=client",
            "-o",
            "yaml",
        ],
        None,
    );
    apply(&bed, cluster, &String::from_utf8_lossy(&secret.stdout));
    let flux = unique_namespace("chart-pod");
    apply(&bed, cluster, &flux_pair(&flux));

    build_dependencies();
    let rendered = documents(&ok(helm(&[
        "template",
        "fleetglass",
        "fleetglass",
        "--namespace",
        namespace,
    ])));
    let identity: Vec<&serde_json::Value> = rendered
        .iter()
        .filter(|d| {
            ["ServiceAccount", "ClusterRole", "ClusterRoleBinding"]
                .contains(&d["kind"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        identity.len(),
        3,
        "the default install brings its own read-only identity"
    );
    let manifests: Vec<String> = identity
        .iter()
        .map(|d| serde_json::to_string(d).unwrap())
        .collect();
    apply(&bed, cluster, &manifests.join("\n---\n"));
    let config_maps: Vec<serde_json::Value> = rendered
        .iter()
        .filter(|d| d["kind"] == "ConfigMap")
        .cloned()
        .collect();
    let template = &find(&rendered, "Deployment")["spec"]["template"];
    let run = PodRun {
        bed: &bed,
        cluster,
        namespace,
        config_maps: &config_maps,
        dir: bed.state.join(format!("chart-pod-{}", std::process::id())),
    };
    let mut pod = run.start(template, common::free_port());
    let client = reqwest::Client::new();
    let url = format!(
        "{}/api/v1/objects?kind=Kustomization&namespace={flux}",
        pod.base
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let found = loop {
        pod.assert_running();
        let page: Option<serde_json::Value> = match client.get(&url).send().await {
            Ok(response) => response.json().await.ok(),
            Err(_) => None,
        };
        if let Some(items) = page
            .as_ref()
            .and_then(|p| p["items"].as_array())
            .filter(|i| !i.is_empty())
        {
            break items.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the pod's API never listed the cluster's Kustomization:\n{}",
            pod.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    assert_eq!(found.len(), 1, "{}", pod.log());
    assert_eq!(found[0]["name"], "app");
    assert_eq!(
        found[0]["cluster"],
        fleetglass::sources::kube::IN_CLUSTER_NAME
    );
    let ready = client
        .get(format!("{}/readyz", pod.base))
        .send()
        .await
        .unwrap();
    assert!(ready.status().is_success());
    assert_eq!(
        Some(pod.uid()),
        template["spec"]["securityContext"]["runAsUser"].as_u64()
    );
}

fn rendered(sets: &[&str]) -> Vec<serde_json::Value> {
    documents(&ok(render(sets)))
}

fn named<'a>(docs: &'a [serde_json::Value], kind: &str, name: &str) -> &'a serde_json::Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn pod_spec(docs: &[serde_json::Value]) -> &serde_json::Value {
    &find(docs, "Deployment")["spec"]["template"]["spec"]
}

#[test]
fn the_pods_identity_is_right_with_and_without_the_reader_subchart() {
    let docs = rendered(&[]);
    assert_eq!(pod_spec(&docs)["serviceAccountName"], "fg");
    assert_eq!(pod_spec(&docs)["automountServiceAccountToken"], true);
    named(&docs, "ServiceAccount", "fg");
    let binding = named(
        &docs,
        "ClusterRoleBinding",
        "fleetglass-reader:fleetglass:fg",
    );
    assert_eq!(binding["subjects"][0]["name"], "fg");
    // ClusterRoles are cluster-wide: a second release of the same name elsewhere must not collide.
    let other = documents(&ok(helm(&[
        "template",
        "fg",
        "fleetglass",
        "--namespace",
        "staging",
    ])));
    named(&other, "ClusterRole", "fleetglass-reader:staging:fg");

    let without = rendered(&["fleetglass-reader.enabled=false"]);
    assert_eq!(pod_spec(&without)["serviceAccountName"], "default");
    assert!(
        !without
            .iter()
            .any(|d| d["kind"] == "ServiceAccount" || d["kind"] == "ClusterRole")
    );
    let own = rendered(&[
        "fleetglass-reader.enabled=false",
        "serviceAccount.create=true",
    ]);
    assert_eq!(pod_spec(&own)["serviceAccountName"], "fg-fleetglass");
    named(&own, "ServiceAccount", "fg-fleetglass");
    let existing = rendered(&[
        "fleetglass-reader.enabled=false",
        "serviceAccount.name=platform-reader",
    ]);
    assert_eq!(pod_spec(&existing)["serviceAccountName"], "platform-reader");
    // With the subchart, a different name would leave the pods without its RBAC.
    let output = render(&["serviceAccount.name=other"]);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("fleetglass-reader.serviceAccount.name")
    );
    let annotated = rendered(&[
        "fleetglass-reader.serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::1:role/r",
    ]);
    assert_eq!(
        named(&annotated, "ServiceAccount", "fg")["metadata"]["annotations"]["eks.amazonaws.com/role-arn"],
        "arn:aws:iam::1:role/r"
    );
}

#[test]
fn an_api_tokens_secret_puts_the_server_in_token_mode() {
    let docs = rendered(&["apiTokens.existingSecret=tokens"]);
    let config = find(&docs, "ConfigMap")["data"]["config.yaml"]
        .as_str()
        .unwrap();
    let config: serde_json::Value = fleetglass::yaml::from_str(config).unwrap();
    assert_eq!(config["web"]["auth"]["mode"], "tokens");
    let env = &pod_spec(&docs)["containers"][0]["env"];
    assert!(
        env.as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "FLEETGLASS_API_TOKENS_FILE")
    );
    // Proxy mode keeps tokens for scripts; "none" beside a tokens file is a contradiction.
    let proxy = rendered(&[
        "apiTokens.existingSecret=tokens",
        "config.web.auth.mode=proxy",
    ]);
    assert!(
        find(&proxy, "ConfigMap")["data"]["config.yaml"]
            .as_str()
            .unwrap()
            .contains("mode: proxy")
    );
    let output = render(&[
        "apiTokens.existingSecret=tokens",
        "config.web.auth.mode=none",
    ]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("config.web.auth.mode"));
}

/// Issue 48: single sign-on's client secret comes from a Secret, never from values; scripts'
/// tokens stay valid beside it.
#[test]
fn single_sign_on_takes_its_client_secret_from_a_secret() {
    let docs = rendered(&[
        "oidcClientSecret.existingSecret=sso",
        "apiTokens.existingSecret=tokens",
        "config.public_url=https://fleet.example.com",
        "config.web.auth.mode=oidc",
        "config.web.auth.oidc.issuer=https://dex.example.com",
        "config.web.auth.oidc.client_id=fleetglass",
    ]);
    let config = find(&docs, "ConfigMap")["data"]["config.yaml"]
        .as_str()
        .unwrap();
    let config: serde_json::Value = fleetglass::yaml::from_str(config).unwrap();
    assert_eq!(config["web"]["auth"]["mode"], "oidc");
    let env = pod_spec(&docs)["containers"][0]["env"]
        .as_array()
        .unwrap()
        .clone();
    let secret = env
        .iter()
        .find(|e| e["name"] == "FLEETGLASS_OIDC_CLIENT_SECRET")
        .expect("the client secret in the environment");
    assert_eq!(secret["valueFrom"]["secretKeyRef"]["name"], "sso");
    assert_eq!(secret["valueFrom"]["secretKeyRef"]["key"], "client-secret");
    // The schema refuses a secret written into values.
    let output = render(&["oidcClientSecret.secret=hunter2"]);
    assert!(!output.status.success());
}

#[test]
fn the_chart_offers_the_extension_points_chart_users_expect() {
    let docs = rendered(&[
        "extraEnv[0].name=SLACK_CHANNEL,extraEnv[0].value=C42",
        "extraEnvFrom[0].secretRef.name=more",
        "extraVolumes[0].name=slack,extraVolumes[0].secret.secretName=slack-bot",
        "extraVolumeMounts[0].name=slack,extraVolumeMounts[0].mountPath=/var/run/secrets/slack",
        "priorityClassName=critical",
        "topologySpreadConstraints[0].maxSkew=1,topologySpreadConstraints[0].topologyKey=zone,topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule",
        "podSecurityContext.runAsUser=null,podSecurityContext.runAsGroup=null,podSecurityContext.fsGroup=null",
        "commonLabels.team=platform",
        "fullnameOverride=glass",
        "networkPolicy.enabled=true",
        "httpRoute.enabled=true,httpRoute.parentRefs[0].name=public",
        "ingress.enabled=true,ingress.hosts[0].host=a.example.com,ingress.hosts[0].paths[0].path=/,ingress.hosts[0].paths[0].pathType=Prefix,ingress.hosts[1].host=b.example.com,ingress.hosts[1].paths[0].path=/fleet,ingress.hosts[1].paths[0].pathType=Prefix",
        "prometheusRule.enabled=true",
    ]);
    let spec = pod_spec(&docs);
    let container = &spec["containers"][0];
    assert!(
        container["env"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "SLACK_CHANNEL" && e["value"] == "C42")
    );
    assert_eq!(container["envFrom"][0]["secretRef"]["name"], "more");
    assert!(
        container["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["mountPath"] == "/var/run/secrets/slack")
    );
    assert!(
        spec["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["secret"]["secretName"] == "slack-bot")
    );
    assert_eq!(spec["priorityClassName"], "critical");
    let spread = &spec["topologySpreadConstraints"][0];
    assert_eq!(
        spread["labelSelector"]["matchLabels"]["app.kubernetes.io/component"],
        "all"
    );
    assert_eq!(
        spread["labelSelector"]["matchLabels"]["app.kubernetes.io/instance"],
        "fg"
    );
    // OpenShift's restricted profile assigns the uid.
    assert!(spec["securityContext"]["runAsUser"].is_null());
    assert_eq!(spec["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        container["terminationMessagePolicy"],
        "FallbackToLogsOnError"
    );
    assert_eq!(container["startupProbe"]["httpGet"]["path"], "/healthz");
    for kind in [
        "Deployment",
        "Service",
        "ConfigMap",
        "NetworkPolicy",
        "HTTPRoute",
        "Ingress",
        "PrometheusRule",
    ] {
        let doc = named(&docs, kind, "glass");
        assert_eq!(doc["metadata"]["labels"]["team"], "platform", "{kind}");
    }
    let ingress = named(&docs, "Ingress", "glass");
    assert_eq!(
        ingress["spec"]["rules"][1]["http"]["paths"][0]["path"],
        "/fleet"
    );
    let route = named(&docs, "HTTPRoute", "glass");
    assert_eq!(route["spec"]["parentRefs"][0]["name"], "public");
    assert_eq!(route["spec"]["rules"][0]["backendRefs"][0]["name"], "glass");
    let rules = named(&docs, "PrometheusRule", "glass")["spec"]["groups"][0]["rules"].to_string();
    for alert in [
        "FleetglassDown",
        "FleetglassClusterDataStale",
        "FleetglassAlertDeliveryFailing",
        "FleetglassAlertOutboxBacklog",
    ] {
        assert!(rules.contains(alert), "{alert}");
    }
    assert!(
        rules.contains("> 600"),
        "staleAfter 10m in seconds: {rules}"
    );
}

#[test]
fn in_split_topology_the_collectors_metrics_are_scraped() {
    let docs = rendered(&["topology=split", "serviceMonitor.enabled=true"]);
    let service = named(&docs, "Service", "fg-fleetglass-collector-metrics");
    assert_eq!(
        service["spec"]["selector"]["app.kubernetes.io/component"],
        "collector"
    );
    let web = named(&docs, "ServiceMonitor", "fg-fleetglass-web");
    let collector = named(&docs, "ServiceMonitor", "fg-fleetglass-collector");
    for (monitor, component) in [(web, "web"), (collector, "collector")] {
        assert_eq!(
            monitor["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"],
            component
        );
        let selected = docs.iter().filter(|d| {
            d["kind"] == "Service"
                && d["metadata"]["labels"]["app.kubernetes.io/component"] == component
        });
        assert_eq!(
            selected.count(),
            1,
            "{component}: one Service for its ServiceMonitor"
        );
    }
}

#[test]
fn with_authentication_on_the_scrape_sends_a_token_from_a_secret() {
    let docs = rendered(&[
        "serviceMonitor.enabled=true",
        "serviceMonitor.bearerTokenSecret.existingSecret=metrics-token",
        "serviceMonitor.bearerTokenSecret.key=token",
    ]);
    let monitor = named(&docs, "ServiceMonitor", "fg-fleetglass");
    let authorization = &monitor["spec"]["endpoints"][0]["authorization"];
    assert_eq!(authorization["type"], "Bearer");
    assert_eq!(authorization["credentials"]["name"], "metrics-token");
    assert_eq!(authorization["credentials"]["key"], "token");
    let plain = rendered(&["serviceMonitor.enabled=true"]);
    let monitor = named(&plain, "ServiceMonitor", "fg-fleetglass");
    assert!(monitor["spec"]["endpoints"][0]["authorization"].is_null());
}
