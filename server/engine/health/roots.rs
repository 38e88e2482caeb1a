//! Root causes: combines each object's own finding with the final states of its prerequisites.
//! Prerequisites are resolved first (iterative depth-first, memoized, so 10k-deep chains are
//! fine); an edge back into the current path (a cycle through mixed edges) is ignored, and
//! edges inside a dependsOn cycle too (each member is already its own root cause).

use super::controllers::Absent;
use super::finding::{Edge, EdgeSet, Finding, Propagation};
use super::{Cause, CauseCode, State};
use crate::model::Object;
use chrono::{DateTime, Utc};

/// What a verdict can name as its root cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Root<'a> {
    Object(usize),
    /// The cluster's data (by name) cannot be trusted.
    Cluster(&'a str),
    /// A controller Deployment that is not there.
    Absent(&'a Absent),
}

pub(super) struct Resolved<'a> {
    pub finding: Finding,
    /// Empty unless the final state is a problem.
    pub roots: Vec<Root<'a>>,
    /// Root causes of problems anywhere upstream, even when this object itself is fine: a
    /// domain is not fully healthy while something it depends on is not.
    pub upstream: Vec<Root<'a>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    New,
    Open,
    Done,
}

pub(super) fn resolve<'a>(
    objects: &'a [Object],
    absent: &'a [Absent],
    edges: &[Vec<Edge>],
    own: Vec<Finding>,
    cycle_of: &[Option<usize>],
) -> Vec<Resolved<'a>> {
    let count = objects.len();
    let mut own: Vec<Option<Finding>> = own.into_iter().map(Some).collect();
    let mut resolved: Vec<Option<Resolved>> = (0..count).map(|_| None).collect();
    let mut marks = vec![Mark::New; count];
    for start in 0..count {
        if marks[start] != Mark::New {
            continue;
        }
        marks[start] = Mark::Open;
        let mut stack = vec![(start, 0usize)];
        while let Some((node, cursor)) = stack.last_mut() {
            let node = *node;
            if let Some(edge) = edges[node].get(*cursor) {
                *cursor += 1;
                if marks[edge.target] == Mark::New {
                    marks[edge.target] = Mark::Open;
                    stack.push((edge.target, 0));
                }
                continue;
            }
            stack.pop();
            let finding = own[node].take().expect("each object is finalized once");
            let same_cycle =
                |target: usize| cycle_of[node].is_some() && cycle_of[node] == cycle_of[target];
            let prerequisites: Vec<Prerequisite> = edges[node]
                .iter()
                .filter(|e| {
                    e.target != node && marks[e.target] == Mark::Done && !same_cycle(e.target)
                })
                .filter_map(|e| Some((*e, resolved[e.target].as_ref()?)))
                .collect();
            let context = Context {
                objects,
                absent,
                resolved: &resolved,
            };
            let result = combine(&context, node, finding, &prerequisites);
            resolved[node] = Some(result);
            marks[node] = Mark::Done;
        }
    }
    let mut resolved: Vec<Resolved> = resolved
        .into_iter()
        .map(|r| r.expect("every object is resolved"))
        .collect();
    name_held_suspensions(&mut resolved);
    resolved
}

/// A suspension that holds something up is its own root cause too (its verdict lists itself,
/// as every root cause's does); one nobody waits on is not a root cause at all.
fn name_held_suspensions(resolved: &mut [Resolved]) {
    let held: Vec<usize> = resolved
        .iter()
        .flat_map(|r| &r.roots)
        .filter_map(|&root| match root {
            Root::Object(i) if resolved[i].finding.propagation == Propagation::HoldsWaiters => {
                Some(i)
            }
            _ => None,
        })
        .collect();
    for i in held {
        resolved[i].roots = vec![Root::Object(i)];
    }
}

type Prerequisite<'r, 'a> = (Edge, &'r Resolved<'a>);

/// What combining one object needs besides its own finding and prerequisites.
struct Context<'r, 'a> {
    objects: &'a [Object],
    absent: &'a [Absent],
    resolved: &'r [Option<Resolved<'a>>],
}

fn combine<'a>(
    context: &Context<'_, 'a>,
    node: usize,
    mut finding: Finding,
    prerequisites: &[Prerequisite<'_, 'a>],
) -> Resolved<'a> {
    let objects = context.objects;
    let mut upstream: Vec<Root> = prerequisites
        .iter()
        .flat_map(|(_, p)| {
            let own_roots = if p.finding.state.is_problem() {
                p.roots.as_slice()
            } else {
                &[]
            };
            own_roots.iter().chain(&p.upstream).copied()
        })
        .collect();
    sort_unique(&mut upstream);
    // What a problem or a wait is explained by: problem prerequisites, and suspensions that
    // hold up whatever waits on them. A ready object waits on nothing, so only problems
    // degrade it.
    let over = |set: EdgeSet, holds_count: bool| -> Vec<(usize, &Resolved<'a>)> {
        prerequisites
            .iter()
            .filter(|(edge, p)| {
                set.contains(edge.kind)
                    && (p.finding.state.is_problem()
                        || (holds_count && p.finding.propagation == Propagation::HoldsWaiters))
            })
            .map(|(edge, p)| (edge.target, *p))
            .collect()
    };
    let explaining = |set: EdgeSet| over(set, true);
    let itself = || vec![Root::Object(node)];
    let roots = match finding.propagation {
        Propagation::Cluster => vec![Root::Cluster(&objects[node].cluster)],
        Propagation::Absent(absent) => vec![Root::Absent(&context.absent[absent])],
        Propagation::Symptom(set) if finding.state.is_problem() => {
            let explaining = explaining(set);
            if explaining.is_empty() {
                itself()
            } else {
                roots_of(&explaining)
            }
        }
        Propagation::Explainable(set)
            if finding.state.is_problem() || finding.state == State::Progressing =>
        {
            let explaining = explaining(set);
            if explaining.is_empty() {
                if finding.state.is_problem() {
                    itself()
                } else {
                    Vec::new()
                }
            } else {
                let roots = roots_of(&explaining);
                finding = blocked(objects, finding, &roots, context.resolved);
                roots
            }
        }
        Propagation::ReadyInProgress(set) => {
            let blocking = explaining(set.without(EdgeSet::DEPLOYED));
            let deployed = over(set.and(EdgeSet::DEPLOYED), false);
            if !blocking.is_empty() {
                let roots = roots_of(&blocking);
                finding = blocked(objects, finding, &roots, context.resolved);
                roots
            } else if finding.state.is_problem() {
                itself()
            } else if deployed.is_empty() {
                Vec::new()
            } else {
                finding = degraded(objects, finding, &deployed);
                roots_of(&deployed)
            }
        }
        Propagation::Explainable(set) if finding.state == State::Healthy => {
            let explaining = over(set, false);
            if explaining.is_empty() {
                if let Some(finding_while) = rolling_out(objects, &finding, set, prerequisites) {
                    finding = finding_while;
                }
                Vec::new()
            } else {
                finding = degraded(objects, finding, &explaining);
                roots_of(&explaining)
            }
        }
        Propagation::Symptom(_) | Propagation::Explainable(_) | Propagation::HoldsWaiters => {
            Vec::new()
        }
    };
    Resolved {
        finding,
        roots,
        upstream,
    }
}

fn roots_of<'a>(explaining: &[(usize, &Resolved<'a>)]) -> Vec<Root<'a>> {
    let mut roots: Vec<Root> = explaining
        .iter()
        .flat_map(|&(i, p)| match p.finding.propagation {
            Propagation::HoldsWaiters => vec![Root::Object(i)],
            _ => p.roots.clone(),
        })
        .collect();
    sort_unique(&mut roots);
    roots
}

fn sort_unique(roots: &mut Vec<Root>) {
    if roots.len() > 1 {
        roots.sort_unstable();
        roots.dedup();
    }
}

/// "Kind namespace/name", the way people name an object in a sentence.
pub(super) fn label(objects: &[Object], root: Root) -> String {
    match root {
        Root::Object(i) => {
            let o = &objects[i];
            format!("{} {}/{}", o.kind, o.namespace, o.name)
        }
        Root::Cluster(name) => format!("cluster {name}"),
        Root::Absent(absent) => format!("Deployment {}/{}", absent.namespace, absent.deployment),
    }
}

/// Waiting, or failing, only because a prerequisite is a problem: a symptom, never a cause.
/// The reason names the root cause and what is wrong with it; the message keeps its own words.
fn blocked(
    objects: &[Object],
    own: Finding,
    roots: &[Root],
    resolved: &[Option<Resolved>],
) -> Finding {
    let first = roots[0];
    let what = match first {
        Root::Object(i) => resolved[i]
            .as_ref()
            .map(|r| format!(" ({}: {})", r.finding.state, r.finding.reason))
            .unwrap_or_default(),
        Root::Cluster(_) => String::new(),
        Root::Absent(_) => " (not found)".to_string(),
    };
    let more = if roots.len() > 1 {
        format!(" and {} more", roots.len() - 1)
    } else {
        String::new()
    };
    let reason = format!("blocked by {}{what}{more}", label(objects, first));
    let message = if own.message.is_empty() {
        own.reason.clone()
    } else {
        format!("{}: {}", own.reason, own.message)
    };
    // Blocked since the blocking began: not before its own state, nor before its earliest
    // cause became a problem ("blocked for 7d" by a cause 2d old would not be true).
    let causes_since = roots
        .iter()
        .filter_map(|root| match root {
            Root::Object(i) => resolved[*i].as_ref()?.finding.since,
            Root::Cluster(_) | Root::Absent(_) => None,
        })
        .min();
    let since = match (own.since, causes_since) {
        (Some(own), Some(cause)) => Some(own.max(cause)),
        (own, cause) => own.or(cause),
    };
    let cause = Cause::new(CauseCode::Blocked).with("by", label(objects, first));
    Finding::new(State::Blocked, cause, reason, message)
        .since(since)
        .propagation(own.propagation)
}

/// Says Ready while something it deployed is still rolling out — a workload, or a release or
/// Kustomization it applied that is still reconciling (helm-controller and kustomize-controller
/// without `wait` report Ready once the apply succeeded): not yet fully deployed, so
/// `progressing`, never green. Not a problem: nothing alerts, and once the
/// workload is stuck or failed the object is `degraded` by it instead.
fn rolling_out(
    objects: &[Object],
    own: &Finding,
    set: EdgeSet,
    prerequisites: &[Prerequisite],
) -> Option<Finding> {
    let (target, workload) = prerequisites
        .iter()
        .find(|(edge, p)| set.contains(edge.kind) && p.finding.state == State::Progressing)?;
    let reason = format!(
        "{}: {}",
        label(objects, Root::Object(target.target)),
        workload.finding.reason
    );
    Some(
        Finding::new(
            State::Progressing,
            Cause::new(CauseCode::DeployedRollingOut)
                .with("object", label(objects, Root::Object(target.target))),
            reason,
            &own.reason,
        )
        .since(workload.finding.since)
        .propagation(own.propagation),
    )
}

/// Says Ready, but what it deployed is not healthy: names each failing object and why (a
/// workload's reason names its pods).
fn degraded(objects: &[Object], own: Finding, explaining: &[(usize, &Resolved)]) -> Finding {
    let since: Option<DateTime<Utc>> = explaining.iter().filter_map(|(_, p)| p.finding.since).min();
    let describe = |&(i, p): &(usize, &Resolved)| {
        format!("{}: {}", label(objects, Root::Object(i)), p.finding.reason)
    };
    let more = if explaining.len() > 1 {
        format!(" (and {} more)", explaining.len() - 1)
    } else {
        String::new()
    };
    let reason = format!(
        "deployed objects unhealthy: {}{more}",
        describe(&explaining[0])
    );
    let message: Vec<String> = explaining
        .iter()
        .take(10)
        .map(|entry| match entry.1.finding.message.as_str() {
            "" => describe(entry),
            message => format!("{} ({message})", describe(entry)),
        })
        .collect();
    let cause = Cause::new(CauseCode::DeployedUnhealthy)
        .with("object", label(objects, Root::Object(explaining[0].0)));
    Finding::new(State::Degraded, cause, reason, message.join("; "))
        .since(since.or(own.since))
        .propagation(own.propagation)
}
