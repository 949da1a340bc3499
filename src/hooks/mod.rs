//! Hooks, the **doorbell** (SPEC section 9): when a todo becomes ready
//! (`todo.ready`) or becomes a dead letter (`todo.dead_lettered`), the store emits a
//! signal after commit and the dispatcher rings every matching hook once, signed with
//! Standard Webhooks. Nothing of a ring is persisted: one lost to a full mailbox, the
//! rate limit, a restart or three failed attempts is dropped and counted, never
//! replayed, because the queue still holds the work and an agent that polls finds it.
//! Work that must not be missed (a dead letter reaching a human) goes through
//! [`crate::sinks`]' outbox instead.
//!
//! Everything about hooks lives here, in the house's layers:
//! - [`rules`] (pure): what a hook may be saved with, the bodies, signing, the retry
//!   plan, what a ring leaves in the hook's health.
//! - [`statements`] (store): hook rows, the hooks a todo matches, health updates,
//!   doorbell rings.
//! - [`cache`]: each instance's copy of the hooks per endpoint, invalidated on every
//!   instance through the hook listener.
//! - [`service`]: the user actions on hooks (create, list, rotate, delete), with who may.
//! - [`worker`] (actors): the dispatcher and one supervisor per endpoint, which ring.

pub mod cache;
pub mod rules;
pub mod service;
pub mod settings;
pub mod statements;
pub mod worker;
