//! The observability domain: one Kustomization (wait: true) applying the OpenTelemetry collector
//! HelmRelease (chartRef to an OCIRepository), node-exporter and Prometheus. Hosts incident d
//! (the Kustomization stuck mid-run for hours) and the loop incident g (a routine Helm run).

use super::platform::{bootstrapped, fleet_revision, previous_fleet_revision};
use super::{OBSERVABILITY_STUCK, ROUTINE_HELM_RUN, ROUTINE_RUN_AT, ROUTINE_RUN_SECS, Site};
use crate::sources::demo::hex::oci_revision;
use crate::sources::demo::k8s::{
    Artifact, Chart, HelmReleaseState, KustomizationSpec, Release, Run, Workload, WorkloadKind,
    helm_release, kustomization, oci_repository,
};
use chrono::TimeDelta;
use serde_json::Value;

const DOMAIN: &str = "observability";
const NS: &str = "observability";

pub fn build(site: &Site, out: &mut Vec<Value>) {
    let m = &site.m;
    let (fleet, before) = (fleet_revision(), previous_fleet_revision());
    let spec = KustomizationSpec {
        source: ("GitRepository", "flux-system", "flux-system"),
        path: "./observability",
        interval_minutes: 10,
        depends_on: Vec::new(),
        health_checks: Vec::new(),
        wait: true,
        service_account: None,
    };
    // Incident d: a run on the fleet repository's head began 4 hours ago and never finished.
    let run = if site.is(OBSERVABILITY_STUCK) {
        Run::InProgress {
            applied: &before,
            attempted: &fleet,
            since: m.before(TimeDelta::hours(4)),
        }
    } else {
        Run::Applied {
            revision: &fleet,
            since: site.settled(),
        }
    };
    let meta = bootstrapped(site.meta(DOMAIN, "flux-system", DOMAIN));
    out.push(kustomization(&meta, &spec, run, &[]));

    let applied = |name: &str| {
        site.meta(DOMAIN, NS, name)
            .applied_by_kustomization("flux-system", DOMAIN)
    };
    let (chart_version, app_version) = if site.ring == "dev" {
        ("0.86.0", "0.99.0")
    } else {
        ("0.85.0", "0.98.0")
    };
    let deployed = m.before(TimeDelta::days(if site.ring == "dev" { 3 } else { 9 }));
    let artifact = oci_revision(chart_version, "opentelemetry-collector-chart");
    out.push(oci_repository(
        &applied("collector-chart"),
        "oci://ghcr.io/open-telemetry/opentelemetry-helm-charts/opentelemetry-collector",
        chart_version,
        &Artifact::new(artifact.as_str(), deployed - TimeDelta::minutes(1)),
    ));
    // helm-controller records OCI charts as `<version>+<first 12 hex of the digest>`.
    let digest = artifact.rsplit(':').next().unwrap_or_default();
    let recorded = format!("{chart_version}+{}", &digest[..12]);
    let current = Release {
        chart: "opentelemetry-collector",
        chart_version: &recorded,
        app_version,
        revision: 4,
        deployed,
    };
    let previous = Release {
        chart_version: "0.84.0+5c1d07e2a9b3",
        app_version: "0.97.0",
        revision: 3,
        deployed: deployed - TimeDelta::days(30),
        ..current
    };
    // Incident g: a routine run shows Ready=True + Reconciling=True for a few seconds each loop.
    let routine =
        site.is(ROUTINE_HELM_RUN) && m.within(ROUTINE_RUN_AT, ROUTINE_RUN_AT + ROUTINE_RUN_SECS);
    let state = HelmReleaseState {
        current,
        previous: Some(previous),
        run_started: routine.then(|| m.at_phase(ROUTINE_RUN_AT)),
    };
    out.push(helm_release(
        &applied("collector"),
        Chart::FromOciRepository {
            repository: "collector-chart",
        },
        &state,
    ));

    let image = format!("docker.io/otel/opentelemetry-collector-contrib:{app_version}");
    let thirty_days_ago = m.before(TimeDelta::days(30));
    let collector = site
        .meta(DOMAIN, NS, "collector")
        .installed_by_helm_release(NS, "collector");
    let workloads = [
        Workload::new(
            WorkloadKind::Deployment,
            collector,
            "collector",
            &image,
            2,
            deployed,
        ),
        Workload::new(
            WorkloadKind::DaemonSet,
            applied("node-exporter"),
            "node-exporter",
            "quay.io/prometheus/node-exporter:v1.8.2",
            3,
            thirty_days_ago,
        ),
        Workload::new(
            WorkloadKind::StatefulSet,
            applied("prometheus"),
            "prometheus",
            "quay.io/prometheus/prometheus:v2.54.1",
            2,
            thirty_days_ago,
        ),
    ];
    for workload in workloads {
        out.extend(workload.settled(m.now));
    }
}
