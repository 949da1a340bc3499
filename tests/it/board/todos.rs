//! The Todos view over real HTTP: the Dead view of dead letters made through the agent
//! API, the pills and their counts, the todo page, single and bulk retry, scope (404
//! for another human's ids, a team member sees the team's), CSRF, and escaping.

use awc::http::StatusCode;
use serde_json::json;
use switchboard::domain::ids::{ScopeId, TodoId};
use switchboard::domain::passwords::hash_password;
use switchboard::domain::todo_state::TeamRole;

use super::{PASSWORD, Page, Session, get, post_form, sign_in};
use crate::harness::{Ep, TestApp};

/// A human who may sign in with [`PASSWORD`], and their personal scope.
async fn person(app: &TestApp, email: &str) -> (switchboard::domain::ids::HumanId, ScopeId) {
    let hash = hash_password(PASSWORD).expect("hash");
    let h = app.store.create_human(email, "Someone", Some(hash)).await.expect("create human");
    (h.human.id, h.scope)
}

/// A todo created, claimed and failed through the agent API with a cap of `max_attempts`:
/// a dead letter when it is 1, a failed todo waiting on a retry above that.
async fn failed_via_api(app: &TestApp, ep: &Ep, queue: &str, title: &str, summary: &str, max_attempts: u32) -> TodoId {
    let (s, b) = app
        .post("/api/v1/agent/todos", &ep.token, json!({"queue": queue, "title": title, "max_attempts": max_attempts}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id: TodoId = b["id"].as_str().unwrap().parse().unwrap();
    let (s, claimed) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{claimed}");
    let (s, failed) = app
        .post(
            &format!("/api/v1/agent/todos/{id}/fail"),
            &ep.token,
            json!({"summary": summary, "lease_token": claimed["lease_token"]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{failed}");
    id
}

/// A dead letter made through the agent API.
async fn dead_letter(app: &TestApp, ep: &Ep, queue: &str, title: &str, summary: &str) -> TodoId {
    failed_via_api(app, ep, queue, title, summary, 1).await
}

async fn is_dead(app: &TestApp, id: TodoId) -> bool {
    app.db
        .count(&format!(
            "SELECT count(*) FROM todos WHERE id = '{}' AND state = 'failed' AND next_retry_at IS NULL",
            id.0
        ))
        .await
        == 1
}

async fn state_of(app: &TestApp, id: TodoId) -> String {
    app.db.plan(&format!("SELECT state FROM todos WHERE id = '{}'", id.0)).await.trim().to_owned()
}

/// The `<tr>…</tr>` of the list row linking to `id`.
fn row_of(page: &Page, id: TodoId) -> Option<String> {
    let link = format!("href=\"/todos/{id}\"");
    let at = page.body.find(&link)?;
    let start = page.body[..at].rfind("<tr")?;
    let end = at + page.body[at..].find("</tr>")? + "</tr>".len();
    Some(page.body[start..end].to_owned())
}

/// How many todos the list on `page` shows (each row links to its todo's page once).
fn rows_listed(page: &Page) -> usize {
    page.body.matches("<a href=\"/todos/td_").count()
}

/// The count on the pill labelled `label`.
fn pill_count(page: &Page, label: &str) -> u32 {
    let marker = format!(">{label} <span class=\"sb-count\">");
    let start = page.body.find(&marker).unwrap_or_else(|| panic!("no {label} pill in {}", page.body)) + marker.len();
    let end = page.body[start..].find('<').unwrap();
    page.body[start..start + end].replace(' ', "").parse().unwrap()
}

/// The session's cookie plus the notice cookie `answer` set, as the browser would send
/// them on the redirect it follows.
fn with_notice(session: &Session, answer: &Page) -> String {
    let notice = answer.set_cookie("sb_notice").expect("the redirect carries a notice");
    format!("{}; sb_notice={}", session.cookie, notice.value())
}

async fn post_retry(app: &TestApp, who: &Session, id: TodoId, filter: &str, q: &str) -> Page {
    let path = format!("/todos/{id}/retry");
    post_form(app, &path, Some(&who.cookie), &[("csrf_token", &who.csrf), ("filter", filter), ("q", q)]).await
}

#[actix_web::test]
async fn a_dead_letter_made_through_the_agent_api_is_on_the_dead_view_with_what_went_wrong() {
    let app = TestApp::spawn().await;
    let (_, scope) = person(&app, "ada@example.com").await;
    let ep = app.agent(scope, "ci-runner").await;
    let id = dead_letter(&app, &ep, "builds", "Build main", "exit status 1 <in step 3>").await;
    let ada = sign_in(&app, "ada@example.com").await;

    let page = get(&app, "/todos?filter=dead", Some(&ada.cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let row = row_of(&page, id).expect("the dead letter is listed");
    assert!(row.contains("<code>builds</code>"), "queue: {row}");
    assert!(row.contains(">ci-runner<"), "endpoint: {row}");
    assert!(row.contains("attempts exhausted"), "reason: {row}");
    assert!(row.contains("title=\"1 attempts in all; cap 1\">1<"), "attempts: {row}");
    assert!(row.contains("exit status 1 &lt;in step 3&gt;"), "the closing summary, escaped: {row}");
    assert!(row.contains("datetime=\""), "when it died: {row}");
    // What the browser test clicks.
    assert!(row.contains(&format!("action=\"/todos/{id}/retry\"")), "{row}");
    assert!(row.contains(&format!("aria-label=\"Retry {id}\">Retry</button>")), "{row}");
    assert!(page.body.contains("Dead letters per day per queue, last 14 days"));
    assert!(page.body.contains("<svg"), "the chart is drawn");
    assert!(page.body.contains("aria-current=\"page\">Dead <span class=\"sb-count\">1</span>"));

    let landing = get(&app, "/todos", Some(&ada.cookie)).await;
    assert!(row_of(&landing, id).is_some(), "with no filter the Board opens on Dead");
    assert!(landing.body.contains("aria-current=\"page\">Dead "));
    let searched = get(&app, "/todos?filter=dead&q=BUILD+MAIN", Some(&ada.cookie)).await;
    assert!(row_of(&searched, id).is_some(), "searched by title");
    let by_id = get(&app, &format!("/todos?filter=dead&q={id}"), Some(&ada.cookie)).await;
    assert_eq!(rows_listed(&by_id), 1);
    let missed = get(&app, "/todos?filter=dead&q=deploys", Some(&ada.cookie)).await;
    assert!(row_of(&missed, id).is_none());
    assert!(missed.body.contains("No dead letters match “deploys”."));
}

#[actix_web::test]
async fn every_pill_count_on_the_page_agrees_with_its_list() {
    let app = TestApp::spawn().await;
    let (_, scope) = person(&app, "ada@example.com").await;
    let ep = app.agent(scope, "worker").await;
    for i in 0..3 {
        app.create_todo(&ep, "builds", &format!("pending {i}")).await;
    }
    let done = app.create_todo(&ep, "builds", "finished").await;
    let (_, c) = app.post(&format!("/api/v1/agent/todos/{done}/claim"), &ep.token, json!({})).await;
    let (s, _) = app
        .post(&format!("/api/v1/agent/todos/{done}/complete"), &ep.token, json!({"lease_token": c["lease_token"]}))
        .await;
    assert_eq!(s, StatusCode::OK);
    failed_via_api(&app, &ep, "builds", "will retry", "flaky", 3).await;
    dead_letter(&app, &ep, "builds", "gone one", "x").await;
    dead_letter(&app, &ep, "deploys", "gone two", "y").await;
    let ada = sign_in(&app, "ada@example.com").await;

    let want = [("all", "All", 7), ("pending", "Pending", 3), ("claimed", "Claimed", 0), ("done", "Done", 1)];
    let want = want.into_iter().chain([("failed", "Failed", 1), ("dead", "Dead", 2)]);
    for (filter, label, n) in want {
        let page = get(&app, &format!("/todos?filter={filter}"), Some(&ada.cookie)).await;
        assert_eq!(page.status, StatusCode::OK, "{filter}: {}", page.body);
        assert_eq!(rows_listed(&page), n, "{filter} lists");
        for (other_label, other_n) in [("All", 7), ("Pending", 3), ("Claimed", 0), ("Done", 1), ("Failed", 1)] {
            assert_eq!(pill_count(&page, other_label), other_n, "{other_label} on the {filter} page");
        }
        assert_eq!(pill_count(&page, label), n as u32, "{label} counts what it lists");
        assert_eq!(pill_count(&page, "Dead"), 2);
    }
    let limited = get(&app, "/todos?filter=all&limit=2", Some(&ada.cookie)).await;
    assert_eq!(rows_listed(&limited), 2);
    assert!(limited.body.contains("Showing the newest 2."));
}

#[actix_web::test]
async fn another_humans_todo_is_not_found_on_its_page_and_on_retry_and_never_in_their_lists() {
    let app = TestApp::spawn().await;
    let (_, ada_scope) = person(&app, "ada@example.com").await;
    let (_, bob_scope) = person(&app, "bob@example.com").await;
    let ada_ep = app.agent(ada_scope, "ada-runner").await;
    let bob_ep = app.agent(bob_scope, "bob-runner").await;
    let adas = dead_letter(&app, &ada_ep, "builds", "ada's build", "red").await;
    let bobs = dead_letter(&app, &bob_ep, "builds", "bob's build", "red").await;
    let bobs_pending = app.create_todo(&bob_ep, "builds", "bob's pending").await;
    let ada = sign_in(&app, "ada@example.com").await;

    for id in [bobs, bobs_pending] {
        let page = get(&app, &format!("/todos/{id}"), Some(&ada.cookie)).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND, "{}", page.body);
        assert!(!page.body.contains("bob's"), "nothing of it is shown");
        let refused = post_retry(&app, &ada, id, "dead", "").await;
        assert_eq!(refused.status, StatusCode::NOT_FOUND, "{}", refused.body);
    }
    assert!(is_dead(&app, bobs).await, "bob's dead letter is untouched");
    for filter in ["all", "pending", "claimed", "done", "failed", "dead"] {
        for q in [String::new(), bobs.to_string(), bobs_pending.to_string(), "bob".to_owned()] {
            let page = get(&app, &format!("/todos?filter={filter}&q={q}"), Some(&ada.cookie)).await;
            assert_eq!(page.status, StatusCode::OK);
            assert!(!page.body.contains(&bobs.to_string()) || q == bobs.to_string(), "{filter} {q}");
            assert!(row_of(&page, bobs).is_none() && row_of(&page, bobs_pending).is_none(), "{filter} {q}");
            assert!(!page.body.contains("bob-runner"), "{filter} {q}");
        }
    }
    assert_eq!(get(&app, &format!("/todos/{adas}"), Some(&ada.cookie)).await.status, StatusCode::OK);
    for junk in ["td_nope", "nope", "00000000-0000-0000-0000-000000000000"] {
        assert_eq!(get(&app, &format!("/todos/{junk}"), Some(&ada.cookie)).await.status, StatusCode::NOT_FOUND);
    }
    assert_eq!(get(&app, &format!("/todos/{}", TodoId::new()), Some(&ada.cookie)).await.status, StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn a_team_member_sees_and_retries_the_teams_dead_letters() {
    let app = TestApp::spawn().await;
    person(&app, "ada@example.com").await;
    let (carol, carol_scope) = person(&app, "carol@example.com").await;
    let (team, _, team_scope) = app.store.create_team("ops", "ada@example.com").await.unwrap();
    app.store.add_team_member(team, carol, TeamRole::Member).await.unwrap();
    let team_ep = app.agent(team_scope, "team-runner").await;
    let carols_ep = app.agent(carol_scope, "carol-runner").await;
    let teams = dead_letter(&app, &team_ep, "triage", "the team's", "nobody answered").await;
    let carols = dead_letter(&app, &carols_ep, "builds", "carol's own", "red").await;
    let carol_s = sign_in(&app, "carol@example.com").await;
    let ada_s = sign_in(&app, "ada@example.com").await;

    let page = get(&app, "/todos?filter=dead", Some(&carol_s.cookie)).await;
    let row = row_of(&page, teams).expect("the team's dead letter is on a member's Dead view");
    assert!(row.contains(">team-runner<"), "{row}");
    assert!(row_of(&page, carols).is_some());
    assert_eq!(pill_count(&page, "Dead"), 2);
    let ada_page = get(&app, "/todos?filter=dead", Some(&ada_s.cookie)).await;
    assert!(row_of(&ada_page, teams).is_some(), "and on the admin's");
    assert!(row_of(&ada_page, carols).is_none(), "but not the member's own");

    assert_eq!(get(&app, &format!("/todos/{teams}"), Some(&carol_s.cookie)).await.status, StatusCode::OK);
    let retried = post_retry(&app, &carol_s, teams, "dead", "").await;
    assert_eq!(retried.status, StatusCode::SEE_OTHER, "{}", retried.body);
    assert_eq!(state_of(&app, teams).await, "pending");
}

#[actix_web::test]
async fn a_retry_without_or_with_a_wrong_csrf_token_is_refused_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let (_, scope) = person(&app, "ada@example.com").await;
    person(&app, "bob@example.com").await;
    let ep = app.agent(scope, "worker").await;
    let id = dead_letter(&app, &ep, "builds", "build", "red").await;
    let ada = sign_in(&app, "ada@example.com").await;
    let bob = sign_in(&app, "bob@example.com").await;
    let path = format!("/todos/{id}/retry");

    for form in [vec![("filter", "dead")], vec![("csrf_token", "")], vec![("csrf_token", bob.csrf.as_str())]] {
        let refused = post_form(&app, &path, Some(&ada.cookie), &form).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{form:?}: {}", refused.body);
        assert!(refused.body.contains("nothing was changed"));
        let bulk =
            post_form(&app, "/todos/dead/retry", Some(&ada.cookie), &[form.clone(), vec![("confirm", "yes")]].concat())
                .await;
        assert_eq!(bulk.status, StatusCode::FORBIDDEN, "bulk {form:?}");
    }
    assert!(is_dead(&app, id).await);
    let unsigned = post_form(&app, &path, None, &[("csrf_token", &ada.csrf)]).await;
    assert_eq!(unsigned.status, StatusCode::SEE_OTHER);
    assert_eq!(unsigned.location(), "/login");
    assert!(is_dead(&app, id).await);
}

#[actix_web::test]
async fn retrying_one_dead_letter_returns_to_its_list_with_a_notice_and_the_row_is_gone() {
    let app = TestApp::spawn().await;
    let (_, scope) = person(&app, "ada@example.com").await;
    let ep = app.agent(scope, "worker").await;
    let id = dead_letter(&app, &ep, "builds", "build main", "red").await;
    let other = dead_letter(&app, &ep, "builds", "build other", "red").await;
    let ada = sign_in(&app, "ada@example.com").await;

    let answer = post_retry(&app, &ada, id, "dead", "build").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    assert_eq!(answer.location(), "/todos?filter=dead&q=build", "back to the list it came from");
    assert_eq!(state_of(&app, id).await, "pending");
    let page = get(&app, answer.location(), Some(&with_notice(&ada, &answer))).await;
    assert!(page.body.contains(&format!("Todo {id} is back in its queue")), "{}", page.body);
    assert!(row_of(&page, id).is_none(), "the row left the Dead view");
    assert!(row_of(&page, other).is_some());
    assert_eq!(pill_count(&page, "Dead"), 1);
    assert!(page.set_cookie("sb_notice").is_some_and(|c| c.value().is_empty()), "shown once");
    let pending = get(&app, "/todos?filter=pending", Some(&ada.cookie)).await;
    assert!(row_of(&pending, id).is_some(), "it waits for an agent again");

    // Retrying what is no longer failed returns to the list saying why.
    let again = post_retry(&app, &ada, id, "pending", "").await;
    assert_eq!(again.status, StatusCode::SEE_OTHER);
    assert_eq!(again.location(), "/todos?filter=pending");
    let page = get(&app, again.location(), Some(&with_notice(&ada, &again))).await;
    assert!(page.body.contains("Not done: todo is pending; only failed todos can be retried"), "{}", page.body);

    // From the detail page, which offers "Retry now" on a failed todo.
    let detail = get(&app, &format!("/todos/{other}"), Some(&ada.cookie)).await;
    assert!(detail.body.contains("Retry now</button>"), "{}", detail.body);
    assert!(detail.body.contains("href=\"/todos?filter=dead\""), "back to the Dead view");
    let from_detail = post_retry(&app, &ada, other, "dead", "").await;
    assert_eq!(from_detail.location(), "/todos?filter=dead");
    assert_eq!(state_of(&app, other).await, "pending");
    let after = get(&app, &format!("/todos/{other}"), Some(&ada.cookie)).await;
    assert!(!after.body.contains("Retry now</button>"), "a pending todo offers no retry");
}

#[actix_web::test]
async fn the_todo_page_shows_the_attempt_timeline_and_where_the_todo_stands() {
    let app = TestApp::spawn().await;
    let (_, scope) = person(&app, "ada@example.com").await;
    let ep = app.agent(scope, "ci-runner").await;
    let id = failed_via_api(&app, &ep, "builds", "Build main", "step 3 timed out", 3).await;
    let held = app.create_todo(&ep, "builds", "held now").await;
    app.post(&format!("/api/v1/agent/todos/{held}/claim"), &ep.token, json!({"claimant": "box/run-7"})).await;
    let ada = sign_in(&app, "ada@example.com").await;

    let page = get(&app, &format!("/todos/{id}?filter=failed&q=main"), Some(&ada.cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("<h1 id=\"sb-todo-title\">Build main</h1>"), "{}", page.body);
    assert!(page.body.contains("step 3 timed out"));
    assert!(page.body.contains("retry scheduled"), "the attempt's disposition");
    assert!(page.body.contains(">ci-runner<"));
    assert!(page.body.contains("1 of 3; 1 in all"));
    assert!(page.body.contains("instead of waiting for the scheduled retry"));
    assert!(page.body.contains("href=\"/todos?filter=failed&amp;q=main\""), "back to the list it came from");
    assert!(page.body.contains("<input type=\"hidden\" name=\"filter\" value=\"failed\">"));

    let claimed = get(&app, &format!("/todos/{held}"), Some(&ada.cookie)).await;
    assert!(claimed.body.contains("Lease"), "{}", claimed.body);
    assert!(claimed.body.contains("box/run-7"));
    assert!(!claimed.body.contains("Retry now"));
}

#[actix_web::test]
async fn bulk_retry_confirms_the_count_first_then_retries_only_the_matching_rows_in_scope() {
    let app = TestApp::spawn().await;
    let (_, ada_scope) = person(&app, "ada@example.com").await;
    let (_, bob_scope) = person(&app, "bob@example.com").await;
    let ep = app.agent(ada_scope, "worker").await;
    let bob_ep = app.agent(bob_scope, "bob-runner").await;
    let a = dead_letter(&app, &ep, "builds", "build a", "red").await;
    let b = dead_letter(&app, &ep, "builds", "build b", "red").await;
    let deploy = dead_letter(&app, &ep, "deploys", "deploy c", "red").await;
    let bobs = dead_letter(&app, &bob_ep, "builds", "build x", "red").await;
    let ada = sign_in(&app, "ada@example.com").await;

    let view = get(&app, "/todos?filter=dead&q=build", Some(&ada.cookie)).await;
    assert!(view.body.contains("Retry the 2 matching “build”…</button>"), "{}", view.body);

    let ask =
        post_form(&app, "/todos/dead/retry", Some(&ada.cookie), &[("csrf_token", &ada.csrf), ("q", "build")]).await;
    assert_eq!(ask.status, StatusCode::OK, "{}", ask.body);
    assert!(
        ask.body.contains("<strong class=\"sb-bulk-count\">2 dead letters</strong> matching “build”"),
        "{}",
        ask.body
    );
    assert!(ask.body.contains("Yes, retry 2 dead letters</button>"));
    assert!(ask.body.contains("<input type=\"hidden\" name=\"confirm\" value=\"yes\">"));
    for id in [a, b, deploy, bobs] {
        assert!(is_dead(&app, id).await, "asking moves nothing");
    }

    // A confirmation without its cut-off is refused and moves nothing.
    let form = [("csrf_token", ada.csrf.as_str()), ("q", "build"), ("confirm", "yes")];
    let refused = post_form(&app, "/todos/dead/retry", Some(&ada.cookie), &form).await;
    assert!(refused.status.is_client_error(), "{}", refused.status);
    assert!(is_dead(&app, a).await);

    // One more matching dead letter after the page counted 2: it is not among them.
    let late = dead_letter(&app, &ep, "builds", "build late", "red").await;
    app.db
        .exec(&format!("UPDATE todos SET dead_lettered_at = now() + interval '1 minute' WHERE id = '{}'", late.0))
        .await;
    let died_by = crate::board::hidden_value(&ask.body, "died_by").expect("the confirmation carries its cut-off");
    let form = [("csrf_token", ada.csrf.as_str()), ("q", "build"), ("confirm", "yes"), ("died_by", died_by.as_str())];
    let done = post_form(&app, "/todos/dead/retry", Some(&ada.cookie), &form).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    assert_eq!(done.location(), "/todos?filter=dead&q=build");
    let page = get(&app, done.location(), Some(&with_notice(&ada, &done))).await;
    assert!(page.body.contains("2 dead letters went back to their queues"), "{}", page.body);
    assert!(is_dead(&app, late).await, "died after the confirmation counted: stays dead");
    app.db.exec(&format!("UPDATE todos SET dead_lettered_at = now() WHERE id = '{}'", late.0)).await;
    let again =
        post_form(&app, "/todos/dead/retry", Some(&ada.cookie), &[("csrf_token", &ada.csrf), ("q", "build")]).await;
    let died_by = crate::board::hidden_value(&again.body, "died_by").expect("cut-off");
    let form = [("csrf_token", ada.csrf.as_str()), ("q", "build"), ("confirm", "yes"), ("died_by", died_by.as_str())];
    post_form(&app, "/todos/dead/retry", Some(&ada.cookie), &form).await;
    let page = get(&app, "/todos?filter=dead&q=build", Some(&ada.cookie)).await;
    assert!(page.body.contains("No dead letters match “build”."));
    assert_eq!((state_of(&app, a).await, state_of(&app, b).await), ("pending".into(), "pending".into()));
    assert!(is_dead(&app, deploy).await, "not matching: stays dead");
    assert!(is_dead(&app, bobs).await, "another human's: stays dead");

    // Nothing left to move: the confirmation says so and offers no button.
    let empty =
        post_form(&app, "/todos/dead/retry", Some(&ada.cookie), &[("csrf_token", &ada.csrf), ("q", "build")]).await;
    assert!(empty.body.contains("nothing to retry"), "{}", empty.body);
    assert!(!empty.body.contains("name=\"confirm\""));
    // Unsearched, it is every dead letter in reach.
    let all = post_form(&app, "/todos/dead/retry", Some(&ada.cookie), &[("csrf_token", &ada.csrf)]).await;
    assert!(
        all.body.contains("<strong class=\"sb-bulk-count\">1 dead letter</strong> (every dead letter"),
        "{}",
        all.body
    );
}

#[actix_web::test]
async fn markup_in_a_title_or_summary_is_shown_as_text() {
    let app = TestApp::spawn().await;
    let (_, scope) = person(&app, "ada@example.com").await;
    let ep = app.agent(scope, "worker").await;
    let id = dead_letter(&app, &ep, "builds", "<img src=x onerror=alert(1)>", "<script>alert(2)</script>").await;
    let ada = sign_in(&app, "ada@example.com").await;

    for path in ["/todos?filter=dead".to_owned(), "/todos?filter=all".to_owned(), format!("/todos/{id}")] {
        let page = get(&app, &path, Some(&ada.cookie)).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        assert!(!page.body.contains("<img src=x") && !page.body.contains("<script>"), "{path}: {}", page.body);
        assert!(page.body.contains("&lt;img src=x onerror=alert(1)&gt;"), "{path}");
    }
    let dead = get(&app, "/todos?filter=dead", Some(&ada.cookie)).await;
    assert!(dead.body.contains("&lt;script&gt;alert(2)&lt;/script&gt;"));
    let searched = get(&app, "/todos?filter=dead&q=%22%3E%3Cscript%3E", Some(&ada.cookie)).await;
    assert!(!searched.body.contains("\"><script>"), "the search box echoes text");
}

#[actix_web::test]
async fn an_unknown_filter_or_a_bad_limit_answers_a_400_page_and_a_huge_limit_is_cut() {
    let app = TestApp::spawn().await;
    person(&app, "ada@example.com").await;
    let ada = sign_in(&app, "ada@example.com").await;

    let zombie = get(&app, "/todos?filter=zombie", Some(&ada.cookie)).await;
    assert_eq!(zombie.status, StatusCode::BAD_REQUEST);
    assert!(zombie.body.contains("There is no “zombie” filter."), "{}", zombie.body);
    assert!(zombie.body.contains("href=\"/todos?filter=dead\""), "the way back");
    for bad in ["limit=abc", "limit=0", "limit=-5", "filter=dead&limit=1.5"] {
        let page = get(&app, &format!("/todos?{bad}"), Some(&ada.cookie)).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(page.body.contains("is not a number of rows"), "{bad}: {}", page.body);
    }
    let long = get(&app, &format!("/todos?q={}", "x".repeat(300)), Some(&ada.cookie)).await;
    assert_eq!(long.status, StatusCode::BAD_REQUEST);
    for fine in ["limit=100000", "limit=99999999999999999999999", "filter=DONE", "filter=&limit=", "filter=all&utm=x"] {
        assert_eq!(get(&app, &format!("/todos?{fine}"), Some(&ada.cookie)).await.status, StatusCode::OK, "{fine}");
    }
}
