//! Routes agents call with their `sbk_…` endpoint token.

pub mod hooks;
pub mod presence;
pub mod todos;
