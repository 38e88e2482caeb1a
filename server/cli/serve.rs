//! `fleetglass serve` and `fleetglass migrate`.

use crate::alerts;
use crate::config::{self, Config};
use crate::ingest::{self, LeaseKeeper, Runner, RunnerSettings};
use crate::sources::{self, kube::Collector, kube::ContextChoice};
use crate::store::Store;
use crate::web::{self, AppState, Site};
use anyhow::{Context, anyhow};
use clap::{Args, ValueEnum};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How long shutdown waits for the collector leases to be released.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Role {
    /// Collect (the clusters whose leases this process wins) and serve the web.
    All,
    /// Collect only; still serves /healthz, /readyz and /metrics.
    Collector,
    /// Serve the web from what the collectors wrote to Postgres.
    Web,
}

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
    let mut config = config::load(args.config.as_deref())?;
    if args.demo {
        sources::demo::apply_to_config(&mut config);
    } else if config.clusters.is_empty() {
        config.clusters = sources::kube::default_clusters(&ContextChoice {
            contexts: args.contexts.clone(),
            all: args.all_contexts,
        })?;
        let names: Vec<&str> = config.clusters.iter().map(|c| c.name.as_str()).collect();
        tracing::info!(clusters = ?names, "no clusters configured: watching these");
    } else if !args.contexts.is_empty() || args.all_contexts {
        return Err(anyhow!(
            "--context and --all-contexts apply only when the config lists no clusters"
        ));
    }
    let store = connect(&config).await?;
    store.migrate().await?;
    let listen = args
        .listen
        .or_else(|| config.listen.as_deref().and_then(|l| l.parse().ok()))
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080)));

    let collector = match args.role {
        Role::Web => None,
        Role::All | Role::Collector => collect(&config, &store, args.demo)?,
    };

    let state = AppState {
        store,
        site: Arc::new(Site::from_config(&config)),
    };
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let address = listener.local_addr()?;
    tracing::info!(%address, "serving");
    println!("fleetglass is serving on http://{address}/");
    // The peer address lets proxy authentication trust only the configured proxies.
    let app = web::router(state).into_make_service_with_connect_info::<SocketAddr>();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("web server failed");
    if let Some(collector) = collector
        && tokio::time::timeout(RELEASE_TIMEOUT, collector.stop())
            .await
            .is_err()
    {
        tracing::warn!("collector leases not released in time; they expire on their own");
    }
    served
}

/// Starts the sources, the runner, retention and the alerts that follow the runner's
/// evaluations. Real clusters are shared with other collectors through leases; returns the
/// collector, which releases them when stopped.
fn collect(config: &Config, store: &Store, demo: bool) -> anyhow::Result<Option<Collector>> {
    tokio::spawn(ingest::retention::run(
        store.clone(),
        config.retention.transitions,
    ));
    if demo {
        let (sender, receiver) = sources::channel();
        let (runner, latest) = Runner::new(RunnerSettings::from_config(config), store.clone());
        tokio::spawn(sources::demo::run(sender));
        tokio::spawn(runner.run(receiver));
        alerts::spawn(config, store.clone(), latest)?;
        return Ok(None);
    }
    let collector = Collector::start(config, store.clone(), LeaseKeeper::holder_id());
    alerts::spawn(config, store.clone(), collector.latest.clone())?;
    Ok(Some(collector))
}

pub async fn migrate(config_path: Option<&Path>) -> anyhow::Result<()> {
    let config = config::load(config_path)?;
    let store = connect(&config).await?;
    store.migrate().await?;
    println!("migrations applied");
    Ok(())
}

async fn connect(config: &Config) -> anyhow::Result<Store> {
    let url = config
        .database_url
        .as_ref()
        .ok_or_else(|| anyhow!("no database: set DATABASE_URL or database_url in the config"))?;
    Ok(Store::connect(url.expose()).await?)
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down");
}
