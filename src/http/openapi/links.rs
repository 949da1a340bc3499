//! OpenAPI links: which answer carries the id another operation takes, so a client
//! generator (and the stateful conformance run) can follow a todo from its creation
//! through claim, heartbeat and completion (one at a time or in a batch), and a hook or
//! webhook from its creation to its changes, with real ids instead of guessed ones.

use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::{OpenApi, RefOr};

/// `(operation, status, runtime expression of the id, operations taking it as {id})`.
/// A listing links its first item, so seeded data is reached too.
const LINKS: &[(&str, &str, &str, &[&str])] = &[
    (
        "agent_create_todo",
        "201",
        "$response.body#/id",
        &["agent_get_todo", "claim", "operator_get_todo", "operator_fail", "retry"],
    ),
    ("claim_next", "200", "$response.body#/todo/id", CLAIMED),
    ("claim", "200", "$response.body#/todo/id", CLAIMED),
    ("interrupt", "200", "$response.body#/id", &["resume", "heartbeat", "agent_get_todo"]),
    ("agent_create_hook", "201", "$response.body#/id", &["agent_rotate_hook", "agent_delete_hook"]),
    (
        "vend",
        "201",
        "$response.body#/id",
        &["revoke", "create_hook", "list_hooks", "grant_fanout", "revoke_fanout", "set_admission", "list_admission"],
    ),
    ("create_hook", "201", "$response.body#/id", &["rotate_hook", "enable", "disable", "delete_hook"]),
    ("create_webhook", "201", "$response.body#/id", &["put_rules", "test_rules"]),
    ("agent_list_todos", "200", "$response.body#/todos/0/id", &["agent_get_todo", "claim"]),
    ("agent_list_hooks", "200", "$response.body#/hooks/0/id", &["agent_rotate_hook", "agent_delete_hook"]),
    ("list_hooks", "200", "$response.body#/hooks/0/id", &["rotate_hook", "enable", "disable", "delete_hook"]),
    ("list_dead_letters", "200", "$response.body#/dead_letters/0/id", &["operator_get_todo", "retry"]),
    ("list_quarantine", "200", "$response.body#/held/0/id", &["release_held", "discard"]),
    ("create_batch", "200", "$response.body#/results/0/todo/id", &["agent_get_todo", "claim"]),
];

/// `(operation, status, link name, target operation, request body)`: answers whose
/// claim the target's body names, so a batch complete or fail acts on a real claim, with
/// its lease token. Only answers that always hold a claim: a claim by id (claim_next's
/// answer may be empty, or a batch, and a body that cannot be filled is an error to a
/// client that follows the link).
const BODY_LINKS: &[(&str, &str, &str, &str, &str)] = &[
    ("claim", "200", "complete_batch", "complete_batch", ONE_CLAIM),
    ("claim", "200", "fail_batch", "fail_batch", ONE_CLAIM),
];

/// A batch item naming a single claim's todo and lease token.
const ONE_CLAIM: &str =
    r#"{"items": [{"id": "$response.body#/todo/id", "lease_token": "$response.body#/lease_token"}]}"#;

/// What an agent may do with a todo it has just claimed.
const CLAIMED: &[&str] =
    &["heartbeat", "complete", "agent_fail", "agent_release", "interrupt", "agent_get_todo", "operator_get_todo"];

/// Adds [`LINKS`] to the answers they start from.
pub struct IdLinks;

impl utoipa::Modify for IdLinks {
    fn modify(&self, openapi: &mut OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for op in [&mut item.get, &mut item.post, &mut item.put, &mut item.delete].into_iter().flatten() {
                let Some(id) = op.operation_id.clone() else { continue };
                for (from, status, expression, targets) in LINKS.iter().filter(|l| l.0 == id) {
                    let Some(RefOr::T(response)) = op.responses.responses.get_mut(*status) else { continue };
                    for target in targets.iter() {
                        // utoipa 5.5 writes `Link::operation_id` as `operation_id`, a key
                        // OpenAPI does not know, so the link would name no operation; the
                        // flattened extensions map writes `operationId` as given.
                        let named = Extensions::from_iter([("operationId", *target)]);
                        let link = LinkBuilder::new()
                            .extensions(Some(named))
                            .parameter("id", *expression)
                            .description(format!("{from} answers the id {target} takes"))
                            .build();
                        response.links.insert(target.to_string(), RefOr::T(link));
                    }
                }
                for (from, status, name, target, body) in BODY_LINKS.iter().filter(|l| l.0 == id) {
                    let Some(RefOr::T(response)) = op.responses.responses.get_mut(*status) else { continue };
                    let Ok(body) = serde_json::from_str::<serde_json::Value>(body) else { continue };
                    // utoipa writes `Link::request_body` as `request_body`, which OpenAPI
                    // does not know either: `requestBody` goes in the extensions too. The
                    // body is used as given, not merged into a generated one (schemathesis
                    // reads `merge_body` from its own extension).
                    let named = Extensions::from_iter([
                        ("operationId", serde_json::json!(target)),
                        ("requestBody", body),
                        ("x-schemathesis", serde_json::json!({"merge_body": false})),
                    ]);
                    let link = LinkBuilder::new()
                        .extensions(Some(named))
                        .description(format!("{from} answers the claim {target} acts on"))
                        .build();
                    response.links.insert(name.to_string(), RefOr::T(link));
                }
            }
        }
    }
}
