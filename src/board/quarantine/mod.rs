//! `/quarantine`: deliveries held by the sender gate (or by a rule) in the human's
//! scopes, each with its webhook, endpoint, source, sender, why it is held, when it
//! arrived and when it expires; the detail shows the held payload as text; release
//! (through the webhook's rules, or to a named queue) and discard.
//!
//! The page bodies are pure ([`view`]); the handlers ([`handlers`]) release through the
//! same services as the operator API ([`crate::service::quarantine`]).

pub mod handlers;
pub mod paths;
pub mod view;

#[cfg(test)]
mod view_tests;

use actix_web::http::Method;

use crate::service::permissions::Action;
use crate::web::routes::Entry;

/// The quarantine pages' routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<Entry> {
    vec![
        Entry::new(Method::GET, paths::QUARANTINE, Action::ListHeld, handlers::list),
        Entry::new(Method::GET, paths::HELD, Action::ShowHeld, handlers::detail),
        Entry::new(Method::POST, paths::RELEASE, Action::ReleaseHeld, handlers::release),
        Entry::new(Method::POST, paths::DISCARD, Action::DiscardHeld, handlers::discard),
    ]
}
