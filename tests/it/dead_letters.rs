//! `list_dead_letters` and `GET /api/v1/dead-letters`: scope, predicate, order, search
//! and limit.

use serde_json::json;
use switchboard::domain::grants::Verb;
use switchboard::domain::ids::TodoId;
use switchboard::domain::todo_state::TeamRole;

use crate::harness::{Ep, TestApp};

async fn dead_letter(app: &TestApp, ep: &Ep, queue: &str, title: &str) -> TodoId {
    let (_, b) =
        app.post("/api/v1/agent/todos", &ep.token, json!({"queue": queue, "title": title, "max_attempts": 1})).await;
    let id: TodoId = b["id"].as_str().unwrap().parse().unwrap();
    app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    let (_, row) = app
        .post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"summary": format!("{title} failed")}))
        .await;
    assert_eq!(row["dead_letter"], true);
    id
}

#[actix_web::test]
async fn dead_letters_span_every_endpoint_of_the_owner_newest_first_and_nobody_elses() {
    let app = TestApp::spawn().await;
    let a = app.owner("a@example.com").await;
    let b = app.owner("b@example.com").await;
    let a1 = app.agent(a.scope, "a-one").await;
    let a2 = app.agent(a.scope, "a-two").await;
    let b1 = app.agent(b.scope, "b-one").await;
    let first = dead_letter(&app, &a1, "builds", "first").await;
    let second = dead_letter(&app, &a2, "deploys", "second").await;
    let theirs = dead_letter(&app, &b1, "builds", "theirs").await;
    // A failed todo with a retry scheduled is not dead.
    let (_, r) = app.post("/api/v1/agent/todos", &a1.token, json!({"queue": "builds", "title": "retrying"})).await;
    app.post(&format!("/api/v1/agent/todos/{}/claim", r["id"].as_str().unwrap()), &a1.token, json!({})).await;
    app.post(&format!("/api/v1/agent/todos/{}/fail", r["id"].as_str().unwrap()), &a1.token, json!({})).await;

    let (s, body) = app.get("/api/v1/dead-letters", &a.token).await;
    assert_eq!(s, 200, "{body}");
    let list = body["dead_letters"].as_array().unwrap();
    let ids: Vec<&str> = list.iter().map(|d| d["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![second.to_string(), first.to_string()]);
    assert_eq!(list[0]["endpoint"], "a-two");
    assert_eq!(list[0]["queue"], "deploys");
    assert_eq!(list[0]["reason"], "attempts_exhausted");
    assert_eq!(list[0]["attempts_total"], 1);
    assert_eq!(list[0]["final_attempt"]["summary"], "second failed");
    assert_eq!(list[0]["final_attempt"]["outcome"], "failed");
    assert!(list[0]["dead_lettered_at"].is_string());
    let (_, body) = app.get("/api/v1/dead-letters", &b.token).await;
    assert_eq!(body["dead_letters"].as_array().unwrap().len(), 1);
    assert_eq!(body["dead_letters"][0]["id"], theirs.to_string());
}

#[actix_web::test]
async fn dead_letters_search_by_id_queue_title_source_and_kind_and_honour_the_limit() {
    let app = TestApp::spawn().await;
    let a = app.owner("a@example.com").await;
    let ep = app.agent(a.scope, "worker").await;
    let build = dead_letter(&app, &ep, "builds", "Compile 100%_done").await;
    let _deploy = dead_letter(&app, &ep, "deploys", "Ship it").await;
    let scope = [a.scope];
    let q = |s: &'static str| app.store.list_dead_letters(&scope, Some(s), 50);
    assert_eq!(q("builds").await.unwrap().len(), 1);
    assert_eq!(q("SHIP").await.unwrap().len(), 1);
    assert_eq!(q("100%_").await.unwrap()[0].id, build, "wildcards match literally");
    assert_eq!(q("0%x").await.unwrap().len(), 0);
    assert_eq!(q("agent").await.unwrap().len(), 2, "source of agent-authored todos");
    let by_id = build.to_string();
    let hit = app.store.list_dead_letters(&scope, Some(&by_id), 50).await.unwrap();
    assert_eq!(hit.len(), 1);
    assert_eq!(app.store.list_dead_letters(&scope, None, 1).await.unwrap().len(), 1);
    let (s, _) = app.get("/api/v1/dead-letters?limit=0", &a.token).await;
    assert_eq!(s, 422);
    let (_, body) = app.get("/api/v1/dead-letters?q=deploys", &a.token).await;
    assert_eq!(body["dead_letters"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn quarantine_is_excluded_and_a_team_member_sees_the_teams_dead_letters() {
    let app = TestApp::spawn().await;
    let admin = app.owner("admin@example.com").await;
    let member = app.owner("member@example.com").await;
    let (team, _, team_scope) = app.store.create_team("ops", "admin@example.com").await.unwrap();
    app.store.add_team_member(team, member.id, TeamRole::Member).await.unwrap();
    let team_ep = app.endpoint(team_scope, "team-worker", Verb::ALL).await;
    let id = dead_letter(&app, &team_ep, "builds", "team work").await;
    // A failed row in quarantine never lists.
    app.db
        .exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, dead_reason, dead_lettered_at) \
             VALUES (gen_random_uuid(), '{}', '{}', 'quarantine', 'held', 'failed', 'attempts_exhausted', now())",
            team_ep.id.0, team_scope.0
        ))
        .await;
    for who in [&admin, &member] {
        let (_, body) = app.get("/api/v1/dead-letters", &who.token).await;
        let list = body["dead_letters"].as_array().unwrap();
        assert_eq!(list.len(), 1, "{body}");
        assert_eq!(list[0]["id"], id.to_string());
    }
    // A member may retry the team's todo; an outsider gets 404.
    let outsider = app.owner("x@example.com").await;
    let (s, _) = app.post(&format!("/api/v1/todos/{id}/retry"), &outsider.token, json!({})).await;
    assert_eq!(s, 404);
    let (s, _) = app.post(&format!("/api/v1/todos/{id}/retry"), &member.token, json!({})).await;
    assert_eq!(s, 200);
    // But only a team admin may revoke the team's endpoint.
    let (s, _) = app.post(&format!("/api/v1/endpoints/{}/revoke", team_ep.id), &member.token, json!({})).await;
    assert_eq!(s, 403);
}
