//! Reading and validating the config file.

use super::{Config, Secret};
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct ConfigError {
    file: Option<PathBuf>,
    key: String,
    problem: String,
}

impl ConfigError {
    fn new(file: Option<&Path>, key: impl Into<String>, problem: impl Into<String>) -> Self {
        ConfigError {
            file: file.map(Path::to_path_buf),
            key: key.into(),
            problem: problem.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self
            .file
            .as_ref()
            .map_or_else(|| "config".to_string(), |p| p.display().to_string());
        if self.key.is_empty() {
            write!(f, "{file}: {}", self.problem)
        } else {
            write!(f, "{file}: {}: {}", self.key, self.problem)
        }
    }
}

impl std::error::Error for ConfigError {}

/// Loads the file (when given), applies environment overrides and validates the result.
pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
    let mut config = match path {
        // Validated below, after the environment (a tokens file may supply the tokens).
        Some(path) => read(path)?,
        None => Config::default(),
    };
    if let Ok(url) = std::env::var("DATABASE_URL")
        && !url.is_empty()
    {
        config.database_url = Some(Secret::new(url));
    }
    if let Ok(listen) = std::env::var("FLEETGLASS_LISTEN")
        && !listen.is_empty()
    {
        config.listen = Some(listen);
    }
    if let Ok(file) = std::env::var("FLEETGLASS_API_TOKENS_FILE")
        && !file.is_empty()
    {
        let file = Path::new(&file);
        (config.web.add_tokens_file(file)).map_err(|e| ConfigError::new(Some(file), "", e))?;
    }
    if let Some(oidc) = &mut config.web.auth.oidc {
        let key = "web.auth.oidc.client_secret_file";
        oidc.read_secret()
            .map_err(|e| ConfigError::new(path, key, e))?;
    }
    validate(&config, path)?;
    Ok(config)
}

/// Reads and validates a file without environment overrides (`evaluate` needs no database).
pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
    let config = read(path)?;
    validate(&config, Some(path))?;
    Ok(config)
}

fn read(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new(Some(path), "", format!("cannot read: {e}")))?;
    parse(&text, Some(path))
}

/// Parses and validates YAML text without touching the environment (tests).
pub fn from_yaml_str(text: &str) -> Result<Config, ConfigError> {
    let config = parse(text, None)?;
    validate(&config, None)?;
    Ok(config)
}

fn parse(text: &str, path: Option<&Path>) -> Result<Config, ConfigError> {
    if text.trim().is_empty() {
        return Ok(Config::default());
    }
    let options = crate::yaml::options(crate::yaml::CONFIG_DEPTH);
    // The path (`web.auth.tokens[0].sha256`) is the key the error names; none for an error
    // of the text itself.
    let mut key = String::new();
    let read = serde_saphyr::with_deserializer_from_str_with_options(text, options, |yaml| {
        // A document of nothing (`---`, `~`) is the default configuration, as an empty file is.
        serde_path_to_error::deserialize::<_, Option<Config>>(yaml).map_err(|e| {
            key = e.path().to_string();
            e.into_inner()
        })
    });
    let error = match read {
        Ok(config) => return Ok(config.unwrap_or_default()),
        Err(error) => error,
    };
    let location = crate::yaml::position(&error)
        .map(|(line, column)| format!(" (line {line}, column {column})"))
        .unwrap_or_default();
    let key = if key == "." { String::new() } else { key };
    Err(ConfigError::new(
        path,
        key,
        format!("{}{location}", crate::yaml::message(&error)),
    ))
}

fn validate(config: &Config, path: Option<&Path>) -> Result<(), ConfigError> {
    let err = |key: String, problem: String| Err(ConfigError::new(path, key, problem));
    let mut names = BTreeSet::new();
    for (i, cluster) in config.clusters.iter().enumerate() {
        if !valid_name(&cluster.name) {
            return err(
                format!("clusters[{i}].name"),
                format!(
                    "{:?} is not a valid cluster name (letters, digits, '-', '_', '.')",
                    cluster.name
                ),
            );
        }
        if !names.insert(cluster.name.as_str()) {
            return err(
                format!("clusters[{i}].name"),
                format!("duplicate cluster {:?}", cluster.name),
            );
        }
        if cluster.in_cluster && (cluster.kubeconfig.is_some() || cluster.context.is_some()) {
            return err(
                format!("clusters[{i}]"),
                "in_cluster cannot be combined with kubeconfig or context".into(),
            );
        }
    }
    let mut domains = BTreeSet::new();
    for (i, domain) in config.domains.iter().enumerate() {
        if !valid_name(&domain.name) {
            return err(
                format!("domains[{i}].name"),
                format!("{:?} is not a valid domain name", domain.name),
            );
        }
        if !domains.insert(domain.name.as_str()) {
            return err(
                format!("domains[{i}].name"),
                format!("duplicate domain {:?}", domain.name),
            );
        }
        if domain.select.is_empty() {
            return err(
                format!("domains[{i}].select"),
                "select at least one of labels, root or namespaces".into(),
            );
        }
        if let Some(runbook) = &domain.runbook
            && !(runbook.starts_with("https://") || runbook.starts_with("http://"))
        {
            return err(
                format!("domains[{i}].runbook"),
                format!("{runbook:?} must be an http:// or https:// URL"),
            );
        }
        if let Some(root) = &domain.select.root
            && root
                .split_once('/')
                .is_none_or(|(ns, name)| ns.is_empty() || name.is_empty())
        {
            return err(
                format!("domains[{i}].select.root"),
                format!("{root:?} must be written namespace/name"),
            );
        }
    }
    for (i, rule) in config.commit_links.iter().enumerate() {
        if let Some(problem) = rule.problem() {
            return err(format!("commit_links[{i}]"), problem);
        }
    }
    if config.thresholds.stuck_after <= chrono::TimeDelta::zero() {
        return err(
            "thresholds.stuck_after".into(),
            "must be greater than zero".into(),
        );
    }
    if config.thresholds.freshness <= chrono::TimeDelta::zero() {
        return err(
            "thresholds.freshness".into(),
            "must be greater than zero".into(),
        );
    }
    let collector = &config.collector;
    for (key, value, minimum) in [
        (
            "collector.lease",
            collector.lease,
            chrono::TimeDelta::seconds(3),
        ),
        (
            "collector.probe_interval",
            collector.probe_interval,
            chrono::TimeDelta::seconds(1),
        ),
        (
            "collector.rediscover",
            collector.rediscover,
            chrono::TimeDelta::seconds(10),
        ),
        (
            "retention.transitions",
            config.retention.transitions,
            chrono::TimeDelta::hours(1),
        ),
        (
            "retention.rollouts",
            config.retention.rollouts,
            config.retention.transitions,
        ),
        (
            "retention.audit",
            config.retention.audit,
            chrono::TimeDelta::days(1),
        ),
    ] {
        if value < minimum {
            return err(
                key.into(),
                format!("must be at least {}", crate::model::human(minimum)),
            );
        }
    }
    let domains: Vec<&str> = config.domains.iter().map(|d| d.name.as_str()).collect();
    let scopes = config.web.scopes.as_ref();
    let identifies = config.web.auth.identifies();
    if let Some((key, problem)) = scopes.and_then(|s| s.problem(identifies, &domains)) {
        return err(key, problem);
    }
    if let Some((key, problem)) = config.web.problem(config.public_url.as_deref()) {
        return err(key, problem);
    }
    if let Some(listen) = &config.listen
        && listen.parse::<std::net::SocketAddr>().is_err()
    {
        return err(
            "listen".into(),
            format!("{listen:?} is not an address like 127.0.0.1:8080"),
        );
    }
    Ok(())
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
clusters:
  - name: prod-eu-1
    kubeconfig: /etc/fleet/prod.yaml
    context: prod-eu-1
    labels: {ring: prod, region: eu}
domains:
  - name: gateway
    select: {labels: {domain: gateway}}
    clusters: {ring: prod}
    version: {from: chart_version, namespace: gateway, name: gateway}
    stuck_after: 30m
thresholds:
  stuck_after: 20m
  by_kind: {HelmRelease: 45m}
"#;

    #[test]
    fn a_good_config_loads() {
        let config = from_yaml_str(GOOD).unwrap();
        assert_eq!(config.clusters[0].labels["ring"], "prod");
        assert_eq!(
            config.domains[0].stuck_after,
            Some(chrono::TimeDelta::minutes(30))
        );
        assert_eq!(
            config.thresholds.stuck_after,
            chrono::TimeDelta::minutes(20)
        );
        assert_eq!(
            config.thresholds.by_kind[&crate::model::Kind::HelmRelease],
            chrono::TimeDelta::minutes(45)
        );
        assert_eq!(config.group_by, "ring");
        assert_eq!(config.group_order, ["prod", "staging", "dev"]);
    }

    #[test]
    fn a_file_of_comments_or_an_empty_document_is_the_default() {
        for text in [
            "",
            "\n",
            "# nothing yet\n",
            "---\n",
            "---\n# only a comment\n",
            "~\n",
        ] {
            let config = from_yaml_str(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(config.listen, Config::default().listen, "{text:?}");
            assert!(config.clusters.is_empty(), "{text:?}");
        }
        let error = from_yaml_str("listen: a\n---\nlisten: b\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.ends_with("a second YAML document: one is expected (line 3, column 1)"),
            "{error}"
        );
    }

    #[test]
    fn unknown_keys_are_rejected_by_name_and_place() {
        let bad = GOOD.replace("kubeconfig:", "kubconfig:");
        let err = from_yaml_str(&bad).unwrap_err().to_string();
        assert!(err.starts_with("config: clusters[0]"), "{err}");
        assert!(err.contains("unknown field `kubconfig`"), "{err}");
        assert!(err.contains("line 4"), "{err}");
    }

    #[test]
    fn bad_values_name_the_key() {
        let cases = [
            (
                GOOD.replace("stuck_after: 20m", "stuck_after: 20 minutes"),
                "thresholds.stuck_after",
            ),
            (
                GOOD.replace("HelmRelease: 45m", "Gizmo: 45m"),
                "thresholds.by_kind",
            ),
            (
                GOOD.replace("from: chart_version", "from: vibes"),
                "domains[0].version",
            ),
            (
                GOOD.replace("name: gateway\n    select", "name: gate way\n    select"),
                "domains[0].name",
            ),
            (format!("{GOOD}listen: nowhere\n"), "listen"),
            (
                format!("{GOOD}collector: {{lease: 1s}}\n"),
                "collector.lease",
            ),
            (
                format!("{GOOD}retention: {{transitions: 5x}}\n"),
                "retention.transitions",
            ),
        ];
        for (text, key) in cases {
            let err = from_yaml_str(&text).unwrap_err().to_string();
            assert!(err.contains(key), "expected {key} in: {err}");
        }
    }

    #[test]
    fn collector_settings_default_and_accept_days() {
        let config = from_yaml_str(GOOD).unwrap();
        assert_eq!(config.collector.lease, chrono::TimeDelta::seconds(15));
        assert_eq!(config.retention.transitions, chrono::TimeDelta::days(30));
        assert_eq!(config.retention.rollouts, chrono::TimeDelta::days(365));
        let text = format!("{GOOD}collector: {{lease: 3s}}\nretention: {{transitions: 7d}}\n");
        let config = from_yaml_str(&text).unwrap();
        assert_eq!(config.collector.lease, chrono::TimeDelta::seconds(3));
        assert_eq!(config.retention.transitions, chrono::TimeDelta::days(7));
        let text = format!("{GOOD}retention: {{transitions: 40d, rollouts: 30d}}\n");
        let err = from_yaml_str(&text).unwrap_err().to_string();
        assert!(err.contains("retention.rollouts"), "{err}");
    }

    #[test]
    fn duplicate_clusters_and_empty_selections_are_rejected() {
        let dup = "clusters: [{name: a}, {name: a}]";
        assert!(
            from_yaml_str(dup)
                .unwrap_err()
                .to_string()
                .contains("duplicate cluster")
        );
        let empty = "domains: [{name: d, version: {from: chart_version, namespace: n, name: x}}]";
        assert!(
            from_yaml_str(empty)
                .unwrap_err()
                .to_string()
                .contains("domains[0].select")
        );
    }

    #[test]
    fn secrets_are_redacted_from_debug() {
        let config = from_yaml_str("database_url: postgres://u:hunter2@db/x").unwrap();
        assert!(!format!("{config:?}").contains("hunter2"));
    }
}
