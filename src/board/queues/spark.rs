//! Small inline SVG bar charts of what finished (no script, no image request, like the
//! Dead chart): a sparkline of the last hour per minute on the overview, and the last
//! day per hour on a queue's page. Completions are drawn in one colour, failed attempts
//! stacked on them in another, dead letters on top; every chart has a text equivalent
//! in its `aria-label` and `<title>`.

use maud::{Markup, html};

use crate::queues::rules::series::Slot;

/// Completions (Okabe–Ito bluish green, as on the Dead chart).
const DONE: &str = "#009E73";
/// Failed attempts (orange).
const FAILED: &str = "#E69F00";
/// Dead letters (vermillion, the Dead chart's first colour).
const DEAD: &str = "#D55E00";

/// What the chart sums up, for its label: `"42 done, 3 failed attempts, 1 dead letter"`.
pub fn summary(slots: &[Slot]) -> String {
    let mut t = Slot::default();
    for s in slots {
        t.add(*s);
    }
    let plural = |n: i64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{}, {}, {}",
        plural(t.done, "done", "done"),
        plural(t.failed_attempts, "failed attempt", "failed attempts"),
        plural(t.dead, "dead letter", "dead letters")
    )
}

/// A bar chart of `slots`, `bar` viewBox units per slot and `height` tall, labelled
/// `label` (what the span is, e.g. "last hour, per minute").
pub fn bars(slots: &[Slot], bar: f64, height: f64, label: &str, class: &str) -> Markup {
    let top = slots.iter().map(|s| s.done + s.failed_attempts + s.dead).max().unwrap_or(0).max(1) as f64;
    let width = bar * slots.len() as f64;
    let said = format!("{label}: {}", summary(slots));
    let scale = |n: i64| n as f64 / top * height;
    html! {
        svg class=(class) viewBox=(format!("0 0 {width} {height}")) preserveAspectRatio="none"
            role="img" aria-label=(said) {
            title { (said) }
            @for (i, s) in slots.iter().enumerate() {
                @let x = i as f64 * bar;
                @let w = (bar * 0.8).max(0.5);
                @let d = scale(s.done);
                @let f = scale(s.failed_attempts);
                @let k = scale(s.dead);
                @if s.done > 0 {
                    rect x=(x) y=(height - d) width=(w) height=(d) fill=(DONE) {}
                }
                @if s.failed_attempts > 0 {
                    rect x=(x) y=(height - d - f) width=(w) height=(f) fill=(FAILED) {}
                }
                @if s.dead > 0 {
                    rect x=(x) y=(height - d - f - k) width=(w) height=(k) fill=(DEAD) {}
                }
            }
        }
    }
}

/// The legend of [`bars`].
pub fn legend() -> Markup {
    html! {
        p.sb-spark-legend.sb-muted {
            span.sb-key style=(format!("background:{DONE}")) {} " done "
            span.sb-key style=(format!("background:{FAILED}")) {} " failed attempts "
            span.sb-key style=(format!("background:{DEAD}")) {} " dead letters"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_sums_the_whole_span() {
        let slots = [Slot { done: 2, failed_attempts: 1, dead: 0 }, Slot { done: 1, failed_attempts: 0, dead: 1 }];
        assert_eq!(summary(&slots), "3 done, 1 failed attempt, 1 dead letter");
    }

    #[test]
    fn an_empty_minute_draws_no_bar_and_a_busy_one_reaches_the_top() {
        let slots = [Slot::default(), Slot { done: 4, failed_attempts: 0, dead: 0 }];
        let svg = bars(&slots, 2.0, 24.0, "last hour", "sb-spark").into_string();
        assert_eq!(svg.matches("<rect").count(), 1, "{svg}");
        assert!(svg.contains("y=\"0\""), "the busiest slot fills the height: {svg}");
        assert!(svg.contains("aria-label=\"last hour: 4 done, 0 failed attempts, 0 dead letters\""), "{svg}");
    }
}
