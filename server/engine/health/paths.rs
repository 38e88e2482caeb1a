//! The path from an affected object to its root cause, over the edges the engine walked
//! (each verdict's `edges`, as stored): the chain `/problems` shows ("app → infra → source").
//! A shortest path within the affected set; where the objects' edges hold none, the engine's
//! word (the verdict names the cause) is the only link.

use super::ObjectEdge;
use std::collections::{HashMap, HashSet, VecDeque};

/// For each affected object reachable from the cause, the next object towards it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PathsToRoot {
    cause: String,
    next: HashMap<String, String>,
}

impl PathsToRoot {
    /// The paths to `cause` from each of `affected` (an object's id and its edges), walking
    /// only through the affected objects.
    pub fn new<'a>(
        cause: &str,
        affected: impl IntoIterator<Item = (&'a str, &'a [ObjectEdge])>,
    ) -> PathsToRoot {
        let mut dependents: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut members: HashSet<&str> = HashSet::new();
        for (id, edges) in affected {
            members.insert(id);
            for edge in edges {
                dependents.entry(edge.target.as_str()).or_default().push(id);
            }
        }
        let mut next = HashMap::new();
        let mut queue = VecDeque::from([cause]);
        let mut seen = HashSet::from([cause]);
        while let Some(node) = queue.pop_front() {
            for &dependent in dependents.get(node).into_iter().flatten() {
                if members.contains(dependent) && seen.insert(dependent) {
                    next.insert(dependent.to_string(), node.to_string());
                    queue.push_back(dependent);
                }
            }
        }
        PathsToRoot {
            cause: cause.to_string(),
            next,
        }
    }

    /// `from`, the objects between, and the cause.
    pub fn path(&self, from: &str) -> Vec<String> {
        let mut path = vec![from.to_string()];
        let mut at = from;
        while let Some(hop) = self.next.get(at) {
            path.push(hop.clone());
            if *hop == self.cause {
                return path;
            }
            at = hop;
        }
        path.push(self.cause.clone());
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::EdgeKind;
    use crate::model::ObjectId;

    fn on(targets: &[&str]) -> Vec<ObjectEdge> {
        targets
            .iter()
            .map(|t| ObjectEdge {
                kind: EdgeKind::DependsOn,
                target: ObjectId(t.to_string()),
            })
            .collect()
    }

    #[test]
    fn the_shortest_path_through_the_affected_objects() {
        // app → infra → source, and app → source directly: the direct edge is shorter.
        let (app, infra, other) = (on(&["infra", "source"]), on(&["source"]), on(&["infra"]));
        let paths = PathsToRoot::new(
            "source",
            [
                ("app", &app[..]),
                ("infra", &infra[..]),
                ("other", &other[..]),
            ],
        );
        assert_eq!(paths.path("app"), vec!["app", "source"]);
        assert_eq!(paths.path("other"), vec!["other", "infra", "source"]);
    }

    #[test]
    fn without_a_path_the_cause_is_named_after_the_object() {
        // "lost" points at an object outside the affected set: no path through it.
        let lost = on(&["elsewhere"]);
        let paths = PathsToRoot::new("source", [("lost", &lost[..])]);
        assert_eq!(paths.path("lost"), vec!["lost", "source"]);
    }
}
