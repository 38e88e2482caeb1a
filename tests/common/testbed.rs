//! The Kubernetes test bed for integration tests: real kube-apiservers and etcd started as
//! processes by `tests/testbed/testbed`. Each named bed has its own state directory
//! (`target/testbed-<name>`), so a test that kills an API server cannot disturb another's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

#[derive(Debug, Clone)]
pub struct Testbed {
    pub state: PathBuf,
    /// One admin context per cluster, each named after its cluster.
    pub kubeconfig: PathBuf,
    /// The read-only users' contexts, same names.
    pub readonly_kubeconfig: PathBuf,
    pub clusters: Vec<String>,
    /// kubectl, helm, kube-apiserver, etcd…
    pub bin: PathBuf,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn script() -> PathBuf {
    repo().join("tests/testbed/testbed")
}

fn run(state: &Path, args: &[&str]) -> Output {
    let output = Command::new(script())
        .args(args)
        .env("TESTBED_STATE", state)
        .output()
        .expect("run tests/testbed/testbed");
    assert!(
        output.status.success(),
        "testbed {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The beds this process brought up or reused, by name.
fn beds() -> std::sync::MutexGuard<'static, HashMap<String, Testbed>> {
    static BEDS: OnceLock<Mutex<HashMap<String, Testbed>>> = OnceLock::new();
    BEDS.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

impl Testbed {
    /// Brings up (or reuses) the bed `name` with `clusters` clusters; fails the test with the
    /// test bed's own error when it cannot start.
    pub fn up(name: &str, clusters: usize) -> Testbed {
        let mut beds = beds();
        if let Some(bed) = beds.get(name) {
            return bed.clone();
        }
        let state = repo().join(format!("target/testbed-{name}"));
        run(&state, &["up", "--clusters", &clusters.to_string()]);
        let env = String::from_utf8_lossy(&run(&state, &["env"]).stdout).into_owned();
        let value = |key: &str| -> String {
            env.lines()
                .find_map(|line| line.strip_prefix(&format!("export {key}=")))
                .map(unquote)
                .unwrap_or_else(|| panic!("testbed env has no {key}:\n{env}"))
        };
        let bed = Testbed {
            kubeconfig: value("KUBECONFIG").into(),
            readonly_kubeconfig: value("TESTBED_READONLY_KUBECONFIG").into(),
            clusters: value("TESTBED_CLUSTERS")
                .split_whitespace()
                .map(String::from)
                .collect(),
            bin: value("TESTBED_BIN").into(),
            state,
        };
        beds.insert(name.to_string(), bed.clone());
        bed
    }

    /// Stops the bed's API servers and etcd and removes its state. It does not panic, so a
    /// guard may call it while a failed bench unwinds; a failure is printed instead.
    pub fn down(&self) {
        beds().retain(|_, bed| bed.state != self.state);
        let stopped = Command::new(script())
            .arg("down")
            .env("TESTBED_STATE", &self.state)
            .output();
        match stopped {
            Ok(output) if output.status.success() => {}
            Ok(output) => eprintln!(
                "testbed down ({}) failed:\n{}",
                self.state.display(),
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(error) => eprintln!("testbed down ({}): {error}", self.state.display()),
        }
    }

    /// Only the binaries (helm, kubectl), built or reused from the cache; no cluster.
    pub fn bin_dir() -> PathBuf {
        let output = run(&repo().join("target/testbed-build"), &["build"]);
        PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
    }

    /// `kubectl --context CLUSTER args…` as the admin; panics with stderr on failure.
    pub fn kubectl(&self, cluster: &str, args: &[&str]) -> String {
        let output = self.kubectl_output(cluster, args, None);
        assert!(
            output.status.success(),
            "kubectl {args:?} on {cluster} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `kubectl` with optional stdin, returning the whole output (for expected failures).
    pub fn kubectl_output(&self, cluster: &str, args: &[&str], stdin: Option<&str>) -> Output {
        use std::io::Write;
        let mut command = Command::new(self.bin.join("kubectl"));
        command
            .env("KUBECONFIG", &self.kubeconfig)
            .arg("--context")
            .arg(cluster)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().expect("start kubectl");
        let pipe = child.stdin.take().expect("stdin");
        // Written from another thread while the output is read: kubectl answers as it reads,
        // and a large input would fill its output pipe and stall both sides.
        std::thread::scope(|scope| {
            scope.spawn(move || {
                let mut pipe = pipe;
                if let Some(input) = stdin {
                    pipe.write_all(input.as_bytes()).expect("write stdin");
                }
            });
            child.wait_with_output().expect("kubectl output")
        })
    }

    pub fn stop_cluster(&self, cluster: &str) {
        run(&self.state, &["stop-cluster", cluster]);
    }

    pub fn start_cluster(&self, cluster: &str) {
        run(&self.state, &["start-cluster", cluster]);
    }
}

/// Objects as one YAML stream, the way `kubectl apply -f -` reads them.
pub fn manifest(objects: &[serde_json::Value]) -> String {
    objects
        .iter()
        .map(|object| serde_saphyr::to_string(object).expect("an object serializes to YAML"))
        .collect::<Vec<_>>()
        .join("---\n")
}

fn unquote(text: &str) -> String {
    let text = text.trim();
    text.strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .or_else(|| text.strip_prefix('"').and_then(|t| t.strip_suffix('"')))
        .unwrap_or(text)
        .replace("\\ ", " ")
}
