//! Prometheus metrics, through the prometheus-client crate, served at `/metrics`. The functions
//! here are what the rest of the code calls; labels are bounded by the configuration (clusters,
//! domains, sinks), the kind and state vocabularies and the route templates — never object names
//! or raw URLs.

mod http;
mod registry;

pub use http::track as track_http;

use crate::delivery::DeliveryFigures;
use crate::health::{DomainVerdict, StateCounts};
use crate::model::Kind;
use axum::http::header;
use axum::response::IntoResponse;
use chrono::{DateTime, Utc};
use registry::{Metrics, metrics};
use std::time::{Duration, Instant};

/// `GET /metrics`: the OpenMetrics text format.
pub async fn serve() -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics().encode(Instant::now()),
    )
}

/// A domain's DORA figures on one ring: each gauge set, or removed when the window holds
/// nothing to compute it from (never a zero that was not measured).
pub fn record_delivery(figures: &DeliveryFigures) {
    let m = metrics();
    let labels = registry::DoraLabels {
        domain: figures.domain.clone(),
        ring: figures.ring.clone().unwrap_or_default(),
    };
    m.dora_deployments_per_day
        .get_or_create(&labels)
        .set(figures.deployments_per_day);
    for (family, value) in [
        (&m.dora_lead_time, figures.lead_time_seconds),
        (&m.dora_change_failure_ratio, figures.change_failure_rate),
        (&m.dora_time_to_restore, figures.time_to_restore_seconds),
    ] {
        match value {
            Some(value) => {
                family.get_or_create(&labels).set(value);
            }
            None => {
                family.remove(&labels);
            }
        }
    }
}

/// A watch of (cluster, kind) failed and will be restarted.
pub fn watch_restarted(cluster: &str, kind: Kind) {
    metrics()
        .watch_restarts
        .get_or_create(&Metrics::cluster_kind(cluster, kind))
        .inc();
}

/// A watch of (cluster, kind) delivered an event (or completed a list).
pub fn event_received(cluster: &str, kind: Kind) {
    let m = metrics();
    let labels = Metrics::cluster_kind(cluster, kind);
    m.watch_events.get_or_create(&labels).inc();
    m.last_success(labels, Instant::now());
}

/// How many objects of each kind one cluster holds now (kinds it holds none of: no series).
pub fn set_objects_tracked(cluster: &str, count_of: impl Fn(Kind) -> u64) {
    let m = metrics();
    for kind in Kind::ALL {
        let labels = Metrics::cluster_kind(cluster, kind);
        match count_of(kind) {
            0 => {
                m.objects_tracked.remove(&labels);
            }
            count => {
                m.objects_tracked
                    .get_or_create(&labels)
                    .set(i64::try_from(count).unwrap_or(i64::MAX));
            }
        }
    }
}

/// Whether this process holds the collector lease of a cluster.
pub fn set_cluster_held(cluster: &str, held: bool) {
    metrics()
        .lease_held
        .get_or_create(&Metrics::cluster(cluster))
        .set(i64::from(held));
}

/// One database write of `rows` rows that took `elapsed`.
pub fn write_batch(rows: usize, elapsed: Duration, ok: bool) {
    let m = metrics();
    m.write_seconds.observe(elapsed.as_secs_f64());
    m.write_rows.inc_by(rows as u64);
    if !ok {
        m.write_failures.inc();
    }
}

/// What one cluster's evaluation found: its objects by state and each domain's fully-healthy
/// flag at its current version (None: the cluster is no longer evaluated here, its series
/// disappear). Other clusters' series are left as they are, so a round costs the clusters it
/// re-evaluated.
pub fn cluster_evaluated(cluster: &str, found: Option<(&StateCounts, &[DomainVerdict])>) {
    metrics().record_cluster_evaluation(cluster, found);
}

/// When a cluster's data was last known good (None: never, or no longer collected here).
pub fn set_cluster_last_good(cluster: &str, last_good: Option<DateTime<Utc>>) {
    metrics().record_last_good(cluster, last_good);
}

/// A notification was sent to `sink` (`delivered`) or failed and will be retried.
pub fn alert_delivery(sink: &str, delivered: bool) {
    metrics().record_delivery(sink, delivered);
}

/// Notifications waiting in the outbox.
pub fn set_outbox_pending(pending: i64) {
    metrics().outbox_pending.set(pending);
}
