//! Dedup keys (SPEC section 10, "Outbox"): a new notification whose key matches a
//! sink's **pending** row folds into it (`count + 1`, "and N more") instead of becoming
//! a second message. The keys are unique per sink (the outbox's partial unique index is
//! on `(sink_id, dedup_key)` among pending rows), so every key names what it is about
//! precisely enough that two different things never share one.
//!
//! - dead letter: `dead_letter:{todo id}:{dead_letter_count}` (a todo retried by hand
//!   that dies again is a new event);
//! - endpoint cascade: `endpoint_revoked:{endpoint id}`;
//! - quarantine: `quarantine:{webhook id}:{window start}`, the 10-minute window (UTC,
//!   aligned to the hour) the quarantine fell in, as RFC 3339;
//! - rule: `rule:{webhook id}:{rule id}:{subject}` (the webhook too: rule ids are only
//!   unique within one webhook's rules, and two webhooks may notify one sink).

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

use crate::domain::tokens::sha256;

/// The quarantine folding window, in seconds.
pub const QUARANTINE_WINDOW_SECS: i64 = 600;
/// Longest subject kept as it is in a rule key, in bytes; a longer one (or one that
/// itself starts with `sha256:`) is replaced by `sha256:` and its hex digest, so keys
/// stay short and distinct subjects stay distinct.
pub const SUBJECT_MAX_BYTES: usize = 200;

/// What a hashed subject starts with.
const HASHED: &str = "sha256:";

/// The key of a todo's dead letter number `dead_letter_count` (also `relay.exhausted`).
pub fn dead_letter(todo_id: &str, dead_letter_count: i32) -> String {
    format!("dead_letter:{todo_id}:{dead_letter_count}")
}

/// The key of an endpoint's revocation or expiry cascade.
pub fn endpoint_revoked(endpoint_id: &str) -> String {
    format!("endpoint_revoked:{endpoint_id}")
}

/// The start of the 10-minute window `at` falls in.
pub fn quarantine_window_start(at: DateTime<Utc>) -> DateTime<Utc> {
    let start = at.timestamp().div_euclid(QUARANTINE_WINDOW_SECS) * QUARANTINE_WINDOW_SECS;
    Utc.timestamp_opt(start, 0).single().unwrap_or(at)
}

/// The key of a quarantine on `webhook_id` at `at`.
pub fn quarantine(webhook_id: &str, at: DateTime<Utc>) -> String {
    let window = quarantine_window_start(at).to_rfc3339_opts(SecondsFormat::Secs, true);
    format!("quarantine:{webhook_id}:{window}")
}

/// The key of rule `rule_id` of `webhook_id` matching a delivery about `subject` (the
/// delivery's subject key, or its event id when it has none).
pub fn rule(webhook_id: &str, rule_id: &str, subject: &str) -> String {
    if subject.len() <= SUBJECT_MAX_BYTES && !subject.starts_with(HASHED) {
        format!("rule:{webhook_id}:{rule_id}:{subject}")
    } else {
        format!("rule:{webhook_id}:{rule_id}:{HASHED}{}", hex::encode(sha256(subject.as_bytes())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 9, 22, h, m, s).unwrap()
    }

    #[test]
    fn a_dead_letter_key_names_the_todo_and_its_dead_letter_count() {
        assert_eq!(dead_letter("td_1", 1), "dead_letter:td_1:1");
        assert_ne!(dead_letter("td_1", 1), dead_letter("td_1", 2), "a retried todo that dies again notifies again");
    }

    #[test]
    fn an_endpoint_cascade_has_one_key() {
        assert_eq!(endpoint_revoked("ep_9"), "endpoint_revoked:ep_9");
    }

    #[test]
    fn quarantines_fold_within_a_ten_minute_window_aligned_to_the_clock() {
        assert_eq!(quarantine("wh_1", at(10, 2, 41)), "quarantine:wh_1:2026-09-22T10:00:00Z");
        assert_eq!(quarantine("wh_1", at(10, 9, 59)), quarantine("wh_1", at(10, 0, 0)));
        assert_ne!(quarantine("wh_1", at(10, 9, 59)), quarantine("wh_1", at(10, 10, 0)));
        assert_ne!(quarantine("wh_1", at(10, 2, 0)), quarantine("wh_2", at(10, 2, 0)));
        assert_eq!(quarantine_window_start(at(23, 59, 59)), at(23, 50, 0));
        let before_1970 = Utc.with_ymd_and_hms(1969, 12, 31, 23, 55, 1).unwrap();
        assert_eq!(quarantine_window_start(before_1970), Utc.with_ymd_and_hms(1969, 12, 31, 23, 50, 0).unwrap());
    }

    #[test]
    fn a_rule_key_names_webhook_rule_and_subject_and_hashes_a_long_subject() {
        assert_eq!(rule("wh_1", "to-builds", "pr:12"), "rule:wh_1:to-builds:pr:12");
        assert_ne!(rule("wh_1", "notify", "x"), rule("wh_2", "notify", "x"));
        let long = "s".repeat(SUBJECT_MAX_BYTES + 1);
        let key = rule("wh_1", "r", &long);
        assert!(key.starts_with("rule:wh_1:r:sha256:") && key.len() == "rule:wh_1:r:sha256:".len() + 64, "{key}");
        assert_ne!(key, rule("wh_1", "r", &format!("{long}t")));
        assert_eq!(rule("wh_1", "r", &"s".repeat(SUBJECT_MAX_BYTES)).len(), "rule:wh_1:r:".len() + SUBJECT_MAX_BYTES);
        let mimic = key.trim_start_matches("rule:wh_1:r:");
        assert_ne!(rule("wh_1", "r", mimic), key, "a subject cannot pose as another's digest");
    }
}
