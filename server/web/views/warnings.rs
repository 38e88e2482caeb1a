//! Warning events as an object's page shows them: every kept one, its own and its pods'.

use super::present::{Moment, href_of_id, label_of_id};
use crate::model::Warning;
use chrono::{DateTime, Utc};
use serde::Serialize;

/// One Warning event, for the object page and its API.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WarningView {
    /// The object it is about: this one or one of its pods (`cluster/Kind/namespace/name`).
    pub regarding: String,
    pub reason: String,
    pub note: String,
    /// How many times it happened.
    pub count: i32,
    pub last_seen: DateTime<Utc>,
    /// Who reported it (`kubelet`, `helm-controller`…).
    pub reporter: String,
    #[serde(skip)]
    pub label: String,
    #[serde(skip)]
    pub href: String,
    #[serde(skip)]
    pub moment: Moment,
}

impl WarningView {
    pub fn new(warning: &Warning, now: DateTime<Utc>) -> WarningView {
        let regarding = warning.regarding.as_str();
        WarningView {
            regarding: regarding.to_string(),
            reason: warning.reason.clone(),
            note: warning.note.clone(),
            count: warning.count,
            last_seen: warning.last_seen,
            reporter: warning.reporter.clone(),
            label: label_of_id(regarding),
            href: href_of_id(regarding),
            moment: Moment::new(warning.last_seen, now),
        }
    }
}
