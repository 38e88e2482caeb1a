//! The alert lifecycle as a pure function: given an alert as stored (if any), the incident as
//! the newest evaluation shows it (its root cause on each cluster it hits, if any), the policy,
//! the silences and `now`, what the alert becomes and which notifications that takes. No I/O,
//! so every transition is unit-tested.
//!
//! pending → firing (once the cause has been a problem for the rule's `for`) → resolved (once
//! the last cluster has stayed clear for the flap window, so a flapping cause pages once).
//! While firing: an update when a cluster joins or leaves or what it affects changes, a
//! re-notification every `renotify`.

use super::rules::Policy;
use super::silences::Silence;
use super::{Alert, AlertStatus, CauseGroup, Event};
use chrono::{DateTime, Utc};

/// What one evaluation does to one alert.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The alert to store; None deletes it (a pending alert whose cause cleared: never sent).
    pub alert: Option<Alert>,
    pub events: Vec<Event>,
    /// The events are recorded but not sent (silenced, or about an alert nobody was told of).
    pub recorded_only: bool,
}

pub struct Context<'a> {
    pub policy: &'a Policy,
    pub silences: &'a [Silence],
    pub now: DateTime<Utc>,
}

impl Context<'_> {
    /// An alert is silenced when every cluster it is on is: a silence for one cluster does not
    /// hush the same cause on another. The silence named is the first member's.
    fn silence_for(&self, alert: &Alert) -> Option<i64> {
        let silence = |root_cause: &str, cluster: &str, domains: &[String]| {
            self.silences
                .iter()
                .find(|s| s.matches(root_cause, cluster, domains, self.now))
                .map(|s| s.id)
        };
        if alert.members.is_empty() {
            return silence(alert.root_cause.as_str(), &alert.cluster, &alert.domains);
        }
        let ids: Option<Vec<i64>> = alert
            .members
            .iter()
            .map(|m| silence(m.verdict.id.as_str(), &m.verdict.cluster, &m.domains))
            .collect();
        ids.and_then(|ids| ids.first().copied())
    }
}

pub fn step(existing: Option<Alert>, group: Option<&CauseGroup>, ctx: &Context) -> Step {
    let live = group.and_then(|g| g.rule(ctx.policy).map(|rule| (g, rule)));
    match (existing, live) {
        (None, None) => Step::quiet(None),
        (None, Some((group, rule))) => {
            let mut alert = Alert::open(group, rule, ctx.now);
            fire_if_due(&mut alert, rule.for_, ctx)
        }
        (Some(mut alert), Some((group, rule))) => {
            let before = alert.clone();
            alert.refresh(group, rule);
            match alert.status {
                AlertStatus::Pending => fire_if_due(&mut alert, rule.for_, ctx),
                _ => while_firing(alert, &before, ctx),
            }
        }
        (Some(alert), None) => cleared(alert, ctx),
    }
}

impl Step {
    fn quiet(alert: Option<Alert>) -> Step {
        Step {
            alert,
            events: Vec::new(),
            recorded_only: false,
        }
    }
}

fn fire_if_due(alert: &mut Alert, wait: chrono::TimeDelta, ctx: &Context) -> Step {
    let problem_since = alert.since.unwrap_or(alert.first_seen);
    if ctx.now - problem_since < wait {
        return Step::quiet(Some(alert.clone()));
    }
    alert.status = AlertStatus::Firing;
    alert.fired_at = Some(ctx.now);
    alert.silence_id = ctx.silence_for(alert);
    let recorded_only = alert.silence_id.is_some();
    if !recorded_only {
        alert.notified = true;
        alert.last_notified_at = Some(ctx.now);
    }
    Step {
        alert: Some(alert.clone()),
        events: vec![Event::Firing],
        recorded_only,
    }
}

fn while_firing(mut alert: Alert, before: &Alert, ctx: &Context) -> Step {
    alert.silence_id = ctx.silence_for(&alert);
    if alert.silence_id.is_some() {
        // Silenced: keep the record current, tell nobody.
        return Step::quiet(Some(alert));
    }
    let event = if !alert.notified {
        // It fired under a silence that has since ended: now people hear of it.
        alert.notified = true;
        Some(Event::Firing)
    } else if alert
        .last_notified_at
        .is_none_or(|at| ctx.now - at >= ctx.policy.renotify)
    {
        Some(Event::Renotify)
    } else if alert.clusters != before.clusters
        || alert.affected_count != before.affected_count
        || alert.state != before.state
        || alert.reason != before.reason
    {
        Some(Event::Update)
    } else {
        None
    };
    if matches!(event, Some(Event::Firing | Event::Renotify)) {
        alert.last_notified_at = Some(ctx.now);
    }
    Step {
        alert: Some(alert),
        events: event.into_iter().collect(),
        recorded_only: false,
    }
}

fn cleared(mut alert: Alert, ctx: &Context) -> Step {
    if alert.status == AlertStatus::Pending {
        return Step::quiet(None);
    }
    // Gone from every cluster: no member is kept, or a collector that did not evaluate a
    // cluster would bring it back from the store.
    alert.members.clear();
    let cleared_at = *alert.cleared_at.get_or_insert(ctx.now);
    if ctx.now - cleared_at < ctx.policy.flap_window {
        return Step::quiet(Some(alert));
    }
    alert.status = AlertStatus::Resolved;
    alert.resolved_at = Some(ctx.now);
    let recorded_only = !alert.notified || ctx.silence_for(&alert).is_some();
    Step {
        alert: Some(alert),
        events: vec![Event::Resolved],
        recorded_only,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::Candidate;
    use crate::config::AlertsConfig;
    use crate::health::State;
    use crate::model::ObjectId;
    use crate::store::ObjectVerdict;
    use chrono::TimeDelta;

    fn candidate(affected: usize) -> Candidate {
        candidate_on(
            "staging-1/Kustomization/flux-system/gateway-config",
            affected,
        )
    }

    fn candidate_on(id: &str, affected: usize) -> Candidate {
        Candidate {
            verdict: ObjectVerdict::new(
                id.parse::<ObjectId>().unwrap(),
                State::Failed,
                None,
                "RBAC Forbidden".into(),
                "forbidden".into(),
            ),
            cause: Default::default(),
            affected_count: affected,
            affected_sample: Vec::new(),
            domains: vec!["gateway".into()],
            cluster_labels: Default::default(),
        }
    }

    struct World {
        policy: Policy,
        silences: Vec<Silence>,
        now: DateTime<Utc>,
        alert: Option<Alert>,
    }

    impl World {
        fn new() -> World {
            World {
                policy: Policy::from_config(&AlertsConfig::default()),
                silences: Vec::new(),
                now: "2026-11-29T10:00:00Z".parse().unwrap(),
                alert: None,
            }
        }

        /// One evaluation `minutes` later; returns the events (and whether they are sent).
        fn after(&mut self, minutes: i64, cause: Option<Candidate>) -> (Vec<Event>, bool) {
            self.now += TimeDelta::minutes(minutes);
            let ctx = Context {
                policy: &self.policy,
                silences: &self.silences,
                now: self.now,
            };
            let group = cause.map(CauseGroup::single);
            let step = step(self.alert.take(), group.as_ref(), &ctx);
            self.alert = step.alert.filter(|a| a.status != AlertStatus::Resolved);
            (step.events, !step.recorded_only)
        }
    }

    #[test]
    fn fires_once_updates_on_growth_renotifies_and_resolves() {
        let mut w = World::new();
        assert_eq!(w.after(0, Some(candidate(3))), (vec![Event::Firing], true));
        assert_eq!(w.after(1, Some(candidate(3))), (vec![], true));
        assert_eq!(w.after(1, Some(candidate(5))), (vec![Event::Update], true));
        assert_eq!(
            w.after(240, Some(candidate(5))),
            (vec![Event::Renotify], true)
        );
        assert_eq!(w.after(1, None), (vec![], true));
        assert_eq!(w.after(10, None), (vec![Event::Resolved], true));
        assert!(w.alert.is_none());
    }

    #[test]
    fn a_flapping_cause_pages_once() {
        let mut w = World::new();
        assert_eq!(w.after(0, Some(candidate(1))).0, [Event::Firing]);
        for _ in 0..5 {
            assert_eq!(w.after(3, None).0, Vec::<Event>::new());
            assert_eq!(w.after(3, Some(candidate(1))).0, Vec::<Event>::new());
        }
        assert_eq!(w.after(1, None).0, Vec::<Event>::new());
        assert_eq!(w.after(10, None).0, [Event::Resolved]);
    }

    #[test]
    fn waits_out_the_rule_for_and_forgets_a_cause_that_cleared_before() {
        let mut w = World::new();
        let dead = candidate_on("prod-eu-1/Deployment/flux-system/tofu-controller", 2);
        assert_eq!(w.after(0, Some(dead.clone())).0, Vec::<Event>::new());
        assert_eq!(w.alert.as_ref().unwrap().rule, "controller-unavailable");
        assert_eq!(w.after(3, None).0, Vec::<Event>::new());
        assert!(w.alert.is_none(), "a pending alert that clears is dropped");
        assert_eq!(w.after(1, Some(dead.clone())).0, Vec::<Event>::new());
        assert_eq!(w.after(5, Some(dead)).0, [Event::Firing]);
    }

    #[test]
    fn old_problems_fire_at_once() {
        let mut w = World::new();
        let mut stale = candidate_on("prod-eu-1/Cluster//prod-eu-1", 1);
        stale.verdict.since = Some(w.now - TimeDelta::hours(2));
        assert_eq!(w.after(0, Some(stale)).0, [Event::Firing]);
    }

    #[test]
    fn silenced_alerts_are_recorded_not_sent_until_the_silence_ends() {
        let mut w = World::new();
        w.silences.push(Silence {
            id: 7,
            root_cause: None,
            domain: Some("gateway".into()),
            cluster: None,
            until: w.now + TimeDelta::minutes(30),
            comment: "known".into(),
            created_by: "anonymous".into(),
            created_at: w.now,
        });
        assert_eq!(w.after(0, Some(candidate(1))), (vec![Event::Firing], false));
        assert_eq!(w.alert.as_ref().unwrap().silence_id, Some(7));
        assert_eq!(w.after(5, Some(candidate(9))), (vec![], true));
        assert_eq!(w.after(30, Some(candidate(9))), (vec![Event::Firing], true));
        assert_eq!(w.alert.as_ref().unwrap().silence_id, None);
    }

    #[test]
    fn a_cause_nobody_was_told_of_resolves_quietly() {
        let mut w = World::new();
        w.silences.push(Silence {
            id: 1,
            root_cause: Some(candidate(1).verdict.id.into_string()),
            domain: None,
            cluster: None,
            until: w.now + TimeDelta::days(1),
            comment: String::new(),
            created_by: "anonymous".into(),
            created_at: w.now,
        });
        w.after(0, Some(candidate(1)));
        w.after(1, None);
        assert_eq!(w.after(10, None), (vec![Event::Resolved], false));
    }

    /// The candidate on each named cluster, as one incident.
    fn on(clusters: &[&str]) -> CauseGroup {
        let members: Vec<Candidate> = clusters
            .iter()
            .map(|c| candidate_on(&format!("{c}/Kustomization/flux-system/gateway-config"), 1))
            .collect();
        CauseGroup {
            key: "Kustomization/flux-system/gateway-config/0000".into(),
            members,
        }
    }

    #[test]
    fn clusters_joining_and_leaving_update_the_one_alert() {
        let policy = Policy::from_config(&AlertsConfig::default());
        let mut now: DateTime<Utc> = "2026-11-29T10:00:00Z".parse().unwrap();
        let mut alert = None;
        let mut events = Vec::new();
        for clusters in [&["a", "b"][..], &["a", "b", "c"], &["a", "c"], &["a", "c"]] {
            now += TimeDelta::minutes(1);
            let ctx = Context {
                policy: &policy,
                silences: &[],
                now,
            };
            let step = step(alert.take(), Some(&on(clusters)), &ctx);
            events.push(step.events);
            alert = step.alert;
        }
        assert_eq!(
            events,
            [
                vec![Event::Firing],
                vec![Event::Update],
                vec![Event::Update],
                vec![]
            ]
        );
        let alert = alert.unwrap();
        assert_eq!(
            (alert.clusters, alert.affected_count),
            (vec!["a".to_string(), "c".to_string()], 2)
        );
    }

    #[test]
    fn a_silence_on_one_cluster_does_not_hush_the_others() {
        let mut w = World::new();
        w.silences.push(Silence {
            id: 3,
            root_cause: None,
            domain: None,
            cluster: Some("a".into()),
            until: w.now + TimeDelta::hours(1),
            comment: String::new(),
            created_by: "anonymous".into(),
            created_at: w.now,
        });
        let ctx = Context {
            policy: &w.policy,
            silences: &w.silences,
            now: w.now,
        };
        assert!(!step(None, Some(&on(&["a", "b"])), &ctx).recorded_only);
        assert!(step(None, Some(&on(&["a"])), &ctx).recorded_only);
    }

    #[test]
    fn healthy_things_never_alert() {
        let mut w = World::new();
        let mut fine = candidate(1);
        fine.verdict.state = State::Progressing;
        assert_eq!(w.after(0, Some(fine)).0, Vec::<Event>::new());
        assert!(w.alert.is_none());
    }
}
