//! Queue digests: a scheduled summary of every queue an owner scope holds, sent through
//! the outbox to the scope's sinks (SPEC section 11). It says `unavailable`, never zero,
//! for what it could not measure.
//!
//! [`schedule`] is when a digest is sent: the schedule grammar (`TZ=<zone> <days>
//! <HH:MM,…>`), parsed into a typed value that answers "the next send instant".

pub mod schedule;
