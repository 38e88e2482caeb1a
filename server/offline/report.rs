//! The `evaluate` JSON contract, built field by field so it cannot drift with internal types:
//! `{evaluated_at, cluster, objects, root_causes, domains, dependencies, co_ownerships, ignored,
//! skipped}`.

use super::{Ignored, Skipped};
use crate::health::{DomainSpec, Input, Thresholds, evaluate};
use crate::model::Object;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};
use std::borrow::Cow;

/// Evaluates `objects` as the cluster `cluster` (objects read from files carry a placeholder
/// cluster name, replaced here) and returns the report printed on stdout.
pub fn report(
    objects: &[Object],
    skipped: &[Skipped],
    ignored: &Ignored,
    cluster: &str,
    now: DateTime<Utc>,
    thresholds: &Thresholds,
    domains: &[DomainSpec],
) -> Value {
    let objects: Cow<[Object]> = if objects.iter().all(|o| o.cluster == cluster) {
        Cow::Borrowed(objects)
    } else {
        Cow::Owned(
            objects
                .iter()
                .map(|o| Object {
                    cluster: cluster.to_string(),
                    ..o.clone()
                })
                .collect(),
        )
    };
    let evaluation = evaluate(&Input {
        objects: &objects,
        clusters: &[],
        domains,
        thresholds,
        now,
        seen_in_progress: &Default::default(),
    });
    let verdicts: Vec<Value> = evaluation
        .objects
        .iter()
        .map(|v| {
            json!({
                "id": v.id, "cluster": v.cluster, "kind": v.kind, "namespace": v.namespace, "name": v.name,
                "state": v.state, "since": v.since.map(rfc3339), "reason": v.reason, "message": v.message,
                "root_causes": v.root_causes,
            })
        })
        .collect();
    let root_causes: Vec<Value> = evaluation
        .root_causes
        .iter()
        .map(|r| json!({"id": r.id, "state": r.state, "reason": r.reason, "message": r.message, "affected": r.affected}))
        .collect();
    let skipped: Vec<Value> = skipped
        .iter()
        .map(|s| json!({"document": s.document, "reason": s.reason}))
        .collect();
    json!({
        "evaluated_at": rfc3339(now),
        "cluster": cluster,
        "objects": verdicts,
        "root_causes": root_causes,
        "domains": evaluation.domains,
        "dependencies": evaluation.dependencies,
        "co_ownerships": evaluation.co_ownerships,
        "ignored": {"count": ignored.count, "kinds": ignored.kinds},
        "skipped": skipped,
    })
}

fn rfc3339(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}
