//! The todo lifecycle. Each file is one family of transitions; all of them are
//! conditional statements scoped to the caller, and all return the signals to emit
//! after commit.

mod admitted;
mod attempt_close;
mod batch;
mod bulk_retry;
mod claim;
mod claim_parts;
mod create;
mod finish;
mod interrupt;
mod lease;
mod operator;
mod read;
mod sweeps;

pub(crate) use attempt_close::{claimed_by_sql, closed_cte as closed_attempts_cte, holds_attempt_sql};
pub use batch::{BatchClaim, CLAIM_LIMIT_MAX, CREATE_ITEMS_MAX, EachClaim, FINISH_ITEMS_MAX, ItemResult};
pub use bulk_retry::{BULK_RETRY_BATCH, BULK_RETRY_MAX, BulkRetried};
pub use claim::{ClaimOutcome, ClaimRequest, Claimed};
pub use create::{CreateOutcome, NewTodo, insert_todo};
pub(crate) use create::{Inserted, TODO_INSERT, bind_todo};
pub use finish::Finish;
pub use interrupt::ResumeOutcome;
pub use read::{ListFilter, TodoWithAttempts};
pub(crate) use sweeps::SWEEP_PAUSE_RATIO;
pub use sweeps::{INTERRUPTS_DUE, LEASES_DUE, SweepReport};

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{Array, Bool, Bytea, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::AsyncPgConnection;

use super::signals::{DeadLettered, FinalAttempt, Signal, TodoFacts, TodoReady};
use crate::db::models::TodoRow;
use crate::db::prepared::Prepared;
use crate::db::statement::{Statement, statement};

use crate::domain::ids::{EndpointId, ScopeId, TodoId};
use crate::domain::text::QUARANTINE_QUEUE;
use crate::domain::todo_state::{AttemptOutcome, ReadyReason, TodoState};
use crate::error::Error;

/// Who is acting on a todo, which decides what it may see.
#[derive(Debug, Clone)]
pub enum Caller {
    /// An agent: only its own endpoint's todos, never quarantine.
    Endpoint(EndpointId),
    /// An operator: any todo in these owner scopes.
    Operator(Vec<ScopeId>),
}

/// What an agent may touch, as an SQL predicate on the alias `t` (`$1` is always the todo
/// id, `$2` the endpoint): a statement scoped to the caller has one form per caller.
macro_rules! agent_reach_sql {
    () => {
        "t.endpoint_id = $2 AND t.queue <> 'quarantine'"
    };
}

/// What an operator may touch, as [`agent_reach_sql`] (`$2` the operator's scopes).
macro_rules! operator_reach_sql {
    () => {
        "t.scope_id = ANY($2)"
    };
}
pub(crate) use {agent_reach_sql, operator_reach_sql};

impl Caller {
    /// This caller's form of a statement that has one per caller (scoped by
    /// [`agent_reach_sql`] or [`operator_reach_sql`]).
    pub(crate) fn pick(&self, agent: &'static Statement, operator: &'static Statement) -> &'static Statement {
        match self {
            Caller::Endpoint(_) => agent,
            Caller::Operator(_) => operator,
        }
    }

    /// Binds the caller key as `$2` on a boxed query that already bound `$1`.
    pub(crate) fn bind<'f>(&self, q: BoxedSqlQuery<'f, Pg, SqlQuery>) -> BoxedSqlQuery<'f, Pg, SqlQuery> {
        match self {
            Caller::Endpoint(e) => q.bind::<SqlUuid, _>(e.0),
            Caller::Operator(scopes) => q.bind::<Array<SqlUuid>, _>(scopes.iter().map(|s| s.0).collect::<Vec<_>>()),
        }
    }
}

/// Starts a query with the todo id bound as `$1`.
pub(crate) fn todo_query<'f>(statement: &'static Statement, id: TodoId) -> BoxedSqlQuery<'f, Pg, SqlQuery> {
    statement.query().into_boxed::<Pg>().bind::<SqlUuid, _>(id.0)
}

statement! {
    /// Why an agent's transition missed: the todo's state and lease, within its reach.
    static MISS_AS_AGENT = concat!("SELECT t.state, t.lease_token_hash FROM todos t WHERE t.id = $1 AND ", agent_reach_sql!());
    /// Why an operator's transition missed, as [`MISS_AS_AGENT`].
    static MISS_AS_OPERATOR =
        concat!("SELECT t.state, t.lease_token_hash FROM todos t WHERE t.id = $1 AND ", operator_reach_sql!());
}

/// The sender gate (SPEC section 6) for the todo aliased `t`, as SQL: its delivery
/// verified, or arrived on a token-trust webhook; a todo with no event never passes.
/// A macro so that every statement can splice the one expression with `concat!`.
macro_rules! sender_gate_sql {
    () => {
        concat!("EXISTS (SELECT 1 FROM events e WHERE e.id = t.event_id AND ", event_gate_sql!(), ")")
    };
}

/// The sender gate of the event aliased `e` itself: verified, or token trust. Used
/// directly where a statement inserts the event (the gate cannot look the event up
/// again in the statement that writes it).
macro_rules! event_gate_sql {
    () => {
        "(e.verified OR e.trust_mode = 'token')"
    };
}

/// Whether a todo's idempotency key is live: it keeps another todo of its endpoint from
/// taking the key. Word for word the predicate of the unique index
/// `todos_idempotency_key` (the foundation migration), unqualified, so that
/// `ON CONFLICT … WHERE` names that index and a subquery over `todos` reads its own
/// row. A dead letter releases its key.
pub(crate) const LIVE_KEY: &str = "idempotency_key IS NOT NULL AND state NOT IN ('done', 'canceled') \
     AND NOT (state = 'failed' AND next_retry_at IS NULL) AND queue <> 'quarantine'";

/// The sender gate of the event aliased `e` (see [`event_gate_sql`]).
pub(crate) const EVENT_GATE: &str = event_gate_sql!();

/// The sender gate expression (see [`sender_gate_sql`]).
pub(crate) const SENDER_GATE: &str = sender_gate_sql!();

/// Columns every post-commit signal needs beyond the todo row, for a statement whose
/// moved todo row is aliased `t`.
pub(crate) const SIGNAL_COLUMNS: &str = concat!(
    "(SELECT slug FROM endpoints ep WHERE ep.id = t.endpoint_id) AS endpoint_slug, ",
    sender_gate_sql!(),
    " AS sender_gate, ",
    "(t.attempt_relay OR EXISTS (SELECT 1 FROM todo_attempts ra WHERE ra.todo_id = t.id AND ra.relay)) AS relay"
);

/// A todo row moved by a transition, with what its signals need.
#[derive(Debug, QueryableByName)]
pub(crate) struct MovedRow {
    #[diesel(embed)]
    pub todo: TodoRow,
    #[diesel(sql_type = Text)]
    pub endpoint_slug: String,
    #[diesel(sql_type = Bool)]
    pub sender_gate: bool,
    #[diesel(sql_type = Bool)]
    pub relay: bool,
    #[diesel(sql_type = Nullable<diesel::sql_types::Int4>)]
    pub final_seq: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    pub final_outcome: Option<AttemptOutcome>,
    #[diesel(sql_type = Nullable<Text>)]
    pub final_summary: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub final_artifact: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub final_at: Option<DateTime<Utc>>,
}

impl MovedRow {
    fn facts(&self) -> TodoFacts {
        TodoFacts::from_row(&self.todo, self.endpoint_slug.clone(), self.sender_gate)
    }

    /// The signal this row's new state calls for: a dead letter, or a requeue that
    /// rings `todo.ready`, or nothing.
    pub(crate) fn signal(&self) -> Option<Signal> {
        let t = &self.todo;
        if t.is_dead_letter() {
            let reason = t.dead_reason?;
            let final_attempt = match (self.final_seq, self.final_outcome, self.final_at) {
                (Some(seq), Some(outcome), Some(at)) => Some(FinalAttempt {
                    seq,
                    outcome,
                    summary: self.final_summary.clone(),
                    artifact: self.final_artifact.clone(),
                    at,
                }),
                _ => None,
            };
            return Some(Signal::DeadLettered(DeadLettered {
                todo: self.facts(),
                reason,
                final_attempt,
                relay: self.relay,
                dead_letter_count: t.dead_letter_count,
            }));
        }
        (t.state == TodoState::Pending && t.queue != QUARANTINE_QUEUE)
            .then(|| Signal::Ready(TodoReady { todo: self.facts(), reason: ReadyReason::Requeued }))
    }
}

/// Runs an agent's conditional transition and returns the row it moved; when it moved
/// none, answers why (see [`explain_miss`]).
pub(crate) async fn agent_transition<R>(
    conn: &mut AsyncPgConnection,
    query: BoxedSqlQuery<'_, Pg, SqlQuery>,
    endpoint: EndpointId,
    id: TodoId,
    token_hash: Option<[u8; 32]>,
    wanted: &str,
) -> Result<R, Error>
where
    R: QueryableByName<Pg> + Send + 'static,
{
    match Prepared(query).one_row::<R>(conn).await.optional()? {
        Some(row) => Ok(row),
        None => {
            Err(explain_miss(conn, &Caller::Endpoint(endpoint), id, token_hash.as_ref().map(|h| h.as_slice()), wanted)
                .await)
        }
    }
}

/// Explains why a conditional transition matched no row: unknown or out of reach
/// (404), lease token mismatch (409), or a state that does not allow it (409).
pub(crate) async fn explain_miss(
    conn: &mut AsyncPgConnection,
    caller: &Caller,
    id: TodoId,
    lease_token_hash: Option<&[u8]>,
    wanted: &str,
) -> Error {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Text)]
        state: TodoState,
        #[diesel(sql_type = Nullable<Bytea>)]
        lease_token_hash: Option<Vec<u8>>,
    }
    let statement = caller.pick(&MISS_AS_AGENT, &MISS_AS_OPERATOR);
    let found: QueryResult<Option<Row>> = caller.bind(todo_query(statement, id)).one_row(conn).await.optional();
    match found {
        Ok(None) => Error::NotFound,
        Ok(Some(row)) => match (lease_token_hash, row.lease_token_hash.as_deref()) {
            (Some(given), Some(held)) if given != held => {
                Error::Conflict("lease token does not match the current lease".into())
            }
            _ => Error::Conflict(format!("todo is {}; this needs it {wanted}", row.state)),
        },
        Err(e) => e.into(),
    }
}
