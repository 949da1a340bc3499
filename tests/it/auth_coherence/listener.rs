//! The auth listener: while it is away every request asks the database, and it comes back.

use awc::http::StatusCode;

use super::{
    AUTH_LISTENER, Sql, list_todos, long_ttl, set_list_grant_unannounced, wait_until_asked_of_the_database,
    wait_until_cached,
};
use crate::harness::tcp_gate::TcpGate;
use crate::harness::wait::wait_for_listener;
use crate::harness::{TestApp, admin_url};

#[actix_web::test]
async fn while_the_auth_listener_is_down_every_token_is_checked_in_the_database_and_the_listener_comes_back() {
    // The listener connects through a gate the test shuts (`SWITCHBOARD_DIRECT_DATABASE_URL`);
    // the server's pool keeps reaching the database.
    let gate = TcpGate::to_database_of(&admin_url()).await;
    let app = TestApp::spawn_with(|s| {
        long_ttl(s);
        s.direct_database_url = s.database_url.as_deref().map(|url| gate.url_through(url));
    })
    .await;
    let sql = Sql::connect(&app.db.url).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let first = wait_for_listener(&sql, AUTH_LISTENER, 0).await;
    wait_until_cached(&app.base, &sql, &ep).await;

    // Cut the listener's connection and keep it from coming back.
    gate.shut();

    // The instance notices and asks the database from then on: a change nobody announced
    // is seen, and a revocation by hand is honoured on the next request.
    wait_until_asked_of_the_database(&app.base, &sql, &ep).await;
    set_list_grant_unannounced(&sql, &ep, true).await;
    assert_eq!(list_todos(&app.base, &ep).await, StatusCode::OK);
    sql.run(&format!("UPDATE endpoints SET state = 'revoked', revoked_at = now() WHERE id = '{}'", ep.id.0)).await;
    assert_eq!(list_todos(&app.base, &ep).await, StatusCode::UNAUTHORIZED);

    // The listener may connect again: it comes back, tokens are cached again and a
    // revocation is heard again.
    gate.open();
    let second = wait_for_listener(&sql, AUTH_LISTENER, first).await;
    assert_ne!(second, first);
    let again = app.agent(owner.scope, "again").await;
    wait_until_cached(&app.base, &sql, &again).await;
    let revoke = format!("UPDATE endpoints SET state = 'revoked', revoked_at = now() WHERE id = '{}'", again.id.0);
    sql.run_heard(&revoke, again.id.0).await;
    assert_eq!(list_todos(&app.base, &again).await, StatusCode::UNAUTHORIZED);
}
