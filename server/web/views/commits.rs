//! From a Git source's URL and a revision to the forge's page for that commit. The revision
//! is as source-controller writes it: `<ref>@sha1:<hash>` (or `sha256:`) since Flux 2.0,
//! `<branch>/<hash>` before (fluxcd/source-controller, internal/controller/
//! gitrepository_controller.go: the artifact revision is the commit's `String()`; fluxcd/pkg
//! git/git.go `Commit.String` joins the reference and `sha1:<hash>` with `@`).

use crate::config::{CommitLinkRule, Forge};

/// The configured rules; hosts they do not name fall back to the public forges.
#[derive(Debug, Clone, Default)]
pub struct CommitLinks {
    rules: Vec<CommitLinkRule>,
}

/// A remote as the web knows it: where its pages are and the repository's path.
#[derive(Debug, PartialEq)]
struct Remote {
    /// `https://host[:port]`, the scheme of an http(s) URL kept, ssh becoming https.
    web: String,
    host: String,
    /// `owner/repo` (GitLab: `group/subgroup/repo`), without `.git`.
    path: String,
}

impl CommitLinks {
    pub fn new(rules: Vec<CommitLinkRule>) -> CommitLinks {
        CommitLinks { rules }
    }

    /// The page of the commit `revision` names in the repository at `url`, when the
    /// revision names a commit and the host's forge is known or configured.
    pub fn commit_url(&self, url: &str, revision: &str) -> Option<String> {
        let commit = commit_of(revision)?;
        let remote = remote(url)?;
        let rule = self
            .rules
            .iter()
            .find(|r| r.host.eq_ignore_ascii_case(&remote.host));
        if let Some(template) = rule.and_then(|r| r.template.as_deref()) {
            return Some(
                template
                    .replace("{host}", &remote.host)
                    .replace("{repo}", &remote.path)
                    .replace("{commit}", commit),
            );
        }
        let forge = match rule.and_then(|r| r.forge) {
            Some(forge) => forge,
            None => public_forge(&remote.host)?,
        };
        let Remote { web, path, .. } = &remote;
        match forge {
            Forge::Github | Forge::Gitea | Forge::Forgejo => {
                Some(format!("{web}/{path}/commit/{commit}"))
            }
            Forge::Gitlab => Some(format!("{web}/{path}/-/commit/{commit}")),
            Forge::Bitbucket => Some(format!("{web}/{path}/commits/{commit}")),
            Forge::AzureDevops => {
                azure_devops(&remote).map(|repo| format!("{repo}/commit/{commit}"))
            }
        }
    }
}

/// The forges whose public host says what they are.
fn public_forge(host: &str) -> Option<Forge> {
    let host = host.to_ascii_lowercase();
    match host.as_str() {
        "github.com" => Some(Forge::Github),
        "gitlab.com" => Some(Forge::Gitlab),
        "bitbucket.org" => Some(Forge::Bitbucket),
        "codeberg.org" => Some(Forge::Forgejo),
        "dev.azure.com" | "ssh.dev.azure.com" | "vs-ssh.visualstudio.com" => {
            Some(Forge::AzureDevops)
        }
        _ if host.ends_with(".visualstudio.com") => Some(Forge::AzureDevops),
        _ => None,
    }
}

/// The repository's web address on Azure DevOps: `…/{project}/_git/{repo}`. Over https the
/// path already has that shape; over ssh it is `v3/{organization}/{project}/{repo}`.
fn azure_devops(remote: &Remote) -> Option<String> {
    if remote.path.contains("/_git/") {
        return Some(format!("{}/{}", remote.web, remote.path));
    }
    let parts: Vec<&str> = remote.path.split('/').collect();
    let ["v3", organization, project, repo] = parts.as_slice() else {
        return None;
    };
    let web = if remote.host.eq_ignore_ascii_case("vs-ssh.visualstudio.com") {
        format!("https://{organization}.visualstudio.com")
    } else {
        format!("https://dev.azure.com/{organization}")
    };
    Some(format!("{web}/{project}/_git/{repo}"))
}

/// The commit hash in a revision, when it names one.
fn commit_of(revision: &str) -> Option<&str> {
    let hash = match ["sha1:", "sha256:"]
        .iter()
        .find_map(|algorithm| revision.split_once(algorithm))
    {
        Some((_, hash)) => hash,
        None => revision.rsplit('/').next()?,
    };
    let is_hash = hash.len() >= 7 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    is_hash.then_some(hash)
}

/// `https://[user@]host[:port]/path[.git]`, `ssh://[user@]host[:port]/path[.git]` or the
/// scp-like `user@host:path[.git]`.
fn remote(url: &str) -> Option<Remote> {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("scp".to_string(), url),
    };
    let (authority, path) = if scheme == "scp" {
        rest.split_once(':')?
    } else {
        rest.split_once('/')?
    };
    let authority = authority.rsplit('@').next()?;
    let host = authority.split(':').next()?.to_string();
    let path = path
        .trim_matches('/')
        .trim_end_matches(".git")
        .trim_end_matches('/')
        .to_string();
    let valid = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~/%".contains(&b))
    };
    if !valid(&host) || !valid(&path) || host.contains('/') {
        return None;
    }
    let web = match scheme.as_str() {
        "https" | "http" => format!("{scheme}://{authority}"),
        "ssh" | "scp" => format!("https://{host}"),
        _ => return None,
    };
    Some(Remote { web, host, path })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "4f1c0ffee4f1c0ffee4f1c0ffee4f1c0ffee4f1c";

    fn link(url: &str, revision: &str) -> Option<String> {
        CommitLinks::default().commit_url(url, revision)
    }

    fn v2(branch: &str) -> String {
        format!("{branch}@sha1:{SHA}")
    }

    #[test]
    fn github_over_https_and_ssh() {
        let expected = format!("https://github.com/acme/fleet/commit/{SHA}");
        for url in [
            "https://github.com/acme/fleet",
            "https://github.com/acme/fleet.git",
            "ssh://git@github.com/acme/fleet.git",
            "git@github.com:acme/fleet.git",
        ] {
            assert_eq!(
                link(url, &v2("main")).as_deref(),
                Some(&expected[..]),
                "{url}"
            );
        }
    }

    #[test]
    fn gitlab_keeps_subgroups_and_uses_the_dash_path() {
        assert_eq!(
            link("https://gitlab.com/acme/platform/fleet.git", &v2("main")),
            Some(format!(
                "https://gitlab.com/acme/platform/fleet/-/commit/{SHA}"
            ))
        );
    }

    #[test]
    fn bitbucket_cloud_says_commits() {
        assert_eq!(
            link("ssh://git@bitbucket.org/acme/fleet.git", &v2("main")),
            Some(format!("https://bitbucket.org/acme/fleet/commits/{SHA}"))
        );
    }

    #[test]
    fn gitea_and_forgejo_by_rule_or_by_codeberg() {
        let links = CommitLinks::new(vec![CommitLinkRule {
            host: "git.example.com".into(),
            forge: Some(Forge::Gitea),
            template: None,
        }]);
        assert_eq!(
            links.commit_url("https://git.example.com:3000/ops/fleet.git", &v2("main")),
            Some(format!(
                "https://git.example.com:3000/ops/fleet/commit/{SHA}"
            ))
        );
        assert_eq!(
            link("https://codeberg.org/ops/fleet", &v2("main")),
            Some(format!("https://codeberg.org/ops/fleet/commit/{SHA}"))
        );
        assert_eq!(
            link("https://git.example.com/ops/fleet.git", &v2("main")),
            None,
            "an unknown host without a rule has no link"
        );
    }

    #[test]
    fn azure_devops_over_https_and_ssh() {
        let expected = format!("https://dev.azure.com/acme/platform/_git/fleet/commit/{SHA}");
        for url in [
            "https://dev.azure.com/acme/platform/_git/fleet",
            "https://acme@dev.azure.com/acme/platform/_git/fleet",
            "ssh://git@ssh.dev.azure.com/v3/acme/platform/fleet",
            "git@ssh.dev.azure.com:v3/acme/platform/fleet",
        ] {
            assert_eq!(
                link(url, &v2("main")).as_deref(),
                Some(&expected[..]),
                "{url}"
            );
        }
        assert_eq!(
            link(
                "https://acme.visualstudio.com/platform/_git/fleet",
                &v2("main")
            ),
            Some(format!(
                "https://acme.visualstudio.com/platform/_git/fleet/commit/{SHA}"
            ))
        );
    }

    #[test]
    fn a_template_for_any_other_forge() {
        let links = CommitLinks::new(vec![CommitLinkRule {
            host: "code.example.com".into(),
            forge: None,
            template: Some("https://code.example.com/{repo}/+/{commit}".into()),
        }]);
        assert_eq!(
            links.commit_url("ssh://git@code.example.com:29418/ops/fleet", &v2("main")),
            Some(format!("https://code.example.com/ops/fleet/+/{SHA}"))
        );
    }

    #[test]
    fn revisions_in_every_shape_source_controller_writes() {
        let url = "https://github.com/acme/fleet";
        let expected = Some(format!("https://github.com/acme/fleet/commit/{SHA}"));
        for revision in [
            format!("main@sha1:{SHA}"),
            format!("refs/heads/main@sha1:{SHA}"),
            format!("v1.2.0@sha1:{SHA}"),
            format!("sha1:{SHA}"),
            format!("main/{SHA}"),
        ] {
            assert_eq!(link(url, &revision), expected, "{revision}");
        }
        // Not a commit: a chart version, an empty revision.
        for revision in ["1.4.2", "", "main@sha1:", "main@sha1:not-hex"] {
            assert_eq!(link(url, revision), None, "{revision:?}");
        }
    }

    #[test]
    fn urls_that_could_inject_are_refused() {
        for url in [
            "javascript:alert(1)",
            "https://github.com/acme/fleet\"><script>",
            "file:///etc/passwd",
        ] {
            assert_eq!(link(url, &v2("main")), None, "{url}");
        }
    }
}
