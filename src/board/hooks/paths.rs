//! Where the hook pages' links and forms point. One place, so the routes and the
//! markup cannot drift apart.

use super::super::paths::fill;
use crate::domain::ids::{EndpointId, HookId};

/// The hooks page (`GET`).
pub const HOOKS: &str = "/hooks";

/// Add a hook to an endpoint (route pattern).
pub const CREATE: &str = "/hooks/endpoint/{id}";
/// Rotate a hook's signing secret (route pattern).
pub const ROTATE: &str = "/hooks/{id}/rotate";
/// Switch a hook on (route pattern).
pub const ENABLE: &str = "/hooks/{id}/enable";
/// Switch a hook off (route pattern).
pub const DISABLE: &str = "/hooks/{id}/disable";
/// Delete a hook (route pattern).
pub const DELETE: &str = "/hooks/{id}/delete";

/// Add a hook to `endpoint` (`POST`, fields `csrf_token`, `url`, `queues`).
pub fn create(endpoint: EndpointId) -> String {
    fill(CREATE, endpoint)
}

/// Rotate a hook's signing secret (`POST`).
pub fn rotate(id: HookId) -> String {
    fill(ROTATE, id)
}

/// Switch a hook on (`POST`).
pub fn enable(id: HookId) -> String {
    fill(ENABLE, id)
}

/// Switch a hook off (`POST`).
pub fn disable(id: HookId) -> String {
    fill(DISABLE, id)
}

/// Delete a hook (`POST`, after the page's confirm step).
pub fn delete(id: HookId) -> String {
    fill(DELETE, id)
}

/// The hooks page scrolled to one endpoint's section.
pub fn endpoint_section(endpoint: EndpointId) -> String {
    format!("{HOOKS}#{}", anchor(endpoint))
}

/// The `id` of an endpoint's section on the hooks page.
pub fn anchor(endpoint: EndpointId) -> String {
    format!("ep-{endpoint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_paths_use_the_prefixed_ids() {
        let (ep, id) = (EndpointId::new(), HookId::new());
        assert_eq!(create(ep), format!("/hooks/endpoint/{ep}"));
        assert_eq!(rotate(id), format!("/hooks/{id}/rotate"));
        assert_eq!(delete(id), format!("/hooks/{id}/delete"));
        assert_eq!(endpoint_section(ep), format!("/hooks#ep-{ep}"));
    }
}
