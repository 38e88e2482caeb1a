//! The health engine: pure functions from objects, clusters, thresholds and `now` to verdicts,
//! root causes and domain roll-ups. No I/O and no clock, so it is the same in the CLI, the
//! server and the tests.

mod input;
mod state;
mod verdict;

pub use input::{ClusterInfo, DomainSpec, Selection, Thresholds, VersionSource};
pub use state::State;
pub use verdict::{DomainVerdict, Evaluation, RootCause, Verdict, cluster_id};
mod interim;
pub use interim::{Input, evaluate};
