//! helm-controller's HelmRelease: its chart (a template naming a HelmRepository chart, or a
//! chartRef), and the status a release leaves (the HelmChart it made, history, conditions).

use super::meta::{Meta, object};
use super::reference::Ref;
use serde_json::{Value, json};

pub const API_VERSION: &str = "helm.toolkit.fluxcd.io/v2";

#[derive(Debug, Clone)]
pub enum ChartSource {
    /// `spec.chart.spec`; helm-controller creates the HelmChart `<namespace>-<name>`.
    Template {
        chart: String,
        /// None leaves it out: helm-controller then takes the latest (`*`).
        version: Option<String>,
        interval: Option<String>,
        source: Ref,
    },
    /// `spec.chartRef` (an OCIRepository or a HelmChart).
    Ref(Ref),
}

#[derive(Debug, Clone)]
pub struct HelmRelease {
    pub meta: Meta,
    pub interval: String,
    pub chart: ChartSource,
    pub status: Option<HelmReleaseStatus>,
}

/// One Helm release revision as `status.history[]` records it.
#[derive(Debug, Clone)]
pub struct HistoryEntry {
    pub chart_name: String,
    pub chart_version: String,
    pub app_version: Option<String>,
    /// `deployed`, `superseded`, `failed`…
    pub status: String,
    /// The Helm release revision (`.v<n>`).
    pub version: i64,
}

#[derive(Debug, Clone, Default)]
pub struct HelmReleaseStatus {
    pub observed_generation: i64,
    /// `<namespace>/<name>` of the HelmChart made from a chart template.
    pub helm_chart: Option<String>,
    pub last_attempted_revision: Option<String>,
    /// Newest first.
    pub history: Vec<HistoryEntry>,
    pub conditions: Vec<Value>,
}

impl HelmRelease {
    pub fn to_json(&self) -> Value {
        let mut spec = json!({"interval": self.interval});
        match &self.chart {
            ChartSource::Template {
                chart,
                version,
                interval,
                source,
            } => {
                let mut template = json!({"chart": chart, "sourceRef": source.to_json()});
                if let Some(version) = version {
                    template["version"] = Value::from(version.as_str());
                }
                if let Some(interval) = interval {
                    template["interval"] = Value::from(interval.as_str());
                }
                spec["chart"] = json!({"spec": template});
            }
            ChartSource::Ref(reference) => spec["chartRef"] = reference.to_json(),
        }
        let status = self.status.as_ref().map(HelmReleaseStatus::to_json);
        object(API_VERSION, "HelmRelease", &self.meta, spec, status)
    }
}

impl HistoryEntry {
    fn to_json(&self) -> Value {
        let mut entry = json!({"chartName": self.chart_name, "chartVersion": self.chart_version,
                               "status": self.status, "version": self.version});
        if let Some(app_version) = &self.app_version {
            entry["appVersion"] = Value::from(app_version.as_str());
        }
        entry
    }
}

impl HelmReleaseStatus {
    fn to_json(&self) -> Value {
        let mut status = json!({"observedGeneration": self.observed_generation});
        if let Some(chart) = &self.helm_chart {
            status["helmChart"] = Value::from(chart.as_str());
        }
        if let Some(revision) = &self.last_attempted_revision {
            status["lastAttemptedRevision"] = Value::from(revision.as_str());
        }
        status["history"] = self.history.iter().map(HistoryEntry::to_json).collect();
        status["conditions"] = Value::Array(self.conditions.clone());
        status
    }
}
