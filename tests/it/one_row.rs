//! A write answered as done only once PostgreSQL committed it: `OneRow::one_row` reports a
//! commit that failed after the row was sent, which diesel-async's `get_result` does not
//! (the fleet test once saw a webhook answered 202 whose insert a database restart rolled
//! back). A deferred unique constraint makes the commit fail after the row went out.

use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use switchboard::db::one_row::OneRow;

use crate::harness::TestApp;

#[derive(QueryableByName, Debug)]
struct Key {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    k: i32,
}

#[actix_web::test]
#[expect(clippy::disallowed_methods, reason = "the contrast: get_result misses the failed commit")]
async fn a_commit_that_fails_after_the_row_was_sent_is_an_error_not_a_row() {
    let app = TestApp::spawn().await;
    app.db.exec("CREATE TABLE one_row_probe (k int UNIQUE DEFERRABLE INITIALLY DEFERRED)").await;
    app.db.exec("INSERT INTO one_row_probe VALUES (1)").await;
    let mut conn = AsyncPgConnection::establish(&app.db.url).await.unwrap();
    let insert = "INSERT INTO one_row_probe VALUES (1) RETURNING k";

    let answered = diesel::sql_query(insert).one_row::<Key>(&mut conn).await;
    assert!(answered.is_err(), "the failed commit is reported: {answered:?}");

    // What the server did before: the row came back as if stored.
    let before = diesel_async::RunQueryDsl::get_result::<Key>(diesel::sql_query(insert), &mut conn).await;
    assert!(matches!(before, Ok(Key { k: 1 })), "{before:?}");

    assert_eq!(app.db.count("SELECT count(*) FROM one_row_probe").await, 1, "neither insert was stored");
}
