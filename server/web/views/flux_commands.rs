//! The `flux` commands an on-call engineer types next, ready to copy: reconcile a Flux object
//! now, or trace an applied object back to its Kustomization or HelmRelease and source. The
//! subcommands are the flux CLI's (fluxcd/flux2 cmd/flux/reconcile_kustomization.go,
//! reconcile_helmrelease.go, reconcile_source_{git,oci,helm,chart,bucket}.go; `--with-source`
//! from reconcile_with_source.go; `trace <name> --kind --api-version` from trace.go). The
//! flux CLI has no command for tofu-controller's Terraform.

use crate::model::{Kind, Object};
use crate::web::state::Site;
use serde::Serialize;

#[derive(Debug, Default, Serialize, utoipa::ToSchema)]
pub struct FluxCommands {
    /// Asks the controller to reconcile it now (Flux objects the flux CLI knows).
    pub reconcile: Option<String>,
    /// Which Flux object applied it, from which source and revision (objects Flux applied).
    pub trace: Option<String>,
}

pub fn flux_commands(object: Option<&Object>, applied_by_flux: bool, site: &Site) -> FluxCommands {
    let Some(object) = object else {
        return FluxCommands::default();
    };
    let context = site
        .kube_contexts
        .get(object.cluster.as_str())
        .map_or(object.cluster.as_str(), String::as_str);
    let name = shell_word(&object.name);
    let mut flags = Vec::new();
    if !object.namespace.is_empty() {
        flags.push(format!("-n {}", shell_word(&object.namespace)));
    }
    flags.push(format!("--context {}", shell_word(context)));
    let flags = flags.join(" ");
    let reconcile = subcommand(object.kind).map(|sub| {
        let with_source = if matches!(object.kind, Kind::Kustomization | Kind::HelmRelease) {
            " --with-source"
        } else {
            ""
        };
        format!("flux reconcile {sub} {name} {flags}{with_source}")
    });
    let trace = applied_by_flux.then(|| {
        format!(
            "flux trace {name} --kind {} --api-version {} {flags}",
            object.kind,
            shell_word(&object.api_version),
        )
    });
    FluxCommands { reconcile, trace }
}

fn subcommand(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Kustomization => Some("kustomization"),
        Kind::HelmRelease => Some("helmrelease"),
        Kind::GitRepository => Some("source git"),
        Kind::OCIRepository => Some("source oci"),
        Kind::HelmRepository => Some("source helm"),
        Kind::HelmChart => Some("source chart"),
        Kind::Bucket => Some("source bucket"),
        _ => None,
    }
}

/// A word a POSIX shell reads back unchanged: as is when plain, else single-quoted.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/=@+".contains(&b));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_object;
    use serde_json::json;

    fn object(kind: &str, api_version: &str, namespace: &str, name: &str) -> Object {
        let mut metadata = json!({"name": name});
        if !namespace.is_empty() {
            metadata["namespace"] = json!(namespace);
        }
        parse_object(
            "prod-eu-1",
            &json!({"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": {}}),
        )
        .unwrap()
    }

    #[test]
    fn flux_objects_reconcile_with_their_source_and_the_configured_context() {
        let mut site = Site::default();
        site.kube_contexts
            .insert("prod-eu-1".into(), "arn:aws:eks:eu-1:1:cluster/prod".into());
        let ks = object(
            "Kustomization",
            "kustomize.toolkit.fluxcd.io/v1",
            "gitops",
            "apps",
        );
        let commands = flux_commands(Some(&ks), true, &site);
        assert_eq!(
            commands.reconcile.as_deref(),
            Some(
                "flux reconcile kustomization apps -n gitops --context arn:aws:eks:eu-1:1:cluster/prod --with-source"
            )
        );
        assert_eq!(
            commands.trace.as_deref(),
            Some(
                "flux trace apps --kind Kustomization --api-version kustomize.toolkit.fluxcd.io/v1 -n gitops --context arn:aws:eks:eu-1:1:cluster/prod"
            )
        );
        let git = object(
            "GitRepository",
            "source.toolkit.fluxcd.io/v1",
            "gitops",
            "fleet",
        );
        assert_eq!(
            flux_commands(Some(&git), false, &Site::default())
                .reconcile
                .as_deref(),
            Some("flux reconcile source git fleet -n gitops --context prod-eu-1")
        );
    }

    #[test]
    fn applied_objects_are_traced_and_not_reconciled() {
        let deployment = object("Deployment", "apps/v1", "gw", "gateway");
        let commands = flux_commands(Some(&deployment), true, &Site::default());
        assert_eq!(commands.reconcile, None);
        assert_eq!(
            commands.trace.as_deref(),
            Some(
                "flux trace gateway --kind Deployment --api-version apps/v1 -n gw --context prod-eu-1"
            )
        );
        let namespace = object("Namespace", "v1", "", "tenants");
        assert_eq!(
            flux_commands(Some(&namespace), true, &Site::default())
                .trace
                .as_deref(),
            Some("flux trace tenants --kind Namespace --api-version v1 --context prod-eu-1"),
            "cluster-scoped: no namespace flag"
        );
        assert_eq!(
            flux_commands(Some(&deployment), false, &Site::default()).trace,
            None,
            "nothing to trace when Flux did not apply it"
        );
    }

    #[test]
    fn odd_words_are_quoted_for_the_shell() {
        assert_eq!(shell_word("prod eu"), "'prod eu'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("$(rm -rf)"), "'$(rm -rf)'");
    }
}
