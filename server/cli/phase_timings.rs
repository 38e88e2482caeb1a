//! Internal phase timings for `fleetglass evaluate`, printed on stderr only when
//! `FLEETGLASS_TIMINGS=1` (for profiling; not part of the command's contract).

use std::time::Instant;

pub struct PhaseTimings {
    /// When the last phase ended; None when timings are off.
    last: Option<Instant>,
}

impl PhaseTimings {
    pub fn from_env() -> Self {
        let on = std::env::var_os("FLEETGLASS_TIMINGS").is_some_and(|v| v == "1");
        PhaseTimings {
            last: on.then(Instant::now),
        }
    }

    /// Prints how long the phase `name`, ending now, took, and the peak memory so far.
    pub fn lap(&mut self, name: &str) {
        if let Some(last) = self.last.as_mut() {
            let now = Instant::now();
            eprintln!(
                "fleetglass timings: {name} {:.3} s, peak RSS {}",
                (now - *last).as_secs_f64(),
                peak_rss().unwrap_or_else(|| "unknown".into())
            );
            *last = now;
        }
    }
}

/// The process's peak resident memory as Linux reports it (`VmHWM`), where it does.
fn peak_rss() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    Some(line["VmHWM:".len()..].trim().to_string())
}
