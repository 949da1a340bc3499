//! Bad names on every route: a path segment the store cannot hold (NUL, bytes that are
//! not UTF-8) is a client error, never a 500 and never an ERROR in the log; 404 where
//! the segment is an id (a malformed id is an unknown id), 422 `invalid_argument` where
//! it is a name. Query-string values that reach the store likewise.
//!
//! The walk runs the real binary (`switchboard serve`, every log level on) so that its
//! whole output can be searched for ERROR lines afterwards, and takes its routes from
//! the running app's own OpenAPI document and from the Board's route table, so a route
//! added later is walked too.

use std::time::Duration;

use awc::http::StatusCode;
use serde_json::{Value, json};
use switchboard::domain::grants::Verb;
use switchboard::domain::passwords::hash_password;
use switchboard::store::endpoints::VendEndpoint;
use switchboard::store::signals::Emitter;

use super::expect_error;
use crate::board::PASSWORD;
use crate::harness::{TestApp, TestDb};
use crate::sinks::logs::Served;

/// Path segments no statement can hold as sent: NUL, bytes that are not UTF-8 (alone,
/// and inside a name), and both in the middle of otherwise fine text.
const BAD_SEGMENTS: [&str; 5] = ["%00", "%FF", "a%00b", "ok%C3%28", "%FE%FF"];

/// One answer: status, raw body.
struct Answer {
    status: StatusCode,
    body: String,
}

fn client() -> awc::Client {
    awc::Client::builder().disable_redirects().timeout(Duration::from_secs(30)).finish()
}

/// Sends `method url` with optional headers and body (JSON or a form).
async fn send(method: &str, url: &str, headers: &[(&str, String)], body: Option<(&str, String)>) -> Answer {
    let mut req = client().request(method.parse().unwrap(), url);
    for (name, value) in headers {
        req = req.insert_header((*name, value.clone()));
    }
    let mut resp = match body {
        Some((content_type, body)) => req.insert_header(("content-type", content_type)).send_body(body).await,
        None => req.send().await,
    }
    .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let bytes = resp.body().limit(4 << 20).await.unwrap_or_default();
    Answer { status: resp.status(), body: String::from_utf8_lossy(&bytes).into_owned() }
}

/// `pattern` with its `index`-th `{…}` parameter replaced by `bad` and every other one
/// by `other(name)`.
fn fill(pattern: &str, index: usize, bad: &str, other: impl Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut rest = pattern;
    let mut n = 0;
    while let Some((head, tail)) = rest.split_once('{') {
        let (name, tail) = tail.split_once('}').expect("a closed parameter");
        out.push_str(head);
        out.push_str(&if n == index { bad.to_owned() } else { other(name) });
        n += 1;
        rest = tail;
    }
    out.push_str(rest);
    out
}

fn params(pattern: &str) -> usize {
    pattern.matches('{').count()
}

/// A Board session on `base`: its `Cookie` header and its CSRF token.
async fn board_session(base: &str, email: &str) -> (String, String) {
    let session = testkit::board::sign_in(&testkit::board::browser(), base, email, PASSWORD).await.unwrap();
    (session.cookie, session.csrf)
}

/// Every request the walk made that answered 5xx, or not what it had to, as lines for
/// the failure message (collected, so that one failure shows them all).
#[derive(Default)]
struct Walk {
    asked: usize,
    wrong: Vec<String>,
}

impl Walk {
    fn note(&mut self, what: String, a: &Answer) {
        self.asked += 1;
        if a.status.is_server_error() {
            self.wrong.push(format!("{what} → {}: {}", a.status, a.body));
        }
    }

    fn expect(&mut self, what: String, a: &Answer, status: StatusCode) {
        self.note(what.clone(), a);
        if a.status != status && !a.status.is_server_error() {
            self.wrong.push(format!("{what} → {} (not {status}): {}", a.status, a.body));
        }
    }
}

#[actix_web::test]
async fn a_bad_segment_or_query_value_on_any_route_is_a_client_error_and_logs_no_error() {
    let db = TestDb::new().await;
    let store = db.store(Emitter::none());
    let email = "names@example.com";
    let human = store.create_human(email, "Names", Some(hash_password(PASSWORD).unwrap())).await.unwrap();
    let operator = human.token.clone();
    let vended = store
        .vend_endpoint(VendEndpoint {
            scope: human.scope,
            slug: "walker".into(),
            grants: Verb::ALL.to_vec(),
            default_lease_seconds: None,
            expires_at: None,
        })
        .await
        .unwrap();
    let (agent, endpoint_id) = (vended.token.clone(), vended.endpoint.id.to_string());
    let served = Served::start_with(&db, &[("SWITCHBOARD_LOG_FORMAT", "json")]);
    let base = served.base.clone();
    let mut walk = Walk::default();

    // The API, as its own document lists it: every path parameter in turn, and every
    // query parameter, given a bad value.
    let doc = send("GET", &format!("{base}/api/openapi.json"), &[], None).await;
    assert_eq!(doc.status, StatusCode::OK);
    let doc: Value = serde_json::from_str(&doc.body).unwrap();
    let paths = doc["paths"].as_object().expect("paths");
    assert!(paths.len() > 40, "the whole document: {} paths", paths.len());
    // The other parameters of a route hold something that extracts, so that the bad one
    // is the one judged: the real endpoint on an endpoint's routes, else any name.
    let other = |pattern: &str| {
        let endpoint_id = endpoint_id.clone();
        let on_endpoint = pattern.starts_with("/api/v1/endpoints/");
        move |name: &str| if on_endpoint && name == "id" { endpoint_id.clone() } else { "inbox".to_owned() }
    };
    for (pattern, item) in paths {
        let bearer = if pattern.starts_with("/api/v1/agent/") { &agent } else { &operator };
        let headers = [("authorization", format!("Bearer {bearer}"))];
        for (method, op) in item.as_object().unwrap() {
            let method = method.to_uppercase();
            let body =
                matches!(method.as_str(), "POST" | "PUT" | "PATCH").then(|| ("application/json", "{}".to_owned()));
            for index in 0..params(pattern) {
                for bad in BAD_SEGMENTS {
                    let path = fill(pattern, index, bad, other(pattern));
                    let a = send(&method, &format!("{base}{path}"), &headers, body.clone()).await;
                    walk.note(format!("{method} {path}"), &a);
                }
            }
            let queries = op["parameters"].as_array().into_iter().flatten().filter(|p| p["in"] == "query");
            for q in queries {
                let name = q["name"].as_str().unwrap();
                for bad in ["%00", "a%00b", "%FF"] {
                    let path = fill(pattern, usize::MAX, "", other(pattern));
                    let path = format!("{path}?{name}={bad}");
                    let a = send(&method, &format!("{base}{path}"), &headers, body.clone()).await;
                    walk.note(format!("{method} {path}"), &a);
                }
            }
        }
    }

    // The Board, from its route table: every `{…}` segment bad, signed in, POSTs with
    // the session's CSRF token; and the query strings it reads.
    let (cookie, csrf) = board_session(&base, email).await;
    for row in switchboard::board::table().iter().map(|e| e.row()) {
        let method = row.method.as_str();
        for index in 0..params(row.path) {
            for bad in BAD_SEGMENTS {
                let path = fill(row.path, index, bad, |_| "x".to_owned());
                let form = (method == "POST").then(|| {
                    ("application/x-www-form-urlencoded", serde_urlencoded::to_string([("csrf_token", &csrf)]).unwrap())
                });
                let a = send(method, &format!("{base}{path}"), &[("cookie", cookie.clone())], form).await;
                walk.note(format!("Board {method} {path}"), &a);
            }
        }
    }
    for query in ["q=%00", "q=a%00b", "q=%FF", "filter=%00", "limit=%00", "filter=dead&q=%00"] {
        let a = send("GET", &format!("{base}/todos?{query}"), &[("cookie", cookie.clone())], None).await;
        walk.note(format!("Board GET /todos?{query}"), &a);
    }
    for query in ["next=%00", "next=/todos%00", "next=%FF"] {
        let a = send("GET", &format!("{base}/login?{query}"), &[], None).await;
        walk.note(format!("Board GET /login?{query}"), &a);
    }

    // MCP and intake: the slug and the ingest token.
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "switchboard-tests", "version": "0"}}})
    .to_string();
    for bad in BAD_SEGMENTS {
        let headers = [
            ("authorization", format!("Bearer {agent}")),
            ("accept", "application/json, text/event-stream".to_owned()),
        ];
        for method in ["POST", "GET", "DELETE"] {
            let body = (method == "POST").then(|| ("application/json", initialize.clone()));
            let a = send(method, &format!("{base}/mcp/{bad}"), &headers, body).await;
            walk.expect(format!("MCP {method} /mcp/{bad}"), &a, StatusCode::UNPROCESSABLE_ENTITY);
        }
        // An ingest token is no name: one that cannot be is an unknown token.
        let a = send("POST", &format!("{base}/webhooks/w/{bad}"), &[], Some(("application/json", "{}".into()))).await;
        walk.expect(format!("intake POST /webhooks/w/{bad}"), &a, StatusCode::NOT_FOUND);
    }

    let logs = served.stop();
    let lines: Vec<Value> = logs.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let errors: Vec<String> = lines.iter().filter(|l| l["level"] == "ERROR").map(Value::to_string).collect();
    assert!(
        walk.wrong.is_empty() && errors.is_empty(),
        "server errors and wrong answers:\n{}\n\nERROR lines in the log:\n{}",
        walk.wrong.join("\n"),
        errors.join("\n")
    );
    assert!(walk.asked > 400, "the walk asked {} times", walk.asked);
    assert!(lines.len() > 1000, "JSON log lines at every level: {}", lines.len());
}

#[actix_web::test]
async fn a_bad_sink_or_queue_name_is_invalid_argument_and_a_bad_id_is_not_found() {
    let (app, owner, ep) = TestApp::with_worker().await;
    for bad in BAD_SEGMENTS {
        for (method, path, body) in [
            ("DELETE", format!("/api/v1/agent/sinks/{bad}"), None),
            ("POST", format!("/api/v1/agent/sinks/{bad}/test"), None),
            ("PUT", format!("/api/v1/agent/sinks/{bad}/subscriptions"), Some(json!({"subscriptions": []}))),
            (
                "PUT",
                format!("/api/v1/agent/sinks/{bad}"),
                Some(json!({"kind": "gotify", "base_url": "https://203.0.113.10"})),
            ),
        ] {
            let got = app.call(method, &path, Some(&ep.token), body.as_ref()).await;
            expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("{method} {path}"));
        }
        let path = format!("/api/v1/endpoints/{}/queues/{bad}/admission", ep.id);
        let got = app.call("PUT", &path, Some(&owner.token), Some(&json!({"paused": true}))).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &path);
        for (method, path) in [
            ("GET", format!("/api/v1/agent/todos/{bad}")),
            ("GET", format!("/api/v1/todos/{bad}")),
            ("DELETE", format!("/api/v1/sinks/{bad}")),
            ("POST", format!("/api/v1/endpoints/{bad}/revoke")),
            ("PUT", format!("/api/v1/endpoints/{bad}/queues/inbox/admission")),
        ] {
            let token = if path.starts_with("/api/v1/agent/") { &ep.token } else { &owner.token };
            let got = app.call(method, &path, Some(token), Some(&json!({"paused": true}))).await;
            expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("{method} {path}"));
        }
    }
    // A query value holding NUL is refused before it reaches a statement.
    for path in ["/api/v1/agent/todos?queue=%00", "/api/v1/dead-letters?q=a%00b", "/api/v1/agent/todos?queue=a%00b"] {
        let token = if path.starts_with("/api/v1/agent/") { &ep.token } else { &owner.token };
        let got = app.get(path, token).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", path);
    }
    assert_eq!(app.db.count("SELECT count(*) FROM sinks").await, 0, "nothing was created");
}
