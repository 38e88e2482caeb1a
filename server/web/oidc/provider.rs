//! The OpenID provider as fleetglass talks to it: its discovery document and keys (fetched
//! when first needed, again after an hour, and at once when a token names a key not among
//! them: the provider rotated its keys. Tokens come only from the provider's token endpoint,
//! in exchange for a code, so a made-up key id cannot make fleetglass fetch at will), the
//! authorization request (code flow with PKCE,
//! state and nonce) and the redemption of the code it sends back (the ID token checked
//! against the provider's keys, this client, the issuer, its expiry and the nonce).

use super::claims::Claims;
use crate::config::OidcConfig;
use chrono::{DateTime, TimeDelta, Utc};
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreGenderClaim, CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm, CoreProviderMetadata,
};
use openidconnect::{
    AdditionalClaims, AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret,
    CsrfToken, EndpointMaybeSet, EndpointNotSet, EndpointSet, IdToken, IssuerUrl, Nonce,
    OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope,
    SignatureVerificationError, SubjectIdentifier, TokenResponse, UserInfoClaims,
};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::sync::Mutex;

/// Where the provider sends people back to, under `public_url`.
pub const CALLBACK: &str = "/auth/callback";
/// How long a discovery document and its keys are used before they are fetched again.
const METADATA_KEPT: TimeDelta = TimeDelta::hours(1);
const HTTP_TIMEOUT: Duration = Duration::from_secs(10);

/// Every claim of a token besides the standard ones (groups, custom claims).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct OtherClaims {
    #[serde(flatten)]
    pub claims: serde_json::Map<String, serde_json::Value>,
}

impl AdditionalClaims for OtherClaims {}

type FullIdToken = IdToken<
    OtherClaims,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
>;

/// What fails between fleetglass and the provider, in words for the person signing in.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("the sign-in provider {issuer} cannot be reached or answered wrongly: {detail}")]
    Unreachable { issuer: String, detail: String },
    #[error("the sign-in provider refused the sign-in: {0}")]
    Refused(String),
    #[error("the provider's ID token is not valid: {0}")]
    InvalidToken(String),
}

/// A redirect to the provider, and what its return must match.
pub struct Authorization {
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

pub struct Provider {
    config: OidcConfig,
    redirect: RedirectUrl,
    http: reqwest::Client,
    metadata: Mutex<Option<(CoreProviderMetadata, DateTime<Utc>)>>,
}

impl Provider {
    /// No request is made here: a provider that is down does not stop fleetglass starting.
    pub fn new(config: OidcConfig, public_url: &str) -> Result<Provider, String> {
        let redirect = format!("{}{CALLBACK}", public_url.trim_end_matches('/'));
        let redirect = RedirectUrl::new(redirect).map_err(|e| format!("public_url: {e}"))?;
        // No redirects followed: the provider's endpoints answer directly (no SSRF by redirect).
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(HTTP_TIMEOUT)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Provider {
            config,
            redirect,
            http,
            metadata: Mutex::new(None),
        })
    }

    pub fn issuer(&self) -> &str {
        &self.config.issuer
    }

    pub fn config(&self) -> &OidcConfig {
        &self.config
    }

    /// The discovery document (with the keys), fetched again when older than an hour or when
    /// `refresh` asks.
    async fn metadata(&self, refresh: bool) -> Result<CoreProviderMetadata, ProviderError> {
        let mut cached = self.metadata.lock().await;
        let now = Utc::now();
        if let Some((metadata, at)) = cached.as_ref()
            && now - *at < METADATA_KEPT
            && !refresh
        {
            return Ok(metadata.clone());
        }
        let unreachable = |detail: String| ProviderError::Unreachable {
            issuer: self.config.issuer.clone(),
            detail,
        };
        let issuer =
            IssuerUrl::new(self.config.issuer.clone()).map_err(|e| unreachable(e.to_string()))?;
        // Checks that the document names this issuer, and fetches its keys.
        let metadata = CoreProviderMetadata::discover_async(issuer, &self.http)
            .await
            .map_err(|e| unreachable(error_chain(&e)))?;
        *cached = Some((metadata.clone(), now));
        Ok(metadata)
    }

    fn client(&self, metadata: CoreProviderMetadata) -> DiscoveredClient {
        CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.config.client_id.clone()),
            self.config.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(self.redirect.clone())
    }

    /// Where to send a browser to sign in.
    pub async fn authorize(&self) -> Result<Authorization, ProviderError> {
        let client = self.client(self.metadata(false).await?);
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in &self.config.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        Ok(Authorization {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
        })
    }

    /// Redeems the code the provider sent back: the person's claims, from a checked ID token
    /// (and the userinfo endpoint when the token lacks the name or groups), with when the token
    /// expires.
    pub async fn redeem(
        &self,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
    ) -> Result<(Claims, DateTime<Utc>), ProviderError> {
        let client = self.client(self.metadata(false).await?);
        let response = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| ProviderError::Refused(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier.to_string()))
            .request_async(&self.http)
            .await
            .map_err(|e| ProviderError::Refused(error_chain(&e)))?;
        let raw = response
            .id_token()
            .and_then(|token| serde_json::to_value(token).ok())
            .ok_or_else(|| ProviderError::InvalidToken("the provider sent no ID token".into()))?;
        let token: FullIdToken =
            serde_json::from_value(raw).map_err(|e| ProviderError::InvalidToken(e.to_string()))?;
        let nonce = Nonce::new(nonce.to_string());
        let verified = match verify(&client, &token, &nonce) {
            Err(ClaimsVerificationError::SignatureVerification(
                SignatureVerificationError::NoMatchingKey,
            )) => {
                // The provider rotated its keys since they were fetched: fetch them again, once.
                let client = self.client(self.metadata(true).await?);
                verify(&client, &token, &nonce)
            }
            other => other,
        };
        let (mut claims, subject, expires) =
            verified.map_err(|e| ProviderError::InvalidToken(error_chain(&e)))?;
        let missing =
            !claims.has(&self.config.username_claim) || !claims.has(&self.config.groups_claim);
        if missing
            && let Ok(request) = client.user_info(response.access_token().clone(), Some(subject))
        {
            let info: UserInfoClaims<OtherClaims, CoreGenderClaim> = request
                .request_async(&self.http)
                .await
                .map_err(|e| ProviderError::Refused(format!("userinfo: {}", error_chain(&e))))?;
            claims.add_missing(&info);
        }
        Ok((claims, expires))
    }
}

type DiscoveredClient = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// The token's claims if it is signed by one of the provider's keys, for this client, from
/// this issuer, unexpired and carrying the nonce; with its subject and expiry.
fn verify(
    client: &DiscoveredClient,
    token: &FullIdToken,
    nonce: &Nonce,
) -> Result<(Claims, SubjectIdentifier, DateTime<Utc>), ClaimsVerificationError> {
    let claims = token.claims(&client.id_token_verifier(), nonce)?;
    let subject = claims.subject().clone();
    let expires = claims.expiration();
    Ok((Claims::of(claims), subject, expires))
}

/// An error with its causes, one line ("request failed: connection refused").
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
