//! Intake under load: signed GitHub-style deliveries per second through
//! `POST /webhooks/w/{token}` (verify → trusted actors → rules → event and todo in one
//! transaction), beside the same-run ceiling of plain todo creation through the store.
//!
//! A `github` webhook is created through the operator API with the owner's `sbo_`
//! token (the server has a per-run encryption key, so it can seal the signing secret),
//! and given two rules a repository would have: `ping` is dropped, `push*` goes to
//! queue `builds`. Every sender is a provider with its own keep-alive connection,
//! posting a push delivery with a fresh `X-GitHub-Delivery` and the body's
//! `X-Hub-Signature-256`. The ceiling makes the todo those deliveries become (same
//! title, kind, source, payload) with `Store::create_todo` through one pool of the
//! server's size, with no HTTP, no verification and no event row.

use std::cell::Cell;
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;
use switchboard::domain::grants::Verb;
use switchboard::domain::ids::{EndpointId, WebhookId};
use switchboard::store::Store;
use switchboard::store::endpoints::VendEndpoint;
use switchboard::store::todos::NewTodo;

use crate::database::{BenchDb, Seeded};
use crate::load::{Agent, Load, Mark, Window, Work};
use crate::machine::Probe;
use crate::server::Server;
use crate::waits::{SessionSampler, SessionTally};
use crate::{Args, BenchResult};

/// The webhook's default queue, where the ceiling's todos go too.
pub const DEFAULT_QUEUE: &str = "intake";
/// Where the `push*` rule routes deliveries.
pub const ROUTED_QUEUE: &str = "builds";
/// The title intake gives a GitHub push (`<source> <event type>`); the ceiling's too.
const TITLE: &str = "github push";
/// Stands in for the pushed commit's id in the body template; every delivery writes
/// a fresh 40-hex id over it (same length, so the body's size never changes).
const SHA_SLOT: &str = "feedfacefeedfacefeedfacefeedfacefeedface";

/// The webhook under test and what a sender needs.
#[derive(Debug, Clone)]
pub struct Webhook {
    /// The endpoint the webhook (and the ceiling) puts todos on.
    pub endpoint: EndpointId,
    /// The webhook's id.
    pub id: WebhookId,
    /// `http://127.0.0.1:<port>/webhooks/w/<token>`.
    pub ingest_url: String,
    /// The signing secret, as the operator API showed it once.
    pub secret: String,
}

/// The rules set on the webhook: what a repository's hook would have.
fn rules() -> serde_json::Value {
    serde_json::json!({ "rules": [
        { "id": "drop-pings", "match": { "header": "X-GitHub-Event", "equals": "ping" }, "action": { "drop": true } },
        { "id": "pushes-to-builds", "match": { "header": "X-GitHub-Event", "glob": "push*" },
          "action": { "queue": ROUTED_QUEUE } },
    ] })
}

/// A GitHub `push` delivery as GitHub sends it (trimmed of URL fields that add only
/// bytes), about 1.6 KiB serialized; the pushed commit's id is [`SHA_SLOT`].
pub fn push_body() -> Vec<u8> {
    let author = serde_json::json!({ "name": "Mona Octocat", "email": "mona@example.com", "username": "octocat" });
    let commit = serde_json::json!({
        "id": SHA_SLOT,
        "tree_id": "0d2f1c3c6f4e7b8a9d0c1b2a3f4e5d6c7b8a9f0e",
        "distinct": true,
        "message": "intake: record the event and its todos in one transaction\n\nRoutes pushes to the builds queue.",
        "timestamp": "2026-11-30T01:59:12Z",
        "url": format!("https://github.com/acme/switchboard/commit/{SHA_SLOT}"),
        "author": author,
        "committer": author,
        "added": [],
        "removed": [],
        "modified": ["src/http/intake.rs", "src/store/deliveries.rs"],
    });
    let body = serde_json::json!({
        "ref": "refs/heads/main",
        "before": "9a1c2b3d4e5f60718293a4b5c6d7e8f901234567",
        "after": SHA_SLOT,
        "created": false,
        "deleted": false,
        "forced": false,
        "base_ref": null,
        "compare": "https://github.com/acme/switchboard/compare/9a1c2b3d4e5f...feedfacefeed",
        "commits": [commit],
        "head_commit": commit,
        "repository": {
            "id": 817_234_561,
            "node_id": "R_kgDOMLbXgQ",
            "name": "switchboard",
            "full_name": "acme/switchboard",
            "private": true,
            "owner": { "name": "acme", "login": "acme", "id": 9_919_001, "type": "Organization" },
            "html_url": "https://github.com/acme/switchboard",
            "default_branch": "main",
            "pushed_at": 1_764_467_952,
        },
        "pusher": { "name": "octocat", "email": "mona@example.com" },
        "organization": { "login": "acme", "id": 9_919_001 },
        "sender": { "login": "octocat", "id": 583_231, "type": "User", "site_admin": false },
    });
    serde_json::to_vec(&body).unwrap_or_default()
}

/// A provider posting signed push deliveries on its own keep-alive connection.
pub struct Sender {
    client: awc::Client,
    url: String,
    /// HMAC-SHA256 keyed with the signing secret, cloned per delivery.
    mac: Hmac<Sha256>,
    template: Vec<u8>,
    /// Byte offsets of [`SHA_SLOT`] in the template.
    slots: Vec<usize>,
    sent: Cell<u64>,
}

/// The part of an ingest answer the sender checks.
#[derive(Deserialize)]
struct IngestAnswer {
    disposition: String,
    todos: Vec<String>,
    duplicate: bool,
}

impl Sender {
    /// A sender to `webhook` with the push body `template`.
    pub fn new(webhook: &Webhook, template: &[u8]) -> BenchResult<Sender> {
        let mac = Hmac::<Sha256>::new_from_slice(webhook.secret.as_bytes()).map_err(|e| format!("hmac key: {e}"))?;
        let slot = SHA_SLOT.as_bytes();
        let slots: Vec<usize> =
            (0..=template.len().saturating_sub(slot.len())).filter(|&i| &template[i..i + slot.len()] == slot).collect();
        Ok(Sender {
            client: awc::Client::builder().timeout(Duration::from_secs(30)).finish(),
            url: webhook.ingest_url.clone(),
            mac,
            template: template.to_vec(),
            slots,
            sent: Cell::new(0),
        })
    }

    /// One delivery: a fresh commit id in the body, a fresh delivery id, the body's
    /// signature. Anything but a 202 that routed one new todo is an error.
    pub async fn deliver(&self) -> BenchResult<()> {
        let n = self.sent.get();
        self.sent.set(n + 1);
        let delivery = uuid::Uuid::new_v4();
        let sha = format!("{:08x}{}", n as u32, delivery.simple());
        let mut body = self.template.clone();
        for &at in &self.slots {
            body[at..at + sha.len()].copy_from_slice(sha.as_bytes());
        }
        let mut mac = self.mac.clone();
        mac.update(&body);
        let signature = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
        let mut resp = self
            .client
            .post(&self.url)
            .insert_header(("content-type", "application/json"))
            .insert_header(("user-agent", "GitHub-Hookshot/bench"))
            .insert_header(("x-github-event", "push"))
            .insert_header(("x-github-delivery", delivery.to_string()))
            .insert_header(("x-github-hook-id", "501112233"))
            .insert_header(("x-hub-signature-256", signature))
            .send_body(body)
            .await
            .map_err(|e| format!("ingest: {e}"))?;
        // Read the body to the end so the connection can be reused.
        let answer = resp.body().await.map_err(|e| format!("ingest body: {e}"))?;
        if resp.status().as_u16() != 202 {
            return Err(format!("ingest answered {}: {}", resp.status(), String::from_utf8_lossy(&answer)));
        }
        let parsed: IngestAnswer = serde_json::from_slice(&answer).map_err(|e| format!("ingest answer: {e}"))?;
        if parsed.disposition != "routed" || parsed.duplicate || parsed.todos.len() != 1 {
            return Err(format!(
                "ingest accepted but did not route one new todo: {}",
                String::from_utf8_lossy(&answer)
            ));
        }
        Ok(())
    }
}

/// Plain todo creation through the store: what each delivery becomes, without intake.
pub struct Creator {
    store: Store,
    todo: NewTodo,
}

impl Creator {
    /// A creator of `endpoint`'s todos on `store`'s (shared) pool, with `payload`.
    pub fn new(store: &Store, endpoint: EndpointId, payload: &serde_json::Value) -> Creator {
        let todo = NewTodo {
            kind: Some("push".into()),
            source: Some("github".into()),
            payload: Some(payload.clone()),
            max_attempts: Some(5),
            ..NewTodo::new(endpoint, DEFAULT_QUEUE, TITLE)
        };
        Creator { store: store.clone(), todo }
    }

    /// One todo.
    pub async fn create(&self) -> BenchResult<()> {
        let outcome = self.store.create_todo(self.todo.clone()).await.map_err(|e| format!("create_todo: {e}"))?;
        if outcome.created { Ok(()) } else { Err("create_todo found an existing todo".into()) }
    }
}

/// One side's windows, pooled, with what the database wrote meanwhile.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// Deliveries accepted (intake) or todos created (ceiling), pooled over rounds.
    pub window: Window,
    /// WAL written inside the measured windows, bytes (the whole cluster: this run
    /// is nearly all of its traffic).
    pub wal_bytes: u64,
    /// What the database sessions were doing inside the measured windows.
    pub sessions: SessionTally,
}

impl Side {
    /// WAL bytes per operation.
    pub fn wal_per_op(&self) -> Option<f64> {
        (self.window.cycles > 0).then(|| self.wal_bytes as f64 / self.window.cycles as f64)
    }
}

/// The intake measurement.
#[derive(Debug, Clone, Default)]
pub struct IntakeResult {
    /// Concurrent senders (and ceiling tasks).
    pub senders: usize,
    /// The push body's size, bytes.
    pub body_bytes: usize,
    /// Signed deliveries through intake.
    pub intake: Side,
    /// Plain todo creation through the store.
    pub ceiling: Side,
    /// After the run: events of the webhook by (disposition, trust mode, verified).
    pub events: Vec<(String, String, bool, i64)>,
    /// After the run: the endpoint's todos by queue.
    pub todos: Vec<(String, i64)>,
    /// Deliveries the sanity checks sent before the windows (a refused one included).
    pub probes: u64,
}

impl IntakeResult {
    /// Intake deliveries/s as a share of the ceiling's todos/s.
    pub fn ratio(&self) -> f64 {
        let ceiling = self.ceiling.window.rate();
        if ceiling > 0.0 { self.intake.window.rate() / ceiling } else { 0.0 }
    }
}

/// Creates the webhook, checks a signed delivery routes and a forged one is refused,
/// then measures intake and the ceiling in alternating rounds.
pub async fn measure(
    args: &Args,
    db: &BenchDb,
    server: &Server,
    seeded: &Seeded,
    store: &Store,
    probe: &Probe,
) -> BenchResult<IntakeResult> {
    let webhook = create_webhook(server, seeded, store).await?;
    let template = push_body();
    let payload: serde_json::Value = serde_json::from_slice(&template).map_err(|e| e.to_string())?;
    let probes = sanity_check(db, &webhook, &template).await?;
    // What the foundation windows left behind (dead rows, stale statistics) is not
    // intake's to pay for.
    for sql in ["VACUUM (ANALYZE) todos", "VACUUM (ANALYZE) events"] {
        db.client().batch_execute(sql).await.map_err(|e| format!("{sql}: {e}"))?;
    }

    let mut result =
        IntakeResult { senders: args.intake_clients, body_bytes: template.len(), probes, ..IntakeResult::default() };
    for round in 0..args.rounds {
        for intake_turn in if round % 2 == 0 { [true, false] } else { [false, true] } {
            let agents: Vec<Agent> = if intake_turn {
                (0..args.intake_clients)
                    .map(|_| Sender::new(&webhook, &template).map(|s| Agent::Work(Box::new(s))))
                    .collect::<BenchResult<_>>()?
            } else {
                (0..args.intake_clients)
                    .map(|_| Agent::Work(Box::new(Creator::new(store, webhook.endpoint, &payload))))
                    .collect()
            };
            let side = window(args, db, probe, agents).await?;
            if !intake_turn {
                // The ceiling runs the bench's own code only: a failure there is a bench bug.
                side.window.check()?;
            }
            let pooled = if intake_turn { &mut result.intake } else { &mut result.ceiling };
            pooled.window.merge(side.window);
            pooled.wal_bytes += side.wal_bytes;
            pooled.sessions.add(&side.sessions);
        }
    }
    result.events = db
        .client()
        .query(
            "SELECT disposition, trust_mode, verified, count(*) FROM events WHERE webhook_id = $1::text::uuid \
             GROUP BY 1, 2, 3 ORDER BY 4 DESC",
            &[&webhook.id.0.to_string()],
        )
        .await
        .map_err(|e| format!("counting events: {e}"))?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    result.todos = db
        .client()
        .query(
            "SELECT queue, count(*) FROM todos WHERE endpoint_id = $1::text::uuid GROUP BY 1 ORDER BY 1",
            &[&webhook.endpoint.0.to_string()],
        )
        .await
        .map_err(|e| format!("counting todos: {e}"))?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    Ok(result)
}

/// A checkpoint first, so each window starts with the same WAL debt (full-page
/// images after a checkpoint); then a warm-up, then one measured window.
pub async fn window(args: &Args, db: &BenchDb, probe: &Probe, agents: Vec<Agent>) -> BenchResult<Side> {
    db.client().batch_execute("CHECKPOINT").await.map_err(|e| format!("CHECKPOINT: {e}"))?;
    let load = Load::start(agents, u64::MAX);
    tokio::time::sleep(args.warmup()).await;
    let sampler = SessionSampler::start(&db.url).await;
    let tally = load.tally();
    let wal_from = wal_lsn(db).await;
    let from = Mark::now(&tally, probe);
    load.record(true);
    tokio::time::sleep(args.window()).await;
    let to = Mark::now(&tally, probe);
    let wal_to = wal_lsn(db).await;
    load.record(false);
    let window = load.stop(from, to).await;
    let sessions = sampler?.finish().await?;
    Ok(Side { window, wal_bytes: wal_to?.saturating_sub(wal_from?), sessions })
}

/// The cluster's current WAL insert position, bytes.
async fn wal_lsn(db: &BenchDb) -> BenchResult<u64> {
    let row = db
        .client()
        .query_one("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::int8", &[])
        .await
        .map_err(|e| format!("reading the WAL position: {e}"))?;
    Ok(row.get::<_, i64>(0) as u64)
}

/// The operator API's answer to a webhook creation.
#[derive(Deserialize)]
struct Created {
    id: String,
    ingest_url: String,
    signing_secret: Option<String>,
}

/// A fresh endpoint (so intake's todos stay off the claim benchmark's queues) and a
/// `github` webhook on it, created and given rules through the operator API.
async fn create_webhook(server: &Server, seeded: &Seeded, store: &Store) -> BenchResult<Webhook> {
    let vended = store
        .vend_endpoint(VendEndpoint {
            scope: seeded.scope,
            slug: "bench-intake".into(),
            grants: Verb::ALL.to_vec(),
            default_lease_seconds: None,
            expires_at: None,
        })
        .await
        .map_err(|e| format!("vending the intake endpoint: {e}"))?;
    let endpoint = vended.endpoint.id;
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let authorization = format!("Bearer {}", seeded.owner_token);
    let mut resp = client
        .post(format!("{}/api/v1/webhooks", server.base()))
        .insert_header(("authorization", authorization.as_str()))
        .send_json(&serde_json::json!({
            "endpoint_id": endpoint,
            "source_type": "github",
            "queue": DEFAULT_QUEUE,
            "trusted_actors": { "allow_all": true },
        }))
        .await
        .map_err(|e| format!("creating the webhook: {e}"))?;
    let body = resp.body().await.map_err(|e| format!("creating the webhook: {e}"))?;
    if resp.status().as_u16() != 201 {
        return Err(format!("creating the webhook answered {}: {}", resp.status(), String::from_utf8_lossy(&body)));
    }
    let created: Created = serde_json::from_slice(&body).map_err(|e| format!("webhook answer: {e}"))?;
    let secret = created.signing_secret.ok_or("the github webhook came back without a signing secret")?;
    let mut resp = client
        .put(format!("{}/api/v1/webhooks/{}/rules", server.base(), created.id))
        .insert_header(("authorization", authorization.as_str()))
        .send_json(&rules())
        .await
        .map_err(|e| format!("setting the webhook's rules: {e}"))?;
    let body = resp.body().await.map_err(|e| format!("setting the webhook's rules: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!("setting the rules answered {}: {}", resp.status(), String::from_utf8_lossy(&body)));
    }
    let id = created.id.parse().map_err(|e| format!("webhook id {:?}: {e}", created.id))?;
    Ok(Webhook { endpoint, id, ingest_url: created.ingest_url, secret })
}

/// Before measuring: a signed delivery is accepted and lands on the routed queue, and
/// one signed with the wrong secret is refused (so verification is really on).
/// Returns how many deliveries it sent.
async fn sanity_check(db: &BenchDb, webhook: &Webhook, template: &[u8]) -> BenchResult<u64> {
    let good = Sender::new(webhook, template)?;
    let started = Instant::now();
    good.deliver().await.map_err(|e| format!("a signed delivery failed: {e}"))?;
    let first_ms = started.elapsed().as_secs_f64() * 1000.0;
    let row = db
        .client()
        .query_one(
            "SELECT count(*) FILTER (WHERE queue = $2), count(*) FROM todos WHERE endpoint_id = $1::text::uuid",
            &[&webhook.endpoint.0.to_string(), &ROUTED_QUEUE],
        )
        .await
        .map_err(|e| e.to_string())?;
    let (routed, all): (i64, i64) = (row.get(0), row.get(1));
    if (routed, all) != (1, 1) {
        return Err(format!("a push delivery should make one todo on {ROUTED_QUEUE}; found {routed} there of {all}"));
    }
    let forged = Sender::new(&Webhook { secret: format!("{}x", webhook.secret), ..webhook.clone() }, template)?;
    match forged.deliver().await {
        Err(e) if e.contains("401") => {}
        Err(e) => return Err(format!("a forged delivery should be refused with 401: {e}")),
        Ok(()) => return Err("a delivery signed with the wrong secret was accepted".into()),
    }
    crate::progress(&format!("intake: webhook ready, first signed delivery routed in {first_ms:.1} ms"));
    Ok(2)
}

impl Work for Sender {
    fn once(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = BenchResult<()>> + '_>> {
        Box::pin(self.deliver())
    }
}

impl Work for Creator {
    fn once(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = BenchResult<()>> + '_>> {
        Box::pin(self.create())
    }
}
