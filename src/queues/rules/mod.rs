//! The Queues overview's pure rules: the census's counting window ([`watermark`]), the
//! order of the list and its cursor ([`order`]), and per-minute series ([`series`]).

pub mod order;
pub mod series;
pub mod watermark;
