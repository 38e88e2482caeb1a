//! `fleetglass serve` and `fleetglass migrate`: their flags, handed to the composition root.

use super::output::say;
use crate::app::{self, Options, Role};
use crate::config;
use crate::sources::kube::ContextChoice;
use clap::Args;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Config file (YAML): clusters, domains, thresholds, alerts.
    #[arg(long, short)]
    pub config: Option<PathBuf>,
    /// Serve the built-in demo fleet (4 simulated clusters replaying real incidents) instead of
    /// real clusters.
    #[arg(long)]
    pub demo: bool,
    /// Address to listen on [default: the config's listen, else 127.0.0.1:8080].
    #[arg(long)]
    pub listen: Option<SocketAddr>,
    /// With no clusters in the config, fleetglass watches the kubeconfig's current context
    /// ($KUBECONFIG or ~/.kube/config, as kubectl does); this watches the named contexts
    /// instead (repeatable). Without a kubeconfig, in a pod, it watches the cluster it runs in
    /// through its service account.
    #[arg(long = "context", value_name = "NAME")]
    pub contexts: Vec<String>,
    /// With no clusters in the config, watch every context of the kubeconfig.
    #[arg(long, conflicts_with = "contexts")]
    pub all_contexts: bool,
    /// What this process does. Several collectors sharing one Postgres split the clusters
    /// between them with leases.
    #[arg(long, value_enum, default_value_t = Role::All)]
    pub role: Role,
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    app::serve(Options {
        config: args.config,
        demo: args.demo,
        listen: args.listen,
        contexts: ContextChoice {
            contexts: args.contexts,
            all: args.all_contexts,
        },
        role: args.role,
    })
    .await
}

pub async fn migrate(config_path: Option<&Path>) -> anyhow::Result<()> {
    let config = config::load(config_path)?;
    let store = app::open_store(&config).await?;
    store.migrate().await?;
    say!("migrations applied");
    Ok(())
}
