//! `fleetglass serve` and `fleetglass migrate`.

use crate::alerts;
use crate::config::{self, Config};
use crate::fleet::{FleetSettings, Runner};
use crate::sources;
use crate::store::Store;
use crate::web::{self, AppState, Site};
use anyhow::{Context, anyhow};
use clap::Args;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let mut config = config::load(args.config.as_deref())?;
    if args.demo {
        sources::demo::apply_to_config(&mut config);
    }
    let store = connect(&config).await?;
    store.migrate().await?;
    let listen = args
        .listen
        .or_else(|| config.listen.as_deref().and_then(|l| l.parse().ok()))
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080)));

    let (sender, receiver) = sources::channel();
    if args.demo {
        tokio::spawn(sources::demo::run(sender));
    } else {
        return Err(anyhow!(
            "watching real clusters is not built yet: run with --demo"
        ));
    }
    let (runner, latest) = Runner::new(FleetSettings::from_config(&config), store.clone());
    tokio::spawn(runner.run(receiver));
    alerts::spawn(&config, store.clone(), latest)?;

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
    axum::serve(listener, web::router(state))
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("web server failed")
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
