//! A reference from one object to another (`sourceRef`, `chartRef`, `dependsOn[]`,
//! `healthChecks[]`): each part is written only when set, as users write them.

use serde_json::{Map, Value};

#[derive(Debug, Clone, Default)]
pub struct Ref {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub name: String,
    /// None: the referring object's own namespace.
    pub namespace: Option<String>,
}

impl Ref {
    /// A reference by name only (a `dependsOn` entry in the same namespace).
    pub fn named(name: &str) -> Ref {
        Ref {
            name: name.to_string(),
            ..Ref::default()
        }
    }

    /// A reference to an object of `kind` (a `sourceRef`).
    pub fn to(kind: &str, name: &str) -> Ref {
        Ref {
            kind: Some(kind.to_string()),
            ..Ref::named(name)
        }
    }

    pub fn in_namespace(mut self, namespace: &str) -> Ref {
        self.namespace = Some(namespace.to_string());
        self
    }

    pub fn api_version(mut self, api_version: &str) -> Ref {
        self.api_version = Some(api_version.to_string());
        self
    }

    pub fn to_json(&self) -> Value {
        let mut reference = Map::new();
        let parts = [
            ("apiVersion", &self.api_version),
            ("kind", &self.kind),
            ("namespace", &self.namespace),
        ];
        for (key, value) in parts {
            if let Some(value) = value {
                reference.insert(key.into(), Value::from(value.as_str()));
            }
        }
        reference.insert("name".into(), Value::from(self.name.as_str()));
        Value::Object(reference)
    }
}

/// A list of references as a JSON array.
pub(super) fn list(references: &[Ref]) -> Value {
    references.iter().map(Ref::to_json).collect()
}
