//! The command line: `serve`, `migrate`, `evaluate`. Errors print one line and set the exit
//! code; nothing here panics on bad input.

mod api_client;
mod cluster_add;
mod evaluate;
mod impact;
mod output;
mod phase_timings;
mod serve;
mod sessions;
mod wait;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "fleetglass",
    version,
    about = "A truthful status board for Flux fleets: is version X of this domain deployed and healthy everywhere?",
    long_about = None
)]
pub struct Cli {
    /// Log as JSON lines instead of text (levels from RUST_LOG, default info).
    #[arg(long, global = true)]
    pub log_json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the collector and the web server in one process.
    ///
    /// Watches the configured clusters (none configured: the kubeconfig's current context, or
    /// in a pod the cluster it runs in; the demo fleet with --demo), keeps state and history in
    /// Postgres (DATABASE_URL or database_url in the config) and serves the dashboard, the JSON
    /// API, /metrics and /healthz, /readyz.
    Serve(serve::ServeArgs),
    /// Evaluate Kubernetes objects from files (or - for stdin) and print the verdicts as JSON.
    ///
    /// Every Flux object and controller Deployment gets a state (healthy, progressing, stuck,
    /// stale, failed, blocked, degraded, unverifiable, suspended), a reason, and its root causes.
    /// Exit 0 when evaluated (whatever the states), 2 when the input cannot be read.
    Evaluate(evaluate::EvaluateArgs),
    /// Apply the database migrations and exit.
    Migrate {
        /// Config file (YAML); DATABASE_URL in the environment overrides its database_url.
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
    /// CI gate: wait until version V of a domain is fully healthy on every cluster.
    ///
    /// Exits 0 when it is, 1 (printing the blockers) when the timeout passes first, and 2 on
    /// any error (server unreachable, 4xx/5xx, bad arguments).
    Wait(wait::WaitArgs),
    /// Before removing a stack: list the other stacks that consume what it provides (CRDs,
    /// Namespaces), on one cluster or every cluster of a domain.
    ///
    /// Exit 0 when nothing depends on it, 1 when something does (listed), 2 on error.
    Impact(impact::ImpactArgs),
    /// Single sign-on sessions: list the live ones, revoke a person's.
    Sessions(sessions::SessionsArgs),
    /// Hub and spoke: give fleetglass read-only access to another cluster.
    #[command(subcommand)]
    Cluster(ClusterCommand),
}

#[derive(Subcommand, Debug)]
pub enum ClusterCommand {
    /// Create the read-only ServiceAccount and RBAC of the fleetglass-reader chart on the
    /// context's cluster and a token for it (TokenRequest, --token-ttl), then write the hub's
    /// kubeconfig Secret manifest and print the config entry for it.
    Add(cluster_add::AddArgs),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_json);
    match cli.command {
        Command::Evaluate(args) => evaluate::run(args),
        Command::Wait(args) => wait::run(args),
        Command::Impact(args) => impact::run(args),
        Command::Serve(args) => block_on(serve::run(args)),
        Command::Cluster(ClusterCommand::Add(args)) => block_on(cluster_add::run(args)),
        Command::Sessions(args) => block_on(sessions::run(args)),
        Command::Migrate { config } => {
            block_on(async move { serve::migrate(config.as_deref()).await })
        }
    }
}

/// Runs an async command on a fresh runtime and turns its error into one line.
fn block_on(command: impl Future<Output = anyhow::Result<()>>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    match runtime.block_on(command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&format!("{e:#}")),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("fleetglass: {message}");
    ExitCode::FAILURE
}

fn init_logging(json: bool) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,kube=warn,tower_http=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}
