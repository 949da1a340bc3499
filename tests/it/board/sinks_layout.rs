//! The Sinks page and the Dead chart at 1 280 px in a real browser (headless Chromium,
//! as `crate::browser` drives it): the kind column keeps each kind on one line, a sink's
//! id is one short line (the whole id in its tooltip), and the chart is drawn at its
//! own width from the left, not letterboxed into a wide empty margin. A screenshot of
//! each is kept under the browser tests' screenshot directory.

use serde_json::json;
use switchboard::store::todos::{ClaimRequest, Finish, NewTodo};

use super::{PASSWORD, board_owner};
use crate::browser::{Browser, Screen};
use crate::harness::TestApp;

#[actix_web::test]
async fn at_1280_px_kinds_and_sink_ids_stay_on_one_line_and_the_dead_chart_has_no_wide_left_margin() {
    let app = TestApp::spawn_with(|s| {
        s.secret_encryption_key = Some(switchboard::config::SecretKey([9; 32]));
    })
    .await;
    let o = board_owner(&app, "ada@example.com").await;
    for (name, kind, secret) in [("phone", "gotify", "t"), ("team pager via apprise", "apprise", "key")] {
        let body =
            json!({"name": format!("c {name}"), "kind": kind, "secret": secret, "base_url": "https://203.0.113.10"});
        let (s, c) = app.post("/api/v1/connections", &o.token, body).await;
        assert_eq!(s, 201, "{c}");
        let mut body = json!({"name": name, "kind": kind, "connection_id": c["id"]});
        if kind == "apprise" {
            body["apprise_mode"] = json!("key");
        }
        let (s, b) = app.post("/api/v1/sinks", &o.token, body).await;
        assert_eq!(s, 201, "{b}");
    }
    let ep = app.agent(o.scope, "worker").await;
    for i in 0..3 {
        let new = NewTodo { max_attempts: Some(1), ..NewTodo::new(ep.id, "inbox", format!("job {i}")) };
        let id = app.store.create_todo(new).await.unwrap().todo.id;
        app.store.claim(ep.id, id, ClaimRequest::default()).await.unwrap();
        app.store.fail(ep.id, id, Finish::default()).await.unwrap();
    }

    let browser = Browser::open(&app).await;
    browser.goto("/login").await;
    browser.one("form input[name=email]").await.send_keys("ada@example.com").await.expect("type the email");
    browser.one("form input[name=password]").await.send_keys(PASSWORD).await.expect("type the password");
    browser.one("form button[type=submit]").await.click().await.expect("press Sign in");
    browser.wait_for_location("/todos").await;
    browser.view_as(Screen::Desktop).await;

    browser.goto("/sinks").await;
    for kind in browser.all("#sinks td[data-label=Kind] .sb-kind").await {
        let (_, _, _, h) = kind.rectangle().await.expect("a rect");
        assert!(h <= 26.0, "a kind wraps ({h} px high); {}", browser.evidence("sinks-kind-wraps").await);
    }
    for id in browser.all("#sinks code.sb-id").await {
        let (_, _, _, h) = id.rectangle().await.expect("a rect");
        assert!(h <= 26.0, "an id wraps ({h} px high); {}", browser.evidence("sinks-id-wraps").await);
        let title = id.attr("title").await.expect("title").unwrap_or_default();
        assert!(title.starts_with("sk_") && title.len() == 35, "the whole id in the tooltip: {title}");
    }
    let sinks = browser.screenshot("sinks-desktop").await;

    browser.goto("/todos?filter=dead").await;
    let figure = browser.one("figure.sb-chart").await;
    let svg = browser.one("figure.sb-chart svg.sb-chart-svg").await;
    let (fx, _, fw, _) = figure.rectangle().await.expect("a rect");
    let (sx, _, sw, _) = svg.rectangle().await.expect("a rect");
    // The drawing starts where the figure's content does and is no wider than its
    // height allows (14rem high at 700:220 is 44.5rem, 712 px: no letterbox, which
    // spread the plot's box across the figure's 1 184 px and left ~236 px empty on its
    // left).
    assert!(
        sx - fx < 40.0,
        "the chart starts {} px into its figure; {}",
        sx - fx,
        browser.evidence("chart-margin").await
    );
    assert!(sw <= 44.5 * 16.0 + 1.0, "the chart is {sw} px wide in a {fw} px figure");
    let chart = browser.screenshot("dead-chart-desktop").await;
    println!("Sinks at 1280 px: {}; Dead chart: {}", sinks.display(), chart.display());
    browser.close().await;
}
