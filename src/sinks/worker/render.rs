//! What a row's message says, from the row and its subject's facts (read for the whole
//! pass beforehand): plain functions, no database, no network.

use std::collections::BTreeMap;

use crate::sinks::rules::content::{self, AgentPageFacts, EndpointRevokedFacts, Message, RuleMatchFacts};
use crate::sinks::rules::vocabulary::{Severity, SinkEvent};
use crate::sinks::statements::outbox::{OutboxRow, SubjectFacts};

/// The message `row` says (none: what it is about is gone).
pub fn render(row: &OutboxRow, facts: &SubjectFacts, base_url: &str) -> Option<Message> {
    let message = match (row.event, row.todo_id, row.endpoint_id) {
        (SinkEvent::DeadLettered | SinkEvent::RelayExhausted, Some(todo), _) => {
            let facts = facts.dead_letters.get(&(todo, row.include_excerpt))?;
            if row.event == SinkEvent::RelayExhausted {
                content::relay_exhausted(facts, base_url)
            } else {
                content::dead_letter(facts, base_url)
            }
        }
        (SinkEvent::DeadLettered, None, Some(endpoint)) => {
            let facts = EndpointRevokedFacts {
                endpoint_slug: row.facts["slug"].as_str().unwrap_or_default().to_owned(),
                endpoint_id: endpoint.to_string(),
                dead_lettered: row.facts["dead_lettered"].as_i64().unwrap_or_default(),
                reason: row.facts["reason"].as_str().unwrap_or("endpoint_revoked").to_owned(),
            };
            content::endpoint_revoked(&facts, base_url)
        }
        (SinkEvent::RuleMatched, todo, _) => {
            let facts = RuleMatchFacts {
                rule_id: row.facts["rule_id"].as_str().unwrap_or_default().to_owned(),
                webhook_id: row.facts["webhook_id"].as_str().unwrap_or_default().to_owned(),
                queue: row.facts["queue"].as_str().map(str::to_owned),
                todo_title: todo.and_then(|t| facts.titles.get(&t).cloned()).unwrap_or_default(),
                todo_id: todo.map(|t| t.to_string()),
                severity: row.severity,
                excerpt: None,
            };
            content::rule_matched(&facts, base_url)
        }
        (SinkEvent::AgentPage, todo, Some(endpoint)) => {
            let text = |key: &str| row.facts[key].as_str().map(str::to_owned);
            let facts = AgentPageFacts {
                endpoint_slug: text("slug").unwrap_or_default(),
                endpoint_id: endpoint.to_string(),
                text: text("title").unwrap_or_default(),
                todo_id: todo.map(|t| t.to_string()),
                queue: text("queue"),
                severity: row.severity,
            };
            content::agent_page(&facts, base_url)
        }
        (SinkEvent::Quarantined, Some(todo), _) => {
            content::quarantined(facts.quarantines.get(&(todo, row.include_excerpt))?, base_url)
        }
        // A digest's message is rendered when its send time is decided (the sections
        // are measured then, not when the sink is dialled) and carried in the row.
        (SinkEvent::Digest, _, _) => serde_json::from_value::<Message>(row.facts["message"].clone()).ok()?,
        _ => return None,
    };
    let more = u32::try_from(row.count.saturating_sub(1)).unwrap_or(0);
    Some(if more > 0 { content::folded(message, more) } else { message })
}

/// One message for every row the budget held: how many of each event, since when.
pub fn coalesced(rows: &[OutboxRow], base_url: &str) -> Message {
    let mut counts: BTreeMap<&'static str, (SinkEvent, u32)> = BTreeMap::new();
    for row in rows {
        let entry = counts.entry(row.event.as_str()).or_insert((row.event, 0));
        entry.1 += u32::try_from(row.count).unwrap_or(1);
    }
    let counts: Vec<(SinkEvent, u32)> = counts.into_values().collect();
    let since = rows.iter().map(|r| r.created_at).min().unwrap_or_else(chrono::Utc::now);
    // A row may be louder than its event's default (a rule's or an agent's `high`).
    let loudest = rows.iter().map(|r| r.severity).max().unwrap_or(Severity::Low);
    content::coalesced(&counts, since, base_url).at_least(loudest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{EndpointId, TodoId};
    use crate::sinks::rules::content::DeadLetterFacts;

    fn row(event: SinkEvent, todo: Option<TodoId>, excerpt: bool) -> OutboxRow {
        OutboxRow {
            event,
            todo_id: todo,
            endpoint_id: Some(EndpointId::new()),
            include_excerpt: excerpt,
            ..OutboxRow::test_row(None)
        }
    }

    fn dead_letter(todo: TodoId, excerpt: Option<&str>) -> DeadLetterFacts {
        DeadLetterFacts {
            todo_id: todo.to_string(),
            queue: "deploys".into(),
            todo_title: "Deploy failed".into(),
            title_by: crate::domain::vocabulary::Writer::Sender,
            cause: "attempts_exhausted".into(),
            attempts: 3,
            max_attempts: 3,
            closing_summary: None,
            artifact: None,
            origin: "agent".into(),
            excerpt: excerpt.map(str::to_owned),
        }
    }

    #[test]
    fn a_dead_letter_reads_the_facts_of_its_own_excerpt_choice() {
        let todo = TodoId::new();
        let mut facts = SubjectFacts::default();
        facts.dead_letters.insert((todo, false), dead_letter(todo, None));
        facts.dead_letters.insert((todo, true), dead_letter(todo, Some("the body says hello")));
        let plain = render(&row(SinkEvent::DeadLettered, Some(todo), false), &facts, "https://sb").unwrap();
        let with = render(&row(SinkEvent::DeadLettered, Some(todo), true), &facts, "https://sb").unwrap();
        assert!(!plain.text().contains("the body says hello"));
        assert!(with.text().contains("the body says hello"));
    }

    #[test]
    fn a_row_whose_subject_is_gone_says_nothing() {
        let facts = SubjectFacts::default();
        assert!(render(&row(SinkEvent::DeadLettered, Some(TodoId::new()), false), &facts, "https://sb").is_none());
        assert!(render(&row(SinkEvent::Quarantined, Some(TodoId::new()), false), &facts, "https://sb").is_none());
    }

    #[test]
    fn a_folded_row_says_how_many_more() {
        let todo = TodoId::new();
        let mut facts = SubjectFacts::default();
        facts.dead_letters.insert((todo, false), dead_letter(todo, None));
        let mut folded = row(SinkEvent::DeadLettered, Some(todo), false);
        folded.count = 4;
        let once = render(&row(SinkEvent::DeadLettered, Some(todo), false), &facts, "https://sb").unwrap();
        let message = render(&folded, &facts, "https://sb").unwrap();
        assert_ne!(once.text(), message.text());
        assert!(message.text().contains("And 3 more like it."), "{}", message.text());
    }

    #[test]
    fn a_coalesced_message_is_as_loud_as_its_loudest_row() {
        let mut quiet = row(SinkEvent::Digest, None, false);
        quiet.severity = Severity::Low;
        let loud = row(SinkEvent::RuleMatched, None, false);
        let message = coalesced(&[quiet, loud], "https://sb");
        assert_eq!(message.severity, Severity::High);
    }
}
