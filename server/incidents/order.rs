//! Impact order: which ring comes first (the config's `group_order`), and age.

use chrono::{DateTime, Utc};
use std::cmp::Ordering;

/// The rings (`group_by` label values) most important first; values not listed come after
/// every listed one, all alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RingOrder(Vec<String>);

impl RingOrder {
    pub fn new(order: &[String]) -> RingOrder {
        RingOrder(order.to_vec())
    }

    pub fn rank(&self, ring: &str) -> usize {
        self.0
            .iter()
            .position(|r| r == ring)
            .unwrap_or(self.0.len())
    }

    /// Rings in the order a version reaches them: `group_order` lists them most important
    /// first, so the least important (and any not listed) come first; ties by name.
    pub fn rollout_order<'a>(&self, rings: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
        let mut rings: Vec<&str> = rings.into_iter().collect();
        rings.sort_by_key(|ring| (std::cmp::Reverse(self.rank(ring)), *ring));
        rings.dedup();
        rings
    }
}

/// Older first; a cause without a start time after every dated one.
pub fn older_first(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}
