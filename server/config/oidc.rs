//! Signing people in through an OpenID Connect provider (`web.auth.mode: oidc`): where the
//! provider is, who fleetglass is to it, and which claims name a person and their groups.
//! The client secret is read from a file or `FLEETGLASS_OIDC_CLIENT_SECRET`, never the YAML.

use crate::model::serde_go;
use chrono::TimeDelta;
use serde::Deserialize;
use std::fmt;
use std::path::PathBuf;

#[derive(Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OidcConfig {
    /// The provider's issuer URL, exactly as its discovery document names it
    /// (`https://dex.example.com`, `https://login.microsoftonline.com/<tenant>/v2.0`).
    pub issuer: String,
    /// This fleetglass's client id at the provider.
    pub client_id: String,
    /// A file holding the client secret; `FLEETGLASS_OIDC_CLIENT_SECRET` overrides it.
    #[serde(default)]
    pub client_secret_file: Option<PathBuf>,
    /// The secret as read at start (never from the YAML itself).
    #[serde(skip)]
    pub client_secret: Option<String>,
    /// Scopes asked for besides `openid` (`groups` for Dex, `profile`, `email`).
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
    /// The claim that names a person in the audit trail and in policies; `email`, then
    /// `sub`, stand in when it is absent.
    #[serde(default = "default_username_claim")]
    pub username_claim: String,
    /// The claim listing a person's groups (a list of strings, or one string).
    #[serde(default = "default_groups_claim")]
    pub groups_claim: String,
    /// The longest a browser session lasts; it ends sooner when the provider's ID token
    /// expires (the provider is then asked again, so a session ended there ends here).
    #[serde(default = "default_session_lifetime", with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub session_lifetime: TimeDelta,
}

fn default_scopes() -> Vec<String> {
    ["profile", "email"].map(String::from).to_vec()
}

fn default_username_claim() -> String {
    "preferred_username".to_string()
}

fn default_groups_claim() -> String {
    "groups".to_string()
}

fn default_session_lifetime() -> TimeDelta {
    TimeDelta::hours(12)
}

impl fmt::Debug for OidcConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcConfig")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl OidcConfig {
    /// A key and what is wrong with it, when these settings cannot sign anyone in.
    pub fn problem(&self, public_url: Option<&str>) -> Option<(String, String)> {
        let issuer = self.issuer.trim();
        let https = issuer.starts_with("https://");
        let local =
            issuer.starts_with("http://localhost") || issuer.starts_with("http://127.0.0.1");
        if !https && !local {
            return Some((
                "web.auth.oidc.issuer".into(),
                format!("{issuer:?} must be an https URL (http only for localhost)"),
            ));
        }
        if self.client_id.trim().is_empty() {
            return Some(("web.auth.oidc.client_id".into(), "must not be empty".into()));
        }
        if public_url.is_none_or(|url| url.trim().is_empty()) {
            return Some((
                "public_url".into(),
                "mode is oidc: set public_url, the address people reach fleetglass at (the \
                 provider sends them back to <public_url>/auth/callback)"
                    .into(),
            ));
        }
        if self.session_lifetime < TimeDelta::minutes(1) {
            return Some((
                "web.auth.oidc.session_lifetime".into(),
                "must be at least 1m".into(),
            ));
        }
        None
    }

    /// Reads the client secret from the environment or the configured file.
    pub fn read_secret(&mut self) -> Result<(), String> {
        if let Ok(secret) = std::env::var("FLEETGLASS_OIDC_CLIENT_SECRET")
            && !secret.trim().is_empty()
        {
            self.client_secret = Some(secret.trim().to_string());
            return Ok(());
        }
        if let Some(file) = &self.client_secret_file {
            let secret = std::fs::read_to_string(file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            self.client_secret = Some(secret.trim().to_string()).filter(|s| !s.is_empty());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oidc(yaml: &str) -> OidcConfig {
        crate::yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn defaults_ask_for_profile_and_email_and_last_twelve_hours() {
        let config = oidc("issuer: https://dex.example\nclient_id: fleetglass\n");
        assert_eq!(config.scopes, ["profile", "email"]);
        assert_eq!(config.username_claim, "preferred_username");
        assert_eq!(config.groups_claim, "groups");
        assert_eq!(config.session_lifetime, TimeDelta::hours(12));
        assert_eq!(config.problem(Some("https://fleetglass.example")), None);
    }

    #[test]
    fn an_issuer_over_plain_http_is_refused_unless_local() {
        let plain = oidc("issuer: http://dex.example\nclient_id: c\n");
        let (key, problem) = plain.problem(Some("https://f.example")).unwrap();
        assert_eq!(key, "web.auth.oidc.issuer");
        assert!(problem.contains("https"), "{problem}");
        let local = oidc("issuer: http://localhost:5556/dex\nclient_id: c\n");
        assert_eq!(local.problem(Some("http://localhost:8080")), None);
    }

    #[test]
    fn without_a_public_url_there_is_nowhere_to_come_back_to() {
        let config = oidc("issuer: https://dex.example\nclient_id: c\n");
        assert_eq!(config.problem(None).unwrap().0, "public_url");
        let short = oidc("issuer: https://dex.example\nclient_id: c\nsession_lifetime: 30s\n");
        assert_eq!(
            short.problem(Some("https://f.example")).unwrap().0,
            "web.auth.oidc.session_lifetime"
        );
    }

    #[test]
    fn the_secret_never_shows_in_debug_output() {
        let mut config = oidc("issuer: https://dex.example\nclient_id: c\n");
        config.client_secret = Some("hunter2".into());
        assert!(!format!("{config:?}").contains("hunter2"));
    }
}
