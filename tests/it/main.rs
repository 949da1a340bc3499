//! The one integration-test binary. Each test gets a fresh PostgreSQL database cloned
//! from a migrated template and, where it speaks HTTP, the real app on port 0.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test, with its message"
)]

mod harness;

mod admission;
mod alerts;
mod api_conformance;
mod api_doc;
mod auth_coherence;
mod bad_input;
mod batches;
mod board;
mod board_store;
mod browser;
mod claim_plan;
mod cli;
mod client_gone;
mod db_restart;
mod dead_letters;
mod deliveries;
mod destinations;
mod digests;
mod downgrade;
mod first_hour;
mod first_run;
mod group_commit;
mod hooks;
mod intake;
mod lifecycle;
mod listener_session;
mod long_poll;
mod mcp;
mod metrics;
mod one_row;
mod outbound;
mod owner_pages;
mod permissions;
mod plan_stability;
mod proxy;
mod quarantine;
mod queues;
mod races;
mod retention;
mod revocation_under_load;
mod rings;
mod rolling_upgrade;
mod row_rules;
mod security;
mod service_unit;
mod signals;
mod sinks;
mod startup;
mod statements;
mod sweepers;
mod trigger_functions;
