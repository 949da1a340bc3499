//! OpenAPI links: which answer carries the id another operation takes, so a client
//! generator (and the stateful conformance run) can follow a todo from its creation
//! through claim, heartbeat and completion, and a hook or webhook from its creation to
//! its changes, with real ids instead of guessed ones.

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
];

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
            }
        }
    }
}
