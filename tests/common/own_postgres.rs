//! A Postgres server of the test's own (initdb + pg_ctl from the installed binaries), for the
//! fault tests that stop, restart or exhaust it: the shared server the other tests use must
//! never be disturbed. Its port stays the same across restarts, so URLs stay valid.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct OwnPostgres {
    dir: PathBuf,
    bin: PathBuf,
    pub port: u16,
    max_connections: u32,
}

impl OwnPostgres {
    /// A new, empty server under `target/pg-<name>`, started, allowing `max_connections`.
    pub fn start(name: &str, max_connections: u32) -> OwnPostgres {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("target/pg-{name}"));
        let bin = bindir();
        if dir.join("data/postmaster.pid").exists() {
            // Left running by an interrupted run of this test.
            as_owner(
                &bin.join("pg_ctl"),
                &["-D", &path(&dir.join("data")), "-m", "immediate", "stop"],
            );
        }
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).expect("create the Postgres directory");
        if is_root() {
            ok(
                Command::new("chown").arg("postgres:").arg(&dir).output(),
                "chown",
            );
        }
        ok(
            Ok(as_owner(
                &bin.join("initdb"),
                &[
                    "-D",
                    &path(&dir.join("data")),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "--no-locale",
                    "-E",
                    "UTF8",
                ],
            )),
            "initdb",
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let server = OwnPostgres {
            dir,
            bin,
            port,
            max_connections,
        };
        server.start_again();
        server
    }

    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Starts the stopped server on the same port; returns when it accepts connections.
    pub fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections={} -c superuser_reserved_connections=2 -c fsync=off",
            self.port,
            path(&self.dir),
            self.max_connections
        );
        let log = path(&self.dir.join("server.log"));
        ok(
            Ok(as_owner(
                &self.bin.join("pg_ctl"),
                &[
                    "-D",
                    &path(&self.dir.join("data")),
                    "-l",
                    &log,
                    "-w",
                    "-t",
                    "60",
                    "-o",
                    &options,
                    "start",
                ],
            )),
            "pg_ctl start",
        );
    }

    /// A fast shutdown: clients are disconnected, as in a failover or a restart.
    pub fn stop(&self) {
        ok(
            Ok(as_owner(
                &self.bin.join("pg_ctl"),
                &[
                    "-D",
                    &path(&self.dir.join("data")),
                    "-m",
                    "fast",
                    "-w",
                    "stop",
                ],
            )),
            "pg_ctl stop",
        );
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        as_owner(
            &self.bin.join("pg_ctl"),
            &[
                "-D",
                &path(&self.dir.join("data")),
                "-m",
                "immediate",
                "stop",
            ],
        );
    }
}

fn bindir() -> PathBuf {
    let from_pg_config = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let installed = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("bin"));
    from_pg_config
        .into_iter()
        .chain(installed)
        .find(|dir| dir.join("initdb").exists() && dir.join("pg_ctl").exists())
        .expect("PostgreSQL server binaries (scripts/deps installs them)")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// initdb and the server refuse to run as root: run them as the postgres user then.
fn as_owner(program: &Path, args: &[&str]) -> Output {
    let mut command = if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    };
    command.args(args).output().expect("run a Postgres binary")
}

fn ok(output: std::io::Result<Output>, what: &str) {
    let output = output.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn path(path: &Path) -> String {
    path.display().to_string()
}
