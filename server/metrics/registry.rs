//! The process-wide registry and every metric in it.

use crate::health::{DomainVerdict, StateCounts};
use crate::model::Kind;
use chrono::{DateTime, Utc};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicU64;
use std::sync::{LazyLock, Mutex};
use std::time::Instant;

/// Upper bounds (seconds) of the database write histogram.
const WRITE_BUCKETS: [f64; 10] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];
/// Upper bounds (seconds) of the HTTP request histogram.
const HTTP_BUCKETS: [f64; 9] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ClusterKindLabels {
    cluster: String,
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ClusterLabels {
    cluster: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
struct StateLabels {
    cluster: String,
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DomainLabels {
    domain: String,
    cluster: String,
    version: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DoraLabels {
    pub domain: String,
    pub ring: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeliveryLabels {
    sink: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub route: String,
    pub method: String,
    pub status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;

#[derive(Debug, Default)]
struct EvaluatedSeries {
    states: Vec<StateLabels>,
    domains: Vec<DomainLabels>,
}
type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

pub struct Metrics {
    registry: Registry,
    pub watch_restarts: Family<ClusterKindLabels, Counter>,
    pub watch_events: Family<ClusterKindLabels, Counter>,
    watch_age: Family<ClusterKindLabels, FloatGauge>,
    /// When each watch last delivered; turned into an age at every scrape.
    last_success: Mutex<BTreeMap<(String, String), Instant>>,
    pub objects_tracked: Family<ClusterKindLabels, Gauge>,
    pub lease_held: Family<ClusterLabels, Gauge>,
    pub write_seconds: Histogram,
    pub write_rows: Counter,
    pub write_failures: Counter,
    objects_by_state: Family<StateLabels, Gauge>,
    domain_fully_healthy: Family<DomainLabels, Gauge>,
    cluster_last_good: Family<ClusterLabels, FloatGauge>,
    /// The state and domain series each cluster's evaluation set, so the next evaluation of
    /// that cluster replaces them without touching the others'.
    evaluated: Mutex<HashMap<String, EvaluatedSeries>>,
    deliveries: Family<DeliveryLabels, Counter>,
    pub outbox_pending: Gauge,
    /// DORA's four per domain and ring over the last 30 days (docs/delivery.md).
    pub dora_deployments_per_day: Family<DoraLabels, FloatGauge>,
    pub dora_lead_time: Family<DoraLabels, FloatGauge>,
    pub dora_change_failure_ratio: Family<DoraLabels, FloatGauge>,
    pub dora_time_to_restore: Family<DoraLabels, FloatGauge>,
    pub http_requests: Family<RequestLabels, Counter>,
    pub http_seconds: HistogramFamily<RouteLabels>,
}

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

pub fn metrics() -> &'static Metrics {
    &METRICS
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("fleetglass");
        let m = Metrics {
            watch_restarts: Family::default(),
            watch_events: Family::default(),
            watch_age: Family::default(),
            last_success: Mutex::default(),
            objects_tracked: Family::default(),
            lease_held: Family::default(),
            write_seconds: Histogram::new(WRITE_BUCKETS),
            write_rows: Counter::default(),
            write_failures: Counter::default(),
            objects_by_state: Family::default(),
            domain_fully_healthy: Family::default(),
            cluster_last_good: Family::default(),
            evaluated: Mutex::default(),
            deliveries: Family::default(),
            outbox_pending: Gauge::default(),
            dora_deployments_per_day: Family::default(),
            dora_lead_time: Family::default(),
            dora_change_failure_ratio: Family::default(),
            dora_time_to_restore: Family::default(),
            http_requests: Family::default(),
            http_seconds: Family::new_with_constructor(|| Histogram::new(HTTP_BUCKETS)),
            registry: Registry::default(),
        };
        let build = Family::<BuildLabels, Gauge>::default();
        build
            .get_or_create(&BuildLabels {
                version: env!("CARGO_PKG_VERSION").to_string(),
            })
            .set(1);
        registry.register(
            "build_info",
            "The running fleetglass version (always 1).",
            build,
        );
        registry.register(
            "watch_restarts",
            "Watch failures after which the watch of a kind on a cluster was restarted.",
            m.watch_restarts.clone(),
        );
        registry.register(
            "watch_events",
            "Events received from the watch of a kind on a cluster.",
            m.watch_events.clone(),
        );
        registry.register(
            "watch_last_success_age_seconds",
            "Seconds since the watch of a kind on a cluster last delivered an event or a list.",
            m.watch_age.clone(),
        );
        registry.register(
            "objects_tracked",
            "Objects of a kind on a cluster held in memory.",
            m.objects_tracked.clone(),
        );
        registry.register(
            "cluster_lease_held",
            "1 when this process holds the collector lease of the cluster.",
            m.lease_held.clone(),
        );
        registry.register_with_unit(
            "db_write",
            "Duration of the collector's batched database writes.",
            Unit::Seconds,
            m.write_seconds.clone(),
        );
        registry.register(
            "db_write_rows",
            "Rows (objects, deletions, transitions) written in batches.",
            m.write_rows.clone(),
        );
        registry.register(
            "db_write_failures",
            "Batched writes that failed (kept and retried).",
            m.write_failures.clone(),
        );
        registry.register(
            "objects",
            "Objects on a cluster by state, as this collector last evaluated them.",
            m.objects_by_state.clone(),
        );
        registry.register(
            "domain_fully_healthy",
            "1 when every object of the domain on the cluster is healthy at the version labelled.",
            m.domain_fully_healthy.clone(),
        );
        registry.register(
            "cluster_last_good_timestamp_seconds",
            "When the cluster's data was last known good (Unix time); fresh data is recent.",
            m.cluster_last_good.clone(),
        );
        registry.register(
            "alert_deliveries",
            "Alert notifications sent to a sink, by outcome (delivered, failed).",
            m.deliveries.clone(),
        );
        registry.register(
            "alert_outbox_pending",
            "Alert notifications waiting in the outbox to be delivered.",
            m.outbox_pending.clone(),
        );
        registry.register(
            "dora_deployments_per_day",
            "Versions of the domain deployed (fully healthy on every cluster of the ring offered them) per day, over the last 30 days.",
            m.dora_deployments_per_day.clone(),
        );
        registry.register_with_unit(
            "dora_lead_time",
            "Median time from a version's first offer in the fleet to its deployment on the ring, over the last 30 days.",
            Unit::Seconds,
            m.dora_lead_time.clone(),
        );
        registry.register(
            "dora_change_failure_ratio",
            "Share of the versions first applied on the ring in the last 30 days whose rollout raised a known problem there.",
            m.dora_change_failure_ratio.clone(),
        );
        registry.register_with_unit(
            "dora_time_to_restore",
            "Median time from the domain entering a known problem on a cluster of the ring to fully healthy again, over the last 30 days.",
            Unit::Seconds,
            m.dora_time_to_restore.clone(),
        );
        registry.register(
            "http_requests",
            "HTTP requests by matched route template, method and status.",
            m.http_requests.clone(),
        );
        registry.register_with_unit(
            "http_request_duration",
            "Time to answer HTTP requests, by matched route template.",
            Unit::Seconds,
            m.http_seconds.clone(),
        );
        Metrics { registry, ..m }
    }

    pub fn cluster_kind(cluster: &str, kind: Kind) -> ClusterKindLabels {
        ClusterKindLabels {
            cluster: cluster.to_string(),
            kind: kind.as_str().to_string(),
        }
    }

    pub fn cluster(cluster: &str) -> ClusterLabels {
        ClusterLabels {
            cluster: cluster.to_string(),
        }
    }

    pub fn last_success(&self, labels: ClusterKindLabels, at: Instant) {
        self.last_success
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert((labels.cluster, labels.kind), at);
    }

    /// What one cluster's evaluation found (None: the cluster is no longer evaluated here):
    /// its series replace the ones its previous evaluation set.
    pub fn record_cluster_evaluation(
        &self,
        cluster: &str,
        found: Option<(&StateCounts, &[DomainVerdict])>,
    ) {
        let mut evaluated = self
            .evaluated
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(before) = evaluated.remove(cluster) {
            for labels in &before.states {
                self.objects_by_state.remove(labels);
            }
            for labels in &before.domains {
                self.domain_fully_healthy.remove(labels);
            }
        }
        let Some((counts, domains)) = found else {
            return;
        };
        let mut series = EvaluatedSeries::default();
        for (&state, &count) in &counts.0 {
            let labels = StateLabels {
                cluster: cluster.to_string(),
                state: state.to_string(),
            };
            self.objects_by_state
                .get_or_create(&labels)
                .set(count as i64);
            series.states.push(labels);
        }
        for domain in domains {
            let labels = DomainLabels {
                domain: domain.domain.clone(),
                cluster: domain.cluster.clone(),
                version: domain.version.clone().unwrap_or_default(),
            };
            let healthy = self.domain_fully_healthy.get_or_create(&labels);
            healthy.set(i64::from(domain.fully_healthy));
            series.domains.push(labels);
        }
        evaluated.insert(cluster.to_string(), series);
    }

    /// When a cluster's data was last known good (None: never, or the cluster is gone).
    pub fn record_last_good(&self, cluster: &str, last_good: Option<DateTime<Utc>>) {
        let labels = Metrics::cluster(cluster);
        match last_good {
            Some(at) => {
                let seconds = at.timestamp_millis() as f64 / 1000.0;
                self.cluster_last_good.get_or_create(&labels).set(seconds);
            }
            None => {
                self.cluster_last_good.remove(&labels);
            }
        }
    }

    pub fn record_delivery(&self, sink: &str, delivered: bool) {
        let outcome = if delivered { "delivered" } else { "failed" };
        self.deliveries
            .get_or_create(&DeliveryLabels {
                sink: sink.to_string(),
                outcome: outcome.to_string(),
            })
            .inc();
    }

    /// The exposition, with the watch ages brought up to `now`.
    pub fn encode(&self, now: Instant) -> String {
        for ((cluster, kind), at) in self
            .last_success
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
        {
            let labels = ClusterKindLabels {
                cluster: cluster.clone(),
                kind: kind.clone(),
            };
            self.watch_age
                .get_or_create(&labels)
                .set(now.duration_since(*at).as_secs_f64());
        }
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::State;
    use chrono::{TimeZone, Utc};

    #[test]
    fn an_evaluation_becomes_bounded_series_that_follow_it() {
        let metrics = Metrics::new();
        let domain = |version: &str, fully_healthy| DomainVerdict {
            domain: "gateway".into(),
            cluster: "prod-eu-1".into(),
            version: Some(version.into()),
            offered: None,
            state: State::Healthy,
            fully_healthy,
            objects: 1,
            healthy: 1,
            blockers: Vec::new(),
        };
        let counts = StateCounts::of([State::Failed, State::Failed, State::Healthy]);
        let other = StateCounts(BTreeMap::from([(State::Healthy, 7)]));
        metrics.record_cluster_evaluation("prod-eu-1", Some((&counts, &[domain("1.4.0", true)])));
        metrics.record_cluster_evaluation("prod-us-1", Some((&other, &[])));
        let last_good = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
        metrics.record_last_good("prod-eu-1", Some(last_good));
        let text = metrics.encode(Instant::now());
        for line in [
            "fleetglass_objects{cluster=\"prod-eu-1\",state=\"failed\"} 2",
            "fleetglass_objects{cluster=\"prod-eu-1\",state=\"healthy\"} 1",
            "fleetglass_domain_fully_healthy{domain=\"gateway\",cluster=\"prod-eu-1\",version=\"1.4.0\"} 1",
            "fleetglass_cluster_last_good_timestamp_seconds{cluster=\"prod-eu-1\"} 1796040000.0",
            "# TYPE fleetglass_db_write_seconds histogram",
        ] {
            assert!(text.contains(line), "missing {line} in:\n{text}");
        }
        assert!(text.contains("fleetglass_build_info{version=\""), "{text}");
        // A new version replaces the old series rather than adding one per version ever seen;
        // another cluster's series stay as its own evaluation set them.
        let none = StateCounts::default();
        metrics.record_cluster_evaluation("prod-eu-1", Some((&none, &[domain("1.5.0", false)])));
        let text = metrics.encode(Instant::now());
        assert!(!text.contains("version=\"1.4.0\""), "{text}");
        assert!(text.contains("version=\"1.5.0\"} 0"), "{text}");
        assert!(!text.contains("state=\"failed\""), "{text}");
        assert!(
            text.contains("fleetglass_objects{cluster=\"prod-us-1\",state=\"healthy\"} 7"),
            "{text}"
        );
        // A cluster no longer evaluated here leaves no series behind.
        metrics.record_cluster_evaluation("prod-eu-1", None);
        metrics.record_last_good("prod-eu-1", None);
        let text = metrics.encode(Instant::now());
        assert!(!text.contains("prod-eu-1"), "{text}");
    }

    #[test]
    fn watch_ages_are_measured_at_scrape_time() {
        let metrics = Metrics::new();
        let start = Instant::now();
        metrics.last_success(Metrics::cluster_kind("c", Kind::Pod), start);
        let text = metrics.encode(start + std::time::Duration::from_secs(4));
        assert!(
            text.contains(
                "fleetglass_watch_last_success_age_seconds{cluster=\"c\",kind=\"Pod\"} 4.0"
            ),
            "{text}"
        );
    }
}
