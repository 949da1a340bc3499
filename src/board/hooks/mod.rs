//! `/hooks`: every hook on every endpoint the human reaches, grouped by
//! endpoint, with its health and the per-endpoint ceiling; add a hook (its signing
//! secret shown once), rotate, enable, disable, delete.
//!
//! The page bodies are pure ([`view`]); the handlers ([`handlers`]) take the same
//! same services as the operator API ([`crate::hooks::service`]): the kill switch, the URL
//! checks, the outbound guard at save time, the ceiling, and the dispatcher's cache
//! eviction. Changing a team's hooks takes an admin of the team, as in the API.

pub mod handlers;
pub mod paths;
pub mod view;

#[cfg(test)]
mod view_tests;

use actix_web::http::Method;

use crate::service::permissions::Action;
use crate::web::routes::Entry;

/// The hook pages' routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<Entry> {
    vec![
        Entry::new(Method::GET, paths::HOOKS, Action::ListHooks, handlers::list),
        Entry::new(Method::POST, paths::CREATE, Action::CreateHook, handlers::create),
        Entry::new(Method::POST, paths::ROTATE, Action::RotateHook, handlers::rotate),
        Entry::new(Method::POST, paths::ENABLE, Action::EnableHook, handlers::enable),
        Entry::new(Method::POST, paths::DISABLE, Action::DisableHook, handlers::disable),
        Entry::new(Method::POST, paths::DELETE, Action::DeleteHook, handlers::delete),
    ]
}
