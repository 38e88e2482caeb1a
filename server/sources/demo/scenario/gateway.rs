//! The gateway domain: a root Kustomization `gateway` health-checking its three children (apps:
//! the gateway HelmRelease; config: Calico policies applied as `config-deployer`; edge: the proxy
//! and its Service). Hosts incident c (RBAC Forbidden) and the loop incident e (Gatekeeper).

use super::platform::bootstrapped;
use super::{DENIED_AT, FIXED_AT, GATEKEEPER_LOOP, RBAC_FORBIDDEN, Site};
use crate::sources::demo::hex::git_revision;
use crate::sources::demo::k8s::{
    Artifact, Chart, HelmReleaseState, KustomizationSpec, Meta, Release, Run, Target, Workload,
    WorkloadKind, crd, git_repository, helm_chart, helm_release, inventory_id, kustomization,
    oci_helm_repository,
};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;

const DOMAIN: &str = "gateway";
const NS: &str = "gateway-system";

pub const FORBIDDEN: &str = "GlobalNetworkPolicy/allow-gateway-ingress dry-run failed: \
globalnetworkpolicies.crd.projectcalico.org \"allow-gateway-ingress\" is forbidden: User \
\"system:serviceaccount:flux-system:config-deployer\" cannot patch resource \"globalnetworkpolicies\" \
in API group \"crd.projectcalico.org\" at the cluster scope";

pub const DENIED: &str = "Service/gateway-system/gateway-proxy dry-run failed: admission webhook \
\"validation.gatekeeper.sh\" denied the request: [lb-whitelist] LoadBalancer Service \
gateway-system/gateway-proxy is not in the allow list\nWarning: [finops-required-labels] \
K8sRequiredLabels: you must provide labels: {\"cost-center\", \"team\"}";

/// The gateway repository's n-th commit. n = 0 is the head when the demo starts (pushed 40
/// minutes before, with the Calico policy of incident c); each loop pushes the LoadBalancer
/// change at DENIED_AT (n odd) and its fix at FIXED_AT.
pub fn revision(n: i64) -> String {
    git_revision(&format!("gateway-stack/{n}"))
}

/// The head commit's number and when it was pushed.
fn head(site: &Site) -> (i64, DateTime<Utc>) {
    let m = &site.m;
    let pushed = if m.phase >= FIXED_AT {
        m.at_phase(FIXED_AT)
    } else if m.phase >= DENIED_AT {
        m.at_phase(DENIED_AT)
    } else {
        m.last_passed(FIXED_AT, m.before(TimeDelta::minutes(40)))
    };
    (m.passes(DENIED_AT) + m.passes(FIXED_AT), pushed)
}

/// The gateway chart per ring: dev already runs 1.5.0, which swapped legacy-gateway-crds for
/// new-gateway-crds two days ago and so dropped the RateLimitConfig CRD (incident b).
fn chart_release(site: &Site) -> (Release<'static>, Release<'static>) {
    let m = &site.m;
    let (v141, v142, v150) = (
        m.before(TimeDelta::days(40)),
        m.before(TimeDelta::days(12)),
        m.before(TimeDelta::days(2)),
    );
    let release = |chart_version, revision, deployed| Release {
        chart: "gateway",
        chart_version,
        app_version: chart_version,
        revision,
        deployed,
    };
    if site.ring == "dev" {
        (release("1.5.0", 8, v150), release("1.4.2", 7, v142))
    } else {
        (release("1.4.2", 7, v142), release("1.4.1", 6, v141))
    }
}

pub fn build(site: &Site, out: &mut Vec<Value>) {
    let m = &site.m;
    let (n, pushed) = head(site);
    let head_revision = revision(n);
    let last_good = revision(-1);
    let meta = |namespace: &str, name: &str| site.meta(DOMAIN, namespace, name);
    let child =
        |name: &str| meta("flux-system", name).applied_by_kustomization("flux-system", "gateway");
    out.push(git_repository(
        &bootstrapped(meta("flux-system", DOMAIN)),
        "https://github.com/acme/gateway-stack",
        &Artifact::new(head_revision.as_str(), pushed),
    ));

    // Incident e: the LoadBalancer change is denied until its fix lands; the root waits on it.
    let denied = site.is(GATEKEEPER_LOOP) && m.within(DENIED_AT, FIXED_AT);
    let (previous, attempted) = (revision(n - 1), head_revision.as_str());
    let recovered = if site.is(GATEKEEPER_LOOP) {
        m.last_passed(FIXED_AT, site.settled())
    } else {
        site.settled()
    };
    let applied = Run::Applied {
        revision: &head_revision,
        since: recovered,
    };

    let kustomization_target = |name| Target {
        api_version: "kustomize.toolkit.fluxcd.io/v1",
        kind: "Kustomization",
        namespace: "flux-system",
        name,
    };
    let root = KustomizationSpec {
        source: ("GitRepository", "flux-system", DOMAIN),
        path: "./deploy",
        interval_minutes: 10,
        depends_on: vec![("flux-system", "networking-crds")],
        health_checks: ["gateway-apps", "gateway-config", "gateway-edge"]
            .map(kustomization_target)
            .to_vec(),
        wait: false,
        service_account: None,
    };
    let root_run = if site.is(RBAC_FORBIDDEN) {
        Run::Failed {
            applied: &last_good,
            attempted,
            reason: "HealthCheckFailed",
            message: "timeout waiting for: [Kustomization/flux-system/gateway-config status: 'InProgress']",
            since: m.before(TimeDelta::minutes(30)),
            observed_generation: 1,
        }
    } else if denied {
        Run::InProgress {
            applied: &previous,
            attempted,
            since: m.at_phase(DENIED_AT),
        }
    } else {
        applied
    };
    out.push(kustomization(
        &bootstrapped(meta("flux-system", DOMAIN)),
        &root,
        root_run,
        &[],
    ));

    let apps = KustomizationSpec {
        path: "./deploy/apps",
        health_checks: Vec::new(),
        depends_on: Vec::new(),
        wait: true,
        ..root.clone()
    };
    let settled_run = Run::Applied {
        revision: &head_revision,
        since: site.settled(),
    };
    out.push(kustomization(
        &child("gateway-apps"),
        &apps,
        settled_run,
        &[],
    ));

    // Incident c: the new Calico policy needs RBAC that config-deployer lacks on staging.
    let config = KustomizationSpec {
        path: "./deploy/config",
        wait: false,
        service_account: Some("config-deployer"),
        ..apps.clone()
    };
    let mut config_inventory = vec![(inventory_id(NS, "gateway-config", "", "ConfigMap"), "v1")];
    let config_run = if site.is(RBAC_FORBIDDEN) {
        Run::Failed {
            applied: &last_good,
            attempted,
            reason: "ReconciliationFailed",
            message: FORBIDDEN,
            since: m.before(TimeDelta::minutes(40)),
            observed_generation: 3,
        }
    } else {
        config_inventory.push((
            inventory_id(
                "",
                "allow-gateway-ingress",
                "crd.projectcalico.org",
                "GlobalNetworkPolicy",
            ),
            "v1",
        ));
        settled_run
    };
    out.push(kustomization(
        &child("gateway-config").generation(4),
        &config,
        config_run,
        &config_inventory,
    ));

    let edge = KustomizationSpec {
        path: "./deploy/edge",
        depends_on: vec![("flux-system", "gateway-apps")],
        wait: false,
        ..apps.clone()
    };
    let edge_run = if denied {
        Run::Failed {
            applied: &previous,
            attempted,
            reason: "ReconciliationFailed",
            message: DENIED,
            since: m.at_phase(DENIED_AT),
            observed_generation: 1,
        }
    } else {
        applied
    };
    let edge_inventory = [(inventory_id(NS, "gateway-proxy", "", "Service"), "v1")];
    out.push(kustomization(
        &child("gateway-edge"),
        &edge,
        edge_run,
        &edge_inventory,
    ));

    release(site, out);
    proxy(site, out);
}

/// The gateway HelmRelease (from an OCI Helm repository), its controller and, until 1.5.0, the
/// RateLimitConfig CRD its legacy subchart shipped.
fn release(site: &Site, out: &mut Vec<Value>) {
    let m = &site.m;
    let applied = |name: &str| {
        site.meta(DOMAIN, NS, name)
            .applied_by_kustomization("flux-system", "gateway-apps")
    };
    out.push(oci_helm_repository(
        &applied("gateway-charts"),
        "oci://ghcr.io/acme/charts",
    ));
    let (current, previous) = chart_release(site);
    out.push(helm_chart(
        &site.meta(DOMAIN, NS, "gateway-system-gateway"),
        "gateway",
        current.chart_version,
        "gateway-charts",
        current.deployed,
    ));
    let chart = Chart::FromRepository {
        chart: "gateway",
        version: current.chart_version,
        repository: "gateway-charts",
    };
    let state = HelmReleaseState {
        current,
        previous: Some(previous),
        run_started: None,
    };
    out.push(helm_release(&applied(DOMAIN), chart, &state));
    let installed = |meta: Meta| meta.installed_by_helm_release(NS, DOMAIN);
    if current.chart_version != "1.5.0" {
        let meta = installed(Meta::new(
            "",
            "ratelimitconfigs.ratelimit.solo.io",
            site.created(),
        ));
        out.push(crd(
            &meta,
            "ratelimit.solo.io",
            "RateLimitConfig",
            "v1alpha1",
        ));
    }
    let image = format!("ghcr.io/acme/gateway-controller:v{}", current.app_version);
    let controller = Workload::new(
        WorkloadKind::Deployment,
        installed(site.meta(DOMAIN, NS, "gateway-controller")),
        "controller",
        &image,
        2,
        current.deployed,
    );
    out.extend(controller.settled(m.now));
}

/// The proxy Deployment applied by gateway-edge (its Service is what Gatekeeper denies).
fn proxy(site: &Site, out: &mut Vec<Value>) {
    let image = "docker.io/envoyproxy/envoy:v1.31.2".to_string();
    let since = site.m.before(TimeDelta::days(12));
    let proxy = Workload::new(
        WorkloadKind::Deployment,
        site.meta(DOMAIN, NS, "gateway-proxy")
            .applied_by_kustomization("flux-system", "gateway-edge"),
        "envoy",
        &image,
        2,
        since,
    );
    out.extend(proxy.settled(site.m.now));
}
