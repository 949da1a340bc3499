//! What the outbox benchmark sets up: owners and their endpoints (through the library's
//! `Store`), Gotify sinks on the bench's receiver (through the server's operator API:
//! a connection holding the receiver's application token, the sink, its subscription
//! to `todo.dead_lettered`, and its budget lifted with `PATCH`), claimed todos with an
//! attempt cap of 1 (written in bulk, in the shape the claim statement leaves), and
//! the dead letters themselves, made by the library's `Store::fail`: the real
//! transaction, whose trigger queues the outbox rows.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use switchboard::domain::grants::Verb;
use switchboard::domain::ids::{EndpointId, ScopeId, SinkId, TodoId};
use switchboard::store::Store;
use switchboard::store::endpoints::VendEndpoint;
use switchboard::store::todos::Finish;
use testkit::receiver::{Receiver, Reply, Track};

use crate::BenchResult;
use crate::database::BenchDb;
use crate::hooks::RECEIVER_WORKERS;
use crate::load::Work;
use crate::server::Server;

/// The budget every sink is given (`PATCH`): the operator bounds' hard ceilings.
pub const BUDGET_PER_HOUR: u32 = 3_600_000;
/// The burst every sink is given: the hard ceiling.
pub const BURST: u32 = 100_000;
/// The queue the dead letters are on.
pub const QUEUE: &str = "deploys";
/// The closing attempt's summary (the message quotes it).
pub const SUMMARY: &str = "deploy failed: exit status 1";

/// The Gotify header carrying the application token.
const TOKEN_HEADER: &str = "X-Gotify-Key";

/// What Gotify answers a post without a valid application token.
const UNAUTHORIZED: &str =
    r#"{"error":"Unauthorized","errorCode":401,"errorDescription":"you need to provide a valid access token"}"#;

/// The Gotify-contract receiver in the bench process (testkit's, on workers of its own
/// as the notify-hook receiver): it answers `POST /message` as a Gotify server does (the
/// application token in `X-Gotify-Key`, a JSON body `{title, message, priority}`, and a
/// 200 holding the stored message object); a wrong or missing token is answered 401 and
/// counted, so is a body without the three fields. Two tokens are admitted: the sinks'
/// (their messages are notifications, each kept by the todo of its Board link
/// `…/todos/{id}`, with how many times it arrived and when first) and the ceiling's
/// (plain POSTs from the bench: parsed and answered the same way, only counted), so that
/// both sides cost the receiver the same.
pub struct Gotify {
    /// The receiver (its arrivals are kept under [`testkit::receiver::GOTIFY_KIND`]).
    pub rx: Receiver,
    /// The application token the sinks' connection holds.
    pub sink_token: String,
    /// The token of the ceiling's plain POSTs.
    pub ceiling_token: String,
}

impl Gotify {
    /// Binds a free loopback port and starts the workers, with fresh tokens.
    pub fn start() -> BenchResult<Gotify> {
        let rx = Receiver::builder()
            .workers(RECEIVER_WORKERS)
            .keep(false)
            .then(Reply::Gotify)
            .refusal(Reply::Json(401, UNAUTHORIZED.into()))
            .start()?;
        let (sink_token, ceiling_token) = (app_token(), app_token());
        rx.admit_header("/message", TOKEN_HEADER, &sink_token, Some(Track::GotifyMessage))?;
        rx.admit_header("/message", TOKEN_HEADER, &ceiling_token, None)?;
        Ok(Gotify { rx, sink_token, ceiling_token })
    }
}

/// A token that looks like a Gotify application token (15 characters).
fn app_token() -> String {
    format!("A{}", &hex::encode(rand::random::<[u8; 8]>())[..14])
}

/// The ceiling's client: plain POSTs of one Gotify body, with the ceiling's token, on
/// its own keep-alive connection.
pub struct Poster {
    client: awc::Client,
    url: String,
    token: String,
    body: actix_web::web::Bytes,
}

impl Poster {
    /// A poster of `body` (a real notification body) to `receiver`.
    pub fn new(receiver: &Gotify, body: &actix_web::web::Bytes) -> Poster {
        Poster {
            client: awc::Client::builder().timeout(Duration::from_secs(30)).finish(),
            url: format!("{}/message", receiver.rx.base()),
            token: receiver.ceiling_token.clone(),
            body: body.clone(),
        }
    }

    /// One POST; anything but a 200 is an error.
    pub async fn post(&self) -> BenchResult<()> {
        let mut resp = self
            .client
            .post(&self.url)
            .insert_header(("content-type", "application/json"))
            .insert_header((TOKEN_HEADER, self.token.as_str()))
            .send_body(self.body.clone())
            .await
            .map_err(|e| format!("plain POST: {e}"))?;
        // Read the answer to the end so the connection can be reused.
        let _ = resp.body().await.map_err(|e| format!("plain POST answer: {e}"))?;
        if resp.status().as_u16() != 200 {
            return Err(format!("the receiver answered a plain POST with {}", resp.status()));
        }
        Ok(())
    }
}

impl Work for Poster {
    fn once(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = BenchResult<()>> + '_>> {
        Box::pin(self.post())
    }
}

/// An owner: their scope and operator token.
#[derive(Debug, Clone)]
pub struct Owner {
    /// The owner scope.
    pub scope: ScopeId,
    /// `sbo_…`, for the operator API.
    pub token: String,
}

/// An endpoint with every verb, and its bearer token.
#[derive(Debug, Clone)]
pub struct Line {
    /// The owner.
    pub owner: Owner,
    /// The endpoint.
    pub endpoint: EndpointId,
    /// `Bearer sbk_…`.
    pub authorization: String,
}

/// A new human owner (`email`) with one endpoint `slug` granted every verb.
pub async fn line(store: &Store, email: &str, slug: &str) -> BenchResult<Line> {
    let human = store.create_human(email, "Outbox bench", None).await.map_err(|e| format!("creating {email}: {e}"))?;
    let owner = Owner { scope: human.scope, token: human.token };
    let vended = store
        .vend_endpoint(VendEndpoint {
            scope: owner.scope,
            slug: slug.into(),
            grants: Verb::ALL.to_vec(),
            default_lease_seconds: None,
            expires_at: None,
        })
        .await
        .map_err(|e| format!("vending {slug}: {e}"))?;
    Ok(Line { owner, endpoint: vended.endpoint.id, authorization: format!("Bearer {}", vended.token) })
}

/// An operator API call with `owner`'s token that must answer `want`; its JSON.
async fn operator(
    server: &Server,
    owner: &Owner,
    method: &str,
    path: &str,
    body: serde_json::Value,
    want: u16,
) -> BenchResult<serde_json::Value> {
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let url = format!("{}{path}", server.base());
    let req = match method {
        "POST" => client.post(&url),
        "PUT" => client.put(&url),
        "PATCH" => client.patch(&url),
        _ => return Err(format!("no operator call {method}")),
    };
    let mut resp = req
        .insert_header(("authorization", format!("Bearer {}", owner.token)))
        .send_json(&body)
        .await
        .map_err(|e| format!("{method} {path}: {e}"))?;
    let answer = resp.body().await.map_err(|e| format!("{method} {path}: {e}"))?;
    if resp.status().as_u16() != want {
        return Err(format!("{method} {path} answered {}: {}", resp.status(), String::from_utf8_lossy(&answer)));
    }
    serde_json::from_slice(&answer).map_err(|e| format!("{method} {path}: {e}"))
}

/// `n` Gotify sinks of `owner` posting to `receiver` (one connection holding its
/// application token), each subscribed to `todo.dead_lettered` (any queue, endpoint
/// and webhook) with its budget lifted to [`BUDGET_PER_HOUR`] and [`BURST`] through
/// `PATCH /api/v1/sinks/{id}`. Returns the sinks' ids as the database has them
/// (uuids).
pub async fn gotify_sinks(
    server: &Server,
    owner: &Owner,
    receiver: &Gotify,
    n: usize,
    name: &str,
) -> BenchResult<Vec<String>> {
    let connection = operator(
        server,
        owner,
        "POST",
        "/api/v1/connections",
        serde_json::json!({ "name": format!("{name}-gotify"), "kind": "gotify", "secret": receiver.sink_token,
                            "base_url": receiver.rx.base() }),
        201,
    )
    .await?;
    let mut ids = Vec::new();
    for i in 0..n {
        let sink = operator(
            server,
            owner,
            "POST",
            "/api/v1/sinks",
            serde_json::json!({ "name": format!("{name}-{i}"), "kind": "gotify", "connection_id": connection["id"] }),
            201,
        )
        .await?;
        let id = sink["id"].as_str().ok_or("the sink came back without an id")?.to_owned();
        let subscriptions = serde_json::json!({ "subscriptions": [{ "events": ["todo.dead_lettered"] }] });
        operator(server, owner, "PUT", &format!("/api/v1/sinks/{id}/subscriptions"), subscriptions, 200).await?;
        let lift = serde_json::json!({ "budget_per_hour": BUDGET_PER_HOUR, "burst": BURST });
        let changed = operator(server, owner, "PATCH", &format!("/api/v1/sinks/{id}"), lift, 200).await?;
        if changed["budget_per_hour"] != BUDGET_PER_HOUR || changed["burst"] != BURST {
            return Err(format!("PATCH did not lift sink {id}'s budget: {changed}"));
        }
        let sink: SinkId = id.parse().map_err(|e| format!("sink id {id}: {e}"))?;
        ids.push(sink.0.to_string());
    }
    Ok(ids)
}

/// Writes `n` todos on `line`'s endpoint (queue [`QUEUE`], attempt cap 1), claimed as
/// the claim statement leaves a claim: `claimed`, the attempt counted and opened in
/// the history, a lease of a day (its token hash random: `fail` is called
/// without a token, as the endpoint's own caller may). Returns their ids.
pub async fn claimed_todos(db: &BenchDb, line: &Line, n: u64, batch: &str) -> BenchResult<Vec<TodoId>> {
    // One statement; a data-modifying CTE cannot update the rows a sibling inserted,
    // so the todos are written claimed and their attempts opened from what was written.
    let sql = format!(
        "WITH claimed AS ( \
           INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, attempt, max_attempts, attempts_total, \
             claimed_by, lease_expires_at, lease_token_hash, claimed_at, created_at, updated_at) \
           SELECT gen_random_uuid(), '{ep}', '{scope}', '{QUEUE}', 'deploy {batch} #' || g, 'claimed', 1, 1, 1, \
             '{ep}', now() + interval '1 day', decode(md5(random()::text) || md5(random()::text), 'hex'), now(), \
             now() + g * interval '1 microsecond', now() \
           FROM generate_series(1, {n}) g RETURNING id, endpoint_id, lease_expires_at) \
         INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimant, relay, claimed_at, lease_expires_at) \
         SELECT id, 1, endpoint_id, 'bench/deployer', false, now(), lease_expires_at FROM claimed RETURNING todo_id::text",
        ep = line.endpoint.0,
        scope = line.owner.scope.0,
    );
    let rows = db.client().query(&sql, &[]).await.map_err(|e| format!("claiming {n} todos in bulk: {e}"))?;
    let ids: Vec<TodoId> = rows
        .iter()
        .map(|r| r.get::<_, String>(0).parse::<uuid::Uuid>().map(TodoId).map_err(|e| e.to_string()))
        .collect::<BenchResult<_>>()?;
    if ids.len() as u64 != n {
        return Err(format!("claimed {} todos in bulk, expected {n}", ids.len()));
    }
    Ok(ids)
}

/// Claimed todos handed out one at a time to the tasks failing them.
pub type Stack = Rc<RefCell<Vec<TodoId>>>;

/// A task failing claimed todos of one endpoint at their cap through the library's
/// `Store::fail` (the agent's fail: one transaction; the dead-letter trigger records it
/// once for the outbox in it, and a server fans that out to one row per sink).
pub struct Failer {
    store: Store,
    endpoint: EndpointId,
    todos: Stack,
}

impl Failer {
    /// A failer of `todos` (shared with other failers) on `store`'s pool.
    pub fn new(store: &Store, endpoint: EndpointId, todos: &Stack) -> Failer {
        Failer { store: store.clone(), endpoint, todos: todos.clone() }
    }

    /// One dead letter; an error when none is left to fail or it did not dead-letter.
    pub async fn fail_one(&self) -> BenchResult<()> {
        let Some(id) = self.todos.borrow_mut().pop() else {
            return Err("no claimed todo left to fail: raise the window's supply".into());
        };
        self.fail(id).await
    }

    /// Fails `id` at its cap; an error when it did not dead-letter.
    async fn fail(&self, id: TodoId) -> BenchResult<()> {
        let finish = Finish { summary: Some(SUMMARY.into()), ..Finish::default() };
        let row = self.store.fail(self.endpoint, id, finish).await.map_err(|e| format!("fail {id}: {e}"))?;
        if row.dead_letter_count != 1 || row.dead_reason.is_none() {
            return Err(format!("fail did not dead-letter {id}"));
        }
        Ok(())
    }
}

impl Work for Failer {
    fn once(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = BenchResult<()>> + '_>> {
        Box::pin(self.fail_one())
    }
}

/// Dead-letters every todo of `todos` through `tasks` concurrent failers (not timed:
/// a backlog).
pub async fn fail_all(store: &Store, line: &Line, todos: Vec<TodoId>, tasks: usize) -> BenchResult<()> {
    let stack: Stack = Rc::new(RefCell::new(todos));
    let mut running = Vec::new();
    for _ in 0..tasks {
        let failer = Failer::new(store, line.endpoint, &stack);
        let stack = stack.clone();
        running.push(actix_rt::spawn(async move {
            loop {
                let next = stack.borrow_mut().pop();
                match next {
                    Some(id) => failer.fail(id).await?,
                    None => return Ok::<_, String>(()),
                }
            }
        }));
    }
    for task in running {
        task.await.map_err(|e| format!("a failer panicked: {e}"))??;
    }
    Ok(())
}
