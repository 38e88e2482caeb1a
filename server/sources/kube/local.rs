//! Which clusters `serve` watches when the config lists none: with a kubeconfig, its current
//! context (as kubectl and k9s do), the `--context` ones, or every one with `--all-contexts`;
//! without a kubeconfig but with a mounted service account token (a pod), the cluster it runs
//! in. A kubeconfig wins when both exist, so a pod given one on purpose uses it.

use super::connect::ConnectError;
use crate::config::ClusterConfig;
use kube::config::Kubeconfig;
use std::path::{Path, PathBuf};

/// Where a kubelet mounts the pod's service account token (kube-rs reads it from there).
pub const SERVICE_ACCOUNT_TOKEN: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";
/// The name the cluster fleetglass runs in gets when nothing names it.
pub const IN_CLUSTER_NAME: &str = "in-cluster";

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct ContextChoice {
    pub contexts: Vec<String>,
    pub all: bool,
}

/// The clusters to watch, from the environment this process runs in.
pub fn default_clusters(choice: &ContextChoice) -> Result<Vec<ClusterConfig>, ConnectError> {
    let kubeconfig = match kubeconfig_path() {
        Some(_) => {
            Some(Kubeconfig::read().map_err(|e| ConnectError::new(format!("kubeconfig: {e}")))?)
        }
        None => None,
    };
    let in_pod = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
        && Path::new(SERVICE_ACCOUNT_TOKEN).is_file();
    choose(kubeconfig.as_ref(), in_pod, choice)
}

/// `$KUBECONFIG` when set, else ~/.kube/config when it exists.
fn kubeconfig_path() -> Option<PathBuf> {
    if let Some(paths) = std::env::var_os("KUBECONFIG").filter(|p| !p.is_empty()) {
        return Some(paths.into());
    }
    let home = PathBuf::from(std::env::var_os("HOME")?);
    Some(home.join(".kube/config")).filter(|p| p.is_file())
}

fn choose(
    kubeconfig: Option<&Kubeconfig>,
    in_pod: bool,
    choice: &ContextChoice,
) -> Result<Vec<ClusterConfig>, ConnectError> {
    let Some(kubeconfig) = kubeconfig else {
        if !choice.contexts.is_empty() || choice.all {
            return Err(ConnectError::new(
                "--context and --all-contexts need a kubeconfig ($KUBECONFIG or ~/.kube/config)",
            ));
        }
        if in_pod {
            return Ok(vec![ClusterConfig {
                name: IN_CLUSTER_NAME.into(),
                kubeconfig: None,
                context: None,
                in_cluster: true,
                labels: Default::default(),
            }]);
        }
        return Err(ConnectError::new(
            "no clusters to watch: the config lists none, there is no kubeconfig ($KUBECONFIG or \
             ~/.kube/config) and no service account token; configure clusters, or try --demo",
        ));
    };
    let known: Vec<&str> = kubeconfig
        .contexts
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    if let Some(missing) = choice
        .contexts
        .iter()
        .find(|c| !known.contains(&c.as_str()))
    {
        return Err(ConnectError::new(format!(
            "no context {missing:?} in the kubeconfig (it has: {})",
            known.join(", ")
        )));
    }
    let chosen: Vec<&str> = if choice.all {
        known
    } else if !choice.contexts.is_empty() {
        choice.contexts.iter().map(String::as_str).collect()
    } else {
        let current = kubeconfig.current_context.as_deref().ok_or_else(|| {
            ConnectError::new(
                "the kubeconfig has no current context: pass --context NAME or --all-contexts",
            )
        })?;
        vec![current]
    };
    if chosen.is_empty() {
        return Err(ConnectError::new(
            "the kubeconfig has no contexts: configure clusters or set KUBECONFIG",
        ));
    }
    Ok(chosen
        .into_iter()
        .map(|context| ClusterConfig {
            name: cluster_name(context),
            kubeconfig: None,
            context: Some(context.to_string()),
            in_cluster: false,
            labels: Default::default(),
        })
        .collect())
}

/// Context names may hold characters ids cannot (EKS: `arn:aws:eks:…/name`); those become '-'.
pub fn cluster_name(context: &str) -> String {
    context
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(current: Option<&str>) -> Kubeconfig {
        let mut text = String::from(
            "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts:\n  - {name: dev, context: {cluster: a, user: a}}\n  - {name: 'arn:aws:eks:eu-west-1:1:cluster/prod', context: {cluster: b, user: b}}\n",
        );
        if let Some(current) = current {
            text.push_str(&format!("current-context: {current}\n"));
        }
        Kubeconfig::from_yaml(&text).unwrap()
    }

    fn names(clusters: &[ClusterConfig]) -> Vec<(&str, Option<&str>, bool)> {
        clusters
            .iter()
            .map(|c| (c.name.as_str(), c.context.as_deref(), c.in_cluster))
            .collect()
    }

    #[test]
    fn a_kubeconfig_means_its_current_context_as_kubectl_does() {
        let config = kubeconfig(Some("dev"));
        let chosen = choose(Some(&config), true, &ContextChoice::default()).unwrap();
        assert_eq!(names(&chosen), [("dev", Some("dev"), false)]);
    }

    #[test]
    fn all_contexts_or_named_ones_on_request() {
        let config = kubeconfig(Some("dev"));
        let all = ContextChoice {
            all: true,
            ..ContextChoice::default()
        };
        assert_eq!(
            names(&choose(Some(&config), false, &all).unwrap()),
            [
                ("dev", Some("dev"), false),
                (
                    "arn-aws-eks-eu-west-1-1-cluster-prod",
                    Some("arn:aws:eks:eu-west-1:1:cluster/prod"),
                    false
                )
            ]
        );
        let named = ContextChoice {
            contexts: vec!["arn:aws:eks:eu-west-1:1:cluster/prod".into()],
            all: false,
        };
        assert_eq!(choose(Some(&config), false, &named).unwrap().len(), 1);
        let unknown = ContextChoice {
            contexts: vec!["prod".into()],
            all: false,
        };
        let error = choose(Some(&config), false, &unknown)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("\"prod\"") && error.contains("dev"),
            "{error}"
        );
    }

    #[test]
    fn no_current_context_asks_which() {
        let config = kubeconfig(None);
        let error = choose(Some(&config), false, &ContextChoice::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("--all-contexts"), "{error}");
    }

    #[test]
    fn a_pod_without_a_kubeconfig_watches_its_own_cluster() {
        let chosen = choose(None, true, &ContextChoice::default()).unwrap();
        assert_eq!(names(&chosen), [(IN_CLUSTER_NAME, None, true)]);
        let error = choose(None, false, &ContextChoice::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("service account token"), "{error}");
        let asked = ContextChoice {
            contexts: vec!["dev".into()],
            all: false,
        };
        assert!(choose(None, true, &asked).is_err());
    }
}
