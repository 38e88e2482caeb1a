//! Each object's prerequisites (DESIGN.md "Root causes"): dependsOn, source, controller,
//! health checks, what it applied, and for pods their workload. References that point at
//! nothing are collected as findings instead, since a missing prerequisite is itself the cause
//! (and kept as dangling edges, so pages can show what the object asked for).

use super::classify::failed_test_pod;
use super::clusters::{Clusters, NOT_YET_LISTED};
use super::controllers::{Absences, Liveness, liveness};
use super::crossstack::InventoryEntry;
use super::deadlines::Clock;
use super::finding::{Edge, EdgeKind};
use super::index::Index;
use super::{Cause, CauseCode, Thresholds};
use crate::model::{Kind, Object, ObjectId, Ref};

pub(super) struct Graph {
    pub edges: Vec<Vec<Edge>>,
    /// Per object: references of a known kind that resolve to nothing in the input.
    pub dangling: Vec<Vec<(EdgeKind, ObjectId)>>,
    /// Per object: what it references that cannot be reconciled (absent, or a source on
    /// another shard that its source-controller cannot see).
    pub missing: Vec<Vec<(Cause, String)>>,
    /// Per object: references to a kind the input holds no object of (no evidence either way).
    /// Per object, the references that cannot be checked: why (short, and explained), and
    /// what is referenced.
    pub uncovered: Vec<Vec<Uncovered>>,
    pub liveness: Vec<Liveness>,
    /// The controller Deployments objects need and the input lacks.
    pub absent: Absences,
    /// Per object: its source object (for revision comparison), when present.
    pub source: Vec<Option<usize>>,
    /// Per object: what its `status.inventory` lists, of a kind fleetglass reads on the
    /// cluster, that is not there (`Deployment apps/web`).
    pub inventory_missing: Vec<Vec<String>>,
}

pub(super) fn build(
    index: &Index,
    clusters: &Clusters,
    thresholds: &Thresholds,
    clock: Clock,
) -> Graph {
    let count = index.objects.len();
    let mut graph = Graph {
        edges: Vec::with_capacity(count),
        dangling: Vec::with_capacity(count),
        missing: Vec::with_capacity(count),
        uncovered: Vec::with_capacity(count),
        liveness: Vec::with_capacity(count),
        absent: Absences::default(),
        source: Vec::with_capacity(count),
        inventory_missing: Vec::with_capacity(count),
    };
    for (i, object) in index.objects.iter().enumerate() {
        let mut builder = Builder {
            index,
            clusters,
            object,
            edges: Vec::new(),
            dangling: Vec::new(),
            missing: Vec::new(),
            uncovered: Vec::new(),
        };
        let source = builder.source();
        builder.includes();
        let inventory_missing = builder.inventory();
        builder.depends_on();
        builder.health_checks();
        let live = liveness(index, object, &mut graph.absent, thresholds, clock);
        if let Liveness::Alive(controller) | Liveness::Down(controller) = live {
            builder.edge(EdgeKind::Controller, controller);
        }
        if object.kind.is_flux() {
            for applied in index.applied_by(i) {
                builder.edge(EdgeKind::Applied, applied);
            }
        }
        if let Some(test_pod) = test_pod_of(index, i) {
            builder.edge(EdgeKind::Applied, test_pod);
        }
        // A CronJob's last run is its evidence (a failed one is the cause, not the CronJob).
        if object.kind == Kind::CronJob
            && let Some(job) = index.latest_job_of_cron_job(i)
        {
            builder.edge(EdgeKind::Applied, job);
        }
        if object.kind == Kind::Pod
            && let Some(owner) = index.owner_of_pod(i)
        {
            builder.edge(EdgeKind::Owner, owner);
        }
        graph.edges.push(builder.edges);
        graph.dangling.push(builder.dangling);
        graph.missing.push(builder.missing);
        graph.uncovered.push(builder.uncovered);
        graph.liveness.push(live);
        graph.source.push(source);
        graph.inventory_missing.push(inventory_missing);
    }
    graph
}

/// The Helm test pod a release's failed test names (helm-controller@v1.6.4
/// internal/reconcile/test.go: TestSuccess False, "Helm test failed for release …: pod <name>
/// failed", the pod named by Helm's waiter, helm v4 pkg/kube/wait.go), found in the release's
/// namespace or beside what it deployed: the release's evidence, labelled by Flux or not
/// (hooks skip the post-renderer under Helm 3 defaults).
fn test_pod_of(index: &Index, release: usize) -> Option<usize> {
    let object = &index.objects[release];
    let test = object.condition("TestSuccess").filter(|c| !c.is_true())?;
    let name = failed_test_pod(&test.message)?;
    let namespaces = std::iter::once(object.namespace.as_str()).chain(
        index
            .applied_by(release)
            .map(|a| index.objects[a].namespace.as_str()),
    );
    namespaces
        .into_iter()
        .find_map(|namespace| index.get(&object.cluster, Kind::Pod, namespace, &name))
}

struct Builder<'i, 'a> {
    index: &'i Index<'a>,
    clusters: &'i Clusters<'a>,
    object: &'a Object,
    edges: Vec<Edge>,
    dangling: Vec<(EdgeKind, ObjectId)>,
    missing: Vec<(Cause, String)>,
    uncovered: Vec<Uncovered>,
}

/// A reference neither found nor proven absent: its kind is unread, not yet listed, or not in
/// the input.
#[derive(Debug, Clone)]
pub(super) struct Uncovered {
    pub cause: Cause,
    /// The reason: why it cannot be checked ("cannot read HelmRepository").
    pub why: String,
    pub explained: String,
    /// What it is ("source HelmRepository flux-system/podinfo").
    pub named: String,
}

impl Builder<'_, '_> {
    fn edge(&mut self, kind: EdgeKind, target: usize) {
        self.edges.push(Edge { kind, target });
    }

    /// A reference the object needs: resolved to an edge, or recorded as missing — unless its
    /// kind is unknown to fleetglass or unreadable on the cluster (then there is no evidence),
    /// or absent from the input altogether (recorded as uncovered).
    fn required(&mut self, kind: EdgeKind, what: &str, reference: &Ref) -> Option<usize> {
        let target_kind = Kind::named(&reference.kind)?;
        let cluster = &self.object.cluster;
        let (namespace, name) = (&reference.namespace, &reference.name);
        if let Some(found) = self.index.get(cluster, target_kind, namespace, name) {
            self.edge(kind, found);
            return Some(found);
        }
        self.dangle(kind, target_kind, reference);
        let named = format!(
            "{what} {target_kind} {}/{}",
            reference.namespace, reference.name
        );
        let unverifiable = |why: &str| {
            Cause::new(CauseCode::ReferenceUnverifiable)
                .with("kind", target_kind.as_str())
                .with("why", why)
        };
        // An unread or partly listed kind is no evidence of absence: never "not found".
        if let Some(error) = self.clusters.kind_error(cluster, target_kind) {
            let uncovered = if error == NOT_YET_LISTED {
                Uncovered {
                    cause: unverifiable("not_yet_listed"),
                    why: format!("{target_kind} {error}"),
                    explained: "its kind's first list on the cluster has not completed".into(),
                    named,
                }
            } else {
                Uncovered {
                    cause: unverifiable("unreadable"),
                    why: format!("cannot read {target_kind}"),
                    explained: format!("its kind cannot be read on the cluster: {error}"),
                    named,
                }
            };
            self.uncovered.push(uncovered);
        } else if self.clusters.covers(cluster, target_kind) {
            let cause = Cause::new(CauseCode::ReferenceNotFound)
                .with("role", what)
                .with("kind", target_kind.as_str())
                .with("namespace", namespace)
                .with("name", name);
            self.missing.push((cause, format!("{named} not found")));
        } else {
            self.uncovered.push(Uncovered {
                cause: unverifiable("not_in_input"),
                why: format!("{target_kind} not in the input"),
                explained: "the input holds no object of its kind".to_string(),
                named,
            });
        }
        None
    }

    /// A dependency on any shard is found: kustomize-controller (v1.4+) and helm-controller
    /// (v1.1+) read it through the uncached API reader ("Allow cross-shard dependency check";
    /// kustomize-controller@v1.9.6 kustomization_controller.go checkDependencies and
    /// helm-controller@v1.6.4 helmrelease_controller.go checkDependencies, `r.APIReader.Get`),
    /// not through their shard-filtered caches.
    fn depends_on(&mut self) {
        for reference in &self.object.spec.flux.depends_on {
            self.required(EdgeKind::DependsOn, "dependency", reference);
        }
    }

    /// A GitRepository's includes are sources of its artifact: source-controller waits for
    /// each to have one (source-controller@v1.9.6 gitrepository_controller.go fetchIncludes,
    /// IncludeUnavailable "no artifact available for include '%s'"), reading it through its
    /// shard-filtered cache.
    fn includes(&mut self) {
        for reference in &self.object.spec.flux.includes {
            if let Some(found) = self.required(EdgeKind::Source, "include", reference) {
                self.check_shard(found);
            }
        }
    }

    /// What the object's inventory lists is what it applied (an edge, labels or not); an
    /// entry of a kind read in full on the cluster that is not there was deleted behind its
    /// back (kubectl delete, another tool): evidence against its Ready.
    fn inventory(&mut self) -> Vec<String> {
        let mut missing = Vec::new();
        let cluster = &self.object.cluster;
        for entry in self
            .object
            .status
            .flux
            .inventory
            .iter()
            .filter_map(|id| InventoryEntry::parse(id))
        {
            let Some(kind) = Kind::named(entry.kind).filter(|k| k.group() == entry.group) else {
                continue;
            };
            match self.index.get(cluster, kind, entry.namespace, entry.name) {
                Some(found) => {
                    let edge = Edge {
                        kind: EdgeKind::Applied,
                        target: found,
                    };
                    if !self.edges.contains(&edge) {
                        self.edges.push(edge);
                    }
                }
                None if self.clusters.kind_error(cluster, kind).is_none()
                    && self.clusters.covers(cluster, kind) =>
                {
                    missing.push(if kind.is_cluster_scoped() {
                        format!("{kind} {}", entry.name)
                    } else {
                        format!("{kind} {}/{}", entry.namespace, entry.name)
                    });
                }
                None => {}
            }
        }
        missing
    }

    fn health_checks(&mut self) {
        for reference in &self.object.spec.flux.health_checks {
            let Some(target_kind) = Kind::named(&reference.kind) else {
                continue;
            };
            let (cluster, namespace, name) =
                (&self.object.cluster, &reference.namespace, &reference.name);
            match self.index.get(cluster, target_kind, namespace, name) {
                Some(found) => self.edge(EdgeKind::HealthCheck, found),
                None => self.dangle(EdgeKind::HealthCheck, target_kind, reference),
            }
        }
    }

    fn dangle(&mut self, kind: EdgeKind, target_kind: Kind, reference: &Ref) {
        let target = ObjectId::new(
            &self.object.cluster,
            target_kind,
            &reference.namespace,
            &reference.name,
        );
        self.dangling.push((kind, target));
    }

    /// The source edge; returns the object whose artifact the object consumes.
    fn source(&mut self) -> Option<usize> {
        let declared = self.object.spec.flux.source_ref.as_ref()?;
        if self.object.kind == Kind::HelmRelease && !self.object.spec.flux.uses_chart_ref {
            // The chart comes through the HelmChart helm-controller generates, when it exists.
            if let Some(chart) = self.generated_chart(declared) {
                self.edge(EdgeKind::Source, chart);
                if self.index.resolve(&self.object.cluster, declared).is_none() {
                    self.required(EdgeKind::Source, "source", declared);
                }
                return Some(chart);
            }
        }
        let found = self.required(EdgeKind::Source, "source", declared)?;
        // source-controller caches every source kind by its shard's label selector
        // (source-controller main.go, mustSetupManager: ByObject for GitRepository,
        // HelmRepository, HelmChart, Bucket, OCIRepository); kustomize- and helm-controller
        // read sources of any shard.
        if self.object.kind.controller() == Some("source-controller") {
            self.check_shard(found);
        }
        Some(found)
    }

    fn generated_chart(&self, declared: &Ref) -> Option<usize> {
        let cluster = &self.object.cluster;
        if let Some((namespace, name)) = self
            .object
            .status
            .flux
            .helm_chart
            .as_deref()
            .and_then(|c| c.split_once('/'))
        {
            return self.index.get(cluster, Kind::HelmChart, namespace, name);
        }
        let name = format!("{}-{}", self.object.namespace, self.object.name);
        self.index
            .get(cluster, Kind::HelmChart, &declared.namespace, &name)
    }

    /// A prerequisite labelled for another shard is invisible to the controller that reconciles
    /// the object, which reports it "not found" far from the cause (seed 004: helm-controller
    /// creates HelmCharts without the shard label, so the main source-controller cannot see a
    /// sharded HelmRepository).
    fn check_shard(&mut self, target: usize) {
        let target = &self.index.objects[target];
        if target.shard() == self.object.shard() {
            return;
        }
        let shard =
            |s: Option<&str>| s.map_or("the main shard".to_string(), |s| format!("shard {s:?}"));
        let controller = self.object.kind.controller().unwrap_or("its controller");
        let reconciler = match self.object.shard() {
            Some(own) => format!("{controller}-{own}"),
            None => controller.to_string(),
        };
        let cause = Cause::new(CauseCode::ReferenceOnOtherShard)
            .with("kind", target.kind.as_str())
            .with("namespace", target.namespace.as_str())
            .with("name", &target.name);
        self.missing.push((cause, format!(
            "source {} {}/{} not found by {reconciler}: the source is on {}, this {} on {} (sharding.fluxcd.io/key differs)",
            target.kind,
            target.namespace,
            target.name,
            shard(target.shard()),
            self.object.kind,
            shard(self.object.shard()),
        )));
    }
}
