//! Intake: unknown ingest tokens (404), oversized deliveries (413), bad signatures (401,
//! nothing stored but the counter), secrets that cannot be opened (503), fuzzed
//! deliveries (never a 5xx), and the operator's webhook and rules routes.

use std::io::{Read, Write};
use std::time::Duration;

use awc::http::StatusCode;
use awc::http::header::HeaderValue;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use switchboard::config::SecretKey;
use switchboard::domain::ids::WebhookId;
use switchboard::domain::todo_state::TeamRole;
use switchboard::intake::verify::SourceType;
use switchboard::store::webhooks::NewWebhook;
use switchboard::vault::Vault;

use super::{Snapshot, assert_alive, assert_envelope, expect_error};
use crate::harness::{Ep, Owner, TestApp};

const WEBHOOKS: &str = "/api/v1/webhooks";
const MIB: usize = 1024 * 1024;

// ---------------------------------------------------------------------------------
// Fixtures and helpers
// ---------------------------------------------------------------------------------

fn key(byte: u8) -> SecretKey {
    SecretKey([byte; 32])
}

/// The app with an encryption key, an owner and their endpoint `worker`.
async fn app_with_key() -> (TestApp, Owner, Ep) {
    let app = TestApp::spawn_with(|s| s.secret_encryption_key = Some(key(5))).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    (app, owner, ep)
}

/// Creates a webhook on `ep` through the operator API; returns the answer.
async fn webhook(app: &TestApp, owner: &Owner, ep: &Ep, body: Value) -> Value {
    let mut body = body;
    body["endpoint_id"] = json!(ep.id.to_string());
    let (s, w) = app.post(WEBHOOKS, &owner.token, body).await;
    assert_eq!(s, StatusCode::CREATED, "{w}");
    w
}

fn ingest_path(token: &str) -> String {
    format!("/webhooks/w/{token}")
}

/// The path of a created webhook's ingest URL.
fn path_of(w: &Value) -> String {
    ingest_path(w["ingest_token"].as_str().unwrap())
}

fn secret_of(w: &Value) -> &str {
    w["signing_secret"].as_str().unwrap()
}

/// Headers as sent: raw bytes, so a value need not be UTF-8.
type Headers = Vec<(&'static str, Vec<u8>)>;

fn h(name: &'static str, value: impl AsRef<[u8]>) -> (&'static str, Vec<u8>) {
    (name, value.as_ref().to_vec())
}

/// Posts a delivery with exactly these headers (repeats kept, in order).
async fn deliver(app: &TestApp, path: &str, headers: &[(&'static str, Vec<u8>)], body: &[u8]) -> (StatusCode, Value) {
    let mut req = app.client.post(format!("{}{path}", app.base));
    for (name, value) in headers {
        req = req.append_header((*name, HeaderValue::from_bytes(value).expect("a sendable header value")));
    }
    let mut resp = req.send_body(body.to_vec()).await.expect("request");
    let bytes = resp.body().limit(16 * MIB).await.expect("body");
    (resp.status(), serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

fn hmac(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().to_vec()
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

fn github_sig(secret: &str, body: &[u8]) -> String {
    format!("sha256={}", hex::encode(hmac(secret.as_bytes(), &[body])))
}

fn gitea_sig(secret: &str, body: &[u8]) -> String {
    hex::encode(hmac(secret.as_bytes(), &[body]))
}

/// A `Stripe-Signature` value signing `"{t}.{body}"` with the timestamp text `t`.
fn stripe_sig(secret: &str, t: &str, body: &[u8]) -> String {
    format!("t={t},v1={}", hex::encode(hmac(secret.as_bytes(), &[t.as_bytes(), b".", body])))
}

/// A Standard Webhooks `v1,<base64>` entry (the `whsec_` secret keys by its base64 bytes).
fn standard_sig(secret: &str, id: &str, t: &str, body: &[u8]) -> String {
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    format!("v1,{}", STANDARD.encode(hmac(&key, &[id.as_bytes(), b".", t.as_bytes(), b".", body])))
}

/// Correctly signed headers for `body` on a webhook of `source` with `secret`.
fn signed(source: &str, secret: &str, body: &[u8]) -> Headers {
    let t = now().to_string();
    match source {
        "github" => vec![h("X-GitHub-Event", "push"), h("X-Hub-Signature-256", github_sig(secret, body))],
        "gitea" => vec![h("X-Gitea-Event", "push"), h("X-Gitea-Signature", gitea_sig(secret, body))],
        "stripe" => vec![h("Stripe-Signature", stripe_sig(secret, &t, body))],
        "standard" => vec![
            h("webhook-id", "msg_1"),
            h("webhook-timestamp", &t),
            h("webhook-signature", standard_sig(secret, "msg_1", &t, body)),
        ],
        other => panic!("{other} is not signed"),
    }
}

/// What the shared [`Snapshot`] does not cover: the webhooks table, less its refusal
/// counter (which a refused delivery is allowed to change).
async fn webhooks_digest(app: &TestApp) -> i64 {
    app.db
        .count(
            "SELECT hashtextextended(coalesce(string_agg((to_jsonb(w) - 'refused_deliveries')::text, '|' \
             ORDER BY w.id), ''), 0) FROM webhooks w",
        )
        .await
}

/// The shared snapshot plus the webhooks table.
struct IntakeSnapshot {
    shared: Snapshot,
    webhooks: i64,
    refused: i64,
}

impl IntakeSnapshot {
    async fn take(app: &TestApp) -> IntakeSnapshot {
        IntakeSnapshot {
            shared: Snapshot::take(app).await,
            webhooks: webhooks_digest(app).await,
            refused: total_refused(app).await,
        }
    }

    /// Nothing changed but, possibly, the refusal counters.
    async fn assert_only_counted(&self, app: &TestApp, what: &str) {
        self.shared.assert_unchanged(app, what).await;
        assert_eq!(webhooks_digest(app).await, self.webhooks, "{what}: a webhook changed");
    }

    /// Nothing changed at all, counters included.
    async fn assert_unchanged(&self, app: &TestApp, what: &str) {
        self.assert_only_counted(app, what).await;
        assert_eq!(total_refused(app).await, self.refused, "{what}: a refusal was counted");
    }
}

async fn total_refused(app: &TestApp) -> i64 {
    app.db.count("SELECT coalesce(sum(refused_deliveries), 0)::bigint FROM webhooks").await
}

async fn refused(app: &TestApp, w: &Value) -> i64 {
    let id: WebhookId = w["id"].as_str().unwrap().parse().unwrap();
    app.db.count(&format!("SELECT refused_deliveries FROM webhooks WHERE id = '{}'", id.0)).await
}

async fn webhook_count(app: &TestApp) -> i64 {
    app.db.count("SELECT count(*) FROM webhooks").await
}

/// Sends a raw HTTP/1.1 request (head, then body chunks, each written as it comes; the
/// server may answer and close early) and returns the status and JSON body.
async fn raw_http(app: &TestApp, head: impl Into<Vec<u8>>, chunks: Vec<Vec<u8>>) -> (StatusCode, Value) {
    let addr = app.base.strip_prefix("http://").unwrap().to_owned();
    let head = head.into();
    actix_rt::task::spawn_blocking(move || {
        let mut sock = std::net::TcpStream::connect(addr).expect("connect");
        sock.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        sock.write_all(&head).expect("write head");
        for chunk in &chunks {
            if sock.write_all(chunk).is_err() {
                break;
            }
        }
        let mut answer = Vec::new();
        let _ = sock.read_to_end(&mut answer);
        let text = String::from_utf8_lossy(&answer).into_owned();
        let code: u16 = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("{text:?}"));
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
        let json = serde_json::Deserializer::from_str(body).into_iter::<Value>().next().and_then(Result::ok);
        (StatusCode::from_u16(code).unwrap(), json.unwrap_or(Value::Null))
    })
    .await
    .expect("raw request thread")
}

/// Asserts a delivery was not a server error, and a client error is the envelope.
#[track_caller]
fn expect_no_server_error(got: &(StatusCode, Value), what: &str) {
    let (s, body) = got;
    assert!(!s.is_server_error(), "{what}: answered {s}: {body}");
    if s.is_client_error() {
        assert_envelope(body, what);
    }
}

// ---------------------------------------------------------------------------------
// 404: unknown, garbage and empty ingest tokens
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn unknown_garbage_and_empty_ingest_tokens_are_not_found_and_change_nothing() {
    let (app, owner, ep) = app_with_key().await;
    let generic = webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "inbox"})).await;
    let github = webhook(&app, &owner, &ep, json!({"source_type": "github", "queue": "builds"})).await;
    let real = generic["ingest_token"].as_str().unwrap().to_owned();
    let before = IntakeSnapshot::take(&app).await;
    let mut flipped = real.clone();
    let last = if flipped.ends_with('A') { "B" } else { "A" };
    flipped.replace_range(real.len() - 1.., last);
    let long = "a".repeat(4000);
    let tokens = [
        "sbw_unknown".to_owned(),
        "sbw_".to_owned(),
        "x".to_owned(),
        flipped,
        format!("{real}x"),
        real[..real.len() - 1].to_owned(),
        real.to_uppercase(),
        real.strip_prefix("sbw_").unwrap_or(&real).to_owned(),
        format!("{real}%00"),
        format!("{real}%20"),
        "%00".to_owned(),
        "%FF%FE".to_owned(),
        "%F0%9F%92%A5".to_owned(),
        "%2e%2e".to_owned(),
        long,
    ];
    let body = br#"{"sender":{"login":"octo"}}"#;
    let reference = deliver(&app, &ingest_path("sbw_unknown"), &[], body).await;
    expect_error(&reference, StatusCode::NOT_FOUND, "not_found", "unknown token");
    for token in &tokens {
        let got = deliver(&app, &ingest_path(token), &signed("github", secret_of(&github), body), body).await;
        expect_error(&got, StatusCode::NOT_FOUND, "not_found", token);
        assert_eq!(got.1, reference.1, "{token}: answers exactly like an unknown token");
    }
    // No token at all, or more path than a token.
    for path in ["/webhooks/w/".to_owned(), "/webhooks/w//".to_owned(), format!("/webhooks/w/{real}/x")] {
        let got = deliver(&app, &path, &[], body).await;
        expect_error(&got, StatusCode::NOT_FOUND, "not_found", &path);
    }
    // `/webhooks/w` is the Board's page of a webhook `w` (`/webhooks/{id}`, GET only).
    let got = deliver(&app, "/webhooks/w", &[], body).await;
    expect_error(&got, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "/webhooks/w");
    // The ingest URL takes POST only: any other method is 405, whatever the token.
    for method in ["GET", "PUT", "DELETE", "PATCH"] {
        for token in [real.as_str(), "sbw_unknown"] {
            let got = app.call(method, &ingest_path(token), None, None).await;
            expect_error(&got, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", method);
        }
    }
    // An unknown token is refused before the body is read, whatever its size.
    let (s, _) = deliver(&app, &ingest_path("sbw_unknown"), &[], &vec![b'a'; 6 * MIB]).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    before.assert_unchanged(&app, "unknown tokens").await;
    assert_alive(&app).await;
}

// ---------------------------------------------------------------------------------
// 413: deliveries over 5 MiB, declared or not
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn a_delivery_over_5_mib_is_payload_too_large_even_when_its_length_is_undeclared_or_a_lie() {
    let (app, owner, ep) = app_with_key().await;
    let generic = webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "inbox"})).await;
    let github = webhook(
        &app,
        &owner,
        &ep,
        json!({"source_type": "github", "queue": "builds", "trusted_actors": {"allow_all": true}}),
    )
    .await;
    let before = IntakeSnapshot::take(&app).await;
    let over = vec![b'a'; 5 * MIB + 1];
    for w in [&generic, &github] {
        let path = path_of(w);
        // Correctly signed, so only the size is wrong.
        let headers = if w["signing_secret"].is_string() { signed("github", secret_of(w), &over) } else { vec![] };
        let got = deliver(&app, &path, &headers, &over).await;
        expect_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "5 MiB + 1");

        // A declared length over the cap is refused before any of the body is read.
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n",
            6 * MIB
        );
        let got = raw_http(&app, head, vec![b"{}".to_vec()]).await;
        expect_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "declared 6 MiB");

        // No declared length (chunked): counted as it streams in.
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\
             Connection: close\r\n\r\n"
        );
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        let piece = vec![b'a'; 64 * 1024];
        for _ in 0..(5 * MIB / piece.len() + 1) {
            let mut c = format!("{:x}\r\n", piece.len()).into_bytes();
            c.extend_from_slice(&piece);
            c.extend_from_slice(b"\r\n");
            chunks.push(c);
        }
        chunks.push(b"0\r\n\r\n".to_vec());
        let got = raw_http(&app, head, chunks).await;
        expect_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "chunked over 5 MiB");

        // A length no number can hold is a client error, never a server error.
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\nConnection: close\r\n\r\n"
        );
        let (s, b) = raw_http(&app, head, vec![b"{}".to_vec()]).await;
        assert!(s.is_client_error(), "absurd Content-Length: {s} {b}");
    }
    before.assert_unchanged(&app, "oversized deliveries").await;
    // Exactly the cap is accepted.
    let (s, b) = deliver(&app, &path_of(&generic), &[h("X-Delivery-Id", "max")], &vec![b'a'; 5 * MIB]).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{b}");
    assert_alive(&app).await;
}

// ---------------------------------------------------------------------------------
// 401: bad, missing and malformed signatures; only the counter moves
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn bad_missing_malformed_and_stale_signatures_are_unauthenticated_and_only_counted() {
    let (app, owner, ep) = app_with_key().await;
    let mut hooks = Vec::new();
    for source in ["github", "gitea", "stripe", "standard"] {
        let body = json!({"source_type": source, "queue": "q", "trusted_actors": {"allow_all": true}});
        hooks.push((source, webhook(&app, &owner, &ep, body).await));
    }
    let body: &[u8] = br#"{"id":"evt_1","type":"invoice.paid","sender":{"login":"octo"}}"#;
    let other: &[u8] = br#"{"id":"evt_1","type":"invoice.paid","sender":{"login":"mallory"}}"#;
    let before = IntakeSnapshot::take(&app).await;
    let t = now();
    // Stale only grows staler as the test runs; "future" keeps a margin for a slow run.
    let (ts, stale, future) = (t.to_string(), (t - 301).to_string(), (t + 400).to_string());
    for (source, w) in &hooks {
        let secret = secret_of(w);
        let good_hex = hex::encode(hmac(secret.as_bytes(), &[body]));
        let cases: Vec<(&str, Headers)> = match *source {
            "github" => vec![
                ("missing", vec![]),
                ("empty", vec![h("X-Hub-Signature-256", "")]),
                ("wrong secret", vec![h("X-Hub-Signature-256", github_sig("wrong", body))]),
                ("another body", vec![h("X-Hub-Signature-256", github_sig(secret, other))]),
                ("no prefix", vec![h("X-Hub-Signature-256", &good_hex)]),
                ("sha1 prefix", vec![h("X-Hub-Signature-256", format!("sha1={good_hex}"))]),
                ("not hex", vec![h("X-Hub-Signature-256", format!("sha256={}", "zz".repeat(32)))]),
                ("short", vec![h("X-Hub-Signature-256", "sha256=abcd")]),
                ("too long", vec![h("X-Hub-Signature-256", format!("sha256={}", "a".repeat(5000)))]),
                ("not UTF-8", vec![h("X-Hub-Signature-256", b"sha256=\xff\xfe")]),
                ("another scheme's header", vec![h("X-Gitea-Signature", &good_hex)]),
                (
                    "a forged first copy",
                    vec![
                        h("X-Hub-Signature-256", github_sig("wrong", body)),
                        h("X-Hub-Signature-256", github_sig(secret, body)),
                    ],
                ),
            ],
            "gitea" => vec![
                ("missing", vec![]),
                ("empty", vec![h("X-Gitea-Signature", "")]),
                ("wrong secret", vec![h("X-Gitea-Signature", gitea_sig("wrong", body))]),
                ("another body", vec![h("X-Gitea-Signature", gitea_sig(secret, other))]),
                ("github's format", vec![h("X-Gitea-Signature", format!("sha256={good_hex}"))]),
                ("not hex", vec![h("X-Gitea-Signature", "g".repeat(64))]),
                ("odd length", vec![h("X-Gitea-Signature", &good_hex[1..])]),
                ("github's header", vec![h("X-Hub-Signature-256", github_sig(secret, body))]),
            ],
            "stripe" => vec![
                ("missing", vec![]),
                ("empty", vec![h("Stripe-Signature", "")]),
                ("wrong secret", vec![h("Stripe-Signature", stripe_sig("wrong", &ts, body))]),
                ("another body", vec![h("Stripe-Signature", stripe_sig(secret, &ts, other))]),
                ("stale by 301 s", vec![h("Stripe-Signature", stripe_sig(secret, &stale, body))]),
                ("stale by a day", vec![h("Stripe-Signature", stripe_sig(secret, &(t - 86_400).to_string(), body))]),
                ("future by 400 s", vec![h("Stripe-Signature", stripe_sig(secret, &future, body))]),
                ("no timestamp", vec![h("Stripe-Signature", format!("v1={good_hex}"))]),
                ("no v1", vec![h("Stripe-Signature", format!("t={ts},v0={good_hex}"))]),
                ("v1 not hex", vec![h("Stripe-Signature", format!("t={ts},v1={}", "x".repeat(64)))]),
                ("two timestamps", vec![h("Stripe-Signature", format!("{},t={ts}", stripe_sig(secret, &ts, body)))]),
                ("leading zero", vec![h("Stripe-Signature", stripe_sig(secret, &format!("0{ts}"), body))]),
                ("signed timestamp", vec![h("Stripe-Signature", stripe_sig(secret, &format!("-{ts}"), body))]),
                ("not key=value", vec![h("Stripe-Signature", "garbage")]),
                ("github's header", vec![h("X-Hub-Signature-256", github_sig(secret, body))]),
            ],
            "standard" => {
                let sig = standard_sig(secret, "msg_1", &ts, body);
                let with = |id: &str, stamp: &str, signature: String| {
                    vec![h("webhook-id", id), h("webhook-timestamp", stamp), h("webhook-signature", signature)]
                };
                vec![
                    ("missing", vec![]),
                    ("no signature", vec![h("webhook-id", "msg_1"), h("webhook-timestamp", &ts)]),
                    ("no timestamp", vec![h("webhook-id", "msg_1"), h("webhook-signature", &sig)]),
                    ("no id", vec![h("webhook-timestamp", &ts), h("webhook-signature", &sig)]),
                    ("wrong secret", with("msg_1", &ts, standard_sig("whsec_d3Jvbmc=", "msg_1", &ts, body))),
                    ("another id", with("msg_2", &ts, sig.clone())),
                    ("another body", with("msg_1", &ts, standard_sig(secret, "msg_1", &ts, other))),
                    ("stale by 301 s", with("msg_1", &stale, standard_sig(secret, "msg_1", &stale, body))),
                    ("future by 400 s", with("msg_1", &future, standard_sig(secret, "msg_1", &future, body))),
                    ("not base64", with("msg_1", &ts, "v1,!!!not-base64!!!".into())),
                    ("16 bytes", with("msg_1", &ts, format!("v1,{}", STANDARD.encode([7u8; 16])))),
                    ("v1a only", with("msg_1", &ts, sig.replacen("v1,", "v1a,", 1))),
                    ("no comma", with("msg_1", &ts, sig.replacen("v1,", "v1", 1))),
                    ("timestamp not digits", with("msg_1", "soon", standard_sig(secret, "msg_1", "soon", body))),
                ]
            }
            _ => unreachable!(),
        };
        let path = path_of(w);
        for (what, headers) in &cases {
            let got = deliver(&app, &path, headers, body).await;
            expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", &format!("{source}: {what}"));
        }
        assert_eq!(refused(&app, w).await, cases.len() as i64, "{source}: every refusal is counted");
    }
    before.assert_only_counted(&app, "refused deliveries").await;
    // The same deliveries, correctly signed, are accepted: the refusals were the signatures.
    for (source, w) in &hooks {
        let got = deliver(&app, &path_of(w), &signed(source, secret_of(w), body), body).await;
        assert_eq!(got.0, StatusCode::ACCEPTED, "{source}: {}", got.1);
    }
}

// ---------------------------------------------------------------------------------
// 503: a sealed secret the server cannot open
// ---------------------------------------------------------------------------------

/// Creates a webhook of every signed source on `ep`, its secret sealed by `vault`;
/// returns `(source, ingest path, secret)`.
async fn sealed_elsewhere(app: &TestApp, owner: &Owner, ep: &Ep, vault: &Vault) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    for source in [SourceType::Github, SourceType::Gitea, SourceType::Stripe, SourceType::Standard] {
        let created = app
            .store
            .create_webhook(
                vault,
                NewWebhook {
                    scope: owner.scope,
                    endpoint_id: ep.id,
                    source_type: source,
                    queue: "q".into(),
                    max_attempts: None,
                    trusted_actors: Some(json!({"allow_all": true})),
                    secret: None,
                    unverified: false,
                },
            )
            .await
            .expect("create webhook");
        out.push((source.as_str(), ingest_path(&created.ingest_token), created.signing_secret.unwrap()));
    }
    out
}

#[actix_web::test]
async fn a_secret_sealed_under_another_key_or_unusable_is_unavailable_and_changes_nothing() {
    let body: &[u8] = br#"{"id":"evt_1","type":"x","sender":{"login":"octo"}}"#;
    // The server's key is not the one the secrets were sealed with, or it has none.
    for server_key in [Some(key(5)), None] {
        let app = TestApp::spawn_with(|s| s.secret_encryption_key = server_key.clone()).await;
        let owner = app.owner("a@example.com").await;
        let ep = app.agent(owner.scope, "worker").await;
        let hooks = sealed_elsewhere(&app, &owner, &ep, &Vault::new(Some(&key(6)))).await;
        let before = IntakeSnapshot::take(&app).await;
        for (source, path, secret) in &hooks {
            let got = deliver(&app, path, &signed(source, secret, body), body).await;
            let what = format!("{source}, server key {}", server_key.is_some());
            expect_error(&got, StatusCode::SERVICE_UNAVAILABLE, "unavailable", &what);
            assert!(!got.1.to_string().contains("decrypt"), "{what}: no detail leaks: {}", got.1);
        }
        before.assert_unchanged(&app, "undecryptable secrets").await;
    }
    // A stored secret that is not an envelope, or none at all on a verified webhook.
    let (app, owner, ep) = app_with_key().await;
    let hooks = sealed_elsewhere(&app, &owner, &ep, &Vault::new(Some(&key(5)))).await;
    for (stored, what) in [("'plain'", "not an envelope"), ("'enc:v1:AAAA'", "truncated"), ("NULL", "no secret")] {
        app.db.exec(&format!("UPDATE webhooks SET signing_secret = {stored}")).await;
        let before = IntakeSnapshot::take(&app).await;
        for (source, path, secret) in &hooks {
            let got = deliver(&app, path, &signed(source, secret, body), body).await;
            expect_error(&got, StatusCode::SERVICE_UNAVAILABLE, "unavailable", &format!("{source}: {what}"));
        }
        before.assert_unchanged(&app, what).await;
    }
    assert_alive(&app).await;
}

// ---------------------------------------------------------------------------------
// Fuzzed deliveries: never a 5xx
// ---------------------------------------------------------------------------------

fn nested(open: &[u8], close: &[u8], depth: usize, inner: &[u8]) -> Vec<u8> {
    let mut v = open.repeat(depth);
    v.extend_from_slice(inner);
    v.extend(close.repeat(depth));
    v
}

fn fuzz_bodies() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("empty", Vec::new()),
        ("null", b"null".to_vec()),
        ("a number", b"42".to_vec()),
        ("a huge number", b"1e999999".to_vec()),
        ("a big integer", b"{\"n\": 123456789012345678901234567890}".to_vec()),
        ("nested arrays", nested(b"[", b"]", 10_000, b"")),
        ("nested objects", nested(b"{\"a\":", b"}", 10_000, b"1")),
        ("nested 100", nested(b"{\"a\":", b"}", 100, b"1")),
        ("invalid UTF-8", b"{\"id\": \"\xff\xfe\", \"type\": \"\xc3\x28\"}".to_vec()),
        ("raw bytes", vec![0x00, 0x9f, 0x92, 0x96, 0xff, 0x00]),
        ("a raw NUL in text", b"plain \x00 text".to_vec()),
        ("a BOM", b"\xef\xbb\xbf{}".to_vec()),
        ("lone surrogate", br#"{"id": "\ud800", "type": "\udfff"}"#.to_vec()),
        ("escaped NUL value", br#"{"text": "a\u0000b"}"#.to_vec()),
        ("escaped NUL key", br#"{"a\u0000b": 1}"#.to_vec()),
        ("escaped NUL id and type", br#"{"id": "evt_\u0000", "type": "charge.\u0000"}"#.to_vec()),
        ("escaped NUL sender", br#"{"sender": {"login": "oc\u0000to"}}"#.to_vec()),
        ("ids of the wrong type", br#"{"id": 5, "type": [], "sender": {"login": 7}}"#.to_vec()),
        ("a long id", format!(r#"{{"id": "{}", "type": "{}"}}"#, "i".repeat(300), "t".repeat(300)).into_bytes()),
        ("control characters", b"{\"type\": \"a\x01\x1b[31mb\", \"id\": \"\\u001b\"}".to_vec()),
        ("duplicate keys", br#"{"id": "a", "id": "b"}"#.to_vec()),
        ("trailing garbage", br#"{"id": "a"} {}"#.to_vec()),
        ("NaN", br#"{"id": NaN}"#.to_vec()),
        ("form data", b"a=1&b=2".to_vec()),
        ("binary 64 KiB", (0..65_536u32).map(|i| (i * 7 % 256) as u8).collect()),
    ]
}

#[actix_web::test]
async fn fuzzed_deliveries_correctly_signed_or_not_are_never_server_errors() {
    let (app, owner, ep) = app_with_key().await;
    let mut hooks = Vec::new();
    for body in [
        json!({"source_type": "generic", "queue": "inbox"}),
        json!({"source_type": "github", "queue": "q", "trusted_actors": {"logins": ["octo"]}}),
        json!({"source_type": "gitea", "queue": "q", "trusted_actors": {"allow_all": true}}),
        json!({"source_type": "stripe", "queue": "q"}),
        json!({"source_type": "standard", "queue": "q"}),
        json!({"source_type": "stripe", "queue": "q", "unverified": true}),
    ] {
        let source = body["source_type"].as_str().unwrap().to_owned();
        let w = webhook(&app, &owner, &ep, body).await;
        hooks.push((source, w));
    }
    let mut failures = Vec::new();
    for (name, body) in fuzz_bodies() {
        for (source, w) in &hooks {
            let path = path_of(w);
            let mut attempts: Vec<(&str, Headers)> = vec![("unsigned", vec![h("content-type", "application/json")])];
            if let Some(secret) = w["signing_secret"].as_str() {
                attempts.push(("signed", signed(source, secret, &body)));
            }
            for (how, headers) in attempts {
                let what = format!("{name} to {source} ({how})");
                let (s, b) = deliver(&app, &path, &headers, &body).await;
                if s.is_server_error() {
                    failures.push(format!("{what}: {s} {b}"));
                } else {
                    expect_no_server_error(&(s, b), &what);
                }
            }
        }
        assert_alive(&app).await;
    }
    assert!(failures.is_empty(), "server errors:\n{}", failures.join("\n"));
}

#[actix_web::test]
async fn a_body_label_holding_nul_is_recorded_instead_of_failing_the_insert() {
    // Stripe's `id` and `type` come from the JSON body, where `\u0000` is valid, and used
    // to reach a text column as is: a 500 for anyone holding the ingest URL.
    let (app, owner, ep) = app_with_key().await;
    let w = webhook(&app, &owner, &ep, json!({"source_type": "stripe", "queue": "q", "unverified": true})).await;
    let drop_all = json!({"rules": [rule("drop-all", json!({"pointer": "", "exists": true}), json!({"drop": true}))]});
    let rules_path = format!("{WEBHOOKS}/{}/rules", w["id"].as_str().unwrap());
    let (s, b) = app.call("PUT", &rules_path, Some(&owner.token), Some(&drop_all)).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let body = br#"{"id": "evt_\u0000", "type": "charge.\u0000"}"#;
    let (s, answer) = deliver(&app, &path_of(&w), &[], body).await;
    assert_eq!((s, answer["disposition"].as_str()), (StatusCode::ACCEPTED, Some("dropped")), "{answer}");
    let (s, again) = deliver(&app, &path_of(&w), &[], body).await;
    assert_eq!((s, again["duplicate"].as_bool()), (StatusCode::ACCEPTED, Some(true)), "{again}");
    let stored = "SELECT count(*) FROM events WHERE external_id = 'evt_' || chr(65533) \
                  AND event_type = 'charge.' || chr(65533)";
    assert_eq!(app.db.count(stored).await, 1);
}

#[actix_web::test]
async fn fuzzed_delivery_headers_are_never_server_errors() {
    let (app, owner, ep) = app_with_key().await;
    let generic = webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "inbox"})).await;
    let github = webhook(
        &app,
        &owner,
        &ep,
        json!({"source_type": "github", "queue": "q", "trusted_actors": {"allow_all": true}}),
    )
    .await;
    let body: &[u8] = br#"{"sender":{"login":"octo"}}"#;
    let many: Headers = (0..80).map(|i| ("X-Filler", format!("value {i}").into_bytes())).collect();
    let header_sets: Vec<(&str, Headers)> = vec![
        ("no content type", vec![]),
        ("text/plain", vec![h("content-type", "text/plain")]),
        ("form", vec![h("content-type", "application/x-www-form-urlencoded")]),
        ("multipart", vec![h("content-type", "multipart/form-data; boundary=x")]),
        ("utf-16 charset", vec![h("content-type", "application/json; charset=utf-16")]),
        ("garbage content type", vec![h("content-type", ";;;==")]),
        ("gzip that is not gzip", vec![h("content-encoding", "gzip")]),
        ("unknown encoding", vec![h("content-encoding", "br, zstd, x-nope")]),
        ("long delivery id", vec![h("X-Delivery-Id", "d".repeat(300)), h("X-GitHub-Delivery", "d".repeat(300))]),
        ("empty labels", vec![h("X-Delivery-Id", ""), h("X-Event", ""), h("X-GitHub-Event", "")]),
        (
            "non-UTF-8 labels",
            vec![h("X-Delivery-Id", b"\xff\xfe"), h("X-Event", b"\xc3\x28"), h("X-GitHub-Event", b"\xff")],
        ),
        ("tabs and obs-text", vec![h("X-Event", b"a\tb\x80c"), h("X-GitHub-Event", "\t")]),
        ("a 16 KiB header", vec![h("X-Big", "b".repeat(16 * 1024))]),
        ("many headers", many),
        (
            "repeated labels",
            vec![h("X-Delivery-Id", "a"), h("X-Delivery-Id", "b"), h("X-Event", "x"), h("X-Event", "y")],
        ),
        ("credential-looking", vec![h("Authorization", "Bearer x"), h("X-Api-Token", "t"), h("Cookie", "c=1")]),
    ];
    for (name, headers) in &header_sets {
        for (source, w) in [("generic", &generic), ("github", &github)] {
            let mut with_sig = headers.clone();
            with_sig.push(h("X-Hub-Signature-256", github_sig(secret_of(&github), body)));
            for (how, hs) in [("as is", headers.clone()), ("with a good signature", with_sig)] {
                let got = deliver(&app, &path_of(w), &hs, body).await;
                expect_no_server_error(&got, &format!("{name} to {source} ({how})"));
            }
        }
    }
    // What no client library will send: control bytes, a NUL, a line without a colon, a
    // folded line, a huge header, hundreds of headers. The HTTP layer refuses these itself.
    let path = path_of(&generic);
    let raw: Vec<(&str, Vec<u8>)> = vec![
        ("control bytes", b"X-Event: a\x01\x1b[31mb\x7f\r\n".to_vec()),
        ("a NUL", b"X-Delivery-Id: a\x00b\r\n".to_vec()),
        ("no colon", b"X-Event\r\n".to_vec()),
        ("a folded line", b"X-Event: a\r\n folded\r\n".to_vec()),
        ("a 100 KiB header", [b"X-Big: ".to_vec(), vec![b'b'; 100 * 1024], b"\r\n".to_vec()].concat()),
        ("300 headers", (0..300).flat_map(|i| format!("X-F{i}: v\r\n").into_bytes()).collect()),
    ];
    for (name, extra) in raw {
        let mut head =
            format!("POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n", body.len())
                .into_bytes();
        head.extend_from_slice(&extra);
        head.extend_from_slice(b"\r\n");
        let (s, b) = raw_http(&app, head, vec![body.to_vec()]).await;
        assert!(!s.is_server_error(), "{name}: answered {s}: {b}");
    }
    assert_alive(&app).await;
    // Nothing was stored with a credential in it.
    assert_eq!(
        app.db.count("SELECT count(*) FROM events WHERE headers::text ~ '(Bearer x|\"t\"|c=1|sha256=)'").await,
        0
    );
}

// ---------------------------------------------------------------------------------
// The operator's webhook routes
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn creating_a_webhook_with_bad_input_is_refused_with_the_right_status_and_creates_nothing() {
    let (app, owner, ep) = app_with_key().await;
    let stranger = app.owner("b@example.com").await;
    let strangers_ep = app.agent(stranger.scope, "theirs").await;
    app.owner("boss@example.com").await;
    let (team, _, team_scope) = app.store.create_team("crew", "boss@example.com").await.unwrap();
    app.store.add_team_member(team, owner.id, TeamRole::Member).await.unwrap();
    let team_ep = app.agent(team_scope, "crew-worker").await;
    let before = IntakeSnapshot::take(&app).await;
    let ep_id = ep.id.to_string();
    let with = |extra: Value| {
        let mut body = json!({"endpoint_id": ep_id, "source_type": "github", "queue": "q"});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };
    let too_many: Vec<String> = (0..257).map(|i| format!("u{i}")).collect();
    let invalid = [
        with(json!({"source_type": "svn"})),
        with(json!({"source_type": "GitHub"})),
        with(json!({"source_type": ""})),
        with(json!({"source_type": null})),
        with(json!({"source_type": 3})),
        with(json!({"queue": ""})),
        with(json!({"queue": "Bad Queue"})),
        with(json!({"queue": "-lead"})),
        with(json!({"queue": "q".repeat(65)})),
        with(json!({"queue": "a\u{0}b"})),
        with(json!({"queue": "quarantine"})),
        with(json!({"queue": null})),
        with(json!({"max_attempts": 0})),
        with(json!({"max_attempts": 101})),
        with(json!({"max_attempts": -1})),
        with(json!({"max_attempts": "5"})),
        with(json!({"max_attempts": 1e10})),
        with(json!({"source_type": "generic", "secret": "s"})),
        with(json!({"source_type": "generic", "unverified": true})),
        with(json!({"source_type": "stripe", "unverified": true, "secret": "s"})),
        with(json!({"secret": ""})),
        with(json!({"secret": "s".repeat(513)})),
        with(json!({"secret": "a\u{0}b"})),
        with(json!({"secret": 42})),
        with(json!({"unverified": "yes"})),
        with(json!({"trusted_actors": {"allow_all": false}})),
        with(json!({"trusted_actors": {"logins": [""]}})),
        with(json!({"trusted_actors": {"logins": ["a\u{0}"]}})),
        with(json!({"trusted_actors": {"logins": ["l".repeat(101)]}})),
        with(json!({"trusted_actors": {"logins": too_many}})),
        with(json!({"trusted_actors": {"logins": "octo"}})),
        with(json!({"trusted_actors": {"logins": [7]}})),
        with(json!({"trusted_actors": {"users": ["octo"]}})),
        with(json!({"trusted_actors": {"logins": ["a"], "allow_all": true}})),
        with(json!({"trusted_actors": ["octo"]})),
        with(json!({"trusted_actors": "everyone"})),
        with(json!({"endpoint_id": "ep_nope"})),
        with(json!({"endpoint_id": null})),
        with(json!({"surprise": 1})),
        json!({"source_type": "github", "queue": "q"}),
        json!([]),
    ];
    for body in &invalid {
        let got = app.post(WEBHOOKS, &owner.token, body.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &body.to_string());
    }
    let got = app.call_raw("POST", WEBHOOKS, Some(&owner.token), "application/json", b"{\"queue\": ".to_vec()).await;
    expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", "truncated JSON");
    // Someone else's endpoint, or none, is unknown; a team member who is not its admin is forbidden.
    let reference = app
        .post(
            WEBHOOKS,
            &owner.token,
            with(json!({"endpoint_id": switchboard::domain::ids::EndpointId::new().to_string()})),
        )
        .await;
    expect_error(&reference, StatusCode::NOT_FOUND, "not_found", "unknown endpoint");
    let got = app.post(WEBHOOKS, &owner.token, with(json!({"endpoint_id": strangers_ep.id.to_string()}))).await;
    expect_error(&got, StatusCode::NOT_FOUND, "not_found", "foreign endpoint");
    assert_eq!(got.1, reference.1, "a foreign endpoint answers like an unknown one");
    let got = app.post(WEBHOOKS, &owner.token, with(json!({"endpoint_id": team_ep.id.to_string()}))).await;
    expect_error(&got, StatusCode::FORBIDDEN, "forbidden", "team member, not admin");
    // No operator credential at all.
    let got = app.call("POST", WEBHOOKS, None, Some(&with(json!({})))).await;
    expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", "no token");
    let got = app.post(WEBHOOKS, &ep.token, with(json!({}))).await;
    expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", "an endpoint token");
    before.assert_unchanged(&app, "refused webhook creations").await;
    assert_eq!(webhook_count(&app).await, 0);
}

#[actix_web::test]
async fn without_an_encryption_key_a_signed_webhook_is_a_conflict_and_creates_nothing() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let before = IntakeSnapshot::take(&app).await;
    for body in [
        json!({"source_type": "github", "queue": "q"}),
        json!({"source_type": "gitea", "queue": "q", "trusted_actors": {"allow_all": true}}),
        json!({"source_type": "stripe", "queue": "q", "secret": "whsec_from_stripe"}),
        json!({"source_type": "standard", "queue": "q", "unverified": false}),
    ] {
        let mut body = body;
        body["endpoint_id"] = json!(ep.id.to_string());
        let got = app.post(WEBHOOKS, &owner.token, body.clone()).await;
        // SPEC 13: the missing key has a code of its own (still 409).
        expect_error(&got, StatusCode::CONFLICT, "encryption_required", &body.to_string());
        assert!(got.1["error"]["message"].as_str().unwrap().contains("SWITCHBOARD_SECRET_ENCRYPTION_KEY"), "{}", got.1);
    }
    before.assert_unchanged(&app, "no key").await;
    assert_eq!(webhook_count(&app).await, 0);
    // What needs no secret still works without a key.
    for body in [
        json!({"source_type": "generic", "queue": "q"}),
        json!({"source_type": "github", "queue": "q", "unverified": true}),
    ] {
        let w = webhook(&app, &owner, &ep, body).await;
        assert!(w["signing_secret"].is_null());
    }
}

// ---------------------------------------------------------------------------------
// Routing rules: malformed bodies name the rule; foreign webhooks are unknown
// ---------------------------------------------------------------------------------

fn rule(id: &str, matcher: Value, action: Value) -> Value {
    json!({"id": id, "match": matcher, "action": action})
}

/// Malformed rule sets, each with the text its refusal must name.
fn malformed_rules() -> Vec<(Value, String)> {
    let ok_match = json!({"header": "X-Event", "exists": true});
    let drop = json!({"drop": true});
    let ep = switchboard::domain::ids::EndpointId::new().to_string();
    let deep = (0..9).fold(ok_match.clone(), |inner, _| json!({"any": [inner]}));
    let one = |id: &str, matcher: Value, action: Value| {
        (json!({"rules": [rule(id, matcher, action)]}), format!("rule \"{id}\""))
    };
    let mut cases = vec![
        one("bad-pointer", json!({"pointer": "kind", "equals": 1}), drop.clone()),
        one("bad-tilde", json!({"pointer": "/a~2", "exists": true}), drop.clone()),
        one("bad-header", json!({"header": "X Event", "equals": "a"}), drop.clone()),
        one("header-number", json!({"header": "X-Event", "equals": 5}), drop.clone()),
        one("two-tests", json!({"header": "X-Event", "equals": "a", "exists": true}), drop.clone()),
        one("two-targets", json!({"header": "X-Event", "pointer": "/a", "exists": true}), drop.clone()),
        one("no-test", json!({"header": "X-Event"}), drop.clone()),
        one("stars", json!({"pointer": "/a", "glob": "*".repeat(17)}), drop.clone()),
        one("bad-glob", json!({"pointer": "/a", "glob": "[a"}), drop.clone()),
        one("empty-all", json!({"all": []}), drop.clone()),
        one("empty-any", json!({"any": []}), drop.clone()),
        one("too-deep", deep, drop.clone()),
        one("two-routes", ok_match.clone(), json!({"drop": true, "queue": "q"})),
        one("no-route", ok_match.clone(), json!({})),
        one("drop-false", ok_match.clone(), json!({"drop": false})),
        one("reserved", ok_match.clone(), json!({"queue": "quarantine"})),
        one("bad-queue", ok_match.clone(), json!({"queue": "Bad Queue"})),
        one("bad-endpoint", ok_match.clone(), json!({"queue": "q", "endpoints": ["nope"]})),
        one("twice", ok_match.clone(), json!({"queue": "q", "endpoints": [ep, ep]})),
        one(
            "fan-wide",
            ok_match.clone(),
            json!({"queue": "q", "endpoints": (0..17).map(|_| switchboard::domain::ids::EndpointId::new().to_string()).collect::<Vec<_>>()}),
        ),
        one("severity-alone", ok_match.clone(), json!({"drop": true, "notify_severity": "high"})),
        one("bad-severity", ok_match.clone(), json!({"drop": true, "notify": "phone", "notify_severity": "loud"})),
        one("empty-sink", ok_match.clone(), json!({"drop": true, "notify": ""})),
        one("huge", json!({"pointer": "/a", "equals": "x".repeat(5000)}), drop.clone()),
        (
            json!({"rules": [rule("same", ok_match.clone(), drop.clone()), rule("same", ok_match.clone(), drop.clone())]}),
            "rule \"same\"".into(),
        ),
        (
            json!({"rules": [{"id": "extra", "match": ok_match, "action": drop, "priority": 1}]}),
            "rule \"extra\"".into(),
        ),
        (
            json!({"rules": [rule("bad id!", json!({"header": "X", "exists": true}), json!({"drop": true}))]}),
            "rule at index 0".into(),
        ),
        (
            json!({"rules": [{"match": {"header": "X", "exists": true}, "action": {"drop": true}}]}),
            "rule at index 0".into(),
        ),
        (json!({"rules": [null]}), "rule at index 0".into()),
        (
            json!({"rules": [rule("ok", json!({"header": "X", "exists": true}), json!({"drop": true})), 5]}),
            "rule at index 1".into(),
        ),
    ];
    // U+0000 never reaches the rules: the JSON body extractor refuses it first, on every route.
    for (id, matcher, action) in [
        ("nul-equals", json!({"pointer": "/a", "equals": "a\u{0}"}), drop.clone()),
        ("nul-work", ok_match.clone(), json!({"queue": "q", "work_order": "a\u{0}"})),
    ] {
        cases.push((json!({"rules": [rule(id, matcher, action)]}), "body".into()));
    }
    let too_many: Vec<Value> = (0..33)
        .map(|i| rule(&format!("r{i}"), json!({"header": "X", "exists": true}), json!({"drop": true})))
        .collect();
    cases.push((json!({"rules": too_many}), "rules".into()));
    cases
}

#[actix_web::test]
async fn malformed_rules_are_refused_naming_the_rule_and_change_nothing() {
    let (app, owner, ep) = app_with_key().await;
    let w = webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "inbox"})).await;
    let saved = json!({"rules": [rule("keep", json!({"header": "X-Event", "equals": "ping"}), json!({"drop": true}))]});
    let rules_path = format!("{WEBHOOKS}/{}/rules", w["id"].as_str().unwrap());
    let test_path = format!("{rules_path}/test");
    let (s, b) = app.call("PUT", &rules_path, Some(&owner.token), Some(&saved)).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let before = IntakeSnapshot::take(&app).await;
    for (body, names) in malformed_rules() {
        let what = body.to_string();
        let what = &what[..what.len().min(200)];
        let got = app.call("PUT", &rules_path, Some(&owner.token), Some(&body)).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("PUT {what}"));
        let message = got.1["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(&names), "PUT {what}: names {names}: {message}");
        // The dry run refuses the same rules the same way.
        let trial = json!({"rules": body["rules"], "body": {"kind": "build"}});
        let got = app.post(&test_path, &owner.token, trial).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("test {what}"));
        let message = got.1["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(&names), "test {what}: names {names}: {message}");
    }
    // Bodies that are not a rule set at all.
    for body in
        [json!([]), json!({}), json!({"rules": {}}), json!({"rules": "all"}), json!({"rules": [], "default": 1})]
    {
        let got = app.call("PUT", &rules_path, Some(&owner.token), Some(&body)).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &body.to_string());
        assert!(got.1["error"]["message"].as_str().unwrap().starts_with("rules"), "{body}: {}", got.1);
    }
    for body in [
        json!({"rules": {}}),
        json!({"rules": "all"}),
        json!({"headers": {"X-Event": 5}}),
        json!({"headers": ["X-Event"]}),
        json!({"body": {}, "surprise": true}),
        json!([]),
    ] {
        let got = app.post(&test_path, &owner.token, body.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("test {body}"));
    }
    for (method, path) in [("PUT", &rules_path), ("POST", &test_path)] {
        for raw in [&b"{"[..], b"not json", b"{\"rules\": [}", b"\xff\xfe"] {
            let got = app.call_raw(method, path, Some(&owner.token), "application/json", raw.to_vec()).await;
            expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("{method} {path}"));
        }
    }
    before.assert_unchanged(&app, "malformed rules").await;
    let (_, list) = app.get(WEBHOOKS, &owner.token).await;
    assert_eq!(list["webhooks"][0]["rules"], saved, "the saved rules are untouched");
}

#[actix_web::test]
async fn rules_of_a_foreign_or_unknown_webhook_are_not_found_and_a_member_may_not_change_them() {
    let (app, owner, ep) = app_with_key().await;
    let mine = webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "inbox"})).await;
    let stranger = app.owner("b@example.com").await;
    let boss = app.owner("boss@example.com").await;
    let (team, _, team_scope) = app.store.create_team("crew", "boss@example.com").await.unwrap();
    app.store.add_team_member(team, stranger.id, TeamRole::Member).await.unwrap();
    let team_ep = app.agent(team_scope, "crew-worker").await;
    let teams = {
        let (s, w) = app
            .post(
                WEBHOOKS,
                &boss.token,
                json!({"endpoint_id": team_ep.id.to_string(), "source_type": "generic", "queue": "q"}),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{w}");
        w
    };
    let before = IntakeSnapshot::take(&app).await;
    let good = json!({"rules": [rule("r", json!({"header": "X", "exists": true}), json!({"drop": true}))]});
    let mine_id = mine["id"].as_str().unwrap();
    let ids = [
        mine_id.to_owned(),
        WebhookId::new().to_string(),
        "wh_nope".to_owned(),
        ep.id.to_string(),
        mine_id.replacen("wh_", "", 1),
        "%00".to_owned(),
    ];
    let reference =
        app.call("PUT", &format!("{WEBHOOKS}/{}/rules", WebhookId::new()), Some(&stranger.token), Some(&good)).await;
    expect_error(&reference, StatusCode::NOT_FOUND, "not_found", "unknown webhook");
    for id in &ids {
        let got = app.call("PUT", &format!("{WEBHOOKS}/{id}/rules"), Some(&stranger.token), Some(&good)).await;
        expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("PUT {id}"));
        assert_eq!(got.1, reference.1, "PUT {id}: answers like an unknown webhook");
        let got = app.post(&format!("{WEBHOOKS}/{id}/rules/test"), &stranger.token, json!({"body": {}})).await;
        expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("test {id}"));
        // Malformed rules on a foreign webhook are still just unknown: nothing is revealed.
        let got =
            app.call("PUT", &format!("{WEBHOOKS}/{id}/rules"), Some(&stranger.token), Some(&json!({"rules": 1}))).await;
        expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("PUT malformed {id}"));
    }
    // A team member sees the team's webhook and may dry-run it, but not change its rules.
    let teams_rules = format!("{WEBHOOKS}/{}/rules", teams["id"].as_str().unwrap());
    let got = app.call("PUT", &teams_rules, Some(&stranger.token), Some(&good)).await;
    expect_error(&got, StatusCode::FORBIDDEN, "forbidden", "member changes rules");
    let (s, b) = app.post(&format!("{teams_rules}/test"), &stranger.token, json!({"body": {}})).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    before.assert_unchanged(&app, "foreign rules").await;
}
