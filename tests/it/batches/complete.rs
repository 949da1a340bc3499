//! `POST /api/v1/agent/todos/complete`.

use awc::http::StatusCode;
use serde_json::json;
use switchboard::domain::ids::TodoId;

use super::{claim_many, finish_many, outcomes, todo};
use crate::harness::TestApp;

#[actix_web::test]
async fn a_batch_complete_answers_each_item_as_the_single_verb_and_a_bad_item_fails_alone() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let other = app.agent(owner.scope, "other").await;
    let theirs = app.create_todo(&other, "q", "theirs").await;
    app.claim_next(&other).await;
    for i in 0..3 {
        app.create_todo(&ep, "q", &format!("t{i}")).await;
    }
    let pending = app.create_todo(&ep, "q", "still pending").await;
    let claims = claim_many(&app, &ep, 3).await;
    let items = json!([
        {"id": claims[0].0.to_string(), "lease_token": claims[0].1, "result": {"n": 0}, "summary": "green",
         "artifact": "mcp://cairn/a0"},
        {"id": TodoId::new().to_string()},
        {"id": claims[1].0.to_string(), "lease_token": "not-the-token"},
        {"id": pending.to_string()},
        {"id": theirs.to_string()},
        {"id": claims[2].0.to_string(), "artifact": "ftp://nope"},
        {"id": claims[2].0.to_string(), "summary": "no token is no fence"},
    ]);
    let results = finish_many(&app, &ep, "complete", items).await;
    assert_eq!(
        outcomes(&results),
        ["ok", "not_found", "conflict", "conflict", "not_found", "invalid_argument", "ok"],
        "{results:?}"
    );
    assert_eq!(results[1]["id"], results[1]["id"].as_str().unwrap(), "every result names its item's id");
    assert_eq!(results[0]["todo"]["state"], "done");
    assert_eq!(results[0]["todo"]["id"], claims[0].0.to_string());
    assert!(results[0].get("error").is_none() && results[2].get("todo").is_none());
    assert_eq!(results[2]["error"]["message"], "lease token does not match the current lease");
    assert_eq!(results[3]["error"]["message"], "todo is pending; this needs it claimed");

    let done = todo(&app, &ep, claims[0].0).await;
    assert_eq!(done["result"], json!({"n": 0}));
    let a = &done["attempts"][0];
    assert_eq!(
        (&a["outcome"], &a["disposition"], &a["summary"]),
        (&json!("completed"), &json!("done"), &json!("green"))
    );
    assert_eq!(a["artifact"], "mcp://cairn/a0");
    assert_eq!(todo(&app, &ep, claims[1].0).await["state"], "claimed", "the refused item is left as it was");
    assert!(todo(&app, &ep, claims[1].0).await["attempts"][0]["ended_at"].is_null());
    assert_eq!(todo(&app, &ep, claims[2].0).await["attempts"][0]["summary"], "no token is no fence");
    assert_eq!(todo(&app, &ep, pending).await["state"], "pending");
    assert_eq!(todo(&app, &other, theirs).await["state"], "claimed", "another endpoint's todo is out of reach");
    let stored = app.db.count("SELECT count(*) FROM todo_attempts").await;
    assert_eq!(stored, 0, "as the single verb, a batch completion keeps each attempt on its todo row");
    let history = app.db.count("SELECT count(*) FROM todo_attempt_history WHERE outcome = 'completed'").await;
    assert_eq!(history, 2, "the whole history holds both completed attempts");
}

#[actix_web::test]
async fn a_todo_named_twice_is_acted_on_in_order_as_two_single_calls_would() {
    let (app, _, ep) = TestApp::with_worker().await;
    app.create_todo(&ep, "q", "a").await;
    app.create_todo(&ep, "q", "b").await;
    let claims = claim_many(&app, &ep, 2).await;
    let (a, b) = (claims[0].0.to_string(), claims[1].0.to_string());
    let items = json!([
        {"id": a, "summary": "first"},
        {"id": b, "lease_token": "wrong"},
        {"id": a, "summary": "second"},
        {"id": b, "lease_token": claims[1].1, "summary": "right token"},
    ]);
    let results = finish_many(&app, &ep, "complete", items).await;
    assert_eq!(outcomes(&results), ["ok", "conflict", "conflict", "ok"]);
    assert_eq!(results[2]["error"]["message"], "todo is done; this needs it claimed");
    assert_eq!(todo(&app, &ep, claims[0].0).await["attempts"][0]["summary"], "first");
    assert_eq!(todo(&app, &ep, claims[1].0).await["attempts"][0]["summary"], "right token");
}

#[actix_web::test]
async fn a_batch_of_no_items_or_of_more_than_100_is_refused_whole_and_changes_nothing() {
    let (app, _, ep) = TestApp::with_worker().await;
    app.create_todo(&ep, "q", "t").await;
    let claims = claim_many(&app, &ep, 1).await;
    let one = json!({"id": claims[0].0.to_string()});
    for verb in ["complete", "fail"] {
        for items in [json!([]), json!(vec![one.clone(); 101])] {
            let n = items.as_array().unwrap().len();
            let (status, answer) =
                app.post(&format!("/api/v1/agent/todos/{verb}"), &ep.token, json!({"items": items})).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{verb} of {n}: {answer}");
            assert_eq!(answer["error"]["code"], "invalid_argument");
        }
        let (status, answer) = app
            .post(&format!("/api/v1/agent/todos/{verb}"), &ep.token, json!({"items": [{"id": claims[0].0, "x": 1}]}))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "an unknown field: {answer}");
    }
    assert_eq!(todo(&app, &ep, claims[0].0).await["state"], "claimed");
}

#[actix_web::test]
async fn a_batch_needs_the_single_verbs_grant() {
    use switchboard::domain::grants::Verb;
    let app = TestApp::spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.endpoint(owner.scope, "narrow", &[Verb::ClaimNext, Verb::Fail]).await;
    let item = json!({"items": [{"id": TodoId::new().to_string()}]});
    let (status, answer) = app.post("/api/v1/agent/todos/complete", &ep.token, item.clone()).await;
    assert_eq!((status, &answer["error"]["code"]), (StatusCode::FORBIDDEN, &json!("forbidden")), "{answer}");
    let (status, answer) =
        app.post("/api/v1/agent/todos/batch", &ep.token, json!({"items": [{"queue": "q", "title": "t"}]})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    let (status, answer) = app.post("/api/v1/agent/todos/fail", &ep.token, item).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

/// A path id that is not a todo id answers `not_found` on the single verbs; in a batch
/// the item answers the same and fails alone, for complete and fail alike, and a batch
/// of nothing but such ids answers each of them.
#[actix_web::test]
async fn an_item_whose_id_is_not_a_todo_id_answers_not_found_and_fails_alone() {
    let (app, _, ep) = TestApp::with_worker().await;
    for verb in ["complete", "fail"] {
        app.create_todo(&ep, "q", verb).await;
        let claims = claim_many(&app, &ep, 1).await;
        let items = json!([
            {"id": "td_not-an-id"},
            {"id": claims[0].0.to_string(), "lease_token": claims[0].1, "summary": verb},
            {"id": ""},
        ]);
        let results = finish_many(&app, &ep, verb, items).await;
        assert_eq!(outcomes(&results), ["not_found", "ok", "not_found"], "{verb}: {results:?}");
        assert_eq!(results[0]["id"], "td_not-an-id", "the result names the id as the item gave it");
        let (status, single) = app.post("/api/v1/agent/todos/td_not-an-id/complete", &ep.token, json!({})).await;
        assert_eq!((status, &single["error"]["code"]), (StatusCode::NOT_FOUND, &results[0]["error"]["code"]));
        assert_eq!(todo(&app, &ep, claims[0].0).await["attempts"][0]["summary"], verb);
    }
    let results = finish_many(&app, &ep, "complete", json!([{"id": "x"}, {"id": "td_"}])).await;
    assert_eq!(outcomes(&results), ["not_found", "not_found"]);
}
