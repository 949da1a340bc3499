//! The limits of waiting: `wait_seconds` out of range claims nothing, an empty wait
//! answers as an empty claim when its time is up, past the instance's bound or its
//! owner's fair share of it a request answers at once (and another owner's still waits),
//! and a waiting request does no database work.

use std::time::Duration;

use serde_json::json;

use super::{answered, claim_next, metric, spawn, spawn_with, wait_for_waiters, wait_on_any};

#[actix_web::test]
async fn wait_seconds_out_of_range_is_refused_and_claims_nothing() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let id = app.create_todo(&ep, "inbox", "stays pending").await;
    for bad in [json!(-1), json!(31), json!(3600), json!("5"), json!(1.5)] {
        let answer = answered(claim_next(&app.base, &ep, json!({"wait_seconds": bad}))).await;
        assert_eq!(answer.status, 422, "{bad}: {:?}", answer.body);
        assert_eq!(answer.body["error"]["code"], "invalid_argument", "{bad}");
    }
    let answer = answered(claim_next(&app.base, &ep, json!({"wait_seconds": 31}))).await;
    assert!(answer.body["error"]["message"].as_str().unwrap().contains("wait_seconds"), "{:?}", answer.body);
    // A claim by id waits for no one.
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({"wait_seconds": 5})).await;
    assert_eq!(s, 422, "{b}");
    let pending = format!("SELECT count(*) FROM todos WHERE id = '{}' AND state = 'pending'", id.0);
    assert_eq!(app.db.count(&pending).await, 1, "nothing was claimed");

    // 0 is today's claim: it takes the todo at once, and with nothing left answers at once.
    let answer = answered(claim_next(&app.base, &ep, json!({"wait_seconds": 0}))).await;
    assert_eq!(answer.todo(), Some(id.to_string().as_str()));
    let answer = answered(claim_next(&app.base, &ep, json!({"wait_seconds": 0}))).await;
    assert_eq!(answer.body, json!({"empty": true}));
    assert_eq!(metric(&app.base, r#"switchboard_long_poll_empty_total{reason="timed_out"}"#).await, 0);
}

#[actix_web::test]
async fn a_wait_with_nothing_to_claim_answers_empty_when_its_time_is_up() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let answer = answered(wait_on_any(&app.base, &ep, 1)).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body, json!({"empty": true}));
    assert!(answer.took >= Duration::from_secs(1), "answered after {:?}", answer.took);
    assert!(answer.took < Duration::from_secs(10), "answered after {:?}", answer.took);
    assert_eq!(metric(&app.base, r#"switchboard_long_poll_empty_total{reason="timed_out"}"#).await, 1);
    wait_for_waiters(&app.base, 0).await;
}

#[actix_web::test]
async fn past_the_bound_on_waiting_requests_a_claim_answers_at_once() {
    let app = spawn_with(|s| s.long_poll_max_waiters = 1).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let holder = wait_on_any(&app.base, &ep, 30);
    wait_for_waiters(&app.base, 1).await;

    let answer = answered(wait_on_any(&app.base, &ep, 30)).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body, json!({"empty": true}));
    assert!(answer.took < Duration::from_secs(10), "answered after {:?}", answer.took);
    assert_eq!(metric(&app.base, r#"switchboard_long_poll_empty_total{reason="full"}"#).await, 1);
    // The one place is still taken; past the bound work is still claimed at once.
    assert!(!holder.is_finished());
    let id = app.create_todo(&ep, "inbox", "t").await;
    let got = answered(holder).await;
    assert_eq!(got.todo(), Some(id.to_string().as_str()), "{:?}", got.body);
}

#[actix_web::test]
async fn past_its_owners_share_of_the_places_a_wait_answers_at_once_and_another_owners_still_waits() {
    let app = spawn_with(|s| s.long_poll_max_waiters = 8).await;
    let (greedy, other) = (app.owner("greedy@example.com").await, app.owner("other@example.com").await);
    let mine = [app.agent(greedy.scope, "greedy-a").await, app.agent(greedy.scope, "greedy-b").await];
    // Six of eight places (the default keeps a quarter), over two endpoints of one owner.
    let holders: Vec<_> = (0..6).map(|i| wait_on_any(&app.base, &mine[i % 2], 30)).collect();
    wait_for_waiters(&app.base, 6).await;

    // The owner's next wait, on a third endpoint of its, answers at once, empty.
    let third = app.agent(greedy.scope, "greedy-c").await;
    let answer = answered(wait_on_any(&app.base, &third, 30)).await;
    assert_eq!((answer.status, &answer.body), (200, &json!({"empty": true})));
    assert!(answer.took < Duration::from_secs(10), "answered after {:?}", answer.took);
    assert_eq!(metric(&app.base, r#"switchboard_long_poll_empty_total{reason="scope_share"}"#).await, 1);
    let refused = r#"switchboard_places_refused_total{place="long_poll",reason="scope_share"}"#;
    assert_eq!(metric(&app.base, refused).await, 1);
    assert_eq!(metric(&app.base, r#"switchboard_long_poll_empty_total{reason="full"}"#).await, 0);

    // Another owner's wait waits in a kept place, and is woken by work on its endpoint.
    let theirs = app.agent(other.scope, "theirs").await;
    let waiting = wait_on_any(&app.base, &theirs, 30);
    wait_for_waiters(&app.base, 7).await;
    assert!(!waiting.is_finished());
    let id = app.create_todo(&theirs, "inbox", "for the other owner").await;
    let got = answered(waiting).await;
    assert_eq!(got.todo(), Some(id.to_string().as_str()), "{:?}", got.body);
    assert!(holders.iter().all(|h| !h.is_finished()), "the first owner's waits wait on");
}

#[actix_web::test]
async fn waiting_agents_do_no_database_work_while_they_wait() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let waiting: Vec<_> = (0..3).map(|_| wait_on_any(&app.base, &ep, 2)).collect();
    wait_for_waiters(&app.base, 3).await;

    // Nothing may read `todos` from here on: any claim (a poll, a re-check) would block
    // behind this lock and never answer while it is held.
    let (client, conn) = tokio_postgres::connect(&app.db.url, tokio_postgres::NoTls).await.expect("connect");
    actix_rt::spawn(async move {
        let _ = conn.await;
    });
    client.batch_execute("BEGIN; LOCK TABLE todos IN ACCESS EXCLUSIVE MODE").await.expect("lock todos");
    for w in waiting {
        let answer = answered(w).await;
        assert_eq!(answer.body, json!({"empty": true}), "answered while todos was locked");
    }
    client.batch_execute("COMMIT").await.expect("unlock");
}
