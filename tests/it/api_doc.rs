//! The OpenAPI document is generated from the code and describes every route.

use crate::harness::TestApp;

#[actix_web::test]
async fn the_openapi_document_lists_every_agent_and_operator_route() {
    let app = TestApp::spawn().await;
    let (s, doc) = app.call("GET", "/api/openapi.json", None, None).await;
    assert_eq!(s, 200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    for (path, method) in [
        ("/api/v1/agent/todos", "get"),
        ("/api/v1/agent/todos", "post"),
        ("/api/v1/agent/todos/claim-next", "post"),
        ("/api/v1/agent/todos/{id}", "get"),
        ("/api/v1/agent/todos/{id}/claim", "post"),
        ("/api/v1/agent/todos/{id}/heartbeat", "post"),
        ("/api/v1/agent/todos/{id}/complete", "post"),
        ("/api/v1/agent/todos/{id}/fail", "post"),
        ("/api/v1/agent/todos/{id}/release", "post"),
        ("/api/v1/agent/todos/{id}/interrupt", "post"),
        ("/api/v1/agent/todos/{id}/resume", "post"),
        ("/api/v1/agent/todos/complete", "post"),
        ("/api/v1/agent/todos/fail", "post"),
        ("/api/v1/agent/todos/batch", "post"),
        ("/api/v1/agent/presence/clock-in", "post"),
        ("/api/v1/agent/presence/clock-out", "post"),
        ("/api/v1/endpoints", "post"),
        ("/api/v1/endpoints", "get"),
        ("/api/v1/endpoints/{id}/revoke", "post"),
        ("/api/v1/todos/{id}", "get"),
        ("/api/v1/todos/{id}/fail", "post"),
        ("/api/v1/todos/{id}/retry", "post"),
        ("/api/v1/dead-letters", "get"),
        ("/api/v1/endpoints/{id}/hooks", "post"),
        ("/api/v1/endpoints/{id}/hooks", "get"),
        ("/api/v1/hooks/{id}/rotate", "post"),
        ("/api/v1/hooks/{id}/enable", "post"),
        ("/api/v1/hooks/{id}/disable", "post"),
        ("/api/v1/hooks/{id}", "delete"),
        ("/api/v1/agent/hooks", "post"),
        ("/api/v1/agent/hooks", "get"),
        ("/api/v1/agent/hooks/{id}/rotate", "post"),
        ("/api/v1/agent/hooks/{id}", "delete"),
        ("/api/v1/agent/sinks", "get"),
        ("/api/v1/agent/sinks/{name}", "put"),
        ("/api/v1/agent/sinks/{name}", "delete"),
        ("/api/v1/agent/sinks/{name}/test", "post"),
        ("/api/v1/agent/sinks/{name}/subscriptions", "put"),
        ("/api/v1/agent/notify-owner", "post"),
        ("/healthz", "get"),
        ("/readyz", "get"),
        ("/metrics", "get"),
    ] {
        assert!(paths.get(path).and_then(|p| p.get(method)).is_some(), "{method} {path} missing from the document");
    }
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let todo = &schemas["TodoView"]["properties"];
    for field in [
        "id",
        "queue",
        "source",
        "kind",
        "title",
        "state",
        "attempt",
        "max_attempts",
        "lease_expires_at",
        "next_retry_at",
        "dead_letter",
        "dead_reason",
        "created_at",
        "payload_size",
    ] {
        assert!(todo.get(field).is_some(), "TodoView lacks {field}");
    }
    assert!(doc["components"]["securitySchemes"]["endpoint_token"].is_object());
}

#[actix_web::test]
async fn health_and_readiness_answer() {
    let app = TestApp::spawn().await;
    assert_eq!(app.call("GET", "/healthz", None, None).await.0, 200);
    assert_eq!(app.call("GET", "/readyz", None, None).await.0, 200);
}
