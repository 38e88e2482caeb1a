//! The composition root: the one place that wires the parts of a `fleetglass serve` process
//! together. Everything else depends downwards only: `sources` produce events, `ingest` turns
//! them into evaluations written through `store`, `alerts` and `web` read them. Here a source
//! (kube or demo, by the same code) is connected to the runner, the lease keeper and history
//! retention, the web is started next to them, and all of it is shut down in order.

mod collector;
mod serve;
mod source;

pub use collector::Collector;
pub use serve::{Options, Role, open_store, serve};
pub use source::{Feed, Source};
