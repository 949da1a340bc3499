//! What the integration tests (`tests/it`) and the benchmark (`bench/`) share: they
//! drive Switchboard from outside, as its clients and receivers do, so this crate speaks
//! HTTP and SQL only and never depends on the `switchboard` crate.
//!
//! - [`receiver`]: a real HTTP receiver on loopback that records what it gets, answers
//!   as scripted, and can admit only signed (Standard Webhooks) or token-bearing posts
//!   and time the arrivals of notifications per todo.
//! - [`signature`]: Standard Webhooks signatures, signed and checked with `hmac`/`sha2`.
//! - [`board`]: the Board over HTTP, signed in through its CSRF-protected form.
//! - [`mcp`]: JSON-RPC over MCP's Streamable HTTP, posted directly.
//! - [`db`]: connecting to PostgreSQL and naming, creating and dropping scratch databases.
//! - [`wait`]: waiting for something to happen (no fixed sleeps): the one poller.
//!
//! Dev-only: the root package takes it as a dev-dependency, the benchmark as a
//! dependency; it is never published.

pub mod board;
pub mod db;
pub mod mcp;
pub mod receiver;
pub mod signature;
pub mod wait;
