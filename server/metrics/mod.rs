//! Prometheus metrics, through the prometheus-client crate, served at `/metrics`. The functions
//! here are what the rest of the code calls; labels are bounded by the configuration (clusters,
//! domains, sinks), the kind and state vocabularies and the route templates — never object names
//! or raw URLs.

mod http;
mod registry;

pub use http::track as track_http;

use crate::health::{ClusterInfo, DomainVerdict};
use crate::model::Kind;
use axum::http::header;
use axum::response::IntoResponse;
use registry::{Metrics, metrics};
use std::collections::{BTreeMap, HashMap};
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

/// How many objects of each (cluster, kind) the fleet holds now.
pub fn set_objects_tracked(counts: &BTreeMap<(String, Kind), u64>) {
    let m = metrics();
    m.objects_tracked.clear();
    for ((cluster, kind), count) in counts {
        m.objects_tracked
            .get_or_create(&Metrics::cluster_kind(cluster, *kind))
            .set(i64::try_from(*count).unwrap_or(i64::MAX));
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

/// What an evaluation found: objects by state per cluster, each domain's fully-healthy flag per
/// cluster at its current version, and when each cluster's data was last known good. Series of
/// clusters and domains no longer evaluated here disappear.
pub fn evaluated<'a>(
    state_counts: &StateCounts,
    domains: impl IntoIterator<Item = &'a DomainVerdict>,
    clusters: impl IntoIterator<Item = &'a ClusterInfo>,
) {
    metrics().record_evaluation(state_counts, domains, clusters);
}

/// Objects per state (`State::as_str`), per cluster.
pub type StateCounts = HashMap<String, BTreeMap<&'static str, u64>>;

/// A notification was sent to `sink` (`delivered`) or failed and will be retried.
pub fn alert_delivery(sink: &str, delivered: bool) {
    metrics().record_delivery(sink, delivered);
}

/// Notifications waiting in the outbox.
pub fn set_outbox_pending(pending: i64) {
    metrics().outbox_pending.set(pending);
}
