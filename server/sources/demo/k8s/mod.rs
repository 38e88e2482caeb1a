//! The demo's objects: how each controller words the runs the scenario plays and how the
//! workloads' pods fare over time, built with the engine's object builders
//! ([`crate::objects`]) and given the details a real API server adds (digests, uids, …).

mod helm_release;
mod kustomization;
mod pods;
mod sources;
mod terraform;
mod workloads;

pub use crate::objects::{Artifact, Meta, WorkloadKind, crd, namespace};
pub use helm_release::{Chart, HelmReleaseState, Release, helm_release};
pub use kustomization::{KustomizationSpec, Run, Target, inventory_id, kustomization};
pub use pods::ContainerState;
pub use sources::{
    git_repository, helm_chart, helm_repository, oci_helm_repository, oci_repository,
};
pub use terraform::{TerraformRun, terraform};
pub use workloads::{PodPlan, Workload, running_pods, workload_with_pods};
