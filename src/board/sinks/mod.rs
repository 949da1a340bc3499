//! The Sinks pages: the connection vault (fingerprints only; store, rotate, test a
//! cairn connection, delete)
//! and the sinks of every scope the human belongs to (enable, disable, budget, a test
//! send, delete, add), and one sink's page with its subscriptions editor and its
//! send log (pending, sent, held, coalesced, partial, undeliverable).
//!
//! The views ([`view`]) are pure functions from rows to markup; the [`handlers`] call
//! the same services as the operator API ([`crate::sinks::service::connections`],
//! [`crate::sinks::service`]), so the Board and the API validate alike. Changing a
//! team's connections and sinks takes an admin of the team, as in the API.

pub mod form;
pub mod handlers;
pub mod paths;
pub mod view;

#[cfg(test)]
mod view_tests;

use actix_web::http::Method;

use crate::service::permissions::Action;
use crate::web::routes::Entry;

/// The Sinks pages' routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<Entry> {
    vec![
        Entry::new(Method::GET, paths::SINKS, Action::ListSinks, handlers::list),
        Entry::new(Method::POST, paths::SINKS, Action::CreateSink, handlers::create_sink),
        Entry::new(Method::POST, paths::CONNECTIONS, Action::CreateConnection, handlers::create_connection),
        Entry::new(Method::POST, paths::CONNECTION_ROTATE, Action::RotateConnection, handlers::rotate_connection),
        Entry::new(Method::POST, paths::CONNECTION_DELETE, Action::DeleteConnection, handlers::delete_connection),
        Entry::new(Method::POST, paths::CONNECTION_TEST, Action::TestConnection, handlers::test_connection),
        Entry::new(Method::GET, paths::SINK, Action::ShowSubscriptions, handlers::show),
        Entry::new(Method::POST, paths::SINK_UPDATE, Action::UpdateSink, handlers::update_sink),
        Entry::new(Method::POST, paths::SINK_DELETE, Action::DeleteSink, handlers::delete_sink),
        Entry::new(Method::POST, paths::SINK_TEST, Action::TestSink, handlers::test_sink),
        Entry::new(Method::POST, paths::SUBSCRIPTIONS, Action::SetSubscriptions, handlers::save_subscriptions),
    ]
}
