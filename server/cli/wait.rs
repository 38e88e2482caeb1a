//! `fleetglass wait`: the CI gate. Blocks until version V of a domain is fully healthy on
//! every cluster in its scope (exit 0), or the timeout passes (exit 1, blockers printed).
//! Anything else — unreachable server, 4xx/5xx, bad arguments — exits 2 with one line.
//!
//! It asks the server in short waits (at most [`SERVER_WAIT`] each), so an ingress or proxy
//! that cuts requests at 60 s never ends a long wait, and it asks again after a gateway
//! error (502, 504), a busy server (503, after its Retry-After) or a lost connection, until
//! the timeout. Its first question asks for the state now, so the first lines print at once;
//! then it prints a line whenever a cluster's state or version changes.

use super::api_client::{ApiCall, CallError, block_on};
use super::output::say;
use crate::model::parse_go_duration;
use clap::{Args, ValueEnum};
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Longest single wait asked of the server: below the 60 s most proxies allow a request.
const SERVER_WAIT: Duration = Duration::from_secs(25);
/// First pause after a failed request; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(500);
const MAX_PAUSE: Duration = Duration::from_secs(10);

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
    /// How long to wait (Go duration: 90s, 15m, 1h30m).
    #[arg(long, default_value = "5m")]
    pub timeout: String,
    /// Only the clusters with this label count, e.g. ring=prod (gate one ring).
    #[arg(long)]
    pub label: Option<String>,
    /// text: progress lines and a summary; json: the final report as JSON on stdout
    /// (progress on stderr).
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    pub output: Output,
    /// API token (sent as a bearer token).
    #[arg(long, env = "FLEETGLASS_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Exit 1 as soon as the version has failed on any cluster in scope (it runs there, or
    /// was attempted there, and the domain is failed or degraded), instead of waiting out the
    /// timeout.
    #[arg(long)]
    pub fail_fast: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Text,
    Json,
}

pub fn run(args: WaitArgs) -> ExitCode {
    match block_on(wait(&args)) {
        Ok(verdict) => report(&verdict, &args),
        Err(message) => {
            eprintln!("fleetglass wait: {message}");
            ExitCode::from(2)
        }
    }
}

/// Asks until the version is healthy or the timeout passes; the last verdict, or the error
/// that left no verdict at all.
async fn wait(args: &WaitArgs) -> Result<Value, String> {
    let timeout = parse_go_duration(&args.timeout).map_err(|e| format!("--timeout: {e}"))?;
    let timeout = timeout
        .to_std()
        .map_err(|_| "--timeout must not be negative".to_string())?;
    if let Some(label) = &args.label
        && label
            .split_once('=')
            .is_none_or(|(k, v)| k.is_empty() || v.is_empty())
    {
        return Err(format!(
            "--label {label:?} must be written key=value, e.g. ring=prod"
        ));
    }
    let started = Instant::now();
    let deadline = started + timeout;
    let mut progress = Progress::new(args, started);
    let mut last: Option<Value> = None;
    // Reported when no answer came at all: the cause, not just "timed out".
    let mut last_error = "no answer before the timeout".to_string();
    let mut pause = FIRST_PAUSE;
    // The state now first (the server answers at once), then waits for it to change.
    let mut server_wait = Duration::ZERO;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match ask(args, left.min(server_wait)).await {
            Ok(verdict) => {
                pause = FIRST_PAUSE;
                server_wait = SERVER_WAIT;
                progress.saw(&verdict);
                let healthy = verdict["healthy"].as_bool() == Some(true);
                let failed = args.fail_fast && !failed_on(&verdict).is_empty();
                last = Some(verdict);
                if healthy || failed {
                    break;
                }
            }
            Err(error) if error.transient => {
                let wait = error.retry_after.unwrap_or(pause).min(MAX_PAUSE);
                progress.line(&format!("{}; asking again in {:.0?}", error.message, wait));
                let left = deadline.saturating_duration_since(Instant::now());
                tokio::time::sleep(wait.min(left)).await;
                pause = (pause * 2).min(MAX_PAUSE);
                last_error = error.message;
            }
            Err(error) => return Err(error.message),
        }
        if Instant::now() >= deadline {
            break;
        }
    }
    last.map(|v| with_waited(v, started)).ok_or(last_error)
}

async fn ask(args: &WaitArgs, server_wait: Duration) -> Result<Value, CallError> {
    let seconds = format!("{}s", server_wait.as_secs());
    let mut query = vec![
        ("version", args.version.as_str()),
        ("timeout", seconds.as_str()),
    ];
    if let Some(label) = &args.label {
        query.push(("label", label.as_str()));
    }
    if args.fail_fast {
        // The server answers as soon as the version fails, not at the end of its wait.
        query.push(("fail_fast", "true"));
    }
    ApiCall {
        base_url: &args.url,
        path: format!(
            "/api/v1/domains/{}/wait",
            crate::web::encode_component(&args.domain)
        ),
        query,
        token: args.token.as_deref(),
        // The server answers by its wait; allow it time to say so.
        timeout: server_wait + Duration::from_secs(15),
    }
    .send()
    .await
}

/// The clusters where the version has failed, as the server judged them (`failed_on`).
fn failed_on(verdict: &Value) -> Vec<String> {
    let clusters = verdict["failed_on"].as_array().into_iter().flatten();
    clusters
        .filter_map(|c| c.as_str().map(String::from))
        .collect()
}

/// The whole wait's duration in the report, not the last request's.
fn with_waited(mut verdict: Value, started: Instant) -> Value {
    verdict["waited"] = format!("{:.1}s", started.elapsed().as_secs_f64()).into();
    verdict
}

/// Progress lines: one per cluster whose state, version or verdict changed since the last
/// answer, and a note while no cluster reports the version at all.
struct Progress {
    started: Instant,
    to_stderr: bool,
    /// The version waited for.
    version: String,
    domain: String,
    seen: BTreeMap<String, String>,
    said_nobody_has_it: bool,
    said_eta: Option<String>,
}

impl Progress {
    fn new(args: &WaitArgs, started: Instant) -> Progress {
        Progress {
            started,
            to_stderr: args.output == Output::Json,
            version: args.version.clone(),
            domain: args.domain.clone(),
            seen: BTreeMap::new(),
            said_nobody_has_it: false,
            said_eta: None,
        }
    }

    fn line(&self, text: &str) {
        let line = format!("[{:>4}s] {text}", self.started.elapsed().as_secs());
        if self.to_stderr {
            eprintln!("{line}");
        } else {
            say!("{line}");
        }
    }

    fn saw(&mut self, verdict: &Value) {
        let clusters = verdict["clusters"].as_array().cloned().unwrap_or_default();
        let anybody_has_it = clusters
            .iter()
            .any(|c| c["version"].as_str() == Some(self.version.as_str()));
        if !anybody_has_it && !self.said_nobody_has_it {
            self.line(&format!(
                "no cluster reports {} {} yet",
                self.domain, self.version
            ));
        }
        self.said_nobody_has_it = !anybody_has_it;
        for cluster in &clusters {
            let name = cluster["cluster"].as_str().unwrap_or("?").to_string();
            let now = cluster_line(cluster, &self.version);
            if self.seen.get(&name) != Some(&now) {
                self.line(&format!("{name}: {now}"));
                self.seen.insert(name, now);
            }
        }
        if let Some(eta) = eta_line(verdict)
            && self.said_eta.as_ref() != Some(&eta)
        {
            self.line(&eta);
            self.said_eta = Some(eta);
        }
    }
}

/// "expected fully healthy by 14:05 UTC (from past rollouts); slower than usual: prod-3",
/// while the verdict carries an estimate.
fn eta_line(verdict: &Value) -> Option<String> {
    let slow: Vec<&str> = verdict["slower_than_usual"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let eta = verdict["eta"]
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| {
            let t = t.with_timezone(&chrono::Utc);
            format!(
                "expected fully healthy by {} (from past rollouts)",
                t.format("%Y-%m-%d %H:%M UTC")
            )
        });
    let slow = (!slow.is_empty()).then(|| format!("slower than usual: {}", slow.join(", ")));
    match (eta, slow) {
        (None, None) => None,
        (Some(eta), None) => Some(eta),
        (None, Some(slow)) => Some(slow),
        (Some(eta), Some(slow)) => Some(format!("{eta}; {slow}")),
    }
}

/// "v3.1.9", or "v3.1.9 → v3.2.0" while v3.2.0 is offered and not applied yet.
fn versions(cluster: &Value) -> String {
    crate::web::version_text(cluster["version"].as_str(), cluster["offered"].as_str())
}

/// "healthy at 2.13.0, waiting for 2.14.0": where the cluster is and what it still lacks.
fn cluster_line(cluster: &Value, wanted: &str) -> String {
    let state = cluster["state"].as_str().unwrap_or("?");
    let version = versions(cluster);
    if cluster["at_version"].as_bool() == Some(true) {
        format!("{state} at {version}, done")
    } else if cluster["version"].as_str() == Some(wanted) {
        format!("{state} at {version}, waiting for it to be fully healthy")
    } else {
        format!("{state} at {version}, waiting for {wanted}")
    }
}

/// "every cluster", or "every cluster with ring=prod" when one ring is gated.
fn scope(label: Option<&str>) -> String {
    match label {
        Some(label) => format!("every cluster with {label}"),
        None => "every cluster".to_string(),
    }
}

fn report(verdict: &Value, args: &WaitArgs) -> ExitCode {
    let healthy = verdict["healthy"].as_bool() == Some(true);
    let code = if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    if args.output == Output::Json {
        say!(
            "{}",
            serde_json::to_string_pretty(verdict).unwrap_or_default()
        );
        return code;
    }
    let domain = verdict["domain"].as_str().unwrap_or("?");
    let version = verdict["version"].as_str().unwrap_or("?");
    let waited = verdict["waited"].as_str().unwrap_or("?");
    let scope = scope(args.label.as_deref());
    if healthy {
        say!("{domain} {version} is fully healthy on {scope} (waited {waited})");
        return code;
    }
    let failed = failed_on(verdict);
    if args.fail_fast && !failed.is_empty() {
        say!(
            "{domain} {version} failed on {} (--fail-fast, after {waited}):",
            failed.join(", ")
        );
    } else {
        say!("{domain} {version} is not fully healthy on {scope} after {waited}:");
    }
    if let Some(eta) = eta_line(verdict) {
        say!("  {eta}");
    }
    let clusters = verdict["clusters"].as_array().cloned().unwrap_or_default();
    if clusters.is_empty() {
        say!("  no cluster reports this domain");
    }
    for cluster in clusters
        .iter()
        .filter(|c| c["at_version"].as_bool() != Some(true))
    {
        say!(
            "  {}: {}",
            cluster["cluster"].as_str().unwrap_or("?"),
            cluster_line(cluster, version),
        );
        for blocker in cluster["blockers"].as_array().into_iter().flatten() {
            say!(
                "    blocked by {} ({}): {}",
                blocker["id"].as_str().unwrap_or("?"),
                blocker["state"].as_str().unwrap_or("unknown"),
                blocker["reason"].as_str().unwrap_or(""),
            );
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_line_says_when_and_who_is_slow() {
        let verdict = serde_json::json!({
            "eta": "2026-12-07T14:05:00Z",
            "slower_than_usual": ["prod-3", "prod-4"],
        });
        assert_eq!(
            eta_line(&verdict).as_deref(),
            Some(
                "expected fully healthy by 2026-12-07 14:05 UTC (from past rollouts); slower than usual: prod-3, prod-4"
            )
        );
        let only_eta = serde_json::json!({"eta": "2026-12-07T14:05:00Z", "slower_than_usual": []});
        assert_eq!(
            eta_line(&only_eta).as_deref(),
            Some("expected fully healthy by 2026-12-07 14:05 UTC (from past rollouts)")
        );
        let none = serde_json::json!({"eta": null, "slower_than_usual": []});
        assert_eq!(eta_line(&none), None);
        let only_slow = serde_json::json!({"eta": null, "slower_than_usual": ["prod-3"]});
        assert_eq!(
            eta_line(&only_slow).as_deref(),
            Some("slower than usual: prod-3")
        );
    }
}
