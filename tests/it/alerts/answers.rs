//! `switchboard_http_responses_total{surface,class}` counts each answer once under the
//! surface its path belongs to; `switchboard_http_unavailable_total` the 503s apart;
//! an MCP request naming a session this instance does not hold is refused and counted
//! (`switchboard_places_refused_total{reason="unknown_session"}`).

use awc::http::StatusCode;

use super::*;
use crate::mcp::{initialize_request, wire_to};

/// `switchboard_http_responses_total` of one surface and class.
fn answers(surface: &str, class: &str) -> String {
    format!(r#"switchboard_http_responses_total{{surface="{surface}",class="{class}"}}"#)
}

/// GETs `path` without credentials; its status.
async fn get(app: &TestApp, path: &str) -> u16 {
    app.client.get(format!("{}{path}", app.base)).send().await.unwrap().status().as_u16()
}

#[actix_web::test]
async fn each_answer_counts_once_under_its_surface_and_status_class() {
    let app = spawn_with(|_| {}).await;
    let before = scrape(&app).await;
    assert_eq!(get(&app, "/no/such/page").await, 404);
    assert_eq!(get(&app, "/api/v1/agent/todos").await, 401);
    assert_eq!(get(&app, "/api/v1/sinks").await, 401);
    assert_eq!(get(&app, "/login").await, 200);
    assert_eq!(get(&app, "/healthz").await, 200);
    let intake = app.client.post(format!("{}/webhooks/w/whk_nosuchtoken", app.base)).send_body("{}").await.unwrap();
    assert!(intake.status().is_client_error(), "{}", intake.status());
    let after = scrape(&app).await;
    for (series, more) in [
        (answers("other", "4xx"), 1),
        (answers("agent", "4xx"), 1),
        (answers("operator", "4xx"), 1),
        (answers("board", "2xx"), 1),
        (answers("intake", "4xx"), 1),
        // /healthz, and the scrape before (counted once its answer was ready).
        (answers("probe", "2xx"), 2),
        (answers("board", "4xx"), 0),
        (answers("agent", "5xx"), 0),
    ] {
        assert_eq!(value(&after, &series) - value(&before, &series), more, "{series}");
    }
}

#[actix_web::test]
async fn an_mcp_session_this_instance_does_not_hold_is_refused_counted_and_a_full_instance_answers_503() {
    let app = spawn_with(|s| {
        s.mcp_max_sessions = 1;
        s.mcp_reserve_percent = 0;
    })
    .await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    let list = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).unwrap();
    let lost = wire_to(&app, "worker", &ep).post_in(Some("no-such-session"), list).await.unwrap();
    assert_eq!(lost.status, StatusCode::NOT_FOUND, "{}", String::from_utf8_lossy(&lost.body));

    wire_to(&app, "worker", &ep).initialize().await.unwrap();
    let full = wire_to(&app, "worker", &ep).post(&initialize_request()).await.unwrap();
    assert_eq!(full.status, StatusCode::SERVICE_UNAVAILABLE);

    let text = scrape(&app).await;
    assert_eq!(value(&text, r#"switchboard_places_refused_total{place="mcp_session",reason="unknown_session"}"#), 1);
    assert_eq!(value(&text, r#"switchboard_places_refused_total{place="mcp_session",reason="instance_full"}"#), 1);
    assert_eq!(value(&text, r#"switchboard_http_unavailable_total{surface="mcp"}"#), 1);
    assert_eq!(value(&text, &answers("mcp", "5xx")), 1);
    assert_eq!(value(&text, &answers("mcp", "4xx")), 1);
    assert_eq!(value(&text, r#"switchboard_http_unavailable_total{surface="agent"}"#), 0);
}
