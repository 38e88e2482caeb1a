//! Two evaluations are equal exactly when every field is: the collector publishes the fleet
//! again when a re-evaluated cluster's evaluation differs from the one it kept (otherwise
//! only on its periodic refresh).

use super::testkit::*;
use super::verdict::{CoOwnership, CrdProvider, Dependency, DomainVerdict};
use super::{Evaluation, State};
use crate::model::ObjectId;

/// A failing Kustomization with its source and the controllers: verdicts, a root cause and
/// the controllers found; one entry is added to each of the other lists.
fn evaluation() -> Evaluation {
    let mut values = flux_controllers();
    values.push(git_repository("apps", "main@sha1:1111111"));
    values.push(with_conditions(
        kustomization("apps", &[]),
        vec![not_ready("BuildFailed", "kustomize build failed", 30)],
    ));
    let mut evaluation = run(&values).evaluation;
    let some_id = evaluation.objects[0].id.clone();
    evaluation.domains.push(DomainVerdict {
        domain: "payments".into(),
        cluster: "prod".into(),
        version: Some("1.4.2".into()),
        offered: None,
        state: State::Healthy,
        fully_healthy: true,
        objects: 1,
        healthy: 1,
        blockers: vec![],
    });
    evaluation.dependencies.push(Dependency {
        cluster: "prod".into(),
        provider: some_id.clone(),
        consumer: some_id.clone(),
        object: "Namespace/apps".into(),
    });
    evaluation.co_ownerships.push(CoOwnership {
        cluster: "prod".into(),
        object: "Namespace/apps".into(),
        providers: vec![some_id.clone()],
    });
    evaluation.crd_providers.push(CrdProvider {
        cluster: "prod".into(),
        group: "example.io".into(),
        kind: "Widget".into(),
        crd: "widgets.example.io".into(),
        provider: some_id,
    });
    evaluation
}

/// One field of an evaluation changed in place.
type Change = fn(&mut Evaluation);

#[test]
fn an_evaluation_differs_when_any_one_of_its_lists_differs() {
    let base = evaluation();
    assert!(!base.objects.is_empty() && !base.root_causes.is_empty());
    assert!(!base.controllers.is_empty(), "the controllers were matched");
    assert_eq!(base, base.clone());
    let changes: [(&str, Change); 7] = [
        ("objects", |e| e.objects[0].message.push('!')),
        ("root_causes", |e| e.root_causes[0].message.push('!')),
        ("domains", |e| e.domains[0].healthy = 0),
        ("dependencies", |e| e.dependencies[0].object.push('!')),
        ("co_ownerships", |e| e.co_ownerships.clear()),
        ("crd_providers", |e| e.crd_providers[0].kind.push('!')),
        ("controllers", |e| e.controllers.push(ObjectId("x".into()))),
    ];
    for (field, change) in changes {
        let mut changed = base.clone();
        change(&mut changed);
        assert_ne!(base, changed, "a change in {field} alone");
        assert_ne!(
            changed, base,
            "a change in {field} alone, compared the other way"
        );
    }
}

/// The false green the order of comparison must not cause: a Deployment whose status, as the
/// Deployment controller writes it during a rollout, has 3 replicas updated and 2 available is
/// no longer healthy, while the cluster's lists beside the verdicts stay the same. The
/// evaluation must differ from the one kept while it was healthy, or the collector would keep
/// publishing `healthy`.
#[test]
fn a_change_in_the_verdicts_alone_makes_the_evaluation_differ() {
    let healthy = run(&[deployment("apps", "web", 2, 2)]);
    let rolling = run(&[deployment("apps", "web", 3, 2)]);
    healthy.assert_verdict("Deployment", "apps", "web", State::Healthy, "2/2 available");
    rolling.assert_verdict(
        "Deployment",
        "apps",
        "web",
        State::Progressing,
        "2/3 available, 3 updated",
    );
    let (before, after) = (&healthy.evaluation, &rolling.evaluation);
    assert!(
        before.root_causes.is_empty() && after.root_causes.is_empty(),
        "a rollout in progress is no root cause: only the verdicts differ"
    );
    assert_eq!(
        (&before.domains, &before.controllers),
        (&after.domains, &after.controllers)
    );
    assert_ne!(*before, *after);
}
