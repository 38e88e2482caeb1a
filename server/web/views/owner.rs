//! "What reconciles this?": for any object, the Flux object that applied it, that object's
//! source and revisions, and the controller that reconciles it, all along the engine's edges.

use super::object::{ReconciledBy, Revisions, find, missing, reconciled};
use super::present::{ObjectItem, body_of};
use crate::health::EdgeKind;
use crate::store::{ObjectKey, Store};
use crate::web::error::ApiError;
use crate::web::scope::Scope;
use crate::web::state::Site;
use chrono::{DateTime, Utc};
use serde::Serialize;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct OwnerView {
    pub object: ObjectItem,
    /// The Kustomization or HelmRelease whose labels are on the object; None when nothing
    /// applied it (a Flux object created by hand, or an object Flux does not manage).
    pub applied_by: Option<ObjectItem>,
    /// The applier's source (or the object's own, for a Flux object nothing applied).
    pub source: Option<ObjectItem>,
    pub revision: Revisions,
    pub reconciled_by: Option<ReconciledBy>,
}

impl OwnerView {
    /// What reconciles the object, as `scope` sees it (one outside it is not found; what
    /// applied it or its source outside it is left out).
    pub async fn load(
        store: &Store,
        site: &Site,
        scope: &Scope,
        key: &ObjectKey,
        now: DateTime<Utc>,
    ) -> Result<OwnerView, ApiError> {
        if !scope.sees_object(&key.cluster, &key.namespace) {
            return Err(missing(key));
        }
        let record = find(store, key).await?;
        let body = body_of(&record);
        let applier_record = store.applier(&record.verdict.id).await?;
        // The Flux object responsible: the applier, or the object itself when it is one.
        let responsible = applier_record.clone().or_else(|| {
            body.as_ref()
                .is_some_and(|o| o.kind.is_flux())
                .then(|| record.clone())
        });
        let responsible_body = responsible.as_ref().and_then(body_of);
        let prerequisites = match &responsible {
            Some(owner) => store.waits_on(owner).await?,
            None => Vec::new(),
        };
        let source_record = prerequisites
            .iter()
            .filter(|l| l.kind == EdgeKind::Source)
            .find_map(|l| l.record.clone());
        let reconciled_by = prerequisites
            .iter()
            .find(|l| l.kind == EdgeKind::Controller)
            .and_then(|l| reconciled(l, responsible_body.as_ref()));
        let status = responsible_body.as_ref().map(|o| &o.status);
        Ok(OwnerView {
            revision: Revisions {
                offered: source_record
                    .as_ref()
                    .and_then(body_of)
                    .and_then(|s| s.status.flux.artifact_revision.clone()),
                attempted: status.and_then(|s| s.flux.last_attempted_revision.clone()),
                applied: status.and_then(|s| s.flux.last_applied_revision.clone()),
                source: source_record
                    .as_ref()
                    .map(|s| ObjectItem::new(s, now).verdict.id.into_string()),
                ..Revisions::default()
            }
            .with_source(
                source_record.as_ref().and_then(body_of).as_ref(),
                &site.commit_links,
            ),
            object: ObjectItem::new(&record, now),
            applied_by: applier_record.as_ref().map(|r| ObjectItem::new(r, now)),
            source: source_record.as_ref().map(|r| ObjectItem::new(r, now)),
            reconciled_by,
        }
        .seen_by(scope))
    }

    fn seen_by(mut self, scope: &Scope) -> OwnerView {
        if scope.is_everything() {
            return self;
        }
        let seen = |item: &ObjectItem| scope.sees_id(item.verdict.id.as_str());
        self.object = scope.item(self.object);
        self.applied_by = self.applied_by.filter(seen).map(|i| scope.item(i));
        self.source = self.source.filter(seen).map(|i| scope.item(i));
        self.revision = self.revision.seen_by(scope);
        self.reconciled_by = self.reconciled_by.map(|by| by.seen_by(scope));
        self
    }
}
