//! `/auth/login` sends a browser to the provider; `/auth/callback` takes it back. A return is
//! accepted once, only in the browser that left (its sign-in cookie holds the state), only
//! within ten minutes, only from the configured issuer (RFC 9207's `iss`, when the provider
//! sends it: a response meant for another provider is refused), and only with an ID token
//! that carries the nonce sent. Every sign-in and every refusal is in the audit trail.

use super::provider::{Authorization, CALLBACK};
use super::session;
use crate::store::audit::{self, NewAuditEvent};
use crate::store::web_sessions::{self, NewSession, PendingLogin};
use crate::web::AppState;
use crate::web::audit::Source;
use crate::web::csrf;
use crate::web::error::{ApiError, PageError};
use crate::web::signin::{self, safe_next};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::Utc;
use serde::Deserialize;

pub const LOGIN: &str = "/auth/login";
pub const CALLBACK_PATH: &str = CALLBACK;

#[derive(Deserialize)]
pub struct LoginQuery {
    #[serde(default)]
    next: String,
}

/// What the provider sends back (RFC 6749 §4.1.2, RFC 9207).
#[derive(Deserialize)]
pub struct CallbackQuery {
    #[serde(default)]
    code: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    error_description: Option<String>,
}

pub async fn login(
    State(state): State<AppState>,
    Query(query): Query<LoginQuery>,
) -> Result<Response, PageError> {
    let Some(provider) = &state.oidc else {
        return Err(ApiError::NotFound(
            "single sign-on is not configured here (web.auth.mode is not oidc)".into(),
        )
        .into());
    };
    let next = safe_next(&query.next);
    let Authorization {
        url,
        state: login_state,
        nonce,
        pkce_verifier,
    } = match provider.authorize().await {
        Ok(authorization) => authorization,
        Err(error) => {
            tracing::warn!(%error, "cannot start a sign-in");
            return Ok(signin::page(
                &state.site,
                next,
                &error.to_string(),
                StatusCode::BAD_GATEWAY,
            ));
        }
    };
    let pending = PendingLogin {
        nonce,
        pkce_verifier,
        next: next.to_string(),
    };
    let mut conn = state.store.pool().acquire().await?;
    web_sessions::begin_login(
        &mut conn,
        &session::hash(&login_state),
        &pending,
        Utc::now(),
    )
    .await?;
    let mut response = Redirect::to(&url).into_response();
    session::set_login(&mut response, &state.site, &login_state);
    Ok(response)
}

pub async fn callback(
    State(state): State<AppState>,
    source: Source,
    headers: HeaderMap,
    Query(query): Query<CallbackQuery>,
) -> Result<Response, PageError> {
    let Some(provider) = state.oidc.clone() else {
        return Err(ApiError::NotFound("single sign-on is not configured here".into()).into());
    };
    let refuse = |why: String| refused(&state, &source, why);
    if let Some(error) = &query.error {
        let detail = query.error_description.as_deref().unwrap_or_default();
        return refuse(format!("the provider said {error}: {detail}")).await;
    }
    if let Some(iss) = &query.iss
        && iss.trim_end_matches('/') != provider.issuer().trim_end_matches('/')
    {
        return refuse(format!(
            "the response names issuer {iss:?}, not {}: it was meant for another provider",
            provider.issuer()
        ))
        .await;
    }
    let same_browser = session::login_cookie(&headers, &state.site)
        .is_some_and(|cookie| csrf::constant_time_eq(cookie.as_bytes(), query.state.as_bytes()));
    if query.state.is_empty() || !same_browser {
        return refuse("this sign-in did not start in this browser".into()).await;
    }
    let now = Utc::now();
    let mut conn = state.store.pool().acquire().await?;
    let Some(pending) =
        web_sessions::take_login(&mut conn, &session::hash(&query.state), now).await?
    else {
        return refuse("this sign-in was already used or is more than 10 minutes old".into()).await;
    };
    drop(conn);
    let (claims, token_expires) = match provider
        .redeem(&query.code, &pending.pkce_verifier, &pending.nonce)
        .await
    {
        Ok(redeemed) => redeemed,
        Err(error) => return refuse(error.to_string()).await,
    };
    let config = provider.config();
    let name = claims.username(&config.username_claim);
    if name.is_empty() {
        return refuse("the provider named nobody (no subject)".into()).await;
    }
    let groups = claims.groups(&config.groups_claim);
    let expires = (now + config.session_lifetime).min(token_expires);
    let secret = session::new_secret();
    let detail = match groups.len() {
        0 => format!("single sign-on at {}", provider.issuer()),
        _ => format!(
            "single sign-on at {}; groups: {}",
            provider.issuer(),
            groups.join(", ")
        ),
    };
    let opened = NewSession {
        id_hash: &session::hash(&secret),
        username: &name,
        subject: claims.subject(),
        issuer: provider.issuer(),
        groups: &groups,
        expires_at: expires,
        source: &source.0,
    };
    let signed_in = NewAuditEvent {
        actor: &name,
        action: "sign-in",
        subject: &name,
        detail: &detail,
        source: &source.0,
    };
    let mut tx = state.store.pool().begin().await?;
    // A browser signing in again (its session expired) leaves no second live session.
    if let Some(old) = session::cookie(&headers, &state.site) {
        web_sessions::revoke(&mut tx, &session::hash(&old), now).await?;
    }
    web_sessions::open(&mut tx, &opened, now).await?;
    audit::record(&mut tx, &signed_in, now).await?;
    tx.commit().await?;
    let mut response = Redirect::to(safe_next(&pending.next)).into_response();
    session::set_session(&mut response, &state.site, &secret, expires);
    session::clear_login(&mut response, &state.site);
    Ok(response)
}

/// The sign-in page saying why, recorded in the audit trail; the sign-in cookie is cleared.
async fn refused(state: &AppState, source: &Source, why: String) -> Result<Response, PageError> {
    tracing::warn!(reason = %why, "a single sign-on was refused");
    let event = NewAuditEvent {
        actor: "unknown",
        action: "sign-in-refused",
        subject: "",
        detail: &why,
        source: &source.0,
    };
    let mut conn = state.store.pool().acquire().await?;
    audit::record(&mut conn, &event, Utc::now()).await?;
    let problem = format!("Signing in failed: {why}.");
    let mut response = signin::page(&state.site, "/", &problem, StatusCode::UNAUTHORIZED);
    session::clear_login(&mut response, &state.site);
    Ok(response)
}
