//! The Endpoints pages: the list of the human's endpoints with the vend form, the
//! token shown once after vending, an endpoint's page (grants, webhooks, hooks) and
//! revocation behind a confirmation that says plainly what it dead-letters.
//!
//! The views ([`view`], [`detail`]) are pure functions from plain data to markup; the
//! [`handlers`] load the data and call the same services as the operator API
//! ([`crate::service::endpoints`]: vend, revoke), so the Board and the API validate
//! and check permissions alike.

pub mod detail;
pub mod form;
pub mod handlers;
pub mod paths;
pub mod view;

use actix_web::http::Method;

use crate::service::permissions::Action;
use crate::web::routes::Entry;

/// The Endpoints pages' routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<Entry> {
    vec![
        Entry::new(Method::GET, paths::ENDPOINTS, Action::ListEndpoints, handlers::list),
        Entry::new(Method::POST, paths::ENDPOINTS, Action::VendEndpoint, handlers::vend),
        Entry::new(Method::GET, paths::ENDPOINT, Action::ShowEndpoint, handlers::show),
        Entry::new(Method::GET, paths::REVOKE, Action::RevokeEndpoint, handlers::confirm_revoke),
        Entry::new(Method::POST, paths::REVOKE, Action::RevokeEndpoint, handlers::revoke),
    ]
}

#[cfg(test)]
mod view_tests;
