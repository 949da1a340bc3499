//! The property the batch verbs are built on: the same operations, batched or one at a
//! time, leave the same rows, attempts, outbox records and signals, and answer each item
//! the same. Each case generates a sequence of operations (creates with and without
//! idempotency keys, claims with a limit, completes and fails with right, wrong and no
//! lease tokens, todos named twice, retries coming due) under an admission budget or
//! none, and runs it on two fresh endpoints of one owner with a sink: through the single
//! verbs on one, through the batches on the other. At the store: the service adds only
//! the grant check and the shape of the answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use switchboard::domain::admission::{AdmissionChange, Change, Deferral};
use switchboard::domain::ids::{EndpointId, ScopeId, TodoId};
use switchboard::error::Error;
use switchboard::store::Store;
use switchboard::store::endpoints::VendEndpoint;
use switchboard::store::signals::Signal;
use switchboard::store::todos::{ClaimOutcome, ClaimRequest, Finish, NewTodo};

use crate::harness::{Signals, TestDb};

/// Vends an endpoint granted everything.
pub async fn endpoint(store: &Store, scope: ScopeId, slug: &str) -> EndpointId {
    let v = store
        .vend_endpoint(VendEndpoint {
            scope,
            slug: slug.into(),
            grants: switchboard::domain::grants::Verb::ALL.to_vec(),
            default_lease_seconds: None,
            expires_at: None,
        })
        .await
        .unwrap();
    v.endpoint.id
}

/// An enabled sink of `scope` (written directly: nothing here sends to it), so the
/// dead-letter trigger records dead letters for the sinks.
pub async fn sink(db: &TestDb, scope: ScopeId) {
    let scope = scope.0;
    db.exec(&format!(
        "WITH c AS (INSERT INTO connections (id, scope_id, name, kind, secret, fingerprint) \
           VALUES (gen_random_uuid(), '{scope}', 'c-' || gen_random_uuid(), 'gotify', 'sealed', '0123456789ab') \
           RETURNING id) \
         INSERT INTO sinks (id, scope_id, name, kind, base_url, connection_id, budget_per_hour, burst, tokens) \
         SELECT gen_random_uuid(), '{scope}', 's-' || gen_random_uuid(), 'gotify', 'https://203.0.113.10', c.id, \
           30, 10, 10 FROM c"
    ))
    .await;
}

// ---------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------

const QUEUES: [&str; 2] = ["a", "b"];

/// One item of a create.
#[derive(Debug, Clone)]
struct Create {
    queue: usize,
    key: Option<u8>,
    max_attempts: i32,
    /// A blank title: refused.
    invalid: bool,
}

/// Which lease token an item carries.
#[derive(Debug, Clone, Copy)]
enum Token {
    /// The one the side's latest claim of the todo handed out (none if never claimed).
    Own,
    /// None at all: not fenced.
    Unfenced,
    /// One that matches nothing.
    Wrong,
}

/// One item of a complete or fail.
#[derive(Debug, Clone)]
struct Finishing {
    /// The n-th todo the side created (modulo how many it has).
    todo: usize,
    /// An id no todo has instead.
    unknown: bool,
    token: Token,
    summary: Option<u8>,
    /// A refused artifact.
    invalid: bool,
}

#[derive(Debug, Clone)]
enum Op {
    Create(Vec<Create>),
    Claim {
        limit: i32,
        queue: Option<usize>,
    },
    Complete(Vec<Finishing>),
    Fail(Vec<Finishing>),
    /// Every scheduled retry comes due and the retry scheduler runs.
    RetryDue,
}

/// The admission budget both endpoints get.
#[derive(Debug, Clone, Copy)]
enum Budget {
    None,
    MaxInFlight(i32),
    PausedB,
    PerHour(i32),
}

fn create() -> impl Strategy<Value = Create> {
    (0..2usize, prop::option::weighted(0.4, 0..3u8), 1..=3i32, prop::bool::weighted(0.1))
        .prop_map(|(queue, key, max_attempts, invalid)| Create { queue, key, max_attempts, invalid })
}

fn finishing() -> impl Strategy<Value = Finishing> {
    let token = prop_oneof![6 => Just(Token::Own), 2 => Just(Token::Unfenced), 1 => Just(Token::Wrong)];
    (0..64usize, prop::bool::weighted(0.1), token, prop::option::of(0..4u8), prop::bool::weighted(0.08))
        .prop_map(|(todo, unknown, token, summary, invalid)| Finishing { todo, unknown, token, summary, invalid })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => prop::collection::vec(create(), 1..6).prop_map(Op::Create),
        3 => (1..6i32, prop::option::weighted(0.3, 0..2usize)).prop_map(|(limit, queue)| Op::Claim { limit, queue }),
        3 => prop::collection::vec(finishing(), 1..6).prop_map(Op::Complete),
        3 => prop::collection::vec(finishing(), 1..6).prop_map(Op::Fail),
        1 => Just(Op::RetryDue),
    ]
}

fn budget() -> impl Strategy<Value = Budget> {
    prop_oneof![
        3 => Just(Budget::None),
        1 => (1..4i32).prop_map(Budget::MaxInFlight),
        1 => Just(Budget::PausedB),
        1 => (1..6i32).prop_map(Budget::PerHour),
    ]
}

// ---------------------------------------------------------------------------------------
// One side: the endpoint, the todos it created in order, the tokens it holds
// ---------------------------------------------------------------------------------------

struct Side {
    ep: EndpointId,
    /// Every todo the side created, in order of creation.
    todos: Vec<TodoId>,
    tokens: HashMap<TodoId, String>,
    /// Each answer, normalised (todo ids as their index in `todos`).
    answers: Vec<String>,
}

impl Side {
    fn index(&self, id: TodoId) -> usize {
        self.todos.iter().position(|t| *t == id).unwrap_or(usize::MAX)
    }

    /// The `i`-th item of the create of step `step`.
    fn new_todo(&self, c: &Create, step: usize, i: usize) -> NewTodo {
        let title = if c.invalid { " ".to_owned() } else { format!("todo {step}.{i}") };
        NewTodo {
            source: Some("agent".into()),
            idempotency_key: c.key.map(|k| format!("key-{k}")),
            max_attempts: Some(c.max_attempts),
            ..NewTodo::new(self.ep, QUEUES[c.queue], title)
        }
    }

    fn finish(&self, f: &Finishing, unknown: TodoId) -> (TodoId, Finish) {
        let id = match self.todos.len() {
            0 => unknown,
            _ if f.unknown => unknown,
            n => self.todos[f.todo % n],
        };
        let lease_token = match f.token {
            Token::Own => self.tokens.get(&id).cloned(),
            Token::Unfenced => None,
            Token::Wrong => Some("wrong".to_owned()),
        };
        let finish = Finish {
            result: f.summary.map(|s| serde_json::json!({"s": s})),
            summary: f.summary.map(|s| format!("summary {s}")),
            artifact: f.invalid.then(|| "ftp://refused".to_owned()),
            lease_token,
        };
        (id, finish)
    }

    fn answer(&mut self, what: &str, answer: Result<String, Error>) {
        let text = match answer {
            Ok(ok) => format!("{what} ok {ok}"),
            Err(e) => format!("{what} {}: {e}", e.code()),
        };
        self.answers.push(text);
    }

    fn created(&mut self, outcome: &switchboard::store::todos::CreateOutcome) -> String {
        if outcome.created {
            self.todos.push(outcome.todo.id);
        }
        format!("#{} created={}", self.index(outcome.todo.id), outcome.created)
    }

    fn claimed(&mut self, id: TodoId, token: String, seq: i32) -> String {
        self.tokens.insert(id, token);
        format!("#{} seq {seq}", self.index(id))
    }

    fn deferred(&mut self, why: Deferral) {
        self.answers.push(format!("claim deferred {why:?}"));
    }
}

/// Runs `op`, step `step`, one item at a time.
async fn singles(store: &Store, side: &mut Side, step: usize, op: &Op, unknown: &[TodoId]) {
    match op {
        Op::Create(items) => {
            for (i, c) in items.iter().enumerate() {
                let answer = store.create_todo(side.new_todo(c, step, i)).await.map(|o| side.created(&o));
                side.answer("create", answer);
            }
        }
        Op::Claim { limit, queue } => {
            for _ in 0..*limit {
                let req = ClaimRequest { queue: queue.map(|q| QUEUES[q].to_owned()), ..ClaimRequest::default() };
                match store.claim_next(side.ep, req).await.unwrap() {
                    ClaimOutcome::Claimed(c) => {
                        let text = side.claimed(c.todo.id, c.lease_token, c.attempt_seq);
                        side.answers.push(format!("claim ok {text}"));
                    }
                    ClaimOutcome::Empty => break,
                    ClaimOutcome::Deferred(why) => {
                        side.deferred(why);
                        break;
                    }
                }
            }
        }
        Op::Complete(items) | Op::Fail(items) => {
            let complete = matches!(op, Op::Complete(_));
            for (i, f) in items.iter().enumerate() {
                let (id, finish) = side.finish(f, unknown[i]);
                let answer = if complete {
                    store.complete(side.ep, id, finish).await
                } else {
                    store.fail(side.ep, id, finish).await
                };
                let answer = answer.map(|row| format!("#{} {}", side.index(row.id), row.state));
                side.answer(if complete { "complete" } else { "fail" }, answer);
            }
        }
        Op::RetryDue => {}
    }
}

/// Runs `op`, step `step`, as one batch.
async fn batched(store: &Store, side: &mut Side, step: usize, op: &Op, unknown: &[TodoId]) {
    match op {
        Op::Create(items) => {
            let news = items.iter().enumerate().map(|(i, c)| side.new_todo(c, step, i)).collect();
            for answer in store.create_todos(side.ep, news).await.unwrap() {
                let answer = answer.map(|o| side.created(&o));
                side.answer("create", answer);
            }
        }
        Op::Claim { limit, queue } => {
            let req = ClaimRequest { queue: queue.map(|q| QUEUES[q].to_owned()), ..ClaimRequest::default() };
            let batch = store.claim_next_batch(side.ep, req, *limit).await.unwrap();
            for c in batch.claims {
                let text = side.claimed(c.todo.id, c.lease_token, c.attempt_seq);
                side.answers.push(format!("claim ok {text}"));
            }
            if let Some(why) = batch.deferred {
                side.deferred(why);
            }
        }
        Op::Complete(items) | Op::Fail(items) => {
            let complete = matches!(op, Op::Complete(_));
            let finishes = items
                .iter()
                .enumerate()
                .map(|(i, f)| side.finish(f, unknown[i]))
                .map(|(id, f)| (Some(id), f))
                .collect();
            let answers = if complete {
                store.complete_batch(side.ep, finishes).await.unwrap()
            } else {
                store.fail_batch(side.ep, finishes).await.unwrap()
            };
            for answer in answers {
                let answer = answer.map(|row| format!("#{} {}", side.index(row.id), row.state));
                side.answer(if complete { "complete" } else { "fail" }, answer);
            }
        }
        Op::RetryDue => {}
    }
}

// ---------------------------------------------------------------------------------------
// What is compared
// ---------------------------------------------------------------------------------------

/// Every row the side's endpoint owns, normalised: todos by creation index with their
/// attempts, the outbox records of its dead letters, its budgets' hour windows and its
/// counted deferrals.
async fn rows(db: &TestDb, side: &Side) -> Vec<String> {
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    actix_rt::spawn(async move {
        let _ = conn.await;
    });
    let ep = side.ep.0;
    let text = |sql: &str| sql.replace("{ep}", &ep.to_string());
    let index = |id: &str| side.index(TodoId(id.parse().unwrap()));
    let mut out = Vec::new();
    let todos = client
        .query(
            &text(
                "SELECT id::text, concat_ws(' ', queue, title, state, attempt, attempts_total, max_attempts, \
                   coalesce(idempotency_key, '-'), coalesce(dead_reason, '-'), dead_letter_count, \
                   coalesce(extract(epoch FROM next_retry_at - updated_at)::int, -1), coalesce(result::text, '-'), \
                   lease_token_hash IS NOT NULL, lease_expires_at IS NOT NULL, claimed_by IS NOT NULL, \
                   dead_lettered_at IS NOT NULL, completed_at IS NOT NULL, source, payload_size) \
                 FROM todos WHERE endpoint_id = '{ep}'",
            ),
            &[],
        )
        .await
        .unwrap();
    for t in &todos {
        out.push(format!("todo #{} {}", index(t.get(0)), t.get::<_, String>(1)));
    }
    let attempts = client
        .query(
            &text(
                "SELECT a.todo_id::text, concat_ws(' ', a.seq, coalesce(a.outcome, '-'), coalesce(a.disposition, '-'), \
                   coalesce(a.summary, '-'), a.summary_truncated, coalesce(a.artifact, '-'), a.ended_at IS NULL, \
                   coalesce(a.claimant, '-'), a.relay, a.last_heartbeat_at IS NULL) \
                 FROM todo_attempt_history a JOIN todos t ON t.id = a.todo_id WHERE t.endpoint_id = '{ep}'",
            ),
            &[],
        )
        .await
        .unwrap();
    for a in &attempts {
        out.push(format!("attempt #{} {}", index(a.get(0)), a.get::<_, String>(1)));
    }
    let records = client
        .query(&text("SELECT todo_id::text, concat_ws(' ', queue, dead_letter_count) FROM outbox_events WHERE endpoint_id = '{ep}'"), &[])
        .await
        .unwrap();
    for r in &records {
        out.push(format!("outbox #{} {}", index(r.get(0)), r.get::<_, String>(1)));
    }
    let budgets = client
        .query(
            &text(
                "SELECT concat_ws(' ', 'budget', queue, paused, max_in_flight, per_hour, window_claims) FROM queue_admission \
                 WHERE endpoint_id = '{ep}' UNION ALL \
                 SELECT concat_ws(' ', 'deferred', queue, reason, count) FROM queue_deferrals WHERE endpoint_id = '{ep}'",
            ),
            &[],
        )
        .await
        .unwrap();
    out.extend(budgets.iter().map(|b| b.get::<_, String>(0)));
    out.sort();
    out
}

/// The signals about the side's todos, normalised.
fn signals_of(signals: &[Signal], side: &Side) -> Vec<String> {
    let mut out: Vec<String> = signals
        .iter()
        .filter_map(|s| match s {
            Signal::Ready(r) if r.todo.endpoint_id == side.ep => {
                Some(format!("ready #{} {:?} attempt {}", side.index(r.todo.id), r.reason, r.todo.attempt))
            }
            Signal::DeadLettered(d) if d.todo.endpoint_id == side.ep => Some(format!(
                "dead #{} {:?} count {} relay {} final {:?}",
                side.index(d.todo.id),
                d.reason,
                d.dead_letter_count,
                d.relay,
                d.final_attempt.as_ref().map(|f| (f.seq, f.outcome, f.summary.clone(), f.artifact.clone()))
            )),
            _ => None,
        })
        .collect();
    // Within one operation the order of requeues is the sweep's, not the caller's.
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------------------

static CASE: AtomicU32 = AtomicU32::new(0);

/// What the cases did, over all of them (so a property that compares nothing fails).
static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The kinds of answer and row a run must have met at least once.
const MUST_MEET: &[&str] = &[
    "claim ok",
    "claim deferred",
    "create ok",
    "created=false",
    "create invalid_argument",
    "complete ok",
    "complete conflict",
    "complete not_found",
    "complete invalid_argument",
    "fail ok",
    "fail conflict",
    "fail not_found",
    "dead #",
    "ready #",
    "outbox #",
    "retry_scheduled",
];

async fn set_budget(store: &Store, ep: EndpointId, budget: Budget) {
    let (queue, change) = match budget {
        Budget::None => return,
        Budget::MaxInFlight(n) => ("a", AdmissionChange { max_in_flight: Change::Set(Some(n)), ..Default::default() }),
        Budget::PausedB => ("b", AdmissionChange { paused: Change::Set(true), ..Default::default() }),
        Budget::PerHour(n) => ("a", AdmissionChange { per_hour: Change::Set(Some(n)), ..Default::default() }),
    };
    store.set_admission(ep, queue, change, None).await.unwrap();
}

/// Runs one case; an error says where the two sides parted.
async fn run_case(db: &TestDb, budget: Budget, ops: Vec<Op>) -> Result<(), String> {
    let signals = Signals::start();
    let store = db.store(signals.emitter());
    let n = CASE.fetch_add(1, Ordering::Relaxed);
    let human = store.create_human(&format!("case-{n}@example.com"), "Case", None).await.unwrap();
    sink(db, human.scope).await;
    let mut one = Side {
        ep: endpoint(&store, human.scope, &format!("one-{n}")).await,
        todos: vec![],
        tokens: HashMap::new(),
        answers: vec![],
    };
    let mut many = Side {
        ep: endpoint(&store, human.scope, &format!("many-{n}")).await,
        todos: vec![],
        tokens: HashMap::new(),
        answers: vec![],
    };
    set_budget(&store, one.ep, budget).await;
    set_budget(&store, many.ep, budget).await;
    for (step, op) in ops.iter().enumerate() {
        // Unknown ids: the same positions, the same answers.
        let unknown: Vec<TodoId> = (0..8).map(|_| TodoId::new()).collect();
        singles(&store, &mut one, step, op, &unknown).await;
        batched(&store, &mut many, step, op, &unknown).await;
        if matches!(op, Op::RetryDue) {
            db.exec(&format!(
                "UPDATE todos SET next_retry_at = now() - interval '1 second' \
                 WHERE next_retry_at IS NOT NULL AND endpoint_id IN ('{}', '{}')",
                one.ep.0, many.ep.0
            ))
            .await;
            store.requeue_due_retries().await.unwrap();
        }
        let seen = signals.take().await;
        let (a, b) = (signals_of(&seen, &one), signals_of(&seen, &many));
        if a != b {
            return Err(format!("after step {step} ({op:?}) the signals differ:\n singles {a:#?}\n batches {b:#?}"));
        }
        if let Ok(mut seen) = SEEN.lock() {
            seen.extend(a);
        }
        if one.answers != many.answers {
            return Err(format!(
                "after step {step} ({op:?}) the answers differ:\n singles {:#?}\n batches {:#?}",
                one.answers, many.answers
            ));
        }
    }
    let (a, b) = (rows(db, &one).await, rows(db, &many).await);
    if a != b {
        return Err(format!("the rows differ:\n singles {a:#?}\n batches {b:#?}"));
    }
    if let Ok(mut seen) = SEEN.lock() {
        seen.extend(one.answers);
        seen.extend(a);
    }
    Ok(())
}

#[test]
fn the_same_operations_batched_or_not_leave_the_same_rows_attempts_outbox_records_and_signals() {
    let db = actix_rt::System::new().block_on(TestDb::new());
    // Modest: each case is a few hundred statements on two cores.
    let config = Config { cases: 40, failure_persistence: None, max_shrink_iters: 256, ..Config::default() };
    let mut runner = TestRunner::new(config);
    // Every case starts with some work to act on.
    let first = prop::collection::vec(create(), 2..8).prop_map(Op::Create);
    let case = (budget(), first, prop::collection::vec(op(), 4..18));
    let result = runner.run(&case, |(budget, first, mut ops)| {
        ops.insert(0, first);
        actix_rt::System::new().block_on(run_case(&db, budget, ops)).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let seen = SEEN.lock().unwrap();
    for kind in MUST_MEET {
        let n = seen.iter().filter(|s| s.contains(kind)).count();
        eprintln!("{kind}: {n}");
        assert!(n > 0, "no case met {kind}: the generated operations no longer cover it");
    }
}
