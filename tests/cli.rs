//! The binary's contract for people: clear one-line errors, never a panic or a backtrace.

use std::process::{Command, Output};

fn fleetglass(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fleetglass"));
    command
        .args(args)
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "error");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("run fleetglass")
}

fn one_line_error(output: &Output) -> String {
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "expected one line, got: {stderr}"
    );
    assert!(stderr.starts_with("fleetglass: "), "{stderr}");
    stderr
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fleetglass-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_bad_config_names_the_file_and_the_key() {
    let path = temp_file("bad.yaml", "clusters:\n  - name: prod\n    kubconfig: /x\n");
    let output = fleetglass(&["serve", "--config", path.to_str().unwrap()], &[]);
    let error = one_line_error(&output);
    assert!(error.contains("bad.yaml"), "{error}");
    assert!(error.contains("clusters[0]"), "{error}");
    assert!(error.contains("kubconfig"), "{error}");
}

#[test]
fn contradictory_access_settings_refuse_to_start_naming_the_conflict() {
    let tokens = temp_file("tokens", &format!("ci {}\n", "ab".repeat(32)));
    let none = temp_file("none.yaml", "web:\n  auth:\n    mode: none\n");
    let output = fleetglass(
        &["serve", "--config", none.to_str().unwrap()],
        &[("FLEETGLASS_API_TOKENS_FILE", tokens.to_str().unwrap())],
    );
    let error = one_line_error(&output);
    assert!(
        error.contains("web.auth.mode") && error.contains("FLEETGLASS_API_TOKENS_FILE"),
        "{error}"
    );
    let proxy = temp_file("proxy.yaml", "web:\n  auth:\n    mode: proxy\n");
    let error = one_line_error(&fleetglass(
        &["serve", "--config", proxy.to_str().unwrap()],
        &[],
    ));
    assert!(error.contains("web.auth.proxy.trusted_proxies"), "{error}");
}

#[test]
fn a_missing_config_file_is_named() {
    let output = fleetglass(
        &["migrate", "--config", "/nonexistent/fleetglass.yaml"],
        &[],
    );
    let error = one_line_error(&output);
    assert!(error.contains("/nonexistent/fleetglass.yaml"), "{error}");
}

#[test]
fn an_unreachable_database_is_one_clear_line_without_the_password() {
    // Port 9 (discard) on loopback: nothing listens there.
    let url = "postgres://fleet:s3cret-pw@127.0.0.1:9/fleet";
    let output = fleetglass(&["migrate"], &[("DATABASE_URL", url)]);
    let error = one_line_error(&output);
    assert!(
        error.contains("cannot reach the database at 127.0.0.1:9/fleet"),
        "{error}"
    );
    assert!(!error.contains("s3cret-pw"), "{error}");
}

#[test]
fn no_database_at_all_says_how_to_give_one() {
    let output = fleetglass(&["migrate"], &[]);
    let error = one_line_error(&output);
    assert!(error.contains("DATABASE_URL"), "{error}");
}

#[test]
fn help_explains_each_command() {
    let output = fleetglass(&["--help"], &[]);
    let help = String::from_utf8_lossy(&output.stdout);
    for command in ["serve", "migrate"] {
        assert!(help.contains(command), "{help}");
    }
    let serve = fleetglass(&["serve", "--help"], &[]);
    let serve_help = String::from_utf8_lossy(&serve.stdout);
    for flag in [
        "--config",
        "--demo",
        "--listen",
        "--context",
        "--all-contexts",
        "current context",
    ] {
        assert!(serve_help.contains(flag), "{serve_help}");
    }
    let add = fleetglass(&["cluster", "add", "--help"], &[]);
    let add_help = String::from_utf8_lossy(&add.stdout);
    for flag in ["CONTEXT", "--token-ttl", "--server", "--out"] {
        assert!(add_help.contains(flag), "{add_help}");
    }
}

#[test]
fn with_nothing_to_watch_serve_says_what_it_looked_for() {
    let home = std::env::temp_dir().join(format!("fleetglass-cli-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let serve = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_fleetglass"))
            .arg("serve")
            .args(args)
            .env_remove("KUBECONFIG")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env("HOME", &home)
            .env("RUST_LOG", "error")
            .output()
            .unwrap()
    };
    let error = one_line_error(&serve(&[]));
    assert!(
        error.contains("kubeconfig") && error.contains("service account token"),
        "{error}"
    );
    let error = one_line_error(&serve(&["--all-contexts"]));
    assert!(error.contains("need a kubeconfig"), "{error}");
}

#[test]
fn wait_never_prints_the_credentials_of_its_url() {
    let output = fleetglass(
        &[
            "wait",
            "--url",
            "http://ci:s3cret-pass@127.0.0.1:1/",
            "--domain",
            "gateway",
            "--version",
            "1.0.0",
            "--timeout",
            "1s",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("s3cret-pass") && !stderr.contains("ci:"),
        "{stderr}"
    );
    assert!(stderr.contains("http://***@127.0.0.1:1/"), "{stderr}");
}

#[test]
fn an_empty_or_short_web_secret_stops_the_start_naming_where_it_came_from() {
    let empty = temp_file("empty-secret", " \n");
    let config = temp_file(
        "with-secret.yaml",
        &format!("web:\n  secret_file: {}\n", empty.display()),
    );
    let config = config.to_str().unwrap();
    let output = fleetglass(&["serve", "--demo", "--config", config], &[]);
    let stderr = one_line_error(&output);
    assert!(
        stderr.contains(&empty.display().to_string()) && stderr.contains("at least 32"),
        "{stderr}"
    );
    let output = fleetglass(
        &["serve", "--demo", "--config", config],
        &[("FLEETGLASS_WEB_SECRET", "short")],
    );
    let stderr = one_line_error(&output);
    assert!(
        stderr.contains("FLEETGLASS_WEB_SECRET") && stderr.contains("5 bytes"),
        "{stderr}"
    );
}
