//! The HTTP side of the CI commands (`wait`, `impact`): one GET against fleetglass's JSON API,
//! with a bearer token when given, returning the JSON body or a one-line error.

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

impl ApiCall<'_> {
    /// The JSON body of a 2xx answer; otherwise a one-line error (the server's own message
    /// for a 4xx/5xx, the cause without the URL for a transport failure).
    pub async fn get(self) -> Result<Value, String> {
        let url = format!("{}{}", self.base_url.trim_end_matches('/'), self.path);
        let client = reqwest::Client::builder()
            .timeout(self.timeout)
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        let mut request = client.get(&url).query(&self.query);
        if let Some(token) = self.token {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("cannot reach {}: {}", self.base_url, without_url(e)))?;
        let status = response.status();
        let body: Value = response
            .json()
            .await
            .map_err(|_| format!("{url} answered {status} without JSON"))?;
        if !status.is_success() {
            let message = body["error"].as_str().unwrap_or("no message");
            return Err(format!("{status}: {message}"));
        }
        Ok(body)
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
