//! The rows a re-evaluated cluster gives: its verdicts are matched to those last written in
//! one pass over both sorted lists, so every change, body change, removal and first sighting
//! must come out as the row (and transition) it is, and nothing else.

use super::Snapshot;
use super::changes::Written;
use crate::health::testkit::*;
use crate::health::{Evaluation, State};
use crate::model::ObjectId;
use crate::sources::SourceEvent;
use crate::store::{ChangeSet, JsonText, ObjectRecord, ObjectVerdict};
use serde_json::{Value, json};
use sqlx::types::Json;
use std::sync::Arc;

fn fleet(apps_ready: bool) -> Vec<Value> {
    let apps = if apps_ready {
        kustomization("apps", &[])
    } else {
        with_conditions(
            kustomization("apps", &[]),
            vec![not_ready("BuildFailed", "kustomize build failed", 5)],
        )
    };
    vec![
        git_repository("flux-system", SHA),
        apps,
        kustomization("infra", &[]),
        applied_by(
            deployment("apps", "api", 2, 2),
            "kustomize",
            "flux-system",
            "apps",
        ),
    ]
}

fn evaluation_of(values: &[Value]) -> (Arc<Evaluation>, Snapshot) {
    let mut snapshot = Snapshot::default();
    for value in values {
        snapshot.apply(SourceEvent::Apply(Box::new(parse(value))));
    }
    (Arc::new(run(values).evaluation), snapshot)
}

/// What was written after a first round of the healthy fleet, and that round's evaluation.
fn written_once() -> (Written, Arc<Evaluation>) {
    let mut written = Written::default();
    let (first, snapshot) = evaluation_of(&fleet(true));
    written_rows(&mut written, Some(&first), &snapshot, &[]);
    (written, first)
}

fn written_rows(
    written: &mut Written,
    evaluation: Option<&Arc<Evaluation>>,
    snapshot: &Snapshot,
    touched: &[&ObjectId],
) -> ChangeSet {
    let evaluated = evaluation.map(Arc::as_ref);
    let changes = written.object_changes(CLUSTER, evaluated, snapshot, touched, now());
    written.handed_over(CLUSTER, evaluation);
    changes
}

fn names(changes: &ChangeSet) -> (Vec<String>, Vec<String>, Vec<String>) {
    let upserts = changes.upserts.iter().map(|r| r.key.name.clone()).collect();
    let deletes = changes.deletes.iter().map(|k| k.name.clone()).collect();
    let transitions = changes
        .transitions
        .iter()
        .map(|t| {
            format!(
                "{}: {:?} -> {}",
                t.key.name,
                t.from.map(|s| s.as_str()),
                t.to.as_str()
            )
        })
        .collect();
    (upserts, deletes, transitions)
}

fn id_of(evaluation: &Evaluation, name: &str) -> ObjectId {
    let verdict = evaluation.objects.iter().find(|v| v.name == name);
    verdict.expect("the object is evaluated").id.clone()
}

#[test]
fn the_first_write_of_a_cluster_gives_every_row_and_a_first_transition_each() {
    let (evaluation, snapshot) = evaluation_of(&fleet(true));
    let changes = written_rows(&mut Written::default(), Some(&evaluation), &snapshot, &[]);
    assert_eq!(changes.upserts.len(), evaluation.objects.len());
    assert!(changes.deletes.is_empty());
    assert_eq!(changes.transitions.len(), evaluation.objects.len());
    assert!(changes.transitions.iter().all(|t| t.from.is_none()));
    let api = changes
        .upserts
        .iter()
        .find(|r| r.key.name == "api")
        .unwrap();
    let body: Value = serde_json::from_str(api.body.as_str()).unwrap();
    assert_eq!(
        body["name"],
        json!("api"),
        "the row carries the object's body"
    );
}

#[test]
fn an_equal_evaluation_gives_no_rows_and_a_changed_verdict_gives_its_own() {
    let (mut written, first) = written_once();
    let (again, snapshot) = evaluation_of(&fleet(true));
    assert!(!Arc::ptr_eq(&first, &again));
    let unchanged = written_rows(&mut written, Some(&again), &snapshot, &[]);
    assert!(unchanged.is_empty(), "{unchanged:?}");
    let (failing, snapshot) = evaluation_of(&fleet(false));
    let changes = written_rows(&mut written, Some(&failing), &snapshot, &[]);
    let (upserts, deletes, transitions) = names(&changes);
    assert!(upserts.contains(&"apps".to_string()), "{upserts:?}");
    assert!(!upserts.contains(&"infra".to_string()), "{upserts:?}");
    assert!(deletes.is_empty());
    assert!(
        transitions.contains(&"apps: Some(\"healthy\") -> failed".to_string()),
        "{transitions:?}"
    );
}

#[test]
fn a_body_change_alone_rewrites_that_row_without_a_transition() {
    let (mut written, _) = written_once();
    let (again, snapshot) = evaluation_of(&fleet(true));
    let infra = id_of(&again, "infra");
    let changes = written_rows(&mut written, Some(&again), &snapshot, &[&infra]);
    assert_eq!(names(&changes), (vec!["infra".to_string()], vec![], vec![]));
}

#[test]
fn objects_that_went_and_a_cluster_that_went_are_deleted() {
    let (mut written, _) = written_once();
    let mut fewer = fleet(true);
    fewer.remove(2);
    let (fewer, snapshot) = evaluation_of(&fewer);
    let changes = written_rows(&mut written, Some(&fewer), &snapshot, &[]);
    assert_eq!(names(&changes), (vec![], vec!["infra".to_string()], vec![]));
    let gone = written_rows(&mut written, None, &snapshot, &[]);
    let (upserts, mut deletes, transitions) = names(&gone);
    deletes.sort();
    assert_eq!((upserts, transitions), (vec![], vec![]));
    assert_eq!(deletes, ["api", "apps", "flux-system"]);
    let back = written_rows(&mut written, Some(&fewer), &snapshot, &[]);
    assert_eq!(back.upserts.len(), fewer.objects.len(), "written afresh");
}

/// What the store holds, as a cluster taken over reads it: only what differs is written.
fn records(evaluation: &Evaluation) -> Vec<ObjectRecord> {
    evaluation
        .objects
        .iter()
        .map(|v| ObjectRecord {
            verdict: ObjectVerdict::new(
                v.id.clone(),
                v.state,
                v.since,
                v.reason.clone(),
                v.message.clone(),
            ),
            root_causes: json!(v.root_causes),
            domains: v.domains.clone(),
            body: serde_json::from_str(JsonText::of(&()).as_str()).unwrap(),
            updated_at: now(),
            edges: Json(v.edges.clone()),
        })
        .collect()
}

#[test]
fn a_cluster_taken_over_writes_only_what_differs_from_the_store() {
    let (stored, _) = evaluation_of(&fleet(true));
    let mut written = Written::default();
    written.seed(&records(&stored));
    let (same, snapshot) = evaluation_of(&fleet(true));
    assert!(written_rows(&mut written, Some(&same), &snapshot, &[]).is_empty());
    let mut written = Written::default();
    written.seed(&records(&stored));
    let (failing, snapshot) = evaluation_of(&fleet(false));
    let changes = written_rows(&mut written, Some(&failing), &snapshot, &[]);
    assert!(
        changes.transitions.iter().any(|t| t.key.name == "apps"
            && t.from == Some(State::Healthy)
            && t.to == State::Failed),
        "{:?}",
        names(&changes)
    );
    assert!(changes.deletes.is_empty());
}
