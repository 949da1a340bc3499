//! What the Board's Todos view reads, owner-wide (every scope the signed-in human
//! belongs to): each pill's list and count, and dead letters per day for the chart.
//! The Dead pill's list is [`Store::list_dead_letters`](super::Store::list_dead_letters).
//!
//! Every read is an ordered walk of a partial index per scope (migration 000009), so
//! its cost follows what is shown, not how many todos the table holds.

mod counts;
mod dead_days;
mod listing;

pub use dead_days::{CHART_DAYS, CHART_QUEUES, DeadLetterDay, DeadLetterDays};
pub use listing::{LIST_MAX, SEARCH_WINDOW, TodoListing};
