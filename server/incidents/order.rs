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
