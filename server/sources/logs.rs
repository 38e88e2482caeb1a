//! A crashing container's last words, read on demand for its object page: the previous run's
//! log (`pods/log?previous=true`), its last lines only, bounded in bytes and time, with what
//! looks like a secret redacted. From the cluster's API (needs `get` on `pods/log`, which the
//! reader chart grants only when asked) or, for the demo fleet, from the demo's scenario.

use crate::config::ClusterConfig;
use std::collections::BTreeMap;
use std::time::Duration;

/// Lines asked for, at most.
pub const LINES: i64 = 50;
/// Bytes asked for, at most (a line can be a whole stack trace).
pub const BYTES: i64 = 16 * 1024;
/// How long the API server (and the kubelet behind it) may take.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// Where container logs come from.
pub enum PodLogs {
    Demo,
    Kube(BTreeMap<String, ClusterConfig>),
}

/// Why no lines could be shown, in words for the page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    #[error(
        "fleetglass may not read logs on {cluster} (pods/log is forbidden): grant it with the fleetglass-reader chart's podLogs: true"
    )]
    Forbidden { cluster: String },
    #[error("no cluster named {0:?}")]
    UnknownCluster(String),
    #[error("{cluster} did not answer within {seconds} s", seconds = TIMEOUT.as_secs())]
    TimedOut { cluster: String },
    #[error("{cluster}: {problem}")]
    Failed { cluster: String, problem: String },
}

impl PodLogs {
    /// The last lines of `container`'s previous run in `namespace/pod` on `cluster`, redacted.
    pub async fn previous(
        &self,
        cluster: &str,
        namespace: &str,
        pod: &str,
        container: &str,
    ) -> Result<String, LogError> {
        let text = match self {
            PodLogs::Demo => super::demo::previous_log(cluster, namespace, pod, container)
                .ok_or_else(|| LogError::UnknownCluster(cluster.to_string()))?,
            PodLogs::Kube(clusters) => {
                let target = clusters
                    .get(cluster)
                    .ok_or_else(|| LogError::UnknownCluster(cluster.to_string()))?;
                let read = super::kube::previous_log(target, namespace, pod, container);
                tokio::time::timeout(TIMEOUT, read)
                    .await
                    .map_err(|_| LogError::TimedOut {
                        cluster: cluster.to_string(),
                    })??
            }
        };
        Ok(redacted(&last_lines(&text)))
    }
}

/// At most [`LINES`] lines and [`BYTES`] bytes, from the end (a server may give more).
fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let kept = lines[lines.len().saturating_sub(LINES as usize)..].join("\n");
    let limit = BYTES as usize;
    if kept.len() <= limit {
        return kept;
    }
    let mut start = kept.len() - limit;
    while !kept.is_char_boundary(start) {
        start += 1;
    }
    kept[start..].to_string()
}

/// Words that name a secret: the value after them (`=`, `:` or a space) is hidden.
const SECRET_KEYS: [&str; 9] = [
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "authorization",
    "bearer",
];

/// Each line with the values of secret-looking keys, JWTs and AWS access key ids replaced by
/// `[redacted]`. By pattern, so it is a safety net, not a guarantee; the page says so.
pub fn redacted(text: &str) -> String {
    text.lines()
        .map(redacted_line)
        .collect::<Vec<_>>()
        .join("\n")
}

fn redacted_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut hide_next = false;
    for (i, word) in line.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if hide_next && !word.is_empty() {
            // `Authorization: Bearer abc`: the scheme is kept, the credential after it hidden.
            if matches!(word.to_ascii_lowercase().as_str(), "bearer" | "basic") {
                out.push_str(word);
            } else {
                out.push_str(REDACTED);
                hide_next = false;
            }
            continue;
        }
        let lower = word.to_ascii_lowercase();
        let key_at = SECRET_KEYS
            .iter()
            .filter_map(|key| lower.find(key).map(|at| (at, key.len())))
            .min();
        match key_at {
            Some((at, len)) => {
                let after = &word[at + len..];
                match after.find(['=', ':']) {
                    // `password=hunter2`, `"token":"abc"`: the key kept, the value hidden.
                    Some(sep) if !after[sep + 1..].trim_matches(['"', '\'', ',']).is_empty() => {
                        out.push_str(&word[..at + len + sep + 1]);
                        out.push_str(REDACTED);
                    }
                    // `Authorization: Bearer abc`, `password: hunter2`: the next word.
                    _ => {
                        out.push_str(word);
                        hide_next = true;
                    }
                }
            }
            None if looks_like_a_credential(word) => out.push_str(REDACTED),
            None => match without_url_password(word) {
                Some(safe) => out.push_str(&safe),
                None => out.push_str(word),
            },
        }
    }
    out
}

const REDACTED: &str = "[redacted]";

/// `postgres://user:password@host/db` → `postgres://user:[redacted]@host/db`.
fn without_url_password(word: &str) -> Option<String> {
    let (scheme, rest) = word.split_once("://")?;
    let (userinfo, host) = rest.split_once('@')?;
    let (user, _) = userinfo.split_once(':')?;
    Some(format!("{scheme}://{user}:{REDACTED}@{host}"))
}

/// A JWT (`eyJ…` with two dots) or an AWS access key id (`AKIA` and 16 capitals or digits).
fn looks_like_a_credential(word: &str) -> bool {
    let word =
        word.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '.' && c != '_' && c != '-');
    let jwt = word.starts_with("eyJ") && word.matches('.').count() == 2 && word.len() > 20;
    let aws = word.len() == 20
        && word.starts_with("AKIA")
        && word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    jwt || aws
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_values_are_hidden_and_the_rest_kept() {
        let cases = [
            (
                "connecting with password=hunter2 to db",
                "connecting with password=[redacted] to db",
            ),
            (r#"{"token":"abc123","user":"x"}"#, r#"{"token":[redacted]"#),
            (
                "Authorization: Bearer abc.def",
                "Authorization: Bearer [redacted]",
            ),
            ("DB_PASSWORD: s3cr3t", "DB_PASSWORD: [redacted]"),
            ("key AKIAIOSFODNN7EXAMPLE used", "key [redacted] used"),
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig rejected",
                "jwt [redacted] rejected",
            ),
            (
                "store: postgres://app:hunter2@db:5432/app",
                "store: postgres://app:[redacted]@db:5432/app",
            ),
            (
                "panic: index out of range [3] with length 3",
                "panic: index out of range [3] with length 3",
            ),
        ];
        for (line, expected) in cases {
            let got = redacted(line);
            assert!(got.starts_with(expected), "{line:?} → {got:?}");
            for secret in [
                "hunter2",
                "abc123",
                "abc.def",
                "s3cr3t",
                "AKIAIOSFODNN7EXAMPLE",
                "eyJzdWIiOiIxIn0",
            ] {
                assert!(!got.contains(secret), "{line:?} → {got:?}");
            }
        }
    }

    #[test]
    fn only_the_last_lines_and_bytes_are_kept() {
        let text: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let kept = last_lines(&text);
        assert_eq!(kept.lines().count(), LINES as usize);
        assert!(kept.ends_with("line 199") && kept.starts_with("line 150"));
        let wide = "é".repeat(BYTES as usize);
        let kept = last_lines(&wide);
        assert!(kept.len() <= BYTES as usize && kept.chars().all(|c| c == 'é'));
    }
}
