//! `/objects`: every object, filtered by cluster, cluster label, domain, kind, namespace,
//! state and name, paginated; the filters live in the URL so any view can be shared.

use super::render;
use crate::health::State as Health;
use crate::model::Kind;
use crate::web::AppState;
use crate::web::error::PageResult;
use crate::web::scope::Scope;
use crate::web::views::filters::ObjectQuery;
use crate::web::views::icons::Icon as _;
use crate::web::views::present::{Live, ObjectItem};
use askama::Template;
use axum::extract::{Extension, OriginalUri, Query, State};
use axum::response::Response;
use chrono::Utc;

#[derive(Template)]
#[template(path = "objects.html")]
struct ObjectsPage {
    query: ObjectQuery,
    items: Vec<ObjectItem>,
    total: i64,
    first: i64,
    last: i64,
    previous: Option<String>,
    next: Option<String>,
    clusters: Vec<String>,
    domains: Vec<String>,
    kinds: Vec<&'static str>,
    states: [Health; 9],
    live: Live,
    access: &'static str,
}

pub async fn page(
    State(state): State<AppState>,
    Extension(scope): Extension<Scope>,
    OriginalUri(uri): OriginalUri,
    Query(params): Query<Vec<(String, String)>>,
) -> PageResult<Response> {
    let site = scope.site(&state.site);
    let query = ObjectQuery::parse(&params, &site)?;
    let now = Utc::now();
    let page = query.page(&state.store, &site, &scope, now).await?;
    let shown = page.items.len() as i64;
    render(&ObjectsPage {
        items: page
            .items
            .iter()
            .map(|r| scope.item(ObjectItem::new(r, now)))
            .collect(),
        first: if shown == 0 { 0 } else { query.offset + 1 },
        last: query.offset + shown,
        previous: (query.offset > 0).then(|| query.link((query.offset - query.limit).max(0))),
        next: (query.offset + shown < page.total).then(|| query.link(query.offset + query.limit)),
        total: page.total,
        clusters: site.cluster_order.clone(),
        domains: site.domains.iter().map(|d| d.name.clone()).collect(),
        kinds: Kind::ALL.iter().map(|k| k.as_str()).collect(),
        states: Health::BY_SEVERITY,
        live: Live::new(&uri, now),
        access: state.site.access_note(),
        query,
    })
}
