//! Web access settings: who may read the dashboard and the API. Chosen explicitly; the
//! default (`none`) is for local use and says so on every page. Tokens are configured as
//! sha256 hashes only, so the config never holds a usable secret.

use serde::{Deserialize, Deserializer};
use std::fmt;
use std::net::IpAddr;
use std::path::Path;

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebConfig {
    #[serde(default)]
    pub auth: AuthConfig,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    #[serde(default)]
    pub mode: AuthMode,
    /// Bearer tokens for scripts, as hex sha256 hashes; valid in `tokens` and `proxy` modes.
    #[serde(default)]
    pub tokens: Vec<TokenHash>,
    #[serde(default)]
    pub proxy: ProxyConfig,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// No authentication (local use).
    #[default]
    None,
    /// Every request needs `Authorization: Bearer <token>`.
    Tokens,
    /// People come through an authenticating proxy that sets a user header; scripts may
    /// still use bearer tokens.
    Proxy,
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
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            user_header: default_user_header(),
            trusted_proxies: Vec::new(),
        }
    }
}

fn default_user_header() -> String {
    "X-Forwarded-User".to_string()
}

/// An address range written `address/prefix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = match address {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
            v4 => v4,
        };
        match (self.network, address) {
            (IpAddr::V4(net), IpAddr::V4(a)) => {
                prefix_matches(&net.octets(), &a.octets(), self.prefix)
            }
            (IpAddr::V6(net), IpAddr::V6(a)) => {
                prefix_matches(&net.octets(), &a.octets(), self.prefix)
            }
            _ => false,
        }
    }
}

fn prefix_matches(net: &[u8], address: &[u8], prefix: u8) -> bool {
    let bits = usize::from(prefix);
    let (whole, rest) = (bits / 8, bits % 8);
    if net[..whole] != address[..whole] {
        return false;
    }
    rest == 0 || {
        let mask = 0xffu8 << (8 - rest);
        net[whole] & mask == address[whole] & mask
    }
}

impl std::str::FromStr for Cidr {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{text:?} is not an address range like 127.0.0.1/32");
        let (address, prefix) = text.split_once('/').ok_or_else(bad)?;
        let network: IpAddr = address.parse().map_err(|_| bad())?;
        let prefix: u8 = prefix.parse().map_err(|_| bad())?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        if prefix > max {
            return Err(bad());
        }
        Ok(Cidr { network, prefix })
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
    /// A key and what is wrong with it, when the settings cannot work together.
    pub fn problem(&self) -> Option<(String, String)> {
        let auth = &self.auth;
        match auth.mode {
            AuthMode::Tokens if auth.tokens.is_empty() => Some((
                "web.auth.tokens".into(),
                "mode is tokens but no tokens are configured (here or in FLEETGLASS_API_TOKENS_FILE)"
                    .into(),
            )),
            AuthMode::Proxy if auth.proxy.trusted_proxies.is_empty() => Some((
                "web.auth.proxy.trusted_proxies".into(),
                "mode is proxy: list the proxy's addresses, or anyone could claim a user".into(),
            )),
            _ => None,
        }
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
        assert!("10.0.0.0/33".parse::<Cidr>().is_err());
        assert!("localhost".parse::<Cidr>().is_err());
    }

    #[test]
    fn token_hashes_must_be_sha256_hex() {
        assert!(parse_sha256(&"ab".repeat(32)).is_ok());
        assert!(parse_sha256("abc").unwrap_err().contains("64 hex digits"));
        assert!(parse_sha256(&"zz".repeat(32)).is_err());
    }
}
