//! flux-system on every cluster: the Flux controllers, the fleet repository and the root
//! Kustomization that applies everything else, the namespaces, and tofu-controller (installed by
//! a HelmRelease; dead on the clusters of incident a).

use super::Site;
use crate::sources::demo::hex::{digest, git_revision};
use crate::sources::demo::k8s::{
    Artifact, Chart, ContainerState, HelmReleaseState, KustomizationSpec, Meta, PodPlan, Release,
    Run, Workload, WorkloadKind, crd, git_repository, helm_chart, helm_release, helm_repository,
    kustomization, namespace, workload_with_pods,
};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;

const FLUX_CONTROLLERS: [(&str, &str); 4] = [
    ("source-controller", "v1.9.0"),
    ("kustomize-controller", "v1.9.0"),
    ("helm-controller", "v1.6.0"),
    ("notification-controller", "v1.9.0"),
];
/// The Flux release those controllers ship in, as `flux install` labels every object it writes
/// (`app.kubernetes.io/version`: fluxcd/flux2 pkg/manifestgen/install/templates.go, `labelsTmpl`).
const FLUX_VERSION: &str = "v2.9.0";
pub const TOFU_IMAGE: &str = "ghcr.io/flux-iac/tofu-controller:v0.16.0-rc.5";
const TOFU_CHART_VERSION: &str = "0.16.0-rc.5";

/// The fleet repository's head, pushed 5 hours before the demo started (incident d never
/// applied it), and the commit before it.
pub fn fleet_revision() -> String {
    git_revision("fleet/2")
}

pub fn previous_fleet_revision() -> String {
    git_revision("fleet/1")
}

/// Applied by the `flux-system` Kustomization, as `flux bootstrap` sets it up.
pub fn bootstrapped(meta: Meta) -> Meta {
    meta.applied_by_kustomization("flux-system", "flux-system")
}

/// The Deployment labels and selector of a Flux controller (`app: <name>` is the selector).
fn controller_meta(name: &str, created: DateTime<Utc>) -> Meta {
    Meta::new("flux-system", name, created)
        .label("app.kubernetes.io/part-of", "flux")
        .label("app.kubernetes.io/component", name)
        .label("app.kubernetes.io/instance", "flux-system")
        .label("app.kubernetes.io/version", FLUX_VERSION)
}

/// (kind, plural, group, served version) of the CRDs installed with Flux and tofu-controller.
const FLUX_CRDS: [(&str, &str, &str, &str); 8] = [
    (
        "Kustomization",
        "kustomizations",
        "kustomize.toolkit.fluxcd.io",
        "v1",
    ),
    (
        "HelmRelease",
        "helmreleases",
        "helm.toolkit.fluxcd.io",
        "v2",
    ),
    (
        "GitRepository",
        "gitrepositories",
        "source.toolkit.fluxcd.io",
        "v1",
    ),
    (
        "OCIRepository",
        "ocirepositories",
        "source.toolkit.fluxcd.io",
        "v1",
    ),
    (
        "HelmRepository",
        "helmrepositories",
        "source.toolkit.fluxcd.io",
        "v1",
    ),
    ("HelmChart", "helmcharts", "source.toolkit.fluxcd.io", "v1"),
    ("Bucket", "buckets", "source.toolkit.fluxcd.io", "v1"),
    (
        "Terraform",
        "terraforms",
        "infra.contrib.fluxcd.io",
        "v1alpha2",
    ),
];

pub fn build(site: &Site, out: &mut Vec<Value>) {
    let m = &site.m;
    let bootstrap = m.before(TimeDelta::days(200));
    let fleet = fleet_revision();
    let flux_meta = |name: &str| bootstrapped(Meta::new("flux-system", name, bootstrap));
    out.push(git_repository(
        &flux_meta("flux-system"),
        "ssh://git@github.com/acme/fleet",
        &Artifact::new(fleet.as_str(), m.before(TimeDelta::hours(5))),
    ));
    let path = format!("./clusters/{}", site.cluster.name);
    let spec = KustomizationSpec {
        source: ("GitRepository", "flux-system", "flux-system"),
        path: &path,
        interval_minutes: 10,
        depends_on: Vec::new(),
        health_checks: Vec::new(),
        wait: false,
        service_account: None,
    };
    let run = Run::Applied {
        revision: &fleet,
        since: site.settled(),
    };
    out.push(kustomization(&flux_meta("flux-system"), &spec, run, &[]));
    for name in [
        "flux-system",
        "gateway-system",
        "networking",
        "observability",
        "tenants",
    ] {
        out.push(namespace(&bootstrapped(Meta::new("", name, bootstrap))));
    }
    // The CRDs of every kind the fleet applies: the collector sees them on a real cluster, and
    // the engine fails consumers of a CRD that is missing (seed 000, incident 2).
    for (kind, plural, group, version) in FLUX_CRDS {
        let meta = bootstrapped(Meta::new("", &format!("{plural}.{group}"), bootstrap));
        out.push(crd(&meta, group, kind, version));
    }
    let running_since = m.before(TimeDelta::days(6));
    for (name, version) in FLUX_CONTROLLERS {
        let image = format!("ghcr.io/fluxcd/{name}:{version}");
        let deployment = Workload::new(
            WorkloadKind::Deployment,
            bootstrapped(controller_meta(name, bootstrap)),
            "manager",
            &image,
            1,
            running_since,
        );
        out.extend(deployment.settled(m.now));
    }
    tofu_controller(site, out);
}

/// tofu-controller, installed 9 days ago. On incident a's clusters its pod was rescheduled 2
/// days ago and cannot pull its image; its HelmRelease still says Ready (Helm only looked then).
fn tofu_controller(site: &Site, out: &mut Vec<Value>) {
    let m = &site.m;
    let installed = m.before(TimeDelta::days(9));
    let meta = |name: &str| bootstrapped(Meta::new("flux-system", name, installed));
    out.push(helm_repository(
        &meta("tofu-controller"),
        "https://flux-iac.github.io/tofu-controller",
        &Artifact::new(
            digest("tofu-controller-index"),
            m.before(TimeDelta::minutes(41)),
        ),
    ));
    out.push(helm_chart(
        &Meta::new("flux-system", "flux-system-tofu-controller", installed),
        "tofu-controller",
        TOFU_CHART_VERSION,
        "tofu-controller",
        installed,
    ));
    let state = HelmReleaseState {
        current: Release {
            chart: "tofu-controller",
            chart_version: TOFU_CHART_VERSION,
            app_version: "v0.16.0-rc.5",
            revision: 1,
            deployed: installed + TimeDelta::seconds(40),
        },
        previous: None,
        run_started: None,
    };
    let chart = Chart::FromRepository {
        chart: "tofu-controller",
        version: TOFU_CHART_VERSION,
        repository: "tofu-controller",
    };
    out.push(helm_release(&meta("tofu-controller"), chart, &state));
    let deployment = Workload::new(
        WorkloadKind::Deployment,
        controller_meta("tofu-controller", installed)
            .installed_by_helm_release("flux-system", "tofu-controller"),
        "manager",
        TOFU_IMAGE,
        1,
        installed,
    );
    if site.tofu_down() {
        let pod = PodPlan {
            image: TOFU_IMAGE.into(),
            created: m.before(TimeDelta::days(2)),
            state: ContainerState::ImagePullBackOff,
        };
        out.extend(workload_with_pods(&deployment, &[pod], m.now));
    } else {
        out.extend(deployment.settled(m.now));
    }
}
