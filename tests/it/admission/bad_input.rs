//! Refused changes of a budget change nothing: a queue name no agent could drain, a
//! limit that is negative, zero, above its bound or not a number, an unknown field, an
//! unknown or malformed endpoint, a team member who is not an admin (403), an outsider
//! (404, like an endpoint that does not exist) and an endpoint token (401).

use serde_json::{Value, json};
use switchboard::domain::ids::EndpointId;
use switchboard::domain::todo_state::TeamRole;

use super::*;

/// Everything stored about budgets, to compare before and after.
async fn budgets(app: &TestApp) -> String {
    app.db
        .plan(
            "SELECT coalesce(string_agg(format('%s %s %s %s %s %s %s', endpoint_id, queue, paused, max_in_flight, \
               per_hour, window_claims, updated_at), ' | ' ORDER BY endpoint_id, queue), 'none') FROM queue_admission",
        )
        .await
}

#[actix_web::test]
async fn bad_admission_input_is_refused_naming_the_field_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let admin = app.owner("admin@example.com").await;
    let member = app.owner("member@example.com").await;
    let outsider = app.owner("outsider@example.com").await;
    let (team, _, scope) = app.store.create_team("crew", "admin@example.com").await.unwrap();
    app.store.add_team_member(team, member.id, TeamRole::Member).await.unwrap();
    let ep = app.agent(scope, "crew-worker").await;
    set_admission(&app, &admin.token, ep.id, "inbox", json!({"paused": true, "max_in_flight": 3})).await;
    let before = budgets(&app).await;

    let long = "q".repeat(65);
    let invalid: Vec<(&str, Value, &str)> = vec![
        ("Inbox", json!({"paused": false}), "queue"),
        ("quarantine", json!({"paused": true}), "queue"),
        (&long, json!({"paused": true}), "queue"),
        ("a%20b", json!({"paused": true}), "queue"),
        ("-inbox", json!({"paused": true}), "queue"),
        ("inbox", json!({"max_in_flight": -1}), "max_in_flight"),
        ("inbox", json!({"max_in_flight": 0}), "max_in_flight"),
        ("inbox", json!({"max_in_flight": 10_001}), "max_in_flight"),
        ("inbox", json!({"max_in_flight": 99_999_999_999_i64}), "max_in_flight"),
        ("inbox", json!({"paused": false, "per_hour": 0}), "per_hour"),
        ("inbox", json!({"per_hour": -5}), "per_hour"),
        ("inbox", json!({"per_hour": 1_000_001}), "per_hour"),
        ("inbox", json!({"per_hour": "ten"}), "body"),
        ("inbox", json!({"max_in_flight": 2.5}), "body"),
        ("inbox", json!({"paused": "yes"}), "body"),
        ("inbox", json!({"pause": true}), "body"),
    ];
    for (queue, body, field) in &invalid {
        let (status, answer) = put_admission(&app, &admin.token, ep.id, queue, body.clone()).await;
        assert_eq!(status, 422, "{queue} {body}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_argument", "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(field), "{queue} {body}: the message names {field}: {message}");
    }

    let refused = [
        (&member.token, ep.id, 403, "forbidden"),
        (&outsider.token, ep.id, 404, "not_found"),
        (&admin.token, EndpointId::new(), 404, "not_found"),
    ];
    for (token, endpoint, status, code) in refused {
        let (got, answer) = put_admission(&app, token, endpoint, "inbox", json!({"paused": false})).await;
        assert_eq!((got.as_u16(), answer["error"]["code"].as_str()), (status, Some(code)), "{answer}");
        // Bad input from someone who may not change the budget says nothing about it.
        let (got, _) = put_admission(&app, token, endpoint, "inbox", json!({"max_in_flight": 0})).await;
        assert_eq!(got.as_u16(), status);
    }
    let malformed = app
        .call(
            "PUT",
            "/api/v1/endpoints/ep_nope/queues/inbox/admission",
            Some(&admin.token),
            Some(&json!({"paused": false})),
        )
        .await;
    assert_eq!(malformed.0, 404, "{}", malformed.1);
    let (status, _) = put_admission(&app, &ep.token, ep.id, "inbox", json!({"paused": false})).await;
    assert_eq!(status, 401, "an endpoint token is no operator token");
    let listing = format!("/api/v1/endpoints/{}/admission", ep.id);
    assert_eq!(app.get(&listing, &member.token).await.0, 200, "a member may see the budgets");
    assert_eq!(app.get(&listing, &outsider.token).await.0, 404);

    assert_eq!(budgets(&app).await, before, "nothing changed");
}
