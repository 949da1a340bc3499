//! The Endpoints pages' bodies, rendered from plain data.

use chrono::{Duration, TimeZone, Utc};

use super::detail::{EndpointPage, endpoint_page, revoke_page};
use super::form::VendForm;
use super::view::{endpoints_page, vended_page};
use crate::board::csrf::CsrfToken;
use crate::board::owners::{Owner, Owners};
use crate::db::models::EndpointRow;
use crate::domain::grants::Verb;
use crate::domain::ids::{EndpointId, ScopeId};
use crate::domain::pills::PillCount;
use crate::domain::todo_state::{EndpointState, Presence};
use crate::store::held_work::HeldWork;

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 3, 0, 0).unwrap()
}

fn owners() -> (Owners, ScopeId, ScopeId) {
    let (mine, team) = (ScopeId::new(), ScopeId::new());
    let owners = Owners(vec![
        Owner { scope: mine, reference: "ada@example.com".into(), personal: true, admin: true },
        Owner { scope: team, reference: "team:<b>ops</b>".into(), personal: false, admin: true },
    ]);
    (owners, mine, team)
}

fn endpoint(scope: ScopeId, slug: &str) -> EndpointRow {
    EndpointRow {
        id: EndpointId::new(),
        scope_id: scope,
        slug: slug.into(),
        token_prefix: "sbk_abcd".into(),
        grants: vec!["claim".into(), "notify_owner".into()],
        state: EndpointState::Active,
        revoked_at: None,
        expires_at: None,
        default_lease_seconds: Some(300),
        presence: Presence::In,
        presence_changed_at: Some(now() - Duration::minutes(5)),
        created_at: now() - Duration::hours(3),
    }
}

#[test]
fn the_list_shows_each_endpoint_with_its_owner_grants_state_and_links_to_its_page() {
    let (owners, mine, team) = owners();
    let a = endpoint(mine, "builder");
    let mut b = endpoint(team, "deployer");
    b.state = EndpointState::Revoked;
    b.revoked_at = Some(now() - Duration::minutes(2));
    let html =
        endpoints_page(&[a.clone(), b.clone()], &owners, &VendForm::default(), None, &CsrfToken::random(), now())
            .into_string();
    assert!(html.contains(&format!(r#"href="/endpoints/{}""#, a.id)), "{html}");
    assert!(html.contains(">you<"), "own scope reads 'you': {html}");
    assert!(html.contains("team:&lt;b&gt;ops&lt;/b&gt;") && !html.contains("<b>ops"), "team names are text: {html}");
    assert!(html.contains(">revoked<") && html.contains(">active<") && html.contains("2 min ago"));
    assert!(html.contains(r#"class="sb-chip sb-chip-sensitive""#), "notify_owner is marked as reaching people");
}

#[test]
fn the_vend_form_posts_with_the_csrf_token_offers_administered_owners_and_ticks_the_drain_family() {
    let (mut owners, _, _) = owners();
    owners.0.push(Owner { scope: ScopeId::new(), reference: "team:readers".into(), personal: false, admin: false });
    let csrf = CsrfToken::random();
    let html = endpoints_page(&[], &owners, &VendForm::default(), None, &csrf, now()).into_string();
    assert!(html.contains(r#"method="post" action="/endpoints""#), "{html}");
    assert!(html.contains(csrf.as_str()));
    assert!(html.contains(r#"value="ada@example.com""#) && html.contains(r#"value="team:&lt;b&gt;ops&lt;/b&gt;""#));
    assert!(!html.contains("team:readers"), "a team the human only belongs to cannot own a new endpoint");
    assert!(html.contains(r#"name="grants" value="claim_next" checked"#), "{html}");
    assert!(!html.contains(r#"name="grants" value="notify_owner" checked"#));
    assert!(html.contains("No endpoints yet"));
}

#[test]
fn a_refused_vend_shows_why_and_keeps_what_was_typed_as_text() {
    let (owners, _, _) = owners();
    let form = VendForm::from_pairs(&[
        ("slug".into(), "<script>x</script>".into()),
        ("owner".into(), "team:<b>ops</b>".into()),
        ("grants".into(), "fail".into()),
        ("csrf_token".into(), "ignored".into()),
    ]);
    assert_eq!(form.grants, vec!["fail".to_owned()]);
    let html =
        endpoints_page(&[], &owners, &form, Some("slug: must be <1–63>"), &CsrfToken::random(), now()).into_string();
    assert!(html.contains(r#"role="alert""#) && html.contains("slug: must be &lt;1–63&gt;"), "{html}");
    assert!(html.contains(r#"value="&lt;script&gt;x&lt;/script&gt;""#) && !html.contains("<script>"));
    assert!(html.contains(r#"value="team:&lt;b&gt;ops&lt;/b&gt;" selected"#), "{html}");
    assert!(html.contains(r#"value="fail" checked"#) && !html.contains(r#"value="claim" checked"#));
}

#[test]
fn the_form_reads_into_the_api_request_and_refuses_unknown_grants_and_non_numbers() {
    let pairs = |lease: &str, grant: &str| {
        vec![
            ("slug".to_owned(), " builder ".to_owned()),
            ("owner".to_owned(), "".to_owned()),
            ("grants".to_owned(), grant.to_owned()),
            ("default_lease_seconds".to_owned(), lease.to_owned()),
        ]
    };
    let body = VendForm::from_pairs(&pairs("120", "claim")).body().unwrap();
    assert_eq!((body.slug.as_str(), body.owner, body.default_lease_seconds), ("builder", None, Some(120)));
    assert_eq!(body.grants, Some(vec![Verb::Claim]));
    assert_eq!(VendForm::from_pairs(&pairs("", "claim")).body().unwrap().default_lease_seconds, None);
    assert!(VendForm::from_pairs(&pairs("2 min", "claim")).body().is_err());
    assert!(VendForm::from_pairs(&pairs("", "root")).body().is_err());
}

#[test]
fn the_vended_page_shows_the_token_once_with_a_warning_to_copy_it() {
    let (owners, mine, _) = owners();
    let e = endpoint(mine, "builder");
    let html = vended_page(&e, "sbk_secret_token_value", &owners).into_string();
    assert!(html.contains(r#"class="sb-token" id="sb-token">sbk_secret_token_value<"#), "{html}");
    assert!(html.contains("Copy the token now") && html.contains("shown on this page only"));
    assert!(html.contains(&format!(r#"href="/endpoints/{}""#, e.id)));
}

#[test]
fn the_endpoint_page_offers_revoke_only_to_an_admin_of_an_active_endpoint() {
    let (_, mine, _) = owners();
    let e = endpoint(mine, "builder");
    let page = |e: &EndpointRow, may_admin| {
        endpoint_page(&EndpointPage { endpoint: e, owner: "you", may_admin, webhooks: &[], hooks: &[], now: now() })
            .into_string()
    };
    let html = page(&e, true);
    assert!(html.contains(&format!(r#"href="/endpoints/{}/revoke""#, e.id)), "{html}");
    assert!(html.contains("sbk_abcd…") && html.contains("300 s") && html.contains("No webhook"));
    assert!(!page(&e, false).contains("/revoke"));
    let mut revoked = e.clone();
    revoked.state = EndpointState::Revoked;
    revoked.revoked_at = Some(now());
    assert!(!page(&revoked, true).contains("/revoke"));
}

#[test]
fn the_revoke_confirmation_warns_that_held_work_is_dead_lettered_silently_and_counts_it() {
    let (_, mine, _) = owners();
    let e = endpoint(mine, "builder");
    let csrf = CsrfToken::random();
    let held = HeldWork { pending: PillCount::Exact(3), claimed: PillCount::Exact(1), retrying: PillCount::Exact(0) };
    let html = revoke_page(&e, &held, &csrf).into_string();
    assert!(html.contains("silently dead-letters"), "{html}");
    assert!(html.contains("<strong>3</strong> pending") && html.contains("<strong>1</strong> claimed"));
    assert!(html.contains("Revoke and dead-letter 4"));
    assert!(html.contains(&format!(r#"method="post" action="/endpoints/{}/revoke""#, e.id)));
    assert!(html.contains(csrf.as_str()));

    let capped = HeldWork { pending: PillCount::AtLeast(10_000), ..held };
    assert!(revoke_page(&e, &capped, &csrf).into_string().contains("10 001+"));
    let nothing =
        HeldWork { pending: PillCount::Exact(0), claimed: PillCount::Exact(0), retrying: PillCount::Exact(0) };
    assert!(revoke_page(&e, &nothing, &csrf).into_string().contains("It holds nothing right now"));

    let mut revoked = e.clone();
    revoked.state = EndpointState::Revoked;
    let html = revoke_page(&revoked, &held, &csrf).into_string();
    assert!(html.contains("already revoked") && !html.contains("<form"), "{html}");
}

#[test]
fn the_endpoint_page_flags_notifications_and_notify_owner_as_sensitive_and_says_why() {
    let (_, mine, _) = owners();
    let mut e = endpoint(mine, "pager");
    e.grants = vec!["claim".into(), "notifications".into(), "notify_owner".into()];
    let html = endpoint_page(&EndpointPage {
        endpoint: &e,
        owner: "you",
        may_admin: true,
        webhooks: &[],
        hooks: &[],
        now: now(),
    })
    .into_string();
    assert!(html.contains("Sensitive grants."), "{html}");
    assert!(
        html.contains("<code>notifications</code>: its holder can redirect or silence the owner's alerts."),
        "{html}"
    );
    assert!(html.contains("<code>notify_owner</code>: its holder can page a person"), "{html}");
    assert_eq!(html.matches(r#"class="sb-chip sb-chip-sensitive""#).count(), 2, "two chips marked: {html}");
    assert!(html.contains(r#"<span class="sb-chip">claim</span>"#), "claim is not marked: {html}");
    e.grants = vec!["claim".into()];
    let plain = endpoint_page(&EndpointPage {
        endpoint: &e,
        owner: "you",
        may_admin: true,
        webhooks: &[],
        hooks: &[],
        now: now(),
    })
    .into_string();
    assert!(!plain.contains("Sensitive grants"), "no warning without a sensitive grant");
}

#[test]
fn the_vend_form_says_why_each_sensitive_grant_is_sensitive_and_the_token_page_repeats_it() {
    let (owners, mine, _) = owners();
    let html = endpoints_page(&[], &owners, &VendForm::default(), None, &CsrfToken::random(), now()).into_string();
    for why in ["redirect or silence the owner's alerts", "page a person", "doorbells to any URL"] {
        assert!(html.contains(why), "{why}: {html}");
    }
    let mut e = endpoint(mine, "pager");
    e.grants = vec!["notifications".into()];
    let vended = vended_page(&e, "sbk_x", &owners).into_string();
    assert!(vended.contains("Sensitive grants.") && vended.contains("redirect or silence"), "{vended}");
}

#[test]
fn the_grant_screen_says_which_grants_also_cover_their_batch_form() {
    use crate::domain::waiters::WAIT_SECONDS_RANGE;
    use crate::store::todos::{CLAIM_LIMIT_MAX, CREATE_ITEMS_MAX, FINISH_ITEMS_MAX};
    let (owners, _, _) = owners();
    let html = endpoints_page(&[], &owners, &VendForm::default(), None, &CsrfToken::random(), now()).into_string();
    for hint in [
        format!(
            "claim the oldest pending todo, or up to {CLAIM_LIMIT_MAX} at once, waiting up to {} s for work",
            WAIT_SECONDS_RANGE.1
        ),
        format!("complete a claimed todo, or up to {FINISH_ITEMS_MAX} in one call"),
        format!("fail a claimed todo, or up to {FINISH_ITEMS_MAX} in one call"),
        format!("create todos on the endpoint's queues, up to {CREATE_ITEMS_MAX} in one call"),
    ] {
        assert!(html.contains(&hint), "missing {hint:?} in {html}");
    }
}
