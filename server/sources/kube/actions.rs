//! A merge patch of one Flux object on its cluster's API server, through a client made for
//! the one request, as `fleetglass` (the field manager).

use super::connect;
use crate::config::ClusterConfig;
use crate::sources::actions::{ActionError, Target};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::Value;

pub async fn patch_object(
    cluster: &ClusterConfig,
    target: &Target<'_>,
    patch: &Value,
) -> Result<(), ActionError> {
    let failed = |problem: String| ActionError::Failed {
        cluster: cluster.name.clone(),
        problem,
    };
    let client = connect::client(cluster)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let (group, version) = target
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", target.api_version));
    let gvk = GroupVersionKind::gvk(group, version, target.kind.as_str());
    let resource = ApiResource::from_gvk(&gvk);
    let api: Api<DynamicObject> = Api::namespaced_with(client, target.namespace, &resource);
    let params = PatchParams {
        field_manager: Some("fleetglass".into()),
        ..PatchParams::default()
    };
    match api.patch(target.name, &params, &Patch::Merge(patch)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 403 => Err(ActionError::Forbidden {
            cluster: cluster.name.clone(),
            kind: target.kind,
        }),
        Err(kube::Error::Api(status)) if status.code == 404 => Err(ActionError::Gone {
            cluster: cluster.name.clone(),
            problem: status.message,
        }),
        Err(kube::Error::Api(status)) => Err(failed(status.message)),
        Err(other) => Err(failed(other.to_string())),
    }
}
