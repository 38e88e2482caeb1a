//! dependsOn cycles: Flux waits forever on them, so each member is failed and its own root
//! cause. Tarjan's algorithm, iterative so a chain of any depth cannot overflow the stack.

use super::finding::{Edge, EdgeKind};
use crate::model::Object;
use std::collections::HashSet;

/// A dependency cycle, as shown to people ("a → b → a").
pub(super) struct Cycle {
    pub path: String,
}

/// Per object, the index of the cycle it belongs to, and the cycles.
pub(super) fn find(objects: &[Object], edges: &[Vec<Edge>]) -> (Vec<Option<usize>>, Vec<Cycle>) {
    let depends = |node: usize| {
        edges[node]
            .iter()
            .filter(|e| e.kind == EdgeKind::DependsOn)
            .map(|e| e.target)
    };
    let count = objects.len();
    let mut order = vec![usize::MAX; count];
    let mut low = vec![0; count];
    let mut on_stack = vec![false; count];
    let mut stack = Vec::new();
    let mut next_order = 0;
    let mut membership = vec![None; count];
    let mut cycles = Vec::new();
    for start in 0..count {
        if order[start] != usize::MAX {
            continue;
        }
        // (node, next dependsOn edge to look at)
        let mut work = vec![(start, 0usize)];
        while let Some(&(node, cursor)) = work.last() {
            if cursor == 0 {
                order[node] = next_order;
                low[node] = next_order;
                next_order += 1;
                stack.push(node);
                on_stack[node] = true;
            }
            if let Some(target) = depends(node).nth(cursor) {
                work.last_mut().expect("work is not empty").1 += 1;
                if order[target] == usize::MAX {
                    work.push((target, 0));
                } else if on_stack[target] {
                    low[node] = low[node].min(order[target]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == order[node] {
                let mut members = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    members.push(member);
                    if member == node {
                        break;
                    }
                }
                let self_loop = depends(node).any(|t| t == node);
                if members.len() > 1 || self_loop {
                    for &member in &members {
                        membership[member] = Some(cycles.len());
                    }
                    let path = describe(objects, &members, &depends);
                    cycles.push(Cycle { path });
                }
            }
        }
    }
    (membership, cycles)
}

/// "a → b → a", starting at the member with the smallest name, following dependsOn inside the
/// cycle; long cycles are shortened.
fn describe<I: Iterator<Item = usize>>(
    objects: &[Object],
    members: &[usize],
    depends: &impl Fn(usize) -> I,
) -> String {
    let name = |i: usize| format!("{}/{}", objects[i].namespace, objects[i].name);
    let start = *members
        .iter()
        .min_by_key(|&&m| (&objects[m].namespace, &objects[m].name))
        .expect("a cycle has members");
    let in_cycle: HashSet<usize> = members.iter().copied().collect();
    let mut path = vec![start];
    let mut seen = HashSet::from([start]);
    let mut node = start;
    while let Some(next) =
        depends(node).find(|t| in_cycle.contains(t) && (!seen.contains(t) || *t == start))
    {
        path.push(next);
        if next == start {
            break;
        }
        // `find` only returns the start or a member not yet on the path.
        seen.insert(next);
        node = next;
    }
    const SHOWN: usize = 6;
    let names: Vec<String> = if path.len() > SHOWN + 1 {
        let mut shown: Vec<String> = path[..SHOWN].iter().map(|&i| name(i)).collect();
        shown.push(format!("… ({} more)", path.len() - SHOWN - 1));
        shown.push(name(*path.last().expect("path is not empty")));
        shown
    } else {
        path.iter().map(|&i| name(i)).collect()
    };
    names.join(" → ")
}
