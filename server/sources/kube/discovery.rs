//! Which Flux kinds each cluster serves, and at which version: v1 where served, the older
//! v2beta2/v1beta2 where that is all a cluster has (the API server's preferred version wins).

use crate::model::Kind;
use kube::Client;
use kube::discovery::{ApiResource, Discovery};

/// The Flux kinds fleetglass watches, by API group.
pub const FLUX_KINDS: [Kind; 9] = [
    Kind::Kustomization,
    Kind::HelmRelease,
    Kind::GitRepository,
    Kind::OCIRepository,
    Kind::HelmRepository,
    Kind::HelmChart,
    Kind::Bucket,
    Kind::ExternalArtifact,
    Kind::Terraform,
];

/// Kinds many fleets do not install; not serving them is normal and not a problem.
pub fn is_optional(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Terraform | Kind::Bucket | Kind::ExternalArtifact
    )
}

#[derive(Debug, Default)]
pub struct Served {
    pub kinds: Vec<(Kind, ApiResource)>,
    pub missing: Vec<Kind>,
}

#[tracing::instrument(skip_all)]
pub async fn flux_kinds(client: &Client) -> Result<Served, kube::Error> {
    let mut groups: Vec<&str> = FLUX_KINDS.iter().map(|k| k.group()).collect();
    groups.dedup();
    let discovery = Discovery::new(client.clone()).filter(&groups).run().await?;
    let mut served = Served::default();
    for kind in FLUX_KINDS {
        let found = discovery
            .get(kind.group())
            .and_then(|group| group.recommended_kind(kind.as_str()));
        match found {
            Some((resource, _)) => served.kinds.push((kind, resource)),
            None => served.missing.push(kind),
        }
    }
    Ok(served)
}

/// What to record for a kind the cluster does not serve.
pub fn not_served(kind: Kind) -> String {
    format!(
        "not served by this cluster (no {} API in {}; is the CRD installed?)",
        kind.as_str(),
        kind.group()
    )
}
