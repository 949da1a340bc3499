//! Switchboard: turns webhooks into work for AI agents, and makes sure that when work
//! dies, someone hears about it.
//!
//! Where things live: [`domain`] decides (pure logic), [`store`] commits and emits,
//! [`service`] is the one door for every action and its permission check, [`http`]
//! (the API) and [`board`] (the pages) are thin adapters over it, and [`mcp`] serves the
//! API's agent verbs as MCP tools; the three never import one another ([`web`] holds
//! what they share, [`agent_api`] the agent verbs' answers and bodies that the API and
//! the MCP tools both return and read), [`actors`] move todos on their own, [`db`] is
//! the database.

pub mod actors;
pub mod agent_api;
pub mod board;
pub mod cli;
pub mod coherent_cache;
pub mod config;
pub mod db;
pub mod digests;
pub mod domain;
pub mod error;
pub mod hooks;
pub mod http;
pub mod intake;
pub mod mcp;
pub mod metrics;
pub mod outbound;
pub mod queues;
pub mod service;
pub mod sinks;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod ttl_cache;
pub mod vault;
pub mod web;
