//! The Digests page bodies, rendered from plain rows.

use chrono::{DateTime, Duration, Utc};

use super::detail::{DigestPage, digest_page};
use super::form::DigestForm;
use super::format::artifact;
use super::preview::{PreviewPage, preview_page};
use super::runs::runs_table;
use super::view::{DigestsView, RefusedDigestForm, digests_page};
use crate::board::csrf::CsrfToken;
use crate::board::owners::Owners;
use crate::board::session::Human;
use crate::digests::rules::render::{self, Heading};
use crate::digests::rules::report::{DeadLine, Measured, PendingLine, QueueKey, Report};
use crate::digests::service::compose::Composed;
use crate::digests::statements::{DigestRow, RunRow};
use crate::domain::ids::{ConnectionId, DigestId, DigestRunId, HumanId, ScopeId, SinkId};
use crate::domain::todo_state::TeamRole;
use crate::sinks::rules::vocabulary::{ConnectionKind, SinkKind};
use crate::sinks::statements::{ConnectionRow, SinkRow};
use crate::store::tenancy::{Reach, ScopeGrant};

/// A sink URL's token and a connection's base URL secret: neither may reach a page.
const SINK_TOKEN: &str = "s3cret-gotify-token";
const CAIRN_SECRET: &str = "cairn_pat_hush";

/// A Monday, 03:00 UTC.
fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T03:00:00Z").unwrap().with_timezone(&Utc)
}

fn at(rfc3339: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(rfc3339).unwrap().with_timezone(&Utc)
}

struct Scopes {
    mine: ScopeId,
    ops: ScopeId,
    readers: ScopeId,
}

impl Scopes {
    fn new() -> Scopes {
        Scopes { mine: ScopeId::new(), ops: ScopeId::new(), readers: ScopeId::new() }
    }

    /// Ada: her own scope, admin of `ops`, member of `readers`.
    fn owners(&self) -> Owners {
        let human = Human {
            reach: Reach {
                human: HumanId::new(),
                personal: self.mine,
                scopes: vec![
                    ScopeGrant { scope: self.mine, role: TeamRole::Admin },
                    ScopeGrant { scope: self.ops, role: TeamRole::Admin },
                    ScopeGrant { scope: self.readers, role: TeamRole::Member },
                ],
            },
            email: "ada@example.com".into(),
            name: "Ada".into(),
            csrf: CsrfToken::random(),
            notice: None,
            session_token: "session-token-never-shown".into(),
        };
        Owners::from_parts(&human, vec![(self.ops, "team:ops".into()), (self.readers, "team:readers".into())])
    }
}

fn sink(scope: ScopeId, name: &str) -> SinkRow {
    SinkRow {
        id: SinkId::new(),
        scope_id: scope,
        name: name.into(),
        kind: SinkKind::Gotify,
        base_url: format!("https://gotify.example.com/?token={SINK_TOKEN}"),
        connection_id: ConnectionId::new(),
        apprise_mode: None,
        enabled: true,
        budget_per_hour: 30,
        burst: 10,
        tokens: 10.0,
        tokens_at: now(),
        created_at: now() - Duration::days(1),
    }
}

fn cairn(scope: ScopeId, name: &str) -> ConnectionRow {
    ConnectionRow {
        id: ConnectionId::new(),
        scope_id: scope,
        name: name.into(),
        kind: ConnectionKind::Cairn,
        base_url: Some(format!("https://cairn.example/?k={CAIRN_SECRET}")),
        bound: true,
        fingerprint: "0123456789ab".into(),
        created_at: now() - Duration::days(2),
        rotated_at: None,
    }
}

fn digest(scope: ScopeId, name: &str, schedule: &str, next: DateTime<Utc>, sinks: &[&SinkRow]) -> DigestRow {
    DigestRow {
        id: DigestId::new(),
        scope_id: scope,
        name: name.into(),
        schedule: schedule.into(),
        queues: vec![],
        sink_ids: sinks.iter().map(|s| s.id).collect(),
        skip_when_quiet: true,
        age_threshold_seconds: 3600,
        cairn_connection_id: None,
        cairn_ttl_seconds: 604_800,
        next_send_at: next,
        covered_until: None,
        created_at: now() - Duration::days(3),
    }
}

fn run(outcome: &str, send_at: DateTime<Utc>) -> RunRow {
    RunRow {
        id: DigestRunId::new(),
        send_at,
        outcome: outcome.into(),
        quiet: false,
        unavailable: 0,
        sinks_told: 0,
        artifact_url: None,
        cairn_error: None,
    }
}

struct World {
    scopes: Scopes,
    owners: Owners,
    sinks: Vec<SinkRow>,
    connections: Vec<ConnectionRow>,
}

impl World {
    fn new() -> World {
        let scopes = Scopes::new();
        let owners = scopes.owners();
        let sinks =
            vec![sink(scopes.ops, "ops-phone"), sink(scopes.readers, "readers-phone"), sink(scopes.mine, "my-phone")];
        let connections = vec![cairn(scopes.ops, "ops-cairn")];
        World { scopes, owners, sinks, connections }
    }

    fn list(&self, digests: &[(DigestRow, Vec<RunRow>)], refused: Option<(&RefusedDigestForm, &str)>) -> String {
        let v = DigestsView {
            digests,
            sinks: &self.sinks,
            connections: &self.connections,
            owners: &self.owners,
            refused,
            now: now(),
        };
        digests_page(&v, &CsrfToken::random()).into_string()
    }

    fn detail(&self, d: &DigestRow, runs: &[RunRow], may_admin: bool, error: Option<&str>) -> String {
        let form = DigestForm::from_row(d);
        let p = DigestPage {
            digest: d,
            runs,
            owner: self.owners.label(d.scope_id),
            sinks: &self.sinks,
            connections: &self.connections,
            may_admin,
            form: &form,
            error,
            now: now(),
        };
        digest_page(&p, &CsrfToken::random()).into_string()
    }
}

/// The markup of the table row whose id is `id`.
fn row<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html.find(&format!(r#"<tr id="{id}""#)).unwrap_or_else(|| panic!("no row {id} in {html}"));
    let len = html[start..].find("</tr>").unwrap();
    &html[start..start + len]
}

#[test]
fn the_next_send_time_shows_both_the_schedules_zone_and_utc() {
    let w = World::new();
    // Monday 30 November 2026, 09:00 in Berlin (CET, UTC+1) is 08:00 UTC.
    let d = digest(
        w.scopes.ops,
        "ops-morning",
        "TZ=Europe/Berlin Mon-Fri 09:00,17:00",
        at("2026-11-30T08:00:00Z"),
        &[&w.sinks[0]],
    );
    let html = w.list(&[(d.clone(), vec![])], None);
    let cells = row(&html, &format!("digest-{}", d.id));
    assert!(cells.contains("Mon 30 Nov 2026 09:00 Europe/Berlin"), "{cells}");
    assert!(cells.contains("Mon 30 Nov 2026 08:00 UTC"), "{cells}");
    assert!(cells.contains(r#"datetime="2026-11-30T08:00:00Z""#) && cells.contains("in 5 h"), "{cells}");
    let detail = w.detail(&d, &[], true, None);
    assert!(detail.contains("Mon 30 Nov 2026 09:00 Europe/Berlin") && detail.contains("Mon 30 Nov 2026 08:00 UTC"));
    // A schedule in UTC says so once.
    let utc = digest(w.scopes.mine, "mine", "TZ=UTC Mon 09:00", at("2026-11-30T09:00:00Z"), &[&w.sinks[2]]);
    let html = w.list(&[(utc.clone(), vec![])], None);
    assert_eq!(row(&html, &format!("digest-{}", utc.id)).matches("Mon 30 Nov 2026 09:00 UTC").count(), 1, "{html}");
}

#[test]
fn the_list_names_everything_a_digest_is_set_to_and_links_to_it() {
    let w = World::new();
    let mut d = digest(
        w.scopes.ops,
        "ops-morning",
        "TZ=Europe/Berlin Mon-Fri 09:00",
        now() + Duration::hours(5),
        &[&w.sinks[0]],
    );
    d.queues = vec!["builds".into(), "deploys".into()];
    d.skip_when_quiet = false;
    d.cairn_connection_id = Some(w.connections[0].id);
    let all = digest(w.scopes.readers, "readers-weekly", "TZ=UTC Mon 09:00", now() + Duration::days(7), &[&w.sinks[1]]);
    let html = w.list(&[(d.clone(), vec![run("sent", now() - Duration::days(1))]), (all.clone(), vec![])], None);
    let cells = row(&html, &format!("digest-{}", d.id));
    for want in [
        "ops-morning",
        "team:ops",
        "TZ=Europe/Berlin Mon-Fri 09:00",
        "<code>builds</code>, <code>deploys</code>",
        "ops-phone",
        "sent even when quiet",
        "3600 s (60 min)",
        "via ops-cairn, kept 7 d",
        "sb-chip-sent",
    ] {
        assert!(cells.contains(want), "{want}: {cells}");
    }
    assert!(cells.contains(&format!(r#"href="/digests/{}""#, d.id)), "{cells}");
    assert!(cells.contains(&format!(r#"href="/digests/{}/preview""#, d.id)), "{cells}");
    assert!(cells.contains(&format!(r#"action="/digests/{}/delete""#, d.id)), "an admin may delete: {cells}");
    let member = row(&html, &format!("digest-{}", all.id));
    assert!(member.contains("all queues") && member.contains("skipped when quiet") && member.contains("not sent yet"));
    assert!(member.contains("not published") && member.contains("readers-phone"), "{member}");
    assert!(!member.contains("/delete"), "a member gets no delete button: {member}");
    assert!(member.contains(&format!(r#"href="/digests/{}/preview""#, all.id)), "a member may preview: {member}");
}

#[test]
fn the_add_form_offers_the_administered_scopes_sinks_and_cairn_connections_with_the_grammar() {
    let w = World::new();
    let html = w.list(&[], None);
    assert!(html.contains("No digests yet") && html.contains(r#"action="/digests""#), "{html}");
    assert!(html.contains("TZ=Europe/Berlin Mon-Fri 09:00,17:00"), "the grammar's example: {html}");
    assert!(html.contains(&format!(r#"name="sink_ids" value="{}""#, w.sinks[0].id)), "ops is administered");
    assert!(html.contains(&format!(r#"name="sink_ids" value="{}""#, w.sinks[2].id)), "so is her own");
    assert!(!html.contains(&format!(r#"value="{}""#, w.sinks[1].id)), "readers is not administered: {html}");
    assert!(html.contains(&format!(r#"<option value="{}""#, w.connections[0].id)) && html.contains("ops-cairn"));
    assert!(html.contains(r#"name="skip_when_quiet" value="on" checked"#), "skip when quiet is on by default");
    assert!(html.contains(r#"name="age_threshold_seconds""#) && html.contains(r#"value="3600""#));
    assert!(html.contains(r#"<option value="team:ops""#) && !html.contains(r#"<option value="team:readers""#));
}

#[test]
fn a_refused_add_is_shown_beside_the_form_with_what_was_typed() {
    let w = World::new();
    let typed = DigestForm {
        name: "late-night".into(),
        schedule: "Mon-Fri 25:00".into(),
        sink_ids: vec![w.sinks[0].id.to_string()],
        ..DigestForm::default()
    };
    let refused = RefusedDigestForm::NewDigest(typed);
    let html = w.list(&[], Some((&refused, "invalid_argument: schedule: hour 25 out of range")));
    assert!(html.contains("Refused, nothing changed: invalid_argument: schedule: hour 25 out of range"), "{html}");
    assert!(html.contains(r#"value="late-night""#) && html.contains(r#"value="Mon-Fri 25:00""#), "{html}");
    assert!(html.contains(&format!(r#"value="{}" checked"#, w.sinks[0].id)), "{html}");
    assert!(html.contains(r#"<details class="sb-hook-add" id="add-digest" open"#), "the form is open: {html}");
}

#[test]
fn a_run_skipped_for_being_late_reads_as_such_and_each_outcome_says_why() {
    let w = World::new();
    let d = digest(w.scopes.mine, "mine", "TZ=Europe/Berlin Mon 09:00", now() + Duration::days(7), &[&w.sinks[2]]);
    let late = run("skipped_late", now() - Duration::hours(3));
    let quiet = run("skipped_quiet", now() - Duration::days(7));
    let mut sent = run("sent", now() - Duration::days(14));
    sent.sinks_told = 2;
    sent.unavailable = 1;
    let mut failed = run("sent", now() - Duration::days(21));
    failed.cairn_error = Some("server_error: 503".into());
    let mut published = run("sent", now() - Duration::days(28));
    published.artifact_url = Some("https://cairn.example/a/xyz".into());
    let runs = vec![late.clone(), quiet.clone(), sent.clone(), failed.clone(), published.clone()];
    let html = runs_table(&runs, &d.schedule, now()).into_string();
    let l = row(&html, &format!("run-{}", late.id));
    assert!(l.contains("skipped: late") && l.contains("sb-chip-held"), "{l}");
    assert!(l.contains("missed by an hour or more while no instance ran"), "{l}");
    let q = row(&html, &format!("run-{}", quiet.id));
    assert!(q.contains("skipped: quiet") && q.contains("nothing needed attention"), "{q}");
    let s = row(&html, &format!("run-{}", sent.id));
    assert!(s.contains("sb-chip-sent") && s.contains("1 unavailable") && s.contains(">2<"), "{s}");
    let f = row(&html, &format!("run-{}", failed.id));
    assert!(f.contains("Cairn failed") && f.contains("server_error: 503") && f.contains("full text"), "{f}");
    let p = row(&html, &format!("run-{}", published.id));
    assert!(p.contains(r#"href="https://cairn.example/a/xyz""#), "{p}");
    // The list's "last send" says the same.
    let list = w.list(&[(d.clone(), runs)], None);
    let cells = row(&list, &format!("digest-{}", d.id));
    assert!(cells.contains("skipped: late") && cells.contains("missed by an hour or more"), "{cells}");
    assert!(runs_table(&[], &d.schedule, now()).into_string().contains("Not sent yet"));
}

#[test]
fn an_artifact_that_is_not_a_web_address_is_never_a_link() {
    assert!(artifact("https://cairn.example/a/1").into_string().contains("href="));
    let evil = artifact("javascript:alert(1)").into_string();
    assert!(!evil.contains("href") && evil.contains("<code>javascript:alert(1)</code>"), "{evil}");
}

fn report(unheard: Measured<Vec<crate::digests::rules::report::UnheardLine>>) -> Report {
    let key = QueueKey { endpoint: "ci-bot".into(), queue: "builds".into() };
    Report {
        since: now() - Duration::days(1),
        until: now(),
        pending: Measured::Ok(vec![PendingLine { key: key.clone(), pending: 3, oldest_pending_seconds: 600 }]),
        claimed: Measured::Ok(vec![]),
        dead: Measured::Ok(vec![DeadLine { key, dead_letters: 0, first: vec![] }]),
        quarantined: Measured::Ok(vec![]),
        unheard,
        clocked_out: Measured::Ok(vec![]),
        deferred: Measured::Ok(vec![]),
        undeliverable: Measured::Ok(vec![]),
        unbound: Measured::Ok(vec![]),
    }
}

fn composed(d: &DigestRow, report: Report) -> Composed {
    let heading = Heading {
        name: &d.name,
        when: "Mon 09:00 Europe/Berlin",
        zone: chrono_tz::Europe::Berlin,
        base_url: "https://sb.example",
        age_threshold_seconds: 3600,
    };
    let quiet = report.is_quiet(3600);
    Composed {
        title: render::title(&report, &heading),
        body: render::body(&report, &heading),
        when: "Mon 09:00 Europe/Berlin".into(),
        quiet,
        report,
    }
}

#[test]
fn an_unavailable_section_in_the_preview_reads_unavailable_and_never_0() {
    let w = World::new();
    let d = digest(w.scopes.mine, "mine", "TZ=Europe/Berlin Mon 09:00", now() + Duration::hours(5), &[&w.sinks[2]]);
    let c = composed(&d, report(Measured::Unavailable("statement timeout".into())));
    let html = preview_page(&PreviewPage { digest: &d, owner: "you", composed: &c, now: now() }).into_string();
    let unheard = row(&html, "section-unheard_doorbells");
    assert!(unheard.contains("unavailable: statement timeout") && unheard.contains("sb-chip-dead"), "{unheard}");
    assert!(!unheard.contains('0'), "no figure for what was not measured: {unheard}");
    let dead = row(&html, "section-dead_letters");
    assert!(dead.contains("0 dead letters") && dead.contains(">ok<"), "a measured 0 reads 0: {dead}");
    assert!(!dead.contains("unavailable"), "{dead}");
    assert!(row(&html, "section-pending").contains("3 pending on 1 queue, oldest 10 min"), "{html}");
    assert!(html.contains("1 section could not be measured, so it is not quiet"), "{html}");
    // The title and the text, as the sinks would get them, in a <pre>.
    assert!(html.contains(&format!("<pre>{}</pre>", maud::html! { (c.title) }.into_string())), "{html}");
    assert!(
        html.contains("<pre>Since ") && html.contains("Unheard doorbells: unavailable: statement timeout"),
        "{html}"
    );
    assert!(html.contains("Nothing was sent and nothing was recorded"), "{html}");
}

#[test]
fn a_quiet_preview_says_whether_it_would_be_skipped() {
    let w = World::new();
    let mut d = digest(w.scopes.mine, "mine", "TZ=UTC daily 09:00", now() + Duration::hours(6), &[&w.sinks[2]]);
    let mut r = report(Measured::Ok(vec![]));
    r.pending = Measured::Ok(vec![]);
    let c = composed(&d, r);
    assert!(c.quiet);
    let page =
        |d: &DigestRow| preview_page(&PreviewPage { digest: d, owner: "you", composed: &c, now: now() }).into_string();
    assert!(page(&d).contains("It would be skipped."));
    d.skip_when_quiet = false;
    assert!(page(&d).contains("It would be sent anyway"));
    assert!(row(&page(&d), "section-pending").contains("0 pending"));
}

#[test]
fn the_digest_page_has_the_edit_form_filled_in_for_admins_only() {
    let w = World::new();
    let mut d = digest(
        w.scopes.ops,
        "ops-morning",
        "TZ=Europe/Berlin Mon-Fri 09:00",
        now() + Duration::hours(5),
        &[&w.sinks[0]],
    );
    d.queues = vec!["builds".into()];
    d.cairn_connection_id = Some(w.connections[0].id);
    let runs = vec![run("skipped_late", now() - Duration::hours(2))];
    let admin = w.detail(&d, &runs, true, Some("invalid_argument: schedule: hour 25 out of range"));
    assert!(admin.contains(&format!(r#"action="/digests/{}/update""#, d.id)), "{admin}");
    assert!(admin.contains(r#"value="ops-morning""#) && admin.contains(r#"value="builds""#), "{admin}");
    assert!(admin.contains(&format!(r#"value="{}" checked"#, w.sinks[0].id)), "its sink is ticked: {admin}");
    assert!(!admin.contains(&w.sinks[2].id.to_string()), "only its own scope's sinks are offered: {admin}");
    assert!(admin.contains(&format!(r#"<option value="{}" selected"#, w.connections[0].id)), "{admin}");
    assert!(admin.contains("Refused, nothing changed: invalid_argument: schedule: hour 25 out of range"));
    assert!(admin.contains(&format!(r#"action="/digests/{}/delete""#, d.id)) && admin.contains("skipped: late"));
    assert!(admin.contains(&format!(r#"href="/digests/{}/preview""#, d.id)));
    let member = w.detail(&d, &runs, false, None);
    assert!(!member.contains("/update") && !member.contains("/delete") && member.contains("Only an admin"), "{member}");
    assert!(member.contains(&format!(r#"href="/digests/{}/preview""#, d.id)), "{member}");
}

#[test]
fn no_secret_or_token_ever_appears() {
    let w = World::new();
    let mut d =
        digest(w.scopes.ops, "ops-morning", "TZ=Europe/Berlin Mon 09:00", now() + Duration::hours(5), &[&w.sinks[0]]);
    d.cairn_connection_id = Some(w.connections[0].id);
    let mut r = run("sent", now() - Duration::days(1));
    r.artifact_url = Some("https://cairn.example/a/1".into());
    let listed = [(d.clone(), vec![r.clone()])];
    let c = composed(&d, report(Measured::Ok(vec![])));
    let pages = [
        w.list(&listed, None),
        w.detail(&d, &[r], true, None),
        preview_page(&PreviewPage { digest: &d, owner: "team:ops", composed: &c, now: now() }).into_string(),
    ];
    for html in &pages {
        for secret in [SINK_TOKEN, CAIRN_SECRET, "session-token-never-shown", "gotify.example.com", "cairn.example/?"] {
            assert!(!html.contains(secret), "{secret} leaked: {html}");
        }
    }
}

#[test]
fn the_form_reads_ticked_boxes_and_checks_its_own_shapes() {
    let pairs = |p: &[(&str, &str)]| p.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect::<Vec<_>>();
    let (a, b) = (SinkId::new(), SinkId::new());
    let form = DigestForm::from_pairs(&pairs(&[
        ("csrf_token", "x"),
        ("name", "morning"),
        ("schedule", "TZ=Europe/Berlin Mon-Fri 09:00,17:00"),
        ("queues", " builds, ,deploys "),
        ("sink_ids", &a.to_string()),
        ("sink_ids", &b.to_string()),
        ("age_threshold_seconds", "600"),
        ("cairn_connection_id", ""),
        ("owner", "team:ops"),
    ]));
    assert!(!form.skip_when_quiet, "an unticked box sends nothing");
    let input = form.input().unwrap();
    assert_eq!(input.sink_ids, vec![a, b]);
    assert_eq!(input.queues, vec!["builds".to_owned(), "deploys".to_owned()]);
    assert_eq!((input.skip_when_quiet, input.age_threshold_seconds), (Some(false), Some(600)));
    assert_eq!((input.cairn_connection_id, input.cairn_ttl_seconds), (None, None));
    assert_eq!(input.owner.as_deref(), Some("team:ops"));
    assert!(DigestForm::from_pairs(&pairs(&[("skip_when_quiet", "on")])).skip_when_quiet);
    for bad in [("age_threshold_seconds", "an hour"), ("sink_ids", "sk_nope"), ("cairn_connection_id", "nope")] {
        assert!(DigestForm::from_pairs(&pairs(&[bad])).input().is_err(), "{bad:?}");
    }
    // The edit form round-trips what is stored.
    let scopes = Scopes::new();
    let s = sink(scopes.mine, "mine");
    let mut d = digest(scopes.mine, "mine", "TZ=Europe/Berlin Mon 09:00", now(), &[&s]);
    d.queues = vec!["builds".into(), "deploys".into()];
    d.cairn_connection_id = Some(ConnectionId::new());
    let back = DigestForm::from_row(&d).input().unwrap();
    assert_eq!((back.schedule, back.queues, back.sink_ids), (d.schedule.clone(), d.queues.clone(), d.sink_ids.clone()));
    assert_eq!((back.cairn_connection_id, back.cairn_ttl_seconds), (d.cairn_connection_id, Some(604_800)));
    assert_eq!((back.skip_when_quiet, back.age_threshold_seconds), (Some(true), Some(3600)));
}
