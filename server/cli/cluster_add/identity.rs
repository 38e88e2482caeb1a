//! The read-only identity fleetglass needs on a watched cluster — the fleetglass-reader chart's
//! ServiceAccount, ClusterRole and binding, the same rules (tests/packaging.rs compares them) —
//! created with server-side apply, and a token for it from the TokenRequest API.

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, Resource};
use std::collections::BTreeMap;

/// The field manager of what `cluster add` applies.
const MANAGER: &str = "fleetglass-cluster-add";

/// get/list/watch on exactly what the collector reads; never Secrets, never a write.
pub fn reader_rules() -> Vec<PolicyRule> {
    let rule = |group: &str, resources: &[&str]| PolicyRule {
        api_groups: Some(vec![group.to_string()]),
        resources: Some(resources.iter().map(|r| r.to_string()).collect()),
        verbs: ["get", "list", "watch"].map(String::from).to_vec(),
        ..PolicyRule::default()
    };
    vec![
        rule("kustomize.toolkit.fluxcd.io", &["kustomizations"]),
        rule("helm.toolkit.fluxcd.io", &["helmreleases"]),
        rule(
            "source.toolkit.fluxcd.io",
            &[
                "gitrepositories",
                "ocirepositories",
                "helmrepositories",
                "helmcharts",
                "buckets",
                "externalartifacts",
            ],
        ),
        rule("infra.contrib.fluxcd.io", &["terraforms"]),
        rule("apps", &["deployments", "statefulsets", "daemonsets"]),
        rule("batch", &["jobs", "cronjobs"]),
        rule("", &["pods", "namespaces"]),
        rule("apiextensions.k8s.io", &["customresourcedefinitions"]),
        rule("events.k8s.io", &["events"]),
    ]
}

/// Where the identity lives on the target cluster.
#[derive(Debug, Clone)]
pub struct Identity {
    pub namespace: String,
    pub service_account: String,
}

impl Identity {
    /// Named as the reader chart names it for a release called `service_account`.
    pub fn cluster_role(&self) -> String {
        format!(
            "fleetglass-reader:{}:{}",
            self.namespace, self.service_account
        )
    }

    fn meta(&self, name: String, namespace: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name),
            namespace: namespace.map(String::from),
            labels: Some(BTreeMap::from([
                ("app.kubernetes.io/name".into(), "fleetglass-reader".into()),
                ("app.kubernetes.io/part-of".into(), "fleetglass".into()),
                ("app.kubernetes.io/managed-by".into(), MANAGER.into()),
            ])),
            ..ObjectMeta::default()
        }
    }

    /// Creates (or updates) the namespace, ServiceAccount, ClusterRole and binding.
    pub async fn apply(&self, client: &Client) -> Result<(), kube::Error> {
        let namespace = Namespace {
            metadata: self.meta(self.namespace.clone(), None),
            ..Namespace::default()
        };
        let account = ServiceAccount {
            metadata: self.meta(self.service_account.clone(), Some(&self.namespace)),
            automount_service_account_token: Some(false),
            ..ServiceAccount::default()
        };
        let role = ClusterRole {
            metadata: self.meta(self.cluster_role(), None),
            rules: Some(reader_rules()),
            ..ClusterRole::default()
        };
        let binding = ClusterRoleBinding {
            metadata: self.meta(self.cluster_role(), None),
            role_ref: RoleRef {
                api_group: Some("rbac.authorization.k8s.io".into()),
                kind: "ClusterRole".into(),
                name: self.cluster_role(),
            },
            subjects: Some(vec![Subject {
                kind: "ServiceAccount".into(),
                name: self.service_account.clone(),
                namespace: Some(self.namespace.clone()),
                ..Subject::default()
            }]),
        };
        apply(Api::all(client.clone()), &namespace).await?;
        apply(Api::namespaced(client.clone(), &self.namespace), &account).await?;
        apply(Api::all(client.clone()), &role).await?;
        apply(Api::all(client.clone()), &binding).await
    }

    /// A token for the ServiceAccount, valid `seconds` (the API server may shorten it; the
    /// expiry it granted is returned).
    pub async fn token(&self, client: &Client, seconds: i64) -> Result<TokenRequest, kube::Error> {
        let request = TokenRequest {
            spec: Some(TokenRequestSpec {
                expiration_seconds: Some(seconds),
                ..TokenRequestSpec::default()
            }),
            ..TokenRequest::default()
        };
        Api::<ServiceAccount>::namespaced(client.clone(), &self.namespace)
            .create_token_request(&self.service_account, &PostParams::default(), &request)
            .await
    }
}

async fn apply<K>(api: Api<K>, object: &K) -> Result<(), kube::Error>
where
    K: Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let name = object.meta().name.clone().unwrap_or_default();
    api.patch(
        &name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(object),
    )
    .await
    .map(drop)
}
