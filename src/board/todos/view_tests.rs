use chrono::Duration;

use super::*;
use crate::board::todos::fixtures::{counts, dead_letter, listing, now};

const TOKEN: &str = "csrf-token-value";

fn view<'a>(pill: Pill, counts: &'a PillCounts, rows: PillRows<'a>) -> TodosView<'a> {
    TodosView { pill, counts, search: "", rows, limit: 100, now: now(), chart: None, matching: None }
}

/// Every `<form method="post">` carries the token, and as many tokens as forms.
fn assert_csrf_on_every_post(html: &str) {
    let posts = html.matches("method=\"post\"").count();
    let tokens = html.matches(&format!("name=\"{CSRF_FIELD}\" value=\"{TOKEN}\"")).count();
    assert_eq!(posts, tokens, "{html}");
}

#[test]
fn pills_show_every_count_link_with_the_search_and_mark_the_current_one() {
    let c = counts();
    let mut v = view(Pill::Dead, &c, PillRows::Dead(&[]));
    v.search = "deploy";
    let html = todos_view(&v, TOKEN).into_string();
    for (label, n) in [("All", "10 000+"), ("Pending", "1 234"), ("Claimed", "7"), ("Done", "8 000"), ("Failed", "3")] {
        assert!(html.contains(&format!("{label} <span class=\"sb-count\">{n}</span>")), "{label}: {html}");
    }
    assert!(html.contains("href=\"/todos?filter=failed&amp;q=deploy\""));
    assert_eq!(html.matches("aria-current=\"page\"").count(), 1);
    assert!(html.contains("aria-current=\"page\">Dead <span class=\"sb-count\">42</span>"), "{html}");
}

#[test]
fn the_pills_say_the_phase_words_the_api_answers_in_phase_with_their_meaning() {
    use crate::domain::vocabulary::Phase;
    let c = counts();
    let html = todos_view(&view(Pill::All, &c, PillRows::Dead(&[])), TOKEN).into_string();
    // SPEC 9's names, in the one place they are kept, and the API's `phase` values.
    let words: Vec<(&str, &str)> = Phase::ALL.iter().map(|p| (p.as_str(), p.label())).collect();
    assert_eq!(
        words,
        [("pending", "Pending"), ("claimed", "Claimed"), ("done", "Done"), ("failed", "Failed"), ("dead", "Dead")]
    );
    for p in Phase::ALL {
        let pill: Pill = p.as_str().parse().unwrap();
        assert_eq!(pill.label(), p.label());
        let shown = format!("href=\"/todos?filter={}\" title=\"{}\">{} <span", p.as_str(), p.meaning(), p.label());
        assert!(html.contains(&shown), "{shown}: {html}");
    }
    assert!(html.contains("title=\"a retry is scheduled\">Failed <span"), "{html}");
    assert!(html.contains("title=\"no retry left (a dead letter)\">Dead <span"), "{html}");
}

#[test]
fn a_dead_row_shows_queue_endpoint_reason_attempts_summary_and_when_it_died() {
    let c = counts();
    let rows = [dead_letter("Build main", Some("exit status 1 in step 3"))];
    let html = todos_view(&view(Pill::Dead, &c, PillRows::Dead(&rows)), TOKEN).into_string();
    let d = &rows[0];
    assert!(html.contains("<code>builds</code>"));
    assert!(html.contains(">ci-runner<"));
    assert!(html.contains("attempts exhausted"));
    assert!(html.contains("title=\"5 attempts in all; cap 5\">5<"), "{html}");
    assert!(html.contains("exit status 1 in step 3"));
    assert!(html.contains("datetime=\"2026-11-30T02:55:00Z\""));
    assert!(html.contains(">5 min ago<"));
    assert!(html.contains(&format!("href=\"/todos/{}\"", d.id)));
    assert!(html.contains(&format!("action=\"/todos/{}/retry\"", d.id)));
    assert_csrf_on_every_post(&html);
}

#[test]
fn what_senders_and_agents_wrote_is_escaped() {
    let c = counts();
    let mut row = dead_letter("<img src=x onerror=alert(1)>", Some("<script>alert(2)</script>"));
    row.queue = "q\"><b>".into();
    row.endpoint = "<i>ep</i>".into();
    let rows = [row];
    let mut v = view(Pill::Dead, &c, PillRows::Dead(&rows));
    v.search = "\"><script>alert(3)</script>";
    v.matching = Some(PillCount::Exact(1));
    let html = todos_view(&v, TOKEN).into_string();
    for raw in ["<img", "<script>", "<b>", "<i>ep", "value=\"\">"] {
        assert!(!html.contains(raw), "{raw} unescaped in {html}");
    }
    assert!(html.contains("&lt;script&gt;alert(2)&lt;/script&gt;"));
}

#[test]
fn a_long_summary_is_shortened_in_the_list() {
    let c = counts();
    let long = "x".repeat(500);
    let rows = [dead_letter("t", Some(&long))];
    let html = todos_view(&view(Pill::Dead, &c, PillRows::Dead(&rows)), TOKEN).into_string();
    assert!(html.contains(&format!("{}…", "x".repeat(SUMMARY_CHARS))));
    assert!(!html.contains(&"x".repeat(SUMMARY_CHARS + 1)));
}

#[test]
fn a_revoked_endpoints_dead_letter_offers_no_retry_and_one_without_an_attempt_says_so() {
    let c = counts();
    let mut row = dead_letter("stranded", None);
    row.reason = DeadReason::EndpointRevoked;
    row.final_seq = None;
    let rows = [row];
    let html = todos_view(&view(Pill::Dead, &c, PillRows::Dead(&rows)), TOKEN).into_string();
    assert!(!html.contains("/retry\""), "{html}");
    assert!(html.contains("endpoint revoked"));
    assert!(html.contains("no attempt was open"));
}

#[test]
fn bulk_retry_is_offered_on_the_dead_view_with_its_count_and_search() {
    let c = counts();
    let rows = [dead_letter("a", None)];
    let mut v = view(Pill::Dead, &c, PillRows::Dead(&rows));
    v.search = "deploys";
    v.matching = Some(PillCount::Exact(12));
    let html = todos_view(&v, TOKEN).into_string();
    assert!(html.contains("Retry the 12 matching “deploys”…</button>"), "{html}");
    assert!(html.contains(&format!("action=\"{}\"", paths::BULK_RETRY)));
    assert!(html.contains("<input type=\"hidden\" name=\"q\" value=\"deploys\">"));
    assert_csrf_on_every_post(&html);
}

#[test]
fn an_empty_dead_view_says_nothing_is_waiting_and_offers_no_bulk_retry() {
    let c = counts();
    let mut v = view(Pill::Dead, &c, PillRows::Dead(&[]));
    v.matching = Some(PillCount::Exact(0));
    let html = todos_view(&v, TOKEN).into_string();
    assert!(html.contains("No dead letters. Nothing is waiting on you."));
    assert!(!html.contains("sb-bulk"));
    assert!(!html.contains(paths::BULK_RETRY));
    v.search = "nope";
    assert!(todos_view(&v, TOKEN).into_string().contains("No dead letters match “nope”."));
}

#[test]
fn the_chart_shows_on_the_dead_pill_only() {
    use crate::store::board::{DeadLetterDay, DeadLetterDays};
    let c = counts();
    let first_day = now().date_naive() - Duration::days(13);
    let chart = DeadLetterDays {
        first_day,
        rows: vec![DeadLetterDay { day: first_day, queue: Some("builds".into()), count: 2 }],
    };
    let mut v = view(Pill::Dead, &c, PillRows::Dead(&[]));
    v.chart = Some(&chart);
    assert!(todos_view(&v, TOKEN).into_string().contains("<svg"));
    let rows = [listing("t", TodoState::Pending)];
    let mut v = view(Pill::Pending, &c, PillRows::Todos(&rows));
    v.chart = Some(&chart);
    assert!(!todos_view(&v, TOKEN).into_string().contains("<svg"));
}

#[test]
fn other_pills_say_where_each_todo_stands() {
    let c = counts();
    let claimed = listing("held", TodoState::Claimed);
    let mut retrying = listing("again", TodoState::Failed);
    retrying.next_retry_at = Some(now() + Duration::seconds(30));
    let mut dead = listing("gone", TodoState::Failed);
    dead.dead_reason = Some(DeadReason::LeaseExpired);
    dead.dead_lettered_at = Some(now() - Duration::hours(3));
    let rows = [claimed, retrying, dead];
    let html = todos_view(&view(Pill::All, &c, PillRows::Todos(&rows)), TOKEN).into_string();
    assert!(html.contains("lease ends in 4 min"));
    assert!(html.contains("retry in 30 s"));
    assert!(html.contains("dead (lease expired), "));
    assert!(html.contains(">3 h ago<"));
    assert!(html.contains("<tr class=\"sb-dead-row\">"));
    assert!(!html.contains("method=\"post\""), "the other pills act from the detail page");
}

#[test]
fn a_full_page_says_so_and_offers_the_longest_list() {
    let c = counts();
    let rows: Vec<TodoListing> = (0..3).map(|i| listing(&format!("t{i}"), TodoState::Done)).collect();
    let mut v = view(Pill::Done, &c, PillRows::Todos(&rows));
    v.limit = 3;
    let html = todos_view(&v, TOKEN).into_string();
    assert!(html.contains("Showing the newest 3."));
    assert!(html.contains("href=\"/todos?filter=done&amp;limit=200\""));
    v.limit = 4;
    assert!(!todos_view(&v, TOKEN).into_string().contains("Showing the newest"));
}

#[test]
fn notices_report_single_and_bulk_retries_and_refusals_as_plain_text() {
    use crate::board::respond::Tone;
    let id = TodoId::new();
    let single = TodosNotice::Retried(id).flash();
    assert_eq!(single.tone, Tone::Done);
    assert_eq!(single.text, format!("Todo {id} is back in its queue with its attempt counter reset."));
    let bulk = TodosNotice::BulkRetried(BulkRetried { retried: 12, still_dead: PillCount::Exact(2) }).flash();
    assert_eq!(bulk.tone, Tone::Warn, "some stayed dead: look closer");
    assert!(bulk.text.starts_with("12 dead letters went back"), "{}", bulk.text);
    assert!(bulk.text.contains(" 2 still match and stay dead"));
    let all = TodosNotice::BulkRetried(BulkRetried { retried: 3, still_dead: PillCount::Exact(0) }).flash();
    assert_eq!(
        (all.tone, all.text.as_str()),
        (Tone::Done, "3 dead letters went back to their queues, attempt counters reset.")
    );
    let none = TodosNotice::BulkRetried(BulkRetried { retried: 0, still_dead: PillCount::Exact(0) }).flash();
    assert_eq!((none.tone, none.text.as_str()), (Tone::Warn, "No dead letter went back."));
    let refused = TodosNotice::Refused("the todo's endpoint is <revoked>".into()).flash();
    assert_eq!(refused.text, "Not done: the todo's endpoint is <revoked>", "escaped by the layout, not here");
}

#[test]
fn a_refused_query_explains_itself_and_links_every_filter() {
    let html = bad_query("There is no “<zombie>” filter.").into_string();
    assert!(html.contains("role=\"alert\">There is no “&lt;zombie&gt;” filter.</p>"), "{html}");
    for pill in Pill::ALL {
        assert!(html.contains(&format!("href=\"/todos?filter={}\"", pill.as_str())), "{pill}");
    }
}

#[test]
fn the_search_box_keeps_the_pill_and_explains_its_reach() {
    let c = counts();
    let rows = [listing("t", TodoState::Pending)];
    let mut v = view(Pill::Pending, &c, PillRows::Todos(&rows));
    v.search = "deploy";
    let html = todos_view(&v, TOKEN).into_string();
    assert!(html.contains("<input type=\"hidden\" name=\"filter\" value=\"pending\">"));
    assert!(html.contains("value=\"deploy\""));
    assert!(html.contains("newest 5 000"));
    assert!(html.contains("href=\"/todos?filter=pending\">Clear</a>"));
}
