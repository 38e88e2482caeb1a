//! `fleetglass cluster add CONTEXT`: gives fleetglass read-only access to the cluster of a
//! kubeconfig context — the fleetglass-reader identity created there and a token for it — and
//! writes what the hub needs: a Secret manifest holding a kubeconfig for that identity, and the
//! config entry naming it.

use super::output::say;
mod identity;

use anyhow::{Context, anyhow};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use clap::Args;
use identity::Identity;
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct AddArgs {
    /// The kubeconfig context of the cluster to add (used with its own, admin, credentials
    /// only to create the read-only identity).
    pub context: String,
    /// Kubeconfig file [default: $KUBECONFIG, else ~/.kube/config].
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// The cluster's name in fleetglass [default: the context's name].
    #[arg(long)]
    pub name: Option<String>,
    /// Namespace of the read-only ServiceAccount on the added cluster.
    #[arg(long, default_value = "fleetglass")]
    pub namespace: String,
    /// Name of the read-only ServiceAccount (as the fleetglass-reader chart's release name).
    #[arg(long, default_value = "fleetglass-reader")]
    pub service_account: String,
    /// The API server URL fleetglass reaches the cluster at [default: the kubeconfig's].
    #[arg(long)]
    pub server: Option<String>,
    /// How long the token is valid (TokenRequest); add the cluster again before it expires.
    #[arg(long, default_value = "8760h")]
    pub token_ttl: String,
    /// Namespace of the hub's kubeconfig Secret (where the fleetglass chart is installed).
    #[arg(long, default_value = "fleetglass")]
    pub hub_namespace: String,
    /// Where the chart mounts kubeconfig Secrets (its kubeconfigs.mountPath).
    #[arg(long, default_value = "/etc/fleetglass/kubeconfigs")]
    pub mount_path: String,
    /// Directory the Secret manifest is written to.
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
}

pub async fn run(args: AddArgs) -> anyhow::Result<()> {
    let kubeconfig = match &args.kubeconfig {
        Some(path) => Kubeconfig::read_from(path),
        None => Kubeconfig::read(),
    }
    .context("cannot read the kubeconfig")?;
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| crate::sources::kube::cluster_name(&args.context));
    let ttl = crate::model::parse_go_duration(&args.token_ttl)
        .map_err(|e| anyhow!("--token-ttl: {e}"))?;
    let options = KubeConfigOptions {
        context: Some(args.context.clone()),
        ..KubeConfigOptions::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig.clone(), &options)
        .await
        .with_context(|| format!("kubeconfig context {:?}", args.context))?;
    let client = kube::Client::try_from(config).context("cannot build a client")?;
    let identity = Identity {
        namespace: args.namespace.clone(),
        service_account: args.service_account.clone(),
    };
    identity
        .apply(&client)
        .await
        .with_context(|| format!("cannot create the read-only identity on {:?}", args.context))?;
    let token = identity
        .token(&client, ttl.num_seconds())
        .await
        .context("cannot get a token (TokenRequest)")?;
    let status = token
        .status
        .ok_or_else(|| anyhow!("the API server returned no token"))?;
    let token_text = status
        .token
        .ok_or_else(|| anyhow!("the API server returned no token"))?;
    let expires = status
        .expiration_timestamp
        .map_or_else(|| "(no expiry given)".to_string(), |t| t.0.to_string());
    let cluster = cluster_entry(&kubeconfig, &args)?;
    let secret_name = format!("fleetglass-kubeconfig-{name}");
    let manifest = secret_manifest(&args, &name, &secret_name, &cluster, &token_text, &expires);
    let path = args.out.join(format!("{secret_name}.yaml"));
    write_private(&path, &manifest)?;
    say!(
        "{context}: ServiceAccount {ns}/{sa} bound to ClusterRole {role} (get/list/watch only); token valid until {expires}",
        context = args.context,
        ns = identity.namespace,
        sa = identity.service_account,
        role = identity.cluster_role(),
    );
    say!(
        "wrote {} (holds the token): kubectl apply -f it in the hub's namespace {}",
        path.display(),
        args.hub_namespace
    );
    say!(
        "\nthen, in the fleetglass chart's values:\n\nkubeconfigs:\n  existingSecrets: [{secret_name}]   # with the others\nconfig:\n  clusters:\n    - name: {name}\n      kubeconfig: {}/{name}.yaml\n      labels: {{}}\n",
        args.mount_path.trim_end_matches('/')
    );
    Ok(())
}

/// The context's cluster entry, with its CA embedded so the kubeconfig stands alone.
fn cluster_entry(kubeconfig: &Kubeconfig, args: &AddArgs) -> anyhow::Result<serde_json::Value> {
    let context = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == args.context)
        .and_then(|c| c.context.as_ref())
        .ok_or_else(|| anyhow!("no context {:?} in the kubeconfig", args.context))?;
    let cluster = kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)
        .and_then(|c| c.cluster.as_ref())
        .ok_or_else(|| anyhow!("the kubeconfig has no cluster {:?}", context.cluster))?;
    let server = args
        .server
        .clone()
        .or_else(|| cluster.server.clone())
        .ok_or_else(|| anyhow!("the cluster {:?} has no server URL", context.cluster))?;
    let mut entry = json!({"server": server});
    if let Some(data) = &cluster.certificate_authority_data {
        entry["certificate-authority-data"] = data.clone().into();
    } else if let Some(file) = &cluster.certificate_authority {
        let pem = std::fs::read(file).with_context(|| format!("cannot read the CA {file}"))?;
        entry["certificate-authority-data"] = BASE64.encode(pem).into();
    }
    if cluster.insecure_skip_tls_verify == Some(true) {
        entry["insecure-skip-tls-verify"] = true.into();
    }
    Ok(entry)
}

fn secret_manifest(
    args: &AddArgs,
    name: &str,
    secret_name: &str,
    cluster: &serde_json::Value,
    token: &str,
    expires: &str,
) -> String {
    let user = format!("{}-{}", args.service_account, name);
    let kubeconfig = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": user}}],
        "current-context": name,
    });
    // JSON is YAML: the kubeconfig goes in a block scalar as it is.
    let body = serde_json::to_string_pretty(&kubeconfig).expect("JSON");
    let indented: Vec<String> = body.lines().map(|l| format!("    {l}")).collect();
    format!(
        "# fleetglass's read-only access to {context} (ServiceAccount {ns}/{sa}).\n\
         # The token expires {expires}: run `fleetglass cluster add {context}` again before then.\n\
         apiVersion: v1\nkind: Secret\nmetadata:\n  name: {secret_name}\n  namespace: {hub}\n  \
         labels:\n    app.kubernetes.io/part-of: fleetglass\ntype: Opaque\nstringData:\n  {name}.yaml: |\n{}\n",
        indented.join("\n"),
        context = args.context,
        ns = args.namespace,
        sa = args.service_account,
        hub = args.hub_namespace,
    )
}

/// Writes a file only its owner can read: it holds a token.
fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}
