//! Where the Endpoints pages' links and forms point. One place, so the routes and the
//! markup cannot drift apart.

use super::super::paths::fill;
use crate::domain::ids::EndpointId;

/// The list and the vend form (`GET`); vending (`POST`).
pub const ENDPOINTS: &str = "/endpoints";

/// One endpoint's page (route pattern).
pub const ENDPOINT: &str = "/endpoints/{id}";
/// The revoke confirmation and the revocation (route pattern).
pub const REVOKE: &str = "/endpoints/{id}/revoke";

/// One endpoint's page.
pub fn endpoint(id: EndpointId) -> String {
    fill(ENDPOINT, id)
}

/// The revoke confirmation (`GET`) and the revocation itself (`POST`).
pub fn revoke(id: EndpointId) -> String {
    fill(REVOKE, id)
}
