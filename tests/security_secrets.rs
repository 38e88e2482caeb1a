//! Secrets never leak: a real `fleetglass serve --demo` runs with a database password, a Slack
//! webhook URL carrying a secret path and an API token file; its debug logs and every page,
//! API answer, metrics scrape and error response are searched for those secrets.

use crate::common;

use common::eventually;

use fleetglass::web::{API_PATHS, PAGE_PATHS};
use sha2::{Digest, Sha256};
use sqlx::Connection;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const PASSWORD: &str = "S3cret-pg-pass-91f4e2";
const SLACK_SECRET: &str = "XoXoSlackPathSecret5b7a";
const API_TOKEN: &str = "fg-api-token-c0ffee-4242";
const DEADLINE: Duration = Duration::from_secs(120);

/// A Slack stand-in on loopback: answers every request `ok` and keeps what it received.
async fn slack_receiver() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Arc::new(Mutex::new(Vec::new()));
    let kept = received.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 64 * 1024];
                let mut read = 0;
                // Read until the headers and the announced body are in (or the peer stops).
                while let Ok(n) = socket.read(&mut buffer[read..]).await {
                    if n == 0 {
                        break;
                    }
                    read += n;
                    let text = String::from_utf8_lossy(&buffer[..read]).to_string();
                    if let Some((head, body)) = text.split_once("\r\n\r\n") {
                        let length = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if body.len() >= length {
                            kept.lock().unwrap().push(text);
                            break;
                        }
                    }
                }
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                    )
                    .await;
            });
        }
    });
    (port, received)
}

/// A role with a password and its own database on the shared server; returns its URL.
async fn database_with_password() -> String {
    let admin_url = std::env::var("DATABASE_URL").expect("DATABASE_URL (scripts/test sets it)");
    let suffix = format!(
        "{}_{}",
        std::process::id(),
        chrono::Utc::now().timestamp_micros()
    );
    let role = format!("fg_secret_{suffix}");
    let database = format!("fg_secret_db_{suffix}");
    let mut admin = sqlx::PgConnection::connect(&admin_url).await.unwrap();
    for statement in [
        format!("CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}' SUPERUSER"),
        format!("CREATE DATABASE {database} OWNER {role}"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&mut admin)
            .await
            .unwrap();
    }
    let host = admin_url
        .split_once('@')
        .and_then(|(_, rest)| rest.split('/').next())
        .expect("DATABASE_URL of the form postgres://user@host:port/db");
    format!("postgres://{role}:{PASSWORD}@{host}/{database}")
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn concrete(pattern: &str) -> String {
    pattern
        .replace("{name}", "payments")
        .replace("{cluster}", "prod-eu-1")
        .replace("{kind}", "Kustomization")
        .replace("{namespace}", "flux-system")
        .replace("{id}", "999")
}

#[tokio::test(flavor = "multi_thread")]
async fn no_secret_reaches_logs_pages_api_metrics_or_errors() {
    let database_url = database_with_password().await;
    let (slack_port, slack_received) = slack_receiver().await;
    let webhook = format!("http://127.0.0.1:{slack_port}/services/T000/B000/{SLACK_SECRET}");
    let dir = std::env::temp_dir().join(format!("fg-secrets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, format!("ci {}\n", sha256_hex(API_TOKEN))).unwrap();
    let config = dir.join("config.yaml");
    // No mode: the tokens file alone must mean tokens mode.
    std::fs::write(&config, "web:\n  auth: {}\n").unwrap();
    let log_path = dir.join("stderr.log");
    let port = common::free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .args(["serve", "--demo", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--config")
        .arg(&config)
        .env("DATABASE_URL", &database_url)
        .env("SLACK_WEBHOOK_URL", &webhook)
        .env("FLEETGLASS_API_TOKENS_FILE", &tokens)
        .env("RUST_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();

    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    eventually("/readyz", DEADLINE, async || {
        matches!(client.get(format!("{base}/readyz")).send().await, Ok(r) if r.status() == 200)
            .then_some(())
    })
    .await;
    // The secrets must actually be in use, or the search below proves nothing.
    eventually(
        "an alert posted to the Slack stand-in",
        DEADLINE,
        async || (!slack_received.lock().unwrap().is_empty()).then_some(()),
    )
    .await;
    let first_post = slack_received.lock().unwrap()[0].clone();
    assert!(
        first_post.contains(SLACK_SECRET),
        "the webhook path was used: {first_post}"
    );

    let mut uris: Vec<String> = PAGE_PATHS
        .iter()
        .chain(API_PATHS.iter())
        .map(|p| concrete(p))
        .collect();
    uris.extend(
        [
            "/metrics",
            "/healthz",
            "/readyz",
            "/no/such/page",
            "/api/v1/nope",
            "/api/v1/objects?state=bogus",
            "/api/v1/domains/payments/wait?version=1&timeout=zz",
            "/api/v1/owner",
            "/objects/x/NotAKind/y/z",
        ]
        .map(String::from),
    );
    let mut seen = Vec::new();
    for uri in &uris {
        for bearer in [Some(API_TOKEN), None, Some("wrong")] {
            let mut request = client.get(format!("{base}{uri}"));
            if let Some(token) = bearer {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.unwrap();
            let status = response.status();
            let headers = format!("{:?}", response.headers());
            let body = response.text().await.unwrap();
            if bearer == Some(API_TOKEN) && !uri.contains("nope") && !uri.contains("no/such") {
                assert_ne!(status, 401, "{uri}: the token file's token is accepted");
            }
            let open = ["/healthz", "/readyz"].contains(&uri.as_str());
            if bearer.is_none() && !open {
                assert_eq!(
                    status, 401,
                    "{uri}: anonymous, with a tokens file and no mode"
                );
            }
            seen.push((
                format!("{uri} ({status}, token {bearer:?})"),
                headers + &body,
            ));
        }
    }
    let posted = client
        .post(format!("{base}/alerts/silences"))
        .bearer_auth(API_TOKEN)
        .form(&[("csrf", "ab"), ("root_cause", "x"), ("duration", "1h")])
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 403, "a form without the CSRF pair");
    seen.push(("POST /alerts/silences".into(), posted.text().await.unwrap()));

    child.kill().unwrap();
    child.wait().unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("serving"), "the log was captured: {log:.2000}");
    seen.push(("stderr log".into(), log));

    let secrets = [
        ("database password", PASSWORD),
        ("Slack webhook path token", SLACK_SECRET),
        ("Slack webhook URL", webhook.as_str()),
        ("API token", API_TOKEN),
    ];
    for (where_, text) in &seen {
        for (what, secret) in secrets {
            assert!(!text.contains(secret), "{what} leaked in {where_}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
