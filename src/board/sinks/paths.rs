//! Where the Sinks pages' links and forms point. One place, so the routes and the
//! markup cannot drift apart.

use super::super::paths::fill;
use crate::domain::ids::{ConnectionId, SinkId};

/// The connections and sinks page (`GET`); adding a sink (`POST`).
pub const SINKS: &str = "/sinks";
/// Storing a connection (`POST`).
pub const CONNECTIONS: &str = "/sinks/connections";
/// Replacing a connection's secret (route pattern).
pub const CONNECTION_ROTATE: &str = "/sinks/connections/{id}/rotate";
/// Deleting a connection (route pattern).
pub const CONNECTION_DELETE: &str = "/sinks/connections/{id}/delete";
/// Testing a cairn connection (route pattern).
pub const CONNECTION_TEST: &str = "/sinks/connections/{id}/test";
/// One sink's page: subscriptions and send log (route pattern).
pub const SINK: &str = "/sinks/{id}";
/// Switching a sink on or off, or changing its budget (route pattern).
pub const SINK_UPDATE: &str = "/sinks/{id}/update";
/// Deleting a sink (route pattern).
pub const SINK_DELETE: &str = "/sinks/{id}/delete";
/// A test send (route pattern).
pub const SINK_TEST: &str = "/sinks/{id}/test";
/// Saving a sink's subscriptions (route pattern).
pub const SUBSCRIPTIONS: &str = "/sinks/{id}/subscriptions";

/// Replace a connection's secret (`POST`, field `secret`).
pub fn connection_rotate(id: ConnectionId) -> String {
    fill(CONNECTION_ROTATE, id)
}

/// Delete a connection (`POST`).
pub fn connection_delete(id: ConnectionId) -> String {
    fill(CONNECTION_DELETE, id)
}

/// Test a cairn connection (`POST`).
pub fn connection_test(id: ConnectionId) -> String {
    fill(CONNECTION_TEST, id)
}

/// One sink's page.
pub fn sink(id: SinkId) -> String {
    fill(SINK, id)
}

/// Change a sink (`POST`, fields `enabled` or `budget_per_hour` and `burst`).
pub fn sink_update(id: SinkId) -> String {
    fill(SINK_UPDATE, id)
}

/// Delete a sink (`POST`).
pub fn sink_delete(id: SinkId) -> String {
    fill(SINK_DELETE, id)
}

/// Send a sink a test message (`POST`).
pub fn sink_test(id: SinkId) -> String {
    fill(SINK_TEST, id)
}

/// Save a sink's subscriptions (`POST`, field `subscriptions`).
pub fn subscriptions(id: SinkId) -> String {
    fill(SUBSCRIPTIONS, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_paths_use_the_prefixed_ids() {
        let (c, s) = (ConnectionId::new(), SinkId::new());
        assert_eq!(connection_rotate(c), format!("/sinks/connections/{c}/rotate"));
        assert_eq!(sink(s), format!("/sinks/{s}"));
        assert_eq!(subscriptions(s), format!("/sinks/{s}/subscriptions"));
    }
}
