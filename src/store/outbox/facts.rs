//! What the messages of a pass's rows say about their subjects, read in one query per
//! kind of subject for the whole pass (not one per row): the dead letters' todos and
//! closing attempts, the quarantined deliveries, the titles rules notify about.

use std::collections::{HashMap, HashSet};

use diesel::QueryableByName;
use diesel::sql_types::{Array, Bool, Int4, Nullable, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::OutboxRow;
use crate::domain::ids::{TodoId, WebhookId};
use crate::domain::sinks::SinkEvent;
use crate::error::Result;
use crate::notify::sinks::content::{DeadLetterFacts, QuarantineFacts};
use crate::store::Store;

/// The subjects of a pass's rows, keyed by todo and whether the row may carry an
/// excerpt. A subject that is gone (pruned) is absent.
#[derive(Debug, Default)]
pub struct SubjectFacts {
    /// Dead letters (`todo.dead_lettered`, `relay.exhausted`).
    pub dead_letters: HashMap<(TodoId, bool), DeadLetterFacts>,
    /// Quarantined deliveries.
    pub quarantines: HashMap<(TodoId, bool), QuarantineFacts>,
    /// Titles of the todos `rule.notify` rows name.
    pub titles: HashMap<TodoId, String>,
}

impl Store {
    /// Reads what `rows`' messages say about their subjects.
    pub async fn subject_facts(&self, rows: &[&OutboxRow]) -> Result<SubjectFacts> {
        let mut dead: HashSet<(TodoId, bool)> = HashSet::new();
        let mut quarantined: HashSet<(TodoId, bool)> = HashSet::new();
        let mut titled: HashSet<TodoId> = HashSet::new();
        for row in rows {
            match (row.event, row.todo_id) {
                (SinkEvent::DeadLettered | SinkEvent::RelayExhausted, Some(todo)) => {
                    dead.insert((todo, row.include_excerpt));
                }
                (SinkEvent::Quarantined, Some(todo)) => {
                    quarantined.insert((todo, row.include_excerpt));
                }
                (SinkEvent::RuleNotify, Some(todo)) => {
                    titled.insert(todo);
                }
                _ => {}
            }
        }
        Ok(SubjectFacts {
            dead_letters: self.dead_letter_facts(dead).await?,
            quarantines: self.quarantine_facts(quarantined).await?,
            titles: self.todo_titles(titled).await?,
        })
    }

    async fn dead_letter_facts(
        &self,
        wanted: HashSet<(TodoId, bool)>,
    ) -> Result<HashMap<(TodoId, bool), DeadLetterFacts>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            id: TodoId,
            #[diesel(sql_type = Bool)]
            with_excerpt: bool,
            #[diesel(sql_type = Text)]
            queue: String,
            #[diesel(sql_type = Text)]
            title: String,
            #[diesel(sql_type = Nullable<Text>)]
            dead_reason: Option<String>,
            #[diesel(sql_type = Int4)]
            attempt: i32,
            #[diesel(sql_type = Int4)]
            max_attempts: i32,
            #[diesel(sql_type = Nullable<Text>)]
            summary: Option<String>,
            #[diesel(sql_type = Nullable<Text>)]
            artifact: Option<String>,
            #[diesel(sql_type = Nullable<Text>)]
            source: Option<String>,
            #[diesel(sql_type = Nullable<SqlUuid>)]
            webhook_id: Option<WebhookId>,
            #[diesel(sql_type = Nullable<Text>)]
            excerpt: Option<String>,
        }
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        let (ids, excerpts): (Vec<TodoId>, Vec<bool>) = wanted.into_iter().unzip();
        let mut conn = self.conn().await?;
        let rows: Vec<Row> = diesel::sql_query(
            "SELECT t.id, w.with_excerpt, t.queue, t.title, t.dead_reason, t.attempt, t.max_attempts, \
                    a.summary, a.artifact, t.source, e.webhook_id, \
                    CASE WHEN w.with_excerpt THEN left(t.payload::text, 2000) END AS excerpt \
             FROM unnest($1::uuid[], $2::bool[]) AS w(id, with_excerpt) \
             JOIN todos t ON t.id = w.id \
             LEFT JOIN LATERAL (SELECT summary, artifact FROM todo_attempts WHERE todo_id = t.id \
                                ORDER BY seq DESC LIMIT 1) a ON true \
             LEFT JOIN events e ON e.id = t.event_id",
        )
        .bind::<Array<SqlUuid>, _>(&ids)
        .bind::<Array<Bool>, _>(&excerpts)
        .load(&mut conn)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let origin = match (r.source.as_deref(), r.webhook_id) {
                    (Some(source), Some(webhook)) => format!("{source} webhook {webhook}"),
                    (Some(source), None) => source.to_owned(),
                    (None, _) => "unknown".to_owned(),
                };
                let facts = DeadLetterFacts {
                    todo_id: r.id.to_string(),
                    queue: r.queue,
                    todo_title: r.title,
                    cause: r.dead_reason.unwrap_or_else(|| "attempts_exhausted".into()),
                    attempts: r.attempt,
                    max_attempts: r.max_attempts,
                    closing_summary: r.summary,
                    artifact: r.artifact,
                    origin,
                    excerpt: r.excerpt,
                };
                ((r.id, r.with_excerpt), facts)
            })
            .collect())
    }

    async fn quarantine_facts(
        &self,
        wanted: HashSet<(TodoId, bool)>,
    ) -> Result<HashMap<(TodoId, bool), QuarantineFacts>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            id: TodoId,
            #[diesel(sql_type = Bool)]
            with_excerpt: bool,
            #[diesel(sql_type = Nullable<Text>)]
            reason: Option<String>,
            #[diesel(sql_type = Nullable<Text>)]
            source: Option<String>,
            #[diesel(sql_type = Nullable<SqlUuid>)]
            webhook_id: Option<WebhookId>,
            #[diesel(sql_type = Nullable<Text>)]
            excerpt: Option<String>,
        }
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        let (ids, excerpts): (Vec<TodoId>, Vec<bool>) = wanted.into_iter().unzip();
        let mut conn = self.conn().await?;
        let rows: Vec<Row> = diesel::sql_query(
            "SELECT t.id, w.with_excerpt, t.quarantine_reason AS reason, COALESCE(e.source, t.source) AS source, \
                    e.webhook_id, CASE WHEN w.with_excerpt THEN left(t.payload::text, 2000) END AS excerpt \
             FROM unnest($1::uuid[], $2::bool[]) AS w(id, with_excerpt) \
             JOIN todos t ON t.id = w.id \
             LEFT JOIN events e ON e.id = t.event_id",
        )
        .bind::<Array<SqlUuid>, _>(&ids)
        .bind::<Array<Bool>, _>(&excerpts)
        .load(&mut conn)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let facts = QuarantineFacts {
                    webhook_id: r.webhook_id.map(|w| w.to_string()).unwrap_or_default(),
                    source: r.source.unwrap_or_else(|| "unknown".into()),
                    sender: None,
                    reason: r.reason.unwrap_or_else(|| "untrusted_actor".into()),
                    todo_id: r.id.to_string(),
                    excerpt: r.excerpt,
                };
                ((r.id, r.with_excerpt), facts)
            })
            .collect())
    }

    async fn todo_titles(&self, wanted: HashSet<TodoId>) -> Result<HashMap<TodoId, String>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            id: TodoId,
            #[diesel(sql_type = Text)]
            title: String,
        }
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        let ids: Vec<TodoId> = wanted.into_iter().collect();
        let mut conn = self.conn().await?;
        let rows: Vec<Row> = diesel::sql_query("SELECT id, title FROM todos WHERE id = ANY($1)")
            .bind::<Array<SqlUuid>, _>(&ids)
            .load(&mut conn)
            .await?;
        Ok(rows.into_iter().map(|r| (r.id, r.title)).collect())
    }
}
