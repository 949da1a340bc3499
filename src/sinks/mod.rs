//! Notification sinks for humans (SPEC section 10, ADR-0034): how a dead letter, an
//! agent's page or a digest reaches a person's phone through Gotify or Apprise. What
//! must not be lost is written to the **outbox** in the transaction that decided it
//! (a dead letter's row is written by the database trigger
//! `switchboard_outbox_dead_letter`); the worker drains the outbox per sink, with
//! dedup, budgets and coalescing, and records every attempt.
//!
//! Everything about sinks lives here, in the house's layers:
//! - [`rules`] (pure): the vocabulary (kinds, events, severities, states), message
//!   content, budgets, dedup keys, the class of a sink's answer and the retry schedule,
//!   the Apprise scheme policy, destinations and how connections are bound to them.
//! - [`statements`] (store): connections, sinks, subscriptions, the outbox's rows,
//!   owner pages, and binding an earlier release's connections.
//! - [`clients`]: the exact request to a Gotify or Apprise server, and the one place
//!   that sends it through the outbound guard.
//! - [`service`]: the user actions on connections and sinks, with who may.
//! - [`worker`] (actors): the outbox worker that drains each sink, and the binder.

pub mod clients;
pub mod rules;
pub mod service;
pub mod settings;
pub mod statements;
pub mod worker;
