//! Every field of a Kubernetes object the engine reads, and nothing else: the one list of what
//! is read, whichever kind the object turns out to be (the kind may come after the spec).
//! Deserialized leniently from a `serde_json::Value` (the collector) or straight from the
//! parser (`fleetglass evaluate`); [`super::parse`] turns it into the slim object.

use super::lenient::{Entries, Field, First, Integer, Shape, lenient_struct};
use serde::de::MapAccess;

type Text = Field<String>;
type List<T> = Field<Vec<Field<T>>>;

lenient_struct!(RawObject {
    kind: Text = "kind",
    api_version: Text = "apiVersion",
    metadata: Field<RawMeta> = "metadata",
    spec: Field<RawSpec> = "spec",
    status: Field<RawStatus> = "status",
});

lenient_struct!(RawMeta {
    name: Text = "name",
    namespace: Text = "namespace",
    generation: Field<Integer> = "generation",
    labels: Field<Entries<Text>> = "labels",
    creation_timestamp: Text = "creationTimestamp",
    deletion_timestamp: Text = "deletionTimestamp",
    owner_references: List<RawOwner> = "ownerReferences",
    annotations: Field<RawAnnotations> = "annotations",
});

lenient_struct!(
    /// The one annotation read: a reconcile asked for (`flux reconcile`, fleetglass's actions).
    RawAnnotations {
        reconcile_requested_at: Text = "reconcile.fluxcd.io/requestedAt",
    }
);

lenient_struct!(RawOwner {
    kind: Text = "kind",
    name: Text = "name",
});

lenient_struct!(
    /// The union of the specs of every kind read: workloads, pods, Flux objects, sources, CRDs.
    RawSpec {
        suspend: Field<bool> = "suspend",
        interval: Text = "interval",
        timeout: Text = "timeout",
        wait: Field<bool> = "wait",
        service_account_name: Text = "serviceAccountName",
        type_: Text = "type",
        depends_on: List<RawRef> = "dependsOn",
        health_checks: List<RawRef> = "healthChecks",
        source_ref: Field<RawRef> = "sourceRef",
        chart_ref: Field<RawRef> = "chartRef",
        chart: Field<Chart> = "chart",
        version: Text = "version",
        url: Text = "url",
        ref_: Field<RawSourceRef> = "ref",
        include: List<RawInclude> = "include",
        selector: Field<RawSelector> = "selector",
        replicas: Field<Integer> = "replicas",
        template: Field<RawTemplate> = "template",
        paused: Field<bool> = "paused",
        update_strategy: Field<RawUpdateStrategy> = "updateStrategy",
        containers: List<RawContainer> = "containers",
        restart_policy: Text = "restartPolicy",
        node_name: Text = "nodeName",
        group: Text = "group",
        names: Field<RawNames> = "names",
    }
);

/// `spec.chart`: a chart name (HelmChart) or a chart template (HelmRelease).
#[derive(Debug)]
pub enum Chart {
    Name(String),
    Template(RawChartTemplate),
}

impl<'de> Shape<'de> for Chart {
    fn from_str(v: &str) -> Option<Self> {
        Some(Chart::Name(v.to_string()))
    }
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        Ok(RawChartTemplate::from_map(map)?.map(Chart::Template))
    }
}

lenient_struct!(RawChartTemplate {
    spec: Field<RawChartSpec> = "spec",
});

lenient_struct!(RawChartSpec {
    chart: Text = "chart",
    version: Text = "version",
    source_ref: Field<RawRef> = "sourceRef",
});

lenient_struct!(RawRef {
    kind: Text = "kind",
    name: Text = "name",
    namespace: Text = "namespace",
});

// GitRepository `spec.include[]`: another GitRepository whose artifact is copied in.
lenient_struct!(RawInclude {
    repository: Field<RawRef> = "repository",
});

lenient_struct!(RawSourceRef {
    commit: Text = "commit",
    digest: Text = "digest",
    name: Text = "name",
    semver: Text = "semver",
    tag: Text = "tag",
    branch: Text = "branch",
});

lenient_struct!(RawSelector {
    match_labels: Field<Entries<Text>> = "matchLabels",
});

lenient_struct!(RawTemplate {
    spec: Field<RawPodSpec> = "spec",
});

lenient_struct!(RawPodSpec {
    containers: List<RawContainer> = "containers",
});

lenient_struct!(RawContainer {
    image: Text = "image",
});

lenient_struct!(RawUpdateStrategy {
    type_: Text = "type",
    rolling_update: Field<RawRollingUpdate> = "rollingUpdate",
});

lenient_struct!(RawRollingUpdate {
    partition: Field<Integer> = "partition",
});

lenient_struct!(RawNames {
    kind: Text = "kind",
});

lenient_struct!(
    /// The union of the statuses of every kind read.
    RawStatus {
        observed_generation: Field<Integer> = "observedGeneration",
        conditions: List<RawCondition> = "conditions",
        last_attempted_revision: Text = "lastAttemptedRevision",
        last_applied_revision: Text = "lastAppliedRevision",
        last_planned_revision: Text = "lastPlannedRevision",
        helm_chart: Text = "helmChart",
        last_handled_reconcile_at: Text = "lastHandledReconcileAt",
        phase: Text = "phase",
        artifact: Field<RawArtifact> = "artifact",
        inventory: Field<RawInventory> = "inventory",
        history: Field<First<Field<RawHistory>>> = "history",
        desired_number_scheduled: Field<Integer> = "desiredNumberScheduled",
        current_number_scheduled: Field<Integer> = "currentNumberScheduled",
        number_ready: Field<Integer> = "numberReady",
        number_available: Field<Integer> = "numberAvailable",
        updated_number_scheduled: Field<Integer> = "updatedNumberScheduled",
        replicas: Field<Integer> = "replicas",
        ready_replicas: Field<Integer> = "readyReplicas",
        available_replicas: Field<Integer> = "availableReplicas",
        updated_replicas: Field<Integer> = "updatedReplicas",
        current_revision: Text = "currentRevision",
        update_revision: Text = "updateRevision",
        init_container_statuses: List<RawContainerStatus> = "initContainerStatuses",
        container_statuses: List<RawContainerStatus> = "containerStatuses",
        reason: Text = "reason",
        message: Text = "message",
        start_time: Text = "startTime",
        nominated_node_name: Text = "nominatedNodeName",
    }
);

lenient_struct!(RawCondition {
    type_: Text = "type",
    status: Text = "status",
    reason: Text = "reason",
    message: Text = "message",
    last_transition_time: Text = "lastTransitionTime",
    last_update_time: Text = "lastUpdateTime",
    observed_generation: Field<Integer> = "observedGeneration",
});

lenient_struct!(RawArtifact {
    revision: Text = "revision",
    last_update_time: Text = "lastUpdateTime",
});

lenient_struct!(RawInventory {
    entries: List<RawInventoryEntry> = "entries",
});

lenient_struct!(RawInventoryEntry { id: Text = "id" });

lenient_struct!(RawHistory {
    chart_name: Text = "chartName",
    chart_version: Text = "chartVersion",
    app_version: Text = "appVersion",
    status: Text = "status",
    oci_digest: Text = "ociDigest",
});

lenient_struct!(RawContainerStatus {
    name: Text = "name",
    ready: Field<bool> = "ready",
    restart_count: Field<i64> = "restartCount",
    state: Field<RawContainerState> = "state",
    last_state: Field<RawContainerState> = "lastState",
});

lenient_struct!(RawContainerState {
    waiting: Field<RawWaiting> = "waiting",
    terminated: Field<RawTermination> = "terminated",
});

lenient_struct!(RawWaiting {
    reason: Text = "reason",
    message: Text = "message",
});

lenient_struct!(RawTermination {
    reason: Text = "reason",
    exit_code: Field<i64> = "exitCode",
    message: Text = "message",
    finished_at: Text = "finishedAt",
});
