//! Who sees the Queues overview and who acts on it: members see a team's queues, admins
//! also pause and resume them, outsiders get nothing (absent from the list, 404 on the
//! page); an unknown or malformed queue is 404; bad paging is refused naming the field.

use serde_json::json;
use switchboard::domain::todo_state::TeamRole;
use testkit::board::{browser, get, post_form};

use super::{app, next_census, overview, row, todo};
use crate::board::{board_owner, sign_in};

#[actix_web::test]
async fn members_see_admins_pause_and_resume_and_outsiders_get_404() {
    let app = app().await;
    let admin = board_owner(&app, "admin@example.com").await;
    let member = board_owner(&app, "member@example.com").await;
    let outsider = board_owner(&app, "outsider@example.com").await;
    let (team, _, scope) = app.store.create_team("crew", "admin@example.com").await.unwrap();
    app.store.add_team_member(team, member.id, TeamRole::Member).await.unwrap();
    let ep = app.agent(scope, "crew-worker").await;
    todo(&app, &ep, "inbox", 5).await;
    next_census(&app).await;

    assert!(row(&overview(&app, &member.token).await, "crew-worker", "inbox").is_some(), "a member sees it");
    assert!(row(&overview(&app, &admin.token).await, "crew-worker", "inbox").is_some(), "an admin sees it");
    assert!(overview(&app, &outsider.token).await.is_empty(), "an outsider sees nothing");

    let page_path = format!("/queues/{}/inbox", ep.id);
    let client = browser();
    let url = |p: &str| format!("{}{p}", app.base);
    let m = sign_in(&app, "member@example.com").await;
    let shown = get(&client, &url(&page_path), Some(&m.cookie)).await.unwrap();
    assert_eq!(shown.status.as_u16(), 200, "{}", shown.body);
    assert!(shown.body.contains("crew-worker / inbox"), "{}", shown.body);
    assert!(!shown.body.contains(">Pause<"), "a member gets no button");
    let list = get(&client, &url("/queues"), Some(&m.cookie)).await.unwrap();
    assert!(list.body.contains("inbox") && !list.body.contains(">Pause<"), "{}", list.body);
    let form = [
        ("csrf_token", m.csrf.as_str()),
        ("endpoint_id", &ep.id.to_string()),
        ("queue", "inbox"),
        ("paused", "true"),
        ("back", "queue"),
    ];
    let refused = post_form(&client, &url("/queues/admission"), Some(&m.cookie), &form).await.unwrap();
    assert_eq!(refused.status.as_u16(), 403, "{}", refused.body);
    assert_eq!(app.db.count("SELECT count(*) FROM queue_admission").await, 0, "nothing changed");

    let o = sign_in(&app, "outsider@example.com").await;
    for path in [
        page_path.clone(),
        format!("/queues/{}/unknown", ep.id),
        format!("/queues/{}/Not%20A%20Queue", ep.id),
        "/queues/ep_nonsense/inbox".to_owned(),
    ] {
        let p = get(&client, &url(&path), Some(&o.cookie)).await.unwrap();
        assert_eq!(p.status.as_u16(), 404, "outsider {path}");
    }
    let own_unknown = get(&client, &url(&format!("/queues/{}/unknown", ep.id)), Some(&m.cookie)).await.unwrap();
    assert_eq!(own_unknown.status.as_u16(), 404, "a queue the census never saw");
    let form_o = [
        ("csrf_token", o.csrf.as_str()),
        ("endpoint_id", &ep.id.to_string()),
        ("queue", "inbox"),
        ("paused", "true"),
        ("back", "list"),
    ];
    let p = post_form(&client, &url("/queues/admission"), Some(&o.cookie), &form_o).await.unwrap();
    assert_eq!(p.status.as_u16(), 404, "an outsider cannot pause: {}", p.body);

    let a = sign_in(&app, "admin@example.com").await;
    let page = get(&client, &url(&page_path), Some(&a.cookie)).await.unwrap();
    assert!(page.body.contains(">Pause<"), "an admin gets the button: {}", page.body);
    let form_a = [
        ("csrf_token", a.csrf.as_str()),
        ("endpoint_id", &ep.id.to_string()),
        ("queue", "inbox"),
        ("paused", "true"),
        ("back", "queue"),
    ];
    let paused = post_form(&client, &url("/queues/admission"), Some(&a.cookie), &form_a).await.unwrap();
    assert_eq!(paused.status.as_u16(), 303, "{}", paused.body);
    assert_eq!(paused.location(), page_path);
    // Admission is read as it is now, not as of the last census.
    let rows = overview(&app, &admin.token).await;
    assert_eq!(row(&rows, "crew-worker", "inbox").unwrap()["admission"]["paused"], true);
    let page = get(&client, &url(&page_path), Some(&a.cookie)).await.unwrap();
    assert!(page.body.contains(">Resume<"), "{}", page.body);
    let resume = [
        ("csrf_token", a.csrf.as_str()),
        ("endpoint_id", &ep.id.to_string()),
        ("queue", "inbox"),
        ("paused", "false"),
        ("back", "list"),
    ];
    let resumed = post_form(&client, &url("/queues/admission"), Some(&a.cookie), &resume).await.unwrap();
    assert_eq!((resumed.status.as_u16(), resumed.location()), (303, "/queues"));
    assert_eq!(app.db.count("SELECT count(*) FROM queue_admission WHERE paused").await, 0);
}

#[actix_web::test]
async fn the_overview_pages_with_its_cursor_and_refuses_bad_paging_by_name() {
    let app = app().await;
    let owner = board_owner(&app, "owner@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    for q in ["a", "b", "c"] {
        todo(&app, &ep, q, 5).await;
    }
    next_census(&app).await;
    let (s, first) = app.get("/api/v1/queues?limit=2", &owner.token).await;
    assert_eq!(s.as_u16(), 200, "{first}");
    assert_eq!(first["queues"].as_array().unwrap().len(), 2);
    let cursor = first["next_cursor"].as_str().expect("a next page").to_owned();
    let (_, second) = app.get(&format!("/api/v1/queues?limit=2&cursor={cursor}"), &owner.token).await;
    let mut seen: Vec<String> = first["queues"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["queues"].as_array().unwrap())
        .map(|r| r["queue"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(second["next_cursor"], json!(null), "{second}");
    seen.sort();
    assert_eq!(seen, ["a", "b", "c"], "every queue once");
    for (query, field) in [("limit=0", "limit"), ("limit=1001", "limit"), ("cursor=zz", "cursor"), ("nope=1", "nope")] {
        let (s, b) = app.get(&format!("/api/v1/queues?{query}"), &owner.token).await;
        assert_eq!(s.as_u16(), 422, "{query}: {b}");
        assert!(b["error"]["message"].as_str().unwrap().contains(field), "{query}: {b}");
    }
    let (s, _) = app.call("GET", "/api/v1/queues", None, None).await;
    assert_eq!(s.as_u16(), 401);
    let (s, _) = app.get("/api/v1/queues", &ep.token).await;
    assert_eq!(s.as_u16(), 401, "an agent token is not an operator's");
}
