//! Where the time of reading YAML goes: serde-saphyr's parser alone (events only), serde-saphyr
//! reading every document and keeping nothing (`IgnoredAny`), and `fleetglass evaluate`'s reader
//! (`offline::read_inputs`, on every core, into the engine's objects), on the same generated
//! Kustomizations as `kubectl get -o yaml` prints them. Prints MB/s and µs per document, so
//! the gap between the parser's floor and the reader is plain (docs/PERFORMANCE-HISTORY.md
//! §9.25). `cargo bench --bench yaml -- 20000` runs another size.

use serde_json::{Value, json};
use std::time::Instant;

mod support;

fn main() {
    fleetglass_allocator::configure();
    let documents = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or_else(|| support::size(20_000, 2_000));
    let text: String = (0..documents)
        .map(|i| {
            format!(
                "---\n{}",
                serde_saphyr::to_string(&kustomization(i)).expect("yaml")
            )
        })
        .collect();
    let megabytes = text.len() as f64 / 1e6;
    let report = |what: &str, seconds: f64| {
        println!(
            "{what}: {documents} documents, {megabytes:.1} MB in {seconds:.2} s: {:.1} MB/s, {:.1} µs/document",
            megabytes / seconds,
            seconds * 1e6 / documents as f64
        );
    };

    let started = Instant::now();
    let mut events = 0;
    for event in serde_saphyr::granit_parser::Parser::new_from_str(&text) {
        event.expect("the text parses");
        events += 1;
    }
    report(
        &format!("parser events only ({events} events)"),
        started.elapsed().as_secs_f64(),
    );

    let started = Instant::now();
    let options = fleetglass::yaml::options(100);
    let read: Vec<serde::de::IgnoredAny> =
        serde_saphyr::from_multiple_with_options(&text, options).expect("the text reads");
    assert_eq!(read.len(), documents);
    report(
        "serde-saphyr, values ignored, one core",
        started.elapsed().as_secs_f64(),
    );

    let file =
        std::env::temp_dir().join(format!("fleetglass-bench-yaml-{}.yaml", std::process::id()));
    std::fs::write(&file, &text).expect("write the input");
    let started = Instant::now();
    let inputs = fleetglass::offline::read_inputs(std::slice::from_ref(&file), "bench");
    let seconds = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&file);
    assert_eq!(inputs.expect("the file reads").objects.len(), documents);
    report("evaluate's reader, every core, into objects", seconds);
}

fn kustomization(i: usize) -> Value {
    let revision = "main@sha1:0123456789abcdef0123456789abcdef01234567";
    json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": format!("app-{i}"), "namespace": "flux-system", "generation": 3,
            "labels": {"team": "a", "tier": "web"}, "creationTimestamp": "2026-11-29T10:00:00Z"},
        "spec": {"interval": "5m", "path": "./apps/x", "prune": true,
            "sourceRef": {"kind": "GitRepository", "name": "repo"},
            "dependsOn": [{"name": format!("app-{}", i.saturating_sub(1))}]},
        "status": {"observedGeneration": 3, "lastAppliedRevision": revision,
            "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                "message": format!("Applied revision: {revision}"),
                "lastTransitionTime": "2026-11-29T11:00:00Z", "observedGeneration": 3}],
            "inventory": {"entries": [{"id": "apps_web_apps_Deployment", "v": "v1"}]}}
    })
}
