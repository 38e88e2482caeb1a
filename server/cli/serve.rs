//! `fleetglass serve` and `fleetglass migrate`.

use crate::alerts;
use crate::config::{self, Config};
use crate::ingest::{self, LeaseKeeper, Runner, RunnerSettings};
use crate::sources::{self, kube::Collector, kube::ContextChoice};
use crate::store::Store;
use crate::web::{self, AppState, ConnectionLimits, CsrfKey, Site};
use anyhow::{Context, anyhow};
use clap::{Args, ValueEnum};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
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

    let csrf_key = csrf_key(&config)?;
    let (collector, latest) = match args.role {
        Role::Web => (None, None),
        Role::All | Role::Collector => {
            let (collector, latest) = collect(&config, &store, args.demo)?;
            (collector, Some(latest))
        }
    };

    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let address = listener.local_addr()?;
    let site = Site::from_config(&config).listening_on(address);
    warn_about_exposure(&site, address);
    let mut state = AppState::new(store, site).with_csrf_key(csrf_key);
    if let Some(latest) = latest {
        state = state.with_evaluations(latest);
    }
    tracing::info!(%address, "serving");
    println!("fleetglass is serving on http://{address}/");
    let limits = &config.web.limits;
    let limits = ConnectionLimits {
        max_connections: limits.max_connections,
        header_timeout: limits.header_timeout.to_std()?,
    };
    web::serve(listener, web::router(state), limits, shutdown_signal()).await;
    if let Some(collector) = collector
        && tokio::time::timeout(RELEASE_TIMEOUT, collector.stop())
            .await
            .is_err()
    {
        tracing::warn!("collector leases not released in time; they expire on their own");
    }
    Ok(())
}

/// Says at start what the configuration leaves open, so nobody learns it from an incident.
fn warn_about_exposure(site: &Site, address: SocketAddr) {
    if site.open_to_the_network() {
        tracing::warn!(
            %address,
            "no authentication (web.auth) while listening on a non-loopback address: anyone who can reach it reads everything (writes are refused)"
        );
    }
    if !site.hosts.checks_names() {
        tracing::warn!(
            "public_url is not set and the listener is not on loopback: Host names cannot be checked (DNS rebinding); set public_url"
        );
    }
}

/// The key that signs form tokens: `FLEETGLASS_WEB_SECRET`, else `web.secret_file`, else a
/// fresh one (then forms from before a restart, or from another replica, are refused).
fn csrf_key(config: &Config) -> anyhow::Result<CsrfKey> {
    if let Ok(secret) = std::env::var("FLEETGLASS_WEB_SECRET")
        && !secret.is_empty()
    {
        return Ok(CsrfKey::from_secret(secret.as_bytes()));
    }
    if let Some(path) = &config.web.secret_file {
        let secret = std::fs::read(path)
            .with_context(|| format!("web.secret_file: cannot read {}", path.display()))?;
        return Ok(CsrfKey::from_secret(&secret));
    }
    if config.web.auth.identifies() {
        tracing::info!(
            "no FLEETGLASS_WEB_SECRET or web.secret_file: form tokens are signed with a key made at start (several web replicas must share one)"
        );
    }
    Ok(CsrfKey::generate())
}

/// Starts the sources, the runner, retention and the alerts that follow the runner's
/// evaluations. Real clusters are shared with other collectors through leases; returns the
/// collector, which releases them when stopped, and the runner's evaluations.
fn collect(
    config: &Config,
    store: &Store,
    demo: bool,
) -> anyhow::Result<(Option<Collector>, ingest::Latest)> {
    tokio::spawn(ingest::retention::run(
        store.clone(),
        config.retention.transitions,
    ));
    if demo {
        let (sender, receiver) = sources::channel();
        let (runner, latest) = Runner::new(RunnerSettings::from_config(config), store.clone());
        tokio::spawn(sources::demo::run(sender));
        tokio::spawn(runner.run(receiver));
        alerts::spawn(config, store.clone(), latest.clone())?;
        return Ok((None, latest));
    }
    let collector = Collector::start(config, store.clone(), LeaseKeeper::holder_id());
    let latest = collector.latest.clone();
    alerts::spawn(config, store.clone(), latest.clone())?;
    Ok((Some(collector), latest))
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
