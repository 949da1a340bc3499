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

use actix_web::web;

/// The Webhooks pages' routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<(&'static str, actix_web::Route)> {
    vec![
        (paths::WEBHOOKS, web::get().to(handlers::list)),
        (paths::WEBHOOKS, web::post().to(handlers::create)),
        (paths::WEBHOOK, web::get().to(handlers::show)),
        (paths::RULES, web::post().to(handlers::save_rules)),
        (paths::RULES_TEST, web::post().to(handlers::test_rules)),
    ]
}

#[cfg(test)]
mod view_tests;
