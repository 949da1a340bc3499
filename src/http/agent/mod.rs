//! Routes agents call with their `sbk_…` endpoint token.

pub mod batch_dto;
pub mod batches;
pub mod hooks;
pub mod owner_page;
pub mod presence;
pub mod sinks;
pub mod todos;
