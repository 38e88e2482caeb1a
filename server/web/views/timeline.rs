//! A rollout drawn as a server-rendered SVG: rings as lanes (in rollout order), each cluster a
//! bar from offered to fully healthy (or to where it stands), a line for the wait before it
//! applied, and its state in words above the bar. The geometry is computed here; the template
//! only places it (and escapes every name).

use crate::delivery::{ClusterRollout, Estimate, RolloutTimeline};
use crate::health::State;
use chrono::{DateTime, Utc};

/// The drawing's width in its own units; it scales to the page (a phone's 390 px too).
const WIDTH: f64 = 480.0;
const PAD: f64 = 6.0;
const AXIS: f64 = 22.0;
const LANE_TITLE: f64 = 22.0;
const ROW: f64 = 26.0;
const MIN_BAR: f64 = 4.0;
/// Bars drawn per lane: the rest (the quickest, since the slowest lead) are counted.
pub const BARS_PER_LANE: usize = 40;

pub struct Timeline {
    pub width: f64,
    pub height: f64,
    pub start: String,
    pub end: String,
    pub lanes: Vec<Lane>,
    /// Where the expected time to fully healthy falls, when there is one on the drawing.
    pub eta_x: Option<f64>,
    pub label: String,
}

pub struct Lane {
    pub title: String,
    pub y: f64,
    pub bars: Vec<Bar>,
    pub more: usize,
    pub more_y: f64,
}

pub struct Bar {
    pub text: String,
    pub text_y: f64,
    pub bar_y: f64,
    /// The wait for the apply: offered to applied (or to the bar's end, never applied).
    pub wait_x1: f64,
    pub wait_x2: f64,
    pub x: f64,
    pub width: f64,
    pub state: State,
}

impl Timeline {
    pub fn of(
        rollout: &RolloutTimeline,
        estimate: Option<&Estimate>,
        now: DateTime<Utc>,
    ) -> Timeline {
        let in_flight = rollout.fully_healthy < rollout.clusters;
        let start = rollout.first_offered;
        let mut end = rollout.last_moved;
        if in_flight {
            end = end.max(now);
        }
        if let Some(eta) = estimate.and_then(|e| e.eta) {
            end = end.max(eta);
        }
        let span = (end - start).num_milliseconds().max(1) as f64;
        let x = |at: DateTime<Utc>| {
            PAD + (at - start).num_milliseconds() as f64 / span * (WIDTH - 2.0 * PAD)
        };
        let mut y = AXIS;
        let mut lanes = Vec::new();
        for lane in &rollout.rings {
            let healthy = lane
                .clusters
                .iter()
                .filter(|c| c.healthy_at.is_some())
                .count();
            let title = format!(
                "{} · {healthy}/{} fully healthy",
                lane.ring,
                lane.clusters.len()
            );
            let lane_y = y + 14.0;
            y += LANE_TITLE;
            let bars: Vec<Bar> = lane
                .clusters
                .iter()
                .take(BARS_PER_LANE)
                .map(|c| {
                    let bar_end =
                        c.healthy_at
                            .unwrap_or(if in_flight { end } else { c.last_moved() });
                    let applied = c.applied_at.unwrap_or(bar_end);
                    let bar = Bar {
                        text: bar_text(c),
                        text_y: y + 11.0,
                        bar_y: y + 15.0,
                        wait_x1: x(c.offered_at),
                        wait_x2: x(applied),
                        x: x(applied),
                        // Minutes on a days-long drawing still show.
                        width: (x(bar_end) - x(applied)).max(MIN_BAR),
                        state: c.state,
                    };
                    y += ROW;
                    bar
                })
                .collect();
            let more = lane.clusters.len().saturating_sub(BARS_PER_LANE);
            let more_y = y + 12.0;
            if more > 0 {
                y += ROW;
            }
            lanes.push(Lane {
                title,
                y: lane_y,
                bars,
                more,
                more_y,
            });
        }
        Timeline {
            width: WIDTH,
            height: y + PAD,
            start: start.format("%Y-%m-%d %H:%M").to_string(),
            end: end.format("%Y-%m-%d %H:%M").to_string(),
            eta_x: estimate.and_then(|e| e.eta).map(x),
            label: format!(
                "rollout of {} {}: fully healthy on {} of {} clusters",
                rollout.domain, rollout.version, rollout.fully_healthy, rollout.clusters
            ),
            lanes,
        }
    }
}

/// "prod-a · fully healthy in 12m", "prod-b · failed: ImagePullBackOff".
fn bar_text(c: &ClusterRollout) -> String {
    let after = match c.seconds_to_healthy {
        Some(s) => format!(
            "fully healthy in {}",
            super::delivery::duration_text(Some(s as f64))
        ),
        None if c.reason.is_empty() => c.state.to_string(),
        None => format!("{}: {}", c.state, c.reason),
    };
    let seen = if c.baseline { " (found applied)" } else { "" };
    format!("{} · {after}{seen}", c.cluster)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::RingLane;
    use chrono::TimeDelta;

    fn cluster(
        name: &str,
        offered: i64,
        healthy: Option<i64>,
        t0: DateTime<Utc>,
    ) -> ClusterRollout {
        let at = |m: i64| t0 + TimeDelta::minutes(m);
        ClusterRollout {
            cluster: name.into(),
            offered_at: at(offered),
            applied_at: Some(at(offered + 10)),
            healthy_at: healthy.map(at),
            state: if healthy.is_some() {
                State::Healthy
            } else {
                State::Failed
            },
            cause: None,
            reason: if healthy.is_some() {
                String::new()
            } else {
                "CrashLoopBackOff".into()
            },
            baseline: false,
            seconds_to_healthy: healthy.map(|h| (h - offered) * 60),
        }
    }

    #[test]
    fn bars_span_offer_to_health_and_a_stopped_cluster_says_why() {
        let t0 = DateTime::<Utc>::UNIX_EPOCH + TimeDelta::days(20_000);
        let rollout = RolloutTimeline {
            domain: "payments".into(),
            version: "2.0".into(),
            first_offered: t0,
            last_moved: t0 + TimeDelta::minutes(100),
            clusters: 2,
            fully_healthy: 1,
            rings: vec![RingLane {
                ring: "prod".into(),
                clusters: vec![
                    cluster("prod-b", 50, None, t0),
                    cluster("prod-a", 0, Some(100), t0),
                ],
            }],
        };
        // in flight: the drawing runs to now, 200 minutes after the first offer
        let now = t0 + TimeDelta::minutes(200);
        let t = Timeline::of(&rollout, None, now);
        let lane = &t.lanes[0];
        assert_eq!(lane.title, "prod · 1/2 fully healthy");
        let (b, a) = (&lane.bars[0], &lane.bars[1]);
        assert_eq!(b.text, "prod-b · failed: CrashLoopBackOff");
        assert_eq!(a.text, "prod-a · fully healthy in 1h 40m");
        let unit = (WIDTH - 2.0 * PAD) / 200.0;
        assert!((a.wait_x1 - PAD).abs() < 1e-6);
        assert!((a.x - (PAD + 10.0 * unit)).abs() < 1e-6);
        assert!(
            (a.width - 90.0 * unit).abs() < 1e-6,
            "applied at 10, healthy at 100"
        );
        assert!(
            (b.x + b.width - (WIDTH - PAD)).abs() < 1e-6,
            "a stopped bar runs to now"
        );
        assert!(t.height > b.bar_y);
    }

    #[test]
    fn a_crowded_lane_draws_the_slowest_and_counts_the_rest() {
        let t0 = DateTime::<Utc>::UNIX_EPOCH;
        let clusters: Vec<ClusterRollout> = (0..BARS_PER_LANE + 3)
            .map(|i| cluster(&format!("c{i}"), 0, Some(20), t0))
            .collect();
        let rollout = RolloutTimeline {
            domain: "d".into(),
            version: "1".into(),
            first_offered: t0,
            last_moved: t0 + TimeDelta::minutes(20),
            clusters: clusters.len(),
            fully_healthy: clusters.len(),
            rings: vec![RingLane {
                ring: "r".into(),
                clusters,
            }],
        };
        let t = Timeline::of(&rollout, None, t0 + TimeDelta::days(1));
        assert_eq!((t.lanes[0].bars.len(), t.lanes[0].more), (BARS_PER_LANE, 3));
        assert_eq!(
            t.end, "1970-01-01 00:20",
            "done: the drawing ends at the last move, not now"
        );
    }
}
