//! Single claim-next and complete requests that arrive while the verb's earlier requests
//! are at the database are answered together, by one statement, each caller with what
//! its own request would have answered: its own todo, lease token, lease length and
//! claimant; its own completion, or its own error; and an admission budget still judges
//! every claim. Each test holds the database (a lock the statement needs) so that the
//! later requests are seen waiting (`switchboard_coalesce_waiting`) before it lets go.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Ep, TestApp};

const TOKEN: &str = "coalescing-metrics-token-0123456789abcdef";

/// A POST sent now and answered later (status, body).
fn post_later(app: &TestApp, path: &str, token: &str, body: Value) -> actix_rt::task::JoinHandle<(u16, Value)> {
    let (client, url, auth) = (app.client.clone(), format!("{}{path}", app.base), format!("Bearer {token}"));
    actix_rt::spawn(async move {
        let mut resp = client.post(url).insert_header(("Authorization", auth)).send_json(&body).await.expect("send");
        let body = resp.body().limit(1 << 20).await.expect("body");
        (resp.status().as_u16(), serde_json::from_slice(&body).unwrap_or(Value::Null))
    })
}

/// A transaction of its own that holds what `sql` locks until it commits.
async fn hold(app: &TestApp, sql: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&app.db.url, tokio_postgres::NoTls).await.expect("connect");
    actix_rt::spawn(async move {
        let _ = conn.await;
    });
    client.batch_execute(&format!("BEGIN; {sql}")).await.expect("lock");
    client
}

/// Waits until `n` of the app's statements wait on a lock.
async fn wait_for_blocked(app: &TestApp, n: i64) {
    let sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.db.count(sql).await != n {
        assert!(Instant::now() < deadline, "never {n} statements blocked");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until `n` requests of `verb` wait for a run.
async fn wait_for_waiting(app: &TestApp, verb: &str, n: u64) {
    let series = format!(r#"switchboard_coalesce_waiting{{verb="{verb}"}}"#);
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.metric(TOKEN, &series).await != n {
        assert!(Instant::now() < deadline, "never {n} {verb} requests waiting");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// (runs, requests, requests given back to run alone) of `verb` so far.
async fn runs(app: &TestApp, verb: &str) -> (u64, u64, u64) {
    let count = |name: &str| format!(r#"switchboard_coalesced_{name}_total{{verb="{verb}"}}"#);
    let runs = app.metric(TOKEN, &count("runs")).await;
    let requests = app.metric(TOKEN, &count("requests")).await;
    let alone = app.metric(TOKEN, &count("alone")).await;
    (runs, requests, alone)
}

/// What `verb`'s counters added since `before`.
async fn runs_since(app: &TestApp, verb: &str, before: (u64, u64, u64)) -> (u64, u64, u64) {
    let after = runs(app, verb).await;
    (after.0 - before.0, after.1 - before.1, after.2 - before.2)
}

async fn app_with_agent() -> (TestApp, Ep, String) {
    let app = TestApp::spawn_with(|s| s.metrics_token = Some(TOKEN.into())).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    (app, ep, owner.token)
}

#[actix_web::test]
async fn claims_that_wait_together_are_claimed_by_one_statement_each_with_its_own_lease_and_claimant() {
    let (app, ep, _) = app_with_agent().await;
    let mut created = Vec::new();
    for i in 0..6 {
        created.push(app.create_todo(&ep, "q", &format!("t{i}")).await.to_string());
    }
    let before = runs(&app, "claim_next").await;
    let blocker = hold(&app, "LOCK TABLE queue_admission IN ACCESS EXCLUSIVE MODE").await;
    let path = "/api/v1/agent/todos/claim-next";
    let first = post_later(&app, path, &ep.token, json!({"queue": "q", "claimant": "w1"}));
    wait_for_blocked(&app, 1).await;
    let later: Vec<_> = (2..=5)
        .map(|i| {
            post_later(
                &app,
                path,
                &ep.token,
                json!({"queue": "q", "claimant": format!("w{i}"), "lease_ttl_seconds": 100 * i}),
            )
        })
        .collect();
    wait_for_waiting(&app, "claim_next", 4).await;
    blocker.batch_execute("COMMIT").await.expect("let go");

    let mut answers = vec![(1, first.await.expect("first"))];
    for (i, h) in (2..=5).zip(later) {
        answers.push((i, h.await.expect("later")));
    }
    let ran = runs_since(&app, "claim_next", before).await;
    assert_eq!(ran, (2, 5, 0), "the lone first claim, then the four together, none of them alone");
    let mut ids = BTreeSet::new();
    let mut tokens = BTreeSet::new();
    for (i, (status, answer)) in &answers {
        assert_eq!(*status, 200, "{answer}");
        let id = answer["todo"]["id"].as_str().expect("a todo for every caller").to_owned();
        assert_eq!((answer["attempt_seq"].clone(), answer["todo"]["state"].clone()), (json!(1), json!("claimed")));
        ids.insert(id.clone());
        tokens.insert(answer["lease_token"].as_str().unwrap().to_owned());
        let (_, t) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
        assert_eq!(t["attempts"][0]["claimant"], format!("w{i}"), "{t}");
        if *i > 1 {
            let lease = chrono::DateTime::parse_from_rfc3339(t["lease_expires_at"].as_str().unwrap()).unwrap()
                - chrono::DateTime::parse_from_rfc3339(t["updated_at"].as_str().unwrap()).unwrap();
            assert!((100 * i - 1..=100 * i).contains(&lease.num_seconds()), "caller {i}: lease {lease}");
        }
    }
    assert_eq!(ids, created[..5].iter().cloned().collect(), "the five oldest, one each");
    assert_eq!(tokens.len(), 5, "a lease token each");
    for (_, (_, answer)) in &answers {
        let id = answer["todo"]["id"].as_str().unwrap();
        let (s, row) = app
            .post(
                &format!("/api/v1/agent/todos/{id}/complete"),
                &ep.token,
                json!({"lease_token": answer["lease_token"]}),
            )
            .await;
        assert_eq!((s.as_u16(), &row["state"]), (200, &json!("done")), "each token fences its own todo: {row}");
    }
    let pending = app.claim_next(&ep).await;
    assert_eq!(pending["todo"]["id"], json!(created[5]), "the sixth was left pending");
}

#[actix_web::test]
async fn completions_that_wait_together_answer_each_as_alone_and_a_wrong_token_fails_only_its_own() {
    let (app, ep, _) = app_with_agent().await;
    let mut claims = Vec::new();
    for i in 0..5 {
        let id = app.create_todo(&ep, "q", &format!("t{i}")).await;
        let c = app.claim_next(&ep).await;
        assert_eq!(c["todo"]["id"], json!(id.to_string()));
        claims.push((id, c["lease_token"].as_str().unwrap().to_owned()));
    }
    let complete = |i: usize, token: &str| {
        let body = json!({"lease_token": token, "summary": format!("s{i}")});
        post_later(&app, &format!("/api/v1/agent/todos/{}/complete", claims[i].0), &ep.token, body)
    };
    let before = runs(&app, "complete").await;
    // Both completion runners wait on a row each; the next three wait for them.
    let blocker =
        hold(&app, &format!("SELECT 1 FROM todos WHERE id IN ('{}', '{}') FOR UPDATE", claims[0].0.0, claims[1].0.0))
            .await;
    let a = complete(0, &claims[0].1);
    wait_for_blocked(&app, 1).await;
    let b = complete(1, &claims[1].1);
    wait_for_blocked(&app, 2).await;
    let c = complete(2, &claims[2].1);
    let wrong = complete(3, &claims[4].1);
    let e = complete(4, &claims[4].1);
    wait_for_waiting(&app, "complete", 3).await;
    blocker.batch_execute("COMMIT").await.expect("let go");

    for (i, h) in [(0, a), (1, b), (2, c), (4, e)] {
        let (status, row) = h.await.expect("answer");
        assert_eq!(
            (status, &row["state"], &row["id"]),
            (200, &json!("done"), &json!(claims[i].0.to_string())),
            "{row}"
        );
    }
    let (status, refused) = wrong.await.expect("answer");
    let ran = runs_since(&app, "complete", before).await;
    assert_eq!(ran, (3, 5, 1), "two runs of one, then three together, of which the refused one ran alone");
    // What the same completion answers on its own, now that nothing else is running.
    let (alone_status, alone) = app
        .post(&format!("/api/v1/agent/todos/{}/complete", claims[3].0), &ep.token, json!({"lease_token": claims[4].1}))
        .await;
    assert_eq!((status, &refused), (alone_status.as_u16(), &alone), "the single verb's own refusal");
    assert_eq!(status, 409, "{refused}");
    let (_, t) = app.get(&format!("/api/v1/agent/todos/{}", claims[3].0), &ep.token).await;
    assert_eq!(t["state"], "claimed", "the refused todo is untouched: {t}");
    let history = app
        .db
        .lines(&format!(
            "SELECT concat_ws(' ', seq, outcome, disposition, summary) FROM todo_attempt_history \
             WHERE todo_id = '{}' ORDER BY seq",
            claims[2].0.0
        ))
        .await;
    assert_eq!(history, "1 completed done s2", "the attempt closed as a single completion closes it");
}

#[actix_web::test]
async fn a_budget_still_judges_every_claim_that_waited_together() {
    let (app, ep, owner_token) = app_with_agent().await;
    for i in 0..4 {
        app.create_todo(&ep, "busy", &format!("t{i}")).await;
    }
    let path = format!("/api/v1/endpoints/{}/queues/busy/admission", ep.id);
    let (s, b) = app.call("PUT", &path, Some(&owner_token), Some(&json!({"max_in_flight": 1}))).await;
    assert_eq!(s, 200, "{b}");
    let before = runs(&app, "claim_next").await;
    let blocker = hold(&app, "LOCK TABLE queue_admission IN ACCESS EXCLUSIVE MODE").await;
    let claim = "/api/v1/agent/todos/claim-next";
    let first = post_later(&app, claim, &ep.token, json!({"queue": "busy"}));
    wait_for_blocked(&app, 1).await;
    let later: Vec<_> = (0..3).map(|_| post_later(&app, claim, &ep.token, json!({"queue": "busy"}))).collect();
    wait_for_waiting(&app, "claim_next", 3).await;
    blocker.batch_execute("COMMIT").await.expect("let go");

    let (status, answer) = first.await.expect("first");
    assert_eq!((status, &answer["todo"]["state"]), (200, &json!("claimed")), "{answer}");
    for h in later {
        let (status, answer) = h.await.expect("later");
        assert_eq!((status, answer), (200, json!({"empty": true, "deferred": "in_flight_full"})));
    }
    let counted = app
        .db
        .count("SELECT coalesce(sum(count), 0)::bigint FROM queue_deferrals WHERE reason = 'in_flight_full'")
        .await;
    assert_eq!(counted, 3, "each refusal counted once");
    let ran = runs_since(&app, "claim_next", before).await;
    assert_eq!(ran, (2, 4, 3), "the three that waited together were sent to claim alone, under the budget");
    let in_flight = app.db.count("SELECT count(*) FROM todos WHERE state = 'claimed'").await;
    assert_eq!(in_flight, 1);
}
