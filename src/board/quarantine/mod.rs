//! `/quarantine`: deliveries held by the sender gate (or by a rule) in the human's
//! scopes, each with its webhook, endpoint, source, sender, why it is held, when it
//! arrived and when it expires; the detail shows the held payload as text; release
//! (through the webhook's rules, or to a named queue) and discard.
//!
//! The page bodies are pure ([`view`]); the handlers ([`handlers`]) release through the
//! same function as the operator API (`crate::http::operator::quarantine`).

pub mod handlers;
pub mod paths;
pub mod view;

#[cfg(test)]
mod view_tests;

use actix_web::web;

/// The quarantine pages' routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<(&'static str, actix_web::Route)> {
    vec![
        (paths::QUARANTINE, web::get().to(handlers::list)),
        (paths::HELD, web::get().to(handlers::detail)),
        (paths::RELEASE, web::post().to(handlers::release)),
        (paths::DISCARD, web::post().to(handlers::discard)),
    ]
}
