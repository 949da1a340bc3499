//! Intake: per-source verification of inbound webhooks, routing rules, quarantine.
pub mod actors;
pub mod redact;
pub mod routing;
pub mod rules;
pub mod verify;
