//! Transitions older than the retention period are deleted; newer ones stay.

use crate::common;

use chrono::{TimeDelta, Utc};
use fleetglass::health::State;
use fleetglass::ingest::retention::prune;
use fleetglass::model::Kind;
use fleetglass::store::{ChangeSet, ObjectKey, TransitionRow, write_changes};

#[tokio::test]
async fn old_transitions_are_deleted_and_recent_ones_kept() {
    let store = common::fresh_store().await;
    let key = ObjectKey {
        cluster: "c".into(),
        kind: Kind::Kustomization,
        namespace: "flux-system".into(),
        name: "apps".into(),
    };
    let now = Utc::now();
    let transition = |days: i64, to: State| TransitionRow {
        key: key.clone(),
        from: None,
        to,
        reason: String::new(),
        message: String::new(),
        at: now - TimeDelta::days(days),
    };
    let changes = ChangeSet {
        transitions: vec![
            transition(40, State::Failed),
            transition(31, State::Healthy),
            transition(2, State::Stuck),
        ],
        ..ChangeSet::default()
    };
    let mut tx = store.pool().begin().await.unwrap();
    write_changes(&mut tx, &changes, now).await.unwrap();
    tx.commit().await.unwrap();

    assert_eq!(
        prune(
            &store,
            &fleetglass::config::Retention {
                transitions: TimeDelta::days(30),
                ..Default::default()
            }
        )
        .await
        .unwrap(),
        2
    );
    let left = store.transitions(&key, 10).await.unwrap();
    let states: Vec<&str> = left.iter().map(|t| t.to_state.as_str()).collect();
    assert_eq!(states, vec!["stuck"]);
}

/// Audit events older than `retention.audit` go; newer ones stay.
#[tokio::test]
async fn old_audit_events_are_deleted() {
    let store = common::fresh_store().await;
    let now = Utc::now();
    let mut conn = store.pool().acquire().await.unwrap();
    for (days, action) in [(400, "sign-in"), (2, "sign-out")] {
        let event = fleetglass::store::NewAuditEvent {
            actor: "token ci",
            action,
            subject: "ci",
            detail: "",
            source: "in-process",
        };
        fleetglass::store::audit::record(&mut conn, &event, now - TimeDelta::days(days))
            .await
            .unwrap();
    }
    prune(&store, &fleetglass::config::Retention::default())
        .await
        .unwrap();
    let left = store.audit_events(10, None).await.unwrap();
    let actions: Vec<&str> = left.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, vec!["sign-out"]);
}
