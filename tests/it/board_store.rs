//! What the Board's Todos view reads from the store: the Dead list (scope, predicate,
//! order, search, limit), the other pills' lists, the pill counts agreeing with the
//! lists, the dead-letters-per-day chart, and the bulk retry of a search's matches.

use switchboard::domain::ids::{EndpointId, ScopeId, TodoId};
use switchboard::domain::pills::{COUNT_CAP, Pill, PillCount, PillCounts};
use switchboard::domain::todo_state::{DeadReason, TeamRole, TodoState};
use switchboard::store::board::{CHART_QUEUES, DeadLetterDay};
use switchboard::store::todos::{ClaimRequest, Finish, NewTodo};

use crate::harness::{Ep, TestApp};

/// A todo from `new`, claimed once and failed with `summary`: a dead letter when its
/// cap is 1, a failed todo with a retry scheduled above that.
async fn fail_once(app: &TestApp, new: NewTodo, summary: &str) -> TodoId {
    let endpoint = new.endpoint_id;
    let id = app.store.create_todo(new).await.unwrap().todo.id;
    app.store.claim(endpoint, id, ClaimRequest::default()).await.unwrap();
    let finish = Finish { summary: Some(summary.into()), ..Finish::default() };
    app.store.fail(endpoint, id, finish).await.unwrap();
    id
}

/// A dead letter on `ep`'s `queue` titled `title`, closed with the summary
/// "`title` failed".
async fn dead(app: &TestApp, ep: &Ep, queue: &str, title: &str) -> TodoId {
    let new = NewTodo { max_attempts: Some(1), ..NewTodo::new(ep.id, queue, title) };
    fail_once(app, new, &format!("{title} failed")).await
}

/// A failed todo with a retry scheduled.
async fn retrying(app: &TestApp, ep: &Ep, title: &str) -> TodoId {
    let new = NewTodo { max_attempts: Some(3), ..NewTodo::new(ep.id, "builds", title) };
    fail_once(app, new, "will retry").await
}

async fn pending(app: &TestApp, ep: &Ep, title: &str) -> TodoId {
    app.store.create_todo(NewTodo::new(ep.id, "builds", title)).await.unwrap().todo.id
}

async fn claimed(app: &TestApp, ep: &Ep, title: &str) -> TodoId {
    let id = pending(app, ep, title).await;
    app.store.claim(ep.id, id, ClaimRequest::default()).await.unwrap();
    id
}

async fn done(app: &TestApp, ep: &Ep, title: &str) -> TodoId {
    let id = claimed(app, ep, title).await;
    app.store.complete(ep.id, id, Finish::default()).await.unwrap();
    id
}

/// Rows written straight into `todos` (for volumes the API would take long to make).
async fn insert_rows(app: &TestApp, ep: EndpointId, scope: ScopeId, n: u32, state_sql: &str) {
    let (state, extra_cols, extra_vals) = match state_sql {
        "dead" => {
            ("failed", ", dead_reason, dead_lettered_at", ", 'attempts_exhausted', now() - g * interval '1 second'")
        }
        "pending" => ("pending", "", ""),
        other => panic!("no such row kind {other}"),
    };
    app.db
        .exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, created_at{extra_cols}) \
             SELECT gen_random_uuid(), '{}', '{}', 'bulk', 'bulk ' || g, '{state}', now() - g * interval '1 second'\
             {extra_vals} FROM generate_series(1, {n}) g",
            ep.0, scope.0
        ))
        .await;
}

fn ids<T>(rows: &[T], id: impl Fn(&T) -> TodoId) -> Vec<TodoId> {
    rows.iter().map(id).collect()
}

async fn dead_ids(app: &TestApp, scopes: &[ScopeId], q: Option<&str>) -> Vec<TodoId> {
    ids(&app.store.list_dead_letters(scopes, q, 200).await.unwrap(), |d| d.id)
}

async fn pill_ids(app: &TestApp, scopes: &[ScopeId], pill: Pill, q: Option<&str>) -> Vec<TodoId> {
    ids(&app.store.list_todos_for(scopes, pill, q, 200).await.unwrap(), |t| t.id)
}

#[actix_web::test]
async fn the_dead_list_spans_every_endpoint_and_scope_of_the_human_and_nothing_of_anyone_elses() {
    let app = TestApp::spawn().await;
    let alice = app.owner("alice@example.com").await;
    let bob = app.owner("bob@example.com").await;
    let carol = app.owner("carol@example.com").await;
    let (team, _, team_scope) = app.store.create_team("ops", "alice@example.com").await.unwrap();
    app.store.add_team_member(team, carol.id, TeamRole::Member).await.unwrap();
    let a1 = app.agent(alice.scope, "alice-one").await;
    let a2 = app.agent(alice.scope, "alice-two").await;
    let b1 = app.agent(bob.scope, "bob-one").await;
    let t1 = app.agent(team_scope, "team-one").await;
    let mine1 = dead(&app, &a1, "builds", "mine one").await;
    let mine2 = dead(&app, &a2, "deploys", "mine two").await;
    let bobs = dead(&app, &b1, "builds", "bob's").await;
    let teams = dead(&app, &t1, "triage", "the team's").await;

    let alice_reach = app.store.reach_of(alice.id).await.unwrap().scope_ids();
    let carol_reach = app.store.reach_of(carol.id).await.unwrap().scope_ids();
    let bob_reach = app.store.reach_of(bob.id).await.unwrap().scope_ids();
    assert_eq!(dead_ids(&app, &alice_reach, None).await, vec![teams, mine2, mine1]);
    assert_eq!(dead_ids(&app, &carol_reach, None).await, vec![teams], "a member sees the team's, not the admin's own");
    assert_eq!(dead_ids(&app, &bob_reach, None).await, vec![bobs]);
    // A scope listed twice lists its dead letters once.
    assert_eq!(dead_ids(&app, &[bob.scope, bob.scope], None).await, vec![bobs]);
    // Not even an exact id search reaches across scopes.
    assert!(dead_ids(&app, &bob_reach, Some(&mine1.to_string())).await.is_empty());
    assert_eq!(app.store.pill_counts(&alice_reach).await.unwrap().dead, PillCount::Exact(3));
    assert_eq!(app.store.pill_counts(&carol_reach).await.unwrap().dead, PillCount::Exact(1));

    let row = &app.store.list_dead_letters(&alice_reach, Some("mine two"), 10).await.unwrap()[0];
    assert_eq!((row.queue.as_str(), row.endpoint.as_str()), ("deploys", "alice-two"));
    assert_eq!(row.reason, DeadReason::AttemptsExhausted);
    assert_eq!(row.attempts_total, 1);
    assert_eq!(row.final_summary.as_deref(), Some("mine two failed"));
    assert!(row.final_at.is_some_and(|at| at == row.dead_lettered_at));
}

#[actix_web::test]
async fn a_failed_todo_with_a_retry_scheduled_is_failed_not_dead_and_quarantine_is_in_no_pill() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let scopes = [owner.scope];
    let parked = retrying(&app, &ep, "parked").await;
    let gone = dead(&app, &ep, "builds", "gone").await;
    // A quarantined delivery, even one failed with no retry, is on the quarantine page only.
    app.db
        .exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, dead_reason, dead_lettered_at, \
               quarantine_reason) \
             VALUES (gen_random_uuid(), '{ep}', '{s}', 'quarantine', 'held dead', 'failed', 'attempts_exhausted', \
               now(), 'untrusted_actor'), \
             (gen_random_uuid(), '{ep}', '{s}', 'quarantine', 'held', 'pending', NULL, NULL, 'untrusted_actor')",
            ep = ep.id.0,
            s = owner.scope.0
        ))
        .await;

    assert_eq!(dead_ids(&app, &scopes, None).await, vec![gone]);
    assert_eq!(pill_ids(&app, &scopes, Pill::Failed, None).await, vec![parked]);
    assert!(pill_ids(&app, &scopes, Pill::Pending, None).await.is_empty());
    assert_eq!(pill_ids(&app, &scopes, Pill::All, None).await, vec![gone, parked]);
    let counts = app.store.pill_counts(&scopes).await.unwrap();
    assert_eq!(
        (counts.failed, counts.dead, counts.all),
        (PillCount::Exact(1), PillCount::Exact(1), PillCount::Exact(2))
    );
    // The Dead pill lists through list_dead_letters only.
    assert!(app.store.list_todos_for(&scopes, Pill::Dead, None, 10).await.is_err());

    // A due retry requeued by the scheduler is pending again; a dead letter never is.
    app.make_retry_due(parked).await;
    app.store.requeue_due_retries().await.unwrap();
    assert_eq!(pill_ids(&app, &scopes, Pill::Pending, None).await, vec![parked]);
    assert_eq!(dead_ids(&app, &scopes, None).await, vec![gone]);
}

#[actix_web::test]
async fn dead_letters_list_newest_death_first_with_ties_broken_by_id_and_honour_the_limit() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let scopes = [owner.scope];
    let mut made = Vec::new();
    for i in 0..5 {
        made.push(dead(&app, &ep, "builds", &format!("dead {i}")).await);
    }
    // Deaths at 0, 1, 2, 2 and 3 minutes ago (the two at 2 minutes tie).
    for (id, mins) in made.iter().zip([0, 1, 2, 2, 3]) {
        app.db
            .exec(&format!(
                "UPDATE todos SET dead_lettered_at = date_trunc('second', now()) - interval '{mins} minutes' \
                 WHERE id = '{}'",
                id.0
            ))
            .await;
    }
    let (tie_hi, tie_lo) = if made[2].0 > made[3].0 { (made[2], made[3]) } else { (made[3], made[2]) };
    let want = vec![made[0], made[1], tie_hi, tie_lo, made[4]];
    assert_eq!(dead_ids(&app, &scopes, None).await, want);
    let two = app.store.list_dead_letters(&scopes, None, 2).await.unwrap();
    assert_eq!(ids(&two, |d| d.id), want[..2]);
    for bad in [0, 501] {
        assert!(app.store.list_dead_letters(&scopes, None, bad).await.is_err(), "limit {bad}");
    }
    for bad in [0, 201] {
        assert!(app.store.list_todos_for(&scopes, Pill::All, None, bad).await.is_err(), "limit {bad}");
    }
}

#[actix_web::test]
async fn dead_letter_search_matches_an_id_exactly_and_each_field_as_a_literal_case_insensitive_substring() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let scopes = [owner.scope];
    let labelled = |queue: &str, title: &str, source: &str, kind: &str| NewTodo {
        max_attempts: Some(1),
        source: Some(source.into()),
        kind: Some(kind.into()),
        ..NewTodo::new(ep.id, queue, title)
    };
    let push = fail_once(&app, labelled("builds", "Compile 100%_done", "github", "push"), "red").await;
    let invoice = fail_once(&app, labelled("billing", "Charge card", "stripe", "invoice.paid"), "declined").await;
    let alive = pending(&app, &ep, "alive").await;

    for (q, want) in [
        ("GITHUB", vec![push]),         // source
        ("invoice.p", vec![invoice]),   // kind
        ("bill", vec![invoice]),        // queue
        ("charge CARD", vec![invoice]), // title, any case
        ("100%_", vec![push]),          // wildcards are literal…
        ("0%x", vec![]),                // …so this matches nothing
        ("github push", vec![]),        // a match must lie within one field
        ("zzz", vec![]),
    ] {
        assert_eq!(dead_ids(&app, &scopes, Some(q)).await, want, "search {q:?}");
        let n = want.len() as u32;
        assert_eq!(app.store.count_dead_letters(&scopes, Some(q)).await.unwrap(), PillCount::Exact(n), "{q:?}");
    }
    assert_eq!(dead_ids(&app, &scopes, Some(&format!(" {invoice} "))).await, vec![invoice]);
    // An id search finds dead letters only; the live todo is on another pill.
    assert!(dead_ids(&app, &scopes, Some(&alive.to_string())).await.is_empty());
    assert_eq!(pill_ids(&app, &scopes, Pill::Pending, Some(&alive.to_string())).await, vec![alive]);
    assert_eq!(pill_ids(&app, &scopes, Pill::All, Some("ALIVE")).await, vec![alive]);
    assert!(pill_ids(&app, &scopes, Pill::Done, Some("alive")).await.is_empty());
    assert!(app.store.list_dead_letters(&scopes, Some(&"x".repeat(201)), 10).await.is_err());
}

#[actix_web::test]
async fn every_pill_count_agrees_with_its_list() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let other = app.agent(owner.scope, "other").await;
    let scopes = [owner.scope];
    for i in 0..3 {
        pending(&app, &ep, &format!("p{i}")).await;
    }
    claimed(&app, &other, "c0").await;
    claimed(&app, &other, "c1").await;
    done(&app, &ep, "d0").await;
    retrying(&app, &ep, "f0").await;
    dead(&app, &ep, "builds", "x0").await;
    dead(&app, &other, "deploys", "x1").await;
    // Interrupted and canceled todos count under All only.
    let asking = claimed(&app, &ep, "i0").await;
    app.db
        .exec(&format!(
            "UPDATE todos SET state = 'input_required', lease_expires_at = NULL, \
             interrupt_expires_at = now() + interval '1 hour', interrupt_wait_seconds = 3600 WHERE id = '{}'",
            asking.0
        ))
        .await;
    let dropped = pending(&app, &ep, "k0").await;
    app.db.exec(&format!("UPDATE todos SET state = 'canceled' WHERE id = '{}'", dropped.0)).await;

    let counts = app.store.pill_counts(&scopes).await.unwrap();
    let exact = |n: u32| PillCount::Exact(n);
    assert_eq!(
        counts,
        PillCounts {
            all: exact(11),
            pending: exact(3),
            claimed: exact(2),
            done: exact(1),
            failed: exact(1),
            dead: exact(2)
        }
    );
    for pill in [Pill::All, Pill::Pending, Pill::Claimed, Pill::Done, Pill::Failed] {
        let listed = app.store.list_todos_for(&scopes, pill, None, 200).await.unwrap();
        assert_eq!(counts.get(pill), exact(listed.len() as u32), "{pill}");
        assert!(listed.windows(2).all(|w| (w[0].created_at, w[0].id) >= (w[1].created_at, w[1].id)), "{pill}");
        if pill != Pill::All {
            assert!(listed.iter().all(|t| pill.states().contains(&t.state)), "{pill}");
        }
    }
    assert_eq!(counts.dead, exact(dead_ids(&app, &scopes, None).await.len() as u32));
    let all = app.store.list_todos_for(&scopes, Pill::All, None, 200).await.unwrap();
    assert!(all.iter().any(|t| t.state == TodoState::InputRequired));
    assert_eq!(all.iter().filter(|t| t.is_dead_letter()).count(), 2);
}

#[actix_web::test]
async fn counts_beyond_the_cap_read_as_at_least_the_cap_and_up_to_it_stay_exact() {
    let (app, owner, ep) = TestApp::with_worker().await;
    insert_rows(&app, ep.id, owner.scope, COUNT_CAP + 1, "dead").await;
    insert_rows(&app, ep.id, owner.scope, COUNT_CAP, "pending").await;
    let counts = app.store.pill_counts(&[owner.scope]).await.unwrap();
    assert_eq!(counts.dead, PillCount::AtLeast(COUNT_CAP));
    assert_eq!(counts.dead.to_string(), "10 000+");
    assert_eq!(counts.pending, PillCount::Exact(COUNT_CAP));
    assert_eq!(counts.all, PillCount::AtLeast(COUNT_CAP));
    // 1, 10–19, 100–199, 1000–1999, 10000 and 10001.
    assert_eq!(app.store.count_dead_letters(&[owner.scope], Some("bulk 1")).await.unwrap(), PillCount::Exact(1113));
    // A text search on the other pills looks through the newest 5 000 (`bulk 1` to
    // `bulk 5000`); an id search finds the oldest todo anyway.
    assert!(pill_ids(&app, &[owner.scope], Pill::Pending, Some("bulk 10000")).await.is_empty());
    assert_eq!(pill_ids(&app, &[owner.scope], Pill::Pending, Some("bulk 4999")).await.len(), 1);
    let oldest = todo_titled(&app, "bulk 10000", "pending").await;
    assert_eq!(pill_ids(&app, &[owner.scope], Pill::Pending, Some(&oldest.to_string())).await, vec![oldest]);
}

/// The id of the todo titled `title` in `state` (written by [`insert_rows`]).
async fn todo_titled(app: &TestApp, title: &str, state: &str) -> TodoId {
    let text = app.db.plan(&format!("SELECT id::text FROM todos WHERE title = '{title}' AND state = '{state}'")).await;
    TodoId(text.trim().parse().unwrap())
}

#[actix_web::test]
async fn dead_letters_per_day_count_by_utc_day_within_the_fortnight_and_fold_quiet_queues_into_other() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let stranger = app.owner("stranger@example.com").await;
    let theirs = app.agent(stranger.scope, "theirs").await;
    // Queue qN gets N + 1 dead letters today; q0 and q1 are the quietest of eight.
    for n in 0..8u32 {
        for i in 0..=n {
            dead(&app, &ep, &format!("q{n}"), &format!("q{n} #{i}")).await;
        }
    }
    // Two on q7 three days ago, one fifteen days ago (outside the chart), one of
    // someone else's.
    let earlier = [dead(&app, &ep, "q7", "three days").await, dead(&app, &ep, "q7", "three days").await];
    let old = dead(&app, &ep, "q7", "old").await;
    dead(&app, &theirs, "q7", "not mine").await;
    for id in earlier {
        app.db
            .exec(&format!("UPDATE todos SET dead_lettered_at = now() - interval '3 days' WHERE id = '{}'", id.0))
            .await;
    }
    app.db
        .exec(&format!("UPDATE todos SET dead_lettered_at = now() - interval '15 days' WHERE id = '{}'", old.0))
        .await;

    let chart = app.store.dead_letters_per_day(&[owner.scope]).await.unwrap();
    let today = chrono::Utc::now().date_naive();
    assert_eq!(chart.first_day, today - chrono::Duration::days(13));
    let today_rows: Vec<&DeadLetterDay> = chart.rows.iter().filter(|r| r.day == today).collect();
    let named: Vec<(&str, i64)> = today_rows.iter().filter_map(|r| r.queue.as_deref().map(|q| (q, r.count))).collect();
    assert_eq!(named.len() as i64, CHART_QUEUES);
    assert_eq!(named, vec![("q2", 3), ("q3", 4), ("q4", 5), ("q5", 6), ("q6", 7), ("q7", 8)]);
    let other: Vec<i64> = today_rows.iter().filter(|r| r.queue.is_none()).map(|r| r.count).collect();
    assert_eq!(other, vec![1 + 2], "q0 and q1 summed");
    let three_days_ago = today - chrono::Duration::days(3);
    assert!(chart.rows.contains(&DeadLetterDay { day: three_days_ago, queue: Some("q7".into()), count: 2 }));
    let total: i64 = chart.rows.iter().map(|r| r.count).sum();
    assert_eq!(total, 36 + 2, "every dead letter of the fortnight, the old one and the stranger's left out");
}

#[actix_web::test]
async fn bulk_retry_moves_the_searched_dead_letters_in_scope_only_and_counts_what_moved_and_what_stayed() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let stranger = app.owner("stranger@example.com").await;
    let theirs = app.agent(stranger.scope, "theirs").await;
    let doomed = app.agent(owner.scope, "doomed").await;
    let scopes = [owner.scope];
    let a = dead(&app, &ep, "builds", "build a").await;
    let b = dead(&app, &ep, "builds", "build b").await;
    let deploy = dead(&app, &ep, "deploys", "deploy").await;
    let foreign = dead(&app, &theirs, "builds", "their build").await;
    // Revoking an endpoint dead-letters what it held; those cannot go back.
    pending(&app, &doomed, "stranded build").await;
    app.store.revoke_endpoint(&scopes, doomed.id).await.unwrap();
    // Two dead letters with one idempotency key: only one may go back.
    let keyed = |title: &str| NewTodo {
        max_attempts: Some(1),
        idempotency_key: Some("build-42".into()),
        ..NewTodo::new(ep.id, "builds", title)
    };
    let key_old = fail_once(&app, keyed("build keyed old"), "x").await;
    let key_new = fail_once(&app, keyed("build keyed new"), "x").await;
    app.signals.take().await;

    assert_eq!(app.store.count_dead_letters(&scopes, Some("build")).await.unwrap(), PillCount::Exact(5));
    let done = app.store.retry_dead_letters(&scopes, Some("build"), None).await.unwrap();
    assert_eq!(done.retried, 3, "{done:?}");
    assert_eq!(done.still_dead, PillCount::Exact(2), "the stranded one and the older keyed one");
    let left = dead_ids(&app, &scopes, None).await;
    assert!(left.contains(&deploy) && left.contains(&key_old) && !left.contains(&key_new), "{left:?}");
    assert_eq!(left.len(), 3);
    assert_eq!(dead_ids(&app, &[stranger.scope], None).await, vec![foreign], "another scope's stay dead");
    for id in [a, b, key_new] {
        let t = app.store.get_todo(&switchboard::store::todos::Caller::Operator(scopes.to_vec()), id).await.unwrap();
        assert_eq!((t.todo.state, t.todo.attempt, t.todo.attempts_total), (TodoState::Pending, 0, 1));
        assert!(t.todo.dead_reason.is_none() && t.todo.dead_lettered_at.is_none());
        assert_eq!(t.attempts.len(), 1, "history kept");
    }
    assert!(app.signals.take().await.is_empty(), "retry now rings nothing");
    // Nothing left to move: a second run moves nothing and says what stays.
    let again = app.store.retry_dead_letters(&scopes, Some("build"), None).await.unwrap();
    assert_eq!((again.retried, again.still_dead), (0, PillCount::Exact(2)));
    // An id search retries exactly that one.
    let one = app.store.retry_dead_letters(&scopes, Some(&deploy.to_string()), None).await.unwrap();
    assert_eq!((one.retried, one.still_dead), (1, PillCount::Exact(0)));
    assert_eq!(app.store.pill_counts(&scopes).await.unwrap().dead, PillCount::Exact(2));
}

#[actix_web::test]
async fn the_other_pills_list_and_count_only_the_humans_scopes_and_a_member_sees_the_teams() {
    let app = TestApp::spawn().await;
    let alice = app.owner("alice@example.com").await;
    let bob = app.owner("bob@example.com").await;
    let carol = app.owner("carol@example.com").await;
    let (team, _, team_scope) = app.store.create_team("ops", "alice@example.com").await.unwrap();
    app.store.add_team_member(team, carol.id, TeamRole::Member).await.unwrap();
    let a = app.agent(alice.scope, "alice-one").await;
    let b = app.agent(bob.scope, "bob-one").await;
    let t = app.agent(team_scope, "team-one").await;
    let alices = pending(&app, &a, "alice's").await;
    let bobs = pending(&app, &b, "bob's").await;
    let bobs_done = done(&app, &b, "bob's done").await;
    let teams = claimed(&app, &t, "the team's").await;

    let reach = |id| {
        let app = &app;
        async move { app.store.reach_of(id).await.unwrap().scope_ids() }
    };
    let (alice_reach, carol_reach, bob_reach) = (reach(alice.id).await, reach(carol.id).await, reach(bob.id).await);
    assert_eq!(pill_ids(&app, &alice_reach, Pill::All, None).await, vec![teams, alices]);
    assert_eq!(pill_ids(&app, &carol_reach, Pill::All, None).await, vec![teams], "a member sees the team's only");
    assert_eq!(pill_ids(&app, &carol_reach, Pill::Claimed, None).await, vec![teams]);
    assert_eq!(pill_ids(&app, &bob_reach, Pill::All, None).await, vec![bobs_done, bobs]);
    for pill in [Pill::All, Pill::Pending, Pill::Done] {
        for q in [None, Some("bob"), Some(&*bobs.to_string()), Some(&*bobs_done.to_string())] {
            let seen = pill_ids(&app, &alice_reach, pill, q).await;
            assert!(!seen.contains(&bobs) && !seen.contains(&bobs_done), "{pill} {q:?}: {seen:?}");
        }
    }
    let counts = app.store.pill_counts(&carol_reach).await.unwrap();
    assert_eq!(
        (counts.all, counts.claimed, counts.pending),
        (PillCount::Exact(1), PillCount::Exact(1), PillCount::Exact(0))
    );
}
