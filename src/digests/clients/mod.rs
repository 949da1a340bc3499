//! Publishing a digest to Cairn: [`cairn`] is the exact request and what its answer
//! means (pure); [`publish`] sends it through the outbound guard.

pub mod cairn;
pub mod publish;
