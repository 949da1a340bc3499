//! Notify hooks, the pure part: what a hook notification says, how it is signed, how
//! often it is tried, and what a delivery does to the hook's health.
//!
//! The channel is a **doorbell**. When a todo becomes ready (`todo.ready`) or becomes a
//! dead letter (`todo.dead_lettered`), the store emits a signal after commit and the
//! dispatcher rings every matching hook once, signed with Standard Webhooks. Nothing of
//! this is persisted: a notification lost to a full mailbox, the rate limit, a restart
//! or three failed attempts is dropped and counted, never replayed, because the queue
//! still holds the work and an agent that polls finds it. Work that must not be missed
//! (a dead letter reaching a human) goes through the sinks' outbox instead.
//!
//! Everything here is plain functions and types, unit-tested directly; the dispatcher
//! and hook supervisor actors (elsewhere) call them and do the I/O.
//!
//! - [`neutralise`]: sender- and agent-written text made one-line and tag-safe.
//! - [`body`]: the exact JSON bodies, at most 4 096 bytes.
//! - [`signing`]: message ids, `whsec_` keys, dual signatures, the attempt's headers.
//! - [`retry`]: three attempts, jittered waits, the class of each attempt's result.
//! - [`health`]: failure counting and the automatic disable.
//! - [`sinks`]: notification sinks for humans (Gotify, Apprise): message content, request
//!   shapes, answer classes and retries, the Apprise scheme policy, budgets and dedup keys.

pub mod body;
pub mod cairn;
pub mod health;
pub mod neutralise;
pub mod retry;
pub mod signing;
pub mod sinks;
