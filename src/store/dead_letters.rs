//! The dead-letter listing: failed todos with no retry scheduled, across every endpoint
//! the caller's scopes own, quarantine excluded, newest first. The operator API and the
//! Board both read it; the Board also counts matches before a bulk retry.
//!
//! Each scope's newest dead letters come off `todos_dead_letters_idx` in order and
//! stop at the limit, then the scopes are merged: one ordered index walk per scope
//! instead of a sort of every dead letter the human can see, which would grow with
//! the table. A text search walks the same way (or uses the trigram index
//! `todos_dead_letters_search_idx` when the migration could create it; the planner
//! picks), so it reads at most the dead letters of the caller's scopes.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{Array, BigInt, Int4, Int8, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::Store;
use crate::db::statement::{Statement, statement};
use crate::domain::ids::{EndpointId, ScopeId, TodoId};
use crate::domain::pills::{COUNT_CAP, PillCount};
use crate::domain::todo_search::TodoSearch;
use crate::domain::todo_state::{AttemptOutcome, DeadReason};
use crate::error::{Error, Result};

pub use crate::domain::todo_search::QUERY_MAX_BYTES;

/// One dead letter as listed.
#[derive(Debug, Clone, QueryableByName)]
pub struct DeadLetter {
    /// The todo.
    #[diesel(sql_type = SqlUuid)]
    pub id: TodoId,
    /// Its queue.
    #[diesel(sql_type = Text)]
    pub queue: String,
    /// Its endpoint.
    #[diesel(sql_type = SqlUuid)]
    pub endpoint_id: EndpointId,
    /// That endpoint's slug.
    #[diesel(sql_type = Text)]
    pub endpoint: String,
    /// Title (sender-written).
    #[diesel(sql_type = Text)]
    pub title: String,
    /// Source label.
    #[diesel(sql_type = Nullable<Text>)]
    pub source: Option<String>,
    /// Kind label.
    #[diesel(sql_type = Nullable<Text>)]
    pub kind: Option<String>,
    /// Why it died.
    #[diesel(sql_type = Text)]
    pub reason: DeadReason,
    /// Attempts ever made.
    #[diesel(sql_type = Int4)]
    pub attempts_total: i32,
    /// Attempt cap.
    #[diesel(sql_type = Int4)]
    pub max_attempts: i32,
    /// Times it has died.
    #[diesel(sql_type = Int4)]
    pub dead_letter_count: i32,
    /// When it died.
    #[diesel(sql_type = Timestamptz)]
    pub dead_lettered_at: DateTime<Utc>,
    /// When it was created.
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
    /// The attempt closed by the dead-lettering transition, if one was.
    #[diesel(sql_type = Nullable<Int4>)]
    pub final_seq: Option<i32>,
    /// How that attempt ended.
    #[diesel(sql_type = Nullable<Text>)]
    pub final_outcome: Option<AttemptOutcome>,
    /// Its summary (agent-written).
    #[diesel(sql_type = Nullable<Text>)]
    pub final_summary: Option<String>,
    /// Its artifact.
    #[diesel(sql_type = Nullable<Text>)]
    pub final_artifact: Option<String>,
    /// When it ended.
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub final_at: Option<DateTime<Utc>>,
}

/// A dead letter, for the todo aliased `t`. Matches the partial indexes of migration
/// 000009 word for word, so the planner can prove they apply.
pub(crate) const DEAD_LETTER: &str = "t.state = 'failed' AND t.next_retry_at IS NULL AND t.queue <> 'quarantine'";

/// The searched fields of `t` joined into one string: the expression the trigram
/// index is built on. A match on it is only a pre-filter (it could span two fields);
/// [`search_condition`] also requires one field to match on its own.
const SEARCH_DOC: &str = "(coalesce(t.source, '') || ' ' || coalesce(t.kind, '') || ' ' || t.queue || ' ' || t.title)";

/// The kind of a [`TodoSearch`], which decides the form of a searched statement.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Searching {
    /// No search.
    Everything,
    /// A todo id.
    Id,
    /// A substring of source, kind, queue or title.
    Text,
}

/// A searched statement's three forms, one per [`Searching`], each registered.
pub(crate) struct BySearch {
    /// Without a search.
    pub everything: &'static Statement,
    /// Searching for an id.
    pub id: &'static Statement,
    /// Searching for text.
    pub text: &'static Statement,
}

impl BySearch {
    /// The form `search` runs.
    pub(crate) fn pick(&self, search: &TodoSearch) -> &'static Statement {
        match search {
            TodoSearch::Everything => self.everything,
            TodoSearch::Id(_) => self.id,
            TodoSearch::Text { .. } => self.text,
        }
    }
}

/// The SQL condition on `t` for a search of kind `searching`, its bind being `$n`;
/// `None` for no search.
pub(crate) fn search_condition(searching: Searching, n: usize) -> Option<String> {
    match searching {
        Searching::Everything => None,
        Searching::Id => Some(format!("t.id = ${n}")),
        Searching::Text => Some(format!(
            "{SEARCH_DOC} ILIKE ${n} AND (t.source ILIKE ${n} OR t.kind ILIKE ${n} OR t.queue ILIKE ${n} \
             OR t.title ILIKE ${n})"
        )),
    }
}

/// Binds the value [`search_condition`] refers to (nothing for no search).
pub(crate) fn bind_search<'f>(
    q: BoxedSqlQuery<'f, Pg, SqlQuery>,
    search: &TodoSearch,
) -> BoxedSqlQuery<'f, Pg, SqlQuery> {
    match search {
        TodoSearch::Everything => q,
        TodoSearch::Id(id) => q.bind::<SqlUuid, _>(id.0),
        TodoSearch::Text { pattern, .. } => q.bind::<Text, _>(pattern.clone()),
    }
}

/// The scopes as a uuid array, each once (a scope listed twice would list its rows
/// twice in the per-scope walks).
pub(crate) fn scope_array(scopes: &[ScopeId]) -> Vec<uuid::Uuid> {
    let mut ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// `AND <cond>` or nothing.
pub(crate) fn and(cond: Option<String>) -> String {
    cond.map(|c| format!(" AND {c}")).unwrap_or_default()
}

/// The columns of [`DeadLetter`], for the todo `t`, its endpoint `ep` and the closing
/// attempt `fa`.
const COLUMNS: &str = "t.id, t.queue, t.endpoint_id, ep.slug AS endpoint, t.title, t.source, t.kind, \
    t.dead_reason AS reason, t.attempts_total, t.max_attempts, t.dead_letter_count, t.dead_lettered_at, t.created_at, \
    fa.seq AS final_seq, fa.outcome AS final_outcome, fa.summary AS final_summary, fa.artifact AS final_artifact, \
    fa.ended_at AS final_at";

/// The todo columns [`COLUMNS`] and [`CLOSING_ATTEMPT`] read.
const ROW: &str = "t.id, t.queue, t.endpoint_id, t.title, t.source, t.kind, t.dead_reason, t.attempts_total, \
    t.max_attempts, t.dead_letter_count, t.dead_lettered_at, t.created_at";

/// The attempt the dead-lettering transition closed (none when it closed none, as a
/// revocation of a pending todo).
const CLOSING_ATTEMPT: &str = "LEFT JOIN LATERAL ( \
      SELECT a.seq, a.outcome, a.summary, a.artifact, a.ended_at FROM todo_attempts a \
      WHERE a.todo_id = t.id AND a.ended_at = t.dead_lettered_at AND a.disposition = 'dead_lettered' \
      ORDER BY a.seq DESC LIMIT 1) fa ON true";

/// The dead-letter listing for a search of kind `searching` (`$1` scopes, `$2` limit,
/// `$3` the search's value).
fn listing_sql(searching: Searching) -> String {
    let keys = match searching {
        Searching::Id => {
            format!("SELECT t.id FROM todos t WHERE t.scope_id = ANY($1) AND {DEAD_LETTER} AND t.id = $3 LIMIT $2")
        }
        _ => format!(
            "SELECT k.id FROM unnest($1::uuid[]) s(scope_id) \
             CROSS JOIN LATERAL (SELECT t.id, t.dead_lettered_at FROM todos t \
               WHERE t.scope_id = s.scope_id AND {DEAD_LETTER}{search} \
               ORDER BY t.dead_lettered_at DESC, t.id DESC LIMIT $2) k \
             ORDER BY k.dead_lettered_at DESC, k.id DESC LIMIT $2",
            search = and(search_condition(searching, 3))
        ),
    };
    // The rows shown are read by primary key, one at a time: a LATERAL with a LIMIT
    // is never flattened into a join, which on a small table could become a hash
    // join over a scan of all of it.
    format!(
        "WITH keys AS ({keys}) \
         SELECT {COLUMNS} FROM keys \
         CROSS JOIN LATERAL (SELECT {ROW} FROM todos t WHERE t.id = keys.id LIMIT 1) t \
         JOIN endpoints ep ON ep.id = t.endpoint_id \
         {CLOSING_ATTEMPT} \
         ORDER BY t.dead_lettered_at DESC, t.id DESC"
    )
}

/// The capped count of dead letters for a search of kind `searching` (`$1` scopes, `$2`
/// the cap, `$3` the search's value).
fn count_sql(searching: Searching) -> String {
    format!(
        "SELECT count(*) AS n FROM (SELECT 1 FROM todos t WHERE t.scope_id = ANY($1) AND {DEAD_LETTER}{} \
         LIMIT $2) capped",
        and(search_condition(searching, 3))
    )
}

statement! {
    static LIST_EVERYTHING = built(|| listing_sql(Searching::Everything));
    static LIST_BY_ID = built(|| listing_sql(Searching::Id));
    static LIST_BY_TEXT = built(|| listing_sql(Searching::Text));
    static COUNT_EVERYTHING = built(|| count_sql(Searching::Everything));
    static COUNT_BY_ID = built(|| count_sql(Searching::Id));
    static COUNT_BY_TEXT = built(|| count_sql(Searching::Text));
}

/// The dead-letter listing, per kind of search.
static LIST: BySearch = BySearch { everything: &LIST_EVERYTHING, id: &LIST_BY_ID, text: &LIST_BY_TEXT };

/// The capped count of dead letters, per kind of search.
static COUNT: BySearch = BySearch { everything: &COUNT_EVERYTHING, id: &COUNT_BY_ID, text: &COUNT_BY_TEXT };

impl Store {
    /// Dead letters across every endpoint in `scopes`, newest first (`dead_lettered_at`,
    /// then id). `query` is a search (see [`TodoSearch`]): a todo id matches exactly,
    /// anything else source, kind, queue or title as a case-insensitive substring.
    /// `limit` is 1–500 (the operator API's range; the Board asks for at most 200).
    pub async fn list_dead_letters(
        &self,
        scopes: &[ScopeId],
        query: Option<&str>,
        limit: i64,
    ) -> Result<Vec<DeadLetter>> {
        if !(1..=500).contains(&limit) {
            return Err(Error::invalid("limit", "must be between 1 and 500"));
        }
        let search = TodoSearch::parse(query)?;
        let q = LIST
            .pick(&search)
            .query()
            .into_boxed::<Pg>()
            .bind::<Array<SqlUuid>, _>(scope_array(scopes))
            .bind::<Int8, _>(limit);
        let mut conn = self.conn().await?;
        Ok(bind_search(q, &search).load(&mut conn).await?)
    }

    /// How many dead letters in `scopes` match `query` (as [`Store::list_dead_letters`]
    /// reads it), exact up to [`COUNT_CAP`]: what a bulk retry would be asked to move.
    pub async fn count_dead_letters(&self, scopes: &[ScopeId], query: Option<&str>) -> Result<PillCount> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        let search = TodoSearch::parse(query)?;
        let q = COUNT
            .pick(&search)
            .query()
            .into_boxed::<Pg>()
            .bind::<Array<SqlUuid>, _>(scope_array(scopes))
            .bind::<Int8, _>(i64::from(COUNT_CAP) + 1);
        let mut conn = self.conn().await?;
        let row: Row = bind_search(q, &search).one_row(&mut conn).await?;
        Ok(PillCount::from_capped(row.n))
    }
}
