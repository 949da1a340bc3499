//! Where the Webhooks pages' links and forms point. One place, so the routes and the
//! markup cannot drift apart.

use crate::domain::ids::WebhookId;

/// The list and the create form (`GET`); creating (`POST`).
pub const WEBHOOKS: &str = "/webhooks";

/// One webhook's page, with its rules.
pub fn webhook(id: WebhookId) -> String {
    format!("{WEBHOOKS}/{id}")
}

/// Saving the rules (`POST`, fields `rules`, and the sample kept for the page).
pub fn rules(id: WebhookId) -> String {
    format!("{WEBHOOKS}/{id}/rules")
}

/// The dry run (`POST`, fields `rules`, `headers`, `body`): changes nothing.
pub fn rules_test(id: WebhookId) -> String {
    format!("{WEBHOOKS}/{id}/rules/test")
}
