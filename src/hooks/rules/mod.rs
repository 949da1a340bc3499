//! Hooks, the pure part: what a hook may be saved with, what a ring says, how it
//! is signed, how often it is tried, and what a ring does to the hook's health. Plain
//! functions and types, unit-tested directly; the worker calls them and does the I/O.
//!
//! - [`hook`]: URL syntax, queue filter, how a URL is shown, health constants.
//! - [`body`]: the exact JSON bodies, at most 4 096 bytes.
//! - [`signing`]: message ids, `whsec_` keys, dual signatures, the attempt's headers.
//! - [`retry`]: three attempts, jittered waits, the class of each attempt's result.
//! - [`health`]: failure counting and the automatic disable.

pub mod body;
pub mod health;
pub mod hook;
pub mod retry;
pub mod signing;
