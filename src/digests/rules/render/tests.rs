use chrono::{TimeZone, Utc};

use super::*;
use crate::digests::rules::report::*;
use crate::domain::ids::TodoId;

fn heading() -> Heading<'static> {
    Heading {
        name: "morning",
        when: "Tue 09:00 Europe/Berlin",
        zone: chrono_tz::Europe::Berlin,
        base_url: "https://sb.example",
        age_threshold_seconds: 3600,
    }
}

fn key(q: &str) -> QueueKey {
    QueueKey { endpoint: "ci-bot".into(), queue: q.into() }
}

fn report() -> Report {
    Report {
        since: Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 0).unwrap(),
        until: Utc.with_ymd_and_hms(2026, 12, 2, 8, 0, 0).unwrap(),
        pending: Measured::Ok(vec![PendingLine { key: key("builds"), pending: 12, oldest_pending_seconds: 7200 }]),
        claimed: Measured::Ok(vec![ClaimedLine { key: key("builds"), claimed: 2, stalled: 1 }]),
        dead: Measured::Ok(vec![DeadLine {
            key: key("builds"),
            dead_letters: 1,
            first: vec![DeadLetterLine {
                id: TodoId(uuid::Uuid::nil()),
                title: "Fix\u{7}   the build".into(),
                title_by: crate::domain::vocabulary::Writer::Sender,
            }],
        }]),
        quarantined: Measured::Ok(vec![]),
        unheard: Measured::Unavailable("timed out after 5000 ms".into()),
        clocked_out: Measured::Ok(vec![]),
        deferred: Measured::Ok(vec![DeferredLine { key: key("builds"), reason: "paused".into(), deferred: 3 }]),
        undeliverable: Measured::Ok(vec![]),
        unbound: Measured::Ok(vec![]),
    }
}

#[test]
fn an_unmeasured_section_reads_unavailable_with_its_reason_and_never_zero() {
    let text = body(&report(), &heading());
    assert!(text.contains("Unheard doorbells: unavailable: timed out after 5000 ms"), "{text}");
    assert!(!text.contains("Unheard doorbells: 0"), "{text}");
    let sections = sections(&report());
    let unheard: Vec<_> = sections.iter().filter(|s| s["name"] == "unheard_doorbells").collect();
    assert_eq!(unheard.len(), 1);
    assert_eq!(unheard[0]["status"], "unavailable");
    assert!(unheard[0].get("unheard").is_none() && unheard[0].get("count").is_none(), "{}", unheard[0]);
}

#[test]
fn a_queue_line_carries_its_counts_and_each_dead_letter_links_to_its_todo() {
    let text = body(&report(), &heading());
    assert!(
        text.contains(
            "- ci-bot/builds: 12 pending (oldest 2 h ⚠) · 2 claimed · 1 stalled · 1 dead letter · 3 deferred (paused)"
        ),
        "{text}"
    );
    let id = TodoId(uuid::Uuid::nil());
    assert!(
        text.contains(&format!("  - Todo title (sender-written): \"Fix   the build\" https://sb.example/todos/{id}")),
        "{text}"
    );
    assert!(!text.contains('\u{7}'), "control characters are stripped");
    assert!(text.ends_with("Dead letters: https://sb.example/todos?filter=dead"), "{text}");
}

#[test]
fn the_title_counts_what_needs_attention() {
    // 1 stalled + 1 dead letter + 1 queue older than the threshold.
    assert_eq!(
        title(&report(), &heading()),
        "Switchboard digest · morning · Tue 09:00 Europe/Berlin · 3 need attention"
    );
    let mut quiet = report();
    quiet.pending = Measured::Ok(vec![]);
    quiet.claimed = Measured::Ok(vec![]);
    quiet.dead = Measured::Ok(vec![]);
    assert_eq!(title(&quiet, &heading()), "Switchboard digest · morning · Tue 09:00 Europe/Berlin · 1 not measured");
    quiet.unheard = Measured::Ok(vec![]);
    assert_eq!(title(&quiet, &heading()), "Switchboard digest · morning · Tue 09:00 Europe/Berlin · all quiet");
}

#[test]
fn the_short_message_links_the_published_artifact() {
    assert_eq!(short("https://cairn.example/a/1"), "The full digest: https://cairn.example/a/1");
    let full = after_failed_publication("line one", "cairn answered 503");
    assert_eq!(full, "Publishing this digest to Cairn failed (cairn answered 503); here it is in full.\n\nline one");
}

#[test]
fn ages_read_like_a_person_says_them() {
    assert_eq!([age(5), age(600), age(7200), age(4 * 86_400)], ["5 s", "10 min", "2 h", "4 d"]);
}

#[test]
fn an_unbound_connection_is_named_with_the_messages_it_holds() {
    let mut r = report();
    r.unbound = Measured::Ok(vec![crate::digests::rules::report::UnboundLine { connection: "phone".into(), held: 4 }]);
    let text = body(&r, &heading());
    assert!(text.contains("Connections not bound to a destination"), "{text}");
    assert!(text.contains("phone (4 held)"), "{text}");
    let listed: Vec<_> = sections(&r).into_iter().filter(|s| s["name"] == "unbound_connections").collect();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["connection"], "phone");
    assert_eq!(listed[0]["held"], 4);
}

#[test]
fn the_body_shows_its_times_in_the_zone_the_title_names_with_abbreviation_and_offset() {
    // 08:00 UTC on 1 December is 09:00 in Berlin (CET, +01:00).
    let text = body(&report(), &heading());
    assert!(text.starts_with("Since Tue 01 Dec 09:00 Europe/Berlin (CET, +01:00) · "), "{text}");
    assert!(!text.contains("(UTC)") && !text.contains("08:00"), "{text}");
    assert!(title(&report(), &heading()).contains("Tue 09:00 Europe/Berlin"));
    // In summer the same zone reads CEST, +02:00; UTC reads as UTC.
    let july = Utc.with_ymd_and_hms(2026, 7, 1, 7, 0, 0).unwrap();
    assert_eq!(zoned(july, chrono_tz::Europe::Berlin), "Wed 01 Jul 09:00 Europe/Berlin (CEST, +02:00)");
    assert_eq!(zoned(july, chrono_tz::Tz::UTC), "Wed 01 Jul 07:00 UTC");
}

#[test]
fn a_dead_letter_title_is_labelled_with_who_wrote_it() {
    let mut r = report();
    if let Measured::Ok(dead) = &mut r.dead {
        dead[0].first[0].title_by = crate::domain::vocabulary::Writer::Agent;
    }
    let text = body(&r, &heading());
    assert!(text.contains("Todo title (agent-written): \"Fix"), "{text}");
    assert!(!text.contains("sender-written"), "{text}");
}
