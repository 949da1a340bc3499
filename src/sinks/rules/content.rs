//! What a notification to a human says (SPEC section 10, "Content"): a title, a
//! one-line summary, the facts that matter (queue, cause, attempts, origin) and one
//! Board link, built from plain fact structs.
//!
//! Text that a sender or an agent wrote (a todo's title, a sender login, the closing
//! attempt's summary and artifact, the opt-in excerpt) is [`neutralise`]d (one line, no
//! control characters, no `</channel>`), cut to a fixed number of characters (an ellipsis
//! marks a cut) and always labelled as what it is, quoted on a line of its own. Nothing
//! else from a delivery reaches a message: the fact structs have no field for payload
//! text, headers or secrets, and the excerpt is only present when the caller passes it
//! (only for a subscription that opted in with `include_excerpt`).
//!
//! Links are built from the instance's base URL, given without a trailing slash (one is
//! trimmed if present): `{base}/todos/{todo id}` for one todo, `{base}/todos?filter=dead`
//! for an endpoint cascade and for a coalesced message (SPEC section 13).

use crate::domain::vocabulary::Writer;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::neutralise::neutralise;
use crate::sinks::rules::url_path::{encode_path_segment, trim_base};
use crate::sinks::rules::vocabulary::{Severity, SinkEvent};

/// Longest title of a message, in characters (and longest sender- or agent-written
/// title quoted in a body).
pub const TITLE_MAX_CHARS: usize = 120;
/// Longest opt-in excerpt of the subject's body, in characters.
pub const EXCERPT_MAX_CHARS: usize = 280;
/// Longest closing-attempt summary quoted in a message, in characters.
pub const AGENT_SUMMARY_MAX_CHARS: usize = 280;
/// Longest artifact handle quoted in a message, in characters (the API stores at most
/// 512 bytes).
pub const ARTIFACT_MAX_CHARS: usize = 512;
/// Longest short field (a name, an id, an origin, a reason), in characters.
pub const FIELD_MAX_CHARS: usize = 120;

/// One message to a human, ready for any sink: the transports put `title` in their
/// title field and [`Message::text`] (the body, then the link) in their body field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// One line, at most [`TITLE_MAX_CHARS`] characters.
    pub title: String,
    /// Plain text, one fact a line; no control characters but the line breaks.
    pub body: String,
    /// How loud it is.
    pub severity: Severity,
    /// The Board page to act from.
    pub link: String,
}

impl Message {
    /// The body, a blank line, and the link: what goes in a sink's message field.
    pub fn text(&self) -> String {
        format!("{}\n\n{}", self.body, self.link)
    }

    /// The message, raised to at least `severity` (a coalesced message that carries a
    /// row of higher severity than its event's default, for instance).
    pub fn at_least(mut self, severity: Severity) -> Message {
        self.severity = self.severity.max(severity);
        self
    }
}

/// Facts recorded before titles carried their writer came from deliveries.
fn sender() -> Writer {
    Writer::Sender
}

/// A todo that became a dead letter (also used for `relay.exhausted`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLetterFacts {
    /// The todo's id (`td_…`).
    pub todo_id: String,
    /// Its queue.
    pub queue: String,
    /// Its title.
    pub todo_title: String,
    /// Who wrote the title: the delivery's sender, or the agent that created the todo.
    #[serde(default = "sender")]
    pub title_by: Writer,
    /// Why it died: `attempts_exhausted`, `lease_expired`, `interrupt_expired`,
    /// `operator`, …
    pub cause: String,
    /// Attempts it used.
    pub attempts: i32,
    /// Its attempt cap.
    pub max_attempts: i32,
    /// The closing attempt's summary (agent-written).
    pub closing_summary: Option<String>,
    /// The closing attempt's artifact handle (agent-written: an https URL or
    /// `mcp://cairn/<id>`).
    pub artifact: Option<String>,
    /// Where the todo came from, for display (`github webhook wh_…`, `agent`).
    pub origin: String,
    /// Up to [`EXCERPT_MAX_CHARS`] of the subject's body, only when the subscription
    /// opted in (`include_excerpt`); sender-written.
    pub excerpt: Option<String>,
}

/// An endpoint revocation or expiry that dead-lettered every live todo it held: one
/// message for the whole cascade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndpointRevokedFacts {
    /// The endpoint's slug.
    pub endpoint_slug: String,
    /// The endpoint's id (`ep_…`).
    pub endpoint_id: String,
    /// How many todos the cascade dead-lettered.
    pub dead_lettered: i64,
    /// `endpoint_revoked` or `endpoint_expired`.
    pub reason: String,
}

/// A delivery that was quarantined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuarantineFacts {
    /// The webhook it arrived on (`wh_…`).
    pub webhook_id: String,
    /// The webhook's source type (`github`, `gitea`, …).
    pub source: String,
    /// The sender login the delivery claims (sender-written), when it names one.
    pub sender: Option<String>,
    /// Why it was quarantined (`untrusted_sender`, `rule`, `rule_fault`, …).
    pub reason: String,
    /// The held todo's id (`td_…`).
    pub todo_id: String,
    /// The opt-in excerpt of the delivery's body (sender-written).
    pub excerpt: Option<String>,
}

/// A routing rule with a `notify` action that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleMatchFacts {
    /// The rule's id.
    pub rule_id: String,
    /// The webhook the rule belongs to (`wh_…`).
    pub webhook_id: String,
    /// The queue the delivery went to; none when the rule dropped it.
    pub queue: Option<String>,
    /// The resulting todo's title (sender-written); empty when there is none.
    pub todo_title: String,
    /// The resulting todo (`td_…`), when the delivery became one.
    pub todo_id: Option<String>,
    /// The rule's `notify_severity` (default `normal`).
    pub severity: Severity,
    /// The opt-in excerpt of the delivery's body (sender-written).
    pub excerpt: Option<String>,
}

/// An agent's page of its owner (`notify_owner`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentPageFacts {
    /// The paging endpoint's slug.
    pub endpoint_slug: String,
    /// The paging endpoint (`ep_…`).
    pub endpoint_id: String,
    /// What the agent wrote (agent-written).
    pub text: String,
    /// The todo the page is about (`td_…`), when it names one.
    pub todo_id: Option<String>,
    /// That todo's queue.
    pub queue: Option<String>,
    /// The severity the agent asked for (default `normal`).
    pub severity: Severity,
}

/// `agent.notify`: `Agent · <slug>`, the agent's text quoted and labelled as
/// agent-written (never in the title, so it cannot pass for Switchboard's own words),
/// the todo and its queue when the page names one, at the agent's severity; the todo's
/// link, else the endpoint's Board page. Never payload text.
pub fn agent_page(facts: &AgentPageFacts, base_url: &str) -> Message {
    let slug = clip(&facts.endpoint_slug, FIELD_MAX_CHARS);
    let mut lines = vec![format!("The agent of endpoint {slug} asked to tell its owner (notify_owner).")];
    lines.extend(quoted("Notice (agent-written)", &facts.text, TITLE_MAX_CHARS));
    if let Some(todo) = &facts.todo_id {
        lines.extend(plain("Todo", todo, FIELD_MAX_CHARS));
    }
    if let Some(queue) = &facts.queue {
        lines.extend(plain("Queue", queue, FIELD_MAX_CHARS));
    }
    let link = match &facts.todo_id {
        Some(todo) => todo_link(base_url, todo),
        None => format!("{}/endpoints/{}", trim_base(base_url), encode_path_segment(&facts.endpoint_id)),
    };
    Message {
        title: clip(&format!("Agent · {slug}"), TITLE_MAX_CHARS),
        body: lines.join("\n"),
        severity: facts.severity,
        link,
    }
}

/// `todo.dead_lettered`: `Dead letter · <queue>`, the attempts, the cause, the closing
/// attempt's summary and artifact (labelled agent-written), the origin, the todo's link.
pub fn dead_letter(facts: &DeadLetterFacts, base_url: &str) -> Message {
    let queue = clip(&facts.queue, FIELD_MAX_CHARS);
    let summary = format!("A todo on queue {queue} became a dead letter and will not be retried.");
    dead_letter_like(facts, base_url, format!("Dead letter · {queue}"), summary, SinkEvent::DeadLettered)
}

/// `relay.exhausted`: `Relay exhausted · <queue>`, with the same facts as
/// [`dead_letter`] (the attempt count and the closing attempt's summary and artifact
/// matter most: they say where the relay's last run left its work).
pub fn relay_exhausted(facts: &DeadLetterFacts, base_url: &str) -> Message {
    let queue = clip(&facts.queue, FIELD_MAX_CHARS);
    let summary = format!("A relayed todo on queue {queue} ran out of attempts and will not be retried.");
    dead_letter_like(facts, base_url, format!("Relay exhausted · {queue}"), summary, SinkEvent::RelayExhausted)
}

fn dead_letter_like(
    facts: &DeadLetterFacts,
    base_url: &str,
    title: String,
    summary: String,
    event: SinkEvent,
) -> Message {
    let mut lines = vec![summary, format!("Failed {} of {} attempts.", facts.attempts, facts.max_attempts)];
    lines.push(cause_line(&facts.cause));
    lines.extend(quoted(&format!("Todo title ({})", facts.title_by.label()), &facts.todo_title, TITLE_MAX_CHARS));
    if let Some(s) = &facts.closing_summary {
        lines.extend(quoted("Closing summary (agent-written)", s, AGENT_SUMMARY_MAX_CHARS));
    }
    if let Some(a) = &facts.artifact {
        lines.extend(plain("Artifact (agent-written)", a, ARTIFACT_MAX_CHARS));
    }
    lines.extend(plain("Origin", &facts.origin, FIELD_MAX_CHARS));
    if let Some(e) = &facts.excerpt {
        lines.extend(quoted("Excerpt (sender-written)", e, EXCERPT_MAX_CHARS));
    }
    Message {
        title: clip(&title, TITLE_MAX_CHARS),
        body: lines.join("\n"),
        severity: event.default_severity(),
        link: todo_link(base_url, &facts.todo_id),
    }
}

/// One `todo.dead_lettered` message for a whole revocation or expiry cascade: the
/// endpoint, how many todos died, and the Dead view's link (never one message per todo).
pub fn endpoint_revoked(facts: &EndpointRevokedFacts, base_url: &str) -> Message {
    let slug = clip(&facts.endpoint_slug, FIELD_MAX_CHARS);
    let what = if facts.reason == "endpoint_expired" { "expired" } else { "revoked" };
    let count = match facts.dead_lettered {
        1 => "1 todo it held is now a dead letter".to_owned(),
        n => format!("{n} todos it held are now dead letters"),
    };
    let lines = [
        format!("Endpoint {slug} was {what}; {count}."),
        cause_line(&facts.reason),
        format!("Endpoint: {slug} ({})", clip(&facts.endpoint_id, FIELD_MAX_CHARS)),
        "They are on the Board's Dead list.".to_owned(),
    ];
    Message {
        title: clip(&format!("Dead letters · endpoint {slug} {what}"), TITLE_MAX_CHARS),
        body: lines.join("\n"),
        severity: SinkEvent::DeadLettered.default_severity(),
        link: dead_view_link(base_url),
    }
}

/// `delivery.quarantined`: "Quarantined · <source>", the webhook, the reason, the
/// claimed sender (labelled), and the held todo's link.
pub fn quarantined(facts: &QuarantineFacts, base_url: &str) -> Message {
    let source = clip(&facts.source, FIELD_MAX_CHARS);
    let webhook = clip(&facts.webhook_id, FIELD_MAX_CHARS);
    let mut lines = vec![
        format!("A delivery to webhook {webhook} ({source}) was quarantined and waits for release or discard."),
        format!("Reason: {}", clip(&facts.reason, FIELD_MAX_CHARS)),
    ];
    if let Some(sender) = &facts.sender {
        lines.extend(quoted("Sender (claimed by the delivery, sender-written)", sender, FIELD_MAX_CHARS));
    }
    if let Some(e) = &facts.excerpt {
        lines.extend(quoted("Excerpt (sender-written)", e, EXCERPT_MAX_CHARS));
    }
    Message {
        title: clip(&format!("Quarantined · {source}"), TITLE_MAX_CHARS),
        body: lines.join("\n"),
        severity: SinkEvent::Quarantined.default_severity(),
        link: todo_link(base_url, &facts.todo_id),
    }
}

/// `rule.notify`: `Rule <id> matched · <queue>`, where the delivery went, the todo's
/// title (labelled), at the rule's severity; the todo's link, or the webhook's Board page
/// when the delivery made no todo.
pub fn rule_matched(facts: &RuleMatchFacts, base_url: &str) -> Message {
    let rule = clip(&facts.rule_id, FIELD_MAX_CHARS);
    let webhook = clip(&facts.webhook_id, FIELD_MAX_CHARS);
    let queue = facts.queue.as_deref().map(|q| clip(q, FIELD_MAX_CHARS));
    let title = match &queue {
        Some(q) => format!("Rule {rule} matched · {q}"),
        None => format!("Rule {rule} matched"),
    };
    let went = match &queue {
        Some(q) => format!("it went to queue {q}."),
        None => "it made no todo.".to_owned(),
    };
    let mut lines = vec![format!("Rule {rule} on webhook {webhook} matched a delivery; {went}")];
    lines.extend(quoted("Todo title (sender-written)", &facts.todo_title, TITLE_MAX_CHARS));
    if let Some(e) = &facts.excerpt {
        lines.extend(quoted("Excerpt (sender-written)", e, EXCERPT_MAX_CHARS));
    }
    let link = match &facts.todo_id {
        Some(id) => todo_link(base_url, id),
        None => format!("{}/webhooks/{}", trim_base(base_url), encode_path_segment(&facts.webhook_id)),
    };
    Message { title: clip(&title, TITLE_MAX_CHARS), body: lines.join("\n"), severity: facts.severity, link }
}

/// The message of a sink's "send test": harmless, names the sink, links the Board.
pub fn test_message(sink_name: &str, base_url: &str) -> Message {
    let name = clip(sink_name, FIELD_MAX_CHARS);
    Message {
        title: clip(&format!("Switchboard test · {name}"), TITLE_MAX_CHARS),
        body: format!("This is a test from Switchboard. If you can read it, sink {name} works."),
        severity: Severity::Normal,
        link: format!("{}/todos", trim_base(base_url)),
    }
}

/// The message of a pending row that absorbed `more` repeats of its event (same dedup
/// key, inside its window): the title and the body end with "and N more". Nothing
/// changes when `more` is 0.
pub fn folded(message: Message, more: u32) -> Message {
    if more == 0 {
        return message;
    }
    let suffix = format!(" · and {more} more");
    let room = TITLE_MAX_CHARS.saturating_sub(suffix.chars().count());
    Message {
        title: format!("{}{suffix}", cut_chars(&message.title, room)),
        body: format!("{}\nAnd {more} more like it.", message.body),
        ..message
    }
}

/// The one message that carries every row a sink held while its budget was spent:
/// "14 more events since 10:02 UTC — 9 dead letters, 5 quarantined; see the board.",
/// linking the Dead view, at the highest default severity among the events counted
/// (raise it with [`Message::at_least`] when a row carried more). `counts` may name an
/// event more than once (the counts add up) and holds the number of events, folded
/// repeats included.
pub fn coalesced(counts: &[(SinkEvent, u32)], since: DateTime<Utc>, base_url: &str) -> Message {
    let mut parts = Vec::new();
    let mut total: u64 = 0;
    let mut severity = Severity::Low;
    for event in SinkEvent::ALL {
        let n: u64 = counts.iter().filter(|(e, _)| e == event).map(|(_, n)| u64::from(*n)).sum();
        if n == 0 {
            continue;
        }
        total += n;
        severity = severity.max(event.default_severity());
        parts.push(count_phrase(*event, n));
    }
    let events = if total == 1 { "1 more event".to_owned() } else { format!("{total} more events") };
    let breakdown = if parts.is_empty() { String::new() } else { format!(" — {}", parts.join(", ")) };
    Message {
        title: clip(&format!("Switchboard · {events}"), TITLE_MAX_CHARS),
        body: format!("{events} since {} UTC{breakdown}; see the board.", since.format("%H:%M")),
        severity,
        link: dead_view_link(base_url),
    }
}

/// "9 dead letters", "1 rule match", "5 quarantined".
fn count_phrase(event: SinkEvent, n: u64) -> String {
    let (one, many) = match event {
        SinkEvent::DeadLettered => ("dead letter", "dead letters"),
        SinkEvent::RelayExhausted => ("exhausted relay", "exhausted relays"),
        SinkEvent::Quarantined => ("quarantined", "quarantined"),
        SinkEvent::RuleMatched => ("rule match", "rule matches"),
        SinkEvent::Digest => ("digest", "digests"),
        SinkEvent::AgentPage => ("agent notice", "agent notices"),
    };
    format!("{n} {}", if n == 1 { one } else { many })
}

/// "Cause: lease_expired (the lease lapsed on the last allowed attempt)."
fn cause_line(cause: &str) -> String {
    let explained = match cause {
        "attempts_exhausted" => Some("the last allowed attempt failed"),
        "lease_expired" => Some("the lease lapsed on the last allowed attempt"),
        "interrupt_expired" => Some("the interrupt lease lapsed on the last allowed attempt"),
        "operator" => Some("an operator failed it"),
        "endpoint_revoked" => Some("its endpoint was revoked"),
        "endpoint_expired" => Some("its endpoint expired"),
        _ => None,
    };
    let cause = clip(cause, FIELD_MAX_CHARS);
    match explained {
        Some(why) => format!("Cause: {cause} ({why})."),
        None => format!("Cause: {cause}."),
    }
}

/// `{base}/todos/{id}`.
fn todo_link(base_url: &str, todo_id: &str) -> String {
    format!("{}/todos/{}", trim_base(base_url), encode_path_segment(todo_id))
}

/// `{base}/todos?filter=dead`.
fn dead_view_link(base_url: &str) -> String {
    format!("{}/todos?filter=dead", trim_base(base_url))
}

/// `Label: "text"` with the text clipped to `max`; nothing when it is empty.
fn quoted(label: &str, text: &str, max: usize) -> Option<String> {
    let text = clip(text, max);
    (!text.is_empty()).then(|| format!("{label}: \"{text}\""))
}

/// `Label: text` with the text clipped to `max`; nothing when it is empty.
fn plain(label: &str, text: &str, max: usize) -> Option<String> {
    let text = clip(text, max);
    (!text.is_empty()).then(|| format!("{label}: {text}"))
}

/// `text` neutralised, trimmed, and cut to at most `max` characters, the last of them
/// an ellipsis when anything was cut.
pub fn clip(text: &str, max: usize) -> String {
    cut_chars(neutralise(text).trim(), max)
}

/// At most `max` characters of `text`, the last an ellipsis when anything was cut.
fn cut_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    if max > 0 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod agent_tests;
#[cfg(test)]
mod tests;
