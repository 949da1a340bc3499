//! The agent verbs' answers and bodies, shared by the REST API (`http`) and the MCP
//! tools (`mcp`), so that neither imports the other and a verb cannot
//! behave differently on the two: each verb's `*_answer` function calls the service
//! layer ([`crate::service`]) and builds the one answer both surfaces return, from the
//! request body both read (an MCP tool's input schema is generated from the same
//! type). Also the agent's bearer extractor both authenticate with ([`auth`]).
//!
//! An adapter-level module over `service/`: it decides no rule and checks no
//! permission (the services do), and knows nothing of routes or of the MCP protocol.
//! The operator API answers some of the same shapes (a todo, a hook, a sink); the
//! HTTP routes and their OpenAPI annotations stay in `http`, the tool table in `mcp`;
//! this module imports neither.
//!
//! | module | concern |
//! |---|---|
//! | [`auth`] | the `sbk_…` bearer, resolved to the agent's endpoint |
//! | [`todo_bodies`] | the todo verbs' request bodies |
//! | [`todo_views`] | a todo, its attempts, a claim and create_todo's answers |
//! | [`todos`] | what the todo verbs answer (and `list_todos`' query) |
//! | [`batch_dto`] | the batch verbs' bodies and answers |
//! | [`batches`] | what the batch verbs answer |
//! | [`lean_claims`] | claim-next's lean answer (`?answer=lean`) |
//! | [`presence`] | what clock-in and clock-out answer |
//! | [`hook_dto`] | a notify hook's shapes |
//! | [`hooks`] | what the hook verbs answer |
//! | [`sink_dto`] | a sink's shapes, its subscriptions, a test's answer |
//! | [`sinks`] | what the `notifications` verbs take and answer |
//! | [`owner_page`] | what `notify_owner` (an owner page) takes and answers |

pub mod auth;
pub mod batch_dto;
pub mod batches;
pub mod hook_dto;
pub mod hooks;
pub mod lean_claims;
pub mod owner_page;
pub mod presence;
pub mod sink_dto;
pub mod sinks;
pub mod todo_bodies;
pub mod todo_views;
pub mod todos;
