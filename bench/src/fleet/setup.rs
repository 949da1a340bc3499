//! What an operator sets up before the agents start, as an operator does it: the owner
//! with `switchboard admin create-human` (the binary under test, on the fleet's
//! database), then everything else through the operator API behind the balancer: the
//! agents' endpoint, two Standard Webhooks sources feeding it (one whose todos get
//! retries, one whose todos die at their first failure), a notify hook on the endpoint
//! pointing at the recording hook receiver, and a Gotify connection and sink subscribed
//! to dead letters pointing at the recording Gotify receiver, its budget lifted.

use std::path::Path;
use std::rc::Rc;

use testkit::receiver::{Receiver, Reply as Answer, Track};
use testkit::signature::Key;

use super::http::Client;
use super::journal::Journal;
use crate::BenchResult;

/// The queue of todos the agents complete.
pub const WORK_QUEUE: &str = "work";
/// The queue of todos the agents fail (their webhook allows one attempt).
pub const DOOMED_QUEUE: &str = "doomed";
/// Attempts a todo of the work queue may take (a claim whose answer was lost lapses and
/// is claimed again).
pub const WORK_ATTEMPTS: u32 = 5;

/// The Gotify header carrying the application token.
const GOTIFY_TOKEN_HEADER: &str = "X-Gotify-Key";

/// What the setup made.
pub struct Setup {
    /// The agents' endpoint (`ep_…`).
    pub endpoint: String,
    /// Its bearer token.
    pub agent_token: String,
    /// Ingest path of the work webhook (`/webhooks/w/…`) and its signing key.
    pub work: Source,
    /// The same for the doomed webhook.
    pub doomed: Source,
}

/// A webhook to deliver to.
#[derive(Clone)]
pub struct Source {
    /// `/webhooks/w/<token>`.
    pub path: String,
    /// The Standard Webhooks key.
    pub key: Key,
}

/// The recording receivers.
pub struct Receivers {
    /// Notify hooks post here (`/hook`), signed with the hook's secret.
    pub hooks: Receiver,
    /// The sink posts here (`/message`), with the connection's token.
    pub gotify: Receiver,
    /// That token.
    pub gotify_token: String,
}

impl Receivers {
    /// Both receivers on free loopback ports, each on two workers of its own.
    pub fn start() -> BenchResult<Receivers> {
        let hooks = Receiver::builder().workers(2).keep(false).then(Answer::Status(204)).start()?;
        let gotify = Receiver::builder().workers(2).keep(false).then(Answer::Gotify).start()?;
        let gotify_token = format!("A{}", &hex::encode(rand::random::<[u8; 8]>())[..14]);
        gotify.admit_header("/message", GOTIFY_TOKEN_HEADER, &gotify_token, Some(Track::GotifyMessage))?;
        Ok(Receivers { hooks, gotify, gotify_token })
    }
}

/// `switchboard admin create-human --json` with `bin` on `database_url`: the owner's
/// operator token.
pub async fn create_owner(bin: &Path, database_url: &str, secret_key: &str) -> BenchResult<String> {
    let out = tokio::process::Command::new(bin)
        .args(["admin", "create-human", "--email", "fleet@switchboard.local", "--name", "Fleet", "--json"])
        .env("SWITCHBOARD_DATABASE_URL", database_url)
        .env("SWITCHBOARD_SECRET_ENCRYPTION_KEY", secret_key)
        .env("SWITCHBOARD_LOG", "warn")
        .output()
        .await
        .map_err(|e| format!("cannot run {} admin create-human: {e}", bin.display()))?;
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    match answer["token"].as_str() {
        Some(token) if out.status.success() => Ok(token.to_owned()),
        _ => Err(format!(
            "admin create-human failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// One operator call that must answer `want`; its JSON.
async fn call(
    op: &Client,
    method: &str,
    path: &str,
    body: serde_json::Value,
    want: u16,
) -> BenchResult<serde_json::Value> {
    let bytes = actix_web::web::Bytes::from(serde_json::to_vec(&body).map_err(|e| e.to_string())?);
    let reply = op.send("setup", method, path, &[("content-type", "application/json".to_owned())], bytes).await;
    if reply.status != Some(want) {
        return Err(format!(
            "{method} {path} answered {:?} (wanted {want}): {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        ));
    }
    Ok(reply.json())
}

fn text(v: &serde_json::Value, field: &str, what: &str) -> BenchResult<String> {
    v[field].as_str().map(str::to_owned).ok_or_else(|| format!("{what} came back without {field}: {v}"))
}

/// Sets everything up through the balancer at `base`.
pub async fn run(base: &str, operator_token: &str, receivers: &Receivers, journal: &Rc<Journal>) -> BenchResult<Setup> {
    let op = Client::new(base, Some(operator_token), journal);
    let endpoint = call(&op, "POST", "/api/v1/endpoints", serde_json::json!({ "slug": "fleet-agents" }), 201).await?;
    let endpoint_id = text(&endpoint, "id", "the endpoint")?;
    let agent_token = text(&endpoint, "token", "the endpoint")?;

    let mut sources = Vec::new();
    for (queue, attempts) in [(WORK_QUEUE, WORK_ATTEMPTS), (DOOMED_QUEUE, 1)] {
        let (key, secret) = Key::random()?;
        let webhook = call(
            &op,
            "POST",
            "/api/v1/webhooks",
            serde_json::json!({ "endpoint_id": endpoint_id, "source_type": "standard", "queue": queue,
                                "max_attempts": attempts, "secret": secret }),
            201,
        )
        .await?;
        let url = text(&webhook, "ingest_url", "a webhook")?;
        let path = url.strip_prefix(base).ok_or_else(|| format!("an ingest URL not on the balancer: {url}"))?;
        sources.push(Source { path: path.to_owned(), key });
    }
    let doomed = sources.pop().ok_or("no doomed webhook")?;
    let work = sources.pop().ok_or("no work webhook")?;

    let hook = call(
        &op,
        "POST",
        &format!("/api/v1/endpoints/{endpoint_id}/hooks"),
        serde_json::json!({ "url": receivers.hooks.url() }),
        201,
    )
    .await?;
    let hook_secret = text(&hook, "signing_secret", "the hook")?;
    receivers.hooks.admit_signed("/hook", &hook_secret, Some(Track::Notification))?;

    let connection = call(
        &op,
        "POST",
        "/api/v1/connections",
        serde_json::json!({ "name": "fleet-phone", "kind": "gotify", "secret": receivers.gotify_token,
                            "base_url": receivers.gotify.base() }),
        201,
    )
    .await?;
    let sink = call(
        &op,
        "POST",
        "/api/v1/sinks",
        serde_json::json!({ "name": "fleet-phone", "kind": "gotify", "connection_id": connection["id"] }),
        201,
    )
    .await?;
    let sink_id = text(&sink, "id", "the sink")?;
    call(
        &op,
        "PUT",
        &format!("/api/v1/sinks/{sink_id}/subscriptions"),
        serde_json::json!({ "subscriptions": [{ "events": ["todo.dead_lettered"] }] }),
        200,
    )
    .await?;
    // Every dead letter must be sent at once, not held by the budget for hours.
    call(
        &op,
        "PATCH",
        &format!("/api/v1/sinks/{sink_id}"),
        serde_json::json!({ "budget_per_hour": 3_600_000, "burst": 100_000 }),
        200,
    )
    .await?;
    Ok(Setup { endpoint: endpoint_id, agent_token, work, doomed })
}
