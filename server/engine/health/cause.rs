//! Why an object is in its state, as data: a code from a closed list and the parameters that
//! identify the cause (a container, a Flux reason, a referenced object). Never a counter, an
//! age, a timestamp or a generated name suffix: the same cause reads the same on every cluster
//! and for as long as it lasts, so incidents and alerts key on it. The rendered reason beside
//! it is for people and may change words freely.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Cause {
    pub code: CauseCode,
    /// What identifies this cause among others of its code, by name (the engine's names are
    /// static: no allocation for them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<Cow<'static, str>, String>,
}

impl Cause {
    pub fn new(code: CauseCode) -> Cause {
        Cause {
            code,
            params: BTreeMap::new(),
        }
    }

    /// With one identifying parameter (an empty value says nothing and is left out).
    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Cause {
        let value = value.into();
        if !value.is_empty() {
            self.params.insert(Cow::Borrowed(name), value);
        }
        self
    }

    /// With another cause as what explains this one: its code and parameters under `because`.
    pub fn because(mut self, other: &Cause) -> Cause {
        self.params
            .insert(Cow::Borrowed("because"), other.code.as_str().to_string());
        for (name, value) in &other.params {
            let name = Cow::Owned(format!("because.{name}"));
            self.params.insert(name, value.clone());
        }
        self
    }

    /// Code and parameters as one canonical line: what an incident key digests.
    pub fn identity(&self) -> String {
        let mut line = self.code.as_str().to_string();
        for (name, value) in &self.params {
            line.push('\u{1f}');
            line.push_str(name);
            line.push('=');
            line.push_str(value);
        }
        line
    }
}

macro_rules! cause_codes {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// The closed list of causes the engine names. Stored with root causes and alerts:
        /// renaming one is a migration.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[serde(rename_all = "snake_case")]
        pub enum CauseCode {
            $($(#[$doc])* $variant,)*
            /// Written before causes were recorded, or by a newer version than this one.
            #[default]
            #[serde(other)]
            Unrecorded,
        }

        impl CauseCode {
            pub const ALL: &[CauseCode] = &[$(CauseCode::$variant,)* CauseCode::Unrecorded];

            pub const fn as_str(self) -> &'static str {
                match self {
                    $(CauseCode::$variant => $name,)*
                    CauseCode::Unrecorded => "unrecorded",
                }
            }
        }
    };
}

cause_codes! {
    /// No list of the cluster ever completed and its API server does not answer.
    ClusterNeverReached = "cluster_never_reached",
    /// The cluster's API server stopped answering.
    ClusterUnreachable = "cluster_unreachable",
    /// The cluster's first full list has not completed.
    ClusterNotYetListed = "cluster_not_yet_listed",
    /// The cluster's last good list is older than the freshness limit.
    ClusterStale = "cluster_stale",
    /// One kind cannot be read on the cluster (`kind`).
    KindUnreadable = "kind_unreadable",
    /// One kind's first list has not completed (`kind`).
    KindNotYetListed = "kind_not_yet_listed",
    /// The input gives differing copies of the object.
    ConflictingCopies = "conflicting_copies",
    /// Fields of the object could not be read.
    Malformed = "malformed",
    /// `spec.suspend` (or a paused rollout, a suspended Job).
    Suspended = "suspended",
    /// A dependsOn cycle (`cycle`).
    DependencyCycle = "dependency_cycle",
    /// A reference to an object that does not exist (`role`, `kind`, `namespace`, `name`).
    ReferenceNotFound = "reference_not_found",
    /// A source on another shard than its consumer (`kind`, `namespace`, `name`).
    ReferenceOnOtherShard = "reference_on_other_shard",
    /// A reference whose kind is unread, not yet listed or not in the input (`kind`, `why`).
    ReferenceUnverifiable = "reference_unverifiable",
    /// An object the inventory lists is gone (`object`).
    InventoryObjectMissing = "inventory_object_missing",
    /// A cross-stack prerequisite fails (`rule`).
    CrossStack = "cross_stack",
    /// No Deployment runs the controller (`namespace`, `deployment`, `shard`).
    ControllerAbsent = "controller_absent",
    /// The controller's Deployment is not available (`controller`).
    ControllerDown = "controller_down",
    /// A Flux condition reports a failure (`condition`, `reason`, `rule`, `detail`).
    FluxFailure = "flux_failure",
    /// A Flux condition reports a wait on a prerequisite (`reason`, `rule`).
    FluxWaiting = "flux_waiting",
    /// A Flux condition reports work under way (`reason`, `rule`).
    FluxInProgress = "flux_in_progress",
    /// Ready=True with a reason no known controller writes (`reason`).
    UnknownReadyReason = "unknown_ready_reason",
    /// A new revision or chart attempted, and not applied yet.
    RevisionInFlight = "revision_in_flight",
    /// Applied behind what its source offers.
    BehindSource = "behind_source",
    /// Ready=True with Reconciling=True left behind.
    StaleStatus = "stale_status",
    /// Ready=True with a reason that proves it.
    Ready = "ready",
    /// Healthy by design without a status (an OCI HelmRepository).
    NoStatusByDesign = "no_status_by_design",
    /// Finalizers pending, or a deletion held by a failure (`reason`).
    Deleting = "deleting",
    /// A pod stuck terminating on a node that is gone (`node`).
    NodeLost = "node_lost",
    /// A container waiting for a failing reason (`container`, `reason`).
    ContainerWaiting = "container_waiting",
    /// A container crash-looping (`container`, `exit`).
    CrashLoop = "crash_loop",
    /// A pod that ended in failure (`reason`, `container`).
    PodFailed = "pod_failed",
    /// A pod the scheduler cannot place (`reason`).
    Unschedulable = "unschedulable",
    /// A pod waiting for a preemption.
    Preempting = "preempting",
    /// A pod starting, or its containers not ready yet (`phase`, `reason`).
    PodStarting = "pod_starting",
    /// A pod running and ready, or completed.
    PodRunning = "pod_running",
    /// An object whose controller has written no status (`what`) yet.
    NoStatusYet = "no_status_yet",
    /// A workload's spec generation not yet observed.
    GenerationPending = "generation_pending",
    /// A rollout past its progress deadline (`reason`).
    RolloutStalled = "rollout_stalled",
    /// A workload without one available replica.
    NoAvailableReplicas = "no_available_replicas",
    /// A workload rolling out, or unavailable for a while (`reason`).
    RollingOut = "rolling_out",
    /// Pods the kubelet rejects at admission, again and again (`reason`).
    AdmissionRejections = "admission_rejections",
    /// A workload unavailable past its threshold.
    Unavailable = "unavailable",
    /// A ReplicaSet's pod creation refused (`reason`, `refusal`).
    ReplicaCreationRefused = "replica_creation_refused",
    /// A workload's replicas are available (or it is scaled to zero).
    Available = "available",
    /// A Job's run failed (`reason`).
    JobFailed = "job_failed",
    /// A Job running.
    JobRunning = "job_running",
    /// A failed Job a later run of its CronJob superseded.
    Superseded = "superseded",
    /// A CronJob whose latest run is a problem (`because`).
    LastRunFailing = "last_run_failing",
    /// A CronJob whose runs are fine.
    Scheduled = "scheduled",
    /// A Job or CronJob run that completed.
    Completed = "completed",
    /// A Namespace terminating.
    NamespaceTerminating = "namespace_terminating",
    /// A CustomResourceDefinition not established.
    CrdNotEstablished = "crd_not_established",
    /// An object whose existence is its health.
    Exists = "exists",
    /// Held up by its root causes (`by`).
    Blocked = "blocked",
    /// Ready, and something it deployed still rolling out (`object`).
    DeployedRollingOut = "deployed_rolling_out",
    /// Ready, and something it deployed unhealthy (`object`).
    DeployedUnhealthy = "deployed_unhealthy",
}
