//! "Dead letters per day per queue, last 14 days": an inline SVG bar chart, drawn by
//! the server (no script, no image request), one stacked bar per UTC day and one
//! colour per queue. Each segment carries a `<title>` (a tooltip on a desk, read out
//! by a screen reader), and the same numbers sit in a table behind "Show as table".

use chrono::{Duration, NaiveDate};
use maud::{Markup, html};

use crate::store::board::{CHART_DAYS, DeadLetterDays};

/// Colours of the busiest queues, in order (Okabe–Ito: distinguishable with the
/// common colour-vision deficiencies, and on paper or a dark screen).
const PALETTE: [&str; 6] = ["#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"];
/// Colour of the other queues, summed.
const OTHER_COLOUR: &str = "#8C8C8C";
/// What the other queues are called.
const OTHER_LABEL: &str = "other queues";

// Drawing area, in viewBox units (the SVG scales to its container's width).
const WIDTH: f64 = 700.0;
const HEIGHT: f64 = 220.0;
/// Width of one digit of a tick label (monospace at 11 units: 0.6 em), and the gap
/// between the label and the plot: the left margin is sized to the widest label, so a
/// chart of single-digit counts does not keep a wide empty margin.
const DIGIT_W: f64 = 6.6;
const TICK_GAP: f64 = 6.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 34.0;

/// One queue's (or the other queues') counts, day by day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    /// The queue; `None` for the other queues.
    pub queue: Option<String>,
    /// Dead letters per day, oldest day first.
    pub per_day: Vec<u64>,
    /// Their sum.
    pub total: u64,
}

impl Series {
    /// The legend's and tooltip's name.
    pub fn label(&self) -> &str {
        self.queue.as_deref().unwrap_or(OTHER_LABEL)
    }
}

/// The chart's numbers, laid out by day and series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartModel {
    /// The days shown, oldest first.
    pub days: Vec<NaiveDate>,
    /// Busiest queue first; the other queues last.
    pub series: Vec<Series>,
    /// The top of the y axis: a round number at least the busiest day's total (and at
    /// least 1).
    pub y_max: u64,
}

impl ChartModel {
    /// Lays out the store's rows. Rows outside the chart's days are ignored.
    pub fn new(data: &DeadLetterDays) -> ChartModel {
        let days: Vec<NaiveDate> = (0..i64::from(CHART_DAYS)).map(|i| data.first_day + Duration::days(i)).collect();
        let mut series: Vec<Series> = Vec::new();
        for row in &data.rows {
            let Some(i) = days.iter().position(|d| *d == row.day) else { continue };
            let at = match series.iter().position(|s| s.queue == row.queue) {
                Some(at) => at,
                None => {
                    series.push(Series { queue: row.queue.clone(), per_day: vec![0; days.len()], total: 0 });
                    series.len() - 1
                }
            };
            let n = u64::try_from(row.count).unwrap_or(0);
            series[at].per_day[i] += n;
            series[at].total += n;
        }
        series.sort_by(|a, b| {
            (a.queue.is_none(), std::cmp::Reverse(a.total), &a.queue).cmp(&(
                b.queue.is_none(),
                std::cmp::Reverse(b.total),
                &b.queue,
            ))
        });
        let busiest = (0..days.len()).map(|i| series.iter().map(|s| s.per_day[i]).sum::<u64>()).max().unwrap_or(0);
        ChartModel { days, series, y_max: nice_ceiling(busiest) }
    }

    /// Every dead letter in the chart.
    pub fn total(&self) -> u64 {
        self.series.iter().map(|s| s.total).sum()
    }

    /// Day `d`'s segments bottom up: (series index, count below it, its count), empty
    /// series left out.
    pub fn stack(&self, d: usize) -> Vec<(usize, u64, u64)> {
        let mut base = 0;
        let mut out = Vec::new();
        for (i, s) in self.series.iter().enumerate() {
            let n = s.per_day.get(d).copied().unwrap_or(0);
            if n > 0 {
                out.push((i, base, n));
                base += n;
            }
        }
        out
    }

    /// The colour of the series at `index`.
    pub fn colour(&self, index: usize) -> &'static str {
        match self.series.get(index) {
            Some(Series { queue: None, .. }) => OTHER_COLOUR,
            _ => PALETTE[index % PALETTE.len()],
        }
    }
}

/// The smallest of 1, 2, 5, 10, 20, 50, … that is at least `n` (1 for 0).
pub fn nice_ceiling(n: u64) -> u64 {
    let mut step = 1u64;
    loop {
        for m in [1, 2, 5] {
            let candidate = step.saturating_mul(m);
            if candidate >= n {
                return candidate;
            }
        }
        step = step.saturating_mul(10);
    }
}

/// A coordinate with one decimal, as SVG wants it.
fn px(v: f64) -> String {
    format!("{v:.1}")
}

/// The chart: a heading, the SVG, a legend, and the numbers as a table.
pub fn dead_letters_chart(data: &DeadLetterDays) -> Markup {
    let model = ChartModel::new(data);
    let heading = format!("Dead letters per day per queue, last {CHART_DAYS} days (UTC)");
    html! {
        figure.sb-chart aria-labelledby="sb-chart-heading" {
            figcaption #sb-chart-heading .sb-chart-heading { (heading) }
            @if model.total() == 0 {
                p.sb-chart-empty { "No dead letters in the last " (CHART_DAYS) " days." }
            } @else {
                (svg(&model, &heading))
                ul.sb-chart-legend {
                    @for (i, s) in model.series.iter().enumerate() {
                        li {
                            span.sb-swatch style=(format!("background:{}", model.colour(i))) aria-hidden="true" {}
                            span.sb-chart-queue { (s.label()) }
                            " "
                            span.sb-chart-total { (s.total) }
                        }
                    }
                }
                (table(&model))
            }
        }
    }
}

/// The left margin: room for the widest tick label (the top of the axis) and the gap,
/// never less than half a day's slot so the first day's label is not clipped.
pub fn left_margin(y_max: u64) -> f64 {
    let digits = y_max.max(1).to_string().len() as f64;
    (TICK_GAP + digits * DIGIT_W + 2.0).max(14.0)
}

/// The bars, the y axis (0, half, top) and the day labels.
fn svg(model: &ChartModel, heading: &str) -> Markup {
    let left = left_margin(model.y_max);
    let plot_w = WIDTH - left - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let slot = plot_w / model.days.len() as f64;
    let bar = slot * 0.7;
    let y = |v: u64| TOP + plot_h - plot_h * v as f64 / model.y_max as f64;
    let ticks = if model.y_max >= 2 { vec![0, model.y_max / 2, model.y_max] } else { vec![0, model.y_max] };
    let summary = format!("{} dead letters in {} days", model.total(), model.days.len());
    html! {
        svg.sb-chart-svg viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" preserveAspectRatio="xMinYMid meet"
            xmlns="http://www.w3.org/2000/svg" {
            title { (heading) ": " (summary) }
            @for t in &ticks {
                line.sb-chart-grid x1=(px(left)) x2=(px(WIDTH - RIGHT)) y1=(px(y(*t))) y2=(px(y(*t)))
                    stroke="currentColor" stroke-opacity="0.2" {}
                text.sb-chart-tick x=(px(left - TICK_GAP)) y=(px(y(*t) + 4.0)) text-anchor="end" font-size="11"
                    fill="currentColor" { (t) }
            }
            @for (d, day) in model.days.iter().enumerate() {
                @let x = left + slot * d as f64 + (slot - bar) / 2.0;
                @for (i, base, n) in model.stack(d) {
                    rect x=(px(x)) y=(px(y(base + n))) width=(px(bar)) height=(px(y(base) - y(base + n)))
                        fill=(model.colour(i)) {
                        title { (model.series[i].label()) ": " (n) " on " (day.format("%Y-%m-%d")) }
                    }
                }
                text.sb-chart-day x=(px(left + slot * d as f64 + slot / 2.0)) y=(px(HEIGHT - BOTTOM + 14.0))
                    text-anchor="middle" font-size="11" fill="currentColor" { (day.format("%d")) }
                @if d == 0 || day.format("%d").to_string() == "01" {
                    text.sb-chart-month x=(px(left + slot * d as f64 + slot / 2.0)) y=(px(HEIGHT - BOTTOM + 28.0))
                        text-anchor="middle" font-size="10" fill="currentColor" { (day.format("%b")) }
                }
            }
        }
    }
}

/// The same numbers as a table, folded away.
fn table(model: &ChartModel) -> Markup {
    html! {
        details.sb-chart-table {
            summary { "Show as table" }
            div.sb-scroll {
                table {
                    thead {
                        tr {
                            th scope="col" { "Day" }
                            @for s in &model.series { th scope="col" { (s.label()) } }
                            th scope="col" { "All" }
                        }
                    }
                    tbody {
                        @for (d, day) in model.days.iter().enumerate() {
                            tr {
                                th scope="row" { (day.format("%Y-%m-%d")) }
                                @for s in &model.series { td { (s.per_day[d]) } }
                                td { (model.series.iter().map(|s| s.per_day[d]).sum::<u64>()) }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::board::DeadLetterDay;

    fn day(n: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, n).unwrap()
    }

    fn row(d: u32, queue: Option<&str>, count: i64) -> DeadLetterDay {
        DeadLetterDay { day: day(d), queue: queue.map(str::to_owned), count }
    }

    fn data(rows: Vec<DeadLetterDay>) -> DeadLetterDays {
        DeadLetterDays { first_day: day(17), rows }
    }

    #[test]
    fn nice_ceilings_are_one_two_or_five_times_a_power_of_ten() {
        let cases = [(0, 1), (1, 1), (2, 2), (3, 5), (5, 5), (6, 10), (11, 20), (21, 50), (51, 100), (999, 1000)];
        for (n, want) in cases {
            assert_eq!(nice_ceiling(n), want, "{n}");
        }
    }

    #[test]
    fn the_model_has_fourteen_days_and_orders_queues_busiest_first_with_the_others_last() {
        let m = ChartModel::new(&data(vec![
            row(17, Some("builds"), 2),
            row(18, None, 9),
            row(18, Some("deploys"), 5),
            row(30, Some("builds"), 4),
            // Outside the chart's days: ignored.
            row(16, Some("builds"), 100),
        ]));
        assert_eq!(m.days.len(), 14);
        assert_eq!(m.days[0], day(17));
        assert_eq!(m.days[13], day(30));
        let labels: Vec<&str> = m.series.iter().map(Series::label).collect();
        assert_eq!(labels, ["builds", "deploys", OTHER_LABEL]);
        assert_eq!(m.series[0].per_day[0], 2);
        assert_eq!(m.series[0].per_day[13], 4);
        assert_eq!(m.total(), 20);
        assert_eq!(m.y_max, 20, "the busiest day (18th) holds 14");
        assert_eq!(m.colour(2), OTHER_COLOUR);
        assert_eq!(m.colour(0), PALETTE[0]);
    }

    #[test]
    fn the_tallest_bar_fills_the_plot_when_it_reaches_the_axis_top() {
        let html = dead_letters_chart(&data(vec![row(20, Some("builds"), 5)])).into_string();
        let plot_h = HEIGHT - TOP - BOTTOM;
        assert!(html.contains(&format!("height=\"{}\"", px(plot_h))), "{html}");
        assert!(html.contains("builds: 5 on 2026-11-20"));
    }

    #[test]
    fn every_segment_stacks_on_the_one_below_it() {
        let html = dead_letters_chart(&data(vec![row(20, Some("a"), 1), row(20, Some("b"), 1)])).into_string();
        // Two segments of half the plot each (y_max 2): one from the baseline, one on top.
        let plot_h = HEIGHT - TOP - BOTTOM;
        assert_eq!(html.matches(&format!("height=\"{}\"", px(plot_h / 2.0))).count(), 2, "{html}");
        assert!(html.contains(&format!("y=\"{}\"", px(TOP))));
        assert!(html.contains(&format!("y=\"{}\"", px(TOP + plot_h / 2.0))));
    }

    #[test]
    fn the_left_margin_is_sized_to_the_tick_labels_not_a_fixed_wide_gutter() {
        // Single-digit counts: the margin holds one digit and the gap, nothing more.
        let html = dead_letters_chart(&data(vec![row(17, Some("builds"), 3)])).into_string();
        let left = left_margin(5);
        assert!(left < 20.0, "{left}");
        assert!(html.contains(&format!("x1=\"{}\"", px(left))), "the grid starts at the margin: {html}");
        assert!(html.contains(&format!("x=\"{}\" y=", px(left - TICK_GAP))), "{html}");
        assert!(html.contains("preserveAspectRatio=\"xMinYMid meet\""), "{html}");
        // Wider labels get more room, in step with their digits.
        assert!(left_margin(1000) >= TICK_GAP + 4.0 * DIGIT_W);
        assert!(left_margin(1000) > left_margin(50) && left_margin(50) > left_margin(5));
    }

    #[test]
    fn queue_names_are_escaped_everywhere_they_appear() {
        let html = dead_letters_chart(&data(vec![row(20, Some("<script>alert(1)</script>"), 3)])).into_string();
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"));
    }

    #[test]
    fn a_quiet_fortnight_says_so_instead_of_drawing_empty_axes() {
        let html = dead_letters_chart(&data(vec![])).into_string();
        assert!(html.contains("No dead letters in the last 14 days."));
        assert!(!html.contains("<svg"));
    }

    #[test]
    fn the_table_repeats_every_number_with_day_totals() {
        let html = dead_letters_chart(&data(vec![row(21, Some("builds"), 3), row(21, None, 4)])).into_string();
        assert!(html.contains("<th scope=\"row\">2026-11-21</th><td>3</td><td>4</td><td>7</td>"), "{html}");
    }
}
