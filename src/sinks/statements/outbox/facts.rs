//! What the messages of a pass's rows say about their subjects, read in one query per
//! kind of subject for the whole pass (not one per row): the dead letters' todos and
//! closing attempts, the quarantined deliveries, the titles rules notify about.

use crate::domain::vocabulary::Writer;
use std::collections::{HashMap, HashSet};

use diesel::QueryableByName;
use diesel::sql_types::{Array, Bool, Int4, Nullable, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::OutboxRow;
use crate::db::statement::statement;
use crate::domain::ids::{TodoId, WebhookId};
use crate::error::Result;
use crate::sinks::rules::content::{DeadLetterFacts, QuarantineFacts};
use crate::sinks::rules::vocabulary::SinkEvent;
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

statement! {
    static DEAD_LETTER_FACTS = "SELECT t.id AS fact_todo_id, w.with_excerpt AS include_excerpt, t.queue, t.title, t.dead_reason, \
        t.attempt, t.max_attempts, a.summary, a.artifact, t.source, e.webhook_id, \
        CASE WHEN w.with_excerpt THEN left(t.payload::text, 2000) END AS excerpt \
        FROM unnest($1::uuid[], $2::bool[]) AS w(id, with_excerpt) \
        JOIN todos t ON t.id = w.id \
        LEFT JOIN LATERAL (SELECT summary, artifact FROM todo_attempts \
        WHERE todo_id = t.id AND seq = t.attempts_total) a ON true \
        LEFT JOIN events e ON e.id = t.event_id";
    static QUARANTINE_FACTS = "SELECT t.id, w.with_excerpt, t.quarantine_reason AS reason, COALESCE(e.source, t.source) AS source, \
        e.webhook_id, CASE WHEN w.with_excerpt THEN left(t.payload::text, 2000) END AS excerpt \
        FROM unnest($1::uuid[], $2::bool[]) AS w(id, with_excerpt) \
        JOIN todos t ON t.id = w.id \
        LEFT JOIN events e ON e.id = t.event_id";
    static TODO_TITLES = "SELECT id, title FROM todos WHERE id = ANY($1)";
}

impl Store {
    /// Reads what `rows`' messages say about their subjects.
    pub async fn subject_facts(&self, rows: &[&OutboxRow]) -> Result<SubjectFacts> {
        self.subject_facts_beyond(rows, &HashMap::new()).await
    }

    /// Reads what `rows`' messages say about their subjects, taking the dead letters'
    /// facts found in `known` (read by the claim) from there instead.
    pub async fn subject_facts_beyond(
        &self,
        rows: &[&OutboxRow],
        known: &HashMap<(TodoId, bool), DeadLetterFacts>,
    ) -> Result<SubjectFacts> {
        let mut found: HashMap<(TodoId, bool), DeadLetterFacts> = HashMap::new();
        let mut dead: HashSet<(TodoId, bool)> = HashSet::new();
        let mut quarantined: HashSet<(TodoId, bool)> = HashSet::new();
        let mut titled: HashSet<TodoId> = HashSet::new();
        for row in rows {
            match (row.event, row.todo_id) {
                (SinkEvent::DeadLettered | SinkEvent::RelayExhausted, Some(todo)) => {
                    let key = (todo, row.include_excerpt);
                    match known.get(&key) {
                        Some(facts) => {
                            found.insert(key, facts.clone());
                        }
                        None => {
                            dead.insert(key);
                        }
                    }
                }
                (SinkEvent::Quarantined, Some(todo)) => {
                    quarantined.insert((todo, row.include_excerpt));
                }
                (SinkEvent::RuleMatched, Some(todo)) => {
                    titled.insert(todo);
                }
                _ => {}
            }
        }
        let mut dead_letters = self.dead_letter_facts(dead).await?;
        dead_letters.extend(found);
        Ok(SubjectFacts {
            dead_letters,
            quarantines: self.quarantine_facts(quarantined).await?,
            titles: self.todo_titles(titled).await?,
        })
    }

    async fn dead_letter_facts(
        &self,
        wanted: HashSet<(TodoId, bool)>,
    ) -> Result<HashMap<(TodoId, bool), DeadLetterFacts>> {
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        let (ids, excerpts): (Vec<TodoId>, Vec<bool>) = wanted.into_iter().unzip();
        let mut conn = self.conn().await?;
        let rows: Vec<DeadLetterColumns> = DEAD_LETTER_FACTS
            .query()
            .bind::<Array<SqlUuid>, _>(&ids)
            .bind::<Array<Bool>, _>(&excerpts)
            .load(&mut conn)
            .await?;
        Ok(rows.into_iter().filter_map(DeadLetterColumns::into_facts).collect())
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
        let rows: Vec<Row> = QUARANTINE_FACTS
            .query()
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
        let rows: Vec<Row> = TODO_TITLES.query().bind::<Array<SqlUuid>, _>(&ids).load(&mut conn).await?;
        Ok(rows.into_iter().map(|r| (r.id, r.title)).collect())
    }
}

/// A dead letter's facts as a statement returns them: the facts read and the claim of
/// dead letters' records (whose rows for records without a sink, or whose todo is gone,
/// have them NULL).
#[derive(QueryableByName)]
pub(super) struct DeadLetterColumns {
    #[diesel(sql_type = Nullable<SqlUuid>)]
    fact_todo_id: Option<TodoId>,
    #[diesel(sql_type = Bool)]
    include_excerpt: bool,
    #[diesel(sql_type = Nullable<Text>)]
    queue: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    title: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    dead_reason: Option<String>,
    #[diesel(sql_type = Nullable<Int4>)]
    attempt: Option<i32>,
    #[diesel(sql_type = Nullable<Int4>)]
    max_attempts: Option<i32>,
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

impl DeadLetterColumns {
    /// Whether the row's message may carry an excerpt.
    pub(super) fn include_excerpt(&self) -> bool {
        self.include_excerpt
    }

    /// The facts keyed as [`SubjectFacts::dead_letters`]; none when the todo is gone.
    pub(super) fn into_facts(self) -> Option<((TodoId, bool), DeadLetterFacts)> {
        let todo = self.fact_todo_id?;
        let origin = match (self.source.as_deref(), self.webhook_id) {
            (Some(source), Some(webhook)) => format!("{source} webhook {webhook}"),
            (Some(source), None) => source.to_owned(),
            // No delivery behind it and no source: an agent created it.
            (None, None) => "agent".to_owned(),
            (None, Some(_)) => "unknown".to_owned(),
        };
        let facts = DeadLetterFacts {
            todo_id: todo.to_string(),
            queue: self.queue.unwrap_or_default(),
            todo_title: self.title.unwrap_or_default(),
            // A todo with a delivery behind it has a title its sender's payload made;
            // one without was created, and titled, by an agent.
            title_by: Writer::of_title(self.webhook_id.is_some()),
            cause: self.dead_reason.unwrap_or_else(|| "attempts_exhausted".into()),
            attempts: self.attempt.unwrap_or(0),
            max_attempts: self.max_attempts.unwrap_or(0),
            closing_summary: self.summary,
            artifact: self.artifact,
            origin,
            excerpt: self.excerpt,
        };
        Some(((todo, self.include_excerpt), facts))
    }
}
