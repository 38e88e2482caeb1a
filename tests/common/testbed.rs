//! The Kubernetes test bed (real API servers, see tests/testbed/README.md), brought up on
//! demand in this worktree's own state dir. If it cannot start, the test fails with the reason:
//! nothing is skipped silently.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

pub struct Testbed {
    pub kubeconfig: PathBuf,
    pub clusters: Vec<String>,
    pub bin: PathBuf,
    script: PathBuf,
    state: PathBuf,
}

static UP: Mutex<()> = Mutex::new(());

fn script() -> PathBuf {
    std::env::var_os("TESTBED_SCRIPT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/testbed/testbed"))
}

/// Brings the test bed up with (at least) two clusters; idempotent and quick when it is up.
pub fn up() -> Testbed {
    let _one_at_a_time = UP.lock().unwrap_or_else(|p| p.into_inner());
    let script = script();
    assert!(
        script.exists(),
        "test bed script {} not found (set TESTBED_SCRIPT)",
        script.display()
    );
    let state = std::env::var_os("TESTBED_STATE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/testbed"));
    let output = Command::new(&script)
        .args(["up", "--clusters", "2"])
        .env("TESTBED_STATE", &state)
        .output()
        .expect("run the test bed script");
    assert!(
        output.status.success(),
        "the test bed did not come up:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let exports: BTreeMap<String, String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_prefix("export "))
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
        .collect();
    let get = |key: &str| {
        exports
            .get(key)
            .unwrap_or_else(|| panic!("test bed printed no {key}"))
            .clone()
    };
    Testbed {
        kubeconfig: get("KUBECONFIG").into(),
        clusters: get("TESTBED_CLUSTERS")
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        bin: get("TESTBED_BIN").into(),
        script,
        state,
    }
}

impl Testbed {
    /// Runs kubectl against a cluster (context) and returns stdout; panics with stderr on failure.
    pub fn kubectl(&self, cluster: &str, args: &[&str]) -> String {
        self.kubectl_stdin(cluster, args, None)
    }

    pub fn kubectl_stdin(&self, cluster: &str, args: &[&str], stdin: Option<&str>) -> String {
        use std::io::Write;
        let mut child = Command::new(self.bin.join("kubectl"))
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(["--context", cluster])
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run kubectl");
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(text.as_bytes())
                .expect("write kubectl stdin");
        }
        drop(child.stdin.take());
        let output = child.wait_with_output().expect("kubectl output");
        assert!(
            output.status.success(),
            "kubectl {args:?} on {cluster} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn apply(&self, cluster: &str, yaml: &str) {
        self.kubectl_stdin(cluster, &["apply", "-f", "-"], Some(yaml));
    }

    /// Sets an object's status through the status subresource (there are no controllers).
    pub fn set_status(&self, cluster: &str, resource: &str, namespace: &str, status: &str) {
        let patch = format!("{{\"status\": {status}}}");
        self.kubectl(
            cluster,
            &[
                "patch",
                resource,
                "-n",
                namespace,
                "--subresource=status",
                "--type=merge",
                "-p",
                &patch,
            ],
        );
    }

    fn script(&self, args: &[&str]) {
        let output = Command::new(&self.script)
            .args(args)
            .env("TESTBED_STATE", &self.state)
            .output()
            .expect("run the test bed script");
        assert!(
            output.status.success(),
            "testbed {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    pub fn stop_cluster(&self, cluster: &str) {
        self.script(&["stop-cluster", cluster]);
    }

    pub fn start_cluster(&self, cluster: &str) {
        self.script(&["start-cluster", cluster]);
    }
}

/// A namespace name unique to this test run.
pub fn unique_namespace(prefix: &str) -> String {
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_millis() % 1_000_000
    )
}
