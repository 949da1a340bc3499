//! The quarantine page bodies, rendered from plain rows.

use chrono::{DateTime, Duration, Utc};
use maud::{Markup, html};
use serde_json::json;

use super::view::*;
use crate::board::todos::fixtures;
use crate::db::models::TodoRow;
use crate::domain::ids::{EventId, WebhookId};
use crate::domain::todo_state::{QuarantineReason, TodoState};
use crate::store::quarantine::HeldDelivery;

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T03:00:00Z").unwrap().with_timezone(&Utc)
}

fn csrf() -> Markup {
    html! { input type="hidden" name="csrf_token" value="tok"; }
}

fn held(title: &str, payload: serde_json::Value) -> HeldDelivery {
    let created = now() - Duration::days(2);
    HeldDelivery {
        todo: TodoRow {
            queue: "quarantine".into(),
            source: Some("github".into()),
            kind: Some("push".into()),
            title: title.into(),
            payload: Some(payload),
            created_at: created,
            updated_at: created,
            quarantine_reason: Some(QuarantineReason::UntrustedActor),
            ..fixtures::todo(TodoState::Pending)
        },
        event_id: Some(EventId::new()),
        webhook_id: Some(WebhookId::new()),
        headers: Some(json!({"x-github-event": "push", "x-hub-signature-256": "[redacted]"})),
        received_at: Some(created),
    }
}

fn names(h: &HeldDelivery) -> Names {
    let mut n = Names::default();
    n.endpoints.insert(h.todo.endpoint_id, "ci-runner".into());
    if let Some(w) = h.webhook_id {
        n.webhooks.insert(w, "github → builds".into());
    }
    n
}

#[test]
fn a_held_row_shows_webhook_endpoint_source_sender_reason_arrival_and_expiry() {
    let h = held("push to main", json!({"sender": {"login": "stranger"}}));
    let html = quarantine_page(std::slice::from_ref(&h), &names(&h), now()).into_string();
    for want in
        ["github → builds", "ci-runner", "github", "push", "stranger", "sender not trusted", "2 d ago", "in 28 d"]
    {
        assert!(html.contains(want), "{want} missing from {html}");
    }
    assert!(html.contains(&format!(r#"href="/quarantine/{}""#, h.todo.id)), "{html}");
}

#[test]
fn nothing_held_says_so() {
    let html = quarantine_page(&[], &Names::default(), now()).into_string();
    assert!(html.contains("Nothing is held."), "{html}");
}

#[test]
fn a_deleted_webhook_is_named_as_such() {
    let h = held("x", json!({}));
    let html = quarantine_page(std::slice::from_ref(&h), &Names::default(), now()).into_string();
    assert!(html.contains("(deleted)"), "{html}");
}

#[test]
fn the_detail_shows_markup_in_the_payload_as_text_pretty_printed() {
    let h = held("<b>bold</b> title", json!({}));
    let payload = br#"{"comment":"<script>alert(1)</script>","n":1}"#;
    let html = held_page(&h, payload, &names(&h), now(), Some(&csrf())).into_string();
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
    assert!(!html.contains("<script>") && !html.contains("<b>bold"), "{html}");
    assert!(html.contains("\n  &quot;n&quot;: 1"), "pretty-printed: {html}");
    assert!(html.contains(&format!(r#"action="/quarantine/{}/release""#, h.todo.id)));
    assert!(html.contains(&format!(r#"action="/quarantine/{}/discard""#, h.todo.id)));
    assert!(html.contains("Yes, discard it"), "discard asks first");
    assert!(html.contains("x-github-event"), "headers are shown: {html}");
}

#[test]
fn a_payload_that_is_not_json_is_shown_as_text_and_a_huge_one_is_cut() {
    let (text, left_out) = payload_text(b"plain <text>", 100);
    assert_eq!((text.as_str(), left_out), ("plain <text>", 0));
    let big = "é".repeat(PAYLOAD_SHOW_BYTES);
    let (text, left_out) = payload_text(big.as_bytes(), PAYLOAD_SHOW_BYTES);
    assert_eq!(text.len(), PAYLOAD_SHOW_BYTES);
    assert_eq!(left_out, big.len() - PAYLOAD_SHOW_BYTES);
    let (text, left_out) = payload_text(b"abc\xff", 2);
    assert_eq!((text.as_str(), left_out), ("ab", 4));

    let h = held("x", json!({}));
    let html = held_page(&h, big.as_bytes(), &names(&h), now(), Some(&csrf())).into_string();
    assert!(html.contains("more bytes are not shown"), "{}", &html[..200]);
}

#[test]
fn a_delivery_that_left_offers_no_actions() {
    let mut h = held("x", json!({}));
    h.todo.state = TodoState::Done;
    h.todo.result = Some(json!({"released": true}));
    let html = held_page(&h, b"{}", &names(&h), now(), Some(&csrf())).into_string();
    assert!(html.contains("has left quarantine") && html.contains("released"), "{html}");
    assert!(!html.contains("/release\"") && !html.contains("/discard\""), "{html}");
}

#[test]
fn reasons_read_as_words() {
    assert_eq!(why(Some(QuarantineReason::RuleFault)), "a routing rule failed");
    assert_eq!(why(Some(QuarantineReason::RuleAction)), "a routing rule holds it");
}

#[test]
fn a_plain_team_member_gets_no_release_or_discard_form_but_is_told_who_may() {
    let h = held("x", json!({}));
    let html = held_page(&h, b"{}", &names(&h), now(), None).into_string();
    assert!(html.contains("Only an admin"), "{html}");
    assert!(!html.contains("/release\"") && !html.contains("/discard\""), "{html}");
}
