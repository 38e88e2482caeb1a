//! INTERIM: a placeholder evaluation used only until the real engine lands (same signature).

use super::{ClusterInfo, DomainSpec, Evaluation, State, Thresholds, Verdict};
use crate::model::Object;
use chrono::{DateTime, Utc};

pub struct Input<'a> {
    pub objects: &'a [Object],
    pub clusters: &'a [ClusterInfo],
    pub domains: &'a [DomainSpec],
    pub thresholds: &'a Thresholds,
    pub now: DateTime<Utc>,
}

pub fn evaluate(input: &Input) -> Evaluation {
    let _ = (input.clusters, input.domains, input.thresholds, input.now);
    let objects = input
        .objects
        .iter()
        .map(|o| {
            let ready = o.condition("Ready").is_some_and(|c| c.is_true());
            Verdict {
                id: o.id(),
                cluster: o.cluster.clone(),
                kind: o.kind,
                namespace: o.namespace.clone(),
                name: o.name.clone(),
                state: if ready { State::Healthy } else { State::Failed },
                since: None,
                reason: String::new(),
                message: String::new(),
                root_causes: Vec::new(),
            }
        })
        .collect();
    Evaluation {
        objects,
        ..Evaluation::default()
    }
}
