//! The dead-letter listing: failed todos with no retry scheduled, across every endpoint
//! the caller's scopes own, quarantine excluded, newest first. The operator API and the
//! Board both read it.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Int4, Int8, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::Store;
use crate::domain::ids::{EndpointId, ScopeId, TodoId};
use crate::domain::todo_state::{AttemptOutcome, DeadReason};
use crate::error::{Error, Result};

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

/// Longest search string accepted.
pub const QUERY_MAX_BYTES: usize = 200;

/// Escapes `%`, `_` and `\` so a search string matches literally inside ILIKE.
fn like_pattern(q: &str) -> String {
    let mut out = String::with_capacity(q.len() + 2);
    out.push('%');
    for c in q.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

impl Store {
    /// Dead letters across every endpoint in `scopes`, newest first. `query` matches a
    /// todo id exactly, or source, kind, queue or title as a case-insensitive substring.
    pub async fn list_dead_letters(
        &self,
        scopes: &[ScopeId],
        query: Option<&str>,
        limit: i64,
    ) -> Result<Vec<DeadLetter>> {
        if !(1..=500).contains(&limit) {
            return Err(Error::invalid("limit", "must be between 1 and 500"));
        }
        let query = query.map(str::trim).filter(|q| !q.is_empty());
        if query.is_some_and(|q| q.len() > QUERY_MAX_BYTES) {
            return Err(Error::invalid("q", "must be at most 200 bytes"));
        }
        let id_match: Option<TodoId> = query.and_then(|q| q.parse().ok());
        let pattern = query.map(like_pattern);
        let sql = "SELECT t.id, t.queue, t.endpoint_id, ep.slug AS endpoint, t.title, t.source, t.kind, \
               t.dead_reason AS reason, t.attempts_total, t.max_attempts, t.dead_letter_count, \
               t.dead_lettered_at, t.created_at, \
               fa.seq AS final_seq, fa.outcome AS final_outcome, fa.summary AS final_summary, \
               fa.artifact AS final_artifact, fa.ended_at AS final_at \
             FROM todos t \
             JOIN endpoints ep ON ep.id = t.endpoint_id \
             LEFT JOIN LATERAL ( \
               SELECT a.seq, a.outcome, a.summary, a.artifact, a.ended_at FROM todo_attempts a \
               WHERE a.todo_id = t.id AND a.ended_at = t.dead_lettered_at AND a.disposition = 'dead_lettered' \
               ORDER BY a.seq DESC LIMIT 1) fa ON true \
             WHERE t.scope_id = ANY($1) AND t.state = 'failed' AND t.next_retry_at IS NULL \
               AND t.queue <> 'quarantine' \
               AND ($2::text IS NULL OR t.id = $3 OR t.source ILIKE $2 OR t.kind ILIKE $2 \
                    OR t.queue ILIKE $2 OR t.title ILIKE $2) \
             ORDER BY t.dead_lettered_at DESC, t.id DESC \
             LIMIT $4";
        let mut conn = self.conn().await?;
        Ok(diesel::sql_query(sql)
            .bind::<Array<SqlUuid>, _>(scopes.iter().map(|s| s.0).collect::<Vec<_>>())
            .bind::<Nullable<Text>, _>(pattern)
            .bind::<Nullable<SqlUuid>, _>(id_match.map(|i| i.0))
            .bind::<Int8, _>(limit)
            .load(&mut conn)
            .await?)
    }
}
