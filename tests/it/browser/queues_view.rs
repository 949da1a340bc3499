//! A human signs in and opens the Queues overview, then one queue's page, on a desktop
//! and on a phone: the queue in trouble is first, its sparkline is drawn, neither page
//! scrolls sideways on a phone, and each is kept as a screenshot like the Dead view's.

use serde_json::json;
use switchboard::domain::passwords::hash_password;

use super::{Browser, Screen};
use crate::board::PASSWORD;
use crate::harness::TestApp;
use crate::queues::{claim, next_census, todo, verb};

/// How wide the page is drawn, in CSS pixels (wider than the screen: it scrolls sideways).
async fn drawn_width(browser: &Browser) -> u64 {
    let width = browser
        .client
        .execute("return document.documentElement.scrollWidth", vec![])
        .await
        .expect("read the page's width");
    width.as_u64().expect("a width")
}

#[actix_web::test]
async fn the_queues_overview_and_a_queue_page_read_on_a_desktop_and_a_phone() {
    let app = TestApp::spawn_with(|s| s.queue_census_interval_ms = 50).await;
    let ada = app
        .store
        .create_human("ada@example.com", "Ada Lovelace", Some(hash_password(PASSWORD).expect("hash")))
        .await
        .expect("create human");
    let ep = app.agent(ada.scope, "worker").await;
    for _ in 0..3 {
        todo(&app, &ep, "calm", 5).await;
    }
    let done = todo(&app, &ep, "builds", 5).await;
    let lease = claim(&app, &ep, &done).await;
    verb(&app, &ep, &done, "complete", &lease, json!({})).await;
    let dead = todo(&app, &ep, "builds", 1).await;
    let lease = claim(&app, &ep, &dead).await;
    verb(&app, &ep, &dead, "fail", &lease, json!({"summary": "broke"})).await;
    next_census(&app).await;

    let browser = Browser::open(&app).await;
    browser.sign_in("ada@example.com", PASSWORD).await;

    let nav = browser.one("nav.sb-nav a[href='/queues']").await;
    assert_eq!(nav.text().await.expect("nav text").trim(), "Queues");
    nav.click().await.expect("open Queues");
    browser.wait_for_location("/queues").await;
    let links = browser.all("table.sb-queues tbody tr td:first-child a").await;
    let mut hrefs = Vec::new();
    for l in &links {
        hrefs.push(l.attr("href").await.expect("href").unwrap_or_default());
    }
    let queue_page = format!("/queues/{}/builds", ep.id);
    assert_eq!(hrefs, [queue_page.clone(), format!("/queues/{}/calm", ep.id)], "trouble first");
    let spark = browser.one("table.sb-queues tbody tr:first-child svg.sb-spark").await;
    assert!(spark.is_displayed().await.expect("visibility"), "the sparkline is drawn");
    // This minute's bar: the completion, the failed attempt and the dead letter it made.
    assert_eq!(browser.all("table.sb-queues tbody tr:first-child svg.sb-spark rect").await.len(), 3);

    browser.view_as(Screen::Desktop).await;
    assert!(drawn_width(&browser).await <= 1280, "the overview fits a 1 280 px screen");
    let desktop = browser.screenshot("queues-desktop").await;
    browser.view_as(Screen::Phone).await;
    let phone = browser.screenshot("queues").await;
    assert!(drawn_width(&browser).await <= 390, "the overview does not scroll sideways on a phone");
    println!("Queues screenshots: {} (phone), {} (desktop)", phone.display(), desktop.display());

    browser.one(&format!("a[href='{queue_page}']")).await.click().await.expect("open the queue");
    browser.wait_for_location(&queue_page).await;
    assert!(browser.one("h1").await.text().await.expect("heading").contains("worker / builds"));
    assert!(browser.one("svg.sb-day-chart").await.is_displayed().await.expect("visibility"));
    assert!(drawn_width(&browser).await <= 390, "the queue page does not scroll sideways on a phone");
    let phone = browser.screenshot("queue").await;
    browser.view_as(Screen::Desktop).await;
    let desktop = browser.screenshot("queue-desktop").await;
    println!("Queue page screenshots: {} (phone), {} (desktop)", phone.display(), desktop.display());
    browser.close().await;
}
