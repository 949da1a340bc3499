//! Queue digests (SPEC section 11): a scheduled, honest summary of every queue an owner
//! scope holds, sent through the outbox to the scope's sinks; it says `unavailable`,
//! never zero, for what it could not measure.
//!
//! - [`schedule`]: when a digest is sent (`TZ=<zone> <days> <HH:MM,…>`), parsed into a
//!   typed value that answers "the next send instant".
//! - [`firing`]: which due send times to send and which to record as skipped.
//! - [`report`]: what a digest measured, and when it is quiet.
//! - [`render`]: how it reads (sinks, preview, Cairn).
//! - [`compose`]: one digest measured (through the store) and written.
//!
//! The store measures the sections (`store::digests`), the `DigestScheduler` actor
//! (`actors::digests`) decides each send time, and the outbox delivers it.

pub mod compose;
pub mod firing;
pub mod render;
pub mod report;
pub mod schedule;
