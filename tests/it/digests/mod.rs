//! Queue digests from the outside: schedules refused or kept, the preview, each send
//! time decided once (sent, skipped as quiet, skipped for being late), sections that
//! could not be measured shown as unavailable (never 0), Cairn publication, and two
//! server processes sending one digest per send time.

mod api;
mod cairn;
mod instances;
mod sending;

use std::time::Duration;

use serde_json::{Value, json};
use switchboard::config::{CidrList, SecretKey, Settings};
use switchboard::store::todos::{ClaimRequest, Finish, NewTodo};

use crate::harness::wait::{wait_count_within, wait_until};
use crate::harness::{Owner, TestApp};
use testkit::receiver::Receiver;

/// How long a wait for a digest's runs, ticks or deliveries lasts.
const WITHIN: Duration = Duration::from_secs(20);

/// The vault key the digest tests run with.
const KEY: SecretKey = SecretKey([9; 32]);

/// Fast ticks, loopback sinks.
fn fast(s: &mut Settings) {
    s.secret_encryption_key = Some(KEY);
    s.push_allow_http = true;
    s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
    s.outbox_poll_ms = 50;
    s.digest_interval_ms = 50;
}

async fn spawn_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
    TestApp::spawn_with(|s| {
        fast(s);
        adjust(s);
    })
    .await
}

/// Another server on `app`'s database (fast settings, then `adjust`), running until
/// its handle is stopped or the test ends: a restart after `app.stop()`.
pub struct Another {
    /// Its base URL.
    pub base: String,
    _handle: actix_web::dev::ServerHandle,
}

async fn another_server(app: &TestApp, adjust: impl FnOnce(&mut Settings)) -> Another {
    let mut settings = crate::harness::test_settings(&app.db);
    fast(&mut settings);
    adjust(&mut settings);
    let signals = crate::harness::Signals::start();
    let server = switchboard::startup::Application::build_with_lookup(
        &settings,
        &app.db.url,
        signals.emitter(),
        switchboard::outbound::SystemLookup,
    )
    .await
    .expect("another server");
    let base = format!("http://127.0.0.1:{}", server.port());
    let handle = server.handle();
    actix_rt::spawn(server.run_until_stopped());
    Another { base, _handle: handle }
}

/// A Gotify sink of `o` posting to `rx`; its id.
async fn sink_to(app: &TestApp, o: &Owner, rx: &Receiver) -> String {
    let body = json!({"name": "phone", "kind": "gotify", "secret": "app-token", "base_url": rx.base()});
    let (s, c) = app.post("/api/v1/connections", &o.token, body).await;
    assert_eq!(s, 201, "{c}");
    // Subscribed to nothing: the receiver gets the digests it is named in, and not the
    // dead letters a new sink otherwise hears (the digests' tests make some).
    let body = json!({"name": "pager", "kind": "gotify", "base_url": rx.base(), "connection_id": c["id"], "subscriptions": []});
    let (s, sink) = app.post("/api/v1/sinks", &o.token, body).await;
    assert_eq!(s, 201, "{sink}");
    sink["id"].as_str().unwrap().to_owned()
}

/// Schedules a digest for `o`, asserting it was created; answers it.
async fn digest(app: &TestApp, o: &Owner, body: Value) -> Value {
    let (s, d) = app.post("/api/v1/digests", &o.token, body).await;
    assert_eq!(s, 201, "{d}");
    d
}

/// Makes `digest`'s next send time come now (what the clock would do by itself).
async fn make_due(app: &TestApp, digest: &str, ago: &str) {
    let id = digest.strip_prefix("dg_").unwrap();
    app.db.exec(&format!("UPDATE digests SET next_send_at = now() - interval '{ago}' WHERE id = '{id}'")).await;
}

/// Waits until `digest` has `n` runs with `outcome`.
async fn wait_runs(app: &TestApp, digest: &str, outcome: &str, n: i64) {
    let id = digest.strip_prefix("dg_").unwrap();
    let sql = format!("SELECT count(*) FROM digest_runs WHERE digest_id = '{id}' AND outcome = '{outcome}'");
    wait_count_within(&app.db, &sql, n, WITHIN).await;
}

/// The metrics token the tests that count scheduler ticks start their servers with.
const METRICS_TOKEN: &str = "digests-metrics-token-0123456789abcdef";

/// The series counting a server's finished digest scheduler ticks.
const TICKS: &str = "switchboard_digest_scheduler_ticks_total";

/// Waits until `ticks` (a server's finished scheduler ticks, read anew each call) is two
/// past what it was on the first call: a whole tick then began and ended after this
/// was called, and no tick that began before it is still deciding anything.
async fn two_more_ticks<F, Fut>(ticks: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = u64>,
{
    let from = ticks().await;
    wait_until(format!("two digest scheduler ticks after tick {from}"), WITHIN, async || {
        let now = ticks().await;
        if now >= from + 2 { Ok(()) } else { Err(format!("tick {now}")) }
    })
    .await;
}

/// Waits until every `digest` outbox row has ended (sent, coalesced, partial or
/// undeliverable): nothing of the digests is still to be delivered.
async fn digest_outbox_ended(db: &crate::harness::TestDb) {
    let open = "SELECT count(*) FROM outbox WHERE event = 'digest' \
        AND status NOT IN ('sent', 'coalesced', 'partial', 'undeliverable')";
    wait_count_within(db, open, 0, WITHIN).await;
}

/// Dead-letters a fresh todo titled `title` on `slug`, a new endpoint of `o`.
async fn dead_letter(app: &TestApp, o: &Owner, slug: &str, title: &str) -> String {
    let ep = app.agent(o.scope, slug).await;
    let new = NewTodo { max_attempts: Some(1), ..NewTodo::new(ep.id, "builds", title) };
    let id = app.store.create_todo(new).await.unwrap().todo.id;
    app.store.claim(ep.id, id, ClaimRequest::default()).await.unwrap();
    app.store.fail(ep.id, id, Finish::default()).await.unwrap();
    id.to_string()
}
