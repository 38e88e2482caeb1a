//! The demo fleet as data: its clusters (with the labels domains select them by) and its domains
//! (in the configuration format fleetglass reads).

pub struct DemoCluster {
    pub name: &'static str,
    pub labels: &'static [(&'static str, &'static str)],
}

impl DemoCluster {
    pub fn label(&self, key: &str) -> Option<&'static str> {
        self.labels.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

/// Rings in promotion order: `dev` gets every change first, then `staging`, then `prod`.
pub const RINGS: [&str; 3] = ["dev", "staging", "prod"];

pub const DEMO_CLUSTERS: &[DemoCluster] = &[
    DemoCluster {
        name: "dev-1",
        labels: &[("ring", "dev"), ("region", "eu"), ("environment", "dev")],
    },
    DemoCluster {
        name: "staging-1",
        labels: &[
            ("ring", "staging"),
            ("region", "eu"),
            ("environment", "staging"),
        ],
    },
    DemoCluster {
        name: "prod-eu-1",
        labels: &[("ring", "prod"), ("region", "eu"), ("environment", "prod")],
    },
    DemoCluster {
        name: "prod-eu-2",
        labels: &[("ring", "prod"), ("region", "eu"), ("environment", "prod")],
    },
    DemoCluster {
        name: "prod-us-1",
        labels: &[("ring", "prod"), ("region", "us"), ("environment", "prod")],
    },
];

/// The label every Flux object and workload of a domain carries in the demo.
pub const DOMAIN_LABEL: &str = "fleetglass.dev/domain";

/// The four domains, using all three version sources and all three selection modes. Three
/// have an owner; tenants has none, as some domain in a real config does, so the pages show
/// what they say about a missing owner.
pub const DEMO_DOMAINS_YAML: &str = "\
- name: gateway
  select: {root: flux-system/gateway}
  clusters: {}
  version: {from: chart_version, namespace: gateway-system, name: gateway}
  owner: team-edge
  runbook: https://runbooks.example.com/gateway
- name: networking
  select: {labels: {fleetglass.dev/domain: networking}}
  clusters: {}
  version: {from: chart_version, namespace: networking, name: netop}
  owner: team-net
  slack_channel: '#net-oncall'
- name: observability
  select: {labels: {fleetglass.dev/domain: observability}}
  clusters: {}
  version: {from: image_tag, kind: Deployment, namespace: observability, name: collector}
  owner: team-observability
- name: tenants
  select: {namespaces: [tenants]}
  clusters: {}
  version: {from: source_revision, kind: OCIRepository, namespace: tenants, name: tenants}
";
