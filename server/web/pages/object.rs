//! `/objects/{cluster}/{kind}/{namespace}/{name}` (`_` for the empty namespace of
//! cluster-scoped objects): one object in full.

use super::render;
use crate::sources::actions::{Action, takes_actions};
use crate::web::AppState;
use crate::web::auth::Identity;
use crate::web::error::PageResult;
use crate::web::scope::Scope;
use crate::web::views::icons::Icon as _;
use crate::web::views::object::{ObjectDetail, key_from_path};
use crate::web::views::present::Live;
use askama::Template;
use axum::extract::{Extension, OriginalUri, Path, State};
use axum::response::Response;
use chrono::Utc;

#[derive(Template)]
#[template(path = "object.html")]
struct ObjectPage {
    view: ObjectDetail,
    live: Live,
    access: &'static str,
    /// The actions this identity may take on it: (action, confirmation page).
    actions: Vec<(&'static str, String)>,
}

pub async fn page(
    State(state): State<AppState>,
    Extension(identity): Extension<Identity>,
    Extension(scope): Extension<Scope>,
    OriginalUri(uri): OriginalUri,
    Path((cluster, kind, namespace, name)): Path<(String, String, String, String)>,
) -> PageResult<Response> {
    let key = key_from_path(cluster, &kind, &namespace, name)?;
    let now = Utc::now();
    let site = scope.site(&state.site);
    let view = ObjectDetail::load(&state.store, &site, &scope, &key, now).await?;
    let may_act = state.actions.is_some()
        && takes_actions(key.kind)
        && identity.is_among(&state.site.actions.allowed);
    let actions = match may_act {
        false => Vec::new(),
        true => {
            let page = uri.path().replacen("/objects/", "/actions/", 1);
            let suspended = view.object.verdict.state == crate::health::State::Suspended;
            let offered = match suspended {
                true => [Action::Reconcile, Action::Resume],
                false => [Action::Reconcile, Action::Suspend],
            };
            offered
                .into_iter()
                .map(|a| (a.as_str(), format!("{page}/{}", a.as_str())))
                .collect()
        }
    };
    render(&ObjectPage {
        view,
        live: Live::new(&uri, now),
        access: state.site.access_note(),
        actions,
    })
}
