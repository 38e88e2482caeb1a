//! `/actions/{cluster}/{kind}/{namespace}/{name}/{action}`: reconcile now, suspend, resume,
//! for those `web.actions.allowed` names. The GET is the confirmation (what will happen, as
//! which `flux` command); the POST, with the form's CSRF token, patches the object on its
//! cluster and records it in the audit trail whether it worked or not, then goes back to the
//! object's page, where the controller's answer shows as its status arrives.

use super::render;
use crate::model::{Kind, ObjectId};
use crate::sources::actions::{Action, Target, requested_at, takes_actions};
use crate::store::audit::{self, NewAuditEvent};
use crate::web::AppState;
use crate::web::audit::Source;
use crate::web::auth::Identity;
use crate::web::csrf;
use crate::web::error::{ApiError, PageResult};
use crate::web::scope::Scope;
use crate::web::views::object::{find, key_from_path, missing};
use crate::web::views::present::{body_of, object_href};
use askama::Template;
use axum::Form;
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::Utc;
use serde::Deserialize;

pub const ACTION: &str = "/actions/{cluster}/{kind}/{namespace}/{name}/{action}";

type ActionPath = Path<(String, String, String, String, String)>;

#[derive(Template)]
#[template(path = "action.html")]
struct ConfirmPage {
    action: &'static str,
    what: String,
    effect: &'static str,
    object: String,
    object_href: String,
    csrf: String,
    problem: String,
    access: &'static str,
}

#[derive(Deserialize)]
pub struct ActionForm {
    #[serde(default)]
    csrf: String,
}

/// What the request is about, once it is known to be allowed: refused before anything is
/// looked up for someone who may not act (so no object's existence is told to them).
struct Asked {
    action: Action,
    target_id: ObjectId,
    kind: Kind,
    api_version: String,
}

async fn asked(
    state: &AppState,
    identity: &Identity,
    scope: &Scope,
    (cluster, kind, namespace, name, action): (String, String, String, String, String),
) -> PageResult<Asked> {
    if state.actions.is_none() {
        return Err(ApiError::NotFound(
            "actions are off here (web.actions.enabled is false)".into(),
        )
        .into());
    }
    if !identity.is_among(&state.site.actions.allowed) {
        return Err(ApiError::Forbidden(format!(
            "{} may not act on objects here (web.actions.allowed)",
            identity.requester()
        ))
        .into());
    }
    let action = Action::named(&action).ok_or_else(|| {
        ApiError::NotFound(format!(
            "no action {action:?}: reconcile, suspend or resume"
        ))
    })?;
    let key = key_from_path(cluster, &kind, &namespace, name)?;
    if !scope.sees_object(&key.cluster, &key.namespace) {
        return Err(missing(&key).into());
    }
    if !takes_actions(key.kind) {
        return Err(ApiError::BadRequest(format!(
            "{} takes no actions: only Kustomizations, HelmReleases and sources do",
            key.kind
        ))
        .into());
    }
    let record = find(&state.store, &key).await?;
    let api_version = body_of(&record)
        .map(|o| o.api_version.to_string())
        .ok_or_else(|| ApiError::Internal(format!("{} is stored unreadably", record.verdict.id)))?;
    Ok(Asked {
        action,
        target_id: record.verdict.id,
        kind: key.kind,
        api_version,
    })
}

fn what(asked: &Asked) -> String {
    let (cluster, kind, namespace, name) = asked.target_id.parts().unwrap_or_default();
    let verb = match asked.action {
        Action::Reconcile => "Reconcile",
        Action::Suspend => "Suspend",
        Action::Resume => "Resume",
    };
    format!("{verb} {kind} {namespace}/{name} on {cluster}")
}

fn effect(action: Action) -> &'static str {
    match action {
        Action::Reconcile => {
            "sets the reconcile.fluxcd.io/requestedAt annotation to now, as flux reconcile does: \
             the controller reconciles at once and records the request as handled"
        }
        Action::Suspend => {
            "sets spec.suspend: true, as flux suspend does: the controller stops reconciling it \
             until it is resumed"
        }
        Action::Resume => {
            "sets spec.suspend: false, as flux resume does: the controller reconciles it again"
        }
    }
}

fn href_of(id: &ObjectId) -> String {
    let (cluster, kind, namespace, name) = id.parts().unwrap_or_default();
    object_href(cluster, kind, namespace, name)
}

fn confirm_page(state: &AppState, asked: &Asked, csrf: String, problem: String) -> ConfirmPage {
    ConfirmPage {
        action: asked.action.as_str(),
        what: what(asked),
        effect: effect(asked.action),
        object: asked.target_id.to_string(),
        object_href: href_of(&asked.target_id),
        csrf,
        problem,
        access: state.site.access_note(),
    }
}

pub async fn confirm(
    State(state): State<AppState>,
    Extension(identity): Extension<Identity>,
    Extension(scope): Extension<Scope>,
    headers: HeaderMap,
    Path(path): ActionPath,
) -> PageResult<Response> {
    let asked = asked(&state, &identity, &scope, path).await?;
    let (token, cookie) = csrf::token(
        &headers,
        &state.site,
        &state.csrf_key,
        &identity.requester(),
    );
    let mut response = render(&confirm_page(&state, &asked, token, String::new()))?;
    if let Some(cookie) = cookie
        && let Ok(value) = cookie.parse()
    {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    Ok(response)
}

pub async fn act(
    State(state): State<AppState>,
    Extension(identity): Extension<Identity>,
    Extension(scope): Extension<Scope>,
    source: Source,
    headers: HeaderMap,
    Path(path): ActionPath,
    Form(form): Form<ActionForm>,
) -> PageResult<Response> {
    let asked = asked(&state, &identity, &scope, path).await?;
    let requester = identity.requester();
    if !csrf::verify(
        &headers,
        &state.site,
        &state.csrf_key,
        &requester,
        &form.csrf,
    ) {
        return Err(ApiError::Forbidden(
            "this form is out of date or came from another site; reload it and try again".into(),
        )
        .into());
    }
    let Some(actuator) = &state.actions else {
        return Err(ApiError::NotFound("actions are off here".into()).into());
    };
    let (cluster, _, namespace, name) = asked.target_id.parts().unwrap_or_default();
    let target = Target {
        cluster,
        kind: asked.kind,
        api_version: &asked.api_version,
        namespace,
        name,
    };
    let now = Utc::now();
    let done = actuator.act(&target, asked.action, now).await;
    let detail = match &done {
        Ok(()) => match asked.action {
            Action::Reconcile => format!("requested at {}", requested_at(now)),
            _ => "done".to_string(),
        },
        Err(error) => format!("failed: {error}"),
    };
    let subject = asked.target_id.to_string();
    let event = NewAuditEvent {
        actor: &requester,
        action: asked.action.as_str(),
        subject: &subject,
        detail: &detail,
        source: &source.0,
    };
    let mut conn = state.store.pool().acquire().await?;
    audit::record(&mut conn, &event, now).await?;
    match done {
        Ok(()) => Ok(Redirect::to(&href_of(&asked.target_id)).into_response()),
        Err(error) => {
            tracing::warn!(%error, object = %subject, "an action failed");
            let mut response = render(&confirm_page(&state, &asked, form.csrf, error.to_string()))?;
            *response.status_mut() = StatusCode::BAD_GATEWAY;
            Ok(response)
        }
    }
}
