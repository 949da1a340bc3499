//! The lists of the All, Pending, Claimed, Done and Failed pills.
//!
//! Each scope's (and for All, each state's) newest todos come off
//! `todos_board_state_idx` or `todos_board_retrying_idx` in order and stop at the
//! limit; the walks are merged and only the rows shown are read from the table. A text
//! search reads the newest [`SEARCH_WINDOW`] todos of the pill this way and filters
//! them: substring search over every done todo an owner ever had would cost a scan of
//! all of them (only the Dead pill searches everything, see `dead_letters.rs`). An id
//! search finds its todo wherever it is.

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Array, Int4, Int8, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::super::Store;
use super::super::dead_letters::{BySearch, Searching, and, bind_search, scope_array, search_condition};
use crate::db::statement::statement;
use crate::domain::ids::ScopeId;
use crate::domain::ids::{EndpointId, TodoId};
use crate::domain::pills::Pill;
use crate::domain::todo_search::TodoSearch;
use crate::domain::todo_state::{DeadReason, TodoState};
use crate::error::{Error, Result};

/// Most rows one list shows.
pub const LIST_MAX: i64 = 200;

/// How many of a pill's newest todos a text search looks through.
pub const SEARCH_WINDOW: i64 = 5_000;

/// One todo as the Todos view lists it.
#[derive(Debug, Clone, QueryableByName)]
pub struct TodoListing {
    /// The todo.
    #[diesel(sql_type = SqlUuid)]
    pub id: TodoId,
    /// Its endpoint.
    #[diesel(sql_type = SqlUuid)]
    pub endpoint_id: EndpointId,
    /// That endpoint's slug.
    #[diesel(sql_type = Text)]
    pub endpoint: String,
    /// Its queue.
    #[diesel(sql_type = Text)]
    pub queue: String,
    /// Title (sender-written).
    #[diesel(sql_type = Text)]
    pub title: String,
    /// Source label.
    #[diesel(sql_type = Nullable<Text>)]
    pub source: Option<String>,
    /// Kind label.
    #[diesel(sql_type = Nullable<Text>)]
    pub kind: Option<String>,
    /// Its state.
    #[diesel(sql_type = Text)]
    pub state: TodoState,
    /// The current attempt (reset by "retry now").
    #[diesel(sql_type = Int4)]
    pub attempt: i32,
    /// Attempt cap.
    #[diesel(sql_type = Int4)]
    pub max_attempts: i32,
    /// Attempts ever made.
    #[diesel(sql_type = Int4)]
    pub attempts_total: i32,
    /// When it was created.
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    #[diesel(sql_type = Timestamptz)]
    pub updated_at: DateTime<Utc>,
    /// When the current lease lapses (claimed only).
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub lease_expires_at: Option<DateTime<Utc>>,
    /// When the interrupt lapses (interrupted only).
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub interrupt_expires_at: Option<DateTime<Utc>>,
    /// When the scheduled retry is due (failed with a retry only).
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub next_retry_at: Option<DateTime<Utc>>,
    /// Why it died (a dead letter under All only).
    #[diesel(sql_type = Nullable<Text>)]
    pub dead_reason: Option<DeadReason>,
    /// When it died.
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub dead_lettered_at: Option<DateTime<Utc>>,
}

impl TodoListing {
    /// A dead letter: failed with no retry scheduled.
    pub fn is_dead_letter(&self) -> bool {
        self.state == TodoState::Failed && self.next_retry_at.is_none()
    }
}

const COLUMNS: &str = "t.id, t.endpoint_id, ep.slug AS endpoint, t.queue, t.title, t.source, t.kind, t.state, \
    t.attempt, t.max_attempts, t.attempts_total, t.created_at, t.updated_at, t.lease_expires_at, \
    t.interrupt_expires_at, t.next_retry_at, t.dead_reason, t.dead_lettered_at";

/// The todo columns [`COLUMNS`] and the search read.
const ROW: &str = "t.id, t.endpoint_id, t.queue, t.title, t.source, t.kind, t.state, t.attempt, t.max_attempts, \
    t.attempts_total, t.created_at, t.updated_at, t.lease_expires_at, t.interrupt_expires_at, t.next_retry_at, \
    t.dead_reason, t.dead_lettered_at";

/// The pill's condition on `t` beyond its scope, spelled as the partial indexes'
/// predicates so the planner can use them.
fn pill_condition(pill: Pill) -> Result<&'static str> {
    Ok(match pill {
        Pill::All => "t.queue <> 'quarantine'",
        Pill::Pending => "t.state = 'pending' AND t.queue <> 'quarantine'",
        Pill::Claimed => "t.state = 'claimed' AND t.queue <> 'quarantine'",
        Pill::Done => "t.state = 'done' AND t.queue <> 'quarantine'",
        Pill::Failed => "t.state = 'failed' AND t.next_retry_at IS NOT NULL AND t.queue <> 'quarantine'",
        Pill::Dead => return Err(Error::invalid("pill", "dead letters are listed by list_dead_letters")),
    })
}

/// The newest `$2` ids (with `created_at`) of the pill across the scopes `$1`: one
/// ordered index walk per scope, per state for All.
fn newest_keys(pill: Pill) -> Result<String> {
    let walk = |from: &str, condition: &str| {
        format!(
            "SELECT k.id, k.created_at FROM {from} \
             CROSS JOIN LATERAL (SELECT t.id, t.created_at FROM todos t WHERE t.scope_id = s.scope_id AND {condition} \
               ORDER BY t.created_at DESC, t.id DESC LIMIT $2) k \
             ORDER BY k.created_at DESC, k.id DESC LIMIT $2"
        )
    };
    Ok(match pill {
        Pill::All => {
            let states: Vec<String> = TodoState::ALL.iter().map(|s| format!("'{s}'")).collect();
            walk(
                &format!(
                    "unnest($1::uuid[]) s(scope_id) CROSS JOIN unnest(ARRAY[{}]::text[]) st(state)",
                    states.join(", ")
                ),
                "t.state = st.state AND t.queue <> 'quarantine'",
            )
        }
        other => walk("unnest($1::uuid[]) s(scope_id)", pill_condition(other)?),
    })
}

/// The listing of `pill` for a search of kind `searching` (`$1` scopes, `$2` the keys'
/// window, `$3` limit, `$4` the search's value).
fn listing_sql(pill: Pill, searching: Searching) -> Result<String> {
    let keys = match searching {
        Searching::Id => format!(
            "SELECT t.id FROM todos t WHERE t.scope_id = ANY($1) AND {} AND t.id = $4 LIMIT $2",
            pill_condition(pill)?
        ),
        Searching::Everything | Searching::Text => newest_keys(pill)?,
    };
    let filter = match searching {
        Searching::Text => and(search_condition(searching, 4)),
        _ => String::new(),
    };
    // Rows read by primary key one at a time (a LATERAL with a LIMIT is never
    // flattened into a join that could scan a small table whole).
    Ok(format!(
        "WITH keys AS ({keys}) \
         SELECT {COLUMNS} FROM keys \
         CROSS JOIN LATERAL (SELECT {ROW} FROM todos t WHERE t.id = keys.id LIMIT 1) t \
         JOIN endpoints ep ON ep.id = t.endpoint_id \
         WHERE true{filter} ORDER BY t.created_at DESC, t.id DESC LIMIT $3"
    ))
}

/// Declares the three registered forms of one pill's listing and their [`BySearch`].
macro_rules! pill_listing {
    ($by_search:ident, $pill:expr, $everything:ident, $id:ident, $text:ident) => {
        statement! {
            static $everything = built(|| listing_sql($pill, Searching::Everything).unwrap_or_default());
            static $id = built(|| listing_sql($pill, Searching::Id).unwrap_or_default());
            static $text = built(|| listing_sql($pill, Searching::Text).unwrap_or_default());
        }
        static $by_search: BySearch = BySearch { everything: &$everything, id: &$id, text: &$text };
    };
}

pill_listing!(LIST_ALL, Pill::All, ALL_EVERYTHING, ALL_BY_ID, ALL_BY_TEXT);
pill_listing!(LIST_PENDING, Pill::Pending, PENDING_EVERYTHING, PENDING_BY_ID, PENDING_BY_TEXT);
pill_listing!(LIST_CLAIMED, Pill::Claimed, CLAIMED_EVERYTHING, CLAIMED_BY_ID, CLAIMED_BY_TEXT);
pill_listing!(LIST_DONE, Pill::Done, DONE_EVERYTHING, DONE_BY_ID, DONE_BY_TEXT);
pill_listing!(LIST_FAILED, Pill::Failed, FAILED_EVERYTHING, FAILED_BY_ID, FAILED_BY_TEXT);

/// The listing of `pill` (any but Dead), per kind of search.
fn listing(pill: Pill) -> Result<&'static BySearch> {
    Ok(match pill {
        Pill::All => &LIST_ALL,
        Pill::Pending => &LIST_PENDING,
        Pill::Claimed => &LIST_CLAIMED,
        Pill::Done => &LIST_DONE,
        Pill::Failed => &LIST_FAILED,
        Pill::Dead => return Err(Error::invalid("pill", "dead letters are listed by list_dead_letters")),
    })
}

impl Store {
    /// The todos of `pill` (any but Dead) across `scopes`, newest first (`created_at`,
    /// then id), at most `limit` (1–[`LIST_MAX`]). `query` searches as the dead-letter
    /// listing does, except that a text search looks only through the pill's newest
    /// [`SEARCH_WINDOW`] todos. Quarantine is never listed.
    pub async fn list_todos_for(
        &self,
        scopes: &[ScopeId],
        pill: Pill,
        query: Option<&str>,
        limit: i64,
    ) -> Result<Vec<TodoListing>> {
        if !(1..=LIST_MAX).contains(&limit) {
            return Err(Error::invalid("limit", format!("must be between 1 and {LIST_MAX}")));
        }
        let search = TodoSearch::parse(query)?;
        let window = match &search {
            TodoSearch::Text { .. } => SEARCH_WINDOW,
            TodoSearch::Id(_) | TodoSearch::Everything => limit,
        };
        let q = listing(pill)?
            .pick(&search)
            .query()
            .into_boxed::<Pg>()
            .bind::<Array<SqlUuid>, _>(scope_array(scopes))
            .bind::<Int8, _>(window)
            .bind::<Int8, _>(limit);
        let mut conn = self.conn().await?;
        Ok(bind_search(q, &search).load(&mut conn).await?)
    }
}
