//! Routes agents call with their `sbk_…` endpoint token. Each returns its verb's answer
//! from [`crate::agent_api`], which the MCP tools return too.

pub mod batches;
pub mod hooks;
pub mod owner_page;
pub mod presence;
pub mod sinks;
pub mod todos;
