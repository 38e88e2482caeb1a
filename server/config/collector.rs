//! Settings of the collector (leases, probes, discovery) and of history retention. Every field
//! has a default, so a config without these sections keeps working.

use crate::model::serde_go;
use chrono::TimeDelta;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CollectorSettings {
    /// How long a collector's claim on a cluster lasts without renewal; renewed every third of
    /// it. A replica that dies loses its clusters to another within this period.
    #[serde(with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub lease: TimeDelta,
    /// How often each cluster is asked for its version (a cheap liveness check).
    #[serde(with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub probe_interval: TimeDelta,
    /// How often each cluster's served Flux kinds and versions are discovered again.
    #[serde(with = "serde_go")]
    #[schemars(with = "super::schema::GoDuration")]
    pub rediscover: TimeDelta,
}

impl Default for CollectorSettings {
    fn default() -> Self {
        CollectorSettings {
            lease: TimeDelta::seconds(15),
            probe_interval: TimeDelta::seconds(10),
            rediscover: TimeDelta::minutes(5),
        }
    }
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Retention {
    /// State transitions older than this are deleted (`30d`, `720h`).
    #[serde(deserialize_with = "days_or_go")]
    #[schemars(with = "super::schema::DaysOrGoDuration")]
    pub transitions: TimeDelta,
    /// Rollouts and domain outages (the delivery figures) older than this are deleted: they
    /// outlive the transitions, so a year of DORA figures survives a month of raw history.
    #[serde(deserialize_with = "days_or_go")]
    #[schemars(with = "super::schema::DaysOrGoDuration")]
    pub rollouts: TimeDelta,
    /// Audit trail events older than this are deleted (a year by default).
    #[serde(deserialize_with = "days_or_go")]
    #[schemars(with = "super::schema::DaysOrGoDuration")]
    pub audit: TimeDelta,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            transitions: TimeDelta::days(30),
            rollouts: TimeDelta::days(365),
            audit: TimeDelta::days(365),
        }
    }
}

/// Retention periods are long, so whole days (`30d`) are accepted besides Go durations.
fn days_or_go<'de, D: serde::Deserializer<'de>>(de: D) -> Result<TimeDelta, D::Error> {
    let text = String::deserialize(de)?;
    if let Some(days) = text.trim().strip_suffix('d')
        && let Ok(days) = days.parse::<i64>()
        && (0..=36_500).contains(&days)
    {
        return Ok(TimeDelta::days(days));
    }
    crate::model::parse_go_duration(&text).map_err(serde::de::Error::custom)
}
