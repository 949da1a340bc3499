//! The Board: server-rendered pages for humans.

pub mod todos;
