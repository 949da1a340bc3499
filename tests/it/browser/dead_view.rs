//! A human signs in, opens the Dead view, retries a dead letter an agent left there and
//! sees it leave the list: in headless Chromium, on a phone-sized screen, without
//! JavaScript of the Board's own.
//!
//! The markup contract this relies on: `GET /login` is a form with fields `email`,
//! `password`, `csrf_token` and a submit button, and signing in lands on `/todos`;
//! `/todos?filter=dead` is the Dead view, where each dead letter is a `<tr>` holding a
//! link to `/todos/{id}` and a form posting to `/todos/{id}/retry` whose submit button
//! reads "Retry" and is labelled `Retry {id}`; the retry answers with the Dead view again.

use std::time::Instant;

use awc::http::StatusCode;
use serde_json::json;
use switchboard::domain::ids::TodoId;
use switchboard::domain::passwords::hash_password;

use super::{Browser, Screen};
use crate::board::PASSWORD;
use crate::harness::{Ep, TestApp};

const DEAD_VIEW: &str = "/todos?filter=dead";

/// A todo that an agent claimed and failed on its only attempt: a dead letter.
async fn dead_letter(app: &TestApp, ep: &Ep, title: &str) -> TodoId {
    let (status, created) =
        app.post("/api/v1/agent/todos", &ep.token, json!({"queue": "builds", "title": title, "max_attempts": 1})).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id: TodoId = created["id"].as_str().expect("an id").parse().expect("a todo id");
    let (status, claimed) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{claimed}");
    let (status, failed) =
        app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"summary": "the build broke"})).await;
    assert_eq!(status, StatusCode::OK, "{failed}");
    assert_eq!(failed["dead_letter"], true, "{failed}");
    id
}

/// The Dead view's row for `id`: the `<tr>` that links to the todo's page.
fn row_xpath(id: TodoId) -> String {
    format!("//tr[.//a[@href='/todos/{id}' or starts-with(@href, '/todos/{id}?')]]")
}

#[actix_web::test]
async fn a_signed_in_browser_retries_a_dead_letter_from_the_dead_view_and_sees_it_leave_the_list() {
    let started = Instant::now();
    let app = TestApp::spawn().await;
    let ada = app
        .store
        .create_human("ada@example.com", "Ada Lovelace", Some(hash_password(PASSWORD).expect("hash")))
        .await
        .expect("create human");
    let ep = app.agent(ada.scope, "worker").await;
    let keep = dead_letter(&app, &ep, "another dead letter, left alone").await;
    let id = dead_letter(&app, &ep, "deploy the docs").await;

    let browser = Browser::open(&app).await;

    // Sign in through the form, as a person would.
    browser.sign_in("ada@example.com", PASSWORD).await;

    // The Dead view lists the dead letter, with its own Retry button.
    browser.goto(DEAD_VIEW).await;
    assert_eq!(browser.location().await, DEAD_VIEW);
    if browser.all_xpath(&row_xpath(id)).await.is_empty() {
        panic!("no row links to /todos/{id} on the Dead view; {}", browser.evidence("dead-row-missing").await);
    }
    let form = browser.one(&format!("tr form[action='/todos/{id}/retry']")).await;
    assert_eq!(form.attr("method").await.expect("method").map(|m| m.to_ascii_lowercase()).as_deref(), Some("post"));
    let retry = browser.one(&format!("tr form[action='/todos/{id}/retry'] [type=submit]")).await;
    assert_eq!(retry.attr("aria-label").await.expect("label").as_deref(), Some(format!("Retry {id}").as_str()));
    assert_eq!(retry.text().await.expect("button text").trim(), "Retry");
    assert!(retry.is_displayed().await.expect("visibility"), "the Retry button shows on a phone-sized screen");

    browser.view_as(Screen::Desktop).await;
    let desktop = browser.screenshot("dead-view-desktop").await;
    browser.view_as(Screen::Phone).await;
    let phone = browser.screenshot("dead-view").await;
    println!("Dead view screenshots: {} (phone), {} (desktop)", phone.display(), desktop.display());

    // Retry it: the answer is the Dead view again, without that row.
    let retry = browser.one(&format!("tr form[action='/todos/{id}/retry'] [type=submit]")).await;
    retry.click().await.expect("press Retry");
    browser.wait_until_gone(&row_xpath(id), "retried-row-still-listed").await;
    browser.wait_for_location(DEAD_VIEW).await;
    // Rows only: the notice above the list names the retried todo, as it should.
    for row in browser.all("tr").await {
        let html = row.html(false).await.expect("row markup");
        assert!(!html.contains(&id.to_string()), "a row still mentions {id}: {html}");
    }
    assert!(
        !browser.all_xpath(&row_xpath(keep)).await.is_empty(),
        "the other dead letter is still listed; {}",
        browser.evidence("other-row-missing").await
    );
    let after = browser.screenshot("dead-view-after-retry").await;
    println!("after the retry: {}", after.display());
    browser.close().await;

    // The retry really moved it: pending again, no longer a dead letter.
    let (status, todo) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
    assert_eq!(status, StatusCode::OK, "{todo}");
    assert_eq!(todo["state"], "pending", "{todo}");
    assert_eq!(todo["dead_letter"], false, "{todo}");
    let (_, other) = app.get(&format!("/api/v1/agent/todos/{keep}"), &ep.token).await;
    assert_eq!(other["dead_letter"], true, "only the one retried moved: {other}");
    println!("browser test took {:.1} s", started.elapsed().as_secs_f64());
}
