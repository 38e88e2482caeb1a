//! What makes two clusters' root causes the same cause: the classified reason with the details
//! that differ from cluster to cluster taken out (cluster names, pod and ReplicaSet hashes,
//! timestamps, durations, counters such as replica and restart counts), and a stable key built
//! from it.

use sha2::{Digest, Sha256};

/// Kubernetes' random name suffixes use this alphabet (no vowels, no 0, 1 or 3), for Pods'
/// `generateName` and ReplicaSets' pod-template-hash alike: kubernetes/apimachinery
/// pkg/util/rand/rand.go (`alphanums`), kubernetes/kubernetes pkg/controller/controller_utils.go
/// (`ComputeHash` → `rand.SafeEncodeString`).
const NAME_SUFFIX_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

/// The reason as the same cause reads on every cluster.
pub fn normalised(reason: &str, cluster: &str) -> String {
    let text = without_timestamps(reason);
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    for c in text.chars() {
        if is_word_char(c) {
            word.push(c);
        } else {
            out.push_str(&normalised_word(&word, cluster));
            word.clear();
            out.push(c);
        }
    }
    out.push_str(&normalised_word(&word, cluster));
    // "1h 5m" is one duration, as "4m" is.
    while out.contains("<duration> <duration>") {
        out = out.replace("<duration> <duration>", "<duration>");
    }
    out
}

/// A stable id for an incident: the object's kind, namespace and name, and a short digest of the
/// normalised reason (the reason itself can be long and full of punctuation).
pub fn key(kind: &str, namespace: &str, name: &str, normalised: &str) -> String {
    let digest = Sha256::digest(normalised.as_bytes());
    let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{kind}/{namespace}/{name}/{short}")
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/')
}

fn normalised_word(word: &str, cluster: &str) -> String {
    if word.is_empty() {
        String::new()
    } else if is_count(word) {
        "<n>/<n>".to_string()
    } else if is_number(word) {
        // A bare number in a reason is a counter ("9 restarts", "(and 3 more)", "4 pods
        // rejected"): it differs from cluster to cluster, and grows while the cause lasts.
        "<n>".to_string()
    } else if is_duration(word) {
        "<duration>".to_string()
    } else {
        word.split('/')
            .map(|part| match part {
                part if !cluster.is_empty() && part == cluster => "<cluster>".to_string(),
                part => without_name_suffixes(part),
            })
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// "3/5" (ready replicas and the like).
fn is_count(word: &str) -> bool {
    word.split_once('/')
        .is_some_and(|(a, b)| is_number(a) && is_number(b))
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// "45s", "2h", "9m30s", "1.5s": what `human` and Go durations print.
fn is_duration(word: &str) -> bool {
    let mut rest = word;
    let mut parts = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        if digits == 0 {
            return false;
        }
        rest = &rest[digits..];
        let Some(unit) = ["ms", "us", "ns", "s", "m", "h", "d", "w"]
            .into_iter()
            .find(|u| rest.starts_with(u))
        else {
            return false;
        };
        rest = &rest[unit.len()..];
        parts += 1;
    }
    parts > 0
}

/// `tofu-controller-7d9f8b6c5-x2k4q` → `tofu-controller-*`: a pod's random suffix and its
/// ReplicaSet's hash differ on every cluster.
fn without_name_suffixes(part: &str) -> String {
    let mut segments: Vec<&str> = part.split('-').collect();
    let mut stripped = false;
    if segments.len() > 1 && is_generated(segments[segments.len() - 1], 5..=5) {
        segments.pop();
        stripped = true;
    }
    if segments.len() > 1 && is_generated(segments[segments.len() - 1], 6..=10) {
        segments.pop();
        stripped = true;
    }
    let base = segments.join("-");
    if stripped { format!("{base}-*") } else { base }
}

fn is_generated(segment: &str, lengths: std::ops::RangeInclusive<usize>) -> bool {
    lengths.contains(&segment.len()) && segment.chars().all(|c| NAME_SUFFIX_ALPHABET.contains(c))
}

/// RFC 3339 and `YYYY-MM-DD hh:mm:ss` times, and bare `hh:mm:ss` clocks, become `<time>`.
fn without_timestamps(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        let at_word_start = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        let length = if at_word_start {
            timestamp_length(&bytes[i..])
        } else {
            0
        };
        if length > 0 {
            out.push_str(&text[copied..i]);
            out.push_str("<time>");
            i += length;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

fn timestamp_length(bytes: &[u8]) -> usize {
    let digits = |at: usize, n: usize| {
        bytes.len() >= at + n && bytes[at..at + n].iter().all(u8::is_ascii_digit)
    };
    let byte = |at: usize| bytes.get(at).copied();
    let clock = |at: usize| -> usize {
        if !(digits(at, 2) && byte(at + 2) == Some(b':') && digits(at + 3, 2)) {
            return 0;
        }
        let mut end = at + 5;
        if byte(end) == Some(b':') && digits(end + 1, 2) {
            end += 3;
            if byte(end) == Some(b'.') {
                end += 1;
                while byte(end).is_some_and(|b| b.is_ascii_digit()) {
                    end += 1;
                }
            }
        }
        if byte(end) == Some(b'Z') {
            end += 1;
        } else if matches!(byte(end), Some(b'+' | b'-')) && digits(end + 1, 2) {
            end += 3;
            if byte(end) == Some(b':') && digits(end + 1, 2) {
                end += 3;
            }
        }
        end - at
    };
    let date = digits(0, 4) && byte(4) == Some(b'-') && digits(5, 2) && byte(7) == Some(b'-');
    if date && digits(8, 2) {
        return match byte(10) {
            Some(b'T' | b' ') if clock(11) > 0 => 11 + clock(11),
            _ => 10,
        };
    }
    clock(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_and_replicaset_hashes_are_taken_out() {
        let one = "1/1 pods failing: pod tofu-controller-7d9f8b6c5-x2k4q: ImagePullBackOff: Back-off pulling image \"ghcr.io/flux-iac/tofu-controller:v0.16.0-rc.5\"";
        let two = "2/2 pods failing: pod tofu-controller-5c8dd4f7b9-mz9wd: ImagePullBackOff: Back-off pulling image \"ghcr.io/flux-iac/tofu-controller:v0.16.0-rc.5\"";
        assert_eq!(normalised(one, "prod-eu-1"), normalised(two, "prod-eu-2"));
        assert!(normalised(one, "prod-eu-1").contains("pod tofu-controller-*: ImagePullBackOff"));
        // The image's version is part of the cause: a different tag is a different cause.
        let other_tag = one.replace("rc.5", "rc.6");
        assert_ne!(normalised(one, "a"), normalised(&other_tag, "a"));
    }

    #[test]
    fn cluster_names_timestamps_and_durations_are_taken_out() {
        let one = normalised(
            "data from prod-eu-1 is 4m old (last good 2026-12-01T10:28:45Z, at 10:28:45)",
            "prod-eu-1",
        );
        let two = normalised(
            "data from prod-eu-2 is 1h 5m old (last good 2026-12-01T09:27:00.123+01:00, at 09:27:00)",
            "prod-eu-2",
        );
        assert_eq!(one, two);
        assert_eq!(
            one,
            "data from <cluster> is <duration> old (last good <time>, at <time>)"
        );
        assert_eq!(
            normalised("health check timeout 9m30s", "x"),
            normalised("health check timeout 10m", "x")
        );
    }

    #[test]
    fn counters_are_taken_out() {
        // health/pods.rs writes the restart count into the reason; it grows on every restart.
        let one = "1/1 pods failing: pod api-7d9f8b6c5-x2k4q: CrashLoopBackOff: app, 5 restarts";
        let two = "2/2 pods failing: pod api-5c8dd4f7b9-mz9wd: CrashLoopBackOff: app, 31 restarts";
        assert_eq!(normalised(one, "a"), normalised(two, "b"));
        assert_eq!(
            normalised(one, "a"),
            "<n>/<n> pods failing: pod api-*: CrashLoopBackOff: app, <n> restarts"
        );
        assert_eq!(
            normalised("x (and 3 more)", "a"),
            normalised("x (and 12 more)", "a")
        );
    }

    #[test]
    fn words_that_merely_look_generated_are_kept() {
        // Vowels and 0/1/3 never appear in generated suffixes.
        assert_eq!(
            normalised("service gateway-proxy-admin not found", "c"),
            "service gateway-proxy-admin not found"
        );
        assert_eq!(
            normalised("statefulset web-0 pod web-1", "c"),
            "statefulset web-0 pod web-1"
        );
        assert_eq!(normalised("RBAC Forbidden", "c"), "RBAC Forbidden");
    }

    #[test]
    fn different_classified_reasons_stay_different() {
        assert_ne!(
            normalised("RBAC Forbidden: cannot patch globalnetworkpolicies", "c"),
            normalised("admission denied by validation.gatekeeper.sh", "c")
        );
    }

    #[test]
    fn the_key_is_stable_and_names_the_object() {
        let key = key(
            "Deployment",
            "flux-system",
            "tofu-controller",
            "ImagePullBackOff",
        );
        assert_eq!(
            key,
            super::key(
                "Deployment",
                "flux-system",
                "tofu-controller",
                "ImagePullBackOff"
            )
        );
        assert!(key.starts_with("Deployment/flux-system/tofu-controller/"));
        assert_eq!(key.rsplit('/').next().unwrap().len(), 8);
        assert_ne!(
            key,
            super::key("Deployment", "flux-system", "tofu-controller", "OOMKilled")
        );
    }
}
