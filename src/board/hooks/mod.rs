//! `/hooks`: every notify hook on every endpoint the human reaches, grouped by
//! endpoint, with its health and the per-endpoint ceiling; add a hook (its signing
//! secret shown once), rotate, enable, disable, delete.
//!
//! The page bodies are pure ([`view`]); the handlers ([`handlers`]) take the same
//! shared paths as the operator API (`crate::http::hooks`): the kill switch, the URL
//! checks, the outbound guard at save time, the ceiling, and the dispatcher's cache
//! eviction. Changing a team's hooks takes an admin of the team, as in the API.

pub mod handlers;
pub mod paths;
pub mod view;

#[cfg(test)]
mod view_tests;

use actix_web::web;

/// The hook pages' routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<(&'static str, actix_web::Route)> {
    vec![
        (paths::HOOKS, web::get().to(handlers::list)),
        (paths::CREATE, web::post().to(handlers::create)),
        (paths::ROTATE, web::post().to(handlers::rotate)),
        (paths::ENABLE, web::post().to(handlers::enable)),
        (paths::DISABLE, web::post().to(handlers::disable)),
        (paths::DELETE, web::post().to(handlers::delete)),
    ]
}
