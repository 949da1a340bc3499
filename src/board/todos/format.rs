//! Small renderings shared by the Todos pages: times relative to now, words for
//! reasons and outcomes, and shortened agent text.

use chrono::{DateTime, Utc};

use crate::domain::todo_state::{AttemptDisposition, AttemptOutcome, DeadReason, TodoState};
use crate::domain::vocabulary::Phase;

/// How long ago `at` was, coarsely: `just now`, `4 min ago`, `3 h ago`, `12 d ago`.
/// A time in the future reads `in …` (see [`until`]).
pub fn ago(now: DateTime<Utc>, at: DateTime<Utc>) -> String {
    let secs = (now - at).num_seconds();
    if secs < 0 {
        return until(now, at);
    }
    if secs < 45 {
        return "just now".into();
    }
    format!("{} ago", span(secs))
}

/// How long until `at`: `in 30 s`, `in 4 min`; a time already past reads `now`.
pub fn until(now: DateTime<Utc>, at: DateTime<Utc>) -> String {
    let secs = (at - now).num_seconds();
    if secs <= 0 { "now".into() } else { format!("in {}", span(secs)) }
}

/// `secs` (positive) in its largest sensible unit.
fn span(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3_600 => format!("{} min", (s + 30) / 60),
        s if s < 48 * 3_600 => format!("{} h", (s + 1_800) / 3_600),
        s => format!("{} d", (s + 43_200) / 86_400),
    }
}

/// A timestamp for a `title` or a detail line: `2026-11-30 02:55:14 UTC`.
pub fn utc(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// A timestamp for `<time datetime=…>`.
pub fn machine(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Why a todo died, in words.
pub fn reason(r: DeadReason) -> &'static str {
    match r {
        DeadReason::AttemptsExhausted => "attempts exhausted",
        DeadReason::LeaseExpired => "lease expired",
        DeadReason::InterruptExpired => "interrupt expired",
        DeadReason::EndpointRevoked => "endpoint revoked",
    }
}

/// A todo's state, in words.
pub fn state(s: TodoState) -> &'static str {
    match s {
        TodoState::Pending => "pending",
        TodoState::Claimed => "claimed",
        TodoState::InputRequired => "input required",
        TodoState::AuthRequired => "auth required",
        TodoState::Done => "done",
        TodoState::Failed => "failed",
        TodoState::Canceled => "canceled",
    }
}

/// A todo's state chip: the phase's word (the pills' and the API's `phase`) with what
/// it means as the title, for a failed todo (Failed: a retry is scheduled; Dead: no
/// retry left); the state's words for the states no phase names.
pub fn state_badge(s: TodoState, retry_scheduled: bool) -> maud::Markup {
    match Phase::of(s, retry_scheduled) {
        Some(p @ Phase::Dead) => maud::html! { span.sb-chip.sb-chip-dead title=(p.meaning()) { (p.label()) } },
        Some(p @ Phase::Failed) => {
            maud::html! { span class=(format!("sb-chip {}", state_chip(s))) title=(p.meaning()) { (p.label()) } }
        }
        _ => maud::html! { span class=(format!("sb-chip {}", state_chip(s))) { (state(s)) } },
    }
}

/// The chip class (templates/board.css) of a todo in state `s`; a dead letter takes
/// `sb-chip-dead` instead.
pub fn state_chip(s: TodoState) -> &'static str {
    match s {
        TodoState::Pending => "sb-chip-pending",
        TodoState::Claimed => "sb-chip-claimed",
        TodoState::InputRequired | TodoState::AuthRequired => "sb-chip-interrupted",
        TodoState::Done => "sb-chip-done",
        TodoState::Failed => "sb-chip-failed",
        TodoState::Canceled => "sb-chip",
    }
}

/// How an attempt ended, in words.
pub fn outcome(o: AttemptOutcome) -> &'static str {
    match o {
        AttemptOutcome::Completed => "completed",
        AttemptOutcome::Failed => "failed",
        AttemptOutcome::Released => "released",
        AttemptOutcome::LeaseExpired => "lease expired",
        AttemptOutcome::Reaped => "reaped",
        AttemptOutcome::InterruptExpired => "interrupt expired",
        AttemptOutcome::Canceled => "canceled",
        AttemptOutcome::Revoked => "endpoint revoked",
    }
}

/// What became of the todo when an attempt ended, in words.
pub fn disposition(d: AttemptDisposition) -> &'static str {
    match d {
        AttemptDisposition::Done => "done",
        AttemptDisposition::RetryScheduled => "retry scheduled",
        AttemptDisposition::Requeued => "back in the queue",
        AttemptDisposition::DeadLettered => "dead-lettered",
        AttemptDisposition::Canceled => "canceled",
    }
}

/// `text` cut to at most `max` characters, with `…` when cut; for a list row (the
/// detail page shows the whole text).
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}…", text[..end].trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn t0() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-30T03:00:00Z").unwrap().with_timezone(&Utc)
    }

    #[test]
    fn times_read_in_their_largest_sensible_unit() {
        let now = t0();
        assert_eq!(ago(now, now - Duration::seconds(10)), "just now");
        assert_eq!(ago(now, now - Duration::seconds(50)), "50 s ago");
        assert_eq!(ago(now, now - Duration::minutes(4)), "4 min ago");
        assert_eq!(ago(now, now - Duration::hours(3)), "3 h ago");
        assert_eq!(ago(now, now - Duration::hours(47)), "47 h ago");
        assert_eq!(ago(now, now - Duration::days(12)), "12 d ago");
        assert_eq!(ago(now, now + Duration::minutes(2)), "in 2 min");
        assert_eq!(until(now, now - Duration::seconds(1)), "now");
        assert_eq!(until(now, now + Duration::seconds(30)), "in 30 s");
    }

    #[test]
    fn timestamps_are_utc_and_machine_readable() {
        assert_eq!(utc(t0()), "2026-11-30 03:00:00 UTC");
        assert_eq!(machine(t0()), "2026-11-30T03:00:00Z");
    }

    #[test]
    fn shortened_text_keeps_whole_characters_and_marks_the_cut() {
        assert_eq!(shorten("short", 10), "short");
        assert_eq!(shorten("exactly 10", 10), "exactly 10");
        assert_eq!(shorten("héllo wörld, again", 11), "héllo wörld…");
        assert_eq!(shorten("a b c", 2), "a…");
    }

    #[test]
    fn every_reason_has_words() {
        for r in DeadReason::ALL {
            assert!(!reason(*r).contains('_'));
        }
        for o in AttemptOutcome::ALL {
            assert!(!outcome(*o).contains('_'));
        }
    }
}
