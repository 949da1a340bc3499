//! The embedded stylesheet: versioned URL, long cache, ETag revalidation.

use awc::http::StatusCode;

use super::{browser, get, human, sign_in};
use crate::harness::TestApp;

#[actix_web::test]
async fn the_stylesheet_is_served_from_its_versioned_url_with_a_long_cache_and_an_etag() {
    let app = TestApp::spawn().await;
    human(&app, "ada@example.com", "Ada").await;
    let ada = sign_in(&app, "ada@example.com").await;
    let page = get(&app, "/todos", Some(&ada.cookie)).await;
    let start = page.body.find("/static/board.css?v=").expect("the layout links the stylesheet");
    let href = &page.body[start..start + page.body[start..].find('"').unwrap()];

    let css = get(&app, href, None).await;
    assert_eq!(css.status, StatusCode::OK);
    assert!(css.headers.get("content-type").unwrap().to_str().unwrap().starts_with("text/css"));
    assert!(css.headers.get("cache-control").unwrap().to_str().unwrap().contains("immutable"));
    assert!(css.body.contains(".sb-pill"));
    let etag = css.headers.get("etag").unwrap().to_str().unwrap().to_owned();

    let again = browser()
        .get(format!("{}{href}", app.base))
        .insert_header(("if-none-match", etag.as_str()))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);

    let unversioned = get(&app, "/static/board.css", None).await;
    assert_eq!(unversioned.headers.get("cache-control").unwrap(), "public, max-age=300");
    assert_eq!(get(&app, "/static/nope.css", None).await.status, StatusCode::NOT_FOUND);
}
