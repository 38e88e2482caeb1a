//! A domain's version on one cluster, read where the domain says and shortened the way
//! people say it: `main@sha1:<40 hex>` → `abc1234`, `v1.4.2@sha256:…` → `v1.4.2`.

use super::VersionSource;
use super::index::Index;
use crate::model::Kind;

/// A domain's version on a cluster: the one applied, and the one offered while it is not.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Versions {
    pub applied: Option<String>,
    /// Offered and not applied yet (the source moved on, an upgrade attempted): pending.
    pub offered: Option<String>,
}

/// Reads the version where the domain says. For a source's revision, what the source offers
/// is not what runs: the domain's objects that consume the source (`members` whose `sources`
/// entry is it) say what they applied, and the first that lags names the applied version.
pub(super) fn read(
    index: &Index,
    source: &VersionSource,
    cluster: &str,
    members: &[usize],
    sources: &[Option<usize>],
) -> Versions {
    match source {
        VersionSource::SourceRevision {
            kind,
            namespace,
            name,
        } => {
            let Some(found) = index.get(cluster, *kind, namespace, name) else {
                return Versions::default();
            };
            let offered = index.objects[found]
                .status
                .flux
                .artifact_revision
                .as_deref();
            let consumers: Vec<Option<&str>> = members
                .iter()
                .filter(|&&m| sources[m] == Some(found))
                .map(|&m| {
                    index.objects[m]
                        .status
                        .flux
                        .last_applied_revision
                        .as_deref()
                })
                .collect();
            let applied = match consumers.iter().find(|&&applied| applied != offered) {
                Some(&lagging) => lagging,
                None => offered,
            };
            pending(applied.map(short_revision), offered.map(short_revision))
        }
        VersionSource::ChartVersion { namespace, name } => {
            let Some(found) = index.get(cluster, Kind::HelmRelease, namespace, name) else {
                return Versions::default();
            };
            let release = &index.objects[found];
            let from_history = release
                .status
                .flux
                .release
                .as_ref()
                .and_then(|r| r.chart_version.clone());
            // OCI charts record `<version>+<digest>` as the attempted revision.
            let attempted = release
                .status
                .flux
                .last_attempted_revision
                .as_deref()
                .map(|a| a.split('+').next().unwrap_or(a).to_string());
            match from_history {
                Some(applied) => pending(Some(applied), attempted),
                None => pending(attempted, None),
            }
        }
        VersionSource::ImageTag {
            kind,
            namespace,
            name,
        } => Versions {
            applied: index
                .get(cluster, *kind, namespace, name)
                .and_then(|w| index.objects[w].spec.images.first())
                .map(|image| image_tag(image)),
            offered: None,
        },
    }
}

/// `offered` is pending only while it differs from what is applied.
fn pending(applied: Option<String>, offered: Option<String>) -> Versions {
    let offered = offered.filter(|o| applied.as_ref() != Some(o));
    Versions { applied, offered }
}

/// Git revisions by short SHA, OCI revisions by tag, bare digests by their first 7 hex digits.
pub fn short_revision(revision: &str) -> String {
    let (reference, digest) = revision.rsplit_once('@').unwrap_or(("", revision));
    match digest.split_once(':') {
        Some(("sha1", sha)) => short_hex(sha),
        Some((_, hex)) if reference.is_empty() => short_hex(hex),
        Some(_) => reference.to_string(),
        None => revision.to_string(),
    }
}

fn short_hex(hex: &str) -> String {
    hex.chars().take(7).collect()
}

/// `ghcr.io/org/app:v1.2.3@sha256:…` → `v1.2.3`; a digest-only image → its short digest.
pub fn image_tag(image: &str) -> String {
    let (name, digest) = image.split_once('@').unwrap_or((image, ""));
    let last_segment = name.rsplit('/').next().unwrap_or(name);
    match last_segment.split_once(':') {
        Some((_, tag)) => tag.to_string(),
        None if !digest.is_empty() => short_revision(digest),
        None => "latest".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_are_shortened_the_way_people_say_them() {
        let sha = "abc1234def5678abc1234def5678abc1234def56";
        assert_eq!(short_revision(&format!("main@sha1:{sha}")), "abc1234");
        assert_eq!(
            short_revision(&format!("refs/heads/main@sha1:{sha}")),
            "abc1234"
        );
        assert_eq!(short_revision(&format!("sha1:{sha}")), "abc1234");
        assert_eq!(short_revision("v1.4.2@sha256:0123456789abcdef"), "v1.4.2");
        assert_eq!(short_revision("sha256:0123456789abcdef"), "0123456");
        assert_eq!(short_revision("6.0.3"), "6.0.3");
    }

    #[test]
    fn image_tags() {
        assert_eq!(image_tag("ghcr.io/org/app:v1.2.3"), "v1.2.3");
        assert_eq!(image_tag("registry:5000/app:2.0"), "2.0");
        assert_eq!(image_tag("registry:5000/app"), "latest");
        assert_eq!(image_tag("app:1.0@sha256:0123456789"), "1.0");
        assert_eq!(image_tag("app@sha256:0123456789"), "0123456");
    }
}
