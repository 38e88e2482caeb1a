//! The kinds fleetglass understands, with the facts about each that the rest of the code needs:
//! API group, which controller reconciles it, and what role it plays in the graph.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kind {
    Kustomization,
    HelmRelease,
    GitRepository,
    OCIRepository,
    HelmRepository,
    HelmChart,
    Bucket,
    /// An artifact produced outside source-controller (an ArtifactGenerator of source-watcher).
    ExternalArtifact,
    Terraform,
    Deployment,
    StatefulSet,
    DaemonSet,
    /// A run to completion; its pods are evidence of it.
    Job,
    /// Schedules Jobs; the Jobs it keeps as history are judged against its later runs.
    CronJob,
    Pod,
    CustomResourceDefinition,
    Namespace,
}

impl Kind {
    pub const ALL: [Kind; 17] = [
        Kind::Kustomization,
        Kind::HelmRelease,
        Kind::GitRepository,
        Kind::OCIRepository,
        Kind::HelmRepository,
        Kind::HelmChart,
        Kind::Bucket,
        Kind::ExternalArtifact,
        Kind::Terraform,
        Kind::Deployment,
        Kind::StatefulSet,
        Kind::DaemonSet,
        Kind::Job,
        Kind::CronJob,
        Kind::Pod,
        Kind::CustomResourceDefinition,
        Kind::Namespace,
    ];

    /// The kind `text` names, as Kubernetes spells it or in any case; None for a kind fleetglass
    /// does not know, without building an error for it: health checks and references name
    /// Services, ConfigMaps and the like on every evaluation.
    pub fn named(text: &str) -> Option<Kind> {
        Kind::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(text))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Kustomization => "Kustomization",
            Kind::HelmRelease => "HelmRelease",
            Kind::GitRepository => "GitRepository",
            Kind::OCIRepository => "OCIRepository",
            Kind::HelmRepository => "HelmRepository",
            Kind::HelmChart => "HelmChart",
            Kind::Bucket => "Bucket",
            Kind::ExternalArtifact => "ExternalArtifact",
            Kind::Terraform => "Terraform",
            Kind::Deployment => "Deployment",
            Kind::StatefulSet => "StatefulSet",
            Kind::DaemonSet => "DaemonSet",
            Kind::Job => "Job",
            Kind::CronJob => "CronJob",
            Kind::Pod => "Pod",
            Kind::CustomResourceDefinition => "CustomResourceDefinition",
            Kind::Namespace => "Namespace",
        }
    }

    /// The API group the kind lives in ("" for the core group).
    pub fn group(self) -> &'static str {
        match self {
            Kind::Kustomization => "kustomize.toolkit.fluxcd.io",
            Kind::HelmRelease => "helm.toolkit.fluxcd.io",
            Kind::GitRepository
            | Kind::OCIRepository
            | Kind::HelmRepository
            | Kind::HelmChart
            | Kind::Bucket
            | Kind::ExternalArtifact => "source.toolkit.fluxcd.io",
            Kind::Terraform => "infra.contrib.fluxcd.io",
            Kind::Deployment | Kind::StatefulSet | Kind::DaemonSet => "apps",
            Kind::Job | Kind::CronJob => "batch",
            Kind::Pod | Kind::Namespace => "",
            Kind::CustomResourceDefinition => "apiextensions.k8s.io",
        }
    }

    /// Flux objects are the ones a controller reconciles and that carry Flux conditions.
    pub fn is_flux(self) -> bool {
        self.controller().is_some()
    }

    pub fn is_source(self) -> bool {
        self.group() == "source.toolkit.fluxcd.io"
    }

    pub fn is_workload(self) -> bool {
        matches!(self, Kind::Deployment | Kind::StatefulSet | Kind::DaemonSet)
    }

    pub fn is_cluster_scoped(self) -> bool {
        matches!(self, Kind::CustomResourceDefinition | Kind::Namespace)
    }

    /// The controller Deployment (unsharded name) that reconciles this kind.
    pub fn controller(self) -> Option<&'static str> {
        match self {
            Kind::Kustomization => Some("kustomize-controller"),
            Kind::HelmRelease => Some("helm-controller"),
            Kind::GitRepository
            | Kind::OCIRepository
            | Kind::HelmRepository
            | Kind::HelmChart
            | Kind::Bucket => Some("source-controller"),
            // source-controller serves the API; source-watcher writes the status.
            Kind::ExternalArtifact => Some("source-watcher"),
            Kind::Terraform => Some("tofu-controller"),
            _ => None,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Kind {
    type Err = UnknownKind;

    /// Accepts the kind as Kubernetes spells it, case-insensitively (`helmrelease` works too).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Kind::named(text).ok_or_else(|| UnknownKind(text.to_string()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKind(pub String);

impl fmt::Display for UnknownKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
        write!(f, "unknown kind {:?} (known: {})", self.0, known.join(", "))
    }
}

impl std::error::Error for UnknownKind {}

/// Names of the Flux controllers whose Deployments fleetglass tracks for liveness.
pub const CONTROLLER_NAMES: [&str; 8] = [
    "source-controller",
    "kustomize-controller",
    "helm-controller",
    "notification-controller",
    "image-reflector-controller",
    "image-automation-controller",
    "source-watcher",
    "tofu-controller",
];

/// The controller a Deployment name stands for, shards included (`kustomize-controller-shard1`).
pub fn controller_of_deployment(name: &str) -> Option<&'static str> {
    CONTROLLER_NAMES
        .into_iter()
        .filter(|controller| {
            name == *controller
                || name
                    .strip_prefix(controller)
                    .is_some_and(|rest| rest.starts_with('-'))
        })
        .max_by_key(|controller| controller.len())
}

/// The controller and the shard a Deployment name stands for; the main one's shard is "".
pub fn controller_shard_of_deployment(name: &str) -> Option<(&'static str, &str)> {
    let controller = controller_of_deployment(name)?;
    Some((controller, name[controller.len()..].trim_start_matches('-')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_are_case_insensitive() {
        for kind in Kind::ALL {
            assert_eq!(kind.as_str().parse::<Kind>().unwrap(), kind);
        }
        assert_eq!("helmrelease".parse::<Kind>().unwrap(), Kind::HelmRelease);
        assert_eq!(Kind::named("gitRepository"), Some(Kind::GitRepository));
        assert_eq!(Kind::named("ConfigMap"), None);
        assert!(
            "Gadget"
                .parse::<Kind>()
                .unwrap_err()
                .to_string()
                .contains("Gadget")
        );
    }

    #[test]
    fn controller_deployments_are_recognised_with_shards() {
        assert_eq!(
            controller_of_deployment("kustomize-controller"),
            Some("kustomize-controller")
        );
        assert_eq!(
            controller_of_deployment("kustomize-controller-shard1"),
            Some("kustomize-controller")
        );
        assert_eq!(
            controller_of_deployment("source-watcher"),
            Some("source-watcher")
        );
        assert_eq!(controller_of_deployment("podinfo"), None);
        assert_eq!(controller_of_deployment("kustomize-controllerx"), None);
        assert_eq!(
            controller_shard_of_deployment("kustomize-controller-shard1"),
            Some(("kustomize-controller", "shard1"))
        );
        assert_eq!(
            controller_shard_of_deployment("source-controller"),
            Some(("source-controller", ""))
        );
    }
}
