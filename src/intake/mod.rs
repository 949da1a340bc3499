//! Intake: per-source verification of inbound webhooks, routing rules, quarantine.
pub mod redact;
pub mod routing;
pub mod rules;
pub mod trusted_senders;
pub mod verify;

/// Where deliveries come in: `POST {INGEST_PREFIX}{ingest_token}`.
pub const INGEST_PREFIX: &str = "/webhooks/w/";

/// The prefix of every ingest route. The outbound guard refuses targets under any of
/// them, so a hook cannot feed notifications back in as deliveries.
pub const INGEST_ROUTE_PREFIXES: &[&str] = &[INGEST_PREFIX];
