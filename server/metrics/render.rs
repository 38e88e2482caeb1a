//! The Prometheus text exposition format (version 0.0.4), written by hand.

use super::{Registry, WRITE_BUCKETS, registry};
use axum::http::header;
use axum::response::IntoResponse;
use std::fmt::Write;
use std::time::Instant;

/// Reads one series' value out of a (cluster, kind)'s stats, if it has one yet.
type KindValue = fn(&super::KindStats, Instant) -> Option<f64>;

/// `GET /metrics`.
pub async fn serve() -> impl IntoResponse {
    let text = render(&registry(), Instant::now());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// Label values come from config and the kind list, but escape them anyway.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn render(r: &Registry, now: Instant) -> String {
    let mut out = String::new();
    let per_kind: [(&str, &str, &str, KindValue); 4] = [
        (
            "fleetglass_watch_restarts_total",
            "counter",
            "Watch failures after which the watch of a kind on a cluster was restarted.",
            |s, _| Some(s.watch_restarts as f64),
        ),
        (
            "fleetglass_watch_events_total",
            "counter",
            "Events received from the watch of a kind on a cluster.",
            |s, _| Some(s.events as f64),
        ),
        (
            "fleetglass_watch_last_success_age_seconds",
            "gauge",
            "Seconds since the watch of a kind on a cluster last delivered an event or a list.",
            |s, now| s.last_success.map(|t| now.duration_since(t).as_secs_f64()),
        ),
        (
            "fleetglass_objects_tracked",
            "gauge",
            "Objects of a kind on a cluster held in memory.",
            |s, _| Some(s.objects as f64),
        ),
    ];
    for (name, kind, help, value) in per_kind {
        header(&mut out, name, kind, help);
        for ((cluster, k), stats) in &r.kinds {
            if let Some(v) = value(stats, now) {
                let _ = writeln!(
                    out,
                    "{name}{{cluster=\"{}\",kind=\"{k}\"}} {v}",
                    escape(cluster)
                );
            }
        }
    }
    header(
        &mut out,
        "fleetglass_cluster_lease_held",
        "gauge",
        "1 when this process holds the collector lease of the cluster.",
    );
    for (cluster, held) in &r.clusters_held {
        let _ = writeln!(
            out,
            "fleetglass_cluster_lease_held{{cluster=\"{}\"}} {}",
            escape(cluster),
            u8::from(*held)
        );
    }
    let w = &r.writes;
    header(
        &mut out,
        "fleetglass_db_write_seconds",
        "histogram",
        "Duration of the collector's batched database writes.",
    );
    for (bound, count) in WRITE_BUCKETS.iter().zip(w.buckets) {
        let _ = writeln!(
            out,
            "fleetglass_db_write_seconds_bucket{{le=\"{bound}\"}} {count}"
        );
    }
    let _ = writeln!(
        out,
        "fleetglass_db_write_seconds_bucket{{le=\"+Inf\"}} {}",
        w.batches
    );
    let _ = writeln!(out, "fleetglass_db_write_seconds_sum {}", w.seconds);
    let _ = writeln!(out, "fleetglass_db_write_seconds_count {}", w.batches);
    for (name, help, value) in [
        (
            "fleetglass_db_write_failures_total",
            "Batched writes that failed (kept and retried).",
            w.failures,
        ),
        (
            "fleetglass_db_write_rows_total",
            "Rows (objects, deletions, transitions) written in batches.",
            w.rows,
        ),
    ] {
        header(&mut out, name, "counter", help);
        let _ = writeln!(out, "{name} {value}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;
    use std::time::Duration;

    #[test]
    fn renders_labelled_series_and_a_cumulative_histogram() {
        let mut r = Registry::default();
        let stats = r
            .kinds
            .entry(("prod \"eu\"".to_string(), Kind::HelmRelease))
            .or_default();
        stats.events = 3;
        stats.watch_restarts = 1;
        stats.last_success = Some(Instant::now());
        r.writes.batches = 2;
        r.writes.buckets = [0, 1, 1, 2, 2, 2, 2, 2, 2, 2];
        let text = render(&r, Instant::now() + Duration::from_secs(4));
        assert!(
            text.contains(
                "fleetglass_watch_events_total{cluster=\"prod \\\"eu\\\"\",kind=\"HelmRelease\"} 3"
            ),
            "{text}"
        );
        assert!(text.contains(
            "fleetglass_watch_restarts_total{cluster=\"prod \\\"eu\\\"\",kind=\"HelmRelease\"} 1"
        ));
        assert!(text.contains("fleetglass_watch_last_success_age_seconds{cluster=\"prod \\\"eu\\\"\",kind=\"HelmRelease\"} 4"));
        assert!(text.contains("fleetglass_db_write_seconds_bucket{le=\"0.01\"} 1"));
        assert!(text.contains("fleetglass_db_write_seconds_bucket{le=\"+Inf\"} 2"));
        assert!(text.contains("# TYPE fleetglass_db_write_seconds histogram"));
    }
}
