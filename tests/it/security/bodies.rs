//! Intake, the APIs and the Board's forms read bodies with bounds: a body that stalls
//! after its headers is answered 408 once the configured read timeout has passed (not
//! held open forever), and an
//! oversized body is still 413. (That a declared length is not allocated up front is a
//! unit test of the reader, `http::body_read`.)

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard::http::intake::INGEST_BODY_LIMIT;

use crate::harness::TestApp;

/// The read timeout the stalling tests configure.
const SHORT: Duration = Duration::from_millis(300);

/// How long any answer may take before the test gives up (generous: a loaded machine).
const DEADLINE: Duration = Duration::from_secs(30);

/// One HTTP/1.1 answer read off a raw socket: status, JSON body, when it was complete.
struct Answer {
    status: u16,
    body: Value,
    after: Duration,
}

/// Writes `head` and then `body` (which may be shorter than the declared length), and
/// reads one answer: its head, then as many body bytes as it declares.
async fn raw_exchange(app: &TestApp, head: String, body: Vec<u8>) -> Answer {
    let addr = app.base.strip_prefix("http://").unwrap().to_owned();
    actix_rt::task::spawn_blocking(move || {
        let mut sock = std::net::TcpStream::connect(addr).expect("connect");
        sock.set_read_timeout(Some(DEADLINE)).unwrap();
        sock.set_write_timeout(Some(DEADLINE)).unwrap();
        let started = Instant::now();
        sock.write_all(head.as_bytes()).expect("write head");
        // The server may answer (and close) before reading all of it.
        let _ = sock.write_all(&body);
        let mut got = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            if let Some(answer) = complete(&got) {
                return Answer { after: started.elapsed(), ..answer };
            }
            match sock.read(&mut buf) {
                Ok(0) => panic!("closed without a whole answer: {:?}", String::from_utf8_lossy(&got)),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) => panic!("no answer within {DEADLINE:?} ({e}): {:?}", String::from_utf8_lossy(&got)),
            }
        }
    })
    .await
    .expect("raw request thread")
}

/// The answer in `bytes`, once its head and declared body have all arrived.
fn complete(bytes: &[u8]) -> Option<Answer> {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let length: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if body.len() < length {
        return None;
    }
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).expect("status line");
    let body = serde_json::from_str(&body[..length]).unwrap_or(Value::Null);
    Some(Answer { status, body, after: Duration::ZERO })
}

/// An app reading bodies for at most [`SHORT`], an owner, and a generic webhook's
/// ingest path.
async fn app_with_generic_webhook() -> (TestApp, crate::harness::Owner, crate::harness::Ep, String) {
    let app = TestApp::spawn_with(|s| s.body_read_timeout_ms = SHORT.as_millis() as u64).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let body = json!({"endpoint_id": ep.id.to_string(), "source_type": "generic", "queue": "inbox"});
    let (s, w) = app.post("/api/v1/webhooks", &owner.token, body).await;
    assert_eq!(s, 201, "{w}");
    let url = w["ingest_url"].as_str().unwrap();
    let path = url.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    (app, owner, ep, path)
}

#[actix_web::test]
async fn a_delivery_whose_body_stalls_after_the_headers_is_answered_408_once_the_read_timeout_passes() {
    let (app, _, _, path) = app_with_generic_webhook().await;
    let head =
        format!("POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n");
    let answer = raw_exchange(&app, head, br#"{"partial":"#.to_vec()).await;
    assert_eq!(answer.status, 408, "{}", answer.body);
    assert_eq!(answer.body["error"]["code"], "request_timeout", "{}", answer.body);
    assert!(answer.after >= SHORT, "answered after {:?}, before the timeout", answer.after);
    assert_eq!(app.db.count("SELECT count(*) FROM events").await, 0, "nothing recorded");
}

#[actix_web::test]
async fn an_api_body_that_stalls_after_the_headers_is_answered_408_too() {
    let (app, _, ep, _) = app_with_generic_webhook().await;
    let head = format!(
        "POST /api/v1/agent/todos HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
        ep.token
    );
    let answer = raw_exchange(&app, head, br#"{"queue":"#.to_vec()).await;
    assert_eq!(answer.status, 408, "{}", answer.body);
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 0);
}

#[actix_web::test]
async fn a_board_sign_in_form_that_stalls_after_the_headers_is_answered_408_too() {
    let (app, _, _, _) = app_with_generic_webhook().await;
    let head = "POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n\
                Content-Length: 1000\r\n\r\n"
        .to_owned();
    let answer = raw_exchange(&app, head, b"email=a%40example.com".to_vec()).await;
    assert_eq!(answer.status, 408);
}

#[actix_web::test]
async fn an_oversized_delivery_is_still_413_whether_declared_or_streamed() {
    let (app, _, _, path) = app_with_generic_webhook().await;
    let declared = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        INGEST_BODY_LIMIT + 1
    );
    let answer = raw_exchange(&app, declared, Vec::new()).await;
    assert_eq!(answer.status, 413, "{}", answer.body);

    // Chunked, so no length is declared: refused once the bytes read pass the limit.
    let mut chunked = Vec::new();
    let chunk = vec![b'a'; 64 * 1024];
    for _ in 0..(INGEST_BODY_LIMIT / chunk.len() + 1) {
        chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        chunked.extend_from_slice(&chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let head = format!("POST {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    let answer = raw_exchange(&app, head, chunked).await;
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert_eq!(app.db.count("SELECT count(*) FROM events").await, 0);
}
