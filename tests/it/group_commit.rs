//! Single claim-next and complete requests that arrive while many of the verb's earlier
//! requests are in flight (`CLAIM_HEAT`, `COMPLETION_HEAT`; for claims the endpoint's
//! completions count too) are answered together, by one statement, each
//! caller with what its own request would have answered: its own todo, lease token, lease
//! length and claimant; its own completion, or its own error; and an admission budget
//! still judges every claim. With fewer at once, each runs alone. Each test holds the
//! database (a lock the statement needs) so that the requests running alone are seen
//! blocked, and the later ones waiting (`switchboard_coalesce_waiting`), before it lets
//! go.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use switchboard::service::group_commit::{CLAIM_HEAT, COMPLETION_HEAT};

use crate::harness::wait::{wait_for_blocked, wait_metric_at};
use crate::harness::{Ep, TestApp};

/// How long the requests held at the database may take to be seen blocked there.
const BLOCKED_WITHIN: Duration = Duration::from_secs(30);

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

/// Waits until `n` requests of `verb` wait for a run.
async fn wait_for_waiting(app: &TestApp, verb: &str, n: u64) {
    let series = format!(r#"switchboard_coalesce_waiting{{verb="{verb}"}}"#);
    wait_metric_at(&app.base, TOKEN, &series, n, Duration::from_secs(30)).await;
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
    let app = TestApp::spawn_with(|s| {
        s.metrics_token = Some(TOKEN.into());
        // Room for every request the tests hold at the database at once.
        s.db_pool_size = 16;
    })
    .await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    (app, ep, owner.token)
}

#[actix_web::test]
async fn claims_that_wait_together_are_claimed_by_one_statement_each_with_its_own_lease_and_claimant() {
    let (app, ep, _) = app_with_agent().await;
    // CLAIM_HEAT.hot_at claims run alone, the next starts the batcher, four wait for it; one is left.
    let at_once = CLAIM_HEAT.hot_at + 1;
    let callers = at_once + 4;
    let mut created = Vec::new();
    for i in 0..=callers {
        created.push(app.create_todo(&ep, "q", &format!("t{i}")).await.to_string());
    }
    let before = runs(&app, "claim_next").await;
    let blocker = app.db.hold("LOCK TABLE queue_admission IN ACCESS EXCLUSIVE MODE").await;
    let path = "/api/v1/agent/todos/claim-next";
    let claim = |i: usize| {
        let body = json!({"queue": "q", "claimant": format!("w{i}"), "lease_ttl_seconds": 100 * i});
        post_later(&app, path, &ep.token, body)
    };
    let mut handles = Vec::new();
    for i in 1..=at_once {
        handles.push((i, claim(i)));
        wait_for_blocked(&app.db, i as i64, BLOCKED_WITHIN).await;
    }
    for i in at_once + 1..=callers {
        handles.push((i, claim(i)));
    }
    wait_for_waiting(&app, "claim_next", 4).await;
    blocker.commit().await;

    let mut answers = Vec::new();
    for (i, h) in handles {
        answers.push((i, h.await.expect("answer")));
    }
    let ran = runs_since(&app, "claim_next", before).await;
    assert_eq!(
        ran,
        (at_once as u64 + 1, callers as u64, 0),
        "each of the first ones alone, then the four that waited together, none sent back to run alone"
    );
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
        let lease = chrono::DateTime::parse_from_rfc3339(t["lease_expires_at"].as_str().unwrap()).unwrap()
            - chrono::DateTime::parse_from_rfc3339(t["updated_at"].as_str().unwrap()).unwrap();
        let asked = 100 * *i as i64;
        assert!((asked - 1..=asked).contains(&lease.num_seconds()), "caller {i}: lease {lease}");
    }
    assert_eq!(ids, created[..callers].iter().cloned().collect(), "the oldest, one each");
    assert_eq!(tokens.len(), callers, "a lease token each");
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
    assert_eq!(pending["todo"]["id"], json!(created[callers]), "the last was left pending");
}

#[actix_web::test]
async fn with_fewer_than_hot_at_claims_at_the_database_each_runs_at_once_and_alone() {
    let (app, ep, _) = app_with_agent().await;
    for i in 0..CLAIM_HEAT.hot_at {
        app.create_todo(&ep, "q", &format!("t{i}")).await;
    }
    let before = runs(&app, "claim_next").await;
    let blocker = app.db.hold("LOCK TABLE queue_admission IN ACCESS EXCLUSIVE MODE").await;
    let path = "/api/v1/agent/todos/claim-next";
    let handles: Vec<_> =
        (0..CLAIM_HEAT.hot_at).map(|_| post_later(&app, path, &ep.token, json!({"queue": "q"}))).collect();
    // Every one of them reaches the database: none waits for another.
    wait_for_blocked(&app.db, CLAIM_HEAT.hot_at as i64, BLOCKED_WITHIN).await;
    assert_eq!(app.metric(TOKEN, r#"switchboard_coalesce_waiting{verb="claim_next"}"#).await, 0);
    blocker.commit().await;
    for h in handles {
        let (status, answer) = h.await.expect("answer");
        assert_eq!((status, &answer["todo"]["state"]), (200, &json!("claimed")), "{answer}");
    }
    let ran = runs_since(&app, "claim_next", before).await;
    assert_eq!(ran, (CLAIM_HEAT.hot_at as u64, CLAIM_HEAT.hot_at as u64, 0), "one run each");
}

#[actix_web::test]
async fn completions_that_wait_together_answer_each_as_alone_and_a_wrong_token_fails_only_its_own() {
    let (app, ep, _) = app_with_agent().await;
    // CLAIM_HEAT.hot_at completions run alone and both batchers start at once, each held on a row;
    // the next three wait for them, one of them with another todo's token.
    let at_once = COMPLETION_HEAT.hot_at + COMPLETION_HEAT.runners;
    let mut claims = Vec::new();
    for i in 0..at_once + 3 {
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
    let held: Vec<String> = claims[..at_once].iter().map(|(id, _)| format!("'{}'", id.0)).collect();
    let blocker = app.db.hold(&format!("SELECT 1 FROM todos WHERE id IN ({}) FOR UPDATE", held.join(", "))).await;
    let mut done = Vec::new();
    for (i, (_, token)) in claims.iter().enumerate().take(at_once) {
        done.push((i, complete(i, token)));
        wait_for_blocked(&app.db, i as i64 + 1, BLOCKED_WITHIN).await;
    }
    let (c, wrong_one, e) = (at_once, at_once + 1, at_once + 2);
    done.push((c, complete(c, &claims[c].1)));
    let wrong = complete(wrong_one, &claims[e].1);
    done.push((e, complete(e, &claims[e].1)));
    wait_for_waiting(&app, "complete", 3).await;
    blocker.commit().await;

    for (i, h) in done {
        let (status, row) = h.await.expect("answer");
        assert_eq!(
            (status, &row["state"], &row["id"]),
            (200, &json!("done"), &json!(claims[i].0.to_string())),
            "{row}"
        );
    }
    let (status, refused) = wrong.await.expect("answer");
    let ran = runs_since(&app, "complete", before).await;
    assert_eq!(
        ran,
        (at_once as u64 + 1, at_once as u64 + 3, 1),
        "runs of one, then three together, of which the refused one ran alone"
    );
    // What the same completion answers on its own, now that nothing else is running.
    let (alone_status, alone) = app
        .post(
            &format!("/api/v1/agent/todos/{}/complete", claims[wrong_one].0),
            &ep.token,
            json!({"lease_token": claims[e].1}),
        )
        .await;
    assert_eq!((status, &refused), (alone_status.as_u16(), &alone), "the single verb's own refusal");
    assert_eq!(status, 409, "{refused}");
    let (_, t) = app.get(&format!("/api/v1/agent/todos/{}", claims[wrong_one].0), &ep.token).await;
    assert_eq!(t["state"], "claimed", "the refused todo is untouched: {t}");
    let history = app
        .db
        .lines(&format!(
            "SELECT concat_ws(' ', seq, outcome, disposition, summary) FROM todo_attempt_history \
             WHERE todo_id = '{}' ORDER BY seq",
            claims[c].0.0
        ))
        .await;
    assert_eq!(history, format!("1 completed done s{c}"), "the attempt closed as a single completion closes it");
}

#[actix_web::test]
async fn a_budget_still_judges_every_claim_that_waited_together() {
    let (app, ep, owner_token) = app_with_agent().await;
    let at_once = CLAIM_HEAT.hot_at + 1;
    let callers = at_once + 3;
    for i in 0..callers {
        app.create_todo(&ep, "busy", &format!("t{i}")).await;
    }
    let path = format!("/api/v1/endpoints/{}/queues/busy/admission", ep.id);
    let (s, b) = app.call("PUT", &path, Some(&owner_token), Some(&json!({"max_in_flight": 1}))).await;
    assert_eq!(s, 200, "{b}");
    let before = runs(&app, "claim_next").await;
    let blocker = app.db.hold("LOCK TABLE queue_admission IN ACCESS EXCLUSIVE MODE").await;
    let claim = "/api/v1/agent/todos/claim-next";
    let mut handles = Vec::new();
    for i in 1..=at_once {
        handles.push(post_later(&app, claim, &ep.token, json!({"queue": "busy"})));
        wait_for_blocked(&app.db, i as i64, BLOCKED_WITHIN).await;
    }
    for _ in at_once..callers {
        handles.push(post_later(&app, claim, &ep.token, json!({"queue": "busy"})));
    }
    wait_for_waiting(&app, "claim_next", 3).await;
    blocker.commit().await;

    let mut claimed = 0;
    for h in handles {
        let (status, answer) = h.await.expect("answer");
        assert_eq!(status, 200, "{answer}");
        if answer["todo"]["state"] == json!("claimed") {
            claimed += 1;
        } else {
            assert_eq!(answer, json!({"empty": true, "deferred": "in_flight_full"}));
        }
    }
    assert_eq!(claimed, 1, "one in flight at most");
    let counted = app
        .db
        .count("SELECT coalesce(sum(count), 0)::bigint FROM queue_deferrals WHERE reason = 'in_flight_full'")
        .await;
    assert_eq!(counted, callers as i64 - 1, "each refusal counted once");
    let ran = runs_since(&app, "claim_next", before).await;
    assert_eq!(
        ran,
        (at_once as u64 + 1, callers as u64, 3),
        "the three that waited together were sent to claim alone, under the budget"
    );
    let in_flight = app.db.count("SELECT count(*) FROM todos WHERE state = 'claimed'").await;
    assert_eq!(in_flight, 1);
}

#[actix_web::test]
async fn a_refused_request_among_group_committed_claims_takes_no_todo_from_the_others() {
    use switchboard::store::signals::Emitter;
    use switchboard::store::todos::{ClaimOutcome, ClaimRequest, EachClaim, NewTodo};

    let (app, ep, _) = app_with_agent().await;
    let store = app.db.store(Emitter::none());
    let mut created = Vec::new();
    for i in 0..3 {
        created.push(store.create_todo(NewTodo::new(ep.id, "q", format!("t{i}"))).await.unwrap().todo.id);
    }
    let claim = |lease: i32, who: &str| ClaimRequest {
        queue: Some("q".into()),
        lease_ttl_seconds: Some(lease),
        claimant: Some(who.into()),
        ..ClaimRequest::default()
    };
    let reqs = [claim(60, "w1"), claim(0, "refused"), claim(60, "w3")];
    let EachClaim::Answered(answers) = store.claim_next_each(ep.id, &reqs).await.expect("the statement") else {
        panic!("no budget here");
    };
    let claimed = |a: &switchboard::error::Result<ClaimOutcome>| match a {
        Ok(ClaimOutcome::Claimed(c)) => Some((c.todo.id, c.todo.attempt_claimant.clone())),
        _ => None,
    };
    assert_eq!(claimed(&answers[0]), Some((created[0], Some("w1".into()))));
    assert!(matches!(answers[1], Err(switchboard::error::Error::InvalidArgument(_))), "{:?}", answers[1]);
    assert_eq!(claimed(&answers[2]), Some((created[1], Some("w3".into()))), "the next todo, not the refused one's");
    let states = app.db.lines("SELECT state FROM todos ORDER BY created_at, id").await;
    assert_eq!(states, "claimed\nclaimed\npending", "nothing claimed for nobody");
}

#[actix_web::test]
async fn an_endpoints_completions_in_flight_turn_its_claims_hot() {
    let (app, ep, _) = app_with_agent().await;
    let completing = CLAIM_HEAT.hot_at;
    let mut claims = Vec::new();
    for i in 0..completing {
        app.create_todo(&ep, "q", &format!("done{i}")).await;
        let c = app.claim_next(&ep).await;
        claims.push((c["todo"]["id"].as_str().unwrap().to_owned(), c["lease_token"].as_str().unwrap().to_owned()));
    }
    for i in 0..2 {
        app.create_todo(&ep, "q", &format!("next{i}")).await;
    }
    let before = runs(&app, "claim_next").await;
    // Claims wait on the budget table, completions on their rows.
    let budgets = app.db.hold("LOCK TABLE queue_admission IN ACCESS EXCLUSIVE MODE").await;
    let rows = app.db.hold("SELECT 1 FROM todos WHERE state = 'claimed' FOR UPDATE").await;
    // The first completions run alone, the next start both batchers: each is seen at the
    // database before the next is sent; the rest wait.
    let at_database = COMPLETION_HEAT.hot_at + COMPLETION_HEAT.runners;
    let mut completions = Vec::new();
    for (i, (id, token)) in claims.iter().enumerate() {
        let path = format!("/api/v1/agent/todos/{id}/complete");
        completions.push(post_later(&app, &path, &ep.token, json!({"lease_token": token})));
        if i < at_database {
            wait_for_blocked(&app.db, i as i64 + 1, BLOCKED_WITHIN).await;
        }
    }
    wait_for_waiting(&app, "complete", (completing - at_database) as u64).await;

    // A claim now finds that many of the endpoint's requests in flight: its lane is hot,
    // its batcher takes it, and the next claim waits for that batcher instead of running
    // alone (a cold lane's claims never wait).
    let path = "/api/v1/agent/todos/claim-next";
    let first = post_later(&app, path, &ep.token, json!({"queue": "q"}));
    wait_for_blocked(&app.db, at_database as i64 + 1, BLOCKED_WITHIN).await;
    let second = post_later(&app, path, &ep.token, json!({"queue": "q"}));
    wait_for_waiting(&app, "claim_next", 1).await;
    rows.commit().await;
    budgets.commit().await;

    for h in completions {
        let (status, row) = h.await.expect("answer");
        assert_eq!((status, &row["state"]), (200, &json!("done")), "{row}");
    }
    let mut next = BTreeSet::new();
    for h in [first, second] {
        let (status, claim) = h.await.expect("answer");
        assert_eq!(status, 200, "{claim}");
        next.insert(claim["todo"]["title"].as_str().expect("a todo each").to_owned());
    }
    assert_eq!(next, BTreeSet::from(["next0".to_owned(), "next1".to_owned()]));
    assert_eq!(runs_since(&app, "claim_next", before).await, (2, 2, 0), "two batches of one, none sent back");
}
