//! The Flux test bed for these tests: one test bed cluster with kube-controller-manager and
//! kwok, the real Flux controllers as processes (tests/testbed/flux/flux-testbed), Git and Helm
//! repositories served on loopback. Each scenario gets its own namespace and Git repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{OnceLock, RwLock};
use std::time::{Duration, Instant};

/// How long one wait on the cluster may take.
pub const DEADLINE: Duration = Duration::from_secs(180);

pub struct FluxBed {
    state: PathBuf,
    kubeconfig: PathBuf,
    /// The test bed's read-only user (what fleetglass is given), one context per cluster.
    pub readonly_kubeconfig: PathBuf,
    /// The cluster the controllers run against (`tb-1`).
    pub cluster: String,
    kubectl: PathBuf,
    git_root: PathBuf,
    git_url: String,
    pub helm_url: String,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn script() -> PathBuf {
    repo().join("tests/testbed/flux/flux-testbed")
}

/// Runs a command, failing the test with its stderr when it fails.
fn checked(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn export(env: &str, key: &str) -> String {
    let value = env
        .lines()
        .find_map(|l| l.strip_prefix(&format!("export {key}=")))
        .unwrap_or_else(|| panic!("env has no {key}:\n{env}"));
    value.trim_matches('\'').to_string()
}

/// `None` when the controllers are built; otherwise why the scenarios cannot run. Building them
/// takes about 50 minutes cold, so the tests skip rather than build.
pub fn missing_controllers() -> Option<String> {
    static MISSING: OnceLock<Option<String>> = OnceLock::new();
    MISSING
        .get_or_init(|| {
            let output = Command::new(script())
                .arg("built")
                .output()
                .unwrap_or_else(|e| panic!("run flux-testbed built: {e}"));
            (!output.status.success()).then(|| {
                format!(
                    "{}{}",
                    String::from_utf8_lossy(&output.stderr).trim(),
                    " (build them once, about 50 minutes cold: tests/testbed/flux/flux-testbed build)"
                )
            })
        })
        .clone()
}

/// Scenarios share the bed; one that stops a controller takes it exclusively.
static LOCK: RwLock<()> = RwLock::new(());

pub fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    LOCK.read().unwrap_or_else(|e| e.into_inner())
}

pub fn exclusive() -> std::sync::RwLockWriteGuard<'static, ()> {
    LOCK.write().unwrap_or_else(|e| e.into_inner())
}

impl FluxBed {
    /// Brings the bed up once per test binary (reused when already up).
    pub fn get() -> &'static FluxBed {
        static BED: OnceLock<FluxBed> = OnceLock::new();
        BED.get_or_init(|| {
            let state = repo().join("target/testbed-flux");
            let started = Instant::now();
            let env = checked(
                Command::new(script())
                    .arg("up")
                    .env("TESTBED_STATE", &state),
            );
            let testbed = checked(
                Command::new(repo().join("tests/testbed/testbed"))
                    .arg("env")
                    .env("TESTBED_STATE", &state),
            );
            eprintln!(
                "real_flux: flux test bed up in {:.0?} ({})",
                started.elapsed(),
                state.display()
            );
            FluxBed {
                kubeconfig: export(&env, "FLUX_KUBECONFIG").into(),
                readonly_kubeconfig: export(&testbed, "TESTBED_READONLY_KUBECONFIG").into(),
                cluster: export(&env, "FLUX_CLUSTER"),
                kubectl: PathBuf::from(export(&testbed, "TESTBED_BIN")).join("kubectl"),
                git_root: export(&env, "FLUX_GIT_ROOT").into(),
                git_url: export(&env, "FLUX_GIT_URL"),
                helm_url: export(&env, "FLUX_HELM_URL"),
                state,
            }
        })
    }

    pub fn kubectl(&self, args: &[&str]) -> String {
        checked(&mut self.kubectl_command(args))
    }

    fn kubectl_command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.kubectl);
        command.env("KUBECONFIG", &self.kubeconfig).args(args);
        command
    }

    /// `kubectl apply -f -` with the given manifest.
    pub fn apply(&self, manifest: &str) {
        use std::io::Write;
        let mut child = Command::new(&self.kubectl)
            .env("KUBECONFIG", &self.kubeconfig)
            .args(["apply", "-f", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start kubectl apply");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(manifest.as_bytes())
            .expect("write manifest");
        let output: Output = child.wait_with_output().expect("kubectl apply");
        assert!(
            output.status.success(),
            "kubectl apply failed:\n{}\n{manifest}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// `flux-testbed stop|start CONTROLLER` (returns once its Deployment's availability
    /// matches: 0 after stop, 1 after start).
    pub fn controller(&self, action: &str, name: &str) {
        checked(
            Command::new(script())
                .args([action, name])
                .env("TESTBED_STATE", &self.state),
        );
    }

    /// The URL Flux fetches the scenario's repository from.
    pub fn git_url(&self, name: &str) -> String {
        format!("{}/{name}.git", self.git_url)
    }

    /// Replaces the content of repository `name` (created on first use) with `files` and
    /// commits it on `main`; returns the commit SHA.
    pub fn commit(&self, name: &str, files: &[(&str, String)], message: &str) -> String {
        let bare = self.git_root.join(format!("{name}.git"));
        let work = self.state.join("flux/work").join(name);
        if !bare.exists() {
            git(
                &self.git_root,
                &[
                    "init",
                    "--quiet",
                    "--bare",
                    "--initial-branch=main",
                    &format!("{name}.git"),
                ],
            );
            std::fs::remove_dir_all(&work).ok();
            std::fs::create_dir_all(&work).expect("work tree");
            git(&work, &["init", "--quiet", "--initial-branch=main"]);
            git(&work, &["remote", "add", "origin", &bare.to_string_lossy()]);
        }
        git(&work, &["rm", "-r", "--quiet", "--ignore-unmatch", "."]);
        for (path, text) in files {
            let file = work.join(path);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            std::fs::write(&file, text).expect("write file");
        }
        git(&work, &["add", "-A"]);
        git(
            &work,
            &["commit", "--quiet", "--allow-empty", "-m", message],
        );
        git(&work, &["push", "--quiet", "origin", "main"]);
        git(&work, &["rev-parse", "HEAD"]).trim().to_string()
    }

    /// Asks for an immediate reconcile, as `flux reconcile` does.
    pub fn reconcile(&self, namespace: &str, resource: &str) {
        let now = chrono::Utc::now().to_rfc3339();
        self.kubectl(&[
            "-n",
            namespace,
            "annotate",
            "--overwrite",
            resource,
            &format!("reconcile.fluxcd.io/requestedAt={now}"),
        ]);
    }

    /// Polls `kubectl get RESOURCE -o jsonpath=…` until `accept` holds; panics at the deadline
    /// with the last value and the object's status.
    pub fn wait_for(
        &self,
        namespace: &str,
        resource: &str,
        jsonpath: &str,
        accept: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let output = self
                .kubectl_command(&[
                    "-n",
                    namespace,
                    "get",
                    resource,
                    "-o",
                    &format!("jsonpath={jsonpath}"),
                ])
                .output()
                .expect("kubectl get");
            let value = String::from_utf8_lossy(&output.stdout).into_owned();
            if output.status.success() && accept(&value) {
                return value;
            }
            if Instant::now() > deadline {
                let status =
                    self.kubectl(&["-n", namespace, "get", resource, "-o", "jsonpath={.status}"]);
                panic!(
                    "{namespace}/{resource}: {jsonpath} is {value:?} after {DEADLINE:?}; status: {status}"
                );
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Waits until the Ready condition of `resource` has `status` and `reason`.
    pub fn wait_ready(&self, namespace: &str, resource: &str, status: &str, reason: &str) {
        let path = r#"{.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}"#;
        let want = format!("{status}/{reason}");
        self.wait_for(namespace, resource, path, |v| v == want);
    }

    /// What fleetglass reads of a scenario: the namespace's Flux objects and workloads, plus
    /// the controllers' Deployments and pods, as `kubectl get -o yaml` prints them.
    pub fn capture(&self, namespace: &str) -> String {
        let flux = "gitrepositories,helmrepositories,helmcharts,kustomizations,helmreleases,deployments,jobs,pods";
        let mut text = self.kubectl(&["-n", namespace, "get", flux, "-o", "yaml"]);
        text.push_str("---\n");
        text.push_str(&self.kubectl(&[
            "-n",
            "flux-system",
            "get",
            "deployments,pods",
            "-o",
            "yaml",
        ]));
        text
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    checked(
        Command::new("git")
            .current_dir(dir)
            .args([
                "-c",
                "user.name=fleetglass tests",
                "-c",
                "user.email=tests@fleetglass.invalid",
            ])
            .args(args),
    )
}
