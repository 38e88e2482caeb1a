//! The `fleetglass serve` process: the config and the source it collects from, the store, the
//! collector with the alerts that follow it, the web, and the order they stop in.

use super::{Collector, Source};
use crate::alerts;
use crate::config::{self, Config};
use crate::ingest::LeaseKeeper;
use crate::sources::actions::Actuator;
use crate::sources::logs::PodLogs;
use crate::sources::{self, kube::ContextChoice};
use crate::store::Store;
use crate::web::{self, AppState, ConnectionLimits, CsrfKey, Site};
use anyhow::{Context, anyhow};
use clap::ValueEnum;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How long shutdown waits for the collector's last write and the release of its leases.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Role {
    /// Collect (the clusters whose leases this process wins) and serve the web.
    All,
    /// Collect only; still serves /healthz, /readyz and /metrics.
    Collector,
    /// Serve the web from what the collectors wrote to Postgres.
    Web,
}

/// What `fleetglass serve` was asked for.
#[derive(Debug)]
pub struct Options {
    pub config: Option<PathBuf>,
    pub demo: bool,
    pub listen: Option<SocketAddr>,
    pub contexts: ContextChoice,
    pub role: Role,
}

/// Runs until SIGINT or SIGTERM: stops taking requests, then stops the collector (its last
/// write, then its leases released), then the alerts (the last evaluation decided, the send in
/// flight finished).
pub async fn serve(options: Options) -> anyhow::Result<()> {
    let (config, source) = configure(&options)?;
    let csrf_key = csrf_key(&config)?;
    let store = open_store(&config).await?;
    store.migrate().await?;
    if options.demo {
        let history = sources::demo::history::generate(chrono::Utc::now());
        if store.seed_history(&history).await? {
            tracing::info!(
                days = sources::demo::history::DAYS,
                "generated the demo's delivery history"
            );
        }
    }
    let listen = options
        .listen
        .or_else(|| config.listen.as_deref().and_then(|l| l.parse().ok()))
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080)));

    let collector = match options.role {
        Role::Web => None,
        Role::All | Role::Collector => {
            let collector =
                Collector::start(&config, store.clone(), source, LeaseKeeper::holder_id());
            let alerts = alerts::start(&config, store.clone(), collector.latest.clone())?;
            Some((collector, alerts))
        }
    };

    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let address = listener.local_addr()?;
    let site = Site::from_config(&config).listening_on(address);
    if web::record_policy(&store, &site).await? {
        tracing::info!(policy = %site.policy(), "the access policy changed: recorded in the audit trail");
    }
    warn_about_exposure(&site, address);
    let mut state = AppState::new(store, site)
        .with_csrf_key(csrf_key)
        .with_oidc()
        .map_err(|problem| anyhow!("web.auth.oidc: {problem}"))?;
    if options.demo {
        state = state.with_pod_logs(PodLogs::Demo);
    } else if config.web.pod_logs {
        let clusters = config.clusters.iter().map(|c| (c.name.clone(), c.clone()));
        state = state.with_pod_logs(PodLogs::Kube(clusters.collect()));
    }
    if !options.demo {
        state = state.with_actions(Actuator::new(config.clusters.iter().cloned()));
    }
    if let Some((collector, _)) = &collector {
        state = state.with_evaluations(collector.latest.clone());
    }
    tracing::info!(%address, "serving");
    println!("fleetglass is serving on http://{address}/");
    let limits = &config.web.limits;
    let limits = ConnectionLimits {
        max_connections: limits.max_connections,
        max_connections_per_client: limits
            .max_connections_per_client
            .min(limits.max_connections),
        header_timeout: limits.header_timeout.to_std()?,
        body_timeout: limits.body_timeout.to_std()?,
    };
    let gauges = tokio::spawn(dora_gauges(state.store.clone(), state.site.clone()));
    let waits = state.waits.clone();
    let shutdown = async move {
        shutdown_signal().await;
        // Long-poll waits answer now (503, Retry-After), inside the drain, not cut off by it.
        waits.close();
    };
    web::serve(listener, web::router(state), limits, shutdown).await;
    gauges.abort();
    if let Some((collector, alerts)) = collector {
        if tokio::time::timeout(STOP_TIMEOUT, collector.stop())
            .await
            .is_err()
        {
            tracing::warn!("collector leases not released in time; they expire on their own");
        }
        if tokio::time::timeout(STOP_TIMEOUT, alerts.stop())
            .await
            .is_err()
        {
            tracing::warn!(
                "alerts not stopped in time; the next process decides the last changes and sends what is pending"
            );
        }
    }
    Ok(())
}

/// Keeps the DORA gauges of `/metrics` current.
async fn dora_gauges(store: Store, site: std::sync::Arc<Site>) {
    let mut tick = tokio::time::interval(web::DORA_GAUGES_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        web::refresh_dora_gauges(&store, &site).await;
    }
}

/// The config with the clusters to watch filled in, and the source that collects them.
fn configure(options: &Options) -> anyhow::Result<(Config, Source)> {
    let mut config = config::load(options.config.as_deref())?;
    let choosing_contexts = !options.contexts.contexts.is_empty() || options.contexts.all;
    if options.demo {
        sources::demo::apply_to_config(&mut config);
        return Ok((config, Source::Demo));
    }
    if config.clusters.is_empty() {
        config.clusters = sources::kube::default_clusters(&options.contexts)?;
        let names: Vec<&str> = config.clusters.iter().map(|c| c.name.as_str()).collect();
        tracing::info!(clusters = ?names, "no clusters configured: watching these");
    } else if choosing_contexts {
        return Err(anyhow!(
            "--context and --all-contexts apply only when the config lists no clusters"
        ));
    }
    Ok((config, Source::Kube))
}

/// Connects to the config's database (not migrating it).
pub async fn open_store(config: &Config) -> anyhow::Result<Store> {
    let url = config
        .database_url
        .as_ref()
        .ok_or_else(|| anyhow!("no database: set DATABASE_URL or database_url in the config"))?;
    Ok(Store::connect(url.expose()).await?)
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

/// The key that signs form tokens and sign-ins: `FLEETGLASS_WEB_SECRET`, else
/// `web.secret_file`, else a fresh one (then forms and sign-ins from before a restart, or from
/// another replica, are refused). A configured secret that is empty or short stops the start.
fn csrf_key(config: &Config) -> anyhow::Result<CsrfKey> {
    if let Some(secret) = std::env::var_os("FLEETGLASS_WEB_SECRET") {
        return CsrfKey::from_secret(secret.as_encoded_bytes())
            .map_err(|problem| anyhow!("FLEETGLASS_WEB_SECRET {problem}"));
    }
    if let Some(path) = &config.web.secret_file {
        let secret = std::fs::read(path)
            .with_context(|| format!("web.secret_file: cannot read {}", path.display()))?;
        return CsrfKey::from_secret(&secret)
            .map_err(|problem| anyhow!("web.secret_file {} {problem}", path.display()));
    }
    if config.web.auth.identifies() {
        tracing::info!(
            "no FLEETGLASS_WEB_SECRET or web.secret_file: form tokens are signed with a key made at start (several web replicas must share one)"
        );
    }
    Ok(CsrfKey::generate())
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
