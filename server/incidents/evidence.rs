//! An incident's evidence: its Warning events, the latest few reasons each once with the times
//! summed, for the pages and the alerts alike.

use crate::model::Warning;

/// Reasons shown under an incident and in its alert: what an on-call engineer reads before
/// clicking through.
pub const REASONS_SHOWN: usize = 3;

/// One reason among an incident's Warning events: how many times in all, on how many objects,
/// and the latest note.
#[derive(Debug, Clone, PartialEq)]
pub struct ReasonSeen {
    pub reason: String,
    pub times: i64,
    pub objects: usize,
    pub latest_note: String,
    pub reporter: String,
}

impl ReasonSeen {
    /// "BackOff (12×, kubelet): Back-off restarting failed container …"
    pub fn line(&self) -> String {
        format!(
            "{} ({}, {}): {}",
            self.reason,
            self.times_text(),
            self.reporter,
            self.latest_note
        )
    }

    pub fn times_text(&self) -> String {
        match (self.times, self.objects) {
            (1, _) => "once".to_string(),
            (n, 1) => format!("{n}×"),
            (n, objects) => format!("{n}× on {objects} objects"),
        }
    }
}

/// The latest `few` reasons among `warnings` (newest first), each once: times summed, objects
/// counted, the newest note kept.
pub fn by_reason<'a>(
    warnings: impl IntoIterator<Item = &'a Warning>,
    few: usize,
) -> Vec<ReasonSeen> {
    let mut seen: Vec<(ReasonSeen, Vec<&str>)> = Vec::new();
    for warning in warnings {
        let full = seen.len() >= few;
        match seen
            .iter_mut()
            .find(|(r, _)| r.reason == warning.reason && r.reporter == warning.reporter)
        {
            Some((reason, objects)) => {
                reason.times += i64::from(warning.count);
                if !objects.contains(&warning.regarding.as_str()) {
                    objects.push(warning.regarding.as_str());
                    reason.objects += 1;
                }
            }
            None if !full => seen.push((
                ReasonSeen {
                    reason: warning.reason.clone(),
                    times: i64::from(warning.count),
                    objects: 1,
                    latest_note: warning.note.clone(),
                    reporter: warning.reporter.clone(),
                },
                vec![warning.regarding.as_str()],
            )),
            None => {}
        }
    }
    seen.into_iter().map(|(reason, _)| reason).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ObjectId;
    use chrono::Utc;

    fn warning(on: &str, reason: &str, count: i32, note: &str) -> Warning {
        Warning {
            regarding: format!("c/Pod/apps/{on}").parse::<ObjectId>().unwrap(),
            uid: format!("{on}-{reason}-{note}"),
            reason: reason.into(),
            note: note.into(),
            count,
            last_seen: Utc::now(),
            reporter: "kubelet".into(),
        }
    }

    #[test]
    fn each_reason_once_with_its_times_summed_and_the_newest_note() {
        let newest_first = [
            warning("api-1", "BackOff", 5, "newest"),
            warning("api-2", "BackOff", 3, "older"),
            warning("api-1", "Failed", 1, "pull"),
            warning("api-1", "BackOff", 2, "oldest"),
            warning("api-3", "Unhealthy", 1, "probe"),
        ];
        let reasons = by_reason(&newest_first, 2);
        assert_eq!(reasons.len(), 2, "the latest two reasons only");
        assert_eq!(
            (
                reasons[0].reason.as_str(),
                reasons[0].times,
                reasons[0].objects
            ),
            ("BackOff", 10, 2)
        );
        assert_eq!(reasons[0].latest_note, "newest");
        assert_eq!(reasons[0].times_text(), "10× on 2 objects");
        assert_eq!(reasons[1].times_text(), "once");
    }
}
