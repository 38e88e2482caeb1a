//! Runs a pod the chart rendered as a local process, the way a kubelet would run its one
//! container: the container's args and env (secretKeyRefs read from the cluster), its volumes
//! mounted at the paths it names and the service account token, CA and namespace where a
//! kubelet projects them — in a private mount namespace, so nothing changes on this machine —
//! and the process started as the pod's user, without privileges. The binary is this build's
//! `fleetglass` in place of the image's.

use super::testbed::Testbed;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Where a kubelet projects the service account's token, CA and namespace.
const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The documents of a multi-document YAML stream (`helm template` output).
pub fn documents(yaml: &str) -> Vec<Value> {
    // Empty documents (a template that renders nothing) are skipped by the reader.
    serde_saphyr::from_multiple(yaml).expect("YAML documents")
}

pub fn find<'a>(documents: &'a [Value], kind: &str) -> &'a Value {
    documents
        .iter()
        .find(|doc| doc["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} rendered"))
}

/// A rendered pod running as a process; killed when dropped.
pub struct PodProcess {
    child: Child,
    /// The address of the container's `http` port.
    pub base: String,
    pub log: PathBuf,
    /// Where the pod's mounts were staged (an empty directory once the pod has ended).
    scratch: PathBuf,
}

impl PodProcess {
    /// Panics with the process's log when it has exited (a pod that crashed).
    pub fn assert_running(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!("the pod's process exited ({status}):\n{}", self.log());
        }
    }

    /// The real uid the process runs as (after `unshare`, `sh` and `setpriv` exec'd into it).
    pub fn uid(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for PodProcess {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
        std::fs::remove_dir(&self.scratch).ok();
    }
}

pub struct PodRun<'a> {
    pub bed: &'a Testbed,
    pub cluster: &'a str,
    pub namespace: &'a str,
    /// The ConfigMaps the chart rendered, by name.
    pub config_maps: &'a [Value],
    /// A working directory of the test's own.
    pub dir: PathBuf,
}

impl PodRun<'_> {
    /// Starts the pod template's first container. The one change to its args: the listen port,
    /// because a pod has its own network namespace and this machine is shared.
    pub fn start(&self, template: &Value, port: u16) -> PodProcess {
        let spec = &template["spec"];
        let container = &spec["containers"][0];
        std::fs::create_dir_all(&self.dir).unwrap();
        let mut mounts: Vec<(String, PathBuf)> = Vec::new();
        for mount in container["volumeMounts"].as_array().into_iter().flatten() {
            let name = mount["name"].as_str().unwrap();
            let volume = spec["volumes"]
                .as_array()
                .and_then(|v| v.iter().find(|v| v["name"] == name))
                .unwrap_or_else(|| panic!("no volume {name}"));
            let source = self.volume(name, volume, mount["subPath"].as_str());
            mounts.push((mount["mountPath"].as_str().unwrap().to_string(), source));
        }
        if spec["automountServiceAccountToken"] != false {
            let account = spec["serviceAccountName"].as_str().unwrap_or("default");
            mounts.push((SERVICE_ACCOUNT_DIR.into(), self.service_account(account)));
        }
        let args: Vec<String> = container["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .map(|a| match a.strip_prefix("--listen=") {
                Some(address) => {
                    let (host, _) = address.rsplit_once(':').unwrap();
                    format!("--listen={host}:{port}")
                }
                None => a,
            })
            .collect();
        let security = &spec["securityContext"];
        let uid = security["runAsUser"].as_u64().expect("runAsUser");
        let gid = security["runAsGroup"].as_u64().unwrap_or(uid);
        let groups = security["fsGroup"].as_u64().unwrap_or(gid);
        for (_, source) in &mounts {
            share_with(source, groups);
        }
        let log = self.dir.join("pod.log");
        let scratch = scratch_outside(&self.dir.join("overlays"), &mounts);
        let mut command = Command::new("unshare");
        command
            .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
            .arg(mount_script(&scratch, &mounts, uid, gid, groups))
            .arg("pod")
            .arg(env!("CARGO_BIN_EXE_fleetglass"))
            .args(&args)
            .env_clear()
            .envs(self.env(container))
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", "/home/nonroot")
            .env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
            .env("KUBERNETES_SERVICE_PORT", self.api_port())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        PodProcess {
            child: command.spawn().expect("start the pod's process"),
            base: format!("http://127.0.0.1:{port}"),
            log,
            scratch,
        }
    }

    /// A volume's content as a local path: a ConfigMap's files (or the one `subPath` names), an
    /// emptyDir, a Secret's keys read from the cluster.
    fn volume(&self, name: &str, volume: &Value, sub_path: Option<&str>) -> PathBuf {
        let dir = self.dir.join("volumes").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(map) = volume["configMap"]["name"].as_str() {
            let config_map = self
                .config_maps
                .iter()
                .find(|c| c["metadata"]["name"] == map)
                .unwrap_or_else(|| panic!("no ConfigMap {map} rendered"));
            for (key, value) in config_map["data"].as_object().unwrap() {
                std::fs::write(dir.join(key), value.as_str().unwrap()).unwrap();
            }
        } else if let Some(secret) = volume["secret"]["secretName"].as_str() {
            let data = self.secret_data(secret);
            for (key, value) in data {
                std::fs::write(dir.join(key), value).unwrap();
            }
        } else {
            assert!(
                volume["emptyDir"].is_object(),
                "unsupported volume {volume}"
            );
        }
        match sub_path {
            Some(sub) => dir.join(sub),
            None => dir,
        }
    }

    /// A token from the TokenRequest API for the account, the cluster's CA and the namespace.
    fn service_account(&self, account: &str) -> PathBuf {
        let dir = self.dir.join("serviceaccount");
        std::fs::create_dir_all(&dir).unwrap();
        let token = self.bed.kubectl(
            self.cluster,
            &[
                "-n",
                self.namespace,
                "create",
                "token",
                account,
                "--duration=1h",
            ],
        );
        std::fs::write(dir.join("token"), token.trim()).unwrap();
        std::fs::write(dir.join("namespace"), self.namespace).unwrap();
        let ca = self.bed.kubectl(
            self.cluster,
            &[
                "config",
                "view",
                "--raw",
                "--minify",
                "-o",
                "jsonpath={.clusters[0].cluster.certificate-authority-data}",
            ],
        );
        std::fs::write(dir.join("ca.crt"), decode_base64(ca.trim())).unwrap();
        dir
    }

    /// The container's environment, secretKeyRefs resolved from the cluster.
    fn env(&self, container: &Value) -> Vec<(String, String)> {
        container["env"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|var| {
                let name = var["name"].as_str().unwrap().to_string();
                if let Some(value) = var["value"].as_str() {
                    return (name, value.to_string());
                }
                let reference = &var["valueFrom"]["secretKeyRef"];
                let secret = reference["name"].as_str().expect("value or secretKeyRef");
                let key = reference["key"].as_str().unwrap();
                let data = self.secret_data(secret);
                let value = data
                    .into_iter()
                    .find(|(k, _)| k == key)
                    .unwrap_or_else(|| panic!("secret {secret} has no key {key}"))
                    .1;
                (name, String::from_utf8(value).unwrap())
            })
            .collect()
    }

    fn secret_data(&self, secret: &str) -> Vec<(String, Vec<u8>)> {
        let json = self.bed.kubectl(
            self.cluster,
            &["-n", self.namespace, "get", "secret", secret, "-o", "json"],
        );
        let secret: Value = serde_json::from_str(&json).unwrap();
        secret["data"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), decode_base64(v.as_str().unwrap())))
            .collect()
    }

    fn api_port(&self) -> String {
        std::fs::read_to_string(
            self.bed
                .state
                .join("clusters")
                .join(self.cluster)
                .join("port"),
        )
        .expect("the API server's port")
        .trim()
        .to_string()
    }
}

/// Makes what the pod mounts readable by its group (a kubelet does this with fsGroup).
fn share_with(path: &Path, group: u64) {
    let status = Command::new("chgrp")
        .args(["-R", &group.to_string()])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
    let status = Command::new("chmod")
        .args(["-R", "g+rwX,o+rX"])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
    // The pod's user must reach it through the test's own directories.
    for dir in path.ancestors().skip(1) {
        let status = Command::new("chmod").arg("o+x").arg(dir).status().unwrap();
        assert!(status.success());
        if dir.ends_with("target") {
            break;
        }
    }
}

/// Where the pod's mounts are staged: a tmpfs of the namespace, at a path no mount hides. A
/// checkout under /tmp would put `preferred` under the pod's own /tmp mount, which hides it.
fn scratch_outside(preferred: &Path, mounts: &[(String, PathBuf)]) -> PathBuf {
    let hidden = |path: &Path| mounts.iter().any(|(target, _)| path.starts_with(target));
    let scratch = if hidden(preferred) {
        Path::new("/var/tmp").join(format!("fleetglass-pod-scratch-{}", std::process::id()))
    } else {
        preferred.to_path_buf()
    };
    assert!(
        !hidden(&scratch),
        "{}: hidden by a mount",
        scratch.display()
    );
    scratch
}

/// The shell run inside the private mount namespace: each source is bound into a scratch
/// tmpfs, each mount target's nearest existing directory gets a writable overlay (so missing
/// directories can be made without touching the machine's files), then each source is
/// bind-mounted from the scratch at its target; then the container's command runs as the pod's
/// user, with no new privileges and no capabilities.
fn mount_script(
    scratch: &Path,
    mounts: &[(String, PathBuf)],
    uid: u64,
    gid: u64,
    groups: u64,
) -> String {
    std::fs::create_dir_all(scratch).unwrap();
    let mut script = format!(
        "set -e\nscratch='{}'\nmount -t tmpfs none \"$scratch\"\no=0\n",
        scratch.display()
    );
    // Every source is first bound into the scratch, which no mount hides: a source under a
    // path the pod mounts over (a checkout under /tmp, and the pod's own /tmp) would be gone
    // by the time it is bound.
    for (n, (_, source)) in mounts.iter().enumerate() {
        let kind = if source.is_dir() { "mkdir" } else { "touch" };
        script.push_str(&format!(
            "{kind} \"$scratch/s{n}\"; mount --bind '{}' \"$scratch/s{n}\"\n",
            source.display()
        ));
    }
    for (n, (target, source)) in mounts.iter().enumerate() {
        let target = Path::new(target);
        let anchor = target
            .ancestors()
            .skip(1)
            .find(|a| a.is_dir())
            .unwrap()
            .display()
            .to_string();
        let kind = if source.is_dir() { "mkdir -p" } else { "touch" };
        script.push_str(&format!(
            "if [ ! -e '{target}' ]; then o=$((o+1)); mkdir \"$scratch/u$o\" \"$scratch/w$o\"; \
             mount -t overlay overlay -o lowerdir='{anchor}',upperdir=\"$scratch/u$o\",workdir=\"$scratch/w$o\" '{anchor}'; \
             mkdir -p \"$(dirname '{target}')\"; {kind} '{target}'; fi\n\
             mount --bind \"$scratch/s{n}\" '{target}'\n",
            target = target.display(),
        ));
    }
    script.push_str(&format!(
        "exec setpriv --reuid={uid} --regid={gid} --groups={groups} --no-new-privs \
         --inh-caps=-all --bounding-set=-all -- \"$@\"\n"
    ));
    script
}

fn decode_base64(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in text
        .bytes()
        .filter(|b| *b != b'=' && !b.is_ascii_whitespace())
    {
        let value = ALPHABET.iter().position(|a| *a == byte).expect("base64") as u32;
        bits = (bits << 6) | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    out
}
