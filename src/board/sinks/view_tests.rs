//! The Sinks page bodies, rendered from plain rows.

use chrono::{DateTime, Duration, Utc};

use super::form::{ConnectionForm, SinkForm, SubscriptionsForm, UpdateForm, saved_text};
use super::view::*;
use crate::board::csrf::CsrfToken;
use crate::board::owners::Owners;
use crate::board::session::Human;
use crate::domain::ids::{ConnectionId, HumanId, ScopeId, SinkId, TodoId};
use crate::domain::todo_state::TeamRole;
use crate::sinks::rules::vocabulary::{AppriseMode, ConnectionKind, OutboxStatus, Severity, SinkEvent, SinkKind};
use crate::sinks::statements::outbox::SendRow;
use crate::sinks::statements::{ConnectionRow, SinkRow, SubscriptionRow};
use crate::store::tenancy::{Reach, ScopeGrant};

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T03:00:00Z").unwrap().with_timezone(&Utc)
}

/// Ada: her own scope, admin of `ops`, member of `readers`.
fn owners(mine: ScopeId, ops: ScopeId, readers: ScopeId) -> Owners {
    let human = Human {
        reach: Reach {
            human: HumanId::new(),
            personal: mine,
            scopes: vec![
                ScopeGrant { scope: mine, role: TeamRole::Admin },
                ScopeGrant { scope: ops, role: TeamRole::Admin },
                ScopeGrant { scope: readers, role: TeamRole::Member },
            ],
        },
        email: "ada@example.com".into(),
        name: "Ada".into(),
        csrf: CsrfToken::random(),
        notice: None,
        session_token: String::new(),
    };
    Owners::from_parts(&human, vec![(ops, "team:ops".into()), (readers, "team:readers".into())])
}

fn connection(scope: ScopeId, name: &str) -> ConnectionRow {
    ConnectionRow {
        id: ConnectionId::new(),
        scope_id: scope,
        name: name.into(),
        kind: ConnectionKind::Gotify,
        base_url: Some("https://gotify.example.com".into()),
        bound: true,
        fingerprint: "0123456789ab".into(),
        created_at: now() - Duration::days(2),
        rotated_at: None,
    }
}

fn sink(scope: ScopeId, conn: &ConnectionRow, name: &str) -> SinkRow {
    SinkRow {
        id: SinkId::new(),
        scope_id: scope,
        name: name.into(),
        kind: SinkKind::Gotify,
        base_url: "https://gotify.example.com/?token=s3cret".into(),
        connection_id: conn.id,
        apprise_mode: None,
        enabled: true,
        budget_per_hour: 30,
        burst: 10,
        tokens: 10.0,
        tokens_at: now(),
        created_at: now() - Duration::days(1),
    }
}

fn render(
    conns: &[ConnectionRow],
    sinks: &[SinkRow],
    owners: &Owners,
    refused: Option<(&RefusedSinkForm, &str)>,
) -> String {
    // Every sink but one named "silent" holds a subscription.
    let subscriptions: std::collections::HashMap<SinkId, i64> =
        sinks.iter().filter(|s| s.name != "silent").map(|s| (s.id, 1)).collect();
    let v = SinksView { connections: conns, sinks, subscriptions: &subscriptions, owners, refused, now: now() };
    sinks_page(&v, &CsrfToken::random()).into_string()
}

#[test]
fn connections_show_their_fingerprint_and_sinks_their_redacted_url_budget_and_connection() {
    let (mine, ops, readers) = (ScopeId::new(), ScopeId::new(), ScopeId::new());
    let o = owners(mine, ops, readers);
    let c = connection(ops, "ops-gotify");
    let s = sink(ops, &c, "ops-phone");
    let html = render(std::slice::from_ref(&c), std::slice::from_ref(&s), &o, None);
    assert!(html.contains("ops-gotify") && html.contains("0123456789ab"), "{html}");
    assert!(html.contains("https://gotify.example.com/?redacted"), "{html}");
    assert!(!html.contains("s3cret"), "the query never reaches the page: {html}");
    assert!(html.contains("30 an hour, burst 10"), "{html}");
    assert!(html.contains(&s.id.to_string()) && html.contains(&format!(r#"href="/sinks/{}""#, s.id)));
    assert!(html.contains(&format!(r#"action="/sinks/connections/{}/rotate""#, c.id)));
    assert!(html.contains(&format!(r#"action="/sinks/{}/test""#, s.id)));
    assert!(html.contains(&format!(r#"action="/sinks/{}/update""#, s.id)) && html.contains("Disable"));
    assert!(html.contains(r#"type="password""#), "the secret field is a password field");
    assert!(html.contains(r#"action="/sinks/connections""#) && html.contains(r#"action="/sinks""#));
}

#[test]
fn a_sink_with_no_subscription_is_marked_as_hearing_nothing_and_one_with_some_is_not() {
    let (mine, ops, readers) = (ScopeId::new(), ScopeId::new(), ScopeId::new());
    let o = owners(mine, ops, readers);
    let c = connection(ops, "ops-gotify");
    let (silent, heard) = (sink(ops, &c, "silent"), sink(ops, &c, "phone"));
    let html = render(std::slice::from_ref(&c), &[silent.clone(), heard.clone()], &o, None);
    let row = |id: SinkId| {
        let start = html.find(&format!(r#"<tr id="sink-{id}""#)).unwrap();
        let end = html[start..].find("</tr>").unwrap();
        html[start..start + end].to_owned()
    };
    assert!(row(silent.id).contains(">hears nothing</span>"), "{}", row(silent.id));
    assert!(!row(heard.id).contains("hears nothing"), "{}", row(heard.id));
}

#[test]
fn list_ids_are_one_short_line_with_the_full_id_in_the_title_and_kinds_do_not_wrap() {
    let (mine, ops, readers) = (ScopeId::new(), ScopeId::new(), ScopeId::new());
    let o = owners(mine, ops, readers);
    let c = connection(ops, "ops-gotify");
    let s = SinkRow { kind: SinkKind::Apprise, apprise_mode: Some(AppriseMode::Urls), ..sink(ops, &c, "phone") };
    let html = render(std::slice::from_ref(&c), std::slice::from_ref(&s), &o, None);
    for id in [s.id.to_string(), c.id.to_string()] {
        let shown = format!(r#"<code class="sb-id" title="{id}">{}…</code>"#, &id[..11]);
        assert!(html.contains(&shown), "{shown}: {html}");
        // The full id appears only in the title attribute (and links), never as text that wraps.
        assert!(!html.contains(&format!(">{id}<")), "{html}");
    }
    assert!(
        html.contains(r#"<td class="sb-nowrap" data-label="Kind"><span class="sb-kind">apprise (urls)</span></td>"#),
        "{html}"
    );
    assert!(html.contains(r#"<td class="sb-nowrap" data-label="Kind">gotify</td>"#), "{html}");
}

#[test]
fn only_a_cairn_connection_offers_a_test_and_only_to_its_admins() {
    let (mine, ops, readers) = (ScopeId::new(), ScopeId::new(), ScopeId::new());
    let o = owners(mine, ops, readers);
    let gotify = connection(ops, "ops-gotify");
    let cairn = ConnectionRow {
        kind: ConnectionKind::Cairn,
        base_url: Some("https://cairn.example".into()),
        ..connection(ops, "ops-cairn")
    };
    let read_only = ConnectionRow { scope_id: readers, ..cairn.clone() };
    let html = render(&[gotify.clone(), cairn.clone()], &[], &o, None);
    assert!(html.contains(&format!(r#"action="/sinks/connections/{}/test""#, cairn.id)), "{html}");
    assert!(!html.contains(&format!("/sinks/connections/{}/test", gotify.id)), "a gotify one is tested by a sink");
    let html = render(std::slice::from_ref(&read_only), &[], &o, None);
    assert!(!html.contains("/test"), "a member cannot test the team's connection: {html}");
}

#[test]
fn a_member_of_a_team_sees_its_items_but_no_forms_for_them() {
    let (mine, ops, readers) = (ScopeId::new(), ScopeId::new(), ScopeId::new());
    let o = owners(mine, ops, readers);
    let c = connection(readers, "readers-gotify");
    let s = sink(readers, &c, "readers-phone");
    let html = render(std::slice::from_ref(&c), std::slice::from_ref(&s), &o, None);
    assert!(html.contains("readers-gotify") && html.contains("readers-phone"));
    assert!(!html.contains(&format!("/sinks/connections/{}/rotate", c.id)), "{html}");
    assert!(!html.contains(&format!("/sinks/{}/test", s.id)) && !html.contains(&format!("/sinks/{}/update", s.id)));
    assert!(html.contains("admins only"));
    // The create-sink form offers only connections the human administers.
    assert!(html.contains("Store a gotify or apprise connection (bound to its destination) first"), "{html}");
}

#[test]
fn a_refused_create_is_shown_beside_its_form_with_what_was_typed_but_never_the_secret() {
    let (mine, ops, readers) = (ScopeId::new(), ScopeId::new(), ScopeId::new());
    let o = owners(mine, ops, readers);
    let typed = ConnectionForm {
        name: "phone".into(),
        kind: "apprise".into(),
        secret: "json://hush".into(),
        base_url: String::new(),
        owner: "team:ops".into(),
    };
    let refused = RefusedSinkForm::NewConnection(typed.without_secret());
    let html = render(&[], &[], &o, Some((&refused, "forbidden_scheme: json")));
    assert!(html.contains("Refused, nothing changed: forbidden_scheme: json"), "{html}");
    assert!(html.contains(r#"value="phone""#) && !html.contains("hush"), "{html}");
}

#[test]
fn a_disabled_sink_offers_enable() {
    let (mine, ops, readers) = (ScopeId::new(), ScopeId::new(), ScopeId::new());
    let o = owners(mine, ops, readers);
    let c = connection(mine, "mine");
    let mut s = sink(mine, &c, "my-phone");
    s.enabled = false;
    let html = render(&[c], &[s], &o, None);
    assert!(html.contains(r#"name="enabled" value="true""#) && html.contains("Enable"), "{html}");
    assert!(html.contains(">off<"), "{html}");
}

fn send_row(status: OutboxStatus, todo: Option<TodoId>) -> SendRow {
    SendRow {
        id: uuid::Uuid::new_v4(),
        event: SinkEvent::DeadLettered,
        todo_id: todo,
        endpoint_id: None,
        status,
        count: 3,
        attempts: 2,
        last_error: Some("server_error".into()),
        created_at: now() - Duration::minutes(5),
        sent_at: None,
    }
}

#[test]
fn the_send_log_links_todos_and_shows_each_status_with_its_chip() {
    let todo = TodoId::new();
    let rows: Vec<SendRow> = OutboxStatus::ALL.iter().map(|s| send_row(*s, Some(todo))).collect();
    let html = send_log(&rows, now()).into_string();
    for s in OutboxStatus::ALL {
        assert!(html.contains(&format!(r#"class="sb-chip sb-chip-{}""#, s.as_str())), "{s:?}: {html}");
    }
    assert!(html.contains(&format!(r#"href="/todos/{todo}""#)), "{html}");
    assert!(html.contains("todo.dead_lettered") && html.contains("server_error") && html.contains("5 min ago"));
    assert!(send_log(&[], now()).into_string().contains("Nothing has been sent"));
}

#[test]
fn the_sink_page_has_the_editor_for_admins_only() {
    let (mine, ops, readers) = (ScopeId::new(), ScopeId::new(), ScopeId::new());
    let _ = owners(mine, ops, readers);
    let c = connection(mine, "mine");
    let s = sink(mine, &c, "my-phone");
    let page = |may_admin| {
        let p = SinkPage {
            sink: &s,
            owner: "you",
            connection: "mine",
            may_admin,
            hears_nothing: true,
            editor: r#"{"subscriptions": []}"#,
            error: Some("reference_out_of_scope"),
            sends: &[],
            now: now(),
        };
        sink_page(&p, &CsrfToken::random()).into_string()
    };
    let admin = page(true);
    assert!(admin.contains(&format!(r#"action="/sinks/{}/subscriptions""#, s.id)) && admin.contains("textarea"));
    assert!(admin.contains("reference_out_of_scope"));
    let member = page(false);
    assert!(!member.contains("textarea") && member.contains("Only an admin"), "{member}");
}

#[test]
fn the_editor_reads_and_writes_the_operator_apis_shape() {
    let form = SubscriptionsForm {
        subscriptions:
            r#"{"subscriptions": [{"events": ["todo.dead_lettered"], "queues": ["builds"], "min_severity": "high"}]}"#
                .into(),
    };
    let subs = form.subscriptions().unwrap();
    assert_eq!(subs.len(), 1);
    assert_eq!(subs[0].events, vec![SinkEvent::DeadLettered]);
    assert_eq!(subs[0].min_severity, Some(Severity::High));
    for bad in ["", "nope", r#"{"subscriptions": [{"events": ["x"]}]}"#, r#"{"subs": []}"#] {
        assert!(SubscriptionsForm { subscriptions: bad.into() }.subscriptions().is_err(), "{bad}");
    }
    let row = SubscriptionRow {
        position: 0,
        events: vec![SinkEvent::Quarantined],
        queues: vec![],
        endpoint_ids: vec![],
        webhook_ids: vec![],
        min_severity: Severity::Normal,
        include_excerpt: false,
    };
    let text = saved_text(&[row]);
    let back = SubscriptionsForm { subscriptions: text }.subscriptions().unwrap();
    assert_eq!(back[0].events, vec![SinkEvent::Quarantined]);
}

#[test]
fn the_update_and_sink_forms_check_their_own_shapes() {
    let f = |enabled: Option<&str>, budget: Option<&str>, burst: Option<&str>| UpdateForm {
        enabled: enabled.map(Into::into),
        budget_per_hour: budget.map(Into::into),
        burst: burst.map(Into::into),
    };
    assert_eq!(f(Some("false"), None, None).change().unwrap().enabled, Some(false));
    assert_eq!(f(None, Some("60"), Some("5")).change().unwrap().budget_per_hour, Some(60));
    assert!(f(None, Some("lots"), None).change().is_err());
    assert!(f(None, None, None).change().is_err());
    let sink = SinkForm { kind: "gotify".into(), connection_id: "nope".into(), ..SinkForm::default() };
    assert!(sink.body().is_err());
}

#[test]
fn an_unbound_connection_says_its_messages_are_held_and_offers_no_sink_to_be_made_with_it() {
    let (mine, ops, readers) = (ScopeId::new(), ScopeId::new(), ScopeId::new());
    let o = owners(mine, ops, readers);
    let c = ConnectionRow { base_url: None, bound: false, ..connection(ops, "legacy-gotify") };
    let html = render(std::slice::from_ref(&c), &[], &o, None);
    assert!(html.contains("unbound") && html.contains("messages are held"), "{html}");
    assert!(html.contains(r#"name="base_url" required"#), "its rotation asks for a destination: {html}");
    assert!(!html.contains(&format!(r#"option value="{}""#, c.id)), "no new sink may use it: {html}");
}

#[test]
fn a_bound_connection_shows_its_destination_redacted_and_the_sink_form_asks_no_url() {
    let (mine, ops, readers) = (ScopeId::new(), ScopeId::new(), ScopeId::new());
    let o = owners(mine, ops, readers);
    let c = ConnectionRow { base_url: Some("https://gotify.example.com/?k=s3cret".into()), ..connection(ops, "g") };
    let html = render(std::slice::from_ref(&c), &[], &o, None);
    assert!(html.contains("https://gotify.example.com/?redacted"), "{html}");
    assert!(!html.contains("s3cret"), "{html}");
    assert!(!html.contains("sb-sink-url"), "a sink takes its connection's destination: {html}");
    assert!(html.contains(&format!(r#"option value="{}""#, c.id)), "{html}");
}
