//! Which clusters this runner writes for, when collectors share the fleet through leases.
//! The runner adopts a cluster before its watchers start (so no event of it is dropped) and
//! drops it before they stop (so a late event cannot write over the new owner's rows).

pub use crate::sources::ClusterSet;
use crate::sources::SourceEvent;
use tokio::sync::watch;

pub(super) struct Ownership {
    /// The clusters whose leases this process holds (from the lease keeper).
    pub leases: watch::Receiver<ClusterSet>,
    /// The clusters the runner has adopted; the sources collect exactly these.
    pub collect: watch::Sender<ClusterSet>,
    /// Adopted clusters not heard from yet: their first list may be incomplete, so nothing is
    /// written for them until the source says the cluster is alive.
    pub held: ClusterSet,
}

/// What changed in the lease set since the runner last looked.
pub(super) struct Change {
    pub gained: Vec<String>,
    pub lost: Vec<String>,
}

impl Ownership {
    pub fn new(leases: watch::Receiver<ClusterSet>) -> (Ownership, watch::Receiver<ClusterSet>) {
        let (collect, collecting) = watch::channel(ClusterSet::new());
        let ownership = Ownership {
            leases,
            collect,
            held: ClusterSet::new(),
        };
        (ownership, collecting)
    }

    pub fn accepts(&self, event: &SourceEvent) -> bool {
        self.collect.borrow().contains(event.cluster())
    }

    /// Releases the hold on a cluster when it proves alive; returns the cluster if it was held.
    pub fn heard_from(&mut self, event: &SourceEvent) -> Option<String> {
        match event {
            SourceEvent::ClusterAlive { cluster, .. } if self.held.remove(cluster) => {
                Some(cluster.clone())
            }
            _ => None,
        }
    }

    /// Compares the leases with what is adopted.
    pub fn change(&mut self) -> Change {
        let leases = self.leases.borrow_and_update().clone();
        let adopted = self.collect.borrow().clone();
        Change {
            gained: leases.difference(&adopted).cloned().collect(),
            lost: adopted.difference(&leases).cloned().collect(),
        }
    }

    pub fn adopt(&mut self, cluster: &str) {
        self.held.insert(cluster.to_string());
        self.collect.send_modify(|set| {
            set.insert(cluster.to_string());
        });
    }

    pub fn drop_cluster(&mut self, cluster: &str) {
        self.held.remove(cluster);
        self.collect.send_modify(|set| {
            set.remove(cluster);
        });
    }
}

/// Waits until the lease set changes; never returns when there is no lease keeper.
pub(super) async fn leases_changed(ownership: &mut Option<Ownership>) -> bool {
    match ownership {
        Some(o) => o.leases.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}
