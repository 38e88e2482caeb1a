//! `fleetglass impact`: before removing a stack (or a subchart of it), ask what else depends on
//! what it provides. Exit 0 when nothing does, 1 when other stacks consume something it
//! provides (listed), 2 on error — so CI can block the change.

use super::api_client::{ApiCall, block_on};
use super::output::say;
use clap::Args;
use serde_json::Value;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ImpactArgs {
    /// Base URL of fleetglass, e.g. https://fleetglass.example.com
    #[arg(long, env = "FLEETGLASS_URL")]
    pub url: String,
    /// The cluster to look on.
    #[arg(long, conflicts_with = "domain", required_unless_present = "domain")]
    pub cluster: Option<String>,
    /// Look on every cluster of this domain instead of one cluster.
    #[arg(long)]
    pub domain: Option<String>,
    /// Kind of the stack's Flux object (Kustomization or HelmRelease).
    #[arg(long)]
    pub kind: String,
    #[arg(long, default_value = "")]
    pub namespace: String,
    #[arg(long)]
    pub name: String,
    /// API token (sent as a bearer token).
    #[arg(long, env = "FLEETGLASS_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

pub fn run(args: ImpactArgs) -> ExitCode {
    let mut query = vec![
        ("kind", args.kind.as_str()),
        ("namespace", args.namespace.as_str()),
        ("name", args.name.as_str()),
    ];
    if let Some(cluster) = &args.cluster {
        query.push(("cluster", cluster));
    }
    if let Some(domain) = &args.domain {
        query.push(("domain", domain));
    }
    let call = ApiCall {
        base_url: &args.url,
        path: "/api/v1/impact".to_string(),
        query,
        token: args.token.as_deref(),
        timeout: Duration::from_secs(30),
    };
    match block_on(call.get()) {
        Ok(view) => report(&view),
        Err(message) => {
            eprintln!("fleetglass impact: {message}");
            ExitCode::from(2)
        }
    }
}

fn report(view: &Value) -> ExitCode {
    let text = |v: &Value| v.as_str().unwrap_or("?").to_string();
    let stack = format!(
        "{} {}/{}",
        text(&view["kind"]),
        text(&view["namespace"]),
        text(&view["name"])
    );
    // An answer without its count, or with clusters it could not verify, proves nothing.
    let Some(total) = view["consumers_total"].as_u64() else {
        eprintln!("fleetglass impact: the server's answer has no consumers_total");
        return ExitCode::from(2);
    };
    let unverified: Vec<String> = view["unverified"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| format!("{}: {}", text(&u["cluster"]), text(&u["reason"])))
        .collect();
    if !unverified.is_empty() {
        eprintln!(
            "fleetglass impact: cannot tell what depends on {stack}: {}",
            unverified.join("; ")
        );
        return ExitCode::from(2);
    }
    if total == 0 {
        say!("nothing else depends on what {stack} provides");
    } else {
        say!("{total} other stack(s) depend on what {stack} provides:");
    }
    for cluster in view["clusters"].as_array().into_iter().flatten() {
        for provided in cluster["provides"].as_array().into_iter().flatten() {
            say!(
                "  {}: {}",
                text(&cluster["cluster"]),
                text(&provided["object"])
            );
            for consumer in provided["consumers"].as_array().into_iter().flatten() {
                say!(
                    "    consumed by {} ({})",
                    text(&consumer["id"]),
                    text(&consumer["state"])
                );
            }
        }
        for shared in cluster["co_owned"].as_array().into_iter().flatten() {
            let others: Vec<String> = shared["also_held_by"]
                .as_array()
                .into_iter()
                .flatten()
                .map(text)
                .collect();
            say!(
                "  {}: co-owned {} (also held by {})",
                text(&cluster["cluster"]),
                text(&shared["object"]),
                others.join(", ")
            );
        }
    }
    if total == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
