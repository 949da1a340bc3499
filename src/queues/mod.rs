//! The Queues overview (SPEC 13 "Queues overview"): where every queue in a human's reach
//! stands right now — pending, the oldest pending age, claimed, stalled leases,
//! interrupted, what finished and failed in the last hour, dead letters in the last 24
//! hours, its admission budget and whether its endpoint is clocked in — trouble first.
//!
//! The figures are a **census**, not a live count: [`worker`] takes one every
//! `SWITCHBOARD_QUEUE_CENSUS_INTERVAL_MS` (one instance at a time) into `queue_census`
//! and per-minute `queue_minutes`, so the Board's `/queues` and `GET /api/v1/queues`
//! read a small table and never `todos` (no new index on `todos`, nothing added to the
//! claim → complete cycle). Every answer says when it was measured.
//!
//! - [`rules`]: the census's watermark, the order and cursor, per-minute series (pure).
//! - [`statements`]: taking the census, and reading it for a reach.
//! - [`service`]: who may see and act (members see, admins pause and resume).
//! - [`worker`]: the actor that takes the census on an interval.

pub mod rules;
pub mod service;
pub mod statements;
pub mod worker;
