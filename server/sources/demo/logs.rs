//! The previous run's log of a demo container, as its program would have written it before it
//! died: netop's manager (incident b) fails on the CRD Helm deleted; anything else on a database it could
//! not migrate. The connection string carries a password, as real logs too often do: the page
//! shows it redacted.

use super::DEMO_CLUSTERS;

/// None for a cluster that is not the demo's.
pub fn previous_log(cluster: &str, namespace: &str, pod: &str, container: &str) -> Option<String> {
    if !DEMO_CLUSTERS.iter().any(|c| c.name == cluster) {
        return None;
    }
    let start = [
        format!("2026-12-06T09:14:02.113Z\tINFO\tstarting {container} (pod {namespace}/{pod})"),
        format!("2026-12-06T09:14:02.118Z\tINFO\tconfig loaded from /etc/{container}/config.yaml"),
        format!(
            "2026-12-06T09:14:02.120Z\tINFO\tstate store: postgres://{container}:hunter2@db.{namespace}.svc:5432/{container}"
        ),
    ];
    let end: Vec<String> = if pod.starts_with("netop-") {
        vec![
            "2026-12-06T09:14:02.904Z\tINFO\tsetting up watches for RateLimitConfig".into(),
            "2026-12-06T09:14:03.377Z\tERROR\tcontroller-runtime.source\tif kind is a CRD, it should be installed before calling Start".into(),
            "2026-12-06T09:14:03.377Z\tERROR\tsetup\tproblem running manager\t{\"error\": \"no matches for kind \\\"RateLimitConfig\\\" in version \\\"ratelimit.solo.io/v1alpha1\\\"\"}".into(),
        ]
    } else {
        vec![
            "2026-12-06T09:14:03.010Z\tERROR\tmigration 0042_add_index failed: relation \"orders\" does not exist".into(),
            "panic: cannot start without a schema".into(),
            String::new(),
            "goroutine 1 [running]:".into(),
            "main.main()\n\t/src/cmd/main.go:57 +0x1d4".into(),
        ]
    };
    Some(start.into_iter().chain(end).collect::<Vec<_>>().join("\n"))
}
