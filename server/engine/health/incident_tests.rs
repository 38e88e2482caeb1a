//! The seed incidents rebuilt as the objects a cluster would show, and what fleetglass must say.

use super::State::*;
use super::testkit::*;
use serde_json::{Value, json};

fn checks(value: Value, targets: &[(&str, &str, &str)]) -> Value {
    let mut value = value;
    value["spec"]["wait"] = json!(false);
    value["spec"]["healthChecks"] = targets
        .iter()
        .map(|(kind, namespace, name)| json!({"kind": kind, "name": name, "namespace": namespace}))
        .collect();
    value
}

const CALICO_FORBIDDEN: &str = "GlobalNetworkPolicy/allow-gateway dry-run failed (Forbidden): globalnetworkpolicies.crd.projectcalico.org \
    \"allow-gateway\" is forbidden: User \"system:serviceaccount:flux-system:config-deployer\" cannot patch resource \
    \"globalnetworkpolicies\" in API group \"crd.projectcalico.org\" at the cluster scope";

const GATEKEEPER_DENIAL: &str = "Service/gateway/proxy dry-run failed: admission webhook \"validation.gatekeeper.sh\" denied the \
    request: [lb-whitelist] LoadBalancer Service gateway/proxy is not whitelisted\n[required-labels] warning: missing label cost-center";

/// Seed 000, incident 1: deploy-config fails on RBAC, the root health-checks it and never converges.
#[test]
fn incident_1_rbac_and_admission_failures_are_named_and_the_root_is_a_symptom() {
    let root = with_conditions(
        checks(
            kustomization("platform", &[]),
            &[
                ("Kustomization", "flux-system", "deploy-apps"),
                ("Kustomization", "flux-system", "deploy-config"),
            ],
        ),
        vec![
            condition(
                "Ready",
                "Unknown",
                "Progressing",
                "Running health checks for revision with a timeout of 9m30s",
                45,
            ),
            condition(
                "Reconciling",
                "True",
                "Progressing",
                "Running health checks",
                45,
            ),
        ],
    );
    let config = with_conditions(
        applied_by(
            kustomization("deploy-config", &[]),
            "kustomize",
            "flux-system",
            "platform",
        ),
        vec![not_ready("ReconciliationFailed", CALICO_FORBIDDEN, 44)],
    );
    let apps = with_conditions(
        applied_by(
            kustomization("deploy-apps", &[]),
            "kustomize",
            "flux-system",
            "platform",
        ),
        vec![not_ready("ReconciliationFailed", GATEKEEPER_DENIAL, 58)],
    );
    let mut values = flux_controllers();
    values.extend([git_repository("flux-system", SHA), root, config, apps]);
    let run = run(&values);

    let config = run.verdict("Kustomization", "flux-system", "deploy-config");
    assert_eq!(config.state, Failed);
    assert_eq!(
        config.reason,
        "RBAC Forbidden: service account flux-system/config-deployer cannot patch globalnetworkpolicies.crd.projectcalico.org at cluster scope"
    );
    assert_eq!(config.message, CALICO_FORBIDDEN, "the raw message is kept");
    let apps = run.verdict("Kustomization", "flux-system", "deploy-apps");
    assert_eq!(
        apps.reason,
        "admission denied by webhook validation.gatekeeper.sh (policy lb-whitelist)"
    );

    let platform = run.verdict("Kustomization", "flux-system", "platform");
    assert_eq!(platform.state, Blocked, "{platform:?}");
    assert_eq!(platform.root_causes.len(), 2);
    assert_eq!(
        run.evaluation.root_causes.len(),
        2,
        "two things to fix, not three red objects"
    );
}

/// Seed 000, incident 2: Helm deleted a CRD; a day later NetOp's new pod crash-loops while its
/// HelmRelease stays Ready.
#[test]
fn incident_2_a_crash_looping_pod_behind_a_ready_release_is_found() {
    let crash_log = "{\"level\":\"error\",\"logger\":\"setup\",\"msg\":\"unable to setup global resources\",\
        \"error\":\"no matches for kind \\\"RateLimitConfig\\\" in version \\\"ratelimit.solo.io/v1alpha1\\\"\"}";
    let mut crashing = pod(
        "platform-runtime",
        "network-operator",
        "new",
        Some((
            "CrashLoopBackOff",
            "back-off 5m0s restarting failed container",
        )),
    );
    crashing["status"]["containerStatuses"][0]["lastState"] =
        json!({"terminated": {"reason": "Error", "exitCode": 1, "message": crash_log}});
    crashing["status"]["containerStatuses"][0]["restartCount"] = json!(14);
    let mut values = flux_controllers();
    values.extend([
        helm_repository("charts"),
        helm_chart("platform-runtime", "network-operator", "charts", "2.14.0"),
        helm_release("platform-runtime", "network-operator", "charts"),
        helm_chart("gateway", "gateway-stack", "charts", "2.14.0"),
        helm_release("gateway", "gateway-stack", "charts"),
        applied_by(
            deployment("platform-runtime", "network-operator", 2, 2),
            "helm",
            "platform-runtime",
            "network-operator",
        ),
        pod("platform-runtime", "network-operator", "old1", None),
        pod("platform-runtime", "network-operator", "old2", None),
        crashing,
    ]);
    let run = run(&values);
    let release = run.verdict("HelmRelease", "platform-runtime", "network-operator");
    assert_eq!(
        release.state, Degraded,
        "Ready=True is not enough: {release:?}"
    );
    assert!(
        release.message.contains("network-operator-5d9c7b-new: CrashLoopBackOff: CRD missing: no kind RateLimitConfig in ratelimit.solo.io/v1alpha1"),
        "{}",
        release.message
    );
    let workload_id = id("Deployment", "platform-runtime", "network-operator");
    assert_eq!(
        run.roots("HelmRelease", "platform-runtime", "network-operator"),
        [workload_id.as_str()]
    );
    assert_eq!(
        run.state("HelmRelease", "gateway", "gateway-stack"),
        Healthy,
        "the CRD removal itself needs the CRD rules (another issue)"
    );
}

fn incident_4(controller_pods: Vec<Value>, available: i64) -> Run {
    let terraform = with_conditions(
        terraform("nlb-security-groups"),
        vec![
            ready("TerraformPlannedNoChanges", "Plan no changes"),
            condition(
                "Reconciling",
                "True",
                "Progressing",
                "Fulfilling prerequisites",
                7 * 24 * 60,
            ),
        ],
    );
    let deploy_apps = with_conditions(
        checks(
            kustomization("deploy-apps", &[]),
            &[("Terraform", "flux-system", "nlb-security-groups")],
        ),
        vec![
            condition(
                "Ready",
                "Unknown",
                "Progressing",
                "Running health checks for revision with a timeout of 9m30s",
                5 * 24 * 60,
            ),
            condition(
                "Reconciling",
                "True",
                "Progressing",
                "Running health checks",
                5 * 24 * 60,
            ),
        ],
    );
    let deploy_config = with_conditions(
        kustomization("deploy-config", &["deploy-apps"]),
        vec![not_ready(
            "DependencyNotReady",
            "dependency 'flux-system/deploy-apps' is not ready",
            5 * 24 * 60,
        )],
    );
    let tofu = applied_by(
        controller("tofu-controller", available),
        "helm",
        "flux-system",
        "tofu-controller",
    );
    let mut values = flux_controllers();
    values.extend([
        git_repository("flux-system", SHA),
        helm_repository("charts"),
        helm_chart("flux-system", "tofu-controller", "charts", "2.14.0"),
        helm_release("flux-system", "tofu-controller", "charts"),
        tofu,
        terraform,
        deploy_apps,
        deploy_config,
    ]);
    values.extend(controller_pods);
    run(&values)
}

/// Seed 000, incident 4, first reading: a stale Reconciling flag freezes the chain for days.
#[test]
fn incident_4_a_stale_terraform_is_the_one_root_cause_of_the_frozen_chain() {
    let run = incident_4(vec![pod("flux-system", "tofu-controller", "a", None)], 1);
    let terraform_id = id("Terraform", "flux-system", "nlb-security-groups");
    let terraform = run.verdict("Terraform", "flux-system", "nlb-security-groups");
    assert_eq!(terraform.state, Stale);
    assert_eq!(
        terraform.root_causes,
        [crate::model::ObjectId(terraform_id.clone())]
    );
    for name in ["deploy-apps", "deploy-config"] {
        assert_eq!(
            run.state("Kustomization", "flux-system", name),
            Blocked,
            "{name}"
        );
        assert_eq!(
            run.roots("Kustomization", "flux-system", name),
            [terraform_id.as_str()]
        );
    }
    assert_eq!(run.evaluation.root_causes.len(), 1);
    assert_eq!(run.root_cause(&terraform_id).affected.len(), 3);
}

/// Seed 000, incident 4, the truth: the tofu-controller was in ImagePullBackOff all along.
#[test]
fn incident_4_a_dead_controller_is_the_root_cause_not_its_stale_status() {
    let pulling = (
        "ImagePullBackOff",
        "Back-off pulling image \"ghcr.io/flux-iac/tofu-controller:v0.16.0-rc.5\"",
    );
    let run = incident_4(
        vec![pod("flux-system", "tofu-controller", "a", Some(pulling))],
        0,
    );
    let controller_id = id("Deployment", "flux-system", "tofu-controller");
    let controller = run.verdict("Deployment", "flux-system", "tofu-controller");
    assert_eq!(controller.state, Failed);
    assert!(
        controller
            .reason
            .starts_with("ImagePullBackOff: Back-off pulling image"),
        "{}",
        controller.reason
    );
    assert_eq!(
        run.state("Terraform", "flux-system", "nlb-security-groups"),
        Unverifiable
    );
    for (kind, namespace, name) in [
        ("Terraform", "flux-system", "nlb-security-groups"),
        ("Kustomization", "flux-system", "deploy-apps"),
        ("Kustomization", "flux-system", "deploy-config"),
        ("HelmRelease", "flux-system", "tofu-controller"),
    ] {
        assert_eq!(
            run.roots(kind, namespace, name),
            [controller_id.as_str()],
            "{name}"
        );
    }
    assert_eq!(
        run.state("HelmRelease", "flux-system", "tofu-controller"),
        Degraded,
        "Helm said Ready; the pod says otherwise"
    );
    assert_eq!(
        run.evaluation.root_causes.len(),
        1,
        "{:?}",
        run.evaluation.root_causes
    );
    let cause = &run.evaluation.root_causes[0];
    assert_eq!(cause.id.as_str(), controller_id);
    assert!(cause.affected.len() >= 5, "{:?}", cause.affected);
}

// Seed 004 (a sharded HelmRepository behind an unlabelled HelmChart) is in sharding_tests.rs.
