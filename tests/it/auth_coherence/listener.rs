//! The auth listener: while it is away every request asks the database, and it comes back.

use awc::http::StatusCode;

use super::{
    AUTH_LISTENER, Sql, list_todos, set_list_grant_unannounced, spawn, wait_until_asked_of_the_database,
    wait_until_cached,
};
use crate::harness::admin_url;
use crate::harness::wait::wait_for_listener;

#[actix_web::test]
async fn while_the_auth_listener_is_down_every_token_is_checked_in_the_database_and_the_listener_comes_back() {
    let app = spawn().await;
    let sql = Sql::connect(&app.db.url).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let first = wait_for_listener(&sql, AUTH_LISTENER, 0).await;
    wait_until_cached(&app.base, &sql, &ep).await;

    // Kill the listener's session and keep it from coming back: the database takes no
    // new connections (the server's pool keeps the ones it has; `sql` is held).
    let name = app.db.url.rsplit('/').next().expect("database name").to_owned();
    let admin = Sql::connect(&admin_url()).await;
    admin.run(&format!("ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS false")).await;
    sql.run(&format!("SELECT pg_terminate_backend({first})")).await;

    // The instance notices and asks the database from then on: a change nobody announced
    // is seen, and a revocation by hand is honoured on the next request.
    wait_until_asked_of_the_database(&app.base, &sql, &ep).await;
    set_list_grant_unannounced(&sql, &ep, true).await;
    assert_eq!(list_todos(&app.base, &ep).await, StatusCode::OK);
    sql.run(&format!("UPDATE endpoints SET state = 'revoked', revoked_at = now() WHERE id = '{}'", ep.id.0)).await;
    assert_eq!(list_todos(&app.base, &ep).await, StatusCode::UNAUTHORIZED);

    // Connections are taken again: the listener comes back, tokens are cached again and
    // a revocation is heard again.
    admin.run(&format!("ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS true")).await;
    let second = wait_for_listener(&sql, AUTH_LISTENER, first).await;
    assert_ne!(second, first);
    let again = app.agent(owner.scope, "again").await;
    wait_until_cached(&app.base, &sql, &again).await;
    let revoke = format!("UPDATE endpoints SET state = 'revoked', revoked_at = now() WHERE id = '{}'", again.id.0);
    sql.run_heard(&revoke, again.id.0).await;
    assert_eq!(list_todos(&app.base, &again).await, StatusCode::UNAUTHORIZED);
}
