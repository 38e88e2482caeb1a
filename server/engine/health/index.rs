//! Lookups over the input, built once in linear time so every rule is a hash probe instead of
//! a scan: objects by identity, objects by the Flux object that applied them, pods by the
//! workload that owns them, controller Deployments by name.

use super::jobs::cron_job_of;
use crate::model::{Kind, Object, Ref, controller_shard_of_deployment};
use std::collections::HashMap as StdHashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Maps keyed by names borrowed from the objects, hashed with [`KeyHasher`].
pub(super) type HashMap<K, V> = StdHashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// A multiplicative hasher, several times faster than SipHash on short names; at a million
/// objects hashing is a large share of the engine's time. Not hardened against crafted keys:
/// the keys are names of objects in clusters the operator watches, and a collision only costs
/// time.
#[derive(Default, Clone, Copy)]
pub(super) struct KeyHasher(u64);

impl KeyHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("chunks of 8")));
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.add(u64::from_le_bytes(tail) ^ bytes.len() as u64);
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }

    /// A final avalanche: the table indexes by the low bits, which the multiply alone leaves
    /// poorly mixed.
    fn finish(&self) -> u64 {
        let mut hash = self.0;
        hash ^= hash >> 33;
        hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
        hash ^= hash >> 33;
        hash
    }
}

/// (cluster, kind, namespace, name), borrowed from the objects.
pub(super) type Key<'a> = (&'a str, Kind, &'a str, &'a str);

pub(super) struct Index<'a> {
    pub objects: &'a [Object],
    by_key: HashMap<Key<'a>, usize>,
    applied: HashMap<Key<'a>, Vec<usize>>,
    /// Controller Deployments by (cluster, controller, shard); the main one has shard "".
    controllers: HashMap<(&'a str, &'static str, &'a str), usize>,
    /// Per cluster, where its Flux controllers run; absent when the input holds none.
    controller_namespaces: HashMap<&'a str, &'a str>,
    pods_by_owner: HashMap<Key<'a>, Vec<usize>>,
    /// Jobs by the CronJob that created them.
    jobs_by_cron_job: HashMap<Key<'a>, Vec<usize>>,
    pods_by_namespace: HashMap<(&'a str, &'a str), Vec<usize>>,
}

impl<'a> Index<'a> {
    pub fn new(objects: &'a [Object]) -> Self {
        let mut index = Index {
            objects,
            by_key: HashMap::with_capacity_and_hasher(objects.len(), Default::default()),
            applied: HashMap::default(),
            controllers: HashMap::default(),
            controller_namespaces: HashMap::default(),
            pods_by_owner: HashMap::default(),
            jobs_by_cron_job: HashMap::default(),
            pods_by_namespace: HashMap::default(),
        };
        for (i, object) in objects.iter().enumerate() {
            index.add(i, object);
        }
        index
    }

    fn add(&mut self, i: usize, object: &'a Object) {
        let cluster = object.cluster.as_str();
        self.by_key.insert(key(object), i);
        for (kind, namespace, name) in object.appliers() {
            self.applied
                .entry((cluster, kind, namespace, name))
                .or_default()
                .push(i);
        }
        if let Some((controller, shard)) = controller_of(object) {
            // Usually in flux-system; when several namespaces hold one, flux-system wins.
            let slot = self
                .controllers
                .entry((cluster, controller, shard))
                .or_insert(i);
            let namespace = self
                .controller_namespaces
                .entry(cluster)
                .or_insert(&object.namespace);
            if object.namespace == "flux-system" {
                *slot = i;
                *namespace = &object.namespace;
            }
        }
        if object.kind == Kind::Job
            && let Some(cron_job) = cron_job_of(object)
        {
            let namespace = object.namespace.as_str();
            self.jobs_by_cron_job
                .entry((cluster, Kind::CronJob, namespace, cron_job))
                .or_default()
                .push(i);
        }
        if object.kind == Kind::Pod {
            let namespace = object.namespace.as_str();
            self.pods_by_namespace
                .entry((cluster, namespace))
                .or_default()
                .push(i);
            for (kind, name) in pod_owners(object) {
                self.pods_by_owner
                    .entry((cluster, kind, namespace, name))
                    .or_default()
                    .push(i);
            }
        }
    }

    pub fn get(&self, cluster: &str, kind: Kind, namespace: &str, name: &str) -> Option<usize> {
        self.by_key.get(&(cluster, kind, namespace, name)).copied()
    }

    /// The object a reference names, when its kind is one fleetglass knows.
    pub fn resolve(&self, cluster: &str, reference: &Ref) -> Option<usize> {
        let kind = Kind::named(&reference.kind)?;
        self.get(cluster, kind, &reference.namespace, &reference.name)
    }

    /// Objects carrying the Flux labels of `applier` (itself excluded: flux-system applies itself).
    pub fn applied_by(&self, applier: usize) -> impl Iterator<Item = usize> + '_ {
        let object = &self.objects[applier];
        self.applied
            .get(&key(object))
            .into_iter()
            .flatten()
            .copied()
            .filter(move |&i| i != applier)
    }

    /// The Deployment of `controller` for `shard` ("" for the main one) on the cluster.
    pub fn controller(
        &self,
        cluster: &str,
        controller: &'static str,
        shard: &str,
    ) -> Option<usize> {
        self.controllers.get(&(cluster, controller, shard)).copied()
    }

    /// Every controller Deployment matched, on every cluster.
    pub fn controller_deployments(&self) -> impl Iterator<Item = usize> + '_ {
        self.controllers.values().copied()
    }

    /// Where the cluster's Flux controllers run, when the input holds any of them.
    pub fn controllers_namespace(&self, cluster: &str) -> Option<&'a str> {
        self.controller_namespaces.get(cluster).copied()
    }

    /// The pods of a workload: by ownerReferences, else by the workload's selector.
    pub fn pods_of(&self, workload: usize) -> Vec<usize> {
        let object = &self.objects[workload];
        if let Some(pods) = self.pods_by_owner.get(&key(object)) {
            return pods.clone();
        }
        let selector = &object.spec.selector;
        if selector.is_empty() {
            return Vec::new();
        }
        let namespace_pods = self
            .pods_by_namespace
            .get(&(object.cluster.as_str(), object.namespace.as_str()));
        namespace_pods
            .into_iter()
            .flatten()
            .copied()
            .filter(|&pod| {
                let labels = &self.objects[pod].labels;
                selector.iter().all(|(k, v)| labels.get(k) == Some(v))
            })
            .collect()
    }

    /// The Jobs the CronJob `namespace/name` created that are in the input.
    pub fn jobs_of_cron_job(&self, cluster: &str, namespace: &str, name: &str) -> Vec<usize> {
        let key = (cluster, Kind::CronJob, namespace, name);
        self.jobs_by_cron_job.get(&key).cloned().unwrap_or_default()
    }

    /// The CronJob `index`'s most recent Job in the input: what its schedule last did.
    pub fn latest_job_of_cron_job(&self, cron_job: usize) -> Option<usize> {
        let object = &self.objects[cron_job];
        self.jobs_of_cron_job(&object.cluster, &object.namespace, &object.name)
            .into_iter()
            .max_by_key(|&job| (self.objects[job].created, job))
    }

    /// The workload owning a pod, when it is in the input.
    pub fn owner_of_pod(&self, pod: usize) -> Option<usize> {
        let object = &self.objects[pod];
        pod_owners(object)
            .find_map(|(kind, name)| self.get(&object.cluster, kind, &object.namespace, name))
    }
}

/// The Flux controller a Deployment runs and its shard ("" for the main one), if it is one.
pub(super) fn controller_of(object: &Object) -> Option<(&'static str, &str)> {
    (object.kind == Kind::Deployment).then(|| controller_shard_of_deployment(&object.name))?
}

fn key(object: &Object) -> Key<'_> {
    (
        &object.cluster,
        object.kind,
        &object.namespace,
        &object.name,
    )
}

/// The workloads a pod's ownerReferences point at; a ReplicaSet `<deployment>-<hash>` stands
/// for its Deployment.
fn pod_owners(pod: &Object) -> impl Iterator<Item = (Kind, &str)> {
    pod.owners
        .iter()
        .filter_map(|owner| match owner.kind.as_str() {
            "ReplicaSet" => Some((Kind::Deployment, owner.name.rsplit_once('-')?.0)),
            "StatefulSet" => Some((Kind::StatefulSet, owner.name.as_str())),
            "DaemonSet" => Some((Kind::DaemonSet, owner.name.as_str())),
            "Job" => Some((Kind::Job, owner.name.as_str())),
            _ => None,
        })
}
