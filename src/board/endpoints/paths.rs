//! Where the Endpoints pages' links and forms point. One place, so the routes and the
//! markup cannot drift apart.

use crate::domain::ids::EndpointId;

/// The list and the vend form (`GET`); vending (`POST`).
pub const ENDPOINTS: &str = "/endpoints";

/// One endpoint's page.
pub fn endpoint(id: EndpointId) -> String {
    format!("{ENDPOINTS}/{id}")
}

/// The revoke confirmation (`GET`) and the revocation itself (`POST`).
pub fn revoke(id: EndpointId) -> String {
    format!("{ENDPOINTS}/{id}/revoke")
}
