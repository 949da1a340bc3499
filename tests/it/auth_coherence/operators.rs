//! Operator tokens and Board sessions are not cached: revoking the one and resetting the
//! password (which ends the other) take effect on the next request on every instance.

use std::time::Duration;

use awc::http::StatusCode;

use super::{Peer, admin, call, spawn};
use crate::board::{PASSWORD, human, sign_in};

/// The status of `GET /todos` on the Board at `base` with the `Cookie` header `cookie`.
async fn board_todos(base: &str, cookie: &str) -> StatusCode {
    let client = awc::Client::builder().disable_redirects().timeout(Duration::from_secs(30)).finish();
    client.get(format!("{base}/todos")).insert_header(("cookie", cookie)).send().await.expect("GET").status()
}

#[actix_web::test]
async fn operator_tokens_revoked_through_the_cli_are_refused_by_every_instance_on_the_next_request() {
    let app = spawn().await;
    let peer = Peer::start(&app.db).await;
    let owner = app.owner("a@example.com").await;
    for base in [&app.base, &peer.base, &app.base, &peer.base] {
        assert_eq!(call(base, "GET", "/api/v1/endpoints", &owner.token).await.0, StatusCode::OK);
    }

    let revoked = admin(&app.db.url, &["revoke-operator-tokens", "--email", "a@example.com"], None);
    assert_eq!(revoked["revoked"], 1);

    assert_eq!(call(&app.base, "GET", "/api/v1/endpoints", &owner.token).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(call(&peer.base, "GET", "/api/v1/endpoints", &owner.token).await.0, StatusCode::UNAUTHORIZED);
}

#[actix_web::test]
async fn a_password_set_through_the_cli_signs_the_human_out_of_the_board_on_every_instance() {
    let app = spawn().await;
    let peer = Peer::start(&app.db).await;
    human(&app, "ada@example.com", "Ada").await;
    let session = sign_in(&app, "ada@example.com").await;
    for base in [&app.base, &peer.base, &app.base, &peer.base] {
        assert_eq!(board_todos(base, &session.cookie).await, StatusCode::OK, "signed in on {base}");
    }

    let set = admin(
        &app.db.url,
        &["set-password", "--email", "ada@example.com", "--password-stdin"],
        Some(&format!("not {PASSWORD}\n")),
    );
    assert_eq!(set["sessions_ended"], 1);

    // Signed out: the Board sends the browser to sign in.
    assert_eq!(board_todos(&app.base, &session.cookie).await, StatusCode::SEE_OTHER);
    assert_eq!(board_todos(&peer.base, &session.cookie).await, StatusCode::SEE_OTHER);
}
