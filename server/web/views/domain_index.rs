//! `/domains`: every domain with the versions it runs, how many of its clusters are fully
//! healthy, its worst state, and who owns it ("no owner configured" when nobody does).

use super::present::encode;
use crate::health::State;
use crate::web::error::ApiError;
use crate::web::fleet_view::{DomainView, FleetView};
use crate::web::scope::Scope;
use crate::web::state::Site;
use chrono::{DateTime, Utc};
use std::collections::BTreeSet;

pub struct DomainIndex {
    pub rows: Vec<DomainEntry>,
}

pub struct DomainEntry {
    pub name: String,
    pub href: String,
    /// The worst state of its cells; None when it is deployed nowhere.
    pub state: Option<State>,
    /// Versions applied, and offered but not applied yet, across its clusters.
    pub versions: Vec<String>,
    pub offered: Vec<String>,
    pub fully_healthy: usize,
    pub clusters: usize,
    pub owner: Option<String>,
    pub runbook: Option<String>,
}

impl DomainIndex {
    /// The domains `scope` sees, on its clusters.
    pub async fn load(
        store: &crate::store::Store,
        site: &Site,
        scope: &Scope,
        now: DateTime<Utc>,
    ) -> Result<DomainIndex, ApiError> {
        let fleet = FleetView::load(store, site, scope, now).await?;
        let site = &scope.site(site);
        let rows = fleet
            .domains
            .into_iter()
            .map(|domain| entry(site, domain))
            .collect();
        Ok(DomainIndex { rows })
    }
}

fn entry(site: &Site, domain: DomainView) -> DomainEntry {
    let spec = site.domains.iter().find(|d| d.name == domain.name);
    let versions: BTreeSet<String> = domain
        .clusters
        .iter()
        .map(|c| {
            c.version
                .clone()
                .unwrap_or_else(|| "version unknown".into())
        })
        .collect();
    let offered: BTreeSet<String> = domain
        .clusters
        .iter()
        .filter_map(|c| c.offered.clone())
        .collect();
    DomainEntry {
        href: format!("/domains/{}", encode(&domain.name)),
        state: domain.clusters.iter().map(|c| c.state).reduce(State::worst),
        versions: versions.into_iter().collect(),
        offered: offered.into_iter().collect(),
        fully_healthy: domain.clusters.iter().filter(|c| c.fully_healthy).count(),
        clusters: domain.clusters.len(),
        owner: spec.and_then(|d| d.owner.clone()),
        runbook: spec.and_then(|d| d.runbook.clone()),
        name: domain.name,
    }
}
