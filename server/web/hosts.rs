//! Which `Host` names this server answers to. A DNS-rebinding page (evil.example resolving to
//! 127.0.0.1) reaches a local instance with its own name in `Host`, so a name is accepted only
//! when it is `public_url`'s, listed in `web.allowed_hosts`, a loopback name, or one that public
//! DNS cannot hand out (a single label, a Kubernetes `*.svc` name); IP addresses always pass
//! (a rebinding page cannot have one as its origin). When neither `public_url` is set nor the
//! listener is on loopback there is nothing to judge names by, and every name passes (the
//! start-up log says so).

use super::AppState;
use super::error::ApiError;
use axum::extract::{Request, State};
use axum::http::header::HOST;
use axum::middleware::Next;
use axum::response::Response;
use std::net::{IpAddr, SocketAddr};

#[derive(Debug, Clone, Default)]
pub struct HostPolicy {
    /// `public_url`'s host name, lower-case.
    public: Option<String>,
    https: bool,
    allowed: Vec<String>,
    listen: Option<SocketAddr>,
}

impl HostPolicy {
    pub fn new(public_url: Option<&str>, allowed: &[String], listen: Option<SocketAddr>) -> Self {
        HostPolicy {
            public: public_url
                .and_then(authority_of)
                .map(|a| hostname(a).to_ascii_lowercase()),
            https: public_url
                .is_some_and(|u| u.trim().to_ascii_lowercase().starts_with("https://")),
            allowed: allowed.iter().map(|h| h.to_ascii_lowercase()).collect(),
            listen,
        }
    }

    pub fn listening_on(&mut self, address: SocketAddr) {
        self.listen = Some(address);
    }

    pub fn listen(&self) -> Option<SocketAddr> {
        self.listen
    }

    /// Whether people reach this server over https (`public_url` says so).
    pub fn https(&self) -> bool {
        self.https
    }

    /// Whether names can be judged at all (see the module comment).
    pub fn checks_names(&self) -> bool {
        self.public.is_some() || self.listen.is_some_and(|a| a.ip().is_loopback())
    }

    /// Whether `authority` (`host[:port]`) is `public_url`'s host.
    pub fn is_public(&self, authority: &str) -> bool {
        self.public
            .as_deref()
            .is_some_and(|p| hostname(authority).eq_ignore_ascii_case(p))
    }

    /// Whether a request whose `Host` header is `host` is for this server.
    pub fn accepts(&self, host: &str) -> bool {
        let name = hostname(host).trim_end_matches('.').to_ascii_lowercase();
        name.parse::<IpAddr>().is_ok()
            || name == "localhost"
            || name.ends_with(".localhost")
            || self.public.as_deref() == Some(name.as_str())
            || self.allowed.contains(&name)
            || !name.contains('.')
            || name.ends_with(".svc")
            || name.ends_with(".svc.cluster.local")
            || !self.checks_names()
    }
}

/// `scheme://host[:port]/…` → `host[:port]`.
pub fn authority_of(url: &str) -> Option<&str> {
    let (_, rest) = url.trim().split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    (!authority.is_empty()).then_some(authority)
}

/// `host[:port]` → `host` (`[::1]:8080` → `::1`).
fn hostname(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            host
        }
        _ => authority,
    }
}

/// Refuses requests for another site (421), except the probes, which orchestrators send to
/// whatever address they know.
pub async fn check(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let host = request
        .headers()
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()));
    match host {
        Some(host) if !super::probes::is_probe(path) && !state.site.hosts.accepts(host) => ApiError::Misdirected(format!(
            "this server does not answer for {host:?}: use {} or add the name to web.allowed_hosts",
            state
                .site
                .hosts
                .public
                .as_deref()
                .unwrap_or("its own address")
        ))
        .respond_for(path),
        _ => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_listener_answers_only_to_loopback_names_and_addresses() {
        let local = HostPolicy::new(None, &[], Some("127.0.0.1:8080".parse().unwrap()));
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "[::1]:8080",
            "app.localhost",
            "fleetglass",
        ] {
            assert!(local.accepts(host), "{host}");
        }
        for host in [
            "evil.example:8080",
            "rebind.attacker.net",
            "127.0.0.1.nip.io:8080",
        ] {
            assert!(!local.accepts(host), "{host}");
        }
    }

    #[test]
    fn public_url_names_the_site_and_allowed_hosts_extend_it() {
        let extra = ["Fleet.internal.example".to_string()];
        let public = HostPolicy::new(
            Some("https://fleet.example.com/"),
            &extra,
            Some("0.0.0.0:8080".parse().unwrap()),
        );
        assert!(public.https());
        for host in [
            "fleet.example.com",
            "FLEET.example.com:443",
            "fleet.internal.example",
            "10.1.2.3:8080",
            "fleetglass.monitoring.svc:8080",
            "fleetglass.monitoring.svc.cluster.local",
        ] {
            assert!(public.accepts(host), "{host}");
        }
        assert!(!public.accepts("evil.example"));
        let open = HostPolicy::new(None, &[], Some("0.0.0.0:8080".parse().unwrap()));
        assert!(!open.checks_names() && open.accepts("anything.example"));
    }

    #[test]
    fn authorities_come_out_of_urls() {
        assert_eq!(
            authority_of("https://a.example:8443/x?y"),
            Some("a.example:8443")
        );
        assert_eq!(authority_of("http://u:p@a.example"), Some("a.example"));
        assert_eq!(authority_of("null"), None);
        assert_eq!(hostname("[::1]:80"), "::1");
        assert_eq!(hostname("a.example:80"), "a.example");
    }
}
