//! Short, classified explanations of why a cluster or a kind cannot be read ("connection
//! refused", "401 Unauthorized: credentials rejected", "RBAC Forbidden: cannot list …"). The
//! raw kube error goes to the log; these go to the cluster row and the pages, so they never
//! carry tokens or full URLs.

use std::error::Error as StdError;

/// Why a request to a cluster failed, in a few words.
pub fn classify(error: &kube::Error) -> String {
    if let kube::Error::Api(status) = error {
        return match status.code {
            401 => "401 Unauthorized: credentials rejected".to_string(),
            403 => forbidden(&status.message),
            404 => "404 Not Found: the API is not served".to_string(),
            code if code >= 500 => format!("{code} server error: {}", first_line(&status.message)),
            code => format!("{code} {}: {}", status.reason, first_line(&status.message)),
        };
    }
    let chain = chain_text(error);
    let lower = chain.to_lowercase();
    if lower.contains("connection refused") {
        "connection refused".to_string()
    } else if lower.contains("certificate") || lower.contains("tls") {
        format!("TLS: {}", tls_detail(&chain))
    } else if lower.contains("timed out") || lower.contains("elapsed") || lower.contains("timeout")
    {
        "timeout".to_string()
    } else if lower.contains("dns error") || lower.contains("failed to lookup") {
        "DNS: server name not found".to_string()
    } else if lower.contains("connection reset")
        || lower.contains("broken pipe")
        || lower.contains("connection closed")
    {
        "connection reset".to_string()
    } else if matches!(error, kube::Error::Auth(_)) {
        "credentials: cannot get a token (exec plugin or token file failed)".to_string()
    } else {
        first_line(&chain).to_string()
    }
}

/// The RBAC verdict, naming the missing permission and the user it was denied to.
/// The API server says: `helmreleases.helm.toolkit.fluxcd.io is forbidden: User "x" cannot
/// list resource "helmreleases" in API group "helm.toolkit.fluxcd.io" at the cluster scope`.
pub fn forbidden(message: &str) -> String {
    let resource = message.split(" is forbidden").next().unwrap_or("").trim();
    let verb = message
        .split(" cannot ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("list");
    let user = message
        .split("User \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next());
    match (resource.is_empty(), user) {
        (false, Some(user)) => format!("RBAC Forbidden: cannot {verb} {resource} (user {user})"),
        (false, None) => format!("RBAC Forbidden: cannot {verb} {resource}"),
        (true, _) => format!("RBAC Forbidden: {}", first_line(message)),
    }
}

pub fn is_forbidden(error: &kube::Error) -> Option<String> {
    match error {
        kube::Error::Api(status) if status.code == 403 => Some(forbidden(&status.message)),
        _ => None,
    }
}

fn chain_text(error: &(dyn StdError + 'static)) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = error.source();
    while let Some(inner) = source {
        parts.push(inner.to_string());
        source = inner.source();
    }
    parts.join(": ")
}

fn tls_detail(chain: &str) -> String {
    let lower = chain.to_lowercase();
    if lower.contains("unknownissuer") || lower.contains("unknown issuer") {
        "certificate signed by an unknown authority".to_string()
    } else if lower.contains("expired") {
        "certificate expired".to_string()
    } else if lower.contains("notvalidforname") || lower.contains("not valid for name") {
        "certificate not valid for the server name".to_string()
    } else {
        "handshake failed".to_string()
    }
}

fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(160) {
        Some((cut, _)) => &line[..cut],
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn api(code: u16, message: &str) -> kube::Error {
        let mut status = Status::failure(message, "Forbidden");
        status.code = code;
        kube::Error::Api(Box::new(status))
    }

    #[test]
    fn forbidden_names_the_permission_and_the_user() {
        let message = "helmreleases.helm.toolkit.fluxcd.io is forbidden: User \"system:serviceaccount:fg:reader\" cannot list resource \"helmreleases\" in API group \"helm.toolkit.fluxcd.io\" at the cluster scope";
        assert_eq!(
            classify(&api(403, message)),
            "RBAC Forbidden: cannot list helmreleases.helm.toolkit.fluxcd.io (user system:serviceaccount:fg:reader)"
        );
        assert!(is_forbidden(&api(403, message)).is_some());
        assert!(is_forbidden(&api(401, "Unauthorized")).is_none());
    }

    #[test]
    fn status_codes_are_classified() {
        assert_eq!(
            classify(&api(401, "Unauthorized")),
            "401 Unauthorized: credentials rejected"
        );
        assert!(classify(&api(503, "etcd down\nmore")).starts_with("503 server error: etcd down"));
    }

    #[test]
    fn transport_errors_are_classified_from_the_chain() {
        let refused = std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        );
        let error = kube::Error::Service(Box::new(refused));
        assert_eq!(classify(&error), "connection refused");
        let closed = std::io::Error::other(
            "client error (SendRequest): connection closed before message completed",
        );
        assert_eq!(
            classify(&kube::Error::Service(Box::new(closed))),
            "connection reset"
        );
        let tls = std::io::Error::other("invalid peer certificate: UnknownIssuer");
        assert_eq!(
            classify(&kube::Error::Service(Box::new(tls))),
            "TLS: certificate signed by an unknown authority"
        );
    }
}
