//! Resuming an interrupted todo puts it back in flight (`claimed`, same attempt), so its
//! queue's budget judges it as it judges a claim: a paused queue, a full `max_in_flight`
//! and a spent `per_hour` window refuse it with 409 `conflict` and `error.deferred`, the
//! todo stays interrupted, and the refusal is counted; under racing resumes and claims
//! the cap holds exactly.

use futures_util::future::{join, join_all};
use serde_json::{Value, json};

use super::*;

/// Claims `id` (its queue unbudgeted) and interrupts it; answers the claim.
async fn claimed_and_interrupted(app: &TestApp, ep: &Ep, id: TodoId) -> Value {
    let claim = claim_id(app, ep, id).await;
    claimed(&claim);
    let body = json!({"state": "input_required", "lease_token": claim["lease_token"]});
    let (status, row) = app.post(&format!("/api/v1/agent/todos/{id}/interrupt"), &ep.token, body).await;
    assert_eq!(status, StatusCode::OK, "{row}");
    claim
}

/// Resume of `id` with the claim's lease token.
async fn resume(app: &TestApp, ep: &Ep, id: TodoId, claim: &Value) -> (StatusCode, Value) {
    let body = json!({"lease_token": claim["lease_token"]});
    app.post(&format!("/api/v1/agent/todos/{id}/resume"), &ep.token, body).await
}

/// Asserts a resume was refused for `reason` and left the todo interrupted.
async fn refused(app: &TestApp, ep: &Ep, id: TodoId, answer: (StatusCode, Value), reason: &str) {
    let (status, body) = answer;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "conflict", "{body}");
    assert_eq!(body["error"]["deferred"], reason, "{body}");
    let (_, row) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
    assert_eq!(row["state"], "input_required", "still interrupted: {row}");
    assert!(row["interrupt_expires_at"].is_string(), "under its interrupt lease: {row}");
}

#[actix_web::test]
async fn a_paused_queue_or_a_full_in_flight_cap_refuses_a_resume_and_the_todo_stays_interrupted() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let waiting = app.create_todo(&ep, "inbox", "waits on a human").await;
    let other = app.create_todo(&ep, "inbox", "keeps the cap full").await;
    let claim = claimed_and_interrupted(&app, &ep, waiting).await;

    set_admission(&app, &owner.token, ep.id, "inbox", json!({"paused": true})).await;
    refused(&app, &ep, waiting, resume(&app, &ep, waiting, &claim).await, "paused").await;

    set_admission(&app, &owner.token, ep.id, "inbox", json!({"paused": false, "max_in_flight": 1})).await;
    let busy = claim_id(&app, &ep, other).await;
    claimed(&busy);
    refused(&app, &ep, waiting, resume(&app, &ep, waiting, &claim).await, "in_flight_full").await;
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE state = 'claimed'").await, 1, "the cap held");

    complete(&app, &ep, &busy).await;
    let (status, row) = resume(&app, &ep, waiting, &claim).await;
    assert_eq!(status, StatusCode::OK, "room again: {row}");
    assert_eq!((row["state"].as_str(), row["attempt"].as_i64()), (Some("claimed"), Some(1)), "{row}");
    let attempts = app.db.count(&format!("SELECT attempts_total::int8 FROM todos WHERE id = '{}'", waiting.0)).await;
    assert_eq!(attempts, 1, "the interrupted attempt goes on; none was opened");

    let rows = app
        .db
        .plan(
            "SELECT string_agg(format('%s %s %s', queue, reason, count), ', ' ORDER BY reason) \
             FROM queue_deferrals WHERE hour = date_trunc('hour', now(), 'UTC')",
        )
        .await;
    assert_eq!(rows, "inbox in_flight_full 1, inbox paused 1", "each refusal counted as a deferral");
}

#[actix_web::test]
async fn a_resume_takes_from_the_hourly_window_and_is_refused_once_it_is_spent() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "inbox", "t").await;
    let claim = claimed_and_interrupted(&app, &ep, id).await;
    // The claim made this hour seeds the window: one claim of one allowed.
    set_admission(&app, &owner.token, ep.id, "inbox", json!({"per_hour": 1})).await;
    refused(&app, &ep, id, resume(&app, &ep, id, &claim).await, "window_exhausted").await;

    set_admission(&app, &owner.token, ep.id, "inbox", json!({"per_hour": 2})).await;
    let (status, row) = resume(&app, &ep, id, &claim).await;
    assert_eq!(status, StatusCode::OK, "{row}");
    let window = app.db.count("SELECT window_claims::bigint FROM queue_admission").await;
    assert_eq!(window, 2, "the resume took from the window as a claim does");
}

#[actix_web::test]
async fn racing_resumes_and_claims_never_put_more_than_max_in_flight_in_flight() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let mut interrupted = Vec::new();
    for i in 0..8 {
        let id = app.create_todo(&ep, "builds", &format!("interrupted {i}")).await;
        interrupted.push((id, claimed_and_interrupted(&app, &ep, id).await));
    }
    for i in 0..8 {
        app.create_todo(&ep, "builds", &format!("pending {i}")).await;
    }
    set_admission(&app, &owner.token, ep.id, "builds", json!({"max_in_flight": 3})).await;

    // Nothing completes while they race, so exactly the cap's worth succeed.
    let (app, ep) = (&app, &ep);
    let resumes = interrupted.iter().map(|(id, claim)| async move {
        let (status, body) = resume(app, ep, *id, claim).await;
        match status {
            StatusCode::OK => None,
            StatusCode::CONFLICT => Some(body["error"]["deferred"].as_str().map(str::to_owned)),
            other => panic!("resume answered {other}: {body}"),
        }
    });
    let claims = (0..8).map(|i| async move {
        let answer = claim_on(app, ep, if i % 2 == 0 { Some("builds") } else { None }).await;
        if answer["empty"] == false { None } else { Some(deferred(&answer).map(str::to_owned)) }
    });
    let (resumes, claims) = join(join_all(resumes), join_all(claims)).await;
    let outcomes: Vec<Option<Option<String>>> = resumes.into_iter().chain(claims).collect();
    let admitted = outcomes.iter().filter(|o| o.is_none()).count();
    assert_eq!(admitted, 3, "{outcomes:?}");
    assert!(
        outcomes.iter().flatten().all(|reason| reason.as_deref() == Some("in_flight_full")),
        "every refusal was the cap: {outcomes:?}"
    );
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE state = 'claimed'").await, 3);
}
