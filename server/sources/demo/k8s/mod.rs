//! Builders for Kubernetes and Flux objects as the API server returns them (JSON), composed by
//! the demo scenario. Each file builds one family of kinds.

mod cluster;
mod helm_release;
mod kustomization;
mod meta;
mod pods;
mod sources;
mod terraform;
mod workloads;

pub use cluster::{crd, namespace};
pub use helm_release::{Chart, HelmReleaseState, Release, helm_release};
pub use kustomization::{KustomizationSpec, Run, Target, inventory_id, kustomization};
pub use meta::Meta;
pub use pods::ContainerState;
pub use sources::{
    Artifact, git_repository, helm_chart, helm_repository, oci_helm_repository, oci_repository,
};
pub use terraform::{TerraformRun, terraform};
pub use workloads::{PodPlan, Workload, WorkloadKind, running_pods, workload_with_pods};
