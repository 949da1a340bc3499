//! Intake: per-source verification of inbound webhooks, routing rules, quarantine.
pub mod redact;
pub mod routing;
pub mod rules;
pub mod trusted_senders;
pub mod verify;
