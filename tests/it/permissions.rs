//! The permission table, walked over HTTP. Every route the service mounts
//! (`switchboard::http::table()` and `switchboard::board::table()`) is asked by every
//! kind of caller, and each answer is checked against what the route's action's rule
//! (`Action::rule()`) gives that caller: someone without credentials signs in first,
//! the wrong kind of credential is unknown (401), a team member is refused an admin's
//! action (403), someone outside the team cannot tell the resource exists (404), and an
//! allowed request succeeds. A route without a case below fails the test, so no route
//! can be mounted without being walked.
//!
//! One world for the whole walk: team `crew` (an admin and a plain member), an outsider
//! who shares nothing with it, and the team's resources (endpoints, webhooks, notify
//! hooks, todos, dead letters, held deliveries). A request that changes or consumes what
//! it acts on gets a fresh resource of its own, so no answer depends on the order of
//! the walk. Every mismatch is collected and printed as one table before the test fails.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Instant;

use actix_web::cookie::Cookie;
use serde_json::{Value, json};
use switchboard::board::respond::{Notice, Tone};
use switchboard::config::SecretKey;
use switchboard::domain::grants::{DRAIN_FAMILY, Verb};
use switchboard::domain::ids::{EndpointId, HumanId, ScopeId, TodoId};
use switchboard::domain::todo_state::{InterruptState, TeamRole};
use switchboard::service::permissions::{Action, Rule};
use switchboard::service::sessions::SESSION_TTL;
use switchboard::store::todos::{ClaimRequest, Finish, NewTodo};
use switchboard::web::routes::{Entry, Row};

use crate::board::{self, Session};
use crate::harness::{Ep, Owner, TestApp};
use testkit::receiver::{Receiver, Reply};

/// The team every resource lives in.
const TEAM: &str = "crew";
const ADMIN_EMAIL: &str = "admin@example.com";
const MEMBER_EMAIL: &str = "member@example.com";
const OUTSIDER_EMAIL: &str = "outsider@example.com";
/// Signs in through the form (the sign-in route's own credential is a password).
const SIGN_IN_EMAIL: &str = "signs-in@example.com";
const METRICS_TOKEN: &str = "permission-walk-metrics-token-0123456789";
/// A public address (TEST-NET-3) written as a literal: the outbound guard accepts it
/// without a DNS lookup, and nothing is ever delivered to it here (hooked endpoints
/// get no todos).
const HOOK_URL: &str = "https://203.0.113.10/hook";
/// The title of the team's long-lived dead letter.
const DEAD_LETTER_TITLE: &str = "the-crews-dead-letter";

// ---------------------------------------------------------------------------------------
// Callers and what the rule gives them
// ---------------------------------------------------------------------------------------

/// The two surfaces: the JSON API (bearer tokens) and the Board (session cookies, CSRF).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Surface {
    Api,
    Board,
}

/// Every kind of caller. Humans present their `sbo_` token to the API and a session to
/// the Board; endpoints present an `sbk_` token (of an endpoint of team `crew`) to the
/// API only, and act on their own endpoint's todos and hooks (the sibling, on another
/// endpoint's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    Anonymous,
    /// A human who shares no scope with the team.
    Outsider,
    /// A plain member of the team.
    Member,
    /// An admin of the team.
    Admin,
    /// An endpoint of the team not granted the route's verb (for a `Grant` rule: every
    /// other verb; otherwise the drain family).
    EndpointWithout,
    /// An endpoint of the team granted the route's verb (for a `Grant` rule: that verb
    /// alone; otherwise every verb).
    EndpointWith,
    /// Granted like `EndpointWith`, asking about another endpoint of the same team.
    Sibling,
}

impl Caller {
    const ALL: [Caller; 7] = [
        Caller::Anonymous,
        Caller::Outsider,
        Caller::Member,
        Caller::Admin,
        Caller::EndpointWithout,
        Caller::EndpointWith,
        Caller::Sibling,
    ];

    fn is_human(self) -> bool {
        matches!(self, Caller::Outsider | Caller::Member | Caller::Admin)
    }

    fn is_endpoint(self) -> bool {
        matches!(self, Caller::EndpointWithout | Caller::EndpointWith | Caller::Sibling)
    }

    /// Whether what the request is about is within the caller's reach: the team's
    /// resources for a human, its own for an endpoint.
    fn reaches(self) -> bool {
        matches!(self, Caller::Member | Caller::Admin | Caller::EndpointWithout | Caller::EndpointWith)
    }
}

impl fmt::Display for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Caller::Anonymous => "anonymous",
            Caller::Outsider => "outsider",
            Caller::Member => "team member",
            Caller::Admin => "team admin",
            Caller::EndpointWithout => "endpoint without verb",
            Caller::EndpointWith => "endpoint with verb",
            Caller::Sibling => "sibling with verb",
        })
    }
}

/// What a caller gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// The request succeeds (one of the case's statuses; on the Board, a redirect
    /// carries no warning).
    Allowed,
    /// API: 401 `unauthenticated`.
    Unauthenticated,
    /// Board: 303 to the sign-in form (with `next` for a GET).
    SignInFirst,
    /// 403 (`forbidden` on the API).
    Forbidden,
    /// 404 (`not_found` on the API).
    NotFound,
    /// 422 "no such owner that you administer" (`invalid_argument` on the API).
    NoSuchOwner,
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expect::Allowed => "allowed",
            Expect::Unauthenticated => "401 unauthenticated",
            Expect::SignInFirst => "303 -> /login",
            Expect::Forbidden => "403",
            Expect::NotFound => "404",
            Expect::NoSuchOwner => "422 no such owner",
        })
    }
}

/// What `caller` gets from a route of `surface` performing `action` on `on`, from the
/// action's rule alone. `None`: the surface has no such caller (the Board takes no
/// endpoint tokens).
fn expected(surface: Surface, action: Action, caller: Caller, on: On) -> Option<Expect> {
    if surface == Surface::Board && caller.is_endpoint() {
        return None;
    }
    let rule = action.rule();
    if rule == Rule::Open {
        return Some(Expect::Allowed);
    }
    if caller == Caller::Anonymous {
        return Some(match surface {
            Surface::Api => Expect::Unauthenticated,
            Surface::Board => Expect::SignInFirst,
        });
    }
    let for_humans = matches!(rule, Rule::Human | Rule::Member | Rule::Admin);
    if for_humans != caller.is_human() {
        // An `sbk_` token is no operator token and an `sbo_` token no endpoint token:
        // the bearer's prefix does not match, so the route does not know the caller.
        return Some(Expect::Unauthenticated);
    }
    Some(match rule {
        // An endpoint reaches its own resources only: another's reads like none at all.
        Rule::Grant(_) | Rule::Endpoint if caller == Caller::Sibling && on.names_own() => Expect::NotFound,
        Rule::Open | Rule::Human | Rule::Endpoint => Expect::Allowed,
        // A member rule on nothing in particular (a listing, a search) lets every
        // human act on their own scopes; the probes check that it reaches no further.
        Rule::Member if caller == Caller::Outsider && on.in_team() => Expect::NotFound,
        Rule::Member => Expect::Allowed,
        Rule::Admin if caller == Caller::Admin || !on.in_team() => Expect::Allowed,
        // Creating anything for a team one does not administer reads exactly like
        // creating for an owner that does not exist (the answer tells nobody who is in
        // which team).
        Rule::Admin if on == On::TeamOwner => Expect::NoSuchOwner,
        Rule::Admin if caller == Caller::Member => Expect::Forbidden,
        Rule::Admin => Expect::NotFound,
        Rule::Grant(_) if matches!(caller, Caller::EndpointWith | Caller::Sibling) => Expect::Allowed,
        Rule::Grant(_) => Expect::Forbidden,
    })
}

/// The grants of the endpoint `caller` acts as (or whose resources a human's request
/// names) on a route obeying `rule`.
fn grants(caller: Caller, rule: Rule) -> Vec<Verb> {
    match (rule, caller) {
        (_, c) if !c.is_endpoint() => Verb::ALL.to_vec(),
        (Rule::Grant(verb), Caller::EndpointWith | Caller::Sibling) => vec![verb],
        (Rule::Grant(verb), _) => Verb::ALL.iter().copied().filter(|v| *v != verb).collect(),
        (_, Caller::EndpointWithout) => DRAIN_FAMILY.to_vec(),
        _ => Verb::ALL.to_vec(),
    }
}

// ---------------------------------------------------------------------------------------
// The cases: for every route, what its request acts on and sends
// ---------------------------------------------------------------------------------------

/// Where a todo is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Pending,
    Claimed,
    Interrupted,
    /// Failed at its cap: a dead letter.
    Dead,
}

/// A listed resource of the team: a listing names it to the team's humans only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listed {
    Endpoint,
    Webhook,
    Held,
    /// Searched for by its id (`q=`).
    DeadLetter,
    Connection,
    Sink,
    Digest,
}

/// What a request acts on: where its path's `{…}` segment, its body's values and its
/// route's own credential come from. `Fresh…` resources are made anew for every caller.
/// `Own…` resources belong to the endpoint the caller presents (the sibling's request
/// is about another endpoint of the team; a human's, about some endpoint of the team).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum On {
    /// Nothing in particular.
    Nothing,
    /// Nothing; the metrics token is the route's credential.
    MetricsToken,
    /// The team's webhook, by its ingest token (the route's credential).
    IngestToken,
    /// The Board's stylesheet.
    Stylesheet,
    /// The sign-in form: its double-submit token and a password.
    SignInForm,
    /// A session of the caller's own, for this request alone (signing out ends it).
    FreshSession,
    /// A todo of the caller's own endpoint (agents act on their own queues only).
    OwnTodo(Stage),
    /// A todo of the caller's own endpoint named in the body (`{todo}`), as a batch names
    /// its todos: another endpoint's todo is answered per item (`not_found`), never moved.
    OwnTodoInBody(Stage),
    /// A pending todo of the caller's own endpoint, not named: a listing or a claim
    /// must find it for the endpoint itself only.
    OwnQueue,
    /// A notify hook of the caller's own endpoint.
    OwnHook,
    /// A notify hook of the caller's own endpoint, not named: the listing must show it
    /// to the endpoint itself only.
    OwnHooks,
    /// The team, named as the owner in the body.
    TeamOwner,
    TeamEndpoint,
    FreshTeamEndpoint,
    /// A fresh endpoint of the team with a fan-out grant to the member.
    GrantedTeamEndpoint,
    FreshTeamHook,
    TeamTodo,
    FreshTeamTodo(Stage),
    TeamWebhook,
    FreshTeamWebhook,
    TeamHeld,
    FreshTeamHeld,
    /// A connection of the team's, made for this request alone.
    FreshTeamConnection,
    /// The team's cairn connection (its Cairn is the team's receiver).
    TeamCairnConnection,
    /// The team's sink.
    TeamSink,
    /// A sink of the team's, made for this request alone.
    FreshTeamSink,
    /// The team's digest (its body may name the team's sink as `{sink}`).
    TeamDigest,
    /// A digest of the team's, made for this request alone (the one made for the
    /// previous request is deleted first: a scope holds at most 5).
    FreshTeamDigest,
    /// The team's sink, by name (an endpoint of the team reaches its owner's sinks).
    TeamSinkName,
    /// A sink of the team's, made for this request alone, by name.
    FreshTeamSinkName,
    /// A name no sink of the team has yet, with the team's connection in the body.
    NewTeamSinkName,
    /// The team's sinks, listed to an endpoint of the team: the listing names the
    /// team's sink and never the outsider's.
    ScopeSinks,
    /// A listing, which must name the team's resource to the team's humans only.
    Listing(Listed),
    /// A search for dead letters matched by a fresh one of the team's and one of the
    /// caller's own; only the team's humans may move the team's.
    DeadLetterSearch,
}

impl On {
    /// Whether the request names (by id) a resource of the caller's own endpoint.
    fn names_own(self) -> bool {
        matches!(self, On::OwnTodo(_) | On::OwnHook)
    }

    /// Whether the request names a resource of the team (by id, or as the owner).
    fn in_team(self) -> bool {
        use On::*;
        matches!(
            self,
            TeamOwner
                | TeamEndpoint
                | FreshTeamEndpoint
                | GrantedTeamEndpoint
                | FreshTeamHook
                | TeamTodo
                | FreshTeamTodo(_)
                | TeamWebhook
                | FreshTeamWebhook
                | TeamHeld
                | FreshTeamHeld
                | FreshTeamConnection
                | TeamCairnConnection
                | TeamSink
                | FreshTeamSink
                | TeamDigest
                | FreshTeamDigest
        )
    }
}

/// A request body; `{name}` placeholders are filled from what the case made.
#[derive(Debug, Clone, Copy)]
enum Body {
    Empty,
    Json(&'static str),
    /// Board POSTs also get the caller's CSRF token.
    Form(&'static [(&'static str, &'static str)]),
}

/// How to ask one route, and what an allowed caller gets.
struct Case {
    method: &'static str,
    path: &'static str,
    on: On,
    body: Body,
    /// The statuses of success.
    ok: &'static [u16],
}

const fn case(method: &'static str, path: &'static str, on: On, body: Body, ok: &'static [u16]) -> Case {
    Case { method, path, on, body, ok }
}

fn api_cases() -> Vec<Case> {
    use Body::{Empty, Json};
    use On::*;
    use Stage::*;
    vec![
        case("GET", "/healthz", Nothing, Empty, &[200]),
        case("GET", "/readyz", Nothing, Empty, &[200]),
        case("GET", "/metrics", MetricsToken, Empty, &[200]),
        case("GET", "/api/openapi.json", Nothing, Empty, &[200]),
        case("POST", "/webhooks/w/{ingest_token}", IngestToken, Json(r#"{"hello": "world"}"#), &[202]),
        // The agent API: the caller's own endpoint's queues and hooks.
        case("GET", "/api/v1/agent/todos", OwnQueue, Empty, &[200]),
        case("POST", "/api/v1/agent/todos", Nothing, Json(r#"{"queue": "inbox", "title": "by an agent"}"#), &[201]),
        case("POST", "/api/v1/agent/todos/claim-next", OwnQueue, Json("{}"), &[200]),
        // The batch verbs: the single verb's grant; the todos are named in the body.
        case(
            "POST",
            "/api/v1/agent/todos/complete",
            OwnTodoInBody(Claimed),
            Json(r#"{"items": [{"id": "{todo}", "summary": "done"}]}"#),
            &[200],
        ),
        case(
            "POST",
            "/api/v1/agent/todos/fail",
            OwnTodoInBody(Claimed),
            Json(r#"{"items": [{"id": "{todo}"}]}"#),
            &[200],
        ),
        case(
            "POST",
            "/api/v1/agent/todos/batch",
            Nothing,
            Json(r#"{"items": [{"queue": "inbox", "title": "by an agent"}]}"#),
            &[200],
        ),
        case("GET", "/api/v1/agent/todos/{id}", OwnTodo(Pending), Empty, &[200]),
        case("POST", "/api/v1/agent/todos/{id}/claim", OwnTodo(Pending), Json("{}"), &[200]),
        case("POST", "/api/v1/agent/todos/{id}/heartbeat", OwnTodo(Claimed), Json("{}"), &[200]),
        case("POST", "/api/v1/agent/todos/{id}/complete", OwnTodo(Claimed), Json(r#"{"summary": "done"}"#), &[200]),
        case("POST", "/api/v1/agent/todos/{id}/fail", OwnTodo(Claimed), Json(r#"{"summary": "no luck"}"#), &[200]),
        case("POST", "/api/v1/agent/todos/{id}/release", OwnTodo(Claimed), Json("{}"), &[200]),
        case(
            "POST",
            "/api/v1/agent/todos/{id}/interrupt",
            OwnTodo(Claimed),
            Json(r#"{"state": "input_required"}"#),
            &[200],
        ),
        case("POST", "/api/v1/agent/todos/{id}/resume", OwnTodo(Interrupted), Json("{}"), &[200]),
        case("POST", "/api/v1/agent/presence/clock-in", Nothing, Empty, &[200]),
        case("POST", "/api/v1/agent/presence/clock-out", Nothing, Empty, &[200]),
        case("POST", "/api/v1/agent/hooks", Nothing, Json(r#"{"url": "https://203.0.113.10/agent"}"#), &[201]),
        case("GET", "/api/v1/agent/hooks", OwnHooks, Empty, &[200]),
        case("POST", "/api/v1/agent/hooks/{id}/rotate", OwnHook, Empty, &[200]),
        case("DELETE", "/api/v1/agent/hooks/{id}", OwnHook, Empty, &[200]),
        // The agent's notifications verbs: its owner's (the team's) sinks, by name; a
        // sibling endpoint of the team reaches them as well.
        case("GET", "/api/v1/agent/sinks", ScopeSinks, Empty, &[200]),
        case(
            "PUT",
            "/api/v1/agent/sinks/{name}",
            NewTeamSinkName,
            Json(r#"{"kind": "gotify", "connection_id": "{connection}"}"#),
            &[201],
        ),
        case("DELETE", "/api/v1/agent/sinks/{name}", FreshTeamSinkName, Empty, &[204]),
        case("POST", "/api/v1/agent/sinks/{name}/test", FreshTeamSinkName, Empty, &[200]),
        case(
            "PUT",
            "/api/v1/agent/sinks/{name}/subscriptions",
            TeamSinkName,
            Json(r#"{"subscriptions": [{"events": ["agent.notify"]}]}"#),
            &[200],
        ),
        case("POST", "/api/v1/agent/notify-owner", Nothing, Json(r#"{"title": "walked the table"}"#), &[202]),
        // The operator API: the team's resources.
        case("POST", "/api/v1/endpoints", TeamOwner, Json(r#"{"slug": "{slug}", "owner": "team:crew"}"#), &[201]),
        case("GET", "/api/v1/endpoints", Listing(Listed::Endpoint), Empty, &[200]),
        case("POST", "/api/v1/endpoints/{id}/revoke", FreshTeamEndpoint, Empty, &[200]),
        case(
            "POST",
            "/api/v1/endpoints/{id}/fanout-grants",
            FreshTeamEndpoint,
            Json(r#"{"owner": "{grantee}"}"#),
            &[204],
        ),
        case(
            "DELETE",
            "/api/v1/endpoints/{id}/fanout-grants",
            GrantedTeamEndpoint,
            Json(r#"{"owner": "{grantee}"}"#),
            &[204],
        ),
        case(
            "POST",
            "/api/v1/endpoints/{id}/hooks",
            FreshTeamEndpoint,
            Json(r#"{"url": "https://203.0.113.10/op"}"#),
            &[201],
        ),
        case("GET", "/api/v1/endpoints/{id}/hooks", TeamEndpoint, Empty, &[200]),
        case(
            "PUT",
            "/api/v1/endpoints/{id}/queues/{queue}/admission",
            FreshTeamEndpoint,
            Json(r#"{"paused": true}"#),
            &[200],
        ),
        case("GET", "/api/v1/endpoints/{id}/admission", TeamEndpoint, Empty, &[200]),
        case("POST", "/api/v1/hooks/{id}/rotate", FreshTeamHook, Empty, &[200]),
        case("POST", "/api/v1/hooks/{id}/enable", FreshTeamHook, Empty, &[200]),
        case("POST", "/api/v1/hooks/{id}/disable", FreshTeamHook, Empty, &[200]),
        case("DELETE", "/api/v1/hooks/{id}", FreshTeamHook, Empty, &[200]),
        case("GET", "/api/v1/todos/{id}", TeamTodo, Empty, &[200]),
        case("POST", "/api/v1/todos/{id}/fail", FreshTeamTodo(Pending), Json(r#"{"summary": "stop"}"#), &[200]),
        case("POST", "/api/v1/todos/{id}/retry", FreshTeamTodo(Dead), Empty, &[200]),
        case("GET", "/api/v1/dead-letters", Listing(Listed::DeadLetter), Empty, &[200]),
        // The Queues overview names each queue's endpoint by id (in the API's rows and
        // the Board's links).
        case("GET", "/api/v1/queues", Listing(Listed::Endpoint), Empty, &[200]),
        case(
            "POST",
            "/api/v1/webhooks",
            FreshTeamEndpoint,
            Json(r#"{"endpoint_id": "{endpoint}", "source_type": "generic", "queue": "inbox"}"#),
            &[201],
        ),
        case("GET", "/api/v1/webhooks", Listing(Listed::Webhook), Empty, &[200]),
        case("GET", "/api/v1/quarantine", Listing(Listed::Held), Empty, &[200]),
        case("PUT", "/api/v1/webhooks/{id}/rules", FreshTeamWebhook, Json(r#"{"rules": []}"#), &[200]),
        case("POST", "/api/v1/webhooks/{id}/rules/test", TeamWebhook, Json(r#"{"body": {"a": 1}}"#), &[200]),
        case("POST", "/api/v1/quarantine/{id}/release", FreshTeamHeld, Json(r#"{"queue": "inbox"}"#), &[200]),
        case("POST", "/api/v1/quarantine/{id}/discard", FreshTeamHeld, Empty, &[204]),
        // The connection vault and sinks: the team's.
        case(
            "POST",
            "/api/v1/connections",
            TeamOwner,
            Json(
                r#"{"name": "{slug}", "kind": "gotify", "secret": "token-{slug}", "base_url": "https://203.0.113.10", "owner": "team:crew"}"#,
            ),
            &[201],
        ),
        case("GET", "/api/v1/connections", Listing(Listed::Connection), Empty, &[200]),
        case("POST", "/api/v1/connections/{id}/rotate", FreshTeamConnection, Json(r#"{"secret": "rotated"}"#), &[200]),
        case("POST", "/api/v1/connections/{id}/test", TeamCairnConnection, Empty, &[200]),
        case("DELETE", "/api/v1/connections/{id}", FreshTeamConnection, Empty, &[204]),
        case(
            "POST",
            "/api/v1/sinks",
            TeamOwner,
            Json(r#"{"name": "{slug}", "kind": "gotify", "connection_id": "{connection}", "owner": "team:crew"}"#),
            &[201],
        ),
        case("GET", "/api/v1/sinks", Listing(Listed::Sink), Empty, &[200]),
        case("PATCH", "/api/v1/sinks/{id}", TeamSink, Json(r#"{"enabled": true}"#), &[200]),
        case("DELETE", "/api/v1/sinks/{id}", FreshTeamSink, Empty, &[204]),
        case("POST", "/api/v1/sinks/{id}/test", TeamSink, Empty, &[200]),
        case(
            "PUT",
            "/api/v1/sinks/{id}/subscriptions",
            TeamSink,
            Json(r#"{"subscriptions": [{"events": ["todo.dead_lettered"]}]}"#),
            &[200],
        ),
        case("GET", "/api/v1/sinks/{id}/subscriptions", TeamSink, Empty, &[200]),
        case("GET", "/api/v1/sinks/{id}/deliveries", TeamSink, Empty, &[200]),
        // Digests: the team's.
        case(
            "POST",
            "/api/v1/digests",
            TeamOwner,
            Json(r#"{"name": "{slug}", "schedule": "Mon 09:00", "sink_ids": ["{sink}"], "owner": "team:crew"}"#),
            &[201],
        ),
        case("GET", "/api/v1/digests", Listing(Listed::Digest), Empty, &[200]),
        case("GET", "/api/v1/digests/{id}", TeamDigest, Empty, &[200]),
        case(
            "PUT",
            "/api/v1/digests/{id}",
            TeamDigest,
            Json(r#"{"name": "the team's digest", "schedule": "TZ=Europe/Berlin Tue 10:00", "sink_ids": ["{sink}"]}"#),
            &[200],
        ),
        case("DELETE", "/api/v1/digests/{id}", FreshTeamDigest, Empty, &[204]),
        case("POST", "/api/v1/digests/{id}/preview", TeamDigest, Empty, &[200]),
    ]
}

fn board_cases() -> Vec<Case> {
    use Body::{Empty, Form};
    use On::*;
    use Stage::*;
    vec![
        case("GET", "/", Nothing, Empty, &[303]),
        // Signed in, the form sends the human on to the Board.
        case("GET", "/login", Nothing, Empty, &[200, 303]),
        case("POST", "/login", SignInForm, Form(&[("email", "{email}"), ("password", "{password}")]), &[303]),
        case("POST", "/logout", FreshSession, Empty, &[303]),
        case("GET", "/static/{file}", Stylesheet, Empty, &[200]),
        case("GET", "/todos", Listing(Listed::DeadLetter), Empty, &[200]),
        case(
            "POST",
            "/todos/dead/retry",
            DeadLetterSearch,
            Form(&[("q", "{marker}"), ("confirm", "yes"), ("died_by", "{now}")]),
            &[303],
        ),
        case("GET", "/todos/{id}", TeamTodo, Empty, &[200]),
        case("POST", "/todos/{id}/retry", FreshTeamTodo(Dead), Empty, &[303]),
        case(
            "POST",
            "/todos/queues/admission",
            FreshTeamEndpoint,
            Form(&[("endpoint_id", "{endpoint}"), ("queue", "inbox"), ("paused", "true")]),
            &[303],
        ),
        case("GET", "/queues", Listing(Listed::Endpoint), Empty, &[200]),
        case("GET", "/queues/{endpoint_id}/{queue}", TeamEndpoint, Empty, &[200]),
        case(
            "POST",
            "/queues/admission",
            FreshTeamEndpoint,
            Form(&[("endpoint_id", "{endpoint}"), ("queue", "inbox"), ("paused", "true")]),
            &[303],
        ),
        case("GET", "/endpoints", Listing(Listed::Endpoint), Empty, &[200]),
        case("POST", "/endpoints", TeamOwner, Form(&[("slug", "{slug}"), ("owner", "team:crew")]), &[200]),
        case("GET", "/endpoints/{id}", TeamEndpoint, Empty, &[200]),
        case("GET", "/endpoints/{id}/revoke", TeamEndpoint, Empty, &[200]),
        case("POST", "/endpoints/{id}/revoke", FreshTeamEndpoint, Empty, &[303]),
        case("GET", "/webhooks", Listing(Listed::Webhook), Empty, &[200]),
        case(
            "POST",
            "/webhooks",
            FreshTeamEndpoint,
            Form(&[("endpoint_id", "{endpoint}"), ("source_type", "generic"), ("queue", "inbox")]),
            &[200],
        ),
        case("GET", "/webhooks/{id}", TeamWebhook, Empty, &[200]),
        case("POST", "/webhooks/{id}/rules", FreshTeamWebhook, Form(&[("rules", r#"{"rules": []}"#)]), &[303]),
        case("POST", "/webhooks/{id}/rules/test", TeamWebhook, Form(&[("body", r#"{"a": 1}"#)]), &[200]),
        case("GET", "/hooks", Listing(Listed::Endpoint), Empty, &[200]),
        case("POST", "/hooks/endpoint/{id}", FreshTeamEndpoint, Form(&[("url", "https://203.0.113.10/board")]), &[200]),
        case("POST", "/hooks/{id}/rotate", FreshTeamHook, Empty, &[200]),
        case("POST", "/hooks/{id}/enable", FreshTeamHook, Empty, &[303]),
        case("POST", "/hooks/{id}/disable", FreshTeamHook, Empty, &[303]),
        case("POST", "/hooks/{id}/delete", FreshTeamHook, Empty, &[303]),
        case("GET", "/quarantine", Listing(Listed::Held), Empty, &[200]),
        case("GET", "/quarantine/{id}", TeamHeld, Empty, &[200]),
        case("POST", "/quarantine/{id}/release", FreshTeamHeld, Form(&[("queue", "inbox")]), &[303]),
        case("POST", "/quarantine/{id}/discard", FreshTeamHeld, Empty, &[303]),
        // The Sinks page: the team's connections and sinks.
        case("GET", "/sinks", Listing(Listed::Sink), Empty, &[200]),
        case(
            "POST",
            "/sinks/connections",
            TeamOwner,
            Form(&[
                ("name", "{slug}"),
                ("kind", "gotify"),
                ("secret", "token-{slug}"),
                ("base_url", "https://203.0.113.10"),
                ("owner", "team:crew"),
            ]),
            &[303],
        ),
        case("POST", "/sinks/connections/{id}/rotate", FreshTeamConnection, Form(&[("secret", "rotated")]), &[303]),
        case("POST", "/sinks/connections/{id}/delete", FreshTeamConnection, Empty, &[303]),
        case("POST", "/sinks/connections/{id}/test", TeamCairnConnection, Empty, &[303]),
        case(
            "POST",
            "/sinks",
            TeamOwner,
            Form(&[("name", "{slug}"), ("kind", "gotify"), ("connection_id", "{connection}"), ("owner", "team:crew")]),
            &[303],
        ),
        case("GET", "/sinks/{id}", TeamSink, Empty, &[200]),
        case("POST", "/sinks/{id}/update", TeamSink, Form(&[("enabled", "true")]), &[303]),
        case("POST", "/sinks/{id}/delete", FreshTeamSink, Empty, &[303]),
        case("POST", "/sinks/{id}/test", FreshTeamSink, Empty, &[303]),
        case(
            "POST",
            "/sinks/{id}/subscriptions",
            TeamSink,
            Form(&[("subscriptions", r#"{"subscriptions": [{"events": ["todo.dead_lettered"]}]}"#)]),
            &[303],
        ),
        // The Digests page: the team's digests.
        case("GET", "/digests", Listing(Listed::Digest), Empty, &[200]),
        case(
            "POST",
            "/digests",
            TeamOwner,
            Form(&[("name", "{slug}"), ("schedule", "Mon 09:00"), ("sink_ids", "{sink}"), ("owner", "team:crew")]),
            &[303],
        ),
        case("GET", "/digests/{id}", TeamDigest, Empty, &[200]),
        case(
            "POST",
            "/digests/{id}/update",
            TeamDigest,
            Form(&[
                ("name", "the team's digest"),
                ("schedule", "TZ=Europe/Berlin Tue 10:00"),
                ("sink_ids", "{sink}"),
                ("skip_when_quiet", "on"),
            ]),
            &[303],
        ),
        case("POST", "/digests/{id}/delete", FreshTeamDigest, Empty, &[303]),
        case("GET", "/digests/{id}/preview", TeamDigest, Empty, &[200]),
    ]
}

// ---------------------------------------------------------------------------------------
// The world
// ---------------------------------------------------------------------------------------

/// A human: an operator token, a Board session, and an endpoint in their personal scope.
struct Person {
    owner: Owner,
    session: Session,
    personal: Ep,
}

/// The app, the three humans, and the team's long-lived resources.
struct World {
    app: TestApp,
    admin: Person,
    member: Person,
    outsider: Person,
    team: ScopeId,
    /// The team's endpoint every long-lived resource hangs on.
    worker: Ep,
    webhook: String,
    ingest_token: String,
    /// The ingest path of a webhook whose rules hold every delivery.
    holding: String,
    todo: TodoId,
    dead: TodoId,
    held: TodoId,
    /// The team's gotify connection and the sink that posts with it (its id and name).
    connection: String,
    /// The team's cairn connection.
    cairn: String,
    sink: String,
    /// The team's digest, and the last fresh one made (deleted before the next).
    digest: String,
    fresh_digest: std::cell::RefCell<Option<String>>,
    sink_name: String,
    /// The name of a sink of the outsider's, which no listing of the team's may show.
    outsider_sink: String,
    /// Where the team's sinks post.
    receiver: Receiver,
    seq: Cell<u32>,
}

/// What one request needs, made for one caller.
#[derive(Default)]
struct Made {
    /// The path's `{…}` segment.
    segment: Option<String>,
    query: Option<String>,
    /// The body's `{name}` placeholders.
    vars: Vec<(&'static str, String)>,
    probe: Option<Probe>,
    /// The endpoint an endpoint caller presents (its resources are its own).
    own: Option<Ep>,
    /// The route's own credential, sent instead of the caller's token.
    bearer: Option<String>,
    /// A session for this request alone, instead of the caller's.
    session: Option<Session>,
    /// The sign-in form's double-submit cookie and token.
    login: Option<(String, String)>,
}

/// What an allowed answer must show: whoever reaches the resource (the team's humans,
/// the endpoint that owns it) sees or moves it, nobody else does.
#[derive(Debug)]
enum Probe {
    /// The answer names this.
    Names(String),
    /// The dead letter is back in its queue.
    Revives(TodoId),
    /// The claimed todo is claimed no longer (a batch finished it).
    Moves(TodoId),
    /// The answer names the first and never the second (a listing of an owner scope's
    /// resources, which every endpoint of the scope reaches).
    NamesOnly(String, String),
}

impl World {
    async fn new() -> World {
        let app = TestApp::spawn_with(|s| {
            s.secret_encryption_key = Some(SecretKey([5; 32]));
            s.metrics_token = Some(METRICS_TOKEN.into());
            // Every caller gets a fresh sink of the team's: more than the default cap.
            s.sink_max = 1000;
            // The team's sinks post to a receiver on loopback (a test send reaches it).
            s.push_allow_http = true;
            s.notify_hook_allow_cidrs = switchboard::config::CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
        })
        .await;
        let admin = person(&app, ADMIN_EMAIL).await;
        let member = person(&app, MEMBER_EMAIL).await;
        let outsider = person(&app, OUTSIDER_EMAIL).await;
        board::human(&app, SIGN_IN_EMAIL, "Signs In").await;
        let (team_id, _, team) = app.store.create_team(TEAM, ADMIN_EMAIL).await.unwrap();
        app.store.add_team_member(team_id, member.owner.id, TeamRole::Member).await.unwrap();
        let worker = app.agent(team, "crew-worker").await;
        let mut w = World {
            app,
            admin,
            member,
            outsider,
            team,
            worker,
            webhook: String::new(),
            ingest_token: String::new(),
            holding: String::new(),
            todo: TodoId::new(),
            dead: TodoId::new(),
            held: TodoId::new(),
            connection: String::new(),
            cairn: String::new(),
            sink: String::new(),
            digest: String::new(),
            fresh_digest: std::cell::RefCell::new(None),
            sink_name: String::new(),
            outsider_sink: String::new(),
            receiver: Receiver::scripted(vec![], Reply::Status(200)).await,
            seq: Cell::new(0),
        };
        let (webhook, ingest_token) = w.webhook().await;
        let (holding, holding_token) = w.webhook().await;
        let rules = json!({"rules": [{"id": "hold-all", "match": {"pointer": "", "exists": true}, "action": {"quarantine": true}}]});
        w.admin_call("PUT", &format!("/api/v1/webhooks/{holding}/rules"), rules).await;
        w.webhook = webhook;
        w.ingest_token = ingest_token;
        w.holding = format!("/webhooks/w/{holding_token}");
        w.todo = w.todo_on(w.worker.id, Stage::Pending, "the team's todo").await;
        w.dead = w.todo_on(w.worker.id, Stage::Dead, DEAD_LETTER_TITLE).await;
        w.held = w.held().await;
        w.connection = w.connection().await;
        w.cairn = w.cairn_connection().await;
        (w.sink, w.sink_name) = w.named_sink().await;
        w.digest = w.digest("the team's digest").await;
        w.outsider_sink = w.outsider_sink().await;
        // The Queues pages list what the census measured: take one now (the team
        // worker's `inbox` holds the todos above).
        w.app.store.take_queue_census().await.expect("queue census");
        w
    }

    /// A digest of the team's, sent to the team's sink.
    async fn digest(&self, name: &str) -> String {
        let body = json!({"name": name, "schedule": "Mon 09:00", "sink_ids": [self.sink], "owner": "team:crew"});
        let created = self.admin_call("POST", "/api/v1/digests", body).await;
        created["id"].as_str().unwrap().to_owned()
    }

    /// A gotify connection of the team's, bound to the team's receiver (where its sinks post).
    async fn connection(&self) -> String {
        let body = json!({"name": format!("conn-{}", self.next()), "kind": "gotify", "secret": "app-token",
                          "base_url": self.receiver.base(), "owner": "team:crew"});
        let created = self.admin_call("POST", "/api/v1/connections", body).await;
        created["id"].as_str().unwrap().to_owned()
    }

    /// A cairn connection of the team's, whose Cairn is the team's receiver.
    async fn cairn_connection(&self) -> String {
        let body = json!({"name": "crew-cairn", "kind": "cairn", "secret": "cairn_pat_crew",
                          "base_url": self.receiver.base(), "owner": "team:crew"});
        let created = self.admin_call("POST", "/api/v1/connections", body).await;
        created["id"].as_str().unwrap().to_owned()
    }

    /// A gotify sink of the team's, posting with the team's connection.
    async fn sink(&self) -> String {
        self.named_sink().await.0
    }

    /// A gotify sink of the team's, posting with the team's connection: its id and name.
    async fn named_sink(&self) -> (String, String) {
        let name = format!("sink-{}", self.next());
        let body = json!({"name": name, "kind": "gotify", "base_url": self.receiver.base(),
                          "connection_id": self.connection, "owner": "team:crew"});
        let created = self.admin_call("POST", "/api/v1/sinks", body).await;
        (created["id"].as_str().unwrap().to_owned(), name)
    }

    /// A gotify sink of the outsider's own: its name.
    async fn outsider_sink(&self) -> String {
        let token = Some(self.outsider.owner.token.as_str());
        let body = json!({"name": "outsiders-conn", "kind": "gotify", "secret": "outsiders-token",
                          "base_url": self.receiver.base()});
        let (s, conn) = self.app.call("POST", "/api/v1/connections", token, Some(&body)).await;
        assert_eq!(s, 201, "{conn}");
        let name = "outsiders-sink-marker".to_owned();
        let body =
            json!({"name": name, "kind": "gotify", "base_url": self.receiver.base(), "connection_id": conn["id"]});
        let (s, sink) = self.app.call("POST", "/api/v1/sinks", token, Some(&body)).await;
        assert_eq!(s, 201, "{sink}");
        name
    }

    fn next(&self) -> u32 {
        self.seq.set(self.seq.get() + 1);
        self.seq.get()
    }

    fn person(&self, caller: Caller) -> Option<&Person> {
        match caller {
            Caller::Outsider => Some(&self.outsider),
            Caller::Member => Some(&self.member),
            Caller::Admin => Some(&self.admin),
            _ => None,
        }
    }

    /// A call of the team's admin (for setting things up), which must succeed.
    async fn admin_call(&self, method: &str, path: &str, body: Value) -> Value {
        let (status, answer) = self.app.call(method, path, Some(&self.admin.owner.token), Some(&body)).await;
        assert!(status.is_success(), "setting up: {method} {path}: {status} {answer}");
        answer
    }

    async fn endpoint(&self, scope: ScopeId, grants: &[Verb]) -> Ep {
        self.app.endpoint(scope, &format!("ep-{}", self.next()), grants).await
    }

    /// A generic webhook on the team's worker: its id and ingest token.
    async fn webhook(&self) -> (String, String) {
        let body = json!({"endpoint_id": self.worker.id.to_string(), "source_type": "generic", "queue": "inbox"});
        let created = self.admin_call("POST", "/api/v1/webhooks", body).await;
        (created["id"].as_str().unwrap().to_owned(), created["ingest_token"].as_str().unwrap().to_owned())
    }

    /// A notify hook on `endpoint` (of the team).
    async fn hook(&self, endpoint: EndpointId) -> String {
        let created =
            self.admin_call("POST", &format!("/api/v1/endpoints/{endpoint}/hooks"), json!({"url": HOOK_URL})).await;
        created["id"].as_str().unwrap().to_owned()
    }

    /// A todo on `endpoint`, brought to `stage` through the store (the endpoint need not
    /// hold the verbs that would take it there).
    async fn todo_on(&self, endpoint: EndpointId, stage: Stage, title: &str) -> TodoId {
        let store = &self.app.store;
        let max_attempts = if stage == Stage::Dead { Some(1) } else { None };
        let new = NewTodo { max_attempts, ..NewTodo::new(endpoint, "inbox", title) };
        let id = store.create_todo(new).await.unwrap().todo.id;
        if stage == Stage::Pending {
            return id;
        }
        store.claim(endpoint, id, ClaimRequest::default()).await.unwrap();
        match stage {
            Stage::Interrupted => {
                store.interrupt(endpoint, id, InterruptState::InputRequired, None, None, None).await.unwrap();
            }
            Stage::Dead => {
                store.fail(endpoint, id, Finish::default()).await.unwrap();
            }
            Stage::Pending | Stage::Claimed => {}
        }
        id
    }

    /// A delivery the holding webhook's rules keep in quarantine.
    async fn held(&self) -> TodoId {
        let body = format!(r#"{{"delivery": {}}}"#, self.next()).into_bytes();
        let (status, answer) = self.app.call_raw("POST", &self.holding, None, "application/json", body).await;
        assert_eq!((status.as_u16(), answer["disposition"].as_str()), (202, Some("quarantined")), "{answer}");
        answer["todos"][0].as_str().unwrap().parse().unwrap()
    }

    /// Everything the request of a case on `on` needs, for `caller` on a route obeying
    /// `rule`.
    async fn make(&self, on: On, caller: Caller, rule: Rule) -> Made {
        let mut made = Made::default();
        if caller.is_endpoint() {
            made.own = Some(self.endpoint(self.team, &grants(caller, rule)).await);
        }
        // The endpoint whose todo or hook the request is about: the caller's own, but
        // another of the team's for the sibling (and for humans, who have none).
        let holder = match &made.own {
            Some(own) if caller != Caller::Sibling => Some(own.id),
            _ if matches!(on, On::OwnTodo(_) | On::OwnTodoInBody(_) | On::OwnQueue | On::OwnHook | On::OwnHooks) => {
                Some(self.endpoint(self.team, Verb::ALL).await.id)
            }
            _ => None,
        };
        let id = |made: &mut Made, id: String| made.segment = Some(id);
        match on {
            On::Nothing => {}
            On::MetricsToken => made.bearer = Some(METRICS_TOKEN.into()),
            On::IngestToken => id(&mut made, self.ingest_token.clone()),
            On::Stylesheet => id(&mut made, "board.css".into()),
            On::SignInForm => {
                made.login = Some(board::login_form(&self.app).await);
                made.vars = vec![("email", SIGN_IN_EMAIL.into()), ("password", board::PASSWORD.into())];
            }
            On::FreshSession => {
                if let Some(p) = self.person(caller) {
                    made.session = Some(session(&self.app, p.owner.id).await);
                }
            }
            On::OwnTodo(stage) => {
                let todo = self.todo_on(holder.unwrap(), stage, "the endpoint's own").await;
                id(&mut made, todo.to_string());
            }
            On::OwnTodoInBody(stage) => {
                let todo = self.todo_on(holder.unwrap(), stage, "the endpoint's own").await;
                made.vars = vec![("todo", todo.to_string())];
                made.probe = Some(Probe::Moves(todo));
            }
            On::OwnQueue => {
                let todo = self.todo_on(holder.unwrap(), Stage::Pending, "the endpoint's own").await;
                made.probe = Some(Probe::Names(todo.to_string()));
            }
            On::OwnHook => {
                // A hook the agent created: only such a hook may an agent change.
                let hook = self.hook(holder.unwrap()).await;
                let row = hook.strip_prefix("nh_").unwrap_or(&hook).to_owned();
                self.app.db.exec(&format!("UPDATE notify_hooks SET created_by_agent = true WHERE id = '{row}'")).await;
                id(&mut made, hook);
            }
            On::OwnHooks => {
                let hook = self.hook(holder.unwrap()).await;
                made.probe = Some(Probe::Names(hook));
            }
            On::TeamOwner => {
                made.vars = vec![
                    ("slug", format!("vended-{}", self.next())),
                    ("connection", self.connection.clone()),
                    ("sink", self.sink.clone()),
                ];
            }
            On::TeamDigest => {
                id(&mut made, self.digest.clone());
                made.vars = vec![("sink", self.sink.clone())];
            }
            On::FreshTeamDigest => {
                let last = self.fresh_digest.borrow_mut().take();
                if let Some(last) = last {
                    let path = format!("/api/v1/digests/{last}");
                    self.app.call("DELETE", &path, Some(&self.admin.owner.token), None).await;
                }
                let digest = self.digest(&format!("fresh-{}", self.next())).await;
                *self.fresh_digest.borrow_mut() = Some(digest.clone());
                id(&mut made, digest);
            }
            On::FreshTeamConnection => {
                let connection = self.connection().await;
                id(&mut made, connection);
            }
            On::TeamCairnConnection => id(&mut made, self.cairn.clone()),
            On::TeamSink => id(&mut made, self.sink.clone()),
            On::TeamSinkName => id(&mut made, self.sink_name.clone()),
            On::FreshTeamSinkName => {
                let (_, name) = self.named_sink().await;
                id(&mut made, name);
            }
            On::NewTeamSinkName => {
                id(&mut made, format!("agents-sink-{}", self.next()));
                made.vars = vec![("connection", self.connection.clone())];
            }
            On::ScopeSinks => made.probe = Some(Probe::NamesOnly(self.sink_name.clone(), self.outsider_sink.clone())),
            On::FreshTeamSink => {
                let sink = self.sink().await;
                id(&mut made, sink);
            }
            On::TeamEndpoint => id(&mut made, self.worker.id.to_string()),
            On::FreshTeamEndpoint | On::GrantedTeamEndpoint => {
                let ep = self.endpoint(self.team, &[]).await.id;
                if on == On::GrantedTeamEndpoint {
                    let path = format!("/api/v1/endpoints/{ep}/fanout-grants");
                    self.admin_call("POST", &path, json!({"owner": MEMBER_EMAIL})).await;
                }
                id(&mut made, ep.to_string());
                made.vars = vec![("endpoint", ep.to_string()), ("grantee", MEMBER_EMAIL.into())];
            }
            On::FreshTeamHook => {
                let ep = self.endpoint(self.team, &[]).await.id;
                let hook = self.hook(ep).await;
                id(&mut made, hook);
            }
            On::TeamTodo => id(&mut made, self.todo.to_string()),
            On::FreshTeamTodo(stage) => {
                let todo = self.todo_on(self.worker.id, stage, "a team todo").await;
                id(&mut made, todo.to_string());
            }
            On::TeamWebhook => id(&mut made, self.webhook.clone()),
            On::FreshTeamWebhook => {
                let (webhook, _) = self.webhook().await;
                id(&mut made, webhook);
            }
            On::TeamHeld => id(&mut made, self.held.to_string()),
            On::FreshTeamHeld => {
                let held = self.held().await;
                id(&mut made, held.to_string());
            }
            On::Listing(listed) => {
                let marker = match listed {
                    Listed::Endpoint => self.worker.id.to_string(),
                    Listed::Webhook => self.webhook.clone(),
                    Listed::Held => self.held.to_string(),
                    Listed::Connection => self.connection.clone(),
                    Listed::Sink => self.sink.clone(),
                    Listed::Digest => self.digest.clone(),
                    Listed::DeadLetter => {
                        // Searched for by id, named by title: the search itself is
                        // shown back to whoever runs it.
                        made.query = Some(format!("q={}", self.dead));
                        DEAD_LETTER_TITLE.to_owned()
                    }
                };
                made.probe = Some(Probe::Names(marker));
            }
            On::DeadLetterSearch => {
                let marker = format!("search-{}", self.next());
                let team_dead = self.todo_on(self.worker.id, Stage::Dead, &marker).await;
                if let Some(p) = self.person(caller) {
                    // Something of their own to retry, so that the search succeeds for
                    // everyone and shows what it reaches.
                    self.todo_on(p.personal.id, Stage::Dead, &marker).await;
                }
                made.vars = vec![("marker", marker), ("now", chrono::Utc::now().to_rfc3339())];
                made.probe = Some(Probe::Revives(team_dead));
            }
        }
        made
    }

    /// Sends the case's request as `caller`; returns the path asked and the answer.
    async fn send(&self, surface: Surface, case: &Case, caller: Caller, made: &Made) -> (String, Got) {
        // A route's second segment, a queue, is always the team's `inbox`.
        let path = fill(case.path, made.segment.as_deref()).replace("{queue}", "inbox");
        let target = match &made.query {
            Some(q) => format!("{path}?{q}"),
            None => path,
        };
        let method = case.method.parse().unwrap();
        let mut req = board::browser().request(method, format!("{}{}", self.app.base, target));
        let mut csrf = None;
        match surface {
            Surface::Api => {
                let token = match caller {
                    Caller::Anonymous => None,
                    c if c.is_endpoint() => made.own.as_ref().map(|ep| ep.token.clone()),
                    c => self.person(c).map(|p| p.owner.token.clone()),
                };
                if let Some(token) = made.bearer.clone().or(token) {
                    req = req.insert_header(("Authorization", format!("Bearer {token}")));
                }
            }
            Surface::Board => {
                let session = made.session.as_ref().or_else(|| self.person(caller).map(|p| &p.session));
                let mut cookies: Vec<&str> = session.iter().map(|s| s.cookie.as_str()).collect();
                csrf = session.map(|s| s.csrf.clone());
                if let Some((cookie, token)) = &made.login {
                    cookies.push(cookie);
                    csrf = Some(token.clone());
                }
                if !cookies.is_empty() {
                    req = req.insert_header(("cookie", cookies.join("; ")));
                }
            }
        }
        let sent = match case.body {
            Body::Json(template) => {
                req.insert_header(("content-type", "application/json")).send_body(subst(template, &made.vars)).await
            }
            Body::Form(_) | Body::Empty if surface == Surface::Board && case.method == "POST" => {
                let fields = if let Body::Form(fields) = case.body { fields } else { &[] };
                let mut form: Vec<(String, String)> =
                    fields.iter().map(|(k, v)| ((*k).to_owned(), subst(v, &made.vars))).collect();
                form.extend(csrf.map(|token| ("csrf_token".to_owned(), token)));
                req.send_form(&form).await
            }
            Body::Form(_) => panic!("{} {}: a form goes to a Board POST", case.method, case.path),
            Body::Empty => req.send().await,
        };
        let mut resp = sent.unwrap_or_else(|e| panic!("{} {target}: {e}", case.method));
        let body = resp.body().limit(16 * 1024 * 1024).await.expect("body");
        let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        let notice = resp
            .headers()
            .get_all("set-cookie")
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| Cookie::parse(v.to_owned()).ok())
            .find(|c| c.name() == "sb_notice")
            .and_then(|c| Notice::decode(c.value()));
        let code =
            serde_json::from_slice::<Value>(&body).ok().and_then(|v| v["error"]["code"].as_str().map(str::to_owned));
        let got = Got {
            status: resp.status().as_u16(),
            location: header("location"),
            notice,
            code,
            content_type: header("content-type"),
            body: String::from_utf8_lossy(&body).into_owned(),
        };
        (target, got)
    }

    /// Whether an allowed answer showed (or moved) the resource exactly when the caller
    /// reaches it.
    async fn probe(&self, probe: &Probe, caller: Caller, got: &Got) -> Result<(), String> {
        let (reached, what) = match probe {
            Probe::Names(marker) => (got.body.contains(marker.as_str()), format!("names {marker}")),
            Probe::NamesOnly(own, foreign) => {
                return match (got.body.contains(own.as_str()), got.body.contains(foreign.as_str())) {
                    (true, false) => Ok(()),
                    (false, _) => Err(format!("the answer never names {own}")),
                    (true, true) => Err(format!("the answer names {foreign}")),
                };
            }
            Probe::Revives(id) => {
                let sql = format!("SELECT count(*) FROM todos WHERE id = '{}' AND state = 'pending'", id.0);
                (self.app.db.count(&sql).await == 1, format!("revives the dead letter {id}"))
            }
            Probe::Moves(id) => {
                let sql = format!("SELECT count(*) FROM todos WHERE id = '{}' AND state <> 'claimed'", id.0);
                (self.app.db.count(&sql).await == 1, format!("finishes the claimed todo {id}"))
            }
        };
        match (reached, caller.reaches()) {
            (true, true) | (false, false) => Ok(()),
            (false, true) => Err(format!("the answer never {what}")),
            (true, false) => Err(format!("the answer {what}")),
        }
    }
}

/// A human with an operator token, a Board session and an endpoint of their own.
async fn person(app: &TestApp, email: &str) -> Person {
    let owner = app.owner(email).await;
    let session = session(app, owner.id).await;
    let slug = format!("personal-{}", email.split('@').next().unwrap_or(email));
    let personal = app.endpoint(owner.scope, &slug, &[]).await;
    Person { owner, session, personal }
}

/// A new Board session for `human` (no password round: the sign-in route is walked on
/// its own), with the CSRF token its pages carry.
async fn session(app: &TestApp, human: HumanId) -> Session {
    let started = app.store.start_board_session(human, SESSION_TTL).await.unwrap();
    let cookie = format!("sb_session={}", started.token);
    let page = board::get(app, "/todos", Some(&cookie)).await;
    assert_eq!(page.status, 200, "a fresh session opens the Board: {}", page.body);
    Session { csrf: page.csrf_field().unwrap(), cookie }
}

/// `pattern` with its one `{…}` segment replaced by `segment`.
fn fill(pattern: &str, segment: Option<&str>) -> String {
    match (pattern.find('{'), pattern.find('}')) {
        (Some(open), Some(close)) => {
            let segment = segment.unwrap_or_else(|| panic!("the case for {pattern} makes nothing for its path"));
            format!("{}{segment}{}", &pattern[..open], &pattern[close + 1..])
        }
        _ => pattern.to_owned(),
    }
}

/// `template` with every `{name}` of `vars` replaced.
fn subst(template: &str, vars: &[(&'static str, String)]) -> String {
    vars.iter().fold(template.to_owned(), |t, (name, value)| t.replace(&format!("{{{name}}}"), value))
}

// ---------------------------------------------------------------------------------------
// Answers and verdicts
// ---------------------------------------------------------------------------------------

/// One answer.
struct Got {
    status: u16,
    location: String,
    /// The notice a Board redirect carries.
    notice: Option<Notice>,
    /// The API's error code.
    code: Option<String>,
    content_type: String,
    body: String,
}

impl fmt::Display for Got {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.status)?;
        if let Some(code) = &self.code {
            write!(f, " {code}")?;
        }
        if (300..400).contains(&self.status) {
            write!(f, " -> {}", self.location)?;
        }
        if let Some(notice) = self.notice.as_ref().filter(|n| n.tone == Tone::Warn) {
            write!(f, " (warning: {})", notice.text.chars().take(80).collect::<String>())?;
        }
        Ok(())
    }
}

/// Where the Board sends someone without a session: back to a GET's page afterwards.
fn sign_in_location(method: &str, target: &str) -> String {
    if method == "GET" {
        format!("/login?next={}", url::form_urlencoded::byte_serialize(target.as_bytes()).collect::<String>())
    } else {
        "/login".to_owned()
    }
}

/// Whether `got` is what `expect` means for this case.
fn verdict(expect: Expect, surface: Surface, case: &Case, target: &str, got: &Got) -> bool {
    // A refusal is the API's JSON envelope with its code, or a page of the Board's.
    let code = |c: &str| match surface {
        Surface::Api => got.code.as_deref() == Some(c),
        Surface::Board => got.content_type.starts_with("text/html"),
    };
    match expect {
        Expect::Allowed => case.ok.contains(&got.status) && got.notice.as_ref().is_none_or(|n| n.tone == Tone::Done),
        Expect::Unauthenticated => got.status == 401 && code("unauthenticated"),
        Expect::SignInFirst => got.status == 303 && got.location == sign_in_location(case.method, target),
        Expect::Forbidden => got.status == 403 && code("forbidden"),
        Expect::NotFound => got.status == 404 && code("not_found"),
        Expect::NoSuchOwner => {
            got.status == 422 && code("invalid_argument") && got.body.contains("no such owner that you administer")
        }
    }
}

/// A mismatch, for the report.
struct Failure {
    route: String,
    caller: String,
    expected: String,
    got: String,
}

fn report(failures: &[Failure]) -> String {
    let width = |f: fn(&Failure) -> &str, title: &str| failures.iter().map(|x| f(x).len()).chain([title.len()]).max();
    let route = width(|f| &f.route, "route").unwrap_or(0);
    let caller = width(|f| &f.caller, "caller").unwrap_or(0);
    let expected = width(|f| &f.expected, "expected").unwrap_or(0);
    let mut out = format!("{:route$}  {:caller$}  {:expected$}  got\n", "route", "caller", "expected");
    for f in failures {
        out.push_str(&format!("{:route$}  {:caller$}  {:expected$}  {}\n", f.route, f.caller, f.expected, f.got));
    }
    out
}

// ---------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn every_route_obeys_the_permission_table_for_every_kind_of_caller() {
    let started = Instant::now();
    let w = World::new().await;
    let mut failures = Vec::new();
    let (mut routes, mut asked) = (0, 0);
    let tables = [
        (Surface::Api, switchboard::http::table(), api_cases()),
        (Surface::Board, switchboard::board::table(), board_cases()),
    ];
    for (surface, table, cases) in tables {
        let rows: Vec<Row> = table.iter().map(Entry::row).collect();
        let mut by_route: BTreeMap<(&str, &str), &Case> = BTreeMap::new();
        for c in &cases {
            assert!(by_route.insert((c.method, c.path), c).is_none(), "two cases for {} {}", c.method, c.path);
        }
        for row in &rows {
            let Some(case) = by_route.remove(&(row.method.as_str(), row.path)) else {
                failures.push(Failure {
                    route: format!("{:?} {} {}", surface, row.method, row.path),
                    caller: "-".into(),
                    expected: "a case".into(),
                    got: format!("route {} {} has no permission case: add one", row.method, row.path),
                });
                continue;
            };
            routes += 1;
            let rule = row.action.rule();
            for caller in Caller::ALL {
                let Some(expect) = expected(surface, row.action, caller, case.on) else { continue };
                asked += 1;
                let made = w.make(case.on, caller, rule).await;
                let (target, got) = w.send(surface, case, caller, &made).await;
                let mut failed = |expected: String, got: String| {
                    failures.push(Failure {
                        route: format!("{:?} {} {} ({:?}: {:?})", surface, row.method, row.path, row.action, rule),
                        caller: caller.to_string(),
                        expected,
                        got,
                    });
                };
                if !verdict(expect, surface, case, &target, &got) {
                    let wanted = if expect == Expect::Allowed { format!("{:?}", case.ok) } else { expect.to_string() };
                    failed(wanted, got.to_string());
                } else if expect == Expect::Allowed
                    && let Some(probe) = &made.probe
                    && let Err(why) = w.probe(probe, caller, &got).await
                {
                    let wanted = if caller.reaches() { "reaches its resource" } else { "reaches nothing of others" };
                    failed(wanted.into(), why);
                }
            }
        }
        for (method, path) in by_route.keys() {
            failures.push(Failure {
                route: format!("{surface:?} {method} {path}"),
                caller: "-".into(),
                expected: "a route".into(),
                got: "the case matches no route of this surface: remove it".into(),
            });
        }
    }
    println!(
        "permission walk: {routes} routes, {asked} requests ({} callers), {} mismatches, {:.1?}",
        Caller::ALL.len(),
        failures.len(),
        started.elapsed()
    );
    assert!(failures.is_empty(), "{} answers disobey the permission table:\n{}", failures.len(), report(&failures));
}

/// Routes of the API that its document does not describe: the document itself.
const UNDOCUMENTED: &[(&str, &str)] = &[("GET", "/api/openapi.json")];

/// The keys of an OpenAPI path item that are operations.
const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch", "trace"];

#[actix_web::test]
async fn the_api_document_describes_exactly_the_routes_the_api_mounts() {
    let app = TestApp::spawn().await;
    let (status, doc) = app.call("GET", "/api/openapi.json", None, None).await;
    assert_eq!(status, 200);
    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            let methods = item.as_object().unwrap().keys().filter(|k| METHODS.contains(&k.as_str()));
            methods.map(|m| (m.to_uppercase(), path.clone()))
        })
        .collect();
    let mounted: BTreeSet<(String, String)> =
        switchboard::http::table().iter().map(|e| (e.method.to_string(), e.path.to_owned())).collect();
    let undocumented: BTreeSet<(String, String)> =
        UNDOCUMENTED.iter().map(|(m, p)| ((*m).to_owned(), (*p).to_owned())).collect();
    let unmounted: Vec<_> = documented.difference(&mounted).collect();
    assert!(unmounted.is_empty(), "the document describes routes the API does not mount: {unmounted:?}");
    let missing: Vec<_> = mounted.difference(&documented).filter(|r| !undocumented.contains(*r)).collect();
    assert!(missing.is_empty(), "the API mounts routes its document does not describe: {missing:?}");
    for route in &undocumented {
        assert!(mounted.contains(route) && !documented.contains(route), "UNDOCUMENTED is stale: {route:?}");
    }
}
