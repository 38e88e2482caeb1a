//! The audit trail's web side: where a request came from (every record says), the access
//! policy recorded at start-up when it changed, and `/audit` with `/api/v1/audit`.

use super::client::peer;
use super::state::Site;
use crate::store::Store;
use crate::store::audit::{self, NewAuditEvent};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use chrono::Utc;
use std::convert::Infallible;

/// The address a request came from, as the audit trail records it ("in-process" for
/// requests made in process).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Source {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let from = peer(&parts.extensions).map_or_else(|| "in-process".into(), |ip| ip.to_string());
        Ok(Source(from))
    }
}

/// The actor of what fleetglass does itself.
pub const FLEETGLASS: &str = "fleetglass";

/// Records the access policy (who may sign in and how) when it differs from the last one
/// recorded: a policy change made in the configuration shows in the trail at the start that
/// applied it. Says whether it recorded.
pub async fn record_policy(store: &Store, site: &Site) -> Result<bool, sqlx::Error> {
    let policy = site.policy();
    let mut tx = store.pool().begin().await?;
    // One process at a time: replicas starting together record a change once.
    sqlx::query!("SELECT pg_advisory_xact_lock(hashtext('fleetglass_audit_policy'))")
        .execute(&mut *tx)
        .await?;
    if audit::last_policy(&mut tx).await?.as_deref() == Some(policy.as_str()) {
        return Ok(false);
    }
    let event = NewAuditEvent {
        actor: FLEETGLASS,
        action: "policy-changed",
        subject: "web.auth",
        detail: &policy,
        source: "configuration",
    };
    audit::record(&mut tx, &event, Utc::now()).await?;
    tx.commit().await?;
    Ok(true)
}
