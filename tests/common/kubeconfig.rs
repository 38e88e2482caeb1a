//! Variants of the test bed's kubeconfig: a context pointed at a proxy, or authenticated with a
//! token instead of the admin certificate. Edited as plain YAML, so what kube-rs reads is
//! exactly what a user's file would hold.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

pub struct EditedKubeconfig(Value);

impl EditedKubeconfig {
    pub fn read(path: &Path) -> EditedKubeconfig {
        let text = std::fs::read_to_string(path).expect("read the kubeconfig");
        EditedKubeconfig(serde_saphyr::from_str(&text).expect("a YAML kubeconfig"))
    }

    fn named<'a>(&'a mut self, list: &str, name: &str) -> &'a mut Value {
        self.0[list]
            .as_array_mut()
            .and_then(|items| items.iter_mut().find(|item| item["name"] == name))
            .unwrap_or_else(|| panic!("no {list} entry named {name}"))
    }

    fn context_field(&mut self, context: &str, field: &str) -> String {
        self.named("contexts", context)["context"][field]
            .as_str()
            .unwrap_or_else(|| panic!("context {context} has no {field}"))
            .to_string()
    }

    /// The API server URL the context talks to.
    pub fn server(&mut self, context: &str) -> String {
        let cluster = self.context_field(context, "cluster");
        self.named("clusters", &cluster)["cluster"]["server"]
            .as_str()
            .expect("a server URL")
            .to_string()
    }

    pub fn set_server(&mut self, context: &str, server: &str) -> &mut Self {
        let cluster = self.context_field(context, "cluster");
        self.named("clusters", &cluster)["cluster"]["server"] = server.into();
        self
    }

    /// The context authenticates with a bearer token (a user of its own).
    pub fn set_token(&mut self, context: &str, token: &str) -> &mut Self {
        let user = format!("{context}-token");
        self.0["users"]
            .as_array_mut()
            .expect("a users list")
            .push(json!({"name": user, "user": {"token": token}}));
        self.named("contexts", context)["context"]["user"] = user.into();
        self
    }

    /// Writes the edited kubeconfig next to the test bed's state; returns its path.
    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(format!("{name}.kubeconfig"));
        std::fs::write(&path, serde_saphyr::to_string(&self.0).unwrap()).unwrap();
        path
    }
}
