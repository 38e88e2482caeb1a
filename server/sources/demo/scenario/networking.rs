//! The networking domain: the dependsOn chain networking-crds → networking-controllers (NetOp
//! HelmRelease) → infra-network (Terraform NLB security groups, health-checked) →
//! networking-config. Hosts incident a (dead tofu-controller, stale Terraform) and incident b
//! (NetOp crash-looping on the RateLimitConfig CRD Helm deleted).

use super::platform::bootstrapped;
use super::{CRD_DELETED, Site};
use crate::sources::demo::hex::{digest, git_revision};
use crate::sources::demo::k8s::{
    Artifact, Chart, ContainerState, HelmReleaseState, KustomizationSpec, Meta, PodPlan, Release,
    Run, Target, TerraformRun, Workload, WorkloadKind, crd, git_repository, helm_chart,
    helm_release, helm_repository, inventory_id, kustomization, running_pods, terraform,
    workload_with_pods,
};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;

const DOMAIN: &str = "networking";
const NS: &str = "networking";

pub const HEALTH_TIMEOUT: &str =
    "timeout waiting for: [Terraform/flux-system/nlb-security-groups status: 'InProgress']";

/// What the new NetOp pod logs before it exits (its termination message).
pub const NETOP_CRASH: &str = r#"{"level":"error","logger":"setup","msg":"unable to setup global resources","error":"no matches for kind \"RateLimitConfig\" in version \"ratelimit.solo.io/v1alpha1\""}"#;

/// The networking repository's commits: 1 eight days ago, 2 three days ago, 3 (head) yesterday.
fn revision(n: u8) -> String {
    git_revision(&format!("networking-stack/{n}"))
}

pub fn build(site: &Site, out: &mut Vec<Value>) {
    let m = &site.m;
    let head = revision(3);
    let meta = |name: &str| bootstrapped(site.meta(DOMAIN, "flux-system", name));
    out.push(git_repository(
        &meta(DOMAIN),
        "https://github.com/acme/networking-stack",
        &Artifact::new(head.as_str(), m.before(TimeDelta::days(1))),
    ));
    let settled = Run::Applied {
        revision: &head,
        since: site.settled(),
    };
    let crds = KustomizationSpec {
        source: ("GitRepository", "flux-system", DOMAIN),
        path: "./crds",
        interval_minutes: 60,
        depends_on: Vec::new(),
        health_checks: Vec::new(),
        wait: false,
        service_account: None,
    };
    out.push(kustomization(&meta("networking-crds"), &crds, settled, &[]));
    for (kind, plural) in [
        ("GlobalNetworkPolicy", "globalnetworkpolicies"),
        ("NetworkPolicy", "networkpolicies"),
    ] {
        let crd_meta = Meta::new(
            "",
            &format!("{plural}.crd.projectcalico.org"),
            site.created(),
        )
        .applied_by_kustomization("flux-system", "networking-crds");
        out.push(crd(&crd_meta, "crd.projectcalico.org", kind, "v1"));
    }
    let controllers = KustomizationSpec {
        path: "./controllers",
        interval_minutes: 10,
        depends_on: vec![("flux-system", "networking-crds")],
        wait: true,
        ..crds.clone()
    };
    out.push(kustomization(
        &meta("networking-controllers"),
        &controllers,
        settled,
        &[],
    ));
    netop(site, out);

    // Incident a: the health check sees the Terraform's stale Reconciling=True as InProgress
    // and times out on every run, so nothing after infra-network has applied for 7 days.
    let infra = KustomizationSpec {
        path: "./infra",
        depends_on: vec![("flux-system", "networking-controllers")],
        wait: false,
        health_checks: vec![Target {
            api_version: "infra.contrib.fluxcd.io/v1alpha2",
            kind: "Terraform",
            namespace: "flux-system",
            name: "nlb-security-groups",
        }],
        ..controllers.clone()
    };
    let (week_old, stale_since) = (revision(1), m.before(TimeDelta::days(7)));
    let infra_run = if site.tofu_down() {
        Run::Failed {
            applied: &week_old,
            attempted: &head,
            reason: "HealthCheckFailed",
            message: HEALTH_TIMEOUT,
            since: stale_since,
            observed_generation: 1,
        }
    } else {
        settled
    };
    out.push(kustomization(
        &meta("infra-network"),
        &infra,
        infra_run,
        &[],
    ));
    let last_run_ok = revision(2);
    let run = if site.tofu_down() {
        // Last planned 2 days ago, when the controller still ran; the condition is older.
        TerraformRun {
            revision: &last_run_ok,
            outputs_written: m.before(TimeDelta::hours(50)),
            reconciling_since: Some(stale_since - TimeDelta::hours(2)),
        }
    } else {
        TerraformRun {
            revision: &head,
            outputs_written: m.before(TimeDelta::hours(20)),
            reconciling_since: None,
        }
    };
    let tf_meta = site
        .meta(DOMAIN, "flux-system", "nlb-security-groups")
        .applied_by_kustomization("flux-system", "infra-network");
    out.push(terraform(
        &tf_meta,
        ("flux-system", DOMAIN),
        "./terraform/nlb-security-groups",
        &run,
    ));

    let config = KustomizationSpec {
        path: "./config",
        depends_on: vec![("flux-system", "infra-network")],
        health_checks: Vec::new(),
        ..infra.clone()
    };
    let config_run = if site.tofu_down() {
        Run::Blocked {
            applied: &week_old,
            dependency: "flux-system/infra-network",
            since: stale_since,
        }
    } else {
        settled
    };
    let policies = [
        (
            inventory_id(
                "",
                "default-deny",
                "crd.projectcalico.org",
                "GlobalNetworkPolicy",
            ),
            "v1",
        ),
        (inventory_id(NS, "netop-tenants", "", "ConfigMap"), "v1"),
    ];
    out.push(kustomization(
        &meta("networking-config"),
        &config,
        config_run,
        &policies,
    ));
}

/// NetOp per ring: 2.13.0 everywhere but dev, where 2.14.0 (an unrelated HPA change) rolled
/// out yesterday and its new pod crash-loops because the RateLimitConfig CRD is gone
/// (incident b). Helm's wait passed with 2 of 3 ready (maxUnavailable 1), so the release is Ready.
fn netop(site: &Site, out: &mut Vec<Value>) {
    let m = &site.m;
    let applied = |name: &str| {
        site.meta(DOMAIN, NS, name)
            .applied_by_kustomization("flux-system", "networking-controllers")
    };
    out.push(helm_repository(
        &applied("netop-charts"),
        "https://charts.acme.internal/netop",
        &Artifact::new(digest("netop-index"), m.before(TimeDelta::minutes(17))),
    ));
    let release = |chart_version, revision, deployed: DateTime<Utc>| Release {
        chart: "netop",
        chart_version,
        app_version: chart_version,
        revision,
        deployed,
    };
    let (v2123, v2130, v2140) = (
        m.before(TimeDelta::days(20)),
        m.before(TimeDelta::days(5)),
        m.before(TimeDelta::days(1)),
    );
    let crd_deleted = site.is(CRD_DELETED);
    let (current, previous) = if crd_deleted {
        (release("2.14.0", 12, v2140), release("2.13.0", 11, v2130))
    } else {
        (release("2.13.0", 11, v2130), release("2.12.3", 10, v2123))
    };
    out.push(helm_chart(
        &site.meta(DOMAIN, NS, "networking-netop"),
        "netop",
        current.chart_version,
        "netop-charts",
        current.deployed,
    ));
    let chart = Chart::FromRepository {
        chart: "netop",
        version: current.chart_version,
        repository: "netop-charts",
    };
    let state = HelmReleaseState {
        current,
        previous: Some(previous),
        run_started: None,
    };
    out.push(helm_release(&applied("netop"), chart, &state));

    let image = |version: &str| format!("ghcr.io/acme/netop:{version}");
    let deployment = Workload::new(
        WorkloadKind::Deployment,
        site.meta(DOMAIN, NS, "netop")
            .installed_by_helm_release(NS, "netop"),
        "manager",
        &image(current.chart_version),
        3,
        current.deployed,
    )
    .max_unavailable(1);
    let mut pods = running_pods(&image("2.13.0"), v2130, if crd_deleted { 2 } else { 3 });
    if crd_deleted {
        let crashing_since = v2140 + TimeDelta::seconds(20);
        pods.push(PodPlan {
            image: image("2.14.0"),
            created: v2140 + TimeDelta::seconds(4),
            state: ContainerState::crash_looping(crashing_since, m.now, NETOP_CRASH),
        });
    }
    out.extend(workload_with_pods(&deployment, &pods, m.now));
}
