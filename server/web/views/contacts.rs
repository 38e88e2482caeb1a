//! Who to call: each domain's owner, runbook and Slack channel from the config, for the
//! problems and alerts that touch the domain.

use crate::health::DomainSpec;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Contact {
    pub domain: String,
    pub owner: Option<String>,
    pub runbook: Option<String>,
    pub slack_channel: Option<String>,
}

/// The contacts of the named domains that have any, in the order the config lists them.
pub fn contacts<'a>(
    configured: &[DomainSpec],
    names: impl IntoIterator<Item = &'a str>,
) -> Vec<Contact> {
    let names: Vec<&str> = names.into_iter().collect();
    configured
        .iter()
        .filter(|d| names.contains(&d.name.as_str()))
        .filter(|d| d.owner.is_some() || d.runbook.is_some() || d.slack_channel.is_some())
        .map(|d| Contact {
            domain: d.name.clone(),
            owner: d.owner.clone(),
            runbook: d.runbook.clone(),
            slack_channel: d.slack_channel.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_domains_with_a_contact_in_config_order() {
        let config = crate::config::from_yaml_str(
            "domains:
  - {name: gateway, select: {labels: {d: gw}}, version: {from: chart_version, namespace: gw, name: gw},
     owner: team-edge, runbook: 'https://runbooks.example.com/gateway', slack_channel: '#edge'}
  - {name: tenants, select: {labels: {d: t}}, version: {from: chart_version, namespace: t, name: t}, owner: team-t}
  - {name: quiet, select: {labels: {d: q}}, version: {from: chart_version, namespace: q, name: q}}",
        )
        .unwrap();
        let found = contacts(&config.domains, ["quiet", "tenants", "gateway"]);
        let names: Vec<&str> = found.iter().map(|c| c.domain.as_str()).collect();
        assert_eq!(names, ["gateway", "tenants"]);
        assert_eq!(found[0].slack_channel.as_deref(), Some("#edge"));
        assert!(contacts(&config.domains, ["quiet"]).is_empty());
    }
}
