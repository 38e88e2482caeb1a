//! Bounds on what clients can make the web server hold: open connections, how long a request
//! head may take to arrive (also how long an idle keep-alive connection stays), and how many
//! long-poll waits run at once. Every field has a default.

use crate::model::serde_go;
use chrono::TimeDelta;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WebLimits {
    /// Connections held at once. At the cap a new connection pushes out the oldest one that
    /// is not in the middle of a request (a slow-header flood is that), so probes still answer.
    pub max_connections: usize,
    /// Connections one client address may hold (at most `max_connections`); at its share a
    /// newcomer from it pushes out its own oldest connection not serving a request, never
    /// another client's. Behind a proxy or load balancer every connection comes from its few
    /// addresses: raise this to the proxy's connection pool.
    pub max_connections_per_client: usize,
    /// Time allowed for a request's head to arrive; an idle keep-alive connection is closed
    /// after the same time.
    #[serde(with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub header_timeout: TimeDelta,
    /// Time allowed for a request's body to arrive, whole, once its head has; past it the
    /// answer is 408 and the connection closes. Until its body has arrived, a request's
    /// connection may be pushed out at the cap like one sending a slow head.
    #[serde(with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub body_timeout: TimeDelta,
    /// `wait` requests in flight at once; beyond it they answer 503 with Retry-After.
    pub max_waits: usize,
    /// `wait` requests one client (an address, or a user a trusted proxy names) may have in
    /// flight at once (at most `max_waits`); beyond it they answer 503 with Retry-After.
    pub max_waits_per_client: usize,
}

/// The default connection cap, from the chart's memory limit (1 GiB): the worst a held
/// connection costs is an unfinished body just under the body limit (32 KiB) on top of its
/// read buffer (32 KiB): 89–100 KiB of resident memory measured (an unfinished 30 KiB head,
/// 49–65 KiB;
/// `limits_connections::an_unfinished_head_or_body_costs_bounded_memory_and_a_bigger_head_gets_431`,
/// docs/RELIABILITY.md). 4,096 such connections take ~400 MiB, leaving ~550 MiB for the fleet
/// (a thousand clusters of a hundred objects, ~2 KB each: ~200 MiB) and the rest.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4_096;

impl Default for WebLimits {
    fn default() -> Self {
        WebLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_client: 512,
            header_timeout: TimeDelta::seconds(10),
            body_timeout: TimeDelta::seconds(10),
            max_waits: 1_000,
            max_waits_per_client: 100,
        }
    }
}

impl WebLimits {
    pub(super) fn problem(&self) -> Option<(String, String)> {
        let key = |name: &str| format!("web.limits.{name}");
        if !(TimeDelta::seconds(1)..=TimeDelta::seconds(10)).contains(&self.header_timeout) {
            return Some((
                key("header_timeout"),
                "must be between 1s and 10s (a slow client must not hold a connection longer)"
                    .into(),
            ));
        }
        if !(TimeDelta::seconds(1)..=TimeDelta::seconds(60)).contains(&self.body_timeout) {
            return Some((
                key("body_timeout"),
                "must be between 1s and 60s (a slow client must not hold a connection longer)"
                    .into(),
            ));
        }
        if self.max_connections < 16 {
            return Some((key("max_connections"), "must be at least 16".into()));
        }
        if self.max_connections_per_client == 0 {
            return Some((
                key("max_connections_per_client"),
                "must be at least 1 (above max_connections it is max_connections)".into(),
            ));
        }
        if self.max_waits_per_client == 0 {
            return Some((
                key("max_waits_per_client"),
                "must be at least 1 (above max_waits it is max_waits)".into(),
            ));
        }
        if self.max_waits == 0 || self.max_waits >= self.max_connections {
            return Some((
                key("max_waits"),
                format!(
                    "must be between 1 and max_connections ({}) - 1, so waits cannot take every connection",
                    self.max_connections
                ),
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_hold_and_out_of_range_values_name_their_key() {
        assert_eq!(WebLimits::default().problem(), None);
        let slow = WebLimits {
            header_timeout: TimeDelta::seconds(30),
            ..WebLimits::default()
        };
        assert_eq!(slow.problem().unwrap().0, "web.limits.header_timeout");
        let greedy = WebLimits {
            max_waits: 10_000,
            ..WebLimits::default()
        };
        assert_eq!(greedy.problem().unwrap().0, "web.limits.max_waits");
    }
}
