//! The HTTP side of the CI commands (`wait`, `impact`): one GET against fleetglass's JSON API,
//! with a bearer token when given, returning the JSON body or a one-line error.

use reqwest::StatusCode;
use serde_json::Value;
use std::time::Duration;

pub struct ApiCall<'a> {
    pub base_url: &'a str,
    /// Path under the base URL, already percent-encoded where needed.
    pub path: String,
    pub query: Vec<(&'a str, &'a str)>,
    pub token: Option<&'a str>,
    pub timeout: Duration,
}

/// Why a call gave no answer, and whether asking again may help.
#[derive(Debug)]
pub struct CallError {
    pub message: String,
    /// A passing fault: a gateway or proxy (502, 504), a busy server (503), or no connection.
    pub transient: bool,
    /// What a 503 said to wait (`Retry-After`, seconds).
    pub retry_after: Option<Duration>,
}

impl ApiCall<'_> {
    /// The JSON body of a 2xx answer; otherwise a one-line error (the server's own message
    /// for a 4xx/5xx, the cause without the URL for a transport failure).
    pub async fn get(self) -> Result<Value, String> {
        self.send().await.map_err(|e| e.message)
    }

    /// Like [`ApiCall::get`], saying which failures are worth another try.
    pub async fn send(self) -> Result<Value, CallError> {
        let url = format!("{}{}", self.base_url.trim_end_matches('/'), self.path);
        let fatal = |message: String| CallError {
            message,
            transient: false,
            retry_after: None,
        };
        let client = reqwest::Client::builder()
            .timeout(self.timeout)
            .build()
            .map_err(|e| fatal(format!("cannot build an HTTP client: {e}")))?;
        let mut request = client.get(&url).query(&self.query);
        if let Some(token) = self.token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.map_err(|e| CallError {
            // Refused, reset or timed out: the server (or the way to it) may be back soon.
            transient: e.is_connect() || e.is_timeout() || e.is_request(),
            message: format!("cannot reach {}: {}", shown(self.base_url), without_url(e)),
            retry_after: None,
        })?;
        let status = response.status();
        let transient = matches!(
            status,
            StatusCode::BAD_GATEWAY | StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT
        );
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        // A proxy's error page is HTML; what matters then is the status.
        let body: Option<Value> = response.json().await.ok();
        if status.is_success() {
            return body
                .ok_or_else(|| fatal(format!("{} answered {status} without JSON", shown(&url))));
        }
        let message = body
            .as_ref()
            .and_then(|b| b["error"].as_str())
            .unwrap_or("no message");
        Err(CallError {
            message: format!("{status}: {message}"),
            transient,
            retry_after,
        })
    }
}

/// Runs a command's async part on a small runtime.
pub fn block_on<T>(future: impl Future<Output = Result<T, String>>) -> Result<T, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?
        .block_on(future)
}

/// A URL as it may be printed: a `user:password@` part (credentials for a proxy in front of
/// fleetglass) is replaced by `***@`.
fn shown(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_password(None);
            let _ = parsed.set_username("***");
            parsed.to_string()
        }
        Ok(_) => url.to_string(),
        // Not a URL reqwest can use either; whatever precedes an `@` may be a credential.
        Err(_) => match url.rsplit_once('@') {
            Some((_, host)) => format!("***@{host}"),
            None => url.to_string(),
        },
    }
}

/// The error without the URL (it may carry a token in a query someday) and with its cause.
fn without_url(error: reqwest::Error) -> String {
    let connect = error.is_connect();
    let error = error.without_url();
    let cause = std::error::Error::source(&error)
        .map(|s| format!(": {s}"))
        .unwrap_or_default();
    if connect {
        format!("connection failed{cause}")
    } else {
        format!("{error}{cause}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_a_url_are_never_shown() {
        for (url, expected) in [
            (
                "http://ci:s3cret@fleet.example:8080/x",
                "http://***@fleet.example:8080/x",
            ),
            ("https://tok3n@fleet.example/", "https://***@fleet.example/"),
            ("http://:s3cret@fleet.example/", "http://***@fleet.example/"),
            ("not a url with s3cret@fleet", "***@fleet"),
            ("http://fleet.example/", "http://fleet.example/"),
        ] {
            assert_eq!(shown(url), expected, "{url}");
        }
    }
}
