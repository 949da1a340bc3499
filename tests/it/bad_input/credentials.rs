//! A refused credential (401) says which kind of token the route takes, and nothing about
//! the token or the name sent: the answer is byte for byte the same whether the token is
//! missing, unknown, revoked, of the other kind or another endpoint's, or (on
//! `/mcp/{slug}`) whether the slug names an endpoint at all.

use awc::http::StatusCode;

use crate::harness::TestApp;
use crate::mcp::{initialize_request, mcp_url};

/// One answer as it went over the wire: status, `WWW-Authenticate` and body bytes.
type Raw = (StatusCode, Option<String>, Vec<u8>);

async fn raw(app: &TestApp, method: &str, url: &str, token: Option<&str>, body: Option<String>) -> Raw {
    let m: awc::http::Method = method.parse().unwrap();
    let mut req = app
        .client
        .request(m, url)
        .insert_header(("Accept", "application/json, text/event-stream"))
        .insert_header(("Content-Type", "application/json"));
    if let Some(t) = token {
        req = req.insert_header(("Authorization", format!("Bearer {t}")));
    }
    let mut resp = match body {
        Some(b) => req.send_body(b).await,
        None => req.send().await,
    }
    .unwrap();
    let challenge = resp.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).map(str::to_owned);
    (resp.status(), challenge, resp.body().await.unwrap().to_vec())
}

/// Asserts every answer of `cases` is one and the same 401 whose message holds each of
/// `names`; returns that message.
#[track_caller]
fn one_answer(cases: &[(&str, Raw)], names: &[&str]) -> String {
    let (first_case, first) = &cases[0];
    for (case, got) in cases {
        assert_eq!(got, first, "{case} answers as {first_case}: {}", String::from_utf8_lossy(&got.2));
    }
    assert_eq!(first.0, StatusCode::UNAUTHORIZED, "{}", String::from_utf8_lossy(&first.2));
    assert_eq!(first.1.as_deref(), Some("Bearer"), "the WWW-Authenticate challenge stays");
    let body: serde_json::Value = serde_json::from_slice(&first.2).unwrap();
    assert_eq!(body["error"]["code"], "unauthenticated", "{body}");
    let message = body["error"]["message"].as_str().unwrap().to_owned();
    for name in names {
        assert!(message.contains(name), "the message names {name:?}: {message}");
    }
    message
}

#[actix_web::test]
async fn a_refused_credential_names_the_token_kind_the_route_takes_and_reads_the_same_for_every_cause() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let other = app.agent(owner.scope, "other").await;
    let revoked = app.agent(owner.scope, "gone").await;
    let (s, r) = app.call("POST", &format!("/api/v1/endpoints/{}/revoke", revoked.id), Some(&owner.token), None).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let unknown_sbk = "sbk_0000000000000000000000000000000000000000000";
    let unknown_sbo = "sbo_0000000000000000000000000000000000000000000";

    // Agent routes: an endpoint token.
    let url = format!("{}/api/v1/agent/todos", app.base);
    let mut agent = Vec::new();
    for (case, token) in [
        ("no token", None),
        ("an unknown token", Some(unknown_sbk)),
        ("a revoked endpoint's token", Some(revoked.token.as_str())),
        ("an operator token", Some(owner.token.as_str())),
        ("garbage", Some("garbage")),
    ] {
        agent.push((case, raw(&app, "GET", &url, token, None).await));
    }
    let agent = one_answer(&agent, &["sbk_", "endpoint token"]);
    assert!(!agent.contains("sbo_"), "{agent}");

    // Operator routes: a human's operator token.
    let url = format!("{}/api/v1/endpoints", app.base);
    let mut operator = Vec::new();
    for (case, token) in [
        ("no token", None),
        ("an unknown token", Some(unknown_sbo)),
        ("an endpoint token", Some(ep.token.as_str())),
        ("garbage", Some("sbo_")),
    ] {
        operator.push((case, raw(&app, "GET", &url, token, None).await));
    }
    let operator = one_answer(&operator, &["sbo_", "operator token"]);
    assert!(!operator.contains("sbk_"), "{operator}");

    // `/mcp/{slug}`: that endpoint's token, the same answer whether the slug is known.
    let init = || Some(initialize_request().to_string());
    let mut mcp = Vec::new();
    for (case, slug, token) in [
        ("known slug, another endpoint's token", "worker", Some(other.token.as_str())),
        ("unknown slug, a valid token", "nobody", Some(ep.token.as_str())),
        ("known slug, an unknown token", "worker", Some(unknown_sbk)),
        ("unknown slug, an unknown token", "nobody", Some(unknown_sbk)),
        ("known slug, no token", "worker", None),
        ("unknown slug, no token", "nobody", None),
        ("known slug, an operator token", "worker", Some(owner.token.as_str())),
        ("a revoked endpoint's slug and token", "gone", Some(revoked.token.as_str())),
    ] {
        mcp.push((case, raw(&app, "POST", &mcp_url(&app, slug), token, init()).await));
    }
    let mcp = one_answer(&mcp, &["sbk_", "/mcp/{slug}", "that endpoint"]);
    assert_ne!(mcp, agent, "each surface names its own expectation");

    // And with the right token the same requests pass.
    let (s, _) = app.get("/api/v1/agent/todos", &ep.token).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = app.get("/api/v1/endpoints", &owner.token).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _, body) = raw(&app, "POST", &mcp_url(&app, "worker"), Some(&ep.token), init()).await;
    assert_eq!(s, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
}
