//! The `evaluate` JSON contract, written field by field so it cannot drift with internal types:
//! `{evaluated_at, cluster, objects, root_causes, domains, dependencies, co_ownerships, ignored,
//! skipped}` (keys in alphabetical order, as they always were). Serialized straight from the
//! evaluation, without an intermediate JSON value per verdict.

use super::{Ignored, Inputs, Skipped};
use crate::health::{
    ClusterInfo, DomainSpec, Evaluation, Input, InputEvidence, RootCause, State, Thresholds,
    Verdict, evaluate,
};
use crate::model::{Kind, ObjectId};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeStruct, Serializer};
use std::io::Write;

/// Writes the report on `evaluation` of what was read as the cluster `cluster` (pretty JSON
/// and a newline) to `out`.
pub fn write_report(
    inputs: &Inputs,
    evaluation: &Evaluation,
    cluster: &str,
    now: DateTime<Utc>,
    out: impl Write,
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(out);
    serde_json::to_writer_pretty(&mut out, &Report::new(inputs, cluster, now, evaluation))?;
    writeln!(out)?;
    out.flush()
}

/// The engine on the input, told what the input covers: absence is evidence only for the
/// kinds it holds, and copies that disagree cannot be trusted.
pub fn evaluate_inputs(
    inputs: &Inputs,
    cluster: &str,
    now: DateTime<Utc>,
    thresholds: &Thresholds,
    domains: &[DomainSpec],
) -> Evaluation {
    let info = ClusterInfo {
        name: cluster.to_string(),
        input: Some(InputEvidence {
            kinds: inputs.objects.iter().map(|o| o.kind).collect(),
            conflicting: inputs.conflicting.clone(),
        }),
        ..ClusterInfo::default()
    };
    evaluate(&Input {
        objects: &inputs.objects,
        clusters: std::slice::from_ref(&info),
        domains,
        thresholds,
        now,
        seen_in_progress: &Default::default(),
    })
}

pub(super) struct Report<'a> {
    inputs: &'a Inputs,
    cluster: &'a str,
    now: DateTime<Utc>,
    evaluation: &'a Evaluation,
}

impl<'a> Report<'a> {
    pub(super) fn new(
        inputs: &'a Inputs,
        cluster: &'a str,
        now: DateTime<Utc>,
        evaluation: &'a Evaluation,
    ) -> Self {
        Report {
            inputs,
            cluster,
            now,
            evaluation,
        }
    }
}

impl Serialize for Report<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let e = self.evaluation;
        let mut report = serializer.serialize_struct("Report", 9)?;
        report.serialize_field("cluster", self.cluster)?;
        report.serialize_field("co_ownerships", &sorted::<_, S::Error>(&e.co_ownerships)?)?;
        report.serialize_field("dependencies", &sorted::<_, S::Error>(&e.dependencies)?)?;
        report.serialize_field("domains", &sorted::<_, S::Error>(&e.domains)?)?;
        report.serialize_field("evaluated_at", &rfc3339(self.now))?;
        report.serialize_field("ignored", &IgnoredOut(&self.inputs.ignored))?;
        report.serialize_field("objects", &Each(&e.objects, verdict_out))?;
        report.serialize_field("root_causes", &Each(&e.root_causes, cause_out))?;
        report.serialize_field("skipped", &Each(&self.inputs.skipped, skipped_out))?;
        report.end()
    }
}

/// Through a JSON value, whose keys come out sorted like every other key of the report.
fn sorted<T: Serialize, E: serde::ser::Error>(list: &T) -> Result<serde_json::Value, E> {
    serde_json::to_value(list).map_err(E::custom)
}

/// A list serialized item by item through a view of the item.
struct Each<'a, T, V>(&'a [T], fn(&'a T) -> V);

impl<'a, T, V: Serialize> Serialize for Each<'a, T, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(self.1))
    }
}

/// A verdict's ten contract fields.
#[derive(Serialize)]
struct VerdictOut<'a> {
    cluster: &'a str,
    id: &'a str,
    kind: Kind,
    message: &'a str,
    name: &'a str,
    namespace: &'a str,
    reason: &'a str,
    root_causes: &'a [ObjectId],
    since: Option<String>,
    state: State,
}

fn verdict_out(v: &Verdict) -> VerdictOut<'_> {
    VerdictOut {
        cluster: &v.cluster,
        id: v.id.as_str(),
        kind: v.kind,
        message: &v.message,
        name: &v.name,
        namespace: &v.namespace,
        reason: &v.reason,
        root_causes: &v.root_causes,
        since: v.since.map(rfc3339),
        state: v.state,
    }
}

/// A root cause's five contract fields.
#[derive(Serialize)]
struct CauseOut<'a> {
    affected: &'a [ObjectId],
    id: &'a str,
    message: &'a str,
    reason: &'a str,
    state: State,
}

fn cause_out(r: &RootCause) -> CauseOut<'_> {
    CauseOut {
        affected: &r.affected,
        id: r.id.as_str(),
        message: &r.message,
        reason: &r.reason,
        state: r.state,
    }
}

#[derive(Serialize)]
struct SkippedOut<'a> {
    document: &'a str,
    reason: &'a str,
}

fn skipped_out(s: &Skipped) -> SkippedOut<'_> {
    SkippedOut {
        document: &s.document,
        reason: &s.reason,
    }
}

struct IgnoredOut<'a>(&'a Ignored);

impl Serialize for IgnoredOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("count", &self.0.count)?;
        map.serialize_entry("kinds", &self.0.kinds)?;
        map.end()
    }
}

fn rfc3339(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}
