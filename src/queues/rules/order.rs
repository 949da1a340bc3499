//! The overview's order, trouble first (SPEC 13): most dead letters in the last 24
//! hours, then most stalled leases, then the oldest pending todo, then by endpoint slug
//! and queue name (the endpoint id breaks a tie of two endpoints' same slug across
//! scopes). A page ends with a cursor holding its last row's key; the next page starts
//! after it.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Most queues one page lists.
pub const LIMIT_MAX: i64 = 1000;
/// Queues one page lists when the caller does not say.
pub const LIMIT_DEFAULT: i64 = 200;

/// Where a queue sorts in the overview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TroubleKey {
    /// Dead letters in the last 24 hours (more sorts first).
    pub dead: i64,
    /// Stalled leases (more sorts first).
    pub stalled: i64,
    /// When the oldest pending todo was created (older sorts first; none sorts last).
    pub oldest_pending_at: Option<DateTime<Utc>>,
    /// The endpoint's slug.
    pub endpoint_slug: String,
    /// The queue.
    pub queue: String,
    /// The endpoint.
    pub endpoint_id: Uuid,
}

impl Ord for TroubleKey {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .dead
            .cmp(&self.dead)
            .then(other.stalled.cmp(&self.stalled))
            .then(match (self.oldest_pending_at, other.oldest_pending_at) {
                (Some(a), Some(b)) => a.cmp(&b),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            })
            .then_with(|| self.endpoint_slug.as_bytes().cmp(other.endpoint_slug.as_bytes()))
            .then_with(|| self.queue.as_bytes().cmp(other.queue.as_bytes()))
            .then(self.endpoint_id.cmp(&other.endpoint_id))
    }
}

impl PartialOrd for TroubleKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A page's cursor for the key of its last row: opaque to callers (hex of the key's
/// JSON, so it travels in a query string untouched).
pub fn cursor(after: &TroubleKey) -> String {
    hex::encode(serde_json::to_vec(after).unwrap_or_default())
}

/// The key a cursor holds; none when it is not one this server wrote.
pub fn after(cursor: &str) -> Option<TroubleKey> {
    let bytes = hex::decode(cursor.trim()).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The page size a caller asked for, when it is within 1–[`LIMIT_MAX`].
pub fn limit(asked: Option<i64>) -> Option<i64> {
    match asked {
        None => Some(LIMIT_DEFAULT),
        Some(n) if (1..=LIMIT_MAX).contains(&n) => Some(n),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn key(dead: i64, stalled: i64, oldest: Option<i64>, slug: &str, queue: &str) -> TroubleKey {
        TroubleKey {
            dead,
            stalled,
            oldest_pending_at: oldest.map(|s| Utc.timestamp_opt(1_800_000_000 + s, 0).single().expect("time")),
            endpoint_slug: slug.to_owned(),
            queue: queue.to_owned(),
            endpoint_id: Uuid::nil(),
        }
    }

    #[test]
    fn dead_letters_come_before_stalled_leases_which_come_before_old_work() {
        let mut keys = [
            key(0, 0, Some(-100), "a", "old"),
            key(0, 0, None, "a", "idle"),
            key(0, 2, None, "a", "stalled"),
            key(3, 0, None, "a", "dying"),
            key(0, 0, Some(-5), "a", "young"),
        ];
        keys.sort();
        let queues: Vec<&str> = keys.iter().map(|k| k.queue.as_str()).collect();
        assert_eq!(queues, vec!["dying", "stalled", "old", "young", "idle"]);
    }

    #[test]
    fn calm_queues_sort_by_endpoint_then_queue() {
        let mut keys = [key(0, 0, None, "b", "a"), key(0, 0, None, "a", "z"), key(0, 0, None, "a", "b")];
        keys.sort();
        let names: Vec<String> = keys.iter().map(|k| format!("{}/{}", k.endpoint_slug, k.queue)).collect();
        assert_eq!(names, vec!["a/b", "a/z", "b/a"]);
    }

    #[test]
    fn a_cursor_gives_back_the_key_it_was_made_from() {
        let k = key(1, 2, Some(3), "ep", "builds");
        assert_eq!(after(&cursor(&k)), Some(k));
    }

    #[test]
    fn a_cursor_this_server_did_not_write_is_refused() {
        assert_eq!(after("not-hex"), None);
        assert_eq!(after(&hex::encode(b"{\"dead\":1}")), None);
    }

    #[test]
    fn the_page_size_is_1_to_1000_defaulting_to_200() {
        assert_eq!(limit(None), Some(200));
        assert_eq!(limit(Some(1)), Some(1));
        assert_eq!(limit(Some(1000)), Some(1000));
        assert_eq!(limit(Some(0)), None);
        assert_eq!(limit(Some(1001)), None);
    }
}
