//! The demo world as a pure function of time: every object on every demo cluster at `now`,
//! for a demo that started at `started`. Deterministic and cheap (no randomness, no clock, no
//! I/O), so it can be called every second.
//!
//! Standing incidents are already there at `started`, with condition times hours or days
//! before it, as in the seeds. Loop incidents repeat every [`LOOP_PERIOD_SECS`]; `phase` is
//! `(now − started) mod period`.
//!
//! | incident | cluster | objects (`Kind/namespace/name`) | expected verdict | expected root cause |
//! | --- | --- | --- | --- | --- |
//! | a. dead tofu-controller (seed 000 #4); standing: pod ImagePullBackOff for 2d, Terraform Ready=True + Reconciling=True for 7d | prod-eu-1, prod-eu-2 | Deployment/flux-system/tofu-controller (0/1 available) and its Pod (ImagePullBackOff); HelmRelease/flux-system/tofu-controller (Ready=True); Terraform/flux-system/nlb-security-groups; Kustomization/flux-system/infra-network (HealthCheckFailed on the Terraform); Kustomization/flux-system/networking-config and Kustomization/tenants/tenants (DependencyNotReady) | tofu-controller Deployment: failed (unavailable); its HelmRelease: degraded; Terraform: unverifiable (stale if the controller were up); infra-network: failed, as a symptom; networking-config, tenants: blocked | Deployment/flux-system/tofu-controller (pod ImagePullBackOff) |
//! | b. Helm deleted a shared CRD (seed 000 #2); standing for 1d | dev-1 | HelmRelease/networking/netop (Ready=True UpgradeSucceeded, 2.14.0); Deployment/networking/netop (3 desired, 2 available, 1 updated, ProgressDeadlineExceeded); its new Pod (CrashLoopBackOff, last terminated Error: `no matches for kind "RateLimitConfig" in version "ratelimit.solo.io/v1alpha1"`); no CustomResourceDefinition//ratelimitconfigs.ratelimit.solo.io (HelmRelease/gateway-system/gateway healthy on 1.5.0, which dropped it) | netop Deployment: failed; HelmRelease netop: degraded; Kustomization/flux-system/networking-controllers: symptom | Deployment/networking/netop (its new pod CrashLoopBackOff) |
//! | c. RBAC Forbidden on Calico (seed 000 #1, minute 16); standing for 40 min | staging-1 | Kustomization/flux-system/gateway-config (ReconciliationFailed: Forbidden dry-run, generation 4 observed 3, attempted ≠ applied); Kustomization/flux-system/gateway (root; HealthCheckFailed waiting on gateway-config) | gateway-config: failed; gateway: failed, as a symptom | Kustomization/flux-system/gateway-config |
//! | d. a run stuck for hours; standing for 4h | prod-us-1 | Kustomization/flux-system/observability (Ready=Unknown Progressing "Reconciliation in progress" + Reconciling=True ProgressingWithRetry, attempted ≠ applied; everything it applied is healthy) | stuck | Kustomization/flux-system/observability |
//! | e. Gatekeeper admission denial retry loop (seed 000 #1); loop | prod-us-1 | Kustomization/flux-system/gateway-edge (Ready=False ReconciliationFailed, denied by `validation.gatekeeper.sh` [lb-whitelist], K8sRequiredLabels warning alongside) in phase [60, 150), Ready=True on the fix's revision from 150; Kustomization/flux-system/gateway (root) Ready=Unknown Progressing meanwhile | gateway-edge: failed in [60, 150), else healthy; gateway: a symptom meanwhile | Kustomization/flux-system/gateway-edge |
//! | f. tenants v3.1.9 ⇄ v3.2.0 ring by ring; loop | all | OCIRepository/tenants/tenants, Kustomization/tenants/tenants, Deployment/tenants/tenant-api, Deployment/tenants/tenant-worker: new artifact at phase 20 on dev, 80 on staging, 140 on prod; Ready=Unknown Progressing + Reconciling=True with one new pod being created for 30 s, then Ready=True on the new revision | progressing for 30 s, then healthy; prod-eu-1/2: blocked (incident a), never apply the new revision | none (prod-eu: incident a's cause) |
//! | g. routine HelmRelease run; loop | staging-1 | HelmRelease/observability/collector: Ready=True + Reconciling=True "Fulfilling prerequisites" in phase [200, 220) | healthy (or progressing), never stale | none |
//!
//! Symptoms also reach the parents that applied an incident's objects (the `flux-system` root
//! Kustomization applies every domain's Kustomizations and sources).
//!
//! Even loops roll tenants forward to v3.2.0, odd loops roll it back to v3.1.9, in the same ring
//! order, so versions never jump. Everything else is healthy and converged.

mod gateway;
mod networking;
mod observability;
mod platform;
mod tenants;

use super::fleet::{DEMO_CLUSTERS, DOMAIN_LABEL, DemoCluster};
use super::k8s::Meta;
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};

/// Length of one loop of the loop incidents (e, f, g).
pub const LOOP_PERIOD_SECS: i64 = 240;

// Where each incident happens (see the table above).
const TOFU_DOWN: [&str; 2] = ["prod-eu-1", "prod-eu-2"];
const CRD_DELETED: &str = "dev-1";
const RBAC_FORBIDDEN: &str = "staging-1";
const OBSERVABILITY_STUCK: &str = "prod-us-1";
const GATEKEEPER_LOOP: &str = "prod-us-1";
const ROUTINE_HELM_RUN: &str = "staging-1";

// Loop phases, in seconds from the start of a loop.
const DENIED_AT: i64 = 60;
const FIXED_AT: i64 = 150;
const ROUTINE_RUN_AT: i64 = 200;
const ROUTINE_RUN_SECS: i64 = 20;
const ROLLOUT_SECS: i64 = 30;

/// When the tenants rollout reaches each ring.
pub fn rollout_phase(ring: &str) -> i64 {
    match ring {
        "dev" => 20,
        "staging" => 80,
        _ => 140,
    }
}

/// A point in the demo: wall time plus its position in the loop.
#[derive(Debug, Clone, Copy)]
struct Moment {
    started: DateTime<Utc>,
    now: DateTime<Utc>,
    loop_index: i64,
    phase: i64,
}

impl Moment {
    fn new(started: DateTime<Utc>, now: DateTime<Utc>) -> Moment {
        // Before the start the world looks as it does at the start.
        let elapsed = (now - started).num_seconds().max(0);
        Moment {
            started,
            now: now.max(started),
            loop_index: elapsed / LOOP_PERIOD_SECS,
            phase: elapsed % LOOP_PERIOD_SECS,
        }
    }

    /// `ago` before the demo started: when standing incidents began and settled objects settled.
    fn before(&self, ago: TimeDelta) -> DateTime<Utc> {
        self.started - ago
    }

    /// The time of `phase` in the current loop.
    fn at_phase(&self, phase: i64) -> DateTime<Utc> {
        self.started + TimeDelta::seconds(self.loop_index * LOOP_PERIOD_SECS + phase)
    }

    /// How many times the loop has reached `phase` since the demo started.
    fn passes(&self, phase: i64) -> i64 {
        self.loop_index + i64::from(self.phase >= phase)
    }

    /// The last time the loop reached `phase`, or `otherwise` if it never has.
    fn last_passed(&self, phase: i64, otherwise: DateTime<Utc>) -> DateTime<Utc> {
        match self.passes(phase) {
            0 => otherwise,
            _ if self.phase >= phase => self.at_phase(phase),
            _ => self.at_phase(phase) - TimeDelta::seconds(LOOP_PERIOD_SECS),
        }
    }

    fn within(&self, from: i64, until: i64) -> bool {
        (from..until).contains(&self.phase)
    }
}

/// One cluster at one moment, with the shorthands the domain builders share.
struct Site<'a> {
    cluster: &'a DemoCluster,
    ring: &'static str,
    m: Moment,
}

impl Site<'_> {
    fn is(&self, cluster: &str) -> bool {
        self.cluster.name == cluster
    }

    fn tofu_down(&self) -> bool {
        TOFU_DOWN.contains(&self.cluster.name)
    }

    /// When the domains were first deployed on the cluster.
    fn created(&self) -> DateTime<Utc> {
        self.m.before(TimeDelta::days(120))
    }

    /// Since when converged objects that saw no incident have been Ready.
    fn settled(&self) -> DateTime<Utc> {
        self.m.before(TimeDelta::hours(30))
    }

    /// Metadata of an object of `domain`, labelled as such.
    fn meta(&self, domain: &str, namespace: &str, name: &str) -> Meta {
        Meta::new(namespace, name, self.created()).label(DOMAIN_LABEL, domain)
    }
}

/// Every object of the demo fleet at `now`, paired with its cluster's name.
pub fn world(started: DateTime<Utc>, now: DateTime<Utc>) -> Vec<(String, Value)> {
    let m = Moment::new(started, now);
    let mut all = Vec::with_capacity(DEMO_CLUSTERS.len() * 80);
    for cluster in DEMO_CLUSTERS {
        let site = Site {
            cluster,
            ring: cluster.label("ring").unwrap_or("prod"),
            m,
        };
        let mut objects = Vec::with_capacity(80);
        platform::build(&site, &mut objects);
        gateway::build(&site, &mut objects);
        networking::build(&site, &mut objects);
        observability::build(&site, &mut objects);
        tenants::build(&site, &mut objects);
        fill_inventories(&mut objects);
        all.extend(
            objects
                .into_iter()
                .map(|object| (cluster.name.to_string(), object)),
        );
    }
    all
}

/// Adds to each Kustomization's inventory the built objects that carry its ownership labels,
/// so inventories and labels agree by construction.
fn fill_inventories(objects: &mut [Value]) {
    let kustomizations: Vec<(usize, String, String)> = objects
        .iter()
        .enumerate()
        .filter(|(_, o)| o["kind"] == "Kustomization")
        .map(|(i, o)| {
            (
                i,
                text(&o["metadata"]["namespace"]).to_string(),
                text(&o["metadata"]["name"]).to_string(),
            )
        })
        .collect();
    for (index, namespace, name) in kustomizations {
        let applied: Vec<Value> = objects
            .iter()
            .filter(|o| {
                let labels = &o["metadata"]["labels"];
                labels["kustomize.toolkit.fluxcd.io/name"] == name.as_str()
                    && labels["kustomize.toolkit.fluxcd.io/namespace"] == namespace.as_str()
            })
            .map(inventory_entry)
            .collect();
        if let Some(entries) = objects[index]["status"]["inventory"]["entries"].as_array_mut() {
            entries.extend(applied);
            entries.sort_by(|a, b| text(&a["id"]).cmp(text(&b["id"])));
        }
    }
}

/// A string field, or "" when absent.
fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

fn inventory_entry(object: &Value) -> Value {
    let api_version = text(&object["apiVersion"]);
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let metadata = &object["metadata"];
    let id = super::k8s::inventory_id(
        text(&metadata["namespace"]),
        text(&metadata["name"]),
        group,
        text(&object["kind"]),
    );
    json!({"id": id, "v": version})
}
