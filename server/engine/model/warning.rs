//! A Kubernetes Warning event about an object fleetglass tracks: evidence of why it is in the
//! state it is in ("Failed to pull image …", "Back-off restarting failed container"), kept
//! beside the verdict, never read by the engine.

use super::ObjectId;
use chrono::{DateTime, Utc};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    /// The object it is about (`regarding`), as `cluster/Kind/namespace/name`.
    pub regarding: ObjectId,
    /// The Event's own uid: the same event sent again (its count grown) replaces the stored one.
    pub uid: String,
    pub reason: String,
    pub note: String,
    /// How many times it happened (the series' count, 1 for a single event).
    pub count: i32,
    pub last_seen: DateTime<Utc>,
    /// Who reported it: `kubelet`, `helm-controller`…
    pub reporter: String,
}

impl Warning {
    pub fn cluster(&self) -> &str {
        self.regarding.parts().map_or("", |(cluster, ..)| cluster)
    }
}
