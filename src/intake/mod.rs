//! Intake: per-source verification of inbound webhooks, routing rules, quarantine.
pub mod verify;
