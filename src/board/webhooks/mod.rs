//! The Webhooks pages: the list of the human's webhooks with the create form, the
//! ingest URL, ingest token and signing secret shown once after creating, and a
//! webhook's page with its routing rules (save, and a dry run against a sample
//! delivery).
//!
//! The views ([`view`], [`detail`]) are pure functions from plain data to markup; the
//! [`handlers`] call the same functions as the operator API
//! (`crate::http::operator::webhooks::{create_for, save_rules_for, dry_run_for}`), so
//! the Board and the API validate alike and a saved rule set evicts the intake cache.

pub mod detail;
pub mod form;
pub mod handlers;
pub mod paths;
pub mod view;

#[cfg(test)]
mod view_tests;
