//! Web access settings: who may read the dashboard and the API, and who may write. Without
//! authentication (`none`, for local use) everything is read-only. Tokens are configured as
//! sha256 hashes only, so the config never holds a usable secret; configured tokens without a
//! mode mean `tokens`, and settings that contradict each other refuse to start.

use super::actions::ActionsConfig;
use super::oidc::OidcConfig;
use super::scopes::ScopesConfig;
use super::web_limits::WebLimits;
use ipnet::IpNet;
use serde::{Deserialize, Deserializer};
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebConfig {
    #[serde(default)]
    pub auth: AuthConfig,
    /// Host names this server answers to besides `public_url`'s, loopback names and IP
    /// addresses (a request naming another host is refused: DNS rebinding).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// A file holding the key that signs CSRF tokens; `FLEETGLASS_WEB_SECRET` overrides it.
    /// Without either a key is generated at start, so web replicas must be given the same one.
    #[serde(default)]
    pub secret_file: Option<PathBuf>,
    /// Connection and long-poll bounds.
    #[serde(default)]
    pub limits: WebLimits,
    /// Offer the last lines of a crashing container's previous log on its object page, read
    /// from its cluster when asked (needs `get` on `pods/log`: the fleetglass-reader chart's
    /// `podLogs: true`). Off by default; the demo has it on.
    #[serde(default)]
    pub pod_logs: bool,
    /// Reconcile, suspend and resume from an object's page (off by default).
    #[serde(default)]
    pub actions: ActionsConfig,
    /// Who sees what; absent, everyone let in sees the whole fleet.
    #[serde(default)]
    pub scopes: Option<ScopesConfig>,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// As written; absent means `tokens` when tokens are configured, else `none`.
    #[serde(default, rename = "mode")]
    pub configured_mode: Option<AuthMode>,
    /// Bearer tokens for scripts, as hex sha256 hashes; valid in `tokens` and `proxy` modes.
    #[serde(default)]
    pub tokens: Vec<TokenHash>,
    #[serde(default)]
    pub proxy: ProxyConfig,
    /// The OpenID Connect provider people sign in with (`mode: oidc`).
    #[serde(default)]
    pub oidc: Option<OidcConfig>,
    /// Some tokens came from `FLEETGLASS_API_TOKENS_FILE` (named in conflicts).
    #[serde(skip)]
    pub tokens_from_file: bool,
}

impl AuthConfig {
    /// Who may do what, in one line without secrets ("mode tokens; tokens: ci, deploy"): the
    /// access policy the audit trail records when it changes.
    pub fn policy(&self) -> String {
        let mut names: Vec<&str> = self.tokens.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        let mut policy = format!(
            "mode {}; tokens: {}",
            self.mode().as_str(),
            match names.len() {
                0 => "none".to_string(),
                _ => names.join(", "),
            }
        );
        if let (AuthMode::Oidc, Some(oidc)) = (self.mode(), &self.oidc) {
            policy.push_str(&format!(
                "; OpenID provider {} as client {}",
                oidc.issuer, oidc.client_id
            ));
        }
        if self.mode() == AuthMode::Proxy {
            let trusted: Vec<String> = self
                .proxy
                .trusted_proxies
                .iter()
                .map(|c| c.0.to_string())
                .collect();
            policy.push_str(&format!(
                "; proxy user header {} from {}",
                self.proxy.user_header,
                trusted.join(", ")
            ));
        }
        policy
    }

    /// The mode in force: as configured, else `tokens` when there are tokens (a tokens file
    /// alone must never leave the service open), else `none`.
    pub fn mode(&self) -> AuthMode {
        match self.configured_mode {
            Some(mode) => mode,
            None if !self.tokens.is_empty() => AuthMode::Tokens,
            None => AuthMode::None,
        }
    }

    /// Whether anyone is asked who they are; without that nothing may be written.
    pub fn identifies(&self) -> bool {
        self.mode() != AuthMode::None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// No authentication (local use): read-only.
    None,
    /// Every request needs `Authorization: Bearer <token>`.
    Tokens,
    /// People come through an authenticating proxy that sets a user header; scripts may
    /// still use bearer tokens.
    Proxy,
    /// People sign in with an OpenID Connect provider; scripts may still use bearer tokens.
    Oidc,
}

impl AuthMode {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMode::None => "none",
            AuthMode::Tokens => "tokens",
            AuthMode::Proxy => "proxy",
            AuthMode::Oidc => "oidc",
        }
    }
}

#[derive(Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenHash {
    pub name: String,
    #[serde(deserialize_with = "sha256_hex")]
    #[schemars(with = "super::schema::Sha256Hex")]
    pub sha256: [u8; 32],
}

impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenHash")
            .field("name", &self.name)
            .finish()
    }
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProxyConfig {
    #[serde(default = "default_user_header")]
    pub user_header: String,
    /// Only requests from these networks may assert a user (`127.0.0.1/32`, `10.0.0.0/8`).
    #[serde(default)]
    pub trusted_proxies: Vec<Cidr>,
    /// The header listing the user's groups, comma-separated (oauth2-proxy:
    /// `X-Forwarded-Groups`), for `web.scopes` and `web.actions`; absent: no groups. The
    /// proxy must set it itself, never pass on a client's.
    #[serde(default)]
    pub groups_header: Option<String>,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            user_header: default_user_header(),
            trusted_proxies: Vec::new(),
            groups_header: None,
        }
    }
}

fn default_user_header() -> String {
    "X-Forwarded-User".to_string()
}

/// An address range written `address/prefix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr(IpNet);

impl Cidr {
    /// Whether `address` is in the range; an IPv4 client seen on a dual-stack socket
    /// (`::ffff:a.b.c.d`) matches the IPv4 range it comes from.
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = match address {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
            v4 => v4,
        };
        self.0.contains(&address)
    }
}

impl std::str::FromStr for Cidr {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.parse()
            .map(Cidr)
            .map_err(|_| format!("{text:?} is not an address range like 127.0.0.1/32"))
    }
}

impl<'de> Deserialize<'de> for Cidr {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        String::deserialize(de)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

fn sha256_hex<'de, D: Deserializer<'de>>(de: D) -> Result<[u8; 32], D::Error> {
    parse_sha256(&String::deserialize(de)?).map_err(serde::de::Error::custom)
}

fn parse_sha256(text: &str) -> Result<[u8; 32], String> {
    let text = text.trim();
    let bad =
        || "must be 64 hex digits (the sha256 of the token, e.g. from `sha256sum`)".to_string();
    if text.len() != 64 || !text.is_ascii() {
        return Err(bad());
    }
    let mut hash = [0u8; 32];
    for (i, byte) in hash.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(hash)
}

impl WebConfig {
    /// A key and what is wrong with it, when the settings cannot work together (`public_url`
    /// is where an OpenID provider sends people back to).
    pub fn problem(&self, public_url: Option<&str>) -> Option<(String, String)> {
        let auth = &self.auth;
        let tokens_from = if auth.tokens_from_file {
            "FLEETGLASS_API_TOKENS_FILE"
        } else {
            "web.auth.tokens"
        };
        let conflict = match auth.mode() {
            AuthMode::None if !auth.tokens.is_empty() => Some((
                "web.auth.mode",
                format!(
                    "mode is none (no authentication, read-only) but {tokens_from} supplies tokens: \
                     set mode: tokens (or proxy), or remove the tokens"
                ),
            )),
            AuthMode::Tokens if auth.tokens.is_empty() => Some((
                "web.auth.tokens",
                "mode is tokens but no tokens are configured (here or in FLEETGLASS_API_TOKENS_FILE)"
                    .into(),
            )),
            AuthMode::Proxy if auth.proxy.trusted_proxies.is_empty() => Some((
                "web.auth.proxy.trusted_proxies",
                "mode is proxy: list the proxy's addresses, or anyone could claim a user".into(),
            )),
            AuthMode::Oidc if auth.oidc.is_none() => Some((
                "web.auth.oidc",
                "mode is oidc: configure the provider (issuer, client_id)".into(),
            )),
            // A provider signs in everyone it knows (with Google, anyone with an account): who
            // sees what must be said, not assumed to be everything.
            AuthMode::Oidc if self.scopes.is_none() => Some((
                "web.scopes",
                "mode is oidc: say who sees what in web.scopes (admins at least); everyone the \
                 provider signs in would otherwise see the whole fleet"
                    .into(),
            )),
            _ if auth.mode() != AuthMode::Oidc && auth.oidc.is_some() => Some((
                "web.auth.mode",
                format!(
                    "an OpenID provider is configured but mode is {}: set mode: oidc, or remove web.auth.oidc",
                    auth.mode().as_str()
                ),
            )),
            AuthMode::None | AuthMode::Tokens | AuthMode::Oidc
                if !auth.proxy.trusted_proxies.is_empty() =>
            {
                Some((
                "web.auth.proxy",
                format!(
                    "trusted proxies are listed but mode is {}: set mode: proxy, or remove them",
                    auth.mode().as_str()
                ),
                ))
            }
            _ => None,
        };
        conflict
            .map(|(key, problem)| (key.to_string(), problem))
            .or_else(|| auth.oidc.as_ref()?.problem(public_url))
            .or_else(|| self.actions.problem(auth.identifies()))
            .or_else(|| self.limits.problem())
    }

    /// Adds tokens from a file of lines `NAME SHA256HEX` (blank lines and `#` comments skipped).
    pub fn add_tokens_file(&mut self, path: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, hash) = line
                .split_once(char::is_whitespace)
                .ok_or_else(|| format!("line {}: write NAME SHA256HEX", number + 1))?;
            let sha256 = parse_sha256(hash).map_err(|e| format!("line {}: {e}", number + 1))?;
            self.auth.tokens.push(TokenHash {
                name: name.to_string(),
                sha256,
            });
            self.auth.tokens_from_file = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_ranges_match_addresses() {
        let local: Cidr = "127.0.0.1/32".parse().unwrap();
        assert!(local.contains("127.0.0.1".parse().unwrap()));
        assert!(local.contains("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!local.contains("127.0.0.2".parse().unwrap()));
        let ten: Cidr = "10.0.0.0/12".parse().unwrap();
        assert!(ten.contains("10.15.255.1".parse().unwrap()));
        assert!(!ten.contains("10.16.0.1".parse().unwrap()));
        let six: Cidr = "fd00::/8".parse().unwrap();
        assert!(six.contains("fd12::1".parse().unwrap()));
        assert!(!six.contains("fe80::1".parse().unwrap()));
        assert!(!six.contains("10.0.0.1".parse().unwrap()));
        assert!("10.0.0.0/33".parse::<Cidr>().is_err());
        assert!("localhost".parse::<Cidr>().is_err());
    }

    fn web(yaml: &str) -> WebConfig {
        crate::yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn tokens_without_a_mode_mean_tokens_mode() {
        let hash = "ab".repeat(32);
        let tokens = web(&format!("auth: {{tokens: [{{name: ci, sha256: {hash}}}]}}"));
        assert_eq!(tokens.auth.mode(), AuthMode::Tokens);
        assert_eq!(tokens.problem(None), None);
        let mut from_file = WebConfig::default();
        assert_eq!(from_file.auth.mode(), AuthMode::None);
        let file = std::env::temp_dir().join(format!("fg-tokens-{}", std::process::id()));
        std::fs::write(&file, format!("ci {hash}\n")).unwrap();
        from_file.add_tokens_file(&file).unwrap();
        std::fs::remove_file(&file).unwrap();
        assert_eq!(from_file.auth.mode(), AuthMode::Tokens);
        assert!(from_file.auth.identifies());
    }

    #[test]
    fn contradictions_name_the_conflict() {
        let hash = "ab".repeat(32);
        let mut none_with_file = web("auth: {mode: none}");
        none_with_file.auth.tokens_from_file = true;
        none_with_file.auth.tokens.push(TokenHash {
            name: "ci".into(),
            sha256: [0; 32],
        });
        let (key, problem) = none_with_file.problem(None).unwrap();
        assert_eq!(key, "web.auth.mode");
        assert!(problem.contains("FLEETGLASS_API_TOKENS_FILE"), "{problem}");
        let none_with_tokens = web(&format!(
            "auth: {{mode: none, tokens: [{{name: ci, sha256: {hash}}}]}}"
        ));
        assert!(
            none_with_tokens
                .problem(None)
                .unwrap()
                .1
                .contains("web.auth.tokens")
        );
        let proxy_alone = web("auth: {mode: proxy}");
        assert_eq!(
            proxy_alone.problem(None).unwrap().0,
            "web.auth.proxy.trusted_proxies"
        );
        let proxies_without_proxy_mode = web(&format!(
            "auth: {{tokens: [{{name: ci, sha256: {hash}}}], proxy: {{trusted_proxies: [10.0.0.0/8]}}}}"
        ));
        assert_eq!(
            proxies_without_proxy_mode.problem(None).unwrap().0,
            "web.auth.proxy"
        );
        assert_eq!(web("{}").problem(None), None);
    }

    #[test]
    fn token_hashes_must_be_sha256_hex() {
        assert!(parse_sha256(&"ab".repeat(32)).is_ok());
        assert!(parse_sha256("abc").unwrap_err().contains("64 hex digits"));
        assert!(parse_sha256(&"zz".repeat(32)).is_err());
    }

    #[test]
    fn single_sign_on_needs_a_policy_of_who_sees_what() {
        let provider = "auth: {mode: oidc, oidc: {issuer: 'https://dex.example', client_id: f}}";
        let url = Some("https://fleet.example");
        let (key, problem) = web(provider).problem(url).unwrap();
        assert_eq!(key, "web.scopes");
        assert!(
            problem.contains("everyone the provider signs in"),
            "{problem}"
        );
        let scoped = format!("{provider}\nscopes: {{admins: {{groups: [platform]}}}}");
        assert_eq!(web(&scoped).problem(url), None);
    }
}
