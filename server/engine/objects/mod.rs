//! Builders for Kubernetes and Flux objects as the API server returns them: one typed builder
//! per kind, holding the fields the engine reads (see `model::raw`) and the few an API server
//! requires, so adding a parsed field means changing one builder. `to_json()` is both the
//! engine's input (through `model::parse_object`) and the document a test bed's API server
//! receives; the demo fleet, the engine's tests, the benches and the integration tests share
//! them, each adding on top only what the engine never reads.

mod cluster;
mod helm_release;
mod kustomization;
mod meta;
mod pod;
mod reference;
mod sources;
mod terraform;
mod workload;

pub use cluster::{crd, namespace};
pub use helm_release::{ChartSource, HelmRelease, HelmReleaseStatus, HistoryEntry};
pub use kustomization::{Kustomization, KustomizationStatus};
pub use meta::{Conditions, Meta, Truth, condition, plain_condition, time};
pub use pod::{ContainerState, ContainerStatus, Pod, PodStatus, Termination};
pub use reference::Ref;
pub use sources::{
    Artifact, GitRepository, HelmChart, HelmRepository, OciRepository, SourceStatus, Storage,
};
pub use terraform::{Terraform, TerraformStatus};
pub use workload::{Workload, WorkloadKind, WorkloadStatus};
