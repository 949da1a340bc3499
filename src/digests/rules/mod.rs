//! Queue digests, the pure part: when one is sent, what it reports, how it reads.
//!
//! - [`schedule`]: when a digest is sent (`TZ=<zone> <days> <HH:MM,…>`), parsed into a
//!   typed value that answers "the next send instant".
//! - [`firing`]: which due send times to send and which to record as skipped.
//! - [`report`]: what a digest measured, and when it is quiet.
//! - [`render`]: how it reads (sinks, preview, Cairn).
//!
//! The statements measure the sections (`digests::statements`), `digests::service::compose`
//! puts one digest together, the `DigestScheduler` (`digests::worker`) decides each send
//! time, and the outbox delivers it.

pub mod firing;
pub mod render;
pub mod report;
pub mod schedule;
