//! An incident's key: what makes root causes on several clusters one incident. The engine's
//! cause (its code and identifying parameters, never its words) and its subject: the object's
//! kind, namespace and name, or any cluster for a cluster that is itself the cause.

use crate::health::{CLUSTER_KIND, Cause, Subject};
use crate::model::ObjectId;
use sha2::{Digest, Sha256};

/// `Kind/namespace/name/<digest>`, `Cluster//*/<digest>` for a cluster: readable, and short
/// however many parameters the cause has.
pub fn key_of(id: &str, cause: &Cause) -> String {
    let subject = match Subject::of(id) {
        Some(Subject::Object {
            kind,
            namespace,
            name,
        }) => format!("{kind}/{namespace}/{name}"),
        Some(Subject::Cluster) => format!("{CLUSTER_KIND}//*"),
        None => id.to_string(),
    };
    let digest = Sha256::digest(cause.identity().as_bytes());
    let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{subject}/{short}")
}

/// `cluster/Kind/namespace/name` → (kind, namespace, name).
pub fn object_of(id: &str) -> (&str, &str, &str) {
    ObjectId::split(id).map_or(("", "", id), |(_, kind, namespace, name)| {
        (kind, namespace, name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::CauseCode;

    fn crash_loop(container: &str) -> Cause {
        Cause::new(CauseCode::CrashLoop).with("container", container)
    }

    #[test]
    fn the_key_names_the_object_and_differs_by_cause_not_by_cluster() {
        let on =
            |cluster: &str, cause: &Cause| key_of(&format!("{cluster}/Deployment/apps/web"), cause);
        let key = on("prod-1", &crash_loop("manager"));
        assert!(key.starts_with("Deployment/apps/web/"), "{key}");
        assert_eq!(key, on("prod-2", &crash_loop("manager")));
        assert_ne!(key, on("prod-1", &crash_loop("sidecar")));
        assert_ne!(
            key,
            key_of("prod-1/Deployment/apps/api", &crash_loop("manager"))
        );
    }

    #[test]
    fn clusters_that_are_their_own_cause_share_a_key() {
        let stale = Cause::new(CauseCode::ClusterStale);
        let a = key_of("prod-1/Cluster//prod-1", &stale);
        assert_eq!(a, key_of("prod-2/Cluster//prod-2", &stale));
        assert!(a.starts_with("Cluster//*/"), "{a}");
        assert_ne!(
            a,
            key_of(
                "prod-1/Cluster//prod-1",
                &Cause::new(CauseCode::ClusterUnreachable)
            )
        );
    }
}
