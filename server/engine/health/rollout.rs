//! Whether a workload's rollout is complete, as `kubectl rollout status` decides
//! (kubernetes/kubernetes staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go)
//! and the deployment controller's util.DeploymentComplete
//! (pkg/controller/deployment/util/deployment_util.go): every desired replica updated and
//! available, and no old replica left — `status.replicas` counts old pods still terminating,
//! so with one replica the available pod may still be the old one.

use crate::model::{Object, WorkloadStatus};

/// What is left before the rollout is complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pending {
    /// Pods still to be replaced or removed: a new spec is being rolled out (or scaled down).
    pub rollout: bool,
    /// e.g. `1/3 available, 2 updated, 1 pending termination`.
    pub counts: String,
}

/// None when the rollout is complete.
pub(super) fn pending(workload: &Object, counts: &WorkloadStatus) -> Option<Pending> {
    let desired = counts.desired;
    let not_updated = !workload.spec.updates_on_delete && updates_pending(workload, counts);
    let extra = counts.total - desired;
    if !not_updated && extra <= 0 && counts.available >= desired {
        return None;
    }
    let mut text = format!("{}/{desired} available", counts.available);
    if let Some(updated) = counts.updated {
        text.push_str(&format!(", {updated} updated"));
    }
    if extra > 0 {
        text.push_str(&format!(", {extra} pending termination"));
    }
    Some(Pending {
        rollout: not_updated || extra > 0,
        counts: text,
    })
}

/// Fewer pods on the new spec than the rollout needs. A StatefulSet's partition keeps the
/// ordinals below it on the old revision by design; an older cluster that does not write
/// `updatedReplicas` is judged by its revisions, as kstatus does
/// (kubernetes-sigs/cli-utils pkg/kstatus/status/core.go, stsConditions).
fn updates_pending(workload: &Object, counts: &WorkloadStatus) -> bool {
    let partition = workload.spec.partition.unwrap_or(0).max(0);
    match counts.updated {
        Some(updated) => updated < counts.desired - partition,
        None => partition == 0 && counts.revision_pending,
    }
}
