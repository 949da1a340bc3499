//! Where the Webhooks pages' links and forms point. One place, so the routes and the
//! markup cannot drift apart.

use super::super::paths::fill;
use crate::domain::ids::WebhookId;

/// The list and the create form (`GET`); creating (`POST`).
pub const WEBHOOKS: &str = "/webhooks";

/// One webhook's page (route pattern).
pub const WEBHOOK: &str = "/webhooks/{id}";
/// Saving the rules (route pattern).
pub const RULES: &str = "/webhooks/{id}/rules";
/// The dry run (route pattern).
pub const RULES_TEST: &str = "/webhooks/{id}/rules/test";

/// One webhook's page, with its rules.
pub fn webhook(id: WebhookId) -> String {
    fill(WEBHOOK, id)
}

/// Saving the rules (`POST`, fields `rules`, and the sample kept for the page).
pub fn rules(id: WebhookId) -> String {
    fill(RULES, id)
}

/// The dry run (`POST`, fields `rules`, `headers`, `body`): changes nothing.
pub fn rules_test(id: WebhookId) -> String {
    fill(RULES_TEST, id)
}
