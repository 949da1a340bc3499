//! What the metrics count of batches: calls by verb and whether they were answered or
//! refused whole, items by verb and outcome; never an id.

use serde_json::json;
use switchboard::domain::ids::TodoId;

use super::{claim_many, create_many, finish_many};
use crate::harness::TestApp;

const TOKEN: &str = "batch-metrics-token-0123456789abcdef0123";

#[actix_web::test]
async fn batches_are_counted_by_verb_and_outcome_and_their_items_by_outcome() {
    let app = TestApp::spawn_with(|s| s.metrics_token = Some(TOKEN.into())).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let items = json!([{"queue": "q", "title": "a"}, {"queue": "q", "title": "b"}, {"queue": "q", "title": " "}]);
    create_many(&app, &ep, items).await;
    let claims = claim_many(&app, &ep, 5).await;
    assert_eq!(claims.len(), 2);
    finish_many(&app, &ep, "complete", json!([{"id": claims[0].0}, {"id": TodoId::new()}, {"id": claims[0].0}])).await;
    let (status, _) = app.post("/api/v1/agent/todos/fail", &ep.token, json!({"items": []})).await;
    assert_eq!(status, 422);

    let series = |name: &str, labels: &str| format!("switchboard_agent_{name}_total{{{labels}}}");
    for (s, want) in [
        (series("batches", r#"verb="create_todo",outcome="answered""#), 1),
        (series("batches", r#"verb="claim_next",outcome="answered""#), 1),
        (series("batches", r#"verb="complete",outcome="answered""#), 1),
        (series("batches", r#"verb="fail",outcome="refused""#), 1),
        (series("batches", r#"verb="fail",outcome="answered""#), 0),
        (series("batch_items", r#"verb="create_todo",outcome="ok""#), 2),
        (series("batch_items", r#"verb="create_todo",outcome="invalid_argument""#), 1),
        (series("batch_items", r#"verb="claim_next",outcome="ok""#), 2),
        (series("batch_items", r#"verb="complete",outcome="ok""#), 1),
        (series("batch_items", r#"verb="complete",outcome="not_found""#), 1),
        (series("batch_items", r#"verb="complete",outcome="conflict""#), 1),
    ] {
        assert_eq!(app.metric(TOKEN, &s).await, want, "{s}");
    }
    // A single claim-next (no limit) is not a batch.
    app.claim_next(&ep).await;
    assert_eq!(app.metric(TOKEN, &series("batches", r#"verb="claim_next",outcome="answered""#)).await, 1);
}
