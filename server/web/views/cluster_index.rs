//! `/clusters`: every cluster in ring order, with how fresh its data is, its labels and ring,
//! its objects by state, and the versions of Flux and of each controller it runs (read from
//! the controller Deployments the engine matched).

use super::present::encode;
use crate::health::State;
use crate::model::{Object, controller_of_deployment};
use crate::store::{Linked, Store};
use crate::web::error::ApiError;
use crate::web::fleet_view::{ClusterView, FleetView};
use crate::web::scope::Scope;
use crate::web::state::Site;
use chrono::{DateTime, Utc};
use std::collections::BTreeSet;

/// The label `flux install` puts on every object it writes, the controller Deployments
/// included, with the Flux release they belong to (fluxcd/flux2
/// pkg/manifestgen/install/templates.go, `labelsTmpl`): the release as Flux writes it, not
/// guessed from the controllers' image tags.
const FLUX_VERSION_LABEL: &str = "app.kubernetes.io/version";

pub struct ClusterIndex {
    pub group_by: String,
    /// The ring asked for (`?group=`), when one was.
    pub group: Option<String>,
    pub rows: Vec<ClusterEntry>,
}

pub struct ClusterEntry {
    pub cluster: ClusterView,
    pub href: String,
    pub labels: Vec<(String, String)>,
    pub counts: Vec<(State, u64, String)>,
    /// The Flux versions its controllers are labelled with (one when they agree).
    pub flux: Vec<String>,
    pub controllers: Vec<ControllerVersion>,
}

pub struct ControllerVersion {
    pub controller: String,
    /// The image tag, None when the Deployment was not seen or has no tagged image.
    pub version: Option<String>,
    /// None when the Deployment was not seen.
    pub state: Option<State>,
}

impl ClusterIndex {
    /// The clusters `scope` sees, with its own totals and the controllers it sees.
    pub async fn load(
        store: &Store,
        site: &Site,
        scope: &Scope,
        group: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<ClusterIndex, ApiError> {
        let (fleet, mut controllers) =
            tokio::try_join!(FleetView::load(store, site, scope, now), async {
                Ok(store.controllers_everywhere().await?)
            })?;
        for linked in controllers.values_mut() {
            linked.retain(|l| scope.sees_id(l.id.as_str()));
        }
        // A ring no cluster is in is a bad filter value (400), never an empty "all fine" list.
        if let Some(group) = &group
            && !fleet.clusters.iter().any(|c| c.group == *group)
        {
            return Err(ApiError::BadRequest(format!(
                "no cluster has {}={group:?}",
                fleet.group_by
            )));
        }
        let rows = fleet
            .clusters
            .into_iter()
            .filter(|c| group.as_ref().is_none_or(|g| *g == c.group))
            .map(|cluster| {
                let linked = controllers.remove(&cluster.name).unwrap_or_default();
                entry(cluster, &linked)
            })
            .collect();
        Ok(ClusterIndex {
            group_by: fleet.group_by,
            group,
            rows,
        })
    }
}

fn entry(cluster: ClusterView, linked: &[Linked]) -> ClusterEntry {
    let labels = cluster
        .labels
        .as_object()
        .map(|map| {
            map.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let counts = cluster
        .state_counts
        .worst_first()
        .into_iter()
        .map(|(s, n)| {
            let href = format!("/objects?cluster={}&state={s}", encode(&cluster.name));
            (s, n, href)
        })
        .collect();
    let mut flux = BTreeSet::new();
    let mut controllers: Vec<ControllerVersion> = linked
        .iter()
        .filter_map(|link| {
            let (_, _, _, deployment) = link.id.parts()?;
            let controller = controller_of_deployment(deployment)?.to_string();
            let object: Option<Object> = link
                .record
                .as_ref()
                .and_then(|r| serde_json::from_value(r.body.clone()).ok());
            if let Some(version) = object.as_ref().and_then(|o| o.label(FLUX_VERSION_LABEL)) {
                flux.insert(version.to_string());
            }
            Some(ControllerVersion {
                controller,
                version: object.as_ref().and_then(|o| image_version(&o.spec.images)),
                state: link.record.as_ref().map(|r| r.verdict.state),
            })
        })
        .collect();
    controllers.sort_by(|a, b| a.controller.cmp(&b.controller));
    ClusterEntry {
        href: format!("/clusters/{}", encode(&cluster.name)),
        cluster,
        labels,
        counts,
        flux: flux.into_iter().collect(),
        controllers,
    }
}

/// The tag of a Deployment's first image (`ghcr.io/fluxcd/source-controller:v1.4.1@sha256:…`
/// → `v1.4.1`); None for an untagged or digest-only image.
fn image_version(images: &[String]) -> Option<String> {
    let image = images.first()?;
    let without_digest = image.split('@').next()?;
    let (repository, tag) = without_digest.rsplit_once(':')?;
    // `registry:5000/controller` has a port, not a tag.
    (!tag.contains('/') && !repository.is_empty()).then(|| tag.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_the_images_tag_never_a_port_or_a_digest() {
        let cases = [
            ("ghcr.io/fluxcd/source-controller:v1.4.1", Some("v1.4.1")),
            (
                "ghcr.io/fluxcd/kustomize-controller:v1.4.0@sha256:abc",
                Some("v1.4.0"),
            ),
            ("registry:5000/fluxcd/helm-controller", None),
            (
                "registry:5000/fluxcd/helm-controller:v1.1.0",
                Some("v1.1.0"),
            ),
            ("ghcr.io/fluxcd/helm-controller@sha256:abc", None),
        ];
        for (image, expected) in cases {
            assert_eq!(
                image_version(&[image.to_string()]).as_deref(),
                expected,
                "{image}"
            );
        }
    }
}
