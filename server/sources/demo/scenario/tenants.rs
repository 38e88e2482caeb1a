//! The tenants domain (selected by namespace): an OCIRepository of tenant configuration and the
//! Kustomization applying it as `tenant-reconciler`, after networking-config. Hosts the loop
//! incident f: v3.1.9 ⇄ v3.2.0 rolled out ring by ring.

use super::platform::bootstrapped;
use super::{LOOP_PERIOD_SECS, ROLLOUT_SECS, Site, rollout_phase};
use crate::sources::demo::hex::oci_revision;
use crate::sources::demo::k8s::{
    Artifact, ContainerState, KustomizationSpec, PodPlan, Run, Workload, WorkloadKind,
    kustomization, oci_repository, running_pods, workload_with_pods,
};
use chrono::TimeDelta;
use serde_json::Value;

const DOMAIN: &str = "tenants";
const NS: &str = "tenants";

/// Even loops promote v3.2.0, odd loops roll back to v3.1.9.
pub const VERSIONS: [&str; 2] = ["v3.1.9", "v3.2.0"];

pub fn revision(tag: &str) -> String {
    oci_revision(tag, "tenants-config")
}

pub fn build(site: &Site, out: &mut Vec<Value>) {
    let m = &site.m;
    let at = rollout_phase(site.ring);
    let flips = m.passes(at);
    let offered = VERSIONS[(flips % 2) as usize];
    let earlier = VERSIONS[((flips + 1) % 2) as usize];
    let flipped = m.last_passed(at, m.before(TimeDelta::days(2)));
    let (offered_rev, earlier_rev) = (revision(offered), revision(earlier));
    // The orchestrator bumps spec.ref.tag in Git on each promotion: one generation per flip.
    let source_meta = bootstrapped(site.meta(DOMAIN, NS, DOMAIN)).generation(10 + flips);
    out.push(oci_repository(
        &source_meta,
        "oci://ghcr.io/acme/tenants-config",
        offered,
        &Artifact::new(offered_rev.as_str(), flipped),
    ));

    let spec = KustomizationSpec {
        source: ("OCIRepository", NS, DOMAIN),
        path: "./",
        interval_minutes: 5,
        depends_on: vec![("flux-system", "networking-config")],
        health_checks: Vec::new(),
        wait: true,
        service_account: Some("tenant-reconciler"),
    };
    let rolling = flips > 0 && m.within(at, at + ROLLOUT_SECS);
    // Blocked behind incident a, tenants stays on what it applied a week ago.
    let stuck_on = revision(VERSIONS[0]);
    let (run, image_tag) = if site.tofu_down() {
        let since = m.before(TimeDelta::days(7));
        (
            Run::Blocked {
                applied: &stuck_on,
                dependency: "flux-system/networking-config",
                since,
            },
            VERSIONS[0],
        )
    } else if rolling {
        (
            Run::InProgress {
                applied: &earlier_rev,
                attempted: &offered_rev,
                since: flipped,
            },
            offered,
        )
    } else {
        let since = if flips > 0 {
            flipped + TimeDelta::seconds(ROLLOUT_SECS)
        } else {
            site.settled()
        };
        (
            Run::Applied {
                revision: &offered_rev,
                since,
            },
            offered,
        )
    };
    out.push(kustomization(
        &bootstrapped(site.meta(DOMAIN, NS, DOMAIN)),
        &spec,
        run,
        &[],
    ));

    let first_deploy = m.before(TimeDelta::days(7));
    let rolled_out = if flips > 0 && !site.tofu_down() {
        flipped
    } else {
        first_deploy
    };
    // The outgoing pods came with the previous flip, one loop earlier.
    let previous_rollout = if flips > 1 {
        flipped - TimeDelta::seconds(LOOP_PERIOD_SECS)
    } else {
        first_deploy
    };
    for (name, replicas) in [("tenant-api", 2), ("tenant-worker", 1)] {
        let image = |tag: &str| format!("ghcr.io/acme/{name}:{tag}");
        let meta = site
            .meta(DOMAIN, NS, name)
            .applied_by_kustomization(NS, DOMAIN);
        let workload = Workload::new(
            WorkloadKind::Deployment,
            meta,
            name,
            &image(image_tag),
            replicas,
            rolled_out,
        );
        // Mid-rollout: the old pods still serve while one new pod (maxSurge 1) is being created.
        if rolling && !site.tofu_down() {
            let mut pods = running_pods(&image(earlier), previous_rollout, replicas as usize);
            pods.push(PodPlan {
                image: image(offered),
                created: flipped + TimeDelta::seconds(2),
                state: ContainerState::Creating,
            });
            out.extend(workload_with_pods(&workload, &pods, m.now));
        } else {
            out.extend(workload.settled(m.now));
        }
    }
}
