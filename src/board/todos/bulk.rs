//! Bulk retry of the dead letters matching the Dead view's search: a button under the
//! chart that leads to a confirmation page stating how many will move, and that page.
//! Nothing moves before the second, deliberate click (`confirm=yes`).

use chrono::{DateTime, SecondsFormat, Utc};
use maud::{Markup, html};

use super::paths::{self, CONFIRM_FIELD, CONFIRMED, CSRF_FIELD, DIED_BY_FIELD};
use crate::domain::pills::{COUNT_CAP, Pill, PillCount};

/// How many one bulk retry moves at most, for a match count.
fn moved(matching: PillCount) -> u32 {
    match matching {
        PillCount::Exact(n) => n,
        PillCount::AtLeast(_) => COUNT_CAP,
    }
}

fn noun(n: u32) -> &'static str {
    if n == 1 { "dead letter" } else { "dead letters" }
}

/// The Dead view's "Retry all matching…" button: it asks for confirmation first.
pub fn bulk_retry_button(search: &str, matching: PillCount, csrf_token: &str) -> Markup {
    html! {
        form.sb-bulk.sb-actions method="post" action=(paths::BULK_RETRY) {
            input type="hidden" name=(CSRF_FIELD) value=(csrf_token);
            input type="hidden" name="q" value=(search);
            button.sb-btn.sb-btn-danger type="submit" {
                @if search.is_empty() { "Retry all " (matching) " " (noun(moved(matching))) "…" }
                @else { "Retry the " (matching) " matching “" (search) "”…" }
            }
            span.sb-hint { "You will be asked to confirm." }
        }
    }
}

/// The confirmation page's body: what will move (the dead letters matching `search`
/// that died by `counted_at`), and the one button that moves them.
pub fn bulk_confirm(search: &str, matching: PillCount, counted_at: DateTime<Utc>, csrf_token: &str) -> Markup {
    let n = moved(matching);
    let back = paths::list(Pill::Dead, search);
    html! {
        section.sb-todos.sb-confirm-page aria-labelledby="sb-confirm-heading" {
            h1 #sb-confirm-heading { "Retry " (PillCount::Exact(n)) " " (noun(n)) "?" }
            @if n == 0 {
                p.sb-lede {
                    "No dead letter matches"
                    @if !search.is_empty() { " “" (search) "”" }
                    " any more: there is nothing to retry."
                }
                p { a.sb-btn href=(back) { "Back to the dead letters" } }
            } @else {
                p.sb-lede {
                    "This returns " strong.sb-bulk-count { (PillCount::Exact(n)) " " (noun(n)) }
                    @if search.is_empty() { " (every dead letter you can see)" }
                    @else { " matching “" (search) "”" }
                    " to their queues with their attempt counters reset, where agents will claim them again. \
                    Their history stays; nothing is announced."
                }
                @if let PillCount::AtLeast(_) = matching {
                    p { "More than " (PillCount::Exact(COUNT_CAP)) " match: one retry moves the newest "
                        (PillCount::Exact(COUNT_CAP)) "; retry again for the rest." }
                }
                p.sb-hint { "Dead letters of revoked or expired endpoints stay dead, as do those whose idempotency \
                    key a live todo now holds." }
                form.sb-actions method="post" action=(paths::BULK_RETRY) {
                    input type="hidden" name=(CSRF_FIELD) value=(csrf_token);
                    input type="hidden" name="q" value=(search);
                    input type="hidden" name=(CONFIRM_FIELD) value=(CONFIRMED);
                    input type="hidden" name=(DIED_BY_FIELD) value=(counted_at.to_rfc3339_opts(SecondsFormat::Micros, true));
                    button.sb-btn.sb-btn-danger type="submit" { "Yes, retry " (PillCount::Exact(n)) " " (noun(n)) }
                    a.sb-btn.sb-btn-quiet href=(back) { "Cancel" }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "csrf-token-value";

    fn at() -> DateTime<Utc> {
        DateTime::from_timestamp(1_795_993_200, 0).expect("a valid time")
    }

    #[test]
    fn the_button_states_the_count_and_search_and_posts_without_confirming() {
        let html = bulk_retry_button("deploys", PillCount::Exact(12), TOKEN).into_string();
        assert!(html.contains("Retry the 12 matching “deploys”…</button>"), "{html}");
        assert!(html.contains(&format!("action=\"{}\"", paths::BULK_RETRY)));
        assert!(html.contains("<input type=\"hidden\" name=\"q\" value=\"deploys\">"));
        assert!(html.contains(&format!("name=\"csrf_token\" value=\"{TOKEN}\"")));
        assert!(!html.contains("name=\"confirm\""), "the first click only asks");
        let all = bulk_retry_button("", PillCount::AtLeast(COUNT_CAP), TOKEN).into_string();
        assert!(all.contains("Retry all 10 000+ dead letters…"), "{all}");
    }

    #[test]
    fn the_confirmation_states_what_moves_and_confirms_with_one_button() {
        let html = bulk_confirm("deploys", PillCount::Exact(12), at(), TOKEN).into_string();
        assert!(html.contains("<strong class=\"sb-bulk-count\">12 dead letters</strong> matching “deploys”"), "{html}");
        assert!(html.contains("<input type=\"hidden\" name=\"confirm\" value=\"yes\">"));
        assert!(html.contains("name=\"died_by\" value=\"2026-11-29T23:00:00.000000Z\""), "{html}");
        assert!(html.contains("Yes, retry 12 dead letters</button>"));
        assert!(html.contains("href=\"/todos?filter=dead&amp;q=deploys\">Cancel</a>"));
        assert_eq!(html.matches(&format!("value=\"{TOKEN}\"")).count(), 1);
        let capped = bulk_confirm("", PillCount::AtLeast(COUNT_CAP), at(), TOKEN).into_string();
        assert!(capped.contains("Yes, retry 10 000 dead letters</button>"), "one click moves the cap at most");
        assert!(capped.contains("retry again for the rest"));
        let one = bulk_confirm("x", PillCount::Exact(1), at(), TOKEN).into_string();
        assert!(one.contains("Yes, retry 1 dead letter</button>"));
    }

    #[test]
    fn nothing_to_retry_offers_no_button_and_a_search_with_markup_is_text() {
        let html = bulk_confirm("<b>x</b>", PillCount::Exact(0), at(), TOKEN).into_string();
        assert!(!html.contains("method=\"post\""), "{html}");
        assert!(html.contains("nothing to retry"));
        assert!(html.contains("&lt;b&gt;x&lt;/b&gt;") && !html.contains("<b>"));
    }
}
