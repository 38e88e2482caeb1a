//! `fleetglass wait`: the CI gate. Blocks until version V of a domain is fully healthy on
//! every cluster in its scope (exit 0), or the timeout passes (exit 1, blockers printed).
//! Anything else — unreachable server, 4xx/5xx, bad arguments — exits 2 with one line.

use super::api_client::{ApiCall, block_on};
use crate::model::parse_go_duration;
use clap::Args;
use serde_json::Value;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct WaitArgs {
    /// Base URL of fleetglass, e.g. https://fleetglass.example.com
    #[arg(long, env = "FLEETGLASS_URL")]
    pub url: String,
    #[arg(long)]
    pub domain: String,
    /// The version to wait for, as fleetglass shows it (chart version, tag, short SHA).
    #[arg(long)]
    pub version: String,
    /// How long to wait (Go duration: 90s, 15m, 1h30m; at most 1h).
    #[arg(long, default_value = "5m")]
    pub timeout: String,
    /// API token (sent as a bearer token).
    #[arg(long, env = "FLEETGLASS_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

pub fn run(args: WaitArgs) -> ExitCode {
    match block_on(check(&args)) {
        Ok(verdict) => report(&verdict),
        Err(message) => {
            eprintln!("fleetglass wait: {message}");
            ExitCode::from(2)
        }
    }
}

async fn check(args: &WaitArgs) -> Result<Value, String> {
    let timeout = parse_go_duration(&args.timeout).map_err(|e| format!("--timeout: {e}"))?;
    let timeout = timeout
        .to_std()
        .map_err(|_| "--timeout must not be negative".to_string())?;
    ApiCall {
        base_url: &args.url,
        path: format!(
            "/api/v1/domains/{}/wait",
            crate::web::encode_component(&args.domain)
        ),
        query: vec![
            ("version", args.version.as_str()),
            ("timeout", args.timeout.as_str()),
        ],
        token: args.token.as_deref(),
        // The server answers by the timeout; allow it time to say so.
        timeout: timeout + Duration::from_secs(30),
    }
    .get()
    .await
}

fn report(verdict: &Value) -> ExitCode {
    let domain = verdict["domain"].as_str().unwrap_or("?");
    let version = verdict["version"].as_str().unwrap_or("?");
    let waited = verdict["waited"].as_str().unwrap_or("?");
    if verdict["healthy"].as_bool() == Some(true) {
        println!("{domain} {version} is fully healthy on every cluster (waited {waited})");
        return ExitCode::SUCCESS;
    }
    println!("{domain} {version} is not fully healthy after {waited}:");
    let clusters = verdict["clusters"].as_array().cloned().unwrap_or_default();
    if clusters.is_empty() {
        println!("  no cluster reports this domain");
    }
    for cluster in clusters
        .iter()
        .filter(|c| c["at_version"].as_bool() != Some(true))
    {
        println!(
            "  {}: {} at {}",
            cluster["cluster"].as_str().unwrap_or("?"),
            cluster["state"].as_str().unwrap_or("?"),
            cluster["version"].as_str().unwrap_or("no version"),
        );
        for blocker in cluster["blockers"].as_array().into_iter().flatten() {
            println!(
                "    blocked by {} ({}): {}",
                blocker["id"].as_str().unwrap_or("?"),
                blocker["state"].as_str().unwrap_or("unknown"),
                blocker["reason"].as_str().unwrap_or(""),
            );
        }
    }
    ExitCode::from(1)
}
