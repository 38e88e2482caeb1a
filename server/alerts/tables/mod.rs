//! The alert tables: alerts, their outbox and silences. The alerts module owns its records
//! and how they are written; the rest of the store never reads them.

pub mod alerts;
pub mod outbox;
pub mod silences;
