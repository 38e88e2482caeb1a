//! `/fragments/logs/{cluster}/{namespace}/{pod}/{container}`: a container's last log lines,
//! read from its cluster when the object page asks (htmx), or why they cannot be shown.

use super::render;
use crate::model::Kind;
use crate::sources::logs::LINES;
use crate::store::ObjectKey;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::scope::Scope;
use crate::web::views::object::missing;
use askama::Template;
use axum::extract::{Extension, Path, State};
use axum::response::Response;

#[derive(Template)]
#[template(path = "logs_fragment.html")]
struct LogsFragment {
    container: String,
    lines: Option<String>,
    problem: Option<String>,
}

pub async fn fragment(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    Path((cluster, namespace, pod, container)): Path<(String, String, String, String)>,
) -> PageResult<Response> {
    if !scope.sees_object(&cluster, &namespace) {
        let key = ObjectKey {
            cluster,
            kind: Kind::Pod,
            namespace,
            name: pod,
        };
        return Err(missing(&key).into());
    }
    let read = match &state.pod_logs {
        None => Err(format!(
            "reading container logs is off: set web.pod_logs: true (and grant pods/log, the fleetglass-reader chart's podLogs: true); the last {LINES} lines would show here"
        )),
        Some(logs) => logs
            .previous(&cluster, &namespace, &pod, &container)
            .await
            .map_err(|error| error.to_string()),
    };
    let (lines, problem) = match read {
        Ok(lines) => (Some(lines), None),
        Err(problem) => (None, Some(problem)),
    };
    render(&LogsFragment {
        container,
        lines,
        problem,
    })
}
