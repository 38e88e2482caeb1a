//! Delivery intelligence from the rollout history the store keeps: each version's rollout
//! across rings, the expected time to fully healthy of the one in flight, and DORA's four
//! figures per domain and ring. Pure: no I/O and no clock; the web reads the store, passes
//! `now`, and renders these.

pub mod dora;
pub mod eta;
pub mod rollout;

pub use dora::{DeliveryFigures, Window, figures};
pub use eta::{ClusterEstimate, Estimate, InFlight, estimate};
pub use rollout::{ClusterRollout, RingLane, RolloutTimeline, timelines};

/// The ring of a cluster: the value of its `group_by` label, "ungrouped" without one.
pub type RingOf<'a> = &'a dyn Fn(&str) -> String;

/// The middle value (the mean of the two middle ones for an even count); None when empty.
pub fn median(values: &mut [f64]) -> Option<f64> {
    percentile(values, 0.5)
}

/// The `share` percentile by linear interpolation between closest ranks (as Postgres's
/// `percentile_cont`); None when empty.
pub fn percentile(values: &mut [f64], share: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let rank = share.clamp(0.0, 1.0) * (values.len() - 1) as f64;
    let (low, high) = (rank.floor() as usize, rank.ceil() as usize);
    Some(values[low] + (values[high] - values[low]) * (rank - low as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_between_ranks() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [3.0]), Some(3.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        // ranks 0..9 of 1..10: the 90th percentile sits at rank 8.1
        let mut ten: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        let p90 = percentile(&mut ten, 0.9).unwrap();
        assert!((p90 - 9.1).abs() < 1e-9, "{p90}");
        assert_eq!(percentile(&mut ten, 1.0), Some(10.0));
        assert_eq!(percentile(&mut ten, 0.0), Some(1.0));
    }
}
