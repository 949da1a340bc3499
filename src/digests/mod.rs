//! Queue digests (SPEC section 11): a scheduled, honest summary of every queue an owner
//! scope holds, sent through the outbox to the scope's sinks or published to Cairn; it
//! says `unavailable`, never zero, for what it could not measure.
//!
//! Everything about digests lives here, in the house's layers:
//! - [`rules`] (pure): the schedule grammar, which send times fire, what a report holds
//!   and how it reads.
//! - [`statements`] (store): digest rows, the sections one digest measures, each send
//!   time decided once across instances.
//! - [`clients`]: publishing to Cairn (the request, and the one place that sends it).
//! - [`service`]: the user actions on digests, and a preview.
//! - [`worker`] (actors): the digest scheduler.

pub mod clients;
pub mod rules;
pub mod service;
pub mod statements;
pub mod worker;
