//! A domain's version on one cluster, read where the domain says and shortened the way
//! people say it: `main@sha1:<40 hex>` → `abc1234`, `v1.4.2@sha256:…` → `v1.4.2`.

use super::VersionSource;
use super::index::Index;
use crate::model::Kind;

pub(super) fn read(index: &Index, source: &VersionSource, cluster: &str) -> Option<String> {
    match source {
        VersionSource::SourceRevision {
            kind,
            namespace,
            name,
        } => {
            let found = &index.objects[index.get(cluster, *kind, namespace, name)?];
            found
                .status
                .flux
                .artifact_revision
                .as_deref()
                .map(short_revision)
        }
        VersionSource::ChartVersion { namespace, name } => {
            let release = &index.objects[index.get(cluster, Kind::HelmRelease, namespace, name)?];
            let from_history = release
                .status
                .flux
                .release
                .as_ref()
                .and_then(|r| r.chart_version.clone());
            // OCI charts record `<version>+<digest>` as the attempted revision.
            let attempted = release.status.flux.last_attempted_revision.as_deref();
            from_history.or_else(|| attempted.map(|a| a.split('+').next().unwrap_or(a).to_string()))
        }
        VersionSource::ImageTag {
            kind,
            namespace,
            name,
        } => {
            let workload = &index.objects[index.get(cluster, *kind, namespace, name)?];
            workload.spec.images.first().map(|image| image_tag(image))
        }
    }
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
