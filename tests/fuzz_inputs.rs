//! Bad input never panics: arbitrary text through the config parser and the evaluate reader,
//! and config files with every key misspelled in turn (rejected, naming the key).

use fleetglass::config::from_yaml_str;
use proptest::prelude::*;

const GOOD: &str = "listen: 127.0.0.1:8080
group_by: ring
clusters:
  - name: prod-eu-1
    kubeconfig: /etc/kc.yaml
    context: prod
    labels: {ring: prod}
domains:
  - name: gateway
    select: {labels: {domain: gateway}, namespaces: [gw]}
    clusters: {ring: prod}
    version: {from: chart_version, namespace: gw, name: gateway}
    stuck_after: 30m
thresholds:
  stuck_after: 15m
  freshness: 2m
  by_kind: {HelmRelease: 30m}
";

fn yamlish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("clusters:".to_string()),
        Just("domains:".to_string()),
        Just("thresholds:".to_string()),
        Just("- name: x".to_string()),
        Just("  labels: {a: b}".to_string()),
        Just("stuck_after: 15m".to_string()),
        Just("version: {from: chart_version}".to_string()),
        Just("select: {root: a/b}".to_string()),
        Just("  ".to_string()),
        Just("\n".to_string()),
        Just(": [".to_string()),
        any::<String>(),
    ];
    prop::collection::vec(token, 0..24).prop_map(|parts| parts.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_config_text_is_accepted_or_rejected_with_a_message(text in yamlish()) {
        if let Err(error) = from_yaml_str(&text) {
            prop_assert!(!error.to_string().is_empty());
        }
    }

    #[test]
    fn arbitrary_bytes_through_the_evaluate_reader_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let path = std::env::temp_dir().join(format!("fleetglass-fuzz-{}.yaml", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let _ = fleetglass::offline::read_inputs(&[path], "local");
    }
}

#[test]
fn every_misspelled_key_is_rejected_by_name() {
    assert!(from_yaml_str(GOOD).is_ok());
    let keys = [
        "listen",
        "group_by",
        "clusters",
        "kubeconfig",
        "context",
        "labels",
        "domains",
        "select",
        "namespaces",
        "version",
        "stuck_after",
        "thresholds",
        "freshness",
        "by_kind",
    ];
    let mut checked = 0;
    for key in keys {
        let typo = format!("{key}x");
        let text = GOOD.replacen(&format!("{key}:"), &format!("{typo}:"), 1);
        let error = from_yaml_str(&text).expect_err(&typo).to_string();
        assert!(error.contains(&typo), "{typo}: {error}");
        checked += 1;
    }
    assert_eq!(checked, keys.len());
}
