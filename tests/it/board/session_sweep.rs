//! The periodic sweep of expired Board sessions.

use awc::http::StatusCode;

use super::{get, human, sign_in};
use crate::harness::TestApp;

#[actix_web::test]
async fn the_sweep_deletes_expired_sessions_and_keeps_live_ones() {
    let app = TestApp::spawn().await;
    let ada = human(&app, "ada@example.com", "Ada").await;
    human(&app, "bob@example.com", "Bob").await;
    sign_in(&app, "ada@example.com").await;
    let bob = sign_in(&app, "bob@example.com").await;
    app.db
        .exec(&format!(
            "UPDATE board_sessions SET expires_at = now() - interval '1 second' WHERE human_id = '{}'",
            ada.0
        ))
        .await;

    assert_eq!(app.store.sweep_expired_board_sessions().await.unwrap(), 1);
    assert_eq!(app.db.count(&format!("SELECT count(*) FROM board_sessions WHERE human_id = '{}'", ada.0)).await, 0);
    assert_eq!(app.db.count("SELECT count(*) FROM board_sessions").await, 1, "the live session stays");
    assert_eq!(get(&app, "/todos", Some(&bob.cookie)).await.status, StatusCode::OK);
    assert_eq!(app.store.sweep_expired_board_sessions().await.unwrap(), 0);
}
