//! Everything that produces object events: the kube watchers and the demo fleet. Both emit the
//! same [`SourceEvent`]s, so everything downstream is exercised identically.
//!
//! Dependencies run one way: a source is told which clusters to collect (a [`ClusterSet`]
//! that changes as leases are won and lost) and sends events into a channel; it knows nothing
//! of what reads them. Sources import neither `ingest` nor `store`; the composition root
//! (`crate::app`) connects them to the runner.

use crate::model::{Kind, Object, ObjectId, Warning};
use chrono::{DateTime, Utc};
use std::collections::BTreeSet;
use tokio::sync::{mpsc, watch};

/// Cluster names: those a source is to collect, those a collector holds.
pub type ClusterSet = BTreeSet<String>;

/// The clusters a source collects, kept up to date by whoever runs it; the source stops when
/// its sender is gone.
pub type Collect = watch::Receiver<ClusterSet>;

#[derive(Debug, Clone, PartialEq)]
pub enum SourceEvent {
    /// A full list of (cluster, kind) begins: objects not applied again before the matching
    /// `SyncDone` disappeared while the watch was down and are swept.
    SyncStart {
        cluster: String,
        kind: Kind,
    },
    Apply(Box<Object>),
    Delete(ObjectId),
    SyncDone {
        cluster: String,
        kind: Kind,
    },
    /// The watch of (cluster, kind) began (`complete: false`) or completed its first full
    /// list (`complete: true`). Until then what is held of the kind is partial: neither its
    /// objects nor the absence of one is evidence. A later relist keeps what was held.
    FirstList {
        cluster: String,
        kind: Kind,
        complete: bool,
    },
    /// The cluster answered at `at` (a watch event, a bookmark, a successful list).
    ClusterAlive {
        cluster: String,
        at: DateTime<Utc>,
    },
    /// The cluster stopped answering, with why ("connection refused", "401 Unauthorized").
    ClusterError {
        cluster: String,
        error: String,
    },
    /// A Warning event about an object the source tracks, or one of its pods.
    Warning(Box<Warning>),
    /// A kind cannot be read on a cluster (RBAC Forbidden, not served), or can again (`None`).
    KindError {
        cluster: String,
        kind: Kind,
        error: Option<String>,
    },
}

impl SourceEvent {
    pub fn cluster(&self) -> &str {
        match self {
            SourceEvent::SyncStart { cluster, .. }
            | SourceEvent::SyncDone { cluster, .. }
            | SourceEvent::FirstList { cluster, .. }
            | SourceEvent::ClusterAlive { cluster, .. }
            | SourceEvent::ClusterError { cluster, .. }
            | SourceEvent::KindError { cluster, .. } => cluster,
            SourceEvent::Apply(object) => &object.cluster,
            SourceEvent::Delete(id) => id.parts().map_or("", |(cluster, ..)| cluster),
            SourceEvent::Warning(warning) => warning.cluster(),
        }
    }
}

pub type EventSender = mpsc::Sender<SourceEvent>;
pub type EventReceiver = mpsc::Receiver<SourceEvent>;

/// Bounded so a flood from one source applies back-pressure instead of growing memory.
pub fn channel() -> (EventSender, EventReceiver) {
    mpsc::channel(16_384)
}

pub mod actions;
pub mod demo;
pub mod kube;
pub mod logs;
