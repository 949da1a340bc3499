//! The Webhooks pages: the list of the human's webhooks with the create form, the
//! ingest URL, ingest token and signing secret shown once after creating, and a
//! webhook's page with its routing rules (save, and a dry run against a sample
//! delivery).
//!
//! The views ([`view`], [`detail`]) are pure functions from plain data to markup; the
//! [`handlers`] call the same services as the operator API
//! ([`crate::service::webhooks`]: create, save rules, dry run), so the Board and the
//! API validate alike and a saved rule set evicts the intake cache.

pub mod detail;
pub mod form;
pub mod handlers;
pub mod paths;
pub mod view;

use actix_web::http::Method;

use crate::service::permissions::Action;
use crate::web::routes::Entry;

/// The Webhooks pages' routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<Entry> {
    vec![
        Entry::new(Method::GET, paths::WEBHOOKS, Action::ListWebhooks, handlers::list),
        Entry::new(Method::POST, paths::WEBHOOKS, Action::CreateWebhook, handlers::create),
        Entry::new(Method::GET, paths::WEBHOOK, Action::ShowWebhook, handlers::show),
        Entry::new(Method::POST, paths::RULES, Action::SaveRules, handlers::save_rules),
        Entry::new(Method::POST, paths::RULES_TEST, Action::DryRunRules, handlers::test_rules),
    ]
}

#[cfg(test)]
mod view_tests;
