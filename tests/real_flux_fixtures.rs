//! The engine on objects written by the real Flux controllers (saved by tests/real_flux with
//! FLEETGLASS_UPDATE_FIXTURES=1), without the test bed: each fixture evaluated as of the time it
//! was captured must give the same verdicts the live run asserted.

use crate::real_flux::{expect, report};

use report::{Report, evaluate};
use std::path::PathBuf;

fn fixture(step: &str) -> Report {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-flux");
    let file = dir.join(format!("{step}.yaml"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let now = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# captured-at: "))
        .unwrap_or_else(|| {
            panic!(
                "{} does not start with '# captured-at: <time>'",
                file.display()
            )
        });
    evaluate(&file, &dir.join("config.yaml"), now)
}

/// The commit a step's GitRepository offered, from the fixture itself.
fn revision(report: &Report, ns: &str) -> String {
    let message = report.verdict("GitRepository", ns, "fleet")["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    message
        .rsplit("sha1:")
        .next()
        .unwrap_or_default()
        .chars()
        .take(40)
        .collect()
}

#[test]
fn healthy_chain() {
    let report = fixture("healthy");
    let commit = revision(&report, "flux-healthy");
    expect::healthy_chain(&report, "flux-healthy", &commit);
}

#[test]
fn broken_yaml() {
    expect::broken_yaml(&fixture("broken-yaml"), "flux-broken");
}

#[test]
fn rollout_progressing_then_stuck() {
    expect::progressing_rollout(&fixture("rollout-progressing"), "flux-stuck");
    expect::stuck_rollout(&fixture("rollout-stuck"), "flux-stuck");
}

#[test]
fn controller_stopped_then_restarted() {
    expect::controller_stopped(&fixture("controller-stopped"), "flux-controller");
    expect::controller_restarted(&fixture("controller-restarted"), "flux-controller");
}

#[test]
fn admission_denied() {
    expect::admission_denied(&fixture("admission-denied"), "flux-denied");
}

#[test]
fn crash_loop() {
    expect::crash_looping_release(&fixture("crash-loop"), "flux-crash");
}

#[test]
fn shard_trap() {
    expect::shard_trap(&fixture("shard-trap"), "flux-shard");
}

#[test]
fn wait_failed() {
    expect::wait_failed_over_crash_loop(&fixture("wait-failed"), "flux-wait");
}

#[test]
fn path_not_found() {
    expect::path_not_found(&fixture("path-not-found"), "flux-path");
}

#[test]
fn same_source_dependency() {
    expect::held_by_suspended_dependency(&fixture("same-source-dependency"), "flux-samesource");
}

#[test]
fn include_without_artifact() {
    expect::include_without_artifact(&fixture("include-without-artifact"), "flux-include");
}

#[test]
fn inventory_complete_then_deleted() {
    expect::release_healthy(&fixture("inventory-complete"), "flux-inventory");
    expect::inventory_deleted(&fixture("inventory-deleted"), "flux-inventory");
}

#[test]
fn invalid_ready_expr() {
    expect::invalid_ready_expr(&fixture("invalid-ready-expr"), "flux-readyexpr");
}

#[test]
fn rollback_hides_failure() {
    expect::rollback_hides_failure(&fixture("rollback-hides-failure"), "flux-rollback");
}

#[test]
fn uninstall_forbidden() {
    expect::uninstall_forbidden(&fixture("uninstall-forbidden"), "flux-uninstall");
}

#[test]
fn job_failed() {
    expect::job_failed(&fixture("job-failed"), "flux-job");
}
