//! The Endpoints pages: the list of the human's endpoints with the vend form, the
//! token shown once after vending, an endpoint's page (grants, webhooks, hooks) and
//! revocation behind a confirmation that says plainly what it dead-letters.
//!
//! The views ([`view`], [`detail`]) are pure functions from plain data to markup; the
//! [`handlers`] load the data and call the same functions as the operator API
//! (`crate::http::operator::endpoints::{vend_for, revoke_for}`), so the Board and the
//! API validate alike.

pub mod detail;
pub mod form;
pub mod handlers;
pub mod paths;
pub mod view;

use actix_web::web;

/// The Endpoints pages' routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<(&'static str, actix_web::Route)> {
    vec![
        (paths::ENDPOINTS, web::get().to(handlers::list)),
        (paths::ENDPOINTS, web::post().to(handlers::vend)),
        (paths::ENDPOINT, web::get().to(handlers::show)),
        (paths::REVOKE, web::get().to(handlers::confirm_revoke)),
        (paths::REVOKE, web::post().to(handlers::revoke)),
    ]
}

#[cfg(test)]
mod view_tests;
