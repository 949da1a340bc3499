//! Routes humans call with their `sbo_…` operator token.

pub mod admission;
pub mod connections;
pub mod dead_letters;
pub mod digests;
pub mod endpoints;
pub mod hooks;
pub mod quarantine;
pub mod queues;
pub mod sinks;
pub mod todos;
pub mod webhooks;
