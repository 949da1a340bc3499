//! The operator API: vending, dead letters and team roles.

use awc::http::StatusCode;
use serde_json::json;
use switchboard::domain::todo_state::TeamRole;

use super::{Snapshot, TODOS, expect_error};
use crate::harness::TestApp;

// ---------------------------------------------------------------------------------
// The operator API
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn vending_with_a_bad_slug_grant_lease_owner_or_expiry_is_invalid_argument_and_vends_nothing() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let before = Snapshot::take(&app).await;
    let bodies = [
        json!({"slug": "Bad Slug"}),
        json!({"slug": ""}),
        json!({"slug": "-leading-dash"}),
        json!({"slug": "_leading"}),
        json!({"slug": "has.dot"}),
        json!({"slug": "UPPER"}),
        json!({"slug": "s".repeat(64)}),
        json!({"slug": "ok", "grants": ["claim_next", "launch_missiles"]}),
        json!({"slug": "ok", "grants": ["ClaimNext"]}),
        json!({"slug": "ok", "grants": [null]}),
        json!({"slug": "ok", "default_lease_seconds": 59}),
        json!({"slug": "ok", "default_lease_seconds": 86_401}),
        json!({"slug": "ok", "default_lease_seconds": 0}),
        json!({"slug": "ok", "owner": "nobody"}),
        json!({"slug": "ok", "owner": "team:"}),
        json!({"slug": "ok", "owner": "team:ghosts"}),
        json!({"slug": "ok", "owner": "ghost@example.com"}),
        json!({"slug": "ok", "expires_at": "2026-02-30T00:00:00Z"}),
        json!({"slug": "ok", "expires_at": "-262143-01-01T00:00:00Z"}),
        json!({"slug": "ok", "expires_at": "+262142-12-31T23:59:59Z"}),
    ];
    for body in &bodies {
        let got = app.post("/api/v1/endpoints", &o.token, body.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &body.to_string());
    }
    before.assert_unchanged(&app, "invalid vends").await;
}

#[actix_web::test]
async fn vending_a_duplicate_slug_is_a_conflict_and_vends_nothing() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let other = app.owner("b@example.com").await;
    let mine = app.agent(o.scope, "taken").await;
    app.agent(other.scope, "theirs").await;
    let before = Snapshot::take(&app).await;
    for (token, slug) in [(&o.token, "taken"), (&o.token, "theirs"), (&other.token, "taken")] {
        let got = app.post("/api/v1/endpoints", token, json!({"slug": slug})).await;
        expect_error(&got, StatusCode::CONFLICT, "conflict", &format!("duplicate {slug}"));
    }
    before.assert_unchanged(&app, "duplicate slugs").await;
    // The existing endpoint keeps its token.
    let (s, _) = app.get(TODOS, &mine.token).await;
    assert_eq!(s, StatusCode::OK);
}

#[actix_web::test]
async fn vending_for_a_team_or_human_the_caller_does_not_administer_is_invalid_argument() {
    let app = TestApp::spawn().await;
    let me = app.owner("a@example.com").await;
    app.owner("boss@example.com").await;
    app.store.create_team("strangers", "boss@example.com").await.unwrap();
    let (members_only, _, _) = app.store.create_team("members", "boss@example.com").await.unwrap();
    app.store.add_team_member(members_only, me.id, TeamRole::Member).await.unwrap();
    let before = Snapshot::take(&app).await;
    let reference =
        app.post("/api/v1/endpoints", &me.token, json!({"slug": "x", "owner": "team:does-not-exist"})).await;
    expect_error(&reference, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", "unknown team");
    for owner in ["team:strangers", "team:STRANGERS", "team:members", "boss@example.com"] {
        let got = app.post("/api/v1/endpoints", &me.token, json!({"slug": "x", "owner": owner})).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", owner);
        assert_eq!(got.1, reference.1, "{owner}: a foreign owner answers like an unknown one");
    }
    before.assert_unchanged(&app, "foreign owners").await;
}

#[actix_web::test]
async fn dead_letter_listing_limits_out_of_range_are_invalid_argument() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    for query in
        ["?limit=0", "?limit=501", "?limit=-3", "?limit=99999999999999999999", &format!("?q={}", "x".repeat(201))]
    {
        let got = app.get(&format!("/api/v1/dead-letters{query}"), &o.token).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", query);
    }
    let (s, b) = app.get("/api/v1/dead-letters?limit=500", &o.token).await;
    assert_eq!(s, StatusCode::OK, "{b}");
}

#[actix_web::test]
async fn a_team_member_who_is_not_an_admin_may_not_revoke_the_teams_endpoints() {
    let app = TestApp::spawn().await;
    let member = app.owner("m@example.com").await;
    app.owner("boss@example.com").await;
    let (team, _, scope) = app.store.create_team("crew", "boss@example.com").await.unwrap();
    app.store.add_team_member(team, member.id, TeamRole::Member).await.unwrap();
    let ep = app.agent(scope, "crew-worker").await;
    app.create_todo(&ep, "q", "t").await;
    let before = Snapshot::take(&app).await;
    let got = app.call("POST", &format!("/api/v1/endpoints/{}/revoke", ep.id), Some(&member.token), None).await;
    expect_error(&got, StatusCode::FORBIDDEN, "forbidden", "member revokes");
    before.assert_unchanged(&app, "member revocation").await;
    let (s, _) = app.get(TODOS, &ep.token).await;
    assert_eq!(s, StatusCode::OK);
}
