//! The Queues overview as stored: [`census`] takes one (the only code that reads
//! `todos` for it), [`overview`] reads it for a human's reach.

pub mod census;
pub mod overview;
