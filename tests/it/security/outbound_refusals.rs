//! Issue 37, finding 5: saving a URL must not tell "resolves to a private, loopback or
//! metadata address" from "does not resolve", or anyone who may save one (a human, an
//! agent with `notify_hooks` or `notifications`) maps internal DNS names. Every such
//! refusal answers the same status, code and message on every route that saves a URL
//! and in test sends; the cause is counted for the operator by reason.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use awc::http::StatusCode;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use switchboard::config::{CidrList, SecretKey};
use switchboard::outbound::Lookup;
use switchboard::outbound::refusal::FORBIDDEN_TARGET_MESSAGE;

use crate::harness::TestApp;

const KEY: SecretKey = SecretKey([5; 32]);
const METRICS: &str = "outbound-refusals-metrics-token-0123456789";

fn refused_series(reason: &str) -> String {
    format!(r#"switchboard_outbound_refused_total{{reason="{reason}"}}"#)
}

/// (status, code, message) of an answer.
fn shape(status: StatusCode, body: &Value) -> (u16, String, String) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (status.as_u16(), text(&body["error"]["code"]), text(&body["error"]["message"]))
}

#[actix_web::test]
async fn a_loopback_a_private_a_metadata_literal_and_a_name_that_does_not_resolve_are_refused_alike_everywhere() {
    // No allowlist: each of these is refused, each for its own reason.
    let app = TestApp::spawn_with(|s| {
        s.secret_encryption_key = Some(KEY);
        s.notify_hook_allow_cidrs = CidrList::default();
        s.metrics_token = Some(METRICS.into());
    })
    .await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let (s, c) = app
        .post(
            "/api/v1/connections",
            owner.token.as_str(),
            json!({"name": "phone", "kind": "gotify", "secret": "t", "base_url": "https://203.0.113.10"}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{c}");
    let cases = [
        ("https://127.0.0.1/x", "loopback"),
        ("https://10.1.2.3/x", "private"),
        ("https://169.254.169.254/latest/meta-data", "metadata"),
        ("https://nonexistent.invalid/x", "unresolved"),
    ];
    let expected = (422, "forbidden_target".to_owned(), FORBIDDEN_TARGET_MESSAGE.to_owned());
    for (url, reason) in cases {
        let routes: [(&str, String, &str, Value); 5] = [
            ("POST", format!("/api/v1/endpoints/{}/hooks", ep.id), owner.token.as_str(), json!({"url": url})),
            ("POST", "/api/v1/agent/hooks".into(), ep.token.as_str(), json!({"url": url})),
            (
                "POST",
                "/api/v1/connections".into(),
                owner.token.as_str(),
                json!({"name": "gotify", "kind": "gotify", "secret": "gt", "base_url": url}),
            ),
            (
                "POST",
                "/api/v1/connections".into(),
                owner.token.as_str(),
                json!({"name": "apprise", "kind": "apprise", "secret": "ak", "base_url": url}),
            ),
            (
                "POST",
                "/api/v1/connections".into(),
                owner.token.as_str(),
                json!({"name": "cairn", "kind": "cairn", "secret": "ct", "base_url": url}),
            ),
        ];
        for (method, path, token, body) in routes {
            let (status, answer) = app.call(method, &path, Some(token), Some(&body)).await;
            assert_eq!(shape(status, &answer), expected, "{method} {path} with {url}: {answer}");
        }
        assert_eq!(app.metric(METRICS, &refused_series(reason)).await, 5, "{url} counted under {reason}");
    }
    assert!(FORBIDDEN_TARGET_MESSAGE.contains("SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS"));
    for table in ["notify_hooks", "sinks"] {
        assert_eq!(app.db.count(&format!("SELECT count(*) FROM {table}")).await, 0, "{table}");
    }
    assert_eq!(app.db.count("SELECT count(*) FROM connections WHERE name <> 'phone'").await, 0);

    // A refusal of the URL's own text still says which rule, and is counted apart.
    let (status, answer) = app.post("/api/v1/agent/hooks", &ep.token, json!({"url": "http://203.0.113.9/x"})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_eq!(answer["error"]["code"], "invalid_argument");
    assert!(answer["error"]["message"].as_str().unwrap().contains("SWITCHBOARD_PUSH_ALLOW_HTTP"), "{answer}");
}

/// DNS that answers a public address the first time a name is asked (when its sink is
/// saved) and, later, `10.1.2.3` for `private.test` (and names under it) and no address at all for any
/// other name (when the test send dials).
#[derive(Clone, Default)]
struct Moves(Arc<Mutex<Vec<String>>>);

impl Lookup for Moves {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
        let mut asked = self.0.lock().unwrap();
        let first = !asked.iter().any(|h| h == host);
        asked.push(host.to_owned());
        let answer = match (first, host) {
            (true, _) => Ok(vec![SocketAddr::new("203.0.113.10".parse().unwrap(), port)]),
            (false, h) if h.ends_with("private.test") => Ok(vec![SocketAddr::new("10.1.2.3".parse().unwrap(), port)]),
            (false, _) => Err(io::Error::other("no such host")),
        };
        Box::pin(async move { answer })
    }
}

#[actix_web::test]
async fn a_test_send_reads_the_same_for_a_name_now_private_and_a_name_that_no_longer_resolves() {
    let moves = Moves::default();
    let app = TestApp::spawn_with_lookup(
        |s| {
            s.secret_encryption_key = Some(KEY);
            s.notify_hook_allow_cidrs = CidrList::default();
            s.metrics_token = Some(METRICS.into());
        },
        moves.clone(),
    )
    .await;
    let owner = app.owner("a@example.com").await;
    let mut answers = Vec::new();
    for host in ["private.test", "gone.test"] {
        let bound = json!({"name": host, "kind": "gotify", "secret": "tok", "base_url": format!("https://{host}")});
        let (s, c) = app.post("/api/v1/connections", owner.token.as_str(), bound).await;
        assert_eq!(s, StatusCode::CREATED, "public when saved: {c}");
        let body = json!({"name": host, "kind": "gotify", "connection_id": c["id"]});
        let (s, sink) = app.post("/api/v1/sinks", &owner.token, body).await;
        assert_eq!(s, StatusCode::CREATED, "{sink}");
        let (s, tested) = app
            .post(&format!("/api/v1/sinks/{}/test", sink["id"].as_str().unwrap()), owner.token.as_str(), json!({}))
            .await;
        assert_eq!(s, StatusCode::OK, "{tested}");
        answers.push(tested);
    }
    assert_eq!(answers[0], answers[1], "the same answer whatever the cause");
    assert_eq!(
        answers[0],
        json!({"ok": false, "error": {"code": "forbidden_target", "message": FORBIDDEN_TARGET_MESSAGE}}),
    );
    assert_eq!(app.metric(METRICS, &refused_series("private")).await, 1);
    assert_eq!(app.metric(METRICS, &refused_series("unresolved")).await, 1);
    assert_eq!(moves.0.lock().unwrap().len(), 4, "each name looked up when saved and when dialled");
}

#[actix_web::test]
async fn a_cairn_connection_test_and_an_agents_sink_test_read_as_the_operators_sink_test_whatever_the_cause() {
    let moves = Moves::default();
    let app = TestApp::spawn_with_lookup(
        |s| {
            s.secret_encryption_key = Some(KEY);
            s.notify_hook_allow_cidrs = CidrList::default();
            s.metrics_token = Some(METRICS.into());
        },
        moves.clone(),
    )
    .await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let expected = json!({"ok": false, "error": {"code": "forbidden_target", "message": FORBIDDEN_TARGET_MESSAGE}});
    for host in ["private.test", "gone.test"] {
        // Cairn: public when saved, then private or gone when the whoami dials.
        let cairn = json!({"name": format!("cairn-{host}"), "kind": "cairn", "secret": "cairn_pat_t",
                           "base_url": format!("https://cairn.{host}")});
        let (s, c) = app.post("/api/v1/connections", &owner.token, cairn).await;
        assert_eq!(s, StatusCode::CREATED, "{c}");
        let (s, tested) =
            app.post(&format!("/api/v1/connections/{}/test", c["id"].as_str().unwrap()), &owner.token, json!({})).await;
        assert_eq!(s, StatusCode::OK, "{tested}");
        assert_eq!((&tested["ok"], &tested["error"]), (&expected["ok"], &expected["error"]), "cairn via {host}");

        // An agent's sink on a gotify connection of its owner's: the same answer.
        let gotify = json!({"name": format!("gotify-{host}"), "kind": "gotify", "secret": "tok",
                            "base_url": format!("https://gotify.{host}")});
        let (s, g) = app.post("/api/v1/connections", &owner.token, gotify).await;
        assert_eq!(s, StatusCode::CREATED, "{g}");
        let name = format!("phone-{}", host.split('.').next().unwrap());
        let (s, sink) = app
            .call(
                "PUT",
                &format!("/api/v1/agent/sinks/{name}"),
                Some(&ep.token),
                Some(&json!({"connection_id": g["id"], "kind": "gotify"})),
            )
            .await;
        assert!(s.is_success(), "{sink}");
        let (s, tested) = app.post(&format!("/api/v1/agent/sinks/{name}/test"), &ep.token, json!({})).await;
        assert_eq!(s, StatusCode::OK, "{tested}");
        assert_eq!(tested, expected, "the agent's test via {host}: it learns no address class");
    }
    assert_eq!(app.metric(METRICS, &refused_series("private")).await, 2);
    assert_eq!(app.metric(METRICS, &refused_series("unresolved")).await, 2);
}
