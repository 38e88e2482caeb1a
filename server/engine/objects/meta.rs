//! What every object shares: metadata (with Flux's ownership labels), the
//! apiVersion/kind/metadata/spec/status envelope, conditions and timestamps.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

/// Timestamps the way the API server writes them: RFC 3339, whole seconds, `Z`.
pub fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Name, namespace, labels, generation and creation time of one object.
#[derive(Debug, Clone)]
pub struct Meta {
    pub namespace: String,
    pub name: String,
    pub labels: Map<String, Value>,
    pub generation: i64,
    pub created: DateTime<Utc>,
    /// `(kind, name)` of the controlling owner (a Pod's ReplicaSet, StatefulSet or DaemonSet).
    pub owner: Option<(String, String)>,
}

impl Meta {
    /// `namespace` is empty for cluster-scoped objects.
    pub fn new(namespace: &str, name: &str, created: DateTime<Utc>) -> Meta {
        Meta {
            namespace: namespace.to_string(),
            name: name.to_string(),
            labels: Map::new(),
            generation: 1,
            created,
            owner: None,
        }
    }

    pub fn label(mut self, key: &str, value: &str) -> Meta {
        self.labels.insert(key.to_string(), Value::from(value));
        self
    }

    pub fn generation(mut self, generation: i64) -> Meta {
        self.generation = generation;
        self
    }

    pub fn owned_by(mut self, kind: &str, name: &str) -> Meta {
        self.owner = Some((kind.to_string(), name.to_string()));
        self
    }

    /// The labels kustomize-controller stamps on everything a Kustomization applies.
    pub fn applied_by_kustomization(self, namespace: &str, name: &str) -> Meta {
        self.label("kustomize.toolkit.fluxcd.io/name", name)
            .label("kustomize.toolkit.fluxcd.io/namespace", namespace)
    }

    /// The labels helm-controller stamps on everything a HelmRelease installs.
    pub fn installed_by_helm_release(self, namespace: &str, name: &str) -> Meta {
        self.label("helm.toolkit.fluxcd.io/name", name)
            .label("helm.toolkit.fluxcd.io/namespace", namespace)
    }

    fn to_json(&self, with_generation: bool) -> Value {
        let mut meta = json!({"name": self.name, "creationTimestamp": time(self.created)});
        meta["labels"] = Value::Object(self.labels.clone());
        if !self.namespace.is_empty() {
            meta["namespace"] = Value::from(self.namespace.as_str());
        }
        if with_generation {
            meta["generation"] = Value::from(self.generation);
        }
        if let Some((kind, name)) = &self.owner {
            meta["ownerReferences"] = json!([{
                "apiVersion": "apps/v1", "kind": kind, "name": name,
                "controller": true, "blockOwnerDeletion": true,
            }]);
        }
        meta
    }
}

/// The object as the API server returns it. `status: None` leaves the field out entirely
/// (an OCI HelmRepository has none; a test bed sets status apart, through its subresource).
pub fn object(
    api_version: &str,
    kind: &str,
    meta: &Meta,
    spec: Value,
    status: Option<Value>,
) -> Value {
    // Built by moving the parts in: `json!` would deep-copy every nested Value.
    let mut object = Map::new();
    object.insert("apiVersion".into(), Value::from(api_version));
    object.insert("kind".into(), Value::from(kind));
    // The API server sets no generation on Pods; every other kind built here has one.
    object.insert("metadata".into(), meta.to_json(kind != "Pod"));
    object.insert("spec".into(), spec);
    if let Some(status) = status {
        object.insert("status".into(), status);
    }
    Value::Object(object)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Truth {
    True,
    False,
    Unknown,
}

impl Truth {
    pub fn as_str(self) -> &'static str {
        match self {
            Truth::True => "True",
            Truth::False => "False",
            Truth::Unknown => "Unknown",
        }
    }
}

/// A condition as a Flux controller writes it: with the generation it saw when it set it
/// (older controllers write none).
pub fn condition(
    type_: &str,
    status: Truth,
    reason: &str,
    message: &str,
    since: DateTime<Utc>,
    observed_generation: Option<i64>,
) -> Value {
    let mut condition = json!({
        "type": type_,
        "status": status.as_str(),
        "reason": reason,
        "message": message,
        "lastTransitionTime": time(since),
    });
    if let Some(generation) = observed_generation {
        condition["observedGeneration"] = Value::from(generation);
    }
    condition
}

/// A condition list as a Flux controller writes it, every condition at one generation.
#[derive(Debug, Clone)]
pub struct Conditions {
    generation: i64,
    items: Vec<Value>,
}

impl Conditions {
    pub fn observing(generation: i64) -> Conditions {
        Conditions {
            generation,
            items: Vec::new(),
        }
    }

    pub fn with(
        mut self,
        type_: &str,
        status: Truth,
        reason: &str,
        message: &str,
        since: DateTime<Utc>,
    ) -> Self {
        let generation = self.generation;
        self.items.push(condition(
            type_,
            status,
            reason,
            message,
            since,
            Some(generation),
        ));
        self
    }

    pub fn into_vec(self) -> Vec<Value> {
        self.items
    }
}

/// A condition of a built-in kind (Deployment, CRD): no observedGeneration.
pub fn plain_condition(
    type_: &str,
    status: Truth,
    reason: &str,
    message: &str,
    since: DateTime<Utc>,
) -> Value {
    json!({
        "type": type_,
        "status": status.as_str(),
        "reason": reason,
        "message": message,
        "lastTransitionTime": time(since),
        "lastUpdateTime": time(since),
    })
}
