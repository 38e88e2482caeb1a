//! "What reconciles this?": for any object, the Flux object that applied it (from Flux's own
//! labels), that object's source and revisions, and the controller that reconciles it.

use super::graph::{applier_id, reconciler};
use super::object::{ReconciledBy, Revisions, find, reconciled};
use super::present::{ObjectItem, body_of, parse_state};
use crate::store::{ObjectKey, Store, key_of_id};
use crate::web::error::ApiError;
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
    pub async fn load(
        store: &Store,
        site: &Site,
        key: &ObjectKey,
        now: DateTime<Utc>,
    ) -> Result<OwnerView, ApiError> {
        let record = find(store, key).await?;
        let body = body_of(&record);
        let applier_record = match body
            .as_ref()
            .and_then(applier_id)
            .and_then(|id| key_of_id(&id))
        {
            Some(applier) => store.object(&applier).await?,
            None => None,
        };
        // The Flux object responsible: the applier, or the object itself when it is one.
        let responsible = applier_record.clone().or_else(|| {
            body.as_ref()
                .is_some_and(|o| o.kind.is_flux())
                .then(|| record.clone())
        });
        let responsible_body = responsible.as_ref().and_then(body_of);
        let source_record = match responsible_body
            .as_ref()
            .and_then(|o| o.spec.source_ref.as_ref())
        {
            Some(s) => {
                let key = ObjectKey {
                    cluster: record.cluster.clone(),
                    kind: s.kind.clone(),
                    namespace: s.namespace.clone(),
                    name: s.name.clone(),
                };
                store.object(&key).await?
            }
            None => None,
        };
        let reconciled_by = match (&responsible, responsible_body.as_ref().and_then(reconciler)) {
            (Some(owner), Some(r)) => {
                let deployment =
                    key_of_id(&super::graph::deployment_id(&owner.cluster, &r.deployment));
                let state = match deployment {
                    Some(k) => store.object(&k).await?.map(|d| parse_state(&d.state)),
                    None => None,
                };
                Some(reconciled(owner, responsible_body.as_ref(), r, |_| state))
            }
            _ => None,
        };
        let status = responsible_body.as_ref().map(|o| &o.status);
        Ok(OwnerView {
            revision: Revisions {
                offered: source_record
                    .as_ref()
                    .and_then(body_of)
                    .and_then(|s| s.status.artifact_revision),
                attempted: status.and_then(|s| s.last_attempted_revision.clone()),
                applied: status.and_then(|s| s.last_applied_revision.clone()),
                source: source_record.as_ref().map(|s| ObjectItem::new(s, now).id),
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
        })
    }
}
